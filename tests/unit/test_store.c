/*
 * test_store.c: migrations (fresh, upgrade from each earlier version,
 * refusing a newer or foreign database) and the store's typed queries.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/err.h"
#include "bisectd/analysis/ablate.h"
#include "store/store.h"

/* Overwrite the 4-byte big-endian header field at off (SQLite's file
 * format: user_version at 60, application_id at 68). */
static void
poke_header(const char *path, off_t off, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
	    (unsigned char)(v >> 8), (unsigned char)v };
	int fd = open(path, O_WRONLY);

	CHECK(fd >= 0);
	CHECK(pwrite(fd, b, 4, off) == 4);
	close(fd);
}

/* The machine the runs are stored from; copied, for a test to vary. */
static const struct store_machine test_machine = {
    (char *)(uintptr_t)"hw1", (char *)(uintptr_t)"Test CPU", 2, 24LL << 30,
    (char *)(uintptr_t)"x86_64", (char *)(uintptr_t)"6.1",
    (char *)(uintptr_t)"Debian 12", (char *)(uintptr_t)"box", NULL, 0 };

/* Engine basert (dir:/a) and its release version in s, into *r: the
 * engine's id. */
static int64_t
add_release(struct store *s, const char *version, struct store_release *r)
{
	struct err e = ERR_INIT;
	int64_t eng = 0;

	CHECK(store_engine_ensure(s, "basert", "dir:/a", &eng, &e) == 0);
	memset(r, 0, sizeof(*r));
	r->engine_id = eng;
	r->version = (char *)(uintptr_t)version;
	CHECK(store_release_upsert(s, r, &e) == 0);
	return eng;
}

/* A pp512 run of release r on weights w and machine mach, read by
 * llama-bench, its CPU times and memory unknown; the rest is the
 * test's. */
static void
pp512_run(struct store_run *run, const struct store_release *r, int64_t w,
    int64_t mach)
{
	memset(run, 0, sizeof(*run));
	run->release_id = r->id;
	run->weights_id = w;
	run->machine_id = mach;
	run->kind = "pp";
	run->prompt_tokens = 512;
	run->content = "";
	run->parser = "llama-bench";
	run->started = 1700000000;
	run->user_ns = run->sys_ns = run->max_rss_kb = -1;
}

static void
test_fresh(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	char *ok;

	CHECK(store_open("fresh.db", &s, &e) == 0);
	if (s == NULL) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	CHECK_INT(store_schema_version(s), store_latest_version());
	CHECK(store_latest_version() >= 1);
	ok = store_integrity_check(s, &e);
	CHECK_STR(ok, "ok");
	free(ok);
	store_close(s);
	/* Opening again applies nothing and keeps the version. */
	CHECK(store_open("fresh.db", &s, &e) == 0);
	CHECK_INT(s ? store_schema_version(s) : -1, store_latest_version());
	store_close(s);
}

/* A database at each earlier version upgrades to the latest, and what it
 * held survives. */
static void
test_upgrade_each(void)
{
	for (int v = 0; v < store_latest_version(); v++) {
		struct err e = ERR_INIT;
		struct store *s;
		char name[64];
		int64_t id = 0, id2 = 0;

		snprintf(name, sizeof(name), "up%d.db", v);
		CHECK(store_open_version(name, v, &s, &e) == 0);
		CHECK_INT(s ? store_schema_version(s) : -1, v);
		if (s && v >= 1)
			CHECK(store_engine_ensure(s, "basert", "dir:/x", &id,
			    &e) == 0);
		store_close(s);
		CHECK(store_open(name, &s, &e) == 0);
		if (s == NULL) {
			fprintf(stderr, "%s\n", e.msg);
			continue;
		}
		CHECK_INT(store_schema_version(s), store_latest_version());
		if (v >= 1) {
			CHECK(store_engine_find(s, "basert", &id2, &e) == 0);
			CHECK_INT(id2, id);
		}
		store_close(s);
	}
}

static void
test_refuse_newer_and_foreign(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	char *before, *after;
	size_t lb, la;

	CHECK(store_open("newer.db", &s, &e) == 0);
	store_close(s);
	poke_header("newer.db", 60, (uint32_t)store_latest_version() + 1);
	before = check_read_bytes("newer.db", &lb);
	CHECK(store_open("newer.db", &s, &e) < 0);
	CHECK(s == NULL);
	CHECK_CONTAINS(e.msg, "newer than this bisectd's");
	CHECK_CONTAINS(e.msg, "'newer.db'");
	after = check_read_bytes("newer.db", &la);
	CHECK(lb == la && memcmp(before, after, lb) == 0);
	free(before);
	free(after);

	/* Another program's SQLite database: not ours to migrate. */
	CHECK(store_open("foreign.db", &s, &e) == 0);
	store_close(s);
	poke_header("foreign.db", 68, 0x12345678);
	CHECK(store_open("foreign.db", &s, &e) < 0);
	CHECK_CONTAINS(e.msg, "another program");

	/* The same in rollback-journal mode (format bytes 18 and 19 are 1,
	 * where WAL has 2): refused before the switch to WAL rewrites them,
	 * so not one byte changes. */
	{
		unsigned char legacy[2] = { 1, 1 };
		int fd = open("foreign.db", O_WRONLY);

		CHECK(fd >= 0 && pwrite(fd, legacy, 2, 18) == 2);
		close(fd);
	}
	before = check_read_bytes("foreign.db", &lb);
	CHECK(store_open("foreign.db", &s, &e) < 0);
	CHECK_CONTAINS(e.msg, "another program");
	after = check_read_bytes("foreign.db", &la);
	CHECK(lb == la && memcmp(before, after, lb) == 0);
	CHECK(access("foreign.db-wal", F_OK) < 0);
	free(before);
	free(after);

	check_write_file("notdb.db", "this is not a database, just text that "
	    "is long enough to have a header of a hundred bytes, more or "
	    "less, certainly by now, yes.\n");
	before = check_read_bytes("notdb.db", &lb);
	CHECK(store_open("notdb.db", &s, &e) < 0);
	CHECK_CONTAINS(e.msg, "'notdb.db' is not a SQLite database");
	after = check_read_bytes("notdb.db", &la);
	CHECK(lb == la && memcmp(before, after, lb) == 0);
	free(before);
	free(after);
}

/* A new database and its -wal and -shm are the owner's alone, whatever
 * the umask. */
static void
test_private_files(void)
{
	const char *names[] = { "private.db", "private.db-wal",
	    "private.db-shm" };
	struct err e = ERR_INIT;
	struct store *s;
	struct stat st;
	int64_t id;
	mode_t old = umask(022);

	CHECK(store_open("private.db", &s, &e) == 0);
	CHECK(s && store_engine_ensure(s, "basert", "dir:/x", &id, &e) == 0);
	for (size_t i = 0; i < 3; i++) {
		CHECK_INT(stat(names[i], &st), 0);
		CHECK_INT((int)(st.st_mode & 0777), 0600);
	}
	store_close(s);
	umask(old);
}

static void
test_releases(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	struct store_release r, got;
	struct store_release_list l;
	const char *versions[] = { "0.2.10", "0.2.9", "0.2.1" };
	const char *keys[] = { "000000000.000000002.000000010",
	    "000000000.000000002.000000009", "000000000.000000002.000000001" };
	int64_t eng, other;
	char *etag;

	CHECK(store_open("rel.db", &s, &e) == 0);
	if (s == NULL)
		return;
	CHECK(store_engine_ensure(s, "basert", "dir:/a", &eng, &e) == 0);
	CHECK(store_engine_ensure(s, "other", "dir:/b", &other, &e) == 0);
	CHECK(eng != other);
	CHECK_INT(store_engine_find(s, "ghost", &other, &e), 1);
	for (int i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		r.engine_id = eng;
		r.version = (char *)(uintptr_t)versions[i];
		r.order_key = (char *)(uintptr_t)keys[i];
		r.url = (char *)(uintptr_t)"/x.tgz";
		CHECK(store_release_upsert(s, &r, &e) == 0);
		CHECK(r.id > 0);
	}
	CHECK(store_release_list(s, eng, &l, &e) == 0);
	CHECK_INT(l.n, 3);
	if (l.n == 3) {
		CHECK_STR(l.v[0].version, "0.2.1");
		CHECK_STR(l.v[1].version, "0.2.9");
		CHECK_STR(l.v[2].version, "0.2.10");
		CHECK_INT(l.v[0].state, RELEASE_LISTED);
	}
	CHECK(store_release_set_state(s, l.n ? l.v[0].id : 0, RELEASE_FAILED,
	    "404 from server", &e) == 0);
	CHECK(store_release_set_archive(s, l.n ? l.v[1].id : 0,
	    "ab12", &e) == 0);
	store_release_list_release(&l);
	CHECK_INT(store_release_get(s, eng, "0.2.1", &got, &e), 0);
	CHECK_INT(got.state, RELEASE_FAILED);
	CHECK_STR(got.failure, "404 from server");
	store_release_release(&got);
	/* An upsert of a known version keeps its state and archive hash. */
	memset(&r, 0, sizeof(r));
	r.engine_id = eng;
	r.version = (char *)(uintptr_t)"0.2.9";
	r.order_key = (char *)(uintptr_t)keys[1];
	r.url = (char *)(uintptr_t)"/moved.tgz";
	CHECK(store_release_upsert(s, &r, &e) == 0);
	CHECK_INT(store_release_get(s, eng, "0.2.9", &got, &e), 0);
	CHECK_STR(got.archive_sha256, "ab12");
	CHECK_STR(got.url, "/moved.tgz");
	store_release_release(&got);
	CHECK_INT(store_release_get(s, eng, "9.9.9", &got, &e), 1);
	CHECK(store_engine_set_etag(s, eng, "W/\"abc\"", &e) == 0);
	CHECK(store_engine_etag(s, eng, &etag, &e) == 0);
	CHECK_STR(etag, "W/\"abc\"");
	free(etag);
	store_close(s);
}

static void
test_runs(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	struct store_release r;
	struct store_machine m = test_machine;
	struct store_run run;
	struct store_sample smp[3];
	int64_t w1, w2, mach, mach2;
	char *ok;

	CHECK(store_open("runs.db", &s, &e) == 0);
	if (s == NULL)
		return;
	add_release(s, "0.2.3", &r);
	CHECK(store_weights_ensure(s, "w", "aa", 10, &w1, &e) == 0);
	CHECK(store_weights_ensure(s, "w", "aa", 10, &w2, &e) == 0);
	CHECK_INT(w1, w2);
	CHECK(store_weights_ensure(s, "w", "bb", 10, &w2, &e) == 0);
	CHECK(w1 != w2);
	CHECK(store_machine_ensure(s, &m, &mach, &e) == 0);
	CHECK(store_machine_ensure(s, &m, &mach2, &e) == 0);
	CHECK_INT(mach, mach2);
	m.kernel = (char *)(uintptr_t)"6.2";
	CHECK(store_machine_ensure(s, &m, &mach2, &e) == 0);
	CHECK(mach != mach2);

	pp512_run(&run, &r, w1, mach);
	run.end.wall_ns = 636400000;
	run.end.exit_code = 0;
	run.out = "{}";
	run.out_len = 2;
	run.busy_share = 0.03;
	run.loadavg = 0.5;
	for (int i = 0; i < 3; i++) {
		smp[i].prompt_tokens = 512;
		smp[i].gen_tokens = 0;
		smp[i].wall_ns = 636400000;
		smp[i].engine_ns = 630000000 + i;
		smp[i].user_ns = smp[i].sys_ns = smp[i].max_rss_kb = -1;
	}
	CHECK(store_run_insert(s, &run, smp, 3, &e) == 0);
	CHECK(run.id > 0);
	/* A bad foreign key fails the whole run: no orphan samples. */
	run.release_id = 9999;
	CHECK(store_run_insert(s, &run, smp, 3, &e) < 0);
	CHECK_CONTAINS(e.msg, "store a run");
	/* A failure reason outside the list is refused by the schema. */
	run.release_id = r.id;
	run.end.failure = "cosmic-ray";
	CHECK(store_run_insert(s, &run, smp, 0, &e) < 0);
	run.end.failure = "timeout";
	run.end.failure_detail = "killed after 10m";
	CHECK(store_run_insert(s, &run, NULL, 0, &e) == 0);

	CHECK_INT(store_alert_record(s, "archive-changed", "basert", "k1",
	    "changed", "{}", &e), 0);
	CHECK_INT(store_alert_record(s, "archive-changed", "basert", "k1",
	    "changed", "{}", &e), 1);
	ok = store_integrity_check(s, &e);
	CHECK_STR(ok, "ok");
	free(ok);
	store_close(s);
}

/* Samples of a cell: only analysed runs of the same release, weights
 * hash and hardware; reparse replaces a run's samples atomically. */
static void
test_points_and_bisects(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	struct store_release r;
	struct store_machine m = { (char *)(uintptr_t)"hwA",
	    (char *)(uintptr_t)"CPU", 2, 1LL << 30, (char *)(uintptr_t)"x86_64",
	    (char *)(uintptr_t)"6.1", (char *)(uintptr_t)"os",
	    (char *)(uintptr_t)"h", NULL, 0 };
	struct store_run run;
	struct store_sample smp = { 512, 0, 1000, 900, -1, -1, -1 };
	struct store_points pts;
	struct store_run_rows rows;
	struct store_cell_query q;
	struct store_bisect b;
	struct store_bisect_rows recent;
	struct store_alert_rows alerts;
	int64_t eng, w, w2, mach, mach2, defs[3], id;
	int resumed, n, fails, ok, bad;
	char *json;

	CHECK(store_open("pts.db", &s, &e) == 0);
	if (s == NULL)
		return;
	eng = add_release(s, "0.2.4", &r);
	CHECK(store_weights_ensure(s, "w", "sha-w", 1, &w, &e) == 0);
	CHECK(store_weights_ensure(s, "w", "sha-other", 1, &w2, &e) == 0);
	CHECK(store_machine_ensure(s, &m, &mach, &e) == 0);
	m.hw_key = (char *)(uintptr_t)"hwB";
	CHECK(store_machine_ensure(s, &m, &mach2, &e) == 0);

	memset(&run, 0, sizeof(run));
	run.release_id = r.id;
	run.weights_id = w;
	run.machine_id = mach;
	run.kind = "pp";
	run.prompt_tokens = 512;
	run.parser = "llama-bench";
	run.end.wall_ns = run.user_ns = run.sys_ns = run.max_rss_kb = -1;
	run.end.exit_code = 0;
	run.busy_share = run.loadavg = -1;
	CHECK(store_definition_ensure(s, "def-engine", "{}", "engine", &defs[0],
	    &e) == 0);
	CHECK(store_definition_ensure(s, "def-wall", "{\"w\":1}", "wall",
	    &defs[1], &e) == 0);
	CHECK(store_definition_ensure(s, "def-ttft", "{\"t\":1}", "ttft",
	    &defs[2], &e) == 0);
	CHECK(store_definition_ensure(s, "def-engine", "{}", "engine", &id,
	    &e) == 0);
	CHECK_INT(id, defs[0]);
	CHECK(defs[1] != defs[0] && defs[2] != defs[1]);
	/* 0: warm-up, 1: ok, 2: ok confirm, 3: failed, 4: other weights,
	 * 5: other machine, 6: other cell, 7: no engine figure, 8: the same
	 * cell under a wall-clock definition, 9: under a TTFT one, 10: no
	 * definition (stored before definitions were). */
	for (int i = 0; i < 11; i++) {
		struct store_run x = run;

		x.warmup = i == 0;
		x.confirm = i == 2;
		x.end.failure = i == 3 ? "parse" : NULL;
		x.weights_id = i == 4 ? w2 : w;
		x.machine_id = i == 5 ? mach2 : mach;
		x.prompt_tokens = i == 6 ? 2048 : 512;
		x.definition_id = i == 10 ? 0 : i == 9 ? defs[2] : i == 8 ?
		    defs[1] : defs[0];
		smp.wall_ns = 1000 + i;
		smp.engine_ns = i == 7 ? -1 : 900 + i;
		CHECK(store_run_insert(s, &x, &smp, 1, &e) == 0);
	}
	memset(&q, 0, sizeof(q));
	q.release_id = r.id;
	q.weights_sha256 = "sha-w";
	q.hw_key = "hwA";
	q.kind = "pp";
	q.prompt_tokens = 512;
	q.gen_tokens = 0;
	q.content = "";
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	CHECK_INT(pts.n, 0);		/* no definition: nothing */
	store_points_release(&pts);
	snprintf(q.definition, sizeof(q.definition), "def-engine");
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	/* The engine's figures only: a run without one does not lend its
	 * wall time, nor do other definitions theirs. */
	CHECK_INT(pts.n, 2);
	if (pts.n == 2) {
		CHECK_INT(pts.v[0].time_ns, 901);
		CHECK_INT(pts.v[0].confirm, 0);
		CHECK_INT(pts.v[1].time_ns, 902);
		CHECK_INT(pts.v[1].confirm, 1);
		CHECK_INT(pts.v[1].lower_bound, 0);
	}
	store_points_release(&pts);
	CHECK(store_cell_outcomes(s, &q, &ok, &bad, &e) == 0);
	CHECK_INT(ok, 2);
	CHECK_INT(bad, 2);	/* the failed run, the one without a figure */
	snprintf(q.definition, sizeof(q.definition), "def-wall");
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	CHECK_INT(pts.n, 1);
	if (pts.n == 1)
		CHECK_INT(pts.v[0].time_ns, 1008);
	store_points_release(&pts);
	/* TTFT never lands beside bench times, and says it is a bound. */
	snprintf(q.definition, sizeof(q.definition), "def-ttft");
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	CHECK_INT(pts.n, 1);
	if (pts.n == 1) {
		CHECK_INT(pts.v[0].time_ns, 1009);
		CHECK_INT(pts.v[0].lower_bound, 1);
	}
	store_points_release(&pts);
	snprintf(q.definition, sizeof(q.definition), "def-engine");
	CHECK(store_cell_failures(s, &q, &fails, &e) == 0);
	CHECK_INT(fails, 1);

	CHECK(store_run_list(s, r.id, &rows, &e) == 0);
	CHECK_INT(rows.n, 11);
	if (rows.n == 11) {
		CHECK_STR(rows.v[8].definition, "def-wall");
		CHECK_STR(rows.v[8].definition_text, "{\"w\":1}");
		CHECK(rows.v[10].definition == NULL);
		CHECK_STR(rows.v[3].failure, "parse");
		CHECK_INT(rows.v[3].nsamples, 1);
		/* Reparse turns the failed run into a good one. */
		smp.engine_ns = 777;
		CHECK(store_run_resample(s, rows.v[3].id, &smp, 1, NULL, NULL,
		    NULL, 0, &e) == 0);
	}
	store_run_rows_release(&rows);
	CHECK(store_cell_points(s, &q, &pts, &e) == 0);
	CHECK_INT(pts.n, 3);
	store_points_release(&pts);

	memset(&b, 0, sizeof(b));
	b.engine_id = eng;
	b.good = "0.2.0";
	b.bad = "0.2.6";
	b.metric = "per-token";
	b.threshold = 0.2;
	CHECK(store_bisect_open(s, &b, &resumed, &e) == 0);
	CHECK_INT(resumed, 0);
	CHECK(store_probe_add(s, b.id, "measure", r.id, 0, 5, &e) == 0);
	CHECK(store_probe_add(s, b.id, "confirm", r.id, r.id, 5, &e) == 0);
	CHECK(store_probe_count(s, b.id, &n, &e) == 0);
	CHECK_INT(n, 2);
	{
		int64_t first = b.id;

		CHECK(store_bisect_open(s, &b, &resumed, &e) == 0);
		CHECK_INT(resumed, 1);
		CHECK_INT(b.id, first);
	}
	CHECK(store_bisect_finish(s, b.id, "done", "regression",
	    "{\"status\":\"regression\"}", &e) == 0);
	CHECK(store_bisect_open(s, &b, &resumed, &e) == 0);
	CHECK_INT(resumed, 0);
	CHECK(store_bisect_latest(s, eng, "0.2.0", "0.2.6", "per-token", &json,
	    &e) == 0);
	CHECK_STR(json, "{\"status\":\"regression\"}");
	free(json);

	/* The status page's list: one row per range and metric, its
	 * newest finished; the running one is not there yet. */
	CHECK(store_bisect_recent(s, eng, 10, &recent, &e) == 0);
	CHECK_INT(recent.n, 1);
	store_bisect_rows_release(&recent);
	CHECK(store_bisect_finish(s, b.id, "done", "no-regression",
	    "{\"status\":\"no-regression\"}", &e) == 0);
	b.good = "0.2.5";
	CHECK(store_bisect_open(s, &b, &resumed, &e) == 0);
	CHECK(store_bisect_finish(s, b.id, "done", "unknown",
	    "{\"status\":\"unknown\"}", &e) == 0);
	b.good = "0.2.0";
	b.metric = "pp512";
	CHECK(store_bisect_open(s, &b, &resumed, &e) == 0);
	CHECK(store_bisect_finish(s, b.id, "failed", NULL, NULL, &e) == 0);
	CHECK(store_bisect_recent(s, eng, 10, &recent, &e) == 0);
	CHECK_INT(recent.n, 2);
	if (recent.n == 2) {
		CHECK_STR(recent.v[0].good, "0.2.5");
		CHECK_STR(recent.v[0].status, "unknown");
		CHECK_STR(recent.v[1].good, "0.2.0");
		CHECK_STR(recent.v[1].status, "no-regression");
		CHECK_STR(recent.v[1].verdict,
		    "{\"status\":\"no-regression\"}");
		CHECK_STR(recent.v[1].metric, "per-token");
		CHECK(recent.v[1].finished > 0);
	}
	store_bisect_rows_release(&recent);
	CHECK(store_bisect_recent(s, eng, 1, &recent, &e) == 0);
	CHECK_INT(recent.n, 1);
	store_bisect_rows_release(&recent);
	CHECK(store_bisect_recent(s, eng + 1, 10, &recent, &e) == 0);
	CHECK_INT(recent.n, 0);
	store_bisect_rows_release(&recent);

	/* One engine's alerts, newest first. */
	CHECK_INT(store_alert_record(s, "regression", "basert", "k1", "one",
	    "{}", &e), 0);
	CHECK_INT(store_alert_record(s, "regression", "other", "k2", "two",
	    "{}", &e), 0);
	CHECK_INT(store_alert_record(s, "regression", "basert", "k3", "three",
	    "{}", &e), 0);
	CHECK_INT(store_alert_list_engine(s, "basert", 10, &alerts, &e), 0);
	CHECK_INT(alerts.n, 2);
	if (alerts.n == 2) {
		CHECK_STR(alerts.v[0].alert.summary, "three");
		CHECK_STR(alerts.v[1].alert.summary, "one");
	}
	store_alert_rows_release(&alerts);
	CHECK_INT(store_alert_list_engine(s, NULL, 10, &alerts, &e), 0);
	CHECK_INT(alerts.n, 3);
	store_alert_rows_release(&alerts);
	store_close(s);
}

/* A second connection holding the write lock: the migration waits, then
 * fails cleanly and leaves the database at its version. */
static void
test_locked(void)
{
	struct err e = ERR_INIT;
	struct store *holder, *s;

	CHECK(store_open_version("locked.db", 0, &holder, &e) == 0);
	if (holder == NULL)
		return;
	CHECK(store_begin(holder, &e) == 0);
	CHECK(store_open("locked.db", &s, &e) < 0);
	CHECK_CONTAINS(e.msg, "locked by another writer");
	store_rollback(holder);
	CHECK_INT(store_schema_version(holder), 0);
	store_close(holder);
}

/* Processes opening one new database at once: each migration is applied
 * once, whoever gets the write lock first, and none takes the database
 * for another program's while another is migrating it (seen when the
 * header and the tables were read by separate statements).  Several
 * rounds, each on a new file, since the window is narrow. */
static void
test_concurrent_open(void)
{
	enum { ROUNDS = 8, KIDS = 4 };
	int ok = 0;

	for (int round = 0; round < ROUNDS; round++) {
		pid_t kids[KIDS];
		char path[32];

		snprintf(path, sizeof(path), "race%d.db", round);
		for (int i = 0; i < KIDS; i++) {
			if ((kids[i] = fork()) == 0) {
				struct err e = ERR_INIT;
				struct store *s;

				if (store_open(path, &s, &e) < 0) {
					fprintf(stderr, "%s\n", e.msg);
					_exit(1);
				}
				store_close(s);
				_exit(0);
			}
		}
		for (int i = 0; i < KIDS; i++) {
			int status;

			waitpid(kids[i], &status, 0);
			ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		}
	}
	CHECK_INT(ok, ROUNDS * KIDS);
}

/*
 * Every verdict an ablation can reach is one the schema stores (007
 * left out "control-adds", so such an ablation could not finish), and an
 * ablation and its runs from before 013 survive the table's rebuild.
 */
static void
test_ablation_statuses(void)
{
	struct err e = ERR_INIT;
	struct store *s;
	struct store_release r;
	struct store_machine m = test_machine;
	struct store_run run;
	int64_t eng, w, mach, abl, nfail = 0;
	char *json = NULL, *failure = NULL, *detail = NULL, *tail = NULL;

	CHECK(store_open_version("abl.db", 12, &s, &e) == 0);
	if (s == NULL)
		return;
	eng = add_release(s, "0.2.3", &r);
	CHECK(store_weights_ensure(s, "w", "aa", 10, &w, &e) == 0);
	CHECK(store_machine_ensure(s, &m, &mach, &e) == 0);
	CHECK(store_ablation_open(s, 0, eng, r.id, &abl, &e) == 0);
	pp512_run(&run, &r, w, mach);
	run.end.exit_code = 1;
	run.end.failure = "exit";
	run.out = "";
	run.ablation_id = abl;
	run.variant = "fast";
	CHECK(store_run_insert(s, &run, NULL, 0, &e) == 0);
	CHECK(store_ablation_finish(s, abl, "done", "ranked", "{\"n\": 1}",
	    &e) == 0);
	store_close(s);

	CHECK(store_open("abl.db", &s, &e) == 0);
	if (s == NULL) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	CHECK(store_ablation_latest(s, r.id, &json, &e) == 0);
	CHECK_STR(json, "{\"n\": 1}");
	free(json);
	CHECK(store_ablation_failures(s, abl, "fast", &nfail, &failure, &detail,
	    &tail, &e) == 0);
	CHECK_INT(nfail, 1);
	CHECK_STR(failure, "exit");
	free(failure);
	free(detail);
	free(tail);
	for (int st = ABLATE_RANKED; st <= ABLATE_NO_CONTROL; st++) {
		const char *name = ablate_status_name((enum ablate_status)st);
		int rc;

		CHECK(store_ablation_open(s, 0, eng, r.id, &abl, &e) == 0);
		rc = store_ablation_finish(s, abl, "done", name, "{}", &e);
		if (rc < 0)
			fprintf(stderr, "%s: %s\n", name, e.msg);
		CHECK_INT(rc, 0);
	}
	store_close(s);
}

int
main(void)
{
	check_tmpdir("store");
	CHECK_CASE(test_fresh);
	CHECK_CASE(test_upgrade_each);
	CHECK_CASE(test_refuse_newer_and_foreign);
	CHECK_CASE(test_private_files);
	CHECK_CASE(test_releases);
	CHECK_CASE(test_runs);
	CHECK_CASE(test_points_and_bisects);
	CHECK_CASE(test_ablation_statuses);
	CHECK_CASE(test_locked);
	CHECK_CASE(test_concurrent_open);
	return check_done();
}
