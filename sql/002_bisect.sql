-- 002_bisect.sql: the job queue, bisects with the log of their probes,
-- and the mark on runs taken to confirm a boundary.

-- Work for the daemon (or run in the foreground by bisectctl --now).
-- Picking a job marks it running in the same transaction.
CREATE TABLE job (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL CHECK (kind IN ('fetch', 'bench', 'bisect', 'watch')),
  engine      TEXT NOT NULL,          -- the config's engine name
  args        TEXT NOT NULL,          -- JSON: versions, range, options
  priority    INTEGER NOT NULL DEFAULT 0,  -- higher runs first, then older
  state       TEXT NOT NULL DEFAULT 'queued'
              CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  created     INTEGER NOT NULL,
  started     INTEGER,                -- when it last started running
  finished    INTEGER,
  exit_code   INTEGER,                -- the bisectctl exit code it ended with
  result      TEXT                    -- JSON verdict, or the error message
);
CREATE INDEX job_pick ON job(state, priority DESC, id);

-- One bisection over an engine's release range.
CREATE TABLE bisect (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER REFERENCES job(id),  -- NULL when run with --now
  engine_id   INTEGER NOT NULL REFERENCES engine(id),
  good        TEXT NOT NULL,          -- the range's known-good version
  bad         TEXT NOT NULL,          -- the range's bad version
  metric      TEXT NOT NULL,          -- "per-token", "fixed", "ppN", "tgN"
  threshold   REAL NOT NULL,          -- fraction, 0.20 for 20%
  all_changes INTEGER NOT NULL DEFAULT 0,  -- 1: --all
  weights_id  INTEGER REFERENCES weights(id),
  machine_id  INTEGER REFERENCES machine(id),
  state       TEXT NOT NULL DEFAULT 'running'
              CHECK (state IN ('running', 'done', 'failed')),
  status      TEXT,                   -- "regression", "no-regression", "unknown"
  verdict     TEXT,                   -- the report's verdict JSON when done
  created     INTEGER NOT NULL,
  finished    INTEGER
);

-- Each action a bisection took, in order: what was measured and why.
CREATE TABLE probe (
  id          INTEGER PRIMARY KEY,
  bisect_id   INTEGER NOT NULL REFERENCES bisect(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,       -- 0, 1, 2 ... within the bisect
  action      TEXT NOT NULL CHECK (action IN ('measure', 'confirm', 'skip')),
  release_id  INTEGER NOT NULL REFERENCES release(id),
  other_id    INTEGER REFERENCES release(id),  -- confirm: the pair's other end
  reps        INTEGER NOT NULL,       -- samples per cell wanted after it
  created     INTEGER NOT NULL,
  UNIQUE (bisect_id, seq)
);

-- 1: the run was taken interleaved with another release to confirm a
-- boundary; the bisection keeps these apart from its search samples.
ALTER TABLE run ADD COLUMN confirm INTEGER NOT NULL DEFAULT 0;
