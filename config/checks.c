/*
 * checks.c: what the configuration is judged on once every key is read:
 * the keys each section needs, the keys that only make sense together,
 * references between sections resolved, and the [bisectd] limits an
 * engine inherits (see conf_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_int.h"

static void
check_runner(struct conf_loader *ld, struct conf_runner *r)
{
	static const char *const slurm_only[] = { "partition", "account",
	    "gres", "constraint", "exclusive", "time-limit", "spool" };
	char key[320];

	snprintf(key, sizeof(key), "runner.%s", r->name);
	r->line = linemap_section(ld, key);
	if ((int)r->kind == -1)
		return;		/* said already; its other keys are moot */
	if (r->kind == RUNNER_SLURM) {
		if (r->spool == NULL)
			ld_problem(ld, r->line,
			    "runner.%s.spool: missing (a slurm "
			    "runner needs a folder the daemon and the nodes "
			    "both reach)",
			    r->name);
		if (r->max_jobs < 0)
			r->max_jobs = 4;
		return;
	}
	for (size_t i = 0; i < sizeof(slurm_only) / sizeof(*slurm_only);
	    i++) {
		int line;

		snprintf(key, sizeof(key), "runner.%s.%s", r->name,
		    slurm_only[i]);
		if ((line = linemap_find(ld, key, 0)) > 0)
			ld_problem(ld, line, "%s: only kind = slurm takes it",
			    key);
	}
	snprintf(key, sizeof(key), "runner.%s.max-jobs", r->name);
	if (r->max_jobs > 1)
		ld_problem(ld, linemap_find(ld, key, 0),
		    "%s: a local runner runs "
		    "one benchmark at a time, got %d",
		    key, r->max_jobs);
	r->max_jobs = 1;
}


static int
contains(const int *v, size_t n, int x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The line of the engine's key, or of its section when the key is not
 * in the file (a default). */
static int
engine_line(const struct conf_loader *ld, const struct conf_engine *g,
    const char *key, int section_line)
{
	char name[320];
	int line;

	/* A matrix's cell: its [engine] section's line. */
	snprintf(name, sizeof(name), "engine.%s.%s", g->matrix ?
	    g->matrix->name : g->name, key);
	line = linemap_find(ld, name, 0);
	return line ? line : section_line;
}

/*
 * Serve mode's profile: a rate or a concurrency, requests or a duration,
 * outputs of two tokens or more (a time per output token needs a second
 * token).  Without a metric of its own a serve engine bisects on
 * ttft-p90; a fit metric means nothing there.  Load keys on another
 * mode are refused: they would be silently ignored.
 */
static void
check_load(struct conf_loader *ld, struct conf_engine *g, int line)
{
	struct conf_load *l = &g->load;
	const char *mkey = engine_line(ld, g, "metric", 0) ? "metric" : NULL;

	if (g->mode != MODE_SERVE) {
		static const char *const keys[] = { "load-rate",
		    "load-concurrency", "load-requests", "load-duration",
		    "slo-ttft", "slo-tpot", NULL };

		for (size_t i = 0; keys[i]; i++)
			if (engine_line(ld, g, keys[i], 0))
				ld_problem(ld, engine_line(ld, g, keys[i], 0),
				    "engine.%s.%s: only mode = serve takes a "
				    "load profile", g->name, keys[i]);
		return;
	}
	if (l->rate > 0 && l->concurrency > 0)
		ld_problem(ld, engine_line(ld, g, "load-concurrency", line),
		    "engine.%s.load-concurrency: not with load-rate (a load "
		    "is paced by one of the two)", g->name);
	else if (l->rate == 0 && l->concurrency == 0)
		ld_problem(ld, line, "engine.%s.load-rate: missing (mode = "
		    "serve needs load-rate or load-concurrency)", g->name);
	else if (l->concurrency > 0)
		l->arrival = ARRIVAL_CONCURRENCY;
	if (l->requests > 0 && l->duration_ms > 0)
		ld_problem(ld, engine_line(ld, g, "load-duration", line),
		    "engine.%s.load-duration: not with load-requests (a run "
		    "ends after one of the two)", g->name);
	else if (l->requests == 0 && l->duration_ms == 0)
		l->requests = 100;
	for (size_t i = 0; i < l->nprompt; i++)
		if (l->prompt[i] == 0)
			ld_problem(ld, engine_line(ld, g, "load-prompt", line),
			    "engine.%s.load-prompt: a prompt length must be "
			    "positive", g->name);
	for (size_t i = 0; i < l->noutput; i++)
		if (l->output[i] < 2)
			ld_problem(ld, engine_line(ld, g, "load-output", line),
			    "engine.%s.load-output: expected 2 tokens or more "
			    "(the time per output token is timed from the "
			    "first to the last), got %d", g->name,
			    l->output[i]);
	if (mkey == NULL)
		g->metric = (struct conf_metric){ METRIC_SERVE,
		    FIG_TTFT_P90 };
	else if (g->metric.kind != METRIC_SERVE)
		ld_problem(ld, engine_line(ld, g, "metric", line),
		    "engine.%s.metric: expected a serve figure such as "
		    "ttft-p90 or tpot-p50 in mode = serve", g->name);
}

/* Engine g's key section names a [section "name"] the file lacks. */
static void
no_section(struct conf_loader *ld, const struct conf_engine *g,
    const char *section, const char *name)
{
	char key[320];

	snprintf(key, sizeof(key), "engine.%s.%s", g->name, section);
	ld_problem(ld, linemap_find(ld, key, 0), "%s: no [%s \"%s\"] section",
	    key, section, name);
}

/* A cell of matrix m, on runner r (NULL: this machine) with weights w. */
static void
add_cell(struct conf_loader *ld, struct conf_engine *out,
    const struct conf_engine *m, const char *r, const char *w)
{
	char name[512];

	*out = *m;
	snprintf(name, sizeof(name), "%s%s%s%s%s", m->name,
	    m->matrix_runners.n > 1 ? "/" : "",
	    m->matrix_runners.n > 1 ? r : "",
	    m->matrix_weights.n > 1 ? "/" : "",
	    m->matrix_weights.n > 1 ? w : "");
	out->name = conf_xstrdup(name);
	out->matrix = m;
	out->runner_name = r ? conf_xstrdup(r) : NULL;
	out->runner = r ? conf_runner_find(ld->c, r) : NULL;
	out->weights_name = conf_xstrdup(w);
	out->weights = conf_weights_find(ld->c, w);
	memset(&out->matrix_runners, 0, sizeof(out->matrix_runners));
	memset(&out->matrix_weights, 0, sizeof(out->matrix_weights));
	/* Its own: its runner's env joins it. */
	memset(&out->env, 0, sizeof(out->env));
	if (strv_extend(&out->env, &m->env) < 0)
		abort();
}

/*
 * The runner's env joins the engine's (a cell's own copy): every run
 * on it, its definition and its canary get it.  A name both set is
 * refused: neither would be sure to win.
 */
static void
runner_env(struct conf_loader *ld, struct conf_engine *g)
{
	const struct strv *re = &g->runner->env;
	const char *sec = g->matrix ? g->matrix->name : g->name;

	for (size_t i = 0; i < re->n; i++) {
		size_t n = strcspn(re->v[i], "=");

		for (size_t j = 0; j < g->env.n; j++)
			if (strncmp(g->env.v[j], re->v[i], n + 1) == 0) {
				ld_problem(ld, engine_line(ld, g, "env",
				    g->line), "engine.%s.env: %.*s is set by "
				    "[runner \"%s\"] too; set it in one of them",
				    sec, (int)n, re->v[i], g->runner->name);
				return;
			}
	}
	if (strv_extend(&g->env, re) < 0)
		abort();
}

/*
 * Each engine whose runner or weights list several names becomes its
 * cells, one engine per runner and weights; the matrix itself moves to
 * c->matrices, which owns what they share.  Nothing to do when a list
 * could not be read (said already).
 */
static void
expand_matrices(struct conf_loader *ld)
{
	struct conf *c = ld->c;
	struct conf_engine *all, *m;
	size_t n = 0, nm = 0, k = 0, km = 0;

	for (size_t i = 0; i < c->nengines; i++) {
		const struct conf_engine *g = &c->engines[i];
		size_t cells = (g->matrix_runners.n ? g->matrix_runners.n : 1) *
		    (g->matrix_weights.n ? g->matrix_weights.n : 1);

		if (g->weights == NULL || (g->runner_name && g->runner == NULL))
			return;
		n += cells;
		nm += cells > 1;
	}
	if (nm == 0)
		return;
	if ((all = calloc(n, sizeof(*all))) == NULL ||
	    (m = calloc(nm, sizeof(*m))) == NULL)
		abort();
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];
		size_t nr = g->matrix_runners.n ? g->matrix_runners.n : 1;
		size_t nw = g->matrix_weights.n ? g->matrix_weights.n : 1;

		if (nr * nw == 1) {
			all[k++] = *g;
			continue;
		}
		m[km] = *g;
		for (size_t r = 0; r < nr; r++)
			for (size_t w = 0; w < nw; w++)
				add_cell(ld, &all[k++], &m[km],
				    g->matrix_runners.n ?
				    g->matrix_runners.v[r] : NULL,
				    g->matrix_weights.n ?
				    g->matrix_weights.v[w] : g->weights->name);
		km++;
	}
	free(c->engines);
	c->engines = all;
	c->nengines = n;
	c->matrices = m;
	c->nmatrices = nm;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(all[i].name, all[j].name) == 0)
				ld_problem(ld, all[i].line, "engine.%s: the "
				    "name of a matrix's cell and of an "
				    "[engine] section", all[i].name);
}

/*
 * An engine's runner or weights, one name or a matrix's list of them:
 * each a section of its kind, none twice.  Returns 0 with list holding
 * the names (one for no matrix), or -1 (said).
 */
static int
matrix_list(struct conf_loader *ld, struct conf_engine *g,
    const char *section, const char *value, struct strv *list)
{
	char key[320];
	int line;

	snprintf(key, sizeof(key), "engine.%s.%s", g->name, section);
	line = linemap_find(ld, key, 0);
	strv_clear(list);
	if (strv_split(list, value, ',') < 0 || list->n == 0) {
		ld_problem(ld, line, "%s: expected NAME or NAME, NAME, ..., "
		    "got '%s'", key, value);
		strv_clear(list);
		return -1;
	}
	for (size_t i = 0; i < list->n; i++) {
		const char *w = list->v[i];

		for (size_t j = 0; j < i; j++)
			if (strcmp(list->v[j], w) == 0) {
				ld_problem(ld, line, "%s: '%s' listed twice",
				    key, w);
				return -1;
			}
		if (i > 0 && (strcmp(section, "runner") == 0 ?
		    conf_runner_find(ld->c, w) == NULL :
		    conf_weights_find(ld->c, w) == NULL)) {
			no_section(ld, g, section, w);
			return -1;
		}
	}
	return 0;
}

static void
check_engine(struct conf_loader *ld, struct conf_engine *g)
{
	char prefix[300];
	int line, fit_line;

	snprintf(prefix, sizeof(prefix), "engine.%s", g->name);
	line = linemap_section(ld, prefix);
	if (g->source_spec == NULL)
		ld_problem(ld, line, "engine.%s.source: missing (expected "
		    "github:OWNER/REPO, url:TEMPLATE, git:PATH-OR-URL or "
		    "dir:PATH)", g->name);
	else if ((g->source == SOURCE_GITHUB || g->source == SOURCE_DIR) &&
	    g->asset == NULL)
		ld_problem(ld, line,
		    "engine.%s.asset: missing (a %s: source needs "
		    "the archive's name pattern with {version})",
		    g->name, conf_source_name(g->source));
	if (g->asset && strstr(g->asset, "{version}") == NULL &&
	    !(g->source == SOURCE_GIT && strstr(g->asset, "{tag}"))) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.asset", g->name);
		ld_problem(ld, linemap_find(ld, key, 0),
		    "%s: expected a pattern "
		    "containing {version}%s, got '%s'",
		    key, g->source == SOURCE_GIT ? " or {tag}" : "", g->asset);
	}
	if (g->source_spec && g->source == SOURCE_URL && g->versions.n == 0)
		ld_problem(ld, line,
		    "engine.%s.versions: missing (a url: source "
		    "needs the list of versions)",
		    g->name);
	if (g->source_spec && g->source != SOURCE_URL && g->versions.n > 0) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.versions", g->name);
		ld_problem(ld, linemap_find(ld, key, 0),
		    "%s: only url: sources "
		    "take a list of versions",
		    key);
	}
	if (g->command == NULL)
		ld_problem(ld, line, "engine.%s.command: missing (the bench "
		    "command, e.g. {bin}/bin/llama-bench -m {weights} -p "
		    "{prompt} -n {gen} -o json)", g->name);
	else if (strstr(g->command, "{bin}") == NULL)
		ld_problem(ld, engine_line(ld, g, "command", line), "engine.%s."
		    "command: expected {bin}, the unpacked release, in the "
		    "command (without it every release runs the same binary), "
		    "got '%s'", g->name, g->command);
	if (g->mode != MODE_BENCH && g->url == NULL)
		ld_problem(ld, line,
		    "engine.%s.url: missing (mode = %s needs "
		    "the completions URL)",
		    g->name, g->mode == MODE_SERVE ? "serve" : "server");
	check_load(ld, g, line);
	if (g->weights_name == NULL) {
		if (ld->c->nweights == 1)
			g->weights = &ld->c->weights[0];
		else
			ld_problem(ld, line,
			    "engine.%s.weights: missing (expected "
			    "the name of a [weights] section%s)",
			    g->name,
			    ld->c->nweights == 0 ? "; there is none" : "");
	} else if (matrix_list(ld, g, "weights", g->weights_name,
	    &g->matrix_weights) == 0 && (g->weights =
	    conf_weights_find(ld->c, g->matrix_weights.v[0])) == NULL)
		no_section(ld, g, "weights", g->matrix_weights.v[0]);
	if (g->runner_name && matrix_list(ld, g, "runner", g->runner_name,
	    &g->matrix_runners) == 0 && (g->runner = conf_runner_find(ld->c,
	    g->matrix_runners.v[0])) == NULL)
		no_section(ld, g, "runner", g->matrix_runners.v[0]);
	if (g->nfit == 0) {
		/* The two largest prompt lengths. */
		int sorted[CONF_MAX_LENGTHS];

		memcpy(sorted, g->prompts, g->nprompts * sizeof(int));
		qsort(sorted, g->nprompts, sizeof(int), cmp_int);
		for (size_t i = g->nprompts >= 2 ? g->nprompts - 2 : 0;
		    i < g->nprompts; i++)
			g->fit[g->nfit++] = sorted[i];
	}
	if (g->repo == NULL && g->source_spec && g->source == SOURCE_GIT &&
	    g->source_arg)
		g->repo = conf_xstrdup(g->source_arg);
	if (g->build.n > 0 && g->repo == NULL) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.build", g->name);
		ld_problem(ld, linemap_find(ld, key, 0),
		    "engine.%s.repo: missing "
		    "(build needs the engine's git repository; a git: source "
		    "gives it)",
		    g->name);
	}
	if (g->drill_down && (g->repo == NULL || g->build.n == 0)) {
		char key[320];

		snprintf(key, sizeof(key), "engine.%s.drill-down", g->name);
		ld_problem(ld, linemap_find(ld, key, 0), "%s: needs %s (the "
		    "commits between two tags are built from the repository)",
		    key, g->repo == NULL ? "repo and build" : "build");
	}
	if (g->max_reps < g->reps)
		ld_problem(ld, engine_line(ld, g, "max-reps", line),
		    "engine.%s.max-reps: %d is fewer than reps "
		    "(%d)", g->name, g->max_reps, g->reps);
	/* Without a fit key, the fit is the prompts' two largest: a
	 * problem with it is the prompts'. */
	fit_line = engine_line(ld, g, "fit", engine_line(ld, g, "prompts",
	    line));
	if (g->nfit < 2)
		ld_problem(ld, fit_line,
		    "engine.%s.fit: the fit needs two or more "
		    "prompt lengths",
		    g->name);
	for (size_t i = 0; i < g->nfit; i++)
		if (!contains(g->prompts, g->nprompts, g->fit[i]))
			ld_problem(ld, fit_line,
			    "engine.%s.fit: %d is not one of "
			    "the prompt lengths",
			    g->name, g->fit[i]);
	for (size_t i = 0; i < g->nprompts; i++)
		if (g->prompts[i] == 0)
			ld_problem(ld, engine_line(ld, g, "prompts", line),
			    "engine.%s.prompts: a prefill length must be "
			    "positive", g->name);
	if (g->canary && g->canary_prompt == NULL)
		ld_problem(ld, line,
		    "engine.%s.canary-prompt: missing (a canary "
		    "generates from a prompt file, given to it as {content} "
		    "and on stdin)",
		    g->name);
	if (g->canary == NULL && (g->canary_prompt ||
	    g->canary_prompt_sha256 || g->canary_parser_arg))
		ld_problem(ld, line, "engine.%s.canary: missing (canary-prompt "
		    "and canary-parser describe a canary command)", g->name);
	if (g->metric.kind == METRIC_SERVE && g->mode != MODE_SERVE)
		ld_problem(ld, engine_line(ld, g, "metric", line), "engine.%s."
		    "metric: %s is a serve figure (mode = serve)", g->name,
		    conf_serve_figure_name(g->metric.n));
	if (g->metric.kind == METRIC_PP &&
	    !contains(g->prompts, g->nprompts, g->metric.n))
		ld_problem(ld, engine_line(ld, g, "metric", line), "engine.%s."
		    "metric: pp%d needs %d among the prompt lengths", g->name,
		    g->metric.n, g->metric.n);
	if (g->metric.kind == METRIC_TG && !contains(g->gen, g->ngen,
	    g->metric.n))
		ld_problem(ld, engine_line(ld, g, "metric", line), "engine.%s."
		    "metric: tg%d needs %d among the gen lengths", g->name,
		    g->metric.n, g->metric.n);
}

/* Each switch names a known engine and turns something on; each engine
 * with switches has exactly one control. */
/* Each [compare]: two engines or more, each configured, none twice (the
 * check knows an entry by its engine). */
static void
check_compares(struct conf_loader *ld)
{
	struct conf *c = ld->c;

	for (size_t i = 0; i < c->ncompares; i++) {
		const struct conf_compare *k = &c->compares[i];
		char key[320];
		int line;

		snprintf(key, sizeof(key), "compare.%s.engines", k->name);
		line = linemap_find(ld, key, 0);
		if (k->engines_bad)
			continue;
		if (k->engines.n < 2 || k->engines.n > CONF_COMPARE_MAX) {
			ld_problem(ld, line ? line : k->line, "%s: expected "
			    "2 to %d engines, got %zu", key, CONF_COMPARE_MAX,
			    k->engines.n);
			continue;
		}
		for (size_t j = 0; j < k->engines.n; j++) {
			const char *w = k->engines.v[j];
			size_t len = strcspn(w, "@");
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)len, w);
			if (conf_engine(c, name) == NULL)
				ld_problem(ld, line, "%s: no [engine \"%s\"] "
				    "section", key, name);
			for (size_t m = 0; m < j; m++)
				if (strncmp(k->engines.v[m], name, len) == 0 &&
				    strcspn(k->engines.v[m], "@") == len)
					ld_problem(ld, line, "%s: engine '%s' "
					    "named twice (one release an "
					    "engine)", key, name);
		}
	}
}

static void
check_ablations(struct conf_loader *ld)
{
	struct conf *c = ld->c;

	for (size_t i = 0; i < c->nablations; i++) {
		struct conf_ablation *a = &c->ablations[i];
		char key[320];

		if (a->engine_name == NULL)
			ld_problem(ld, a->line,
			    "ablation.%s.engine: missing (the "
			    "engine whose component the switch turns off)",
			    a->name);
		else if ((a->engine = conf_engine(c, a->engine_name)) ==
		    NULL) {
			snprintf(key, sizeof(key), "ablation.%s.engine",
			    a->name);
			ld_problem(ld, linemap_find(ld, key, 0),
			    "%s: no [engine "
			    "\"%s\"] section",
			    key, a->engine_name);
		}
		if (a->env.n == 0 && a->args.n == 0)
			ld_problem(ld, a->line, "ablation.%s: expected env "
			    "(NAME=VALUE) or args, what turns the component "
			    "off", a->name);
		snprintf(key, sizeof(key), "ablation.%s.control-min", a->name);
		if (!a->control && a->control_min >= 0)
			ld_problem(ld, linemap_find(ld, key, 0), "%s: only the "
			    "control switch (control = yes) takes a "
			    "control-min", key);
		if (a->control_min < 0)
			a->control_min = CONF_CONTROL_MIN;
	}
	for (size_t i = 0; i < c->nablations; i++) {
		const struct conf_ablation *a = &c->ablations[i], *first = NULL;
		size_t k, controls = 0;

		if (a->engine == NULL)
			continue;
		for (k = 0; k < i; k++)
			if (c->ablations[k].engine == a->engine)
				break;
		if (k < i)
			continue;	/* the engine was checked already */
		for (k = i; k < c->nablations; k++) {
			const struct conf_ablation *b = &c->ablations[k];
			char key[320];

			if (b->engine != a->engine || !b->control)
				continue;
			if (controls++ == 0) {
				first = b;
				continue;
			}
			snprintf(key, sizeof(key), "ablation.%s.control",
			    b->name);
			ld_problem(ld, linemap_find(ld, key, 0),
			    "%s: engine %s "
			    "has its control already ([ablation \"%s\"]); "
			    "exactly one switch per engine is the control",
			    key, a->engine->name, first->name);
		}
		if (controls == 0)
			ld_problem(ld, a->line,
			    "ablation.%s: engine %s has no "
			    "control: mark one switch of a component known to "
			    "be heavy with control = yes, so that a switch "
			    "that "
			    "does nothing is not read as a component that "
			    "costs "
			    "nothing",
			    a->name, a->engine->name);
	}
}

void
conf_check_all(struct conf_loader *ld)
{
	struct conf *c = ld->c;

	for (size_t i = 0; i < c->nweights; i++) {
		struct conf_weights *w = &c->weights[i];

		if ((w->path == NULL) == (w->url == NULL))
			ld_problem(ld, w->line,
			    "weights.%s: expected exactly one "
			    "of path or url",
			    w->name);
		if (w->url && w->sha256 == NULL)
			ld_problem(ld, w->line,
			    "weights.%s.sha256: missing (weights "
			    "fetched by url must be pinned by hash)",
			    w->name);
	}
	for (size_t i = 0; i < c->nrunners; i++)
		check_runner(ld, &c->runners[i]);
	if (c->unpack_max == 0)
		c->unpack_max = c->cache_max;
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];

		if (g->unpack_max == 0)
			g->unpack_max = c->unpack_max;
		if (g->download_deadline_ms <= 0)
			g->download_deadline_ms = c->download_deadline_ms;
		check_engine(ld, g);
	}
	expand_matrices(ld);
	for (size_t i = 0; i < c->nengines; i++) {
		struct conf_engine *g = &c->engines[i];

		if (g->runner && g->runner->env.n > 0)
			runner_env(ld, g);
		/* Ahead of a bisect only what comes over a network to this
		 * machine: a dir: archive is here, a git: one is built, and
		 * a Slurm node fetches its own. */
		if (g->prefetch < 0)
			g->prefetch = (g->source == SOURCE_GITHUB ||
			    g->source == SOURCE_URL) && !(g->runner &&
			    g->runner->kind == RUNNER_SLURM) ? 2 : 0;
	}
	for (size_t i = 0; i < c->nalerts; i++) {
		struct conf_alert *a = &c->alerts[i];

		if ((int)a->kind == -1)
			ld_problem(ld, a->line,
			    "alert.%s: expected one of webhook, "
			    "command, email, github-issue or github-comment",
			    a->name);
		else if (a->kind == ALERT_EMAIL && a->smtp == NULL)
			ld_problem(ld, a->line, "alert.%s.smtp: missing (email "
			    "alerts need an smtp:// URL)", a->name);
		else if (CONF_ALERT_IS_GITHUB(a->kind) && a->token_env == NULL)
			ld_problem(ld, a->line, "alert.%s.token-env: missing "
			    "(GitHub takes an issue or a comment only with a "
			    "token, read from the environment, never from "
			    "this file)",
			    a->name);
		else if (CONF_ALERT_IS_GITHUB(a->kind) && !a->allow_http &&
		    strncmp(a->api, "https://", 8) != 0)
			ld_problem(ld, a->line, "alert.%s.api: plain http "
			    "would send the token in clear (allow-http = yes "
			    "for a loopback test server)", a->name);
	}
	if (c->yardstick_engine && conf_engine(c, c->yardstick_engine) == NULL)
		ld_problem(ld, linemap_find(ld, "yardstick.engine", 0),
		    "yardstick.engine: no [engine \"%s\"] section",
		    c->yardstick_engine);
	check_ablations(ld);
	check_compares(ld);
	if (c->yardstick_version && c->yardstick_engine == NULL)
		ld_problem(ld, linemap_find(ld, "yardstick.version", 0),
		    "yardstick.engine: missing (a yardstick names its engine)");
}
