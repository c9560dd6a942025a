/*
 * matrix.c: a range's verdict on each cell of a matrix, side by side.
 * Each cell is its own engine with its own runs, series and verdict; no
 * comparison ever mixes two cells.  This file only reads their reports
 * and says, per cell, what moved and how sure it is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "build.h"
#include "common/err.h"
#include "config/conf.h"
#include "fields.h"
#include "matrix.h"
#include "page.h"
#include "text_escape.h"

/* The exit codes of a report (search/verdict.h, bisectctl(1)). */
enum { EXIT_CODE_FAIL = 1, EXIT_CODE_REGRESSION = 3, EXIT_CODE_UNKNOWN = 4 };

int
report_matrix_build(const struct conf *c, const struct conf_engine *m,
    struct store *s, const char *spec, const struct report_opts *o,
    struct report_matrix *out, int *exit_code, struct err *e)
{
	int regressed = 0, failed = 0, unknown = 0;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->name = m->name;
	out->spec = spec;
	for (size_t i = 0; i < c->nengines; i++)
		n += c->engines[i].matrix == m;
	if ((out->cells = calloc(n, sizeof(*out->cells))) == NULL)
		return err_set(e, "out of memory");
	out->ncells = n;
	for (size_t i = 0, k = 0; i < c->nengines; i++) {
		const struct conf_engine *g = &c->engines[i];
		struct report_matrix_cell *x = &out->cells[k];
		struct report_opts co = *o;
		struct err ce = ERR_INIT;

		if (g->matrix != m)
			continue;
		k++;
		x->name = g->name;
		x->runner = g->runner ? g->runner->name : "";
		x->weights = g->weights->name;
		co.sink = NULL;
		if (report_build(c, g, s, spec, &co, &x->json, &x->code,
		    &ce) < 0) {
			if ((x->error = strdup(ce.msg)) == NULL)
				return err_set(e, "out of memory");
			x->code = EXIT_CODE_FAIL;
			failed = 1;
			continue;
		}
		if (report_read(x->json, &x->rep) < 0 ||
		    (x->esc = text_escape_json(x->json)) == NULL ||
		    report_read(x->esc, &x->esc_rep) < 0)
			return err_set(e, "out of memory");
		regressed |= x->code == EXIT_CODE_REGRESSION;
		unknown |= x->code == EXIT_CODE_UNKNOWN;
		failed |= x->code == EXIT_CODE_FAIL;
	}
	*exit_code = regressed ? EXIT_CODE_REGRESSION : failed ?
	    EXIT_CODE_FAIL : unknown ? EXIT_CODE_UNKNOWN : 0;
	return 0;
}

void
report_matrix_clear(struct report_matrix *mx)
{
	for (size_t i = 0; i < mx->ncells; i++) {
		report_clear(&mx->cells[i].rep);
		report_clear(&mx->cells[i].esc_rep);
		json_decref(mx->cells[i].json);
		json_decref(mx->cells[i].esc);
		free(mx->cells[i].error);
	}
	free(mx->cells);
	memset(mx, 0, sizeof(*mx));
}

/* What a cell's verdict says, as every rendering of the table and the
 * alerts' words print it. */
struct view {
	char status[32];	/* the verdict's, or "failed" */
	char first_bad[128], last_good[128], kind[32];
	double change, lo, hi;	/* the change that decided it; NAN */
	double power;		/* the smallest slowdown a "no" would
				 * have found; NAN */
	long long runs;		/* per cell of each end; 0: not said */
	char reason[512];	/* an unknown's or a failure's */
	char metric[64];
	double threshold;
	char machine[256];
};

static void
view_of(const struct report_matrix_cell *x, struct view *v, int escape)
{
	const struct report *rp = escape ? &x->esc_rep : &x->rep;
	const struct report_verdict *d = &rp->verdict;
	const struct report_rel *r;

	memset(v, 0, sizeof(*v));
	v->change = v->lo = v->hi = v->power = v->threshold = NAN;
	if (x->json == NULL) {
		snprintf(v->status, sizeof(v->status), "failed");
		snprintf(v->reason, sizeof(v->reason), "%s", x->error);
		return;
	}
	snprintf(v->status, sizeof(v->status), "%s", d->ok ? d->status :
	    "unknown");
	snprintf(v->first_bad, sizeof(v->first_bad), "%s",
	    d->change.first_bad);
	snprintf(v->last_good, sizeof(v->last_good), "%s",
	    d->change.last_good);
	snprintf(v->kind, sizeof(v->kind), "%s", strcmp(d->change.kind,
	    "none") == 0 ? "" : d->change.kind);
	snprintf(v->reason, sizeof(v->reason), "%s", d->reason ?
	    d->reason : "");
	r = d->gradual.ok ? &d->gradual.total : d->inconclusive.ok &&
	    !isfinite(d->change.metric_change.value) ?
	    &d->inconclusive.change : &d->change.metric_change;
	v->change = r->value;
	v->lo = r->lo;
	v->hi = r->hi;
	/* No change point: the searched metric between the ends, as what
	 * else changed has it, with its interval. */
	for (size_t i = 0; i < x->rep.nchanges && !isfinite(v->change); i++) {
		const struct report_change *c = &x->rep.changes[i];

		if (c->searched && strcmp(c->from, x->rep.from) == 0 &&
		    strcmp(c->to, x->rep.to) == 0) {
			v->change = c->change;
			v->lo = c->lo;
			v->hi = c->hi;
		}
	}
	if (!isfinite(v->change))
		v->change = d->endpoints_change;
	v->power = d->detectable_change;
	v->runs = d->runs_per_release;
	snprintf(v->metric, sizeof(v->metric), "%s", x->rep.metric ?
	    x->rep.metric : "");
	v->threshold = x->rep.threshold;
	snprintf(v->machine, sizeof(v->machine), "%s", x->rep.machine.ok &&
	    x->rep.machine.cpu_model ? x->rep.machine.cpu_model : "");
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *
report_matrix_json(const struct report_matrix *mx)
{
	json_t *o = json_object(), *cells = json_array();
	json_t *regressed = json_array(), *unchanged = json_array();

	if (o == NULL || cells == NULL || regressed == NULL ||
	    unchanged == NULL) {
		json_decref(o);
		json_decref(cells);
		json_decref(regressed);
		json_decref(unchanged);
		return NULL;
	}
	json_object_set_new(o, "matrix", json_string(mx->name));
	json_object_set_new(o, "range", json_string(mx->spec));
	for (size_t i = 0; i < mx->ncells; i++) {
		const struct report_matrix_cell *x = &mx->cells[i];
		struct view v;
		json_t *c;

		view_of(x, &v, 0);
		c = json_pack("{s:s, s:s*, s:s, s:s, s:i}", "cell", x->name,
		    "runner", x->runner[0] ? x->runner : NULL, "weights",
		    x->weights, "status", v.status, "exit_code", x->code);
		if (c == NULL)
			continue;
		if (x->json) {
			json_object_set_new(c, "metric", json_string(v.metric));
			json_object_set_new(c, "threshold",
			    num_or_null(v.threshold));
			json_object_set_new(c, "machine", json_string(
			    v.machine));
			json_object_set_new(c, "first_bad", v.first_bad[0] ?
			    json_string(v.first_bad) : json_null());
			json_object_set_new(c, "last_good", v.last_good[0] ?
			    json_string(v.last_good) : json_null());
			json_object_set_new(c, "kind", v.kind[0] ?
			    json_string(v.kind) : json_null());
			json_object_set_new(c, "change", num_or_null(v.change));
			json_object_set_new(c, "change_ci", json_pack("[o,o]",
			    num_or_null(v.lo), num_or_null(v.hi)));
			json_object_set_new(c, "detectable_change",
			    num_or_null(v.power));
			json_object_set_new(c, "runs_per_release",
			    json_integer(v.runs));
		}
		if (v.reason[0])
			json_object_set_new(c, x->json ? "reason" : "error",
			    json_string(v.reason));
		json_array_append_new(cells, c);
		if (strcmp(v.status, "regression") == 0 ||
		    strcmp(v.status, "gradual") == 0)
			json_array_append_new(regressed, json_string(x->name));
		else if (strcmp(v.status, "no-regression") == 0)
			json_array_append_new(unchanged, json_string(x->name));
	}
	json_object_set_new(o, "cells", cells);
	json_object_set_new(o, "regressed", regressed);
	json_object_set_new(o, "unchanged", unchanged);
	return o;
}

/* "+256.0% [+240.1%, +270.0%]", or "-" with no change. */
static const char *
change_text(const struct view *v, char *buf, size_t len)
{
	char ci[64];

	if (!isfinite(v->change))
		return "-";
	snprintf(buf, len, "%+.1f%% %s", 100 * v->change,
	    rep_pct_lohi(v->lo, v->hi, ci, sizeof(ci)));
	return buf;
}

/* The cell's verdict in words: the summary's sentences. */
static void
verdict_words(const struct view *v, char *buf, size_t len)
{
	char ch[96];

	change_text(v, ch, sizeof(ch));
	if (strcmp(v->status, "regression") == 0)
		snprintf(buf, len, "regressed at %s (%s %s)", v->first_bad,
		    v->kind[0] ? v->kind : v->metric, ch);
	else if (strcmp(v->status, "gradual") == 0)
		snprintf(buf, len, "slid (%s %s)", v->metric, ch);
	else if (strcmp(v->status, "no-regression") == 0 &&
	    isfinite(v->power))
		snprintf(buf, len, "no regression (within noise, would have "
		    "seen %.1f%%)", 100 * v->power);
	else if (strcmp(v->status, "no-regression") == 0)
		snprintf(buf, len, "no regression");
	else
		snprintf(buf, len, "%s: %s", v->status, v->reason);
}

const char *
report_matrix_others(const struct report_matrix *mx, const char *self,
    char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < mx->ncells && off < len; i++) {
		const struct report_matrix_cell *x = &mx->cells[i];
		struct view v;
		char words[768];

		if (strcmp(x->name, self) == 0)
			continue;
		view_of(x, &v, 1);
		/* Why is in the table; an alert says what it lacks. */
		if (x->json == NULL)
			snprintf(words, sizeof(words), "not judged over %s yet",
			    mx->spec);
		else
			verdict_words(&v, words, sizeof(words));
		off += (size_t)snprintf(buf + off, len - off, "%s%s: %s",
		    off ? "; " : "", x->name, words);
	}
	return buf;
}

int
report_matrix_verdict(const struct report_matrix *mx, char *buf, size_t len)
{
	size_t off;
	int moved = 0, pass;

	for (size_t i = 0; i < mx->ncells; i++) {
		struct view v;

		view_of(&mx->cells[i], &v, 1);
		if (strcmp(v.status, "no-regression") != 0 &&
		    strcmp(v.status, "regression") != 0 &&
		    strcmp(v.status, "gradual") != 0)
			return 0;
		moved |= strcmp(v.status, "no-regression") != 0;
	}
	if (!moved)
		return 0;
	off = (size_t)snprintf(buf, len, "%s %s:", mx->name, mx->spec);
	/* The cells that moved, then the others. */
	for (pass = 0; pass < 2; pass++) {
		int first = 1;

		for (size_t i = 0; i < mx->ncells && off < len; i++) {
			struct view v;
			char words[768], *w = words;

			view_of(&mx->cells[i], &v, 1);
			if ((strcmp(v.status, "no-regression") == 0) != pass)
				continue;
			verdict_words(&v, words, sizeof(words));
			if (pass == 1 && strncmp(w, "no regression ", 14) == 0)
				w += 14;
			off += (size_t)snprintf(buf + off, len - off, "%s%s %s",
			    pass == 0 ? (first ? " " : "; ") : first ?
			    "; unchanged: " : ", ", mx->cells[i].name, w);
			first = 0;
		}
	}
	return 1;
}

static void
print_text(const struct report_matrix *mx, FILE *out, int md)
{
	const char *sep = md ? " | " : "  ";
	struct view v;
	char ch[96], words[768];
	int said = 0;

	for (size_t i = 0; i < mx->ncells && !said; i++)
		if (mx->cells[i].json) {
			view_of(&mx->cells[i], &v, 1);
			fprintf(out, "%s%s %s: %zu cells, metric %s, threshold "
			    "%.3g%%\n", md ? "### " : "", mx->name, mx->spec,
			    mx->ncells, v.metric, 100 * v.threshold);
			said = 1;
		}
	if (!said)
		fprintf(out, "%s%s %s: %zu cells\n", md ? "### " : "",
		    mx->name, mx->spec, mx->ncells);
	if (md)
		fprintf(out, "\n| cell | runner | weights | verdict | first bad "
		    "| kind | change [95%%] | power | runs |\n|---|---|---|---|"
		    "---|---|---|---|---|\n");
	else
		fprintf(out, "\n%-28s  %-14s  %-14s  %-13s  %-12s  %-9s  "
		    "%-28s  %-6s  %s\n", "CELL", "RUNNER", "WEIGHTS", "VERDICT",
		    "FIRST BAD", "KIND", "CHANGE [95%]", "POWER", "RUNS");
	for (size_t i = 0; i < mx->ncells; i++) {
		const struct report_matrix_cell *x = &mx->cells[i];
		char power[16] = "-", runs[24] = "-";

		view_of(x, &v, 1);
		if (isfinite(v.power))
			snprintf(power, sizeof(power), "%.1f%%", 100 * v.power);
		if (v.runs > 0)
			snprintf(runs, sizeof(runs), "%lld", v.runs);
		if (md)
			fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s "
			    "| %s |\n", x->name, x->runner[0] ? x->runner :
			    "this machine", x->weights, v.status,
			    v.first_bad[0] ? v.first_bad : "-", v.kind[0] ?
			    v.kind : "-", change_text(&v, ch, sizeof(ch)),
			    power, runs);
		else
			fprintf(out, "%-28s%s%-14s%s%-14s%s%-13s%s%-12s%s%-9s"
			    "%s%-28s%s%-6s%s%s\n", x->name, sep, x->runner[0] ?
			    x->runner : "this machine", sep, x->weights, sep,
			    v.status, sep, v.first_bad[0] ? v.first_bad : "-",
			    sep, v.kind[0] ? v.kind : "-", sep,
			    change_text(&v, ch, sizeof(ch)), sep, power, sep,
			    runs);
	}
	fputc('\n', out);
	for (size_t i = 0; i < mx->ncells; i++) {
		view_of(&mx->cells[i], &v, 1);
		verdict_words(&v, words, sizeof(words));
		fprintf(out, "%s%s: %s\n", md ? "- " : "  ",
		    mx->cells[i].name, words);
	}
	fprintf(out, "\neach cell's own report: bisectctl report CELL %s\n",
	    mx->spec);
}

static void
print_csv(const struct report_matrix *mx, FILE *out)
{
	fprintf(out, "cell,runner,weights,verdict,first_bad,last_good,kind,"
	    "change,change_lo,change_hi,detectable_change,runs_per_release,"
	    "reason\n");
	for (size_t i = 0; i < mx->ncells; i++) {
		const struct report_matrix_cell *x = &mx->cells[i];
		struct view v;

		view_of(x, &v, 1);
		{
			const char *f[] = { x->name, x->runner, x->weights,
			    v.status, v.first_bad, v.last_good, v.kind };

			for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
				if (k > 0)
					fputc(',', out);
				text_csv_field(out, f[k]);
			}
		}
		text_csv_number(out, v.change);
		text_csv_number(out, v.lo);
		text_csv_number(out, v.hi);
		text_csv_number(out, v.power);
		if (v.runs > 0)
			fprintf(out, ",%lld,", v.runs);
		else
			fputs(",,", out);
		text_csv_field(out, v.reason);
		fputc('\n', out);
	}
}

/* The index of s in v (n of them), added when new. */
static size_t
index_of(const char **v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i], s) == 0)
			return i;
	v[*n] = s;
	return (*n)++;
}

/* A grid: a row per runner, a column per weights file, each cell its
 * verdict in words, coloured by it. */
static void
print_html(const struct report_matrix *mx, FILE *out)
{
	const char **runners, **weights;
	size_t nr = 0, nw = 0;

	runners = calloc(mx->ncells + 1, sizeof(*runners));
	weights = calloc(mx->ncells + 1, sizeof(*weights));
	if (runners == NULL || weights == NULL) {
		free(runners);
		free(weights);
		return;
	}
	for (size_t i = 0; i < mx->ncells; i++) {
		index_of(runners, &nr, mx->cells[i].runner);
		index_of(weights, &nw, mx->cells[i].weights);
	}
	html_page_open(out);
	html_markup(out, "", mx->name, " ", mx->spec, " across its matrix"
	    "</title>\n<style>", NULL);
	fprintf(out, "%s.grid td.regression,.grid td.gradual{background:"
	    "#fde2e1}.grid td.no-regression{background:#e3f4e1}"
	    ".grid td.unknown,.grid td.failed{background:#f2f2f2}"
	    "</style>\n</head>\n<body>\n", html_page_style);
	html_markup(out, "<h1>", mx->name, " ", mx->spec, "</h1>\n"
	    "<table class=\"grid\">\n<tr><th>runner \\ weights</th>", NULL);
	for (size_t w = 0; w < nw; w++)
		html_markup(out, "<th>", weights[w], "</th>", NULL);
	fputs("</tr>\n", out);
	for (size_t r = 0; r < nr; r++) {
		html_markup(out, "<tr><th>", runners[r][0] ? runners[r] :
		    "this machine", "</th>", NULL);
		for (size_t w = 0; w < nw; w++) {
			const struct report_matrix_cell *x = NULL;
			struct view v;
			char words[768];

			for (size_t i = 0; i < mx->ncells && x == NULL; i++)
				if (strcmp(mx->cells[i].runner, runners[r]) ==
				    0 && strcmp(mx->cells[i].weights,
				    weights[w]) == 0)
					x = &mx->cells[i];
			if (x == NULL) {
				fputs("<td></td>", out);
				continue;
			}
			view_of(x, &v, 1);
			verdict_words(&v, words, sizeof(words));
			html_markup(out, "<td class=\"", v.status, "\"><b>",
			    x->name, "</b><br/>", words, "</td>", NULL);
		}
		fputs("</tr>\n", out);
	}
	html_markup(out, "</table>\n<p class=\"meta\">Each cell is its own "
	    "series, measured on its own runner with its own weights; no "
	    "comparison mixes two. Each cell's own report: bisectctl report "
	    "CELL ", mx->spec, "</p>\n</body>\n</html>\n", NULL);
	free(runners);
	free(weights);
}

void
report_matrix_print(const struct report_matrix *mx, enum report_format f,
    FILE *out)
{
	json_t *o;

	switch (f) {
	case REPORT_JSON:
		if ((o = report_matrix_json(mx)) != NULL) {
			json_dumpf(o, out, JSON_INDENT(2) | JSON_SORT_KEYS);
			fputc('\n', out);
			json_decref(o);
		}
		break;
	case REPORT_CSV:
		print_csv(mx, out);
		break;
	case REPORT_HTML:
		print_html(mx, out);
		break;
	case REPORT_MARKDOWN:
		print_text(mx, out, 1);
		break;
	default:
		print_text(mx, out, 0);
		break;
	}
}
