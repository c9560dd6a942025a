-- 009_slurm.sql: measurements placed on Slurm as batch jobs.  The daemon
-- keeps the state: each request it submitted, the job Slurm gave it and
-- how it ended, so a restarted daemon reattaches to jobs in flight, and a
-- result file is taken into the store exactly once.

-- One measurement request and the batch job that carries it out.
CREATE TABLE slurm_job (
  id          INTEGER PRIMARY KEY,
  request     TEXT NOT NULL UNIQUE,   -- the request's id (32 hex digits),
                                      -- named in its request and result files
  plan        TEXT NOT NULL,          -- sha256 of what it measures (engine,
                                      -- releases, cells, runs, warm-up,
                                      -- confirmation): the same plan asked
                                      -- again reattaches to this job
  bisect_id   INTEGER REFERENCES bisect(id),  -- the bisect it serves, or NULL
  job_id      INTEGER REFERENCES job(id),     -- the queue's job, or NULL
                                      -- (bisect --now)
  engine      TEXT NOT NULL,          -- the config's engine name
  runner      TEXT NOT NULL,          -- the config's runner name
  attempt     INTEGER NOT NULL,       -- 1 for the first submission of the
                                      -- plan, counting resubmissions
  slurm_id    INTEGER,                -- sbatch's job id; NULL until submitted
  state       TEXT NOT NULL,          -- Slurm's job state as last seen
                                      -- (PENDING, RUNNING, COMPLETED ...), or
                                      -- 'submitting', 'ingested', 'failed'
  node        TEXT,                   -- the node it ran on, once known
  pinned      TEXT,                   -- the node asked for with --nodelist, or
                                      -- NULL for any
  hw_key      TEXT,                   -- its result's comparability key (the
                                      -- node's hardware and name), once
                                      -- ingested
  failure     TEXT,                   -- slurm-timeout, slurm-node-fail,
                                      -- slurm-preempted, slurm-cancelled,
                                      -- slurm-failed, slurm-lost or
                                      -- result-refused; NULL if none
  detail      TEXT,                   -- what was seen, for people
  submitted   INTEGER NOT NULL,       -- when it was submitted (Unix time)
  updated     INTEGER NOT NULL,       -- when its state was last read
  ingested    INTEGER                 -- when its result entered the store
);
CREATE INDEX slurm_job_bisect ON slurm_job(bisect_id, plan);
CREATE INDEX slurm_job_active ON slurm_job(state);
