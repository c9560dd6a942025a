-- 014_serve.sql: what a serve run (mode = serve) measured beyond its
-- figures.
--
-- A serve run is one server start and its whole load, the unit of
-- replication, stored as a run row: kind 'pp' with prompt_tokens and
-- gen_tokens the profile's first prompt and output lengths, mode
-- 'server' (a server was started; the run table's CHECKs predate serve
-- mode, and its measurement definition says "serve").  Its samples are
-- its figures, one each: idx the figure, in the order of config's enum
-- conf_serve_figure (ttft-p50, -p90, -p99, tpot-, itl-, e2e-), wall_ns
-- its nanoseconds.  A failed run has no samples, and its row here says
-- why, by the type of its requests' failures.

CREATE TABLE serve_run (
  run_id        INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
  profile       TEXT NOT NULL,        -- the load profile, JSON
  requests      INTEGER NOT NULL,     -- measured requests sent
  ok            INTEGER NOT NULL,     -- complete streams among them
  refused       INTEGER NOT NULL,     -- no connection
  timeout       INTEGER NOT NULL,     -- past the request timeout
  truncated     INTEGER NOT NULL,     -- the stream ended before its end
  http          INTEGER NOT NULL,     -- an HTTP status other than 200
  stream        INTEGER NOT NULL,     -- an error event, a malformed
                                      -- stream or no token
  transport     INTEGER NOT NULL,     -- any other transport failure
  duration_ns   INTEGER,              -- the first due to the last end
  req_per_s     REAL,                 -- complete requests a second
  out_tok_per_s REAL,                 -- their output tokens a second
  goodput_per_s REAL,                 -- requests within slo-ttft and
                                      -- slo-tpot a second
  goodput_share REAL,                 -- the same over all requests
  lag_p50_ns    INTEGER,              -- how late requests left against
  lag_p99_ns    INTEGER,              -- the schedule: the client's own
  lag_max_ns    INTEGER,              -- delay
  lag_over      INTEGER NOT NULL DEFAULT 0  -- 1: lag p99 past
                                      -- load-max-lag, the client set
                                      -- the pace: flagged
);
