-- 010_report_indexes.sql: indexes for reading the runs of a long range
-- at once (store/release_runs.c), what a report and a verdict do.
--
-- A release's samples are those of every release whose archive has the
-- same sha256 (identical archives are identical binaries, measured
-- once).  Without an index on the hash, finding them scanned all of the
-- engine's releases for each release: n^2 steps for n releases.
CREATE INDEX release_archive ON release(engine_id, archive_sha256);

-- Every column the analysis reads of a run, so that its rows are read
-- from the index alone: the table's rows carry the run's output, and
-- the columns added since (confirm, definition_id) come after it.
CREATE INDEX run_analysis ON run(release_id, weights_id, machine_id,
                                 definition_id, kind, prompt_tokens,
                                 gen_tokens, content, warmup, failure,
                                 confirm, busy);

-- A run's samples with the two clocks the analysis reads, likewise.
CREATE INDEX sample_time ON sample(run_id, idx, engine_ns, wall_ns);
