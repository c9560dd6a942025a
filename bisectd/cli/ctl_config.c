/*
 * ctl_config.c: bisectctl check-config and versions: what the
 * configuration resolves to and which releases the store knows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/report/listing_json.h"
#include "bisectd/jobs/status.h"
#include "ctl.h"
#include "bisectd/measure/definition.h"
#include "bisectd/measure/parse.h"
#include "bisectd/process/template.h"
#include "common/err.h"
#include "store/store.h"

static void
lengths_text(char *buf, size_t len, const int *v, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d",
		    i ? "," : "", v[i]);
}

static const char *
duration_text(char *buf, size_t len, int64_t ms)
{
	if (ms % 86400000 == 0)
		snprintf(buf, len, "%lldd", (long long)(ms / 86400000));
	else if (ms % 3600000 == 0)
		snprintf(buf, len, "%lldh", (long long)(ms / 3600000));
	else if (ms % 60000 == 0)
		snprintf(buf, len, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lldms", (long long)ms);
	return buf;
}

static const char *
parser_text(char *buf, size_t len, const struct conf_engine *g)
{
	if (g->parser_arg)
		snprintf(buf, len, "%s:%s (%s)", conf_parser_name(g->parser),
		    g->parser_arg, conf_unit_name(g->regex_unit));
	else
		snprintf(buf, len, "%s", conf_parser_name(g->parser));
	return buf;
}

static const char *
canary_parser_text(char *buf, size_t len, const struct conf_engine *g)
{
	snprintf(buf, len, "%s%s%s", conf_text_parser_name(g->canary_parser),
	    g->canary_parser_arg ? ":" : "", g->canary_parser_arg ?
	    g->canary_parser_arg : "");
	return buf;
}

/*
 * What the config loader leaves to the layers that run commands: the
 * canary's template and its text parser.  One line per problem on
 * stderr; returns how many.
 */
static int
check_canaries(const struct conf *cf)
{
	int problems = 0;

	for (size_t i = 0; i < cf->nengines; i++) {
		const struct conf_engine *g = &cf->engines[i];
		struct parse_text_spec ps = { g->canary_parser,
		    g->canary_parser_arg };
		struct err e = ERR_INIT;

		if (g->canary == NULL)
			continue;
		if (tmpl_check(g->canary, &e) < 0) {
			ctl_error("%s: engine.%s.canary: %s", cf->path, g->name,
			    e.msg);
			problems++;
		}
		e.msg[0] = '\0';
		if (parse_text_check(&ps, &e) < 0) {
			ctl_error("%s: engine.%s.canary-parser: %s", cf->path,
			    g->name, e.msg);
			problems++;
		}
	}
	return problems;
}

/*
 * The switches of engine g, as check-config shows them: an env entry by
 * its name alone, since its value may be a credential meant for the
 * switch's own runs.
 */
static json_t *
ablations_json(const struct conf *cf, const struct conf_engine *g)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < cf->nablations; i++) {
		const struct conf_ablation *a = &cf->ablations[i];
		json_t *o, *env = json_array(), *args = json_array();

		if (a->engine != g)
			continue;
		for (size_t k = 0; k < a->env.n; k++)
			json_array_append_new(env, json_stringn(a->env.v[k],
			    strcspn(a->env.v[k], "=")));
		for (size_t k = 0; k < a->args.n; k++)
			json_array_append_new(args, json_string(a->args.v[k]));
		o = json_pack("{s:s,s:o,s:o,s:b}", "name", a->name, "env", env,
		    "args", args, "control", a->control);
		if (a->control)
			json_object_set_new(o, "control_min",
			    json_real(a->control_min));
		json_array_append_new(arr, o);
	}
	return arr;
}

static void
ablations_text(const struct conf *cf, const struct conf_engine *g)
{
	for (size_t i = 0; i < cf->nablations; i++) {
		const struct conf_ablation *a = &cf->ablations[i];

		if (a->engine != g)
			continue;
		printf("  ablation  %s:", a->name);
		for (size_t k = 0; k < a->env.n; k++)
			printf(" %.*s=...", (int)strcspn(a->env.v[k], "="),
			    a->env.v[k]);
		for (size_t k = 0; k < a->args.n; k++)
			printf(" %s", a->args.v[k]);
		if (a->control)
			printf(" (the control: must remove %.3g%% or more)",
			    a->control_min * 100);
		printf("\n");
	}
}

static json_t *
engine_json(const struct conf *cf, const struct conf_engine *g)
{
	char metric[32], parser[512];
	json_t *o = json_object(), *env = json_array(), *contents = json_array();
	struct err e = ERR_INIT;
	time_t next;

	for (size_t i = 0; i < g->env.n; i++)
		json_array_append_new(env, json_string(g->env.v[i]));
	for (size_t i = 0; i < g->contents.n; i++)
		json_array_append_new(contents, json_string(g->contents.v[i]));
	json_object_set_new(o, "name", json_string(g->name));
	json_object_set_new(o, "source", json_string(g->source_spec));
	json_object_set_new(o, "asset", g->asset ? json_string(g->asset) :
	    json_null());
	json_object_set_new(o, "command", json_string(g->command));
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "mode", json_string(conf_mode_name(
	    g->mode)));
	json_object_set_new(o, "parser", json_string(parser_text(parser,
	    sizeof(parser), g)));
	json_object_set_new(o, "weights", json_string(g->weights->name));
	json_object_set_new(o, "prompts", def_lengths_json(g->prompts,
	    g->nprompts));
	json_object_set_new(o, "gen", def_lengths_json(g->gen, g->ngen));
	json_object_set_new(o, "contents", contents);
	json_object_set_new(o, "reps", json_integer(g->reps));
	json_object_set_new(o, "max_reps", json_integer(g->max_reps));
	json_object_set_new(o, "warmup", json_integer(g->warmup));
	json_object_set_new(o, "threads", json_integer(g->threads));
	json_object_set_new(o, "timeout_ms", json_integer(g->timeout_ms));
	json_object_set_new(o, "max_memory", json_integer(
	    (json_int_t)g->max_memory));
	json_object_set_new(o, "fit", def_lengths_json(g->fit, g->nfit));
	json_object_set_new(o, "metric", json_string(conf_metric_name(
	    &g->metric, metric, sizeof(metric))));
	json_object_set_new(o, "threshold", json_real(g->threshold));
	json_object_set_new(o, "max_cv", json_real(g->max_cv));
	json_object_set_new(o, "schedule", g->schedule ?
	    json_string(g->schedule) : json_null());
	if (g->canary) {
		json_t *k = json_object();

		json_object_set_new(k, "command", json_string(g->canary));
		json_object_set_new(k, "prompt", json_string(g->canary_prompt));
		json_object_set_new(k, "prompt_sha256",
		    g->canary_prompt_sha256 ? json_string(
		    g->canary_prompt_sha256) : json_null());
		json_object_set_new(k, "parser", json_string(canary_parser_text(
		    parser, sizeof(parser), g)));
		json_object_set_new(o, "canary", k);
	} else
		json_object_set_new(o, "canary", json_null());
	json_object_set_new(o, "next_watch", g->schedule &&
	    status_next_watch(g, NULL, time(NULL), &next, &e) == 0 ?
	    json_integer(next) : json_null());
	json_object_set_new(o, "runner", g->runner ?
	    json_string(g->runner->name) : json_null());
	json_object_set_new(o, "matrix", g->matrix ?
	    json_string(g->matrix->name) : json_null());
	json_object_set_new(o, "ablations", ablations_json(cf, g));
	{
		json_t *build = json_array();

		for (size_t i = 0; i < g->build.n; i++)
			json_array_append_new(build,
			    json_string(g->build.v[i]));
		json_object_set_new(o, "repo", g->repo ? json_string(g->repo) :
		    json_null());
		json_object_set_new(o, "build", build);
		json_object_set_new(o, "build_timeout_ms",
		    json_integer(g->build_timeout_ms));
		json_object_set_new(o, "first_parent",
		    json_boolean(g->first_parent));
		json_object_set_new(o, "drill_down",
		    json_boolean(g->drill_down));
	}
	return o;
}

static json_t *
runner_json(const struct conf_runner *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "kind", json_string(r->kind == RUNNER_SLURM ?
	    "slurm" : "local"));
	json_object_set_new(o, "max_jobs", json_integer(r->max_jobs));
	if (r->kind != RUNNER_SLURM)
		return o;
	json_object_set_new(o, "partition", r->partition ?
	    json_string(r->partition) : json_null());
	json_object_set_new(o, "account", r->account ?
	    json_string(r->account) : json_null());
	json_object_set_new(o, "gres", r->gres ? json_string(r->gres) :
	    json_null());
	json_object_set_new(o, "constraint", r->constraint ?
	    json_string(r->constraint) : json_null());
	json_object_set_new(o, "exclusive", json_boolean(r->exclusive));
	json_object_set_new(o, "time_limit_ms", json_integer(
	    r->time_limit_ms));
	json_object_set_new(o, "spool", json_string(r->spool));
	return o;
}

/* A runner as check-config shows it: a slurm one with the options its
 * jobs get from sbatch. */
static void
runner_text(const struct conf_runner *r)
{
	char a[64];

	if (r->kind != RUNNER_SLURM) {
		printf("runner %s: local, one benchmark at a time\n", r->name);
		return;
	}
	printf("runner %s: slurm, up to %d jobs at once\n", r->name,
	    r->max_jobs);
	printf("  spool     %s\n", r->spool);
	if (r->partition)
		printf("  partition %s\n", r->partition);
	if (r->account)
		printf("  account   %s\n", r->account);
	if (r->gres)
		printf("  gres      %s\n", r->gres);
	if (r->constraint)
		printf("  constraint %s\n", r->constraint);
	printf("  node      %s, time limit %s\n", r->exclusive ?
	    "exclusive" : "shared", r->time_limit_ms ? duration_text(a,
	    sizeof(a), r->time_limit_ms) : "the partition's");
}

int
cmd_check_config(struct ctl *c)
{
	const struct conf *cf = c->conf;
	struct err e = ERR_INIT;
	time_t now = time(NULL), next;
	char a[256], b[256], m[32], when[96];

	if (check_canaries(cf) > 0)
		return EXIT_FAIL;
	if (c->format == FORMAT_JSON) {
		json_t *o = json_object(), *engines = json_array();
		json_t *weights = json_array();

		for (size_t i = 0; i < cf->nweights; i++) {
			json_t *w = json_object();

			json_object_set_new(w, "name",
			    json_string(cf->weights[i].name));
			json_object_set_new(w, cf->weights[i].path ? "path" :
			    "url", json_string(cf->weights[i].path ?
			    cf->weights[i].path : cf->weights[i].url));
			json_object_set_new(w, "sha256", cf->weights[i].sha256 ?
			    json_string(cf->weights[i].sha256) : json_null());
			json_array_append_new(weights, w);
		}
		for (size_t i = 0; i < cf->nengines; i++)
			json_array_append_new(engines,
			    engine_json(cf, &cf->engines[i]));
		json_object_set_new(o, "config", json_string(cf->path));
		json_object_set_new(o, "database", json_string(cf->database));
		json_object_set_new(o, "cache", json_string(cf->cache));
		json_object_set_new(o, "socket", json_string(cf->socket));
		json_object_set_new(o, "http", cf->http ? json_string(cf->http) :
		    json_null());
		json_object_set_new(o, "public_url", cf->public_url ?
		    json_string(cf->public_url) : json_null());
		json_object_set_new(o, "weights", weights);
		json_object_set_new(o, "engines", engines);
		{
			json_t *runners = json_array();

			for (size_t i = 0; i < cf->nrunners; i++)
				json_array_append_new(runners,
				    runner_json(&cf->runners[i]));
			json_object_set_new(o, "runners", runners);
		}
		ctl_print_json(o);
		return EXIT_OK;
	}
	printf("config %s: ok\n", cf->path);
	printf("  database  %s\n", cf->database);
	printf("  cache     %s (unpacked releases up to %.1f GiB)\n", cf->cache,
	    (double)cf->cache_max / (1 << 30));
	printf("  socket    %s\n", cf->socket);
	if (cf->http)
		printf("  http      %s, read-only%s%s\n", cf->http,
		    cf->public_url ? ", public at " : "",
		    cf->public_url ? cf->public_url : "");
	printf("  quiet     run when CPU busy < %.0f%%, waiting up to %s\n",
	    cf->max_busy * 100, duration_text(a, sizeof(a), cf->max_wait_ms));
	for (size_t i = 0; i < cf->nweights; i++) {
		const struct conf_weights *w = &cf->weights[i];

		printf("weights %s\n  %-9s %s\n  sha256    %s\n", w->name,
		    w->path ? "path" : "url", w->path ? w->path : w->url,
		    w->sha256 ? w->sha256 : "(pinned on first use)");
	}
	for (size_t i = 0; i < cf->nengines; i++) {
		const struct conf_engine *g = &cf->engines[i];

		printf("engine %s\n", g->name);
		printf("  source    %s\n", g->source_spec);
		if (g->asset)
			printf("  asset     %s\n", g->asset);
		printf("  command   %s\n", g->command);
		printf("  mode      %s, parser %s, timeout %s\n",
		    g->mode == MODE_SERVER ? "server (figures are lower "
		    "bounds)" : conf_mode_name(g->mode), parser_text(b, sizeof(b), g),
		    duration_text(a, sizeof(a), g->timeout_ms));
		if (g->max_memory > 0)
			printf("  memory    at most %.1f GiB per run "
			    "(max-memory)\n", (double)g->max_memory /
			    (1 << 30));
		else
			printf("  memory    no cap (max-memory = none)\n");
		printf("  weights   %s\n", g->weights->name);
		lengths_text(a, sizeof(a), g->prompts, g->nprompts);
		lengths_text(b, sizeof(b), g->gen, g->ngen);
		printf("  matrix    prompts %s, gen %s, %d reps (up to %d when "
		    "inconclusive) after %d warm-up, %d thread%s\n", a, b,
		    g->reps, g->max_reps, g->warmup, g->threads,
		    g->threads == 1 ? "" : "s");
		lengths_text(a, sizeof(a), g->fit, g->nfit);
		printf("  analysis  fit over %s, metric %s, threshold %.3g%%, "
		    "max-cv %.3g%%\n", a, conf_metric_name(&g->metric, m,
		    sizeof(m)), g->threshold * 100, g->max_cv * 100);
		if (g->schedule && status_next_watch(g, NULL, now, &next,
		    &e) == 0)
			printf("  schedule  %s, next watch %s\n", g->schedule,
			    ctl_next_text(next, now, when, sizeof(when)));
		else if (g->schedule)
			printf("  schedule  %s\n", g->schedule);
		if (g->canary)
			printf("  canary    %s\n            prompt %s, sha256 %s, "
			    "text %s\n", g->canary, g->canary_prompt,
			    g->canary_prompt_sha256 ? g->canary_prompt_sha256 :
			    "(pinned on first use)", canary_parser_text(b,
			    sizeof(b), g));
		printf("  runner    %s\n", g->runner ? g->runner->name :
		    "local (this machine)");
		if (g->matrix)
			printf("  cell of   %s (bisect and report take the "
			    "matrix's name for all its cells)\n",
			    g->matrix->name);
		ablations_text(cf, g);
		if (g->repo)
			printf("  commits   repo %s, %zu build line%s, "
			    "build-timeout %s, %s, drill-down %s\n", g->repo,
			    g->build.n, g->build.n == 1 ? "" : "s",
			    duration_text(a, sizeof(a), g->build_timeout_ms),
			    g->first_parent ? "first parents" : "all parents",
			    g->drill_down ? "yes" : "no");
		for (size_t k = 0; k < g->build.n; k++)
			printf("  build     %s\n", g->build.v[k]);
	}
	for (size_t i = 0; i < cf->nrunners; i++)
		runner_text(&cf->runners[i]);
	for (size_t i = 0; i < cf->nalerts; i++) {
		static const char *const kinds[] = { "webhook", "command",
		    "email" };
		char shown[512];

		printf("alert %s: %s %s\n", cf->alerts[i].name,
		    kinds[cf->alerts[i].kind], conf_alert_shown(&cf->alerts[i],
		    shown, sizeof(shown)));
	}
	if (cf->yardstick_engine)
		printf("yardstick %s %s, re-checked every %s\n",
		    cf->yardstick_engine, cf->yardstick_version ?
		    cf->yardstick_version : "(latest)",
		    duration_text(a, sizeof(a), cf->yardstick_every_ms));
	return EXIT_OK;
}

int
cmd_versions(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct store_release_list l = { NULL, 0 };
	struct err e = ERR_INIT;
	struct store *s;
	int64_t id;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	if (c->refresh && (rc = cmd_refresh(c)) != EXIT_OK)
		return rc;
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	rc = store_engine_find(s, g->name, &id, &e);
	if (rc == 0)
		rc = store_release_list(s, id, &l, &e);
	if (rc < 0) {
		store_close(s);
		return ctl_failed(&e);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(listing_releases_json(&l));
	else if (l.n == 0)
		printf("no releases of %s known yet; 'bisectctl versions %s "
		    "--refresh' asks its source\n", g->name, g->name);
	else {
		printf("%-20s %-9s %-12s %s\n", "VERSION", "STATE", "SHA256",
		    "NOTE");
		for (size_t i = 0; i < l.n; i++) {
			const struct store_release *r = &l.v[i];

			printf("%-20s %-9s %-12.12s %s\n",
			    ctl_safe(r->version),
			    store_release_state_name(r->state),
			    r->archive_sha256 ? r->archive_sha256 : "-",
			    r->failure ? ctl_safe(r->failure) : "");
		}
	}
	store_release_list_release(&l);
	store_close(s);
	return EXIT_OK;
}
