-- 004_alerts.sql: the delivery of each alert to each sink with every
-- attempt, and what the watch and the yardstick check remember.

-- One row per alert and sink ([alert "NAME"]): where its delivery stands.
CREATE TABLE alert_delivery (
  alert_id    INTEGER NOT NULL REFERENCES alert(id) ON DELETE CASCADE,
  sink        TEXT NOT NULL,          -- the [alert "NAME"] name
  target      TEXT NOT NULL,          -- where it goes: URL, command, addresses
  state       TEXT NOT NULL DEFAULT 'pending'
              CHECK (state IN ('pending', 'delivered', 'failed')),
                                      -- failed: given up after the last retry
  attempts    INTEGER NOT NULL DEFAULT 0,  -- attempts made so far
  next_at     INTEGER NOT NULL,       -- Unix time the next attempt is due
  delivered   INTEGER,                -- Unix time it succeeded
  PRIMARY KEY (alert_id, sink)
);
CREATE INDEX alert_delivery_due ON alert_delivery(sink, state, next_at);

-- Every delivery attempt, failed or not.
CREATE TABLE alert_attempt (
  id          INTEGER PRIMARY KEY,
  alert_id    INTEGER NOT NULL REFERENCES alert(id) ON DELETE CASCADE,
  sink        TEXT NOT NULL,          -- the [alert "NAME"] name
  at          INTEGER NOT NULL,       -- Unix time it started
  ok          INTEGER NOT NULL,       -- 1: delivered
  http_status INTEGER,                -- webhook: the answer's status, if any
  exit_code   INTEGER,                -- command: its exit status, if it exited
  error       TEXT,                   -- what failed, NULL when ok
  duration_ms INTEGER NOT NULL        -- how long the attempt took
);
CREATE INDEX alert_attempt_alert ON alert_attempt(alert_id, sink, id);

-- Small named values the watch and the yardstick check keep between
-- runs: "last-good:ENGINE" (a version), "yardstick-checked".
CREATE TABLE watch_state (
  key         TEXT PRIMARY KEY,
  value       TEXT NOT NULL,
  updated     INTEGER NOT NULL        -- Unix time it was set
);
