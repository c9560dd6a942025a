-- 006_commits.sql: commits of an engine's repository as points of a
-- bisected range, with what building each of them gave.

-- 'release': listed by the engine's source; 'commit': a commit of the
-- engine's repository between two ends of a commit bisect, whose version
-- is its 40-hex-digit id.  Listings of releases leave commits out.
ALTER TABLE release ADD COLUMN kind TEXT NOT NULL DEFAULT 'release'
  CHECK (kind IN ('release', 'commit'));

-- A commit's description and its build, one row per commit release.
CREATE TABLE commit_build (
  release_id  INTEGER PRIMARY KEY REFERENCES release(id),
  subject     TEXT NOT NULL,          -- the message's first line, as upstream wrote it
  author      TEXT NOT NULL,          -- the author's name, as upstream wrote it
  author_time INTEGER NOT NULL,       -- the author date, Unix seconds
  state       TEXT NOT NULL DEFAULT 'none'
              CHECK (state IN ('none', 'building', 'built', 'failed')),
                                      -- building: started and not finished (a
                                      -- crash leaves it so; it is built again)
  builds      INTEGER NOT NULL DEFAULT 0,  -- builds started, interrupted ones included
  build_ms    INTEGER,                -- how long the last finished build took
  log_tail    TEXT                    -- a failed build's last output lines, or NULL
);
