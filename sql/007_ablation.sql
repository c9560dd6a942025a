-- 007_ablation.sql: ablations with a positive control, the runs each
-- took for its baseline and its switches, and the job kind that queues
-- one.

-- The job table again, with 'ablate' among the kinds.  SQLite cannot
-- change a CHECK in place: the rows move to a copy and back, with
-- foreign keys deferred to the commit, so the bisects that name a job
-- still name it.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE job_before_007 AS SELECT * FROM job;
DROP TABLE job;
CREATE TABLE job (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL
              CHECK (kind IN ('fetch', 'bench', 'bisect', 'watch', 'ablate')),
  engine      TEXT NOT NULL,          -- the config's engine name
  args        TEXT NOT NULL,          -- JSON: versions, range, options
  priority    INTEGER NOT NULL DEFAULT 0,  -- higher runs first, then older
  state       TEXT NOT NULL DEFAULT 'queued'
              CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  created     INTEGER NOT NULL,
  started     INTEGER,                -- when it last started running
  finished    INTEGER,
  exit_code   INTEGER,                -- the bisectctl exit code it ended with
  result      TEXT,                   -- JSON verdict, or the error message
  cancel_requested INTEGER NOT NULL DEFAULT 0  -- 1: `bisectctl cancel`
                                      -- asked for this running job to stop
);
INSERT INTO job (id, kind, engine, args, priority, state, created, started,
                 finished, exit_code, result, cancel_requested)
  SELECT id, kind, engine, args, priority, state, created, started,
         finished, exit_code, result, cancel_requested FROM job_before_007;
DROP TABLE job_before_007;
CREATE INDEX job_pick ON job(state, priority DESC, id);

-- One ablation of a release: its runs with and without each of the
-- engine's [ablation] switches, and the verdict on them.
CREATE TABLE ablation (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER REFERENCES job(id),  -- NULL when run with --now
  engine_id   INTEGER NOT NULL REFERENCES engine(id),
  release_id  INTEGER NOT NULL REFERENCES release(id),
  state       TEXT NOT NULL DEFAULT 'running'
              CHECK (state IN ('running', 'done', 'failed')),
  status      TEXT CHECK (status IN ('ranked', 'inert', 'no-control')),
                                      -- the verdict, once done
  result      TEXT,                   -- the report's JSON once done, or why
                                      -- it failed
  created     INTEGER NOT NULL,
  finished    INTEGER
);
CREATE INDEX ablation_release ON ablation(release_id, state, id);

-- Which ablation, and which of its variants, each of its runs measured.
CREATE TABLE ablation_run (
  run_id      INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
  ablation_id INTEGER NOT NULL REFERENCES ablation(id) ON DELETE CASCADE,
  variant     TEXT NOT NULL           -- '' the baseline, else the switch's
                                      -- [ablation "NAME"]
);
CREATE INDEX ablation_run_variant ON ablation_run(ablation_id, variant);
