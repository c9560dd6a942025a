/*
 * ctl_runs.c: bisectctl runs and reparse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/acquire/bench_release.h"
#include "bisectd/device/device.h"
#include "bisectd/measure/canary.h"
#include "bisectd/measure/parse.h"
#include "bisectd/report/listing_json.h"
#include "common/err.h"
#include "ctl.h"

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

/* A figure, or "-" where it is unknown (NULL in the store). */
static const char *
fig(char *buf, size_t len, int decimals, double v)
{
	if (v >= 0)
		snprintf(buf, len, "%.*f", decimals, v);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* Under a run: what its GPUs did, if it has readings. */
static void
print_run_gpu(const struct store_run_gpu *g)
{
	char sm[32], mem[32], temp[32], power[32], util[32], peak[32];
	char energy[32], why[160];

	if (g->samples <= 0)
		return;
	if (g->throttle >= 0)
		device_throttle_names((uint64_t)g->throttle, why,
		    sizeof(why));
	else
		snprintf(why, sizeof(why), "-");
	printf("        gpu: sm %s MHz, mem %s MHz, max %s C, %s W, util %s%%,"
	    " mem peak %s GiB, %s J, reasons %s%s (%d readings)\n",
	    fig(sm, sizeof(sm), 0, g->sm_mhz),
	    fig(mem, sizeof(mem), 0, g->mem_mhz),
	    fig(temp, sizeof(temp), 0, g->temp_max_c),
	    fig(power, sizeof(power), 1, g->power_w),
	    fig(util, sizeof(util), 0, g->util_pct),
	    fig(peak, sizeof(peak), 2, g->mem_peak >= 0 ?
	    (double)g->mem_peak / (1 << 30) : -1),
	    fig(energy, sizeof(energy), 1, g->energy_j), why,
	    g->throttled ? ", THROTTLED" : "", g->samples);
}

static const char *
mode_name(int v)
{
	return v < 0 ? "unknown" : v ? "on" : "off";
}

/* Under the runs: the GPUs of each machine they ran on, once, which are
 * what its hardware key was made of. */
static int
print_machine_gpus(struct store *s, const struct store_run_rows *rows,
    struct err *e)
{
	struct store_gpu g[DEVICE_MAX];
	char limit[32];
	size_t n;

	for (size_t i = 0; i < rows->n; i++) {
		int64_t id = rows->v[i].machine_id;
		size_t k;

		for (k = 0; k < i && rows->v[k].machine_id != id; k++)
			;
		if (k < i)
			continue;
		if (store_machine_gpus(s, id, g, DEVICE_MAX, &n, e) < 0)
			return -1;
		for (k = 0; k < n; k++)
			printf("machine %lld gpu %d: %s, %s, driver %s,"
			    " CUDA %s, VBIOS %s, power limit %s W,"
			    " persistence %s, MIG %s, ECC %s, application"
			    " clocks %d/%d MHz (default %d/%d), clocks locked"
			    " %s\n", (long long)id, g[k].index,
			    ctl_safe(g[k].model), ctl_safe(g[k].uuid),
			    ctl_safe(g[k].driver), ctl_safe(g[k].cuda),
			    ctl_safe(g[k].vbios), fig(limit, sizeof(limit), 0,
			    g[k].power_limit_mw >= 0 ?
			    (double)g[k].power_limit_mw / 1000 : -1),
			    mode_name(g[k].persistence), mode_name(g[k].mig),
			    mode_name(g[k].ecc), g[k].app_sm_mhz,
			    g[k].app_mem_mhz, g[k].default_sm_mhz,
			    g[k].default_mem_mhz,
			    g[k].clocks_locked < 0 ? "unknown" :
			    g[k].clocks_locked ? "yes" : "no");
	}
	return 0;
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
	if ((rc = ctl_release_id(s, g->name, c->argv[1], &rid)) != 0) {
		store_close(s);
		return rc;
	}
	if (store_run_list(s, rid, &rows, &e) < 0) {
		store_close(s);
		return ctl_failed(&e);
	}
	if (canary_runs_list(s, rid, &canary, &e) < 0) {
		store_run_rows_release(&rows);
		store_close(s);
		return ctl_failed(&e);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(listing_runs_json(&rows, &canary));
	else {
		if (print_build(s, rid, &e) < 0) {
			canary_runs_release(&canary);
			store_run_rows_release(&rows);
			store_close(s);
			return ctl_failed(&e);
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
			print_run_gpu(&r->gpu);
		}
		printf("WALL is the runner's clock for the whole process; "
		    "ENGINE the mean of the\nengine's own figures in its "
		    "output; READS the one the analysis uses\n(the "
		    "definition's clock: engine, wall, or ttft, the time to "
		    "the first token).\n");
		print_definitions(&rows);
		if (print_machine_gpus(s, &rows, &e) < 0) {
			canary_runs_release(&canary);
			store_run_rows_release(&rows);
			store_close(s);
			return ctl_failed(&e);
		}
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
