-- 005_definition.sql: the measurement definition each run belongs to.
-- Samples are compared and reused only within one definition, so a
-- change to what is measured, or to how bisectd times it, starts fresh.

-- What a run measured: the command with the release's own path and
-- version left as placeholders, the parser, the mode, the environment,
-- the threads, the cell, the weights' hash, the machine's hardware
-- identity and the version of bisectd's timing method, as canonical
-- JSON.  Runs of one definition are comparable.
CREATE TABLE definition (
  id          INTEGER PRIMARY KEY,
  key         TEXT NOT NULL UNIQUE,   -- sha256 of text
  text        TEXT NOT NULL,          -- the canonical JSON it was hashed from
  clock       TEXT NOT NULL CHECK (clock IN ('engine', 'wall', 'ttft')),
                                      -- the figure analysed: the engine's own
                                      -- (sample.engine_ns), the runner's
                                      -- (sample.wall_ns), or time to first
                                      -- token, a lower bound (sample.wall_ns)
  created     INTEGER NOT NULL        -- when a run first used it
);

-- The definition the run was measured under; NULL for runs stored before
-- definitions were recorded: nothing says what they measured, so no
-- analysis reuses them.
ALTER TABLE run ADD COLUMN definition_id INTEGER REFERENCES definition(id);
CREATE INDEX run_definition ON run(release_id, definition_id, kind,
                                   prompt_tokens, gen_tokens, content);
