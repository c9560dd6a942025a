/*
 * ctl_run.c: the bisectctl commands that fetch and measure: versions
 * --refresh, fetch, bench, runs, reparse, bisect, report and gc.
 */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectd/search/ablate.h"
#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/measure/canary.h"
#include "fetch/cache.h"
#include "ctl.h"
#include "bisectd/search/perf.h"
#include "bisectd/search/range.h"
#include "bisectd/search/canary.h"
#include "common/clock.h"
#include "common/err.h"
#include "bisectd/measure/parse.h"
#include "bisectd/report/build.h"
#include "bisectd/report/listing_json.h"
#include "bisectd/report/ablate_print.h"
#include "bisectd/report/print.h"
#include "bisectd/analysis/stats.h"
#include "store/store.h"

static atomic_int stop_requested;	/* lock-free: safe in a handler */

static void
on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGINT/SIGTERM finish the current run, store it, and stop. */
static void
catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int tty;		/* stderr is a terminal: redraw one line */
static int line_open;	/* a progress line is on screen */

static void
end_line(void)
{
	if (line_open) {
		fputc('\n', stderr);
		line_open = 0;
	}
}

/* A download's progress on a terminal: bytes, rate, ETA. */
static void
on_download(void *arg, uint64_t now, uint64_t total)
{
	static double start, last;
	static uint64_t first;
	double t, rate;

	(void)arg;
	if (!tty)
		return;
	t = clock_now_ns() / 1e9;
	if (start == 0 || now < first) {
		start = t;
		first = now;
	}
	if (t - last < 0.2 && now != total)
		return;
	last = t;
	rate = t > start ? (double)(now - first) / (t - start) : 0;
	if (total > 0 && rate > 0)
		fprintf(stderr, "\r\033[K  %.1f / %.1f MiB (%3.0f%%), %.1f MiB/s, "
		    "ETA %.0fs", (double)now / (1 << 20),
		    (double)total / (1 << 20), 100.0 * (double)now /
		    (double)total, rate / (1 << 20),
		    (double)(total - now) / rate);
	else
		fprintf(stderr, "\r\033[K  %.1f MiB, %.1f MiB/s",
		    (double)now / (1 << 20), rate / (1 << 20));
	line_open = 1;
}

static void
on_progress(void *arg, const struct bench_progress *p)
{
	char eta[32] = "";

	(void)arg;
	if (p->building) {
		if (tty) {
			fprintf(stderr, "\r\033[K  building %.12s (probe %d)",
			    p->building, p->probe);
			line_open = 1;
		}
		return;
	}
	if (p->waiting) {
		/* Off a terminal, say it once a wait passes 10 s, then every
		 * minute: a log should not fill up with it. */
		if (tty) {
			fprintf(stderr, "\r\033[K  %s", p->waiting);
			line_open = 1;
		} else if (p->waited_ms >= 10000 &&
		    p->waited_ms % 60000 < 1000)
			fprintf(stderr, "bisectctl: %s\n", p->waiting);
		return;
	}
	if (isfinite(p->eta_s))
		snprintf(eta, sizeof(eta), ", ETA %.0fs", p->eta_s);
	if (tty) {
		fprintf(stderr, "\r\033[K  %s cell %zu/%zu %s%d%s%s %s %d/%d, "
		    "run %zu/%zu, %.0fs%s", p->version, p->cell, p->ncells,
		    p->c->kind, strcmp(p->c->kind, "pp") == 0 ? p->c->prompt :
		    p->c->gen, p->c->content[0] ? "/" : "", p->c->content,
		    p->warmup ? "warm-up" : "rep", p->rep, p->warmup ? p->rep :
		    p->reps, p->done + 1, p->total, p->elapsed_s, eta);
		line_open = 1;
	}
}

static void
on_note(void *arg, const char *line)
{
	(void)arg;
	end_line();
	fprintf(stderr, "bisectctl: %s\n", line);
}

static int
on_lock_wait(void *arg, const struct benchlock_holder *h, int64_t waited_ms)
{
	(void)arg;
	if (waited_ms == 0 || waited_ms % 30000 < 1000)
		fprintf(stderr, "bisectctl: waiting for the benchmark lock, "
		    "held by pid %ld (%s)\n", (long)h->pid,
		    h->what[0] ? h->what : "unknown");
	return stop_requested;
}

/* One benchmark at a time per machine: the lock beside the database. */
static int
take_lock(struct ctl *c, struct benchlock *l, const char *what)
{
	struct err e = ERR_INIT;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s.bench-lock", c->conf->database);
	rc = benchlock_acquire(l, path, what, on_lock_wait, NULL, &e);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	if (rc == 1)
		return ctl_error("interrupted while waiting for the benchmark "
		    "lock");
	return 0;
}

static int
open_engine(struct ctl *c, const struct conf_engine **g, struct store **s,
    struct acquire *a)
{
	struct err e = ERR_INIT;

	if ((*g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	if ((*s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (acquire_init(a, c->conf, *g, *s, &e) < 0) {
		store_close(*s);
		return ctl_error("%s", e.msg);
	}
	a->progress = on_download;
	return 0;
}

/* A release the source lists under a version no release may have. */
static void
on_refused(void *arg, const char *version, const char *why)
{
	fprintf(stderr, "bisectctl: %s: release '%s' refused: %s\n",
	    (const char *)arg, version, why);
}

int
cmd_refresh(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct acquire a;
	struct err e = ERR_INIT;
	int rc, listed, added;

	if ((rc = open_engine(c, &g, &s, &a)) != 0)
		return rc;
	a.refused = on_refused;
	a.refused_arg = g->name;
	rc = acquire_refresh(&a, &listed, &added, &e);
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	fprintf(stderr, "bisectctl: %s: the source lists %d releases, %d new\n",
	    g->name, listed, added);
	return EXIT_OK;
}

int
cmd_fetch(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	int rc;

	if ((rc = open_engine(c, &g, &s, &a)) != 0)
		return rc;
	tty = isatty(2);
	/* SIGINT/SIGTERM end a download where it is: its partial file
	 * stays for the next fetch to resume. */
	catch_stop();
	a.stop = &stop_requested;
	rc = acquire_release(&a, c->argv[1], &got, &e);
	end_line();
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	if (c->format == FORMAT_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "engine", json_string(g->name));
		json_object_set_new(o, "version", json_string(c->argv[1]));
		json_object_set_new(o, "sha256", json_string(got.sha256));
		json_object_set_new(o, "url", got.url ? json_string(got.url) :
		    json_null());
		json_object_set_new(o, "dir", json_string(got.dir));
		json_object_set_new(o, "downloaded",
		    json_boolean(got.downloaded));
		json_object_set_new(o, "unpacked", json_boolean(got.unpacked));
		ctl_print_json(o);
	} else {
		/* A dir: source's archive is never downloaded: what matters
		 * is whether this fetch unpacked it. */
		const char *how = got.downloaded ? "downloaded and unpacked" :
		    !got.unpacked ? "already unpacked" :
		    got.url && got.url[0] == '/' ? "unpacked from the release "
		    "folder" : "archive from the cache, unpacked";

		printf("%s %s: sha256 %s (%s)\n  unpacked in %s\n", g->name,
		    c->argv[1], got.sha256, how, got.dir);
	}
	acquired_release(&got);
	return EXIT_OK;
}

/* Print the per-cell summary of what bench just stored. */
static void
bench_summary(struct ctl *c, struct store *s, const struct conf_engine *g,
    int64_t release_id, const char *wsha, const char *hw,
    const struct bench_cell *cells, size_t n)
{
	json_t *arr = json_array();

	if (c->format != FORMAT_JSON)
		printf("%-16s %4s %12s %22s %7s %14s  %s\n", "CELL", "N",
		    "MEDIAN ms", "MEAN ± SD ms", "CV", "TOK/S", "FLAGS");
	for (size_t i = 0; i < n; i++) {
		struct store_cell_query q;
		struct store_points pts;
		struct cell_stats st;
		struct throughput tp;
		char name[64], flags[64] = "";
		double *x;
		int busy = 0, lower = 0, tokens = cells[i].prompt ? cells[i].prompt :
		    cells[i].gen;

		snprintf(name, sizeof(name), "%s%d%s%s", cells[i].kind, tokens,
		    cells[i].content[0] ? "/" : "", cells[i].content);
		memset(&pts, 0, sizeof(pts));
		if (bench_cell_query(g, cells[i].kind, cells[i].prompt,
		    cells[i].gen, cells[i].content, release_id, wsha, hw, &q,
		    NULL) < 0 || store_cell_points(s, &q, &pts, NULL) < 0 ||
		    pts.n == 0) {
			if (c->format != FORMAT_JSON)
				printf("%-16s %4d %12s\n", name, 0, "-");
			store_points_release(&pts);
			continue;
		}
		x = malloc(pts.n * sizeof(*x));
		for (size_t k = 0; x && k < pts.n; k++) {
			x[k] = (double)pts.v[k].time_ns;
			busy |= pts.v[k].busy;
			lower |= pts.v[k].lower_bound;
		}
		if (x == NULL || stats_cell(x, pts.n, &st) < 0 ||
		    stats_throughput(tokens, &st, &tp) < 0) {
			free(x);
			store_points_release(&pts);
			continue;
		}
		if (st.cv > g->max_cv)
			strcat(flags, "noisy ");
		if (busy)
			strcat(flags, "busy ");
		/* Time to first token over HTTP: prefill is at least this. */
		if (lower)
			strcat(flags, "lower-bound ");
		if (c->format == FORMAT_JSON) {
			json_t *o = json_object();

			json_object_set_new(o, "cell", json_string(name));
			json_object_set_new(o, "n", json_integer((json_int_t)
			    st.n));
			json_object_set_new(o, "median_ms",
			    json_real(st.median / 1e6));
			json_object_set_new(o, "mean_ms", json_real(st.mean /
			    1e6));
			json_object_set_new(o, "sd_ms", json_real(st.sd / 1e6));
			json_object_set_new(o, "cv", json_real(st.cv));
			json_object_set_new(o, "tps", json_real(tp.tps));
			json_object_set_new(o, "tps_sd", json_real(tp.sd));
			json_object_set_new(o, "lower_bound",
			    json_boolean(lower));
			json_object_set_new(o, "flags", json_string(flags));
			json_array_append_new(arr, o);
		} else {
			char ms[48];

			snprintf(ms, sizeof(ms), "%.2f ± %.2f", st.mean / 1e6,
			    st.sd / 1e6);
			printf("%-16s %4zu %12.2f %23s %6.1f%% %s%8.1f ± %-5.1f "
			    "%s\n", name, st.n, st.median / 1e6, ms, 100 * st.cv,
			    lower ? ">=" : "  ", tp.tps, tp.sd, flags);
		}
		free(x);
		store_points_release(&pts);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(arr);
	else
		json_decref(arr);
}

int
cmd_bench(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct benchlock lock = BENCHLOCK_INIT;
	struct bench_job j;
	struct err e = ERR_INIT;
	int prompts[CONF_MAX_LENGTHS];
	size_t nprompts = 0;
	char what[256];
	int rc;

	if (c->prompts && conf_parse_lengths(c->prompts, prompts,
	    CONF_MAX_LENGTHS, &nprompts) < 0)
		return ctl_usage_error("--prompts: expected a comma-separated "
		    "list of distinct token counts, got '%s'", c->prompts);
	if ((g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	tty = isatty(2);
	catch_stop();
	snprintf(what, sizeof(what), "bisectctl bench %s %s", g->name,
	    c->argv[1]);
	if (take_lock(c, &lock, what) != 0) {
		store_close(s);
		return EXIT_FAIL;
	}
	memset(&j, 0, sizeof(j));
	j.prompts = c->prompts ? prompts : NULL;
	j.nprompts = nprompts;
	j.reps = c->reps;
	j.progress = on_progress;
	j.download = on_download;
	j.stop = &stop_requested;
	rc = bench_release(c->conf, g, s, c->argv[1], &j, &e);
	end_line();
	benchlock_release(&lock);
	if (rc < 0) {
		rc = ctl_error("%s", e.msg);
		goto done;
	}
	bench_summary(c, s, g, j.release_id, j.weights_sha256, j.hw_key,
	    j.cells, j.ncells);
	rc = EXIT_OK;
	if (j.tally.failed > 0)
		rc = ctl_error("%d of %d runs failed; the last: %s (see "
		    "'bisectctl runs %s %s')", j.tally.failed, j.tally.runs,
		    j.tally.last_failure, g->name, c->argv[1]);
	else if (j.tally.busy > 0)
		fprintf(stderr, "bisectctl: %d runs started on a busy machine "
		    "and are flagged busy\n", j.tally.busy);
done:
	bench_job_release(&j);
	store_close(s);
	return rc;
}

static int
find_release_id(struct ctl *c, struct store *s, const char *engine,
    const char *version, int64_t *id)
{
	struct store_release r;
	struct err e = ERR_INIT;
	int64_t eid;
	int rc;

	rc = store_engine_find(s, engine, &eid, &e);
	if (rc == 0)
		rc = store_release_get(s, eid, version, &r, &e);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	if (rc == 1)
		return ctl_usage_error("%s has no stored release '%s' (see "
		    "'bisectctl versions %s')", engine, version, engine);
	*id = r.id;
	store_release_release(&r);
	(void)c;
	return 0;
}

/* Under the runs: each measurement definition they used, once. */
static void
print_definitions(const struct store_run_rows *rows)
{
	int legacy = 0;

	for (size_t i = 0; i < rows->n; i++) {
		const char *key = rows->v[i].definition;
		size_t k;

		legacy |= key == NULL;
		if (key == NULL)
			continue;
		for (k = 0; k < i; k++)
			if (rows->v[k].definition &&
			    strcmp(rows->v[k].definition, key) == 0)
				break;
		if (k == i)
			printf("definition %.8s: %s\n", key,
			    rows->v[i].definition_text);
	}
	if (legacy)
		printf("definition -: stored before definitions were recorded; "
		    "never reused\n");
}

/* A commit's build before its runs: how it went, and a failed build's
 * last lines.  Nothing for a release. */
static int
print_build(struct store *s, int64_t rid, struct err *e)
{
	static const char *const states[] = { "not built", "interrupted "
	    "(built again when needed)", "built", "failed" };
	struct store_commit_info ci;
	int rc = store_commit_get(s, rid, &ci, e);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	printf("commit %s \"%s\" by %s\n", ci.id, ctl_safe(ci.subject),
	    ctl_safe(ci.author));
	printf("build: %s, %d build%s started", states[ci.state], ci.builds,
	    ci.builds == 1 ? "" : "s");
	if (ci.build_ms >= 0 && (ci.state == COMMIT_BUILD_DONE ||
	    ci.state == COMMIT_BUILD_FAILED))
		printf(", the last took %.1f s", (double)ci.build_ms / 1000);
	printf("\n");
	if (ci.log_tail != NULL) {
		const char *tail = ci.log_tail;
		size_t len = strlen(tail), end = len;

		/* The last lines are what explains it. */
		for (int nl = 0; len > 0; len--)
			if (tail[len - 1] == '\n' && ++nl > 12)
				break;
		printf("build log (last lines):\n%s\n", ctl_safe_n(tail + len,
		    end - len, 1));
	}
	printf("\n");
	store_commit_info_release(&ci);
	return 0;
}

/* A failed run's last lines of stderr, which are what explain it. */
static void
print_stderr_tail(const char *tail, size_t len)
{
	size_t end = len;

	for (int nl = 0; len > 0; len--)
		if (tail[len - 1] == '\n' && ++nl > 4)
			break;
	printf("        stderr: %s\n", ctl_safe_n(tail + len, end - len, 1));
}

/*
 * The canary runs under the runs: each with the hash of its text and the
 * state of its pair, or why it failed; then each canary definition they
 * used, once.
 */
static void
print_canary_runs(const struct canary_runs *k)
{
	const struct store_canary_rows *rows = &k->rows;

	if (rows->n == 0)
		return;
	printf("\ncanary runs (the text each generated from the canary "
	    "prompt):\n%6s  %-6s %11s  %-12s  %-8s  %s\n", "RUN", "KIND",
	    "WALL ms", "SHA256", "DEFN", "RESULT");
	for (size_t i = 0; i < rows->n; i++) {
		const struct store_canary_row *r = &rows->v[i];
		char wall[32];

		snprintf(wall, sizeof(wall), r->wall_ns >= 0 ? "%.2f" : "-",
		    (double)r->wall_ns / 1e6);
		printf("%6lld  %-6s %11s  %-12.12s  %-8.8s  %s%s%s\n",
		    (long long)r->id, "canary", wall, r->sha256 ? r->sha256 :
		    "-", r->definition ? r->definition : "-",
		    canary_state_name(k->state[i]), r->failure ? ": " : "",
		    r->failure ? r->failure : "");
		if (r->failure_detail)
			printf("        %s\n", ctl_safe(r->failure_detail));
		if (r->failure && r->err_len > 0)
			print_stderr_tail(r->err_tail, r->err_len);
	}
	for (size_t i = 0; i < rows->n; i++) {
		const char *key = rows->v[i].definition;
		size_t j;

		for (j = 0; key && j < i; j++)
			if (rows->v[j].definition &&
			    strcmp(rows->v[j].definition, key) == 0)
				break;
		if (key && j == i)
			printf("canary definition %.8s: %s\n", key,
			    rows->v[i].definition_text ?
			    rows->v[i].definition_text : "");
	}
}

int
cmd_runs(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct store_run_rows rows;
	struct canary_runs canary;
	struct err e = ERR_INIT;
	struct store *s;
	int64_t rid = 0;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	if ((s = ctl_store_readonly(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = find_release_id(c, s, g->name, c->argv[1], &rid)) != 0) {
		store_close(s);
		return rc;
	}
	if (store_run_list(s, rid, &rows, &e) < 0) {
		store_close(s);
		return ctl_error("%s", e.msg);
	}
	if (canary_runs_list(s, rid, &canary, &e) < 0) {
		store_run_rows_release(&rows);
		store_close(s);
		return ctl_error("%s", e.msg);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(listing_runs_json(&rows, &canary));
	else {
		if (print_build(s, rid, &e) < 0) {
			canary_runs_release(&canary);
			store_run_rows_release(&rows);
			store_close(s);
			return ctl_error("%s", e.msg);
		}
		printf("%6s  %-14s %4s  %-7s %11s %11s %-6s %7s %5s  %-8s  "
		    "%s\n", "RUN", "CELL", "REP", "KIND", "WALL ms",
		    "ENGINE ms", "READS", "SAMPLES", "BUSY", "DEFN", "RESULT");
		for (size_t i = 0; i < rows.n; i++) {
			const struct store_run_row *r = &rows.v[i];
			char cell[64], wall[32], own[32];

			snprintf(cell, sizeof(cell), "%s%d%s%s", r->kind,
			    r->prompt_tokens ? r->prompt_tokens :
			    r->gen_tokens, r->content[0] ? "/" : "",
			    r->content);
			snprintf(wall, sizeof(wall), r->wall_ns >= 0 ? "%.2f" :
			    "-", (double)r->wall_ns / 1e6);
			snprintf(own, sizeof(own), r->engine_ms >= 0 ? "%.2f" :
			    "-", r->engine_ms);
			printf("%6lld  %-14s %4d  %-7s %11s %11s %-6s %7d "
			    "%4.0f%%  %-8.8s  %s%s%s\n", (long long)r->id, cell,
			    r->rep + 1, r->warmup ? "warm-up" : r->confirm ?
			    "confirm" : "run", wall, own, r->clock ? r->clock :
			    "-", r->nsamples, r->busy_share >= 0 ?
			    100 * r->busy_share : 0, r->definition ?
			    r->definition : "-", r->failure ? r->failure : "ok",
			    r->failure_detail ? ": " : "", r->failure_detail ?
			    ctl_safe(r->failure_detail) : "");
			if (r->failure && r->err_len > 0)
				print_stderr_tail(r->err_tail, r->err_len);
		}
		printf("WALL is the runner's clock for the whole process; "
		    "ENGINE the mean of the\nengine's own figures in its "
		    "output; READS the one the analysis uses\n(the "
		    "definition's clock: engine, wall, or ttft, the time to "
		    "the first token).\n");
		print_definitions(&rows);
		print_canary_runs(&canary);
	}
	canary_runs_release(&canary);
	store_run_rows_release(&rows);
	store_close(s);
	return EXIT_OK;
}

/* The definition a reparsed run moves to: its own, with the engine's
 * current parser; 0 for a run stored before definitions were. */
static int
reparsed_definition(struct store *s, const struct conf_engine *g,
    const struct store_run_row *r, int64_t *id, struct err *e)
{
	struct bench_definition d;
	int rc;

	*id = 0;
	if (r->definition_text == NULL)
		return 0;
	if (bench_definition_reparse(r->definition_text, g, &d, e) < 0)
		return -1;
	rc = store_definition_ensure(s, d.key, d.text, d.clock, id, e);
	bench_definition_release(&d);
	return rc;
}

int
cmd_reparse(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct store_release_list rels = { NULL, 0 };
	struct parse_spec ps;
	struct err e = ERR_INIT;
	struct store *s;
	int64_t eid;
	int changed = 0, failed = 0, total = 0, rc = EXIT_OK;

	if (g == NULL)
		return EXIT_USAGE;
	ps.kind = g->parser;
	ps.arg = g->parser_arg;
	ps.unit = g->regex_unit;
	if (parse_check(&ps, &e) < 0)
		return ctl_error("engine %s: %s", g->name, e.msg);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (store_engine_find(s, g->name, &eid, &e) != 0 ||
	    store_release_list(s, eid, &rels, &e) < 0) {
		store_close(s);
		return ctl_error("nothing stored for %s%s%s", g->name,
		    e.msg[0] ? ": " : "", e.msg);
	}
	for (size_t i = 0; i < rels.n; i++) {
		struct store_run_rows rows;

		if (c->argc > 1 && strcmp(rels.v[i].version, c->argv[1]) != 0)
			continue;
		if (store_run_list(s, rels.v[i].id, &rows, &e) < 0) {
			rc = ctl_error("%s", e.msg);
			break;
		}
		for (size_t k = 0; k < rows.n; k++) {
			const struct store_run_row *r = &rows.v[k];
			struct parse_cell pc = { r->prompt_tokens,
			    r->gen_tokens };
			struct parse_result pr = PARSE_RESULT_INIT;
			struct store_sample *smp;
			struct err pe = ERR_INIT;
			const char *failure = NULL;
			int64_t definition_id = 0;

			/* Runs that never produced output stay as they are. */
			if (r->failure && strcmp(r->failure, "parse") != 0)
				continue;
			total++;
			if (parse_output(&ps, &pc, r->out ? r->out : "",
			    r->out_len, r->wall_ns, &pr, &pe) < 0)
				failure = "parse";
			smp = calloc(pr.n + 1, sizeof(*smp));
			for (size_t j = 0; smp && j < pr.n; j++) {
				smp[j].prompt_tokens = pr.samples[j].prompt_tokens;
				smp[j].gen_tokens = pr.samples[j].gen_tokens;
				smp[j].wall_ns = r->wall_ns;
				smp[j].engine_ns = g->parser == PARSER_WALL ?
				    -1 : pr.samples[j].engine_ns;
				smp[j].user_ns = r->user_ns;
				smp[j].sys_ns = r->sys_ns;
				smp[j].max_rss_kb = r->max_rss_kb;
			}
			if (smp == NULL || reparsed_definition(s, g, r,
			    &definition_id, &e) < 0 || store_run_resample(s,
			    r->id, smp, failure ? 0 : pr.n, failure, failure ?
			    pe.msg : NULL, pr.meta, definition_id, &e) < 0) {
				free(smp);
				parse_result_release(&pr);
				rc = ctl_error("%s", e.msg[0] ? e.msg :
				    "out of memory");
				break;
			}
			changed += (r->failure != NULL) != (failure != NULL);
			failed += failure != NULL;
			free(smp);
			parse_result_release(&pr);
		}
		store_run_rows_release(&rows);
		if (rc != EXIT_OK)
			break;
	}
	store_release_list_release(&rels);
	store_close(s);
	if (rc == EXIT_OK)
		printf("reparsed %d runs of %s with parser %s: %d changed "
		    "between ok and failed, %d fail to parse\n", total,
		    g->name, conf_parser_name(g->parser), changed, failed);
	return rc;
}

/* --metric output: the output canary, not a time. */
static int
metric_output(const struct ctl *c)
{
	return c->metric && strcmp(c->metric, "output") == 0;
}

static int
parse_common(struct ctl *c, struct conf_metric *m, double *threshold)
{
	m->kind = (enum conf_metric_kind)-1;
	m->n = 0;
	*threshold = -1;
	if (c->metric && !metric_output(c) &&
	    conf_parse_metric(c->metric, m) < 0)
		return ctl_usage_error("--metric: expected per-token, fixed, "
		    "ppN, tgN or output, got '%s'", c->metric);
	if (c->threshold && conf_parse_percent(c->threshold, threshold) < 0)
		return ctl_usage_error("--threshold: expected a percentage "
		    "such as 20%%, got '%s'", c->threshold);
	return 0;
}

/*
 * Build the report of the range and print it; closes the store.  JSON
 * goes out release by release as they are built, so a long range never
 * holds every release's JSON at once.  An exit code of 1 also says why
 * on stderr.
 */
static int
report_out(struct ctl *c, const struct conf_engine *g, struct store *s,
    struct report_opts *o)
{
	struct err e = ERR_INIT;
	struct report_json_stream w = { stdout, 0 };
	struct report_sink sink = { report_json_stream_head,
	    report_json_stream_release, &w };
	json_t *rep;
	int rc, code;

	if (c->format == FORMAT_JSON)
		o->sink = &sink;
	rc = report_build(c->conf, g, s, c->argv[1], o, &rep, &code, &e);
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	if (o->sink)
		report_json_tail(rep, w.n, stdout);
	else
		report_print(rep, c->format == FORMAT_MARKDOWN ?
		    REPORT_MARKDOWN : c->format == FORMAT_CSV ? REPORT_CSV :
		    c->format == FORMAT_HTML ? REPORT_HTML : REPORT_TEXT,
		    stdout);
	if (code == EXIT_FAIL)
		ctl_error("%s", json_string_value(json_object_get(
		    json_object_get(rep, "verdict"), "reason")));
	json_decref(rep);
	return code;
}

/*
 * A range that is no range, or is given backwards, is a usage error (exit
 * 2), found before anything is queued or measured.  Ends not known yet
 * are left to the job, which asks the source.  Returns 0 or EXIT_USAGE.
 */
static int
range_usage(struct ctl *c, struct store *s, const struct conf_engine *g)
{
	struct err e = ERR_INIT;
	struct range r;
	int64_t id = 0;
	int rc;

	if (strstr(c->argv[1], "..") == NULL)
		return ctl_usage_error("expected a range GOOD..BAD such as "
		    "0.2.0..0.2.6, got '%s'", c->argv[1]);
	/* Commits are ordered by the repository, not by the store. */
	if (c->commits) {
		char good[RANGE_END_MAX], bad[RANGE_END_MAX];

		return range_split(c->argv[1], good, bad, &e) < 0 ?
		    ctl_usage_error("%s", e.msg) : 0;
	}
	if (store_engine_find(s, g->name, &id, &e) != 0)
		return 0;
	rc = range_resolve(s, id, c->argv[1], &r, &e);
	if (rc == RANGE_BAD)
		return ctl_usage_error("%s", e.msg);
	if (rc == 0)
		range_release(&r);
	return 0;
}

int
cmd_report(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct report_opts o;
	struct store *s;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	memset(&o, 0, sizeof(o));
	if ((rc = parse_common(c, &o.metric, &o.threshold)) != 0)
		return rc;
	o.all = c->all;
	o.upstream = c->upstream;
	o.plot = c->format == FORMAT_HTML;
	o.commits = c->commits;
	o.output = metric_output(c);
	if (o.output && g->canary == NULL)
		return ctl_usage_error("--metric output: engine %s has no "
		    "canary (see [engine] canary)", g->name);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = range_usage(c, s, g)) != 0) {
		store_close(s);
		return rc;
	}
	return report_out(c, g, s, &o);
}

/* bisect --dry-run: the releases and the first commands, run nowhere. */
static int
print_plan(struct ctl *c, const struct conf_engine *g, struct store *s,
    const struct perf_opts *o)
{
	struct err e = ERR_INIT;
	json_t *plan, *x;
	size_t i, n;
	int commits;

	if (perf_plan(c->conf, g, s, c->argv[1], o, &plan, &e) < 0)
		return ctl_error("%s", e.msg);
	if (c->format == FORMAT_JSON) {
		ctl_print_json(plan);
		return EXIT_OK;
	}
	n = json_array_size(json_object_get(plan, "releases"));
	commits = json_is_array(json_object_get(plan, "builds"));
	printf("bisect %s%s %s: metric %s, threshold %.3g%%%s; %zu %s%s "
	    "(nothing is %s or run)\n", commits ? "--commits " : "", g->name,
	    ctl_safe(c->argv[1]), json_string_value(json_object_get(plan,
	    "metric")), 100 * json_real_value(json_object_get(plan,
	    "threshold")), json_is_true(json_object_get(plan, "all")) ?
	    ", every change (--all)" : "", n, commits ? "commits" :
	    "releases", !commits ? "" : json_is_true(json_object_get(plan,
	    "first_parent")) ? ", first parents" : ", every parent",
	    commits ? "built" : "fetched");
	json_array_foreach(json_object_get(plan, "releases"), i, x) {
		const char *v = json_string_value(json_object_get(x,
		    "version"));

		if (commits)
			printf("  %.12s %-9s \"%s\"%s\n", v, json_string_value(
			    json_object_get(x, "build")), ctl_safe(
			    json_string_value(json_object_get(x, "subject"))),
			    i == 0 ? ", the good end" : i + 1 == n ?
			    ", the bad end" : "");
		else
			printf("  %-20s %s%s\n", ctl_safe(v), json_string_value(
			    json_object_get(x, "state")), i == 0 ?
			    ", the good end" : i + 1 == n ? ", the bad end" :
			    "");
	}
	if (commits) {
		printf("it starts by building both ends:\n");
		json_array_foreach(json_object_get(plan, "builds"), i, x) {
			json_t *l;
			size_t k;

			if (json_is_true(json_object_get(x, "cached")))
				printf("  %.12s: built already, its tree is "
				    "reused\n", json_string_value(
				    json_object_get(x, "commit")));
			json_array_foreach(json_object_get(x, "commands"), k,
			    l)
				printf("  %.12s build: %s\n", json_string_value(
				    json_object_get(x, "commit")), ctl_safe(
				    json_string_value(l)));
		}
	}
	printf("%s measuring both ends, %lld warm-up and %lld runs "
	    "per cell, interleaved, with these commands:\n", commits ?
	    "then" : "it starts by", (long long)json_integer_value(
	    json_object_get(plan, "warmup")), (long long)json_integer_value(
	    json_object_get(plan, "reps")));
	json_array_foreach(json_object_get(plan, "commands"), i, x)
		printf("  %.*s %s: %s\n", commits ? 12 : INT_MAX, ctl_safe(
		    json_string_value(json_object_get(x, "version"))),
		    json_string_value(json_object_get(x, "cell")), ctl_safe(
		    json_string_value(json_object_get(x, "command"))));
	if (n > 2)
		printf("then it %s the %s between them, halving the range "
		    "each time (about %d probes).\n", commits ? "builds and "
		    "measures" : "measures", commits ? "commits" : "releases",
		    (int)ceil(log2((double)(n - 1))));
	json_decref(plan);
	return EXIT_OK;
}

int
cmd_bisect(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct perf_opts o;
	struct benchlock lock = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	enum bisect_status st;
	struct store *s;
	char what[512];
	json_t *verdict;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	memset(&o, 0, sizeof(o));
	if ((rc = parse_common(c, &o.metric, &o.threshold)) != 0)
		return rc;
	o.all = c->all;
	if (c->now && c->dry_run)
		return ctl_usage_error("--now and --dry-run: choose one");
	o.commits = c->commits;
	if (c->commits && (g->repo == NULL || g->build.n == 0))
		return ctl_usage_error("engine %s: --commits needs its repo and "
		    "build lines in the configuration", g->name);
	if (metric_output(c) && g->canary == NULL)
		return ctl_usage_error("--metric output: engine %s has no "
		    "canary (see [engine] canary)", g->name);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = range_usage(c, s, g)) != 0) {
		store_close(s);
		return rc;
	}
	if (c->dry_run) {
		rc = print_plan(c, g, s, &o);
		store_close(s);
		return rc;
	}
	if (!c->now) {
		json_t *args = json_pack("{s:s,s:s?,s:s?,s:b,s:b}", "range",
		    c->argv[1], "metric", c->metric, "threshold", c->threshold,
		    "all", c->all, "commits", c->commits);
		char *text = json_dumps(args, JSON_COMPACT);
		int64_t id;

		rc = store_job_enqueue(s, "bisect", g->name, text, 0, &id, &e);
		free(text);
		json_decref(args);
		store_close(s);
		if (rc < 0)
			return ctl_error("%s", e.msg);
		printf("queued %sbisect of %s %s as job %lld ('bisectctl status' "
		    "shows the queue; 'bisectctl bisect --now' runs it here)\n",
		    c->commits ? "commit " : "", g->name, c->argv[1],
		    (long long)id);
		ctl_wake(c);
		return EXIT_OK;
	}
	tty = isatty(2);
	catch_stop();
	snprintf(what, sizeof(what), "bisectctl bisect --now %s %s", g->name,
	    c->argv[1]);
	if (take_lock(c, &lock, what) != 0) {
		store_close(s);
		return EXIT_FAIL;
	}
	o.progress = on_progress;
	o.note = on_note;
	o.stop = &stop_requested;
	if (metric_output(c)) {
		struct canary_opts oo = { on_note, NULL, &stop_requested };
		int code;

		verdict = NULL;
		rc = canary_bisect(c->conf, g, s, c->argv[1], &oo, NULL, &code,
		    &e);
	} else
		rc = perf_bisect(c->conf, g, s, c->argv[1], &o, &verdict, &st,
		    &e);
	end_line();
	benchlock_release(&lock);
	if (rc < 0) {
		store_close(s);
		return ctl_error("%s", e.msg);
	}
	json_decref(verdict);
	/* The verdict, with the table around it, as report shows it. */
	{
		struct report_opts ro;

		memset(&ro, 0, sizeof(ro));
		ro.metric = o.metric;
		ro.threshold = o.threshold;
		ro.all = o.all;
		ro.plot = c->format == FORMAT_HTML;
		ro.commits = o.commits;
		ro.output = metric_output(c);
		return report_out(c, g, s, &ro);
	}
}

static void
on_gc(void *arg, const char *dir, uint64_t bytes)
{
	(void)arg;
	printf("removed %s (%.1f MiB)\n", dir, (double)bytes / (1 << 20));
}

int
cmd_gc(struct ctl *c)
{
	struct cache_gc_stats st;
	struct err e = ERR_INIT;

	if (cache_gc(c->conf->cache, c->conf->cache_max, NULL, on_gc, NULL,
	    &st, &e) < 0)
		return ctl_error("%s", e.msg);
	printf("%llu of %llu unpacked releases removed, %.1f MiB freed, %.1f "
	    "MiB kept (cap %.1f MiB)\n", (unsigned long long)st.removed,
	    (unsigned long long)st.releases, (double)st.removed_bytes /
	    (1 << 20), (double)st.kept_bytes / (1 << 20),
	    (double)c->conf->cache_max / (1 << 20));
	return EXIT_OK;
}

static enum report_format
report_format(const struct ctl *c)
{
	return c->format == FORMAT_JSON ? REPORT_JSON :
	    c->format == FORMAT_MARKDOWN ? REPORT_MARKDOWN :
	    c->format == FORMAT_CSV ? REPORT_CSV :
	    c->format == FORMAT_HTML ? REPORT_HTML : REPORT_TEXT;
}

/* The newest finished ablation of a release, from the store alone. */
static int
ablate_last(struct ctl *c, const struct conf_engine *g)
{
	struct err e = ERR_INIT;
	struct store *s;
	json_t *rep;
	char *text = NULL;
	int64_t rid;
	int rc;

	if ((s = ctl_store_readonly(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = find_release_id(c, s, g->name, c->argv[1], &rid)) != 0) {
		store_close(s);
		return rc;
	}
	rc = store_ablation_latest(s, rid, &text, &e);
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	if (text == NULL)
		return ctl_error("no finished ablation of %s %s is stored "
		    "('bisectctl ablate %s %s' queues one)", g->name,
		    c->argv[1], g->name, c->argv[1]);
	rep = json_loads(text, 0, NULL);
	free(text);
	if (rep == NULL)
		return ctl_error("the stored ablation of %s %s is not JSON",
		    g->name, c->argv[1]);
	ablate_print(rep, report_format(c), stdout);
	rc = ablate_exit_code(rep);
	json_decref(rep);
	return rc;
}

int
cmd_ablate(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct benchlock lock = BENCHLOCK_INIT;
	struct ablate_opts o;
	struct err e = ERR_INIT;
	struct store *s;
	char what[512];
	json_t *rep;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	if (conf_ablation_control(c->conf, g->name) == NULL)
		return ctl_usage_error("engine %s has no [ablation] switches; "
		    "see the README's \"Ablation with a positive control\"",
		    g->name);
	if (c->last)
		return ablate_last(c, g);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (!c->now) {
		json_t *args = json_pack("{s:s}", "version", c->argv[1]);
		char *text = json_dumps(args, JSON_COMPACT);
		int64_t id;

		rc = store_job_enqueue(s, "ablate", g->name, text, 0, &id, &e);
		free(text);
		json_decref(args);
		store_close(s);
		if (rc < 0)
			return ctl_error("%s", e.msg);
		printf("queued ablation of %s %s as job %lld ('bisectctl ablate "
		    "--last %s %s' shows its report once done; --now runs it "
		    "here)\n", g->name, c->argv[1], (long long)id, g->name,
		    c->argv[1]);
		ctl_wake(c);
		return EXIT_OK;
	}
	tty = isatty(2);
	catch_stop();
	snprintf(what, sizeof(what), "bisectctl ablate --now %s %s", g->name,
	    c->argv[1]);
	if (take_lock(c, &lock, what) != 0) {
		store_close(s);
		return EXIT_FAIL;
	}
	memset(&o, 0, sizeof(o));
	o.progress = on_progress;
	o.stop = &stop_requested;
	rc = ablate_release(c->conf, g, s, c->argv[1], &o, &rep, &e);
	end_line();
	benchlock_release(&lock);
	store_close(s);
	if (rc < 0)
		return ctl_error("%s", e.msg);
	ablate_print(rep, report_format(c), stdout);
	if (rc == EXIT_FAIL)
		ctl_error("%s", json_string_value(json_object_get(rep,
		    "reason")));
	json_decref(rep);
	return rc;
}
