-- 011_release_summary.sql: what a report computes of each release from
-- its runs, kept so that a report over a long range reads one row per
-- release instead of every sample (bisectd/jobs/summary.c).
--
-- A summary must never outlive the runs it was computed from.  The
-- triggers below count every change to a release's runs and samples;
-- a summary holds the counts it was computed at (of its release and of
-- every release sharing its archive, whose runs it also reads) and is
-- used only while they are unchanged.  Code that stores runs cannot
-- forget to invalidate: SQLite does it.

-- How many times the runs or samples of a release changed.  A row is
-- never deleted, so a count never repeats.
CREATE TABLE run_change (
  release_id  INTEGER PRIMARY KEY,    -- the release (no reference: outlives it)
  n           INTEGER NOT NULL        -- inserts, updates and deletes of its runs and samples
);

CREATE TRIGGER run_change_insert AFTER INSERT ON run BEGIN
  INSERT INTO run_change (release_id, n) VALUES (NEW.release_id, 1)
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_change_update AFTER UPDATE ON run BEGIN
  INSERT INTO run_change (release_id, n) VALUES (OLD.release_id, 1)
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
  INSERT INTO run_change (release_id, n) VALUES (NEW.release_id, 1)
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_change_delete AFTER DELETE ON run BEGIN
  INSERT INTO run_change (release_id, n) VALUES (OLD.release_id, 1)
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sample_change_insert AFTER INSERT ON sample BEGIN
  INSERT INTO run_change (release_id, n)
    SELECT release_id, 1 FROM run WHERE id = NEW.run_id
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sample_change_update AFTER UPDATE ON sample BEGIN
  INSERT INTO run_change (release_id, n)
    SELECT release_id, 1 FROM run WHERE id IN (OLD.run_id, NEW.run_id)
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sample_change_delete AFTER DELETE ON sample BEGIN
  INSERT INTO run_change (release_id, n)
    SELECT release_id, 1 FROM run WHERE id = OLD.run_id
    ON CONFLICT (release_id) DO UPDATE SET n = n + 1;
END;

-- One release's figures under one configuration.
CREATE TABLE release_summary (
  release_id  INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
  weights_sha256 TEXT NOT NULL,       -- the weights its runs were read under
  hw_key      TEXT NOT NULL,          -- the machine identity likewise
  config      TEXT NOT NULL,          -- sha256 of every input of the computation but the runs
  stamp       TEXT NOT NULL,          -- "id:n,..." of run_change over the releases read
  entry       BLOB NOT NULL,          -- the entry's figures: cells, fit, metric, failed runs
  plot        BLOB NOT NULL,          -- the plot's run values of each prompt length
  runs        BLOB NOT NULL,          -- the verdict's: failing runs, run values of its cells
  PRIMARY KEY (release_id, weights_sha256, hw_key, config)
);

-- What the runs are read by besides their release: which weights and
-- machine they name, which definition (and its clock).  Those rows are
-- written once; should one ever change, every summary goes.
CREATE TRIGGER summary_weights AFTER UPDATE ON weights BEGIN
  DELETE FROM release_summary;
END;
CREATE TRIGGER summary_machine AFTER UPDATE ON machine BEGIN
  DELETE FROM release_summary;
END;
CREATE TRIGGER summary_definition AFTER UPDATE ON definition BEGIN
  DELETE FROM release_summary;
END;
