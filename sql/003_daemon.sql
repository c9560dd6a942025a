-- 003_daemon.sql: what the daemon keeps between starts: a cancel asked
-- of a running job, and the last time each schedule fired.

-- 1: `bisectctl cancel` asked for this running job to stop; the daemon
-- ends it as cancelled rather than putting it back in the queue.
ALTER TABLE job ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;

-- One row per schedule ("engine:NAME"): a schedule missed while the
-- daemon was down fires once at start-up, judged from this time.
CREATE TABLE schedule_fire (
  name        TEXT PRIMARY KEY,       -- "engine:basert"
  last_fire   INTEGER NOT NULL        -- Unix time it last fired
);
