/*
 * ablate_print.c: an ablation's report for a terminal (text), an issue
 * tracker (markdown), a spreadsheet (csv) or a script (json); see
 * ablate_print.h.  A switch that removes nothing is never shown as a
 * component that costs nothing: with an inert control no switch has a
 * rank or an effect, only its numbers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ablate_print.h"
#include "html.h"
#include "text_escape.h"

static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static double
real(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static double
ci(const json_t *o, const char *key, size_t i)
{
	const json_t *v = json_array_get(json_object_get(o, key), i);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "1.23 [1.10, 1.36]", or "-" (or why) when there is no figure. */
static const char *
figure(char *buf, size_t len, const json_t *o, const char *key,
    double scale, const char *unit)
{
	char ci_key[64];
	double v = real(o, key);

	snprintf(ci_key, sizeof(ci_key), "%s_ci", key);
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isnan(ci(o, ci_key, 0)))
		snprintf(buf, len, "%.3g%s", v * scale, unit);
	else
		snprintf(buf, len, "%.3g%s [%.3g, %.3g]", v * scale, unit,
		    ci(o, ci_key, 0) * scale, ci(o, ci_key, 1) * scale);
	return buf;
}

/* The rank column: the rank, or what the switch was judged to do. */
static const char *
standing(char *buf, size_t len, const json_t *sw)
{
	const char *effect = str(sw, "effect");

	if (json_is_integer(json_object_get(sw, "rank")))
		/* Ranked by the time it moves: say when it adds it. */
		snprintf(buf, len, "%lld%s", (long long)json_integer_value(
		    json_object_get(sw, "rank")), strcmp(effect, "adds") == 0 ?
		    " adds" : "");
	else if (strcmp(effect, "none") == 0)
		snprintf(buf, len, "no measurable effect (would have seen "
		    "%.2g%%)", 100 * real(sw, "detectable_share"));
	else if (strcmp(effect, "unmeasured") == 0)
		snprintf(buf, len, "not measured: %lld runs failed, the last: "
		    "%s", (long long)json_integer_value(json_object_get(sw,
		    "failed_runs")), *str(sw, "failure") ? str(sw, "failure") :
		    "no reason stored");
	else
		snprintf(buf, len, "-");
	return buf;
}

static void
print_text(const json_t *rep, FILE *out, int md)
{
	const json_t *base = json_object_get(rep, "baseline"), *sw;
	char a[96], b[96], c[96], d[96], rank[768], key[16];
	size_t i;

	fprintf(out, md ? "## Ablation of %s %s\n\n" : "ablation of %s %s\n",
	    str(rep, "engine"), str(rep, "version"));
	fprintf(out, "%sarchive sha256 %s, weights %s (%.12s), fit at",
	    md ? "" : "  ", str(rep, "sha256"), str(json_object_get(rep,
	    "weights"), "name"), str(json_object_get(rep, "weights"),
	    "sha256"));
	for (i = 0; i < json_array_size(json_object_get(rep, "fit")); i++)
		fprintf(out, "%s%lld", i ? "," : " ", (long long)
		    json_integer_value(json_array_get(json_object_get(rep,
		    "fit"), i)));
	fprintf(out, " tokens\n");
	snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(
	    json_object_get(rep, "tokens")));
	fprintf(out, "%sbaseline: %.4g ms at %s tokens (%lld runs), per "
	    "token %s ms, fixed %s ms\n", md ? "\n" : "  ",
	    real(json_object_get(base, key), "ms"), key,
	    (long long)json_integer_value(json_object_get(json_object_get(
	    base, key), "runs")), figure(a, sizeof(a), base,
	    "per_token_ms", 1, ""), figure(b, sizeof(b), base, "fixed_ms", 1,
	    ""));
	fprintf(out, md ? "\n**Verdict: %s.** %s\n\n" : "verdict: %s: %s\n\n",
	    str(rep, "status"), str(rep, "reason"));
	if (md)
		fprintf(out, "| rank | switch | removed at %s tokens (ms) | "
		    "share of the runtime | per token (ms) | fixed (ms) | "
		    "runs |\n|---|---|---|---|---|---|---|\n", key);
	else
		fprintf(out, "%-6s %-20s %-28s %-26s %-30s %-26s %s\n",
		    "RANK", "SWITCH", "REMOVED ms", "SHARE %", "PER TOKEN ms",
		    "FIXED ms", "RUNS");
	json_array_foreach(json_object_get(rep, "switches"), i, sw) {
		char name[80];

		snprintf(name, sizeof(name), "%s%s", str(sw, "name"),
		    json_is_true(json_object_get(sw, "control")) ?
		    " (control)" : "");
		figure(a, sizeof(a), sw, "runtime_removed_ms", 1, "");
		figure(b, sizeof(b), sw, "runtime_removed_share", 100, "");
		figure(c, sizeof(c), sw, "per_token_removed_ms", 1, "");
		if (json_is_string(json_object_get(sw, "fixed_not_estimable")))
			snprintf(d, sizeof(d), "not estimable");
		else
			figure(d, sizeof(d), sw, "fixed_removed_ms", 1, "");
		standing(rank, sizeof(rank), sw);
		if (md)
			fprintf(out, "| %s | %s | %s | %s | %s | %s | %lld |\n",
			    rank, name, a, b, c, d, (long long)
			    json_integer_value(json_object_get(sw, "runs")));
		else if (strlen(rank) > 6)
			fprintf(out, "%-6s %-20s %-28s %-26s %-30s %-26s "
			    "%lld\n%6s %s\n", "-", name, a, b, c, d,
			    (long long)json_integer_value(json_object_get(sw,
			    "runs")), "", rank);
		else
			fprintf(out, "%-6s %-20s %-28s %-26s %-30s %-26s "
			    "%lld\n", rank, name, a, b, c, d, (long long)
			    json_integer_value(json_object_get(sw, "runs")));
	}
}

static void
print_csv(const json_t *rep, FILE *out)
{
	static const char *const figures[] = { "runtime_removed_ms",
	    "runtime_removed_share", "per_token_removed_ms",
	    "fixed_removed_ms" };
	const json_t *sw;
	size_t i;

	fprintf(out, "engine,version,status,switch,control,effect,rank,runs,"
	    "removed_ms,removed_lo,removed_hi,share,share_lo,share_hi,"
	    "per_token_ms,per_token_lo,per_token_hi,fixed_ms,fixed_lo,"
	    "fixed_hi,detectable_share\n");
	json_array_foreach(json_object_get(rep, "switches"), i, sw) {
		const json_t *rank = json_object_get(sw, "rank");

		text_csv_field(out, str(rep, "engine"));
		fputc(',', out);
		text_csv_field(out, str(rep, "version"));
		fprintf(out, ",%s,", str(rep, "status"));
		text_csv_field(out, str(sw, "name"));
		fprintf(out, ",%d,%s,", json_is_true(json_object_get(sw,
		    "control")), str(sw, "effect"));
		if (json_is_integer(rank))
			fprintf(out, "%lld", (long long)json_integer_value(rank));
		fprintf(out, ",%lld", (long long)json_integer_value(
		    json_object_get(sw, "runs")));
		for (size_t k = 0; k < 4; k++) {
			char key[64];

			snprintf(key, sizeof(key), "%s_ci", figures[k]);
			text_csv_number(out, real(sw, figures[k]));
			text_csv_number(out, ci(sw, key, 0));
			text_csv_number(out, ci(sw, key, 1));
		}
		text_csv_number(out, real(sw, "detectable_share"));
		fputc('\n', out);
	}
}

void
ablate_print(const json_t *rep, enum report_format f, FILE *out)
{
	json_t *safe, *md;

	if (f == REPORT_JSON) {
		report_print(rep, f, out);	/* the JSON as it is */
		return;
	}
	if (f == REPORT_HTML) {
		(void)ablate_html(rep, out);
		return;
	}
	/* Versions come from upstream: their control characters are
	 * written out, not printed. */
	if ((safe = text_escape_json(rep)) == NULL)
		return;
	if (f == REPORT_CSV)
		print_csv(safe, out);
	else if (f == REPORT_TEXT)
		print_text(safe, out, 0);
	else if ((md = text_markdown_json(safe)) != NULL) {
		print_text(md, out, 1);
		json_decref(md);
	}
	json_decref(safe);
}
