-- 013_ablation_status.sql: 'control-adds' among an ablation's verdicts.
--
-- A control that adds time is the wrong switch, and the ablation says
-- so; 007 did not list that verdict, so storing one failed.  SQLite
-- cannot change a CHECK in place: both tables move to copies and back.
-- The runs' table goes first, so that dropping the ablations' table
-- cascades to nothing, and foreign keys are checked at the commit.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE ablation_run_before_013 AS SELECT * FROM ablation_run;
CREATE TEMP TABLE ablation_before_013 AS SELECT * FROM ablation;
DROP TABLE ablation_run;
DROP TABLE ablation;
CREATE TABLE ablation (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER REFERENCES job(id),  -- NULL when run with --now
  engine_id   INTEGER NOT NULL REFERENCES engine(id),
  release_id  INTEGER NOT NULL REFERENCES release(id),
  state       TEXT NOT NULL DEFAULT 'running'
              CHECK (state IN ('running', 'done', 'failed')),
  status      TEXT CHECK (status IN ('ranked', 'inert', 'control-adds',
                                     'no-control')),
                                      -- the verdict, once done
  result      TEXT,                   -- the report's JSON once done, or why
                                      -- it failed
  created     INTEGER NOT NULL,
  finished    INTEGER
);
INSERT INTO ablation (id, job_id, engine_id, release_id, state, status,
                      result, created, finished)
  SELECT id, job_id, engine_id, release_id, state, status, result, created,
         finished FROM ablation_before_013;
CREATE INDEX ablation_release ON ablation(release_id, state, id);
CREATE TABLE ablation_run (
  run_id      INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
  ablation_id INTEGER NOT NULL REFERENCES ablation(id) ON DELETE CASCADE,
  variant     TEXT NOT NULL           -- '' the baseline, else the switch's
                                      -- [ablation "NAME"]
);
INSERT INTO ablation_run (run_id, ablation_id, variant)
  SELECT run_id, ablation_id, variant FROM ablation_run_before_013;
CREATE INDEX ablation_run_variant ON ablation_run(ablation_id, variant);
DROP TABLE ablation_run_before_013;
DROP TABLE ablation_before_013;
