/*
 * gpu_lines.c: the report's GPU lines in text, Markdown and HTML (see
 * gpu_lines.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_lines.h"
#include "page.h"
#include "report.h"

/* "good 0.2.2 at 1980 MHz, bad 0.2.3 at 1881 MHz: -5.0%" into buf;
 * NULL when the verdict has no clocks. */
static const char *
clocks_words(const struct report_clocks *c, char *buf, size_t len)
{
	double a = c->good_sm_mhz, b = c->bad_sm_mhz;

	if (!c->ok)
		return NULL;
	snprintf(buf, len, "good %s at %.0f MHz, bad %s at %.0f MHz (median "
	    "SM clock of their runs): %+.1f%%%s", c->good, a, c->bad, b,
	    100 * (b / a - 1), c->differ ? ", more than 1% apart: two "
	    "machines were compared, not confirmed" : "");
	return buf;
}

void
gpu_clocks_text(const struct report_clocks *c, FILE *out, int md)
{
	char buf[512];

	if (clocks_words(c, buf, sizeof(buf)) != NULL)
		fprintf(out, "%s  GPU clocks: %s\n", md ? "\n" : "", buf);
}

void
gpu_clocks_html(const struct report_clocks *c, FILE *out)
{
	char buf[512];

	if (clocks_words(c, buf, sizeof(buf)) == NULL)
		return;
	html_verdict_item(out, "GPU clocks");
	html_esc(out, buf);
	fputs("</dd>\n", out);
}

/* A release's GPU figures in words: "sm 1980 MHz (6 runs), 2 throttled
 * runs left out, mem peak 2.00 GiB, pp512 12.3 J/run 41.6 tok/J (3)". */
static const char *
gpu_words(const struct report_gpu *g, char *buf, size_t len)
{
	size_t at;

	if (isfinite(g->sm_mhz))
		at = (size_t)snprintf(buf, len, "sm %.0f MHz (%lld runs)",
		    g->sm_mhz, g->runs);
	else
		at = (size_t)snprintf(buf, len, "sm - (%lld runs)", g->runs);
	if (at < len && g->throttled_runs > 0)
		at += (size_t)snprintf(buf + at, len - at, ", %lld throttled "
		    "runs left out", g->throttled_runs);
	if (at < len && g->mem_peak_bytes >= 0)
		at += (size_t)snprintf(buf + at, len - at, ", mem peak %.2f "
		    "GiB", (double)g->mem_peak_bytes / (1024.0 * 1024 * 1024));
	for (size_t i = 0; i < g->npp && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, ", pp%s %.1f J/run "
		    "%.1f tok/J (%lld runs)", g->pp[i].tokens,
		    g->pp[i].energy_j, g->pp[i].tokens_per_j, g->pp[i].runs);
	return buf;
}

void
gpu_releases_text(const struct report *rp, FILE *out, int md)
{
	int head = 0;
	char buf[1024];

	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_gpu *g = &rp->releases[i].gpu;

		if (!g->ok)
			continue;
		if (!head++)
			fputs(md ? "\n**GPU** (median SM clock over the "
			    "analysed runs, peak memory above the baseline, "
			    "energy per run)\n\n" : "\nGPU (median SM clock "
			    "over the analysed runs, peak memory above the "
			    "baseline, energy per run):\n", out);
		fprintf(out, "%s%s: %s\n", md ? "- " : "  ",
		    rp->releases[i].version, gpu_words(g, buf, sizeof(buf)));
	}
}

void
gpu_releases_html(const struct report *rp, FILE *out)
{
	int head = 0;

	for (size_t i = 0; i < rp->nreleases; i++) {
		const struct report_gpu *g = &rp->releases[i].gpu;

		if (!g->ok)
			continue;
		if (!head++)
			fputs("<section id=\"gpu\">\n<h2>GPU</h2>\n<p>Over "
			    "each release's analysed runs: the median SM "
			    "clock, the peak memory above the baseline, the "
			    "median energy of a prefill run.</p>\n<table>\n"
			    "<thead><tr>"
			    "<th>release</th><th>SM clock MHz</th><th>runs</th>"
			    "<th>throttled runs left out</th><th>peak memory "
			    "GiB</th><th>energy</th></tr></thead>\n<tbody>\n",
			    out);
		fputs("<tr><td>", out);
		html_esc(out, rp->releases[i].version);
		fprintf(out, isfinite(g->sm_mhz) ? "</td><td>%.0f" :
		    "</td><td>-", g->sm_mhz);
		fprintf(out, "</td><td>%lld</td><td>%lld</td><td>", g->runs,
		    g->throttled_runs);
		if (g->mem_peak_bytes >= 0)
			fprintf(out, "%.2f", (double)g->mem_peak_bytes /
			    (1024.0 * 1024 * 1024));
		else
			fputc('-', out);
		fputs("</td><td>", out);
		for (size_t k = 0; k < g->npp; k++) {
			fputs("pp", out);
			html_esc(out, g->pp[k].tokens);
			fprintf(out, " %.1f J, %.1f tok/J (%lld runs)<br/>",
			    g->pp[k].energy_j, g->pp[k].tokens_per_j,
			    g->pp[k].runs);
		}
		fputs("</td></tr>\n", out);
	}
	if (head)
		fputs("</tbody></table>\n</section>\n", out);
}
