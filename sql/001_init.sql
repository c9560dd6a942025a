-- 001_init.sql: engines, their releases, the pinned weights, the machines,
-- and every benchmark run with its samples.  Times are integers:
-- nanoseconds for measurements, Unix seconds for timestamps.

-- One row per [engine "NAME"] the store has seen.
CREATE TABLE engine (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,   -- the config's subsection name
  source      TEXT NOT NULL,          -- source spec, e.g. "github:owner/repo"
  etag        TEXT,                   -- last ETag of the release listing, or NULL
  refreshed   INTEGER                 -- when the source was last asked, or NULL
);

-- A release of an engine, as its source lists it.
CREATE TABLE release (
  id          INTEGER PRIMARY KEY,
  engine_id   INTEGER NOT NULL REFERENCES engine(id),
  version     TEXT NOT NULL,          -- as the source names it ("0.2.4", "b11382")
  order_key   TEXT NOT NULL,          -- bytewise order equals version order
  url         TEXT,                   -- the archive's URL or path
  asset       TEXT,                   -- the archive's file name
  expected_sha256 TEXT,               -- from config, SHA256SUMS or the API, or NULL
  sha256_origin TEXT,                 -- "config", "sha256sums", "api-digest", or NULL
  archive_sha256 TEXT,                -- hash of the archive actually fetched, or NULL
  state       TEXT NOT NULL DEFAULT 'listed'
              CHECK (state IN ('listed', 'fetched', 'measured', 'failed')),
  failure     TEXT,                   -- why the last fetch failed, or NULL
  discovered  INTEGER NOT NULL,       -- when the source first listed it
  UNIQUE (engine_id, version)
);
CREATE INDEX release_order ON release(engine_id, order_key);

-- A weights file or directory, identified by its content hash.
CREATE TABLE weights (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,          -- the [weights "NAME"] it was pinned as
  sha256      TEXT NOT NULL,          -- file hash, or hash of a directory's manifest
  size        INTEGER NOT NULL,       -- bytes (a directory: sum of its files)
  UNIQUE (name, sha256)
);

-- A machine as runs saw it.  Comparability uses the hardware fields
-- (hw_key); kernel, OS and hostname are recorded so that a change
-- between compared runs can be flagged.
CREATE TABLE machine (
  id          INTEGER PRIMARY KEY,
  hw_key      TEXT NOT NULL,          -- sha256 of cpu_model, cores, mem_bytes, arch
  cpu_model   TEXT NOT NULL,
  cores       INTEGER NOT NULL,       -- online CPUs
  mem_bytes   INTEGER NOT NULL,       -- total memory, rounded down to MiB
  arch        TEXT NOT NULL,          -- uname machine, e.g. "x86_64"
  kernel      TEXT NOT NULL,          -- uname release
  os          TEXT NOT NULL,          -- PRETTY_NAME from /etc/os-release
  hostname    TEXT NOT NULL,
  UNIQUE (hw_key, kernel, os, hostname)
);

-- One process run of one matrix cell.  A failed run keeps its reason and
-- its output; it never becomes a zero.
CREATE TABLE run (
  id          INTEGER PRIMARY KEY,
  release_id  INTEGER NOT NULL REFERENCES release(id),
  weights_id  INTEGER NOT NULL REFERENCES weights(id),
  machine_id  INTEGER NOT NULL REFERENCES machine(id),
  kind        TEXT NOT NULL CHECK (kind IN ('pp', 'tg')),  -- prefill or decode cell
  prompt_tokens INTEGER NOT NULL,     -- the cell's prompt length (0 for decode)
  gen_tokens  INTEGER NOT NULL,       -- the cell's generation length (0 for prefill)
  content     TEXT NOT NULL DEFAULT '',  -- decode content kind, '' if none
  rep         INTEGER NOT NULL,       -- repetition number within the cell, from 0
  warmup      INTEGER NOT NULL DEFAULT 0,  -- 1: stored but never analysed
  mode        TEXT NOT NULL DEFAULT 'bench' CHECK (mode IN ('bench', 'server')),
  parser      TEXT NOT NULL,          -- parser spec used when stored
  started     INTEGER NOT NULL,       -- Unix time the run started
  wall_ns     INTEGER,                -- CLOCK_MONOTONIC around spawn and wait, or NULL
  user_ns     INTEGER,                -- CPU time from rusage
  sys_ns      INTEGER,
  max_rss_kb  INTEGER,
  exit_code   INTEGER,                -- NULL when killed by a signal or never started
  signal      INTEGER,                -- terminating signal or NULL
  failure     TEXT CHECK (failure IN ('exit', 'signal', 'timeout', 'parse',
                                      'spawn', 'oom', 'interrupted')),  -- NULL: ok
  failure_detail TEXT,                -- one line of why
  stdout      BLOB,                   -- raw output, bounded, for reparse
  stdout_truncated INTEGER NOT NULL DEFAULT 0,
  stderr_tail BLOB,                   -- the last bytes of stderr
  busy_share  REAL,                   -- CPU busy share sampled just before the run
  loadavg     REAL,                   -- 1-minute load average before the run
  busy        INTEGER NOT NULL DEFAULT 0,  -- 1: ran although the machine was busy
  info        TEXT                    -- engine-reported metadata (JSON) or NULL
);
CREATE INDEX run_cell ON run(release_id, weights_id, machine_id, kind,
                             prompt_tokens, gen_tokens, content);

-- One timed sample.  A run gives one sample per repetition the engine
-- reports itself (llama-bench samples_ns), or one from the runner's clock.
CREATE TABLE sample (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  idx         INTEGER NOT NULL,       -- position within the run
  prompt_tokens INTEGER NOT NULL,
  gen_tokens  INTEGER NOT NULL,
  wall_ns     INTEGER NOT NULL,       -- the runner's clock for the whole run
  engine_ns   INTEGER,                -- the engine's own figure, or NULL
  user_ns     INTEGER,
  sys_ns      INTEGER,
  max_rss_kb  INTEGER,
  UNIQUE (run_id, idx)
);

-- Alerts recorded by any part, delivered by the daemon's sinks.
CREATE TABLE alert (
  id          INTEGER PRIMARY KEY,
  created     INTEGER NOT NULL,
  kind        TEXT NOT NULL,          -- "regression", "archive-changed", "yardstick"
  engine      TEXT NOT NULL,
  dedup_key   TEXT NOT NULL UNIQUE,   -- one alert per key
  summary     TEXT NOT NULL,          -- one line for humans
  body        TEXT NOT NULL           -- the alert's JSON document
);
