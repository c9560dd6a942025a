-- 008_canary.sql: the output canary.  Each measured release generates
-- text from a fixed prompt twice; the text and its hash are kept, so a
-- release that changed what the engine computes is seen as plainly as
-- one that changed its speed.

-- What a canary run is: the canary command with the release's own path
-- and version left as placeholders, the text parser, the prompt's
-- sha256, the environment, the threads, the weights' hash and the
-- machine's hardware identity, as canonical JSON.  Only runs of one
-- definition are compared.
CREATE TABLE canary_definition (
  id          INTEGER PRIMARY KEY,
  key         TEXT NOT NULL UNIQUE,   -- sha256 of text
  text        TEXT NOT NULL,          -- the canonical JSON it was hashed from
  created     INTEGER NOT NULL        -- when a run first used it
);

-- One run of the canary command on one release.  A failed run keeps its
-- reason; it has no text.
CREATE TABLE canary_run (
  id          INTEGER PRIMARY KEY,
  release_id  INTEGER NOT NULL REFERENCES release(id),
  weights_id  INTEGER NOT NULL REFERENCES weights(id),
  machine_id  INTEGER NOT NULL REFERENCES machine(id),
  definition_id INTEGER NOT NULL REFERENCES canary_definition(id),
  started     INTEGER NOT NULL,       -- Unix time the run started
  wall_ns     INTEGER,                -- the runner's clock, or NULL
  exit_code   INTEGER,                -- NULL when killed by a signal or never started
  signal      INTEGER,                -- terminating signal or NULL
  failure     TEXT CHECK (failure IN ('exit', 'signal', 'timeout', 'parse',
                                      'spawn', 'oom')),  -- NULL: ok
  failure_detail TEXT,                -- one line of why
  text        BLOB,                   -- the generated text as the parser
                                      -- picked it, bounded; NULL when failed
  sha256      TEXT,                   -- sha256 of text; NULL when failed
  out_bytes   INTEGER NOT NULL,       -- stdout bytes the command produced
  stderr_tail BLOB                    -- the last bytes of stderr
);
CREATE INDEX canary_run_release ON canary_run(release_id, definition_id);
