/*
 * serve.c: a serve run's figures from its requests (see serve.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

const double serve_pcts[SERVE_NPCT] = { 0.50, 0.90, 0.99 };

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
serve_quantile(const double *sorted, size_t n, double p)
{
	double h;
	size_t lo;

	if (n == 0)
		return NAN;
	h = p * (double)(n - 1);
	lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

/* The percentiles of x[0..n-1], which it sorts. */
static void
percentiles(double *x, size_t n, double out[SERVE_NPCT])
{
	qsort(x, n, sizeof(*x), cmp_double);
	for (size_t k = 0; k < SERVE_NPCT; k++)
		out[k] = serve_quantile(x, n, serve_pcts[k]);
}

static double
tpot_of(const struct serve_request *r)
{
	return r->out_tokens >= 2 ? (r->e2e_ns - r->ttft_ns) /
	    (r->out_tokens - 1) : NAN;
}

int
serve_figures(const struct serve_request *r, size_t n,
    const double *itl_ns, size_t nitl, const struct serve_slo *slo,
    struct serve_figures *out)
{
	double *x, first = INFINITY, last = -INFINITY, tokens = 0;
	size_t m, good = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0 || (x = malloc((n > nitl ? n : nitl) * sizeof(*x))) ==
	    NULL)
		return -1;
	out->n = n;
	for (size_t i = 0; i < n; i++) {
		double tpot = tpot_of(&r[i]);

		x[i] = r[i].sent_ns - r[i].sched_ns;
		if (r[i].sched_ns < first)
			first = r[i].sched_ns;
		if (!r[i].ok)
			continue;
		out->ok++;
		tokens += r[i].out_tokens;
		if (r[i].sent_ns + r[i].e2e_ns > last)
			last = r[i].sent_ns + r[i].e2e_ns;
		if ((slo->ttft_ns <= 0 || r[i].ttft_ns <= slo->ttft_ns) &&
		    (slo->tpot_ns <= 0 || (isfinite(tpot) &&
		    tpot <= slo->tpot_ns)))
			good++;
	}
	qsort(x, n, sizeof(*x), cmp_double);
	out->lag_p50_ns = serve_quantile(x, n, 0.50);
	out->lag_p99_ns = serve_quantile(x, n, 0.99);
	out->lag_max_ns = x[n - 1];
	for (int l = 0; l < SERVE_NLAT; l++) {
		m = 0;
		if (l == SERVE_ITL) {
			memcpy(x, itl_ns, nitl * sizeof(*x));
			m = nitl;
		} else
			for (size_t i = 0; i < n; i++) {
				double v = l == SERVE_TTFT ? r[i].ttft_ns :
				    l == SERVE_E2E ? r[i].e2e_ns :
				    tpot_of(&r[i]);

				if (r[i].ok && isfinite(v))
					x[m++] = v;
			}
		percentiles(x, m, out->pct[l]);
	}
	free(x);
	out->duration_ns = out->ok ? last - first : 0;
	if (out->duration_ns > 0) {
		out->req_per_s = out->ok * 1e9 / out->duration_ns;
		out->out_tok_per_s = tokens * 1e9 / out->duration_ns;
		out->goodput_per_s = good * 1e9 / out->duration_ns;
	}
	out->goodput_share = (double)good / (double)n;
	return 0;
}

void
serve_arrivals(int poisson, double rate, uint64_t seed, size_t n,
    double *t_ns)
{
	uint64_t x = seed * 2654435761u + 0x9e3779b97f4a7c15u;
	double t = 0;

	for (size_t i = 0; i < n; i++) {
		t_ns[i] = t;
		if (poisson) {
			double u;

			/* xorshift64*: the top 53 bits, in [0, 1) */
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			u = ((x * 2685821657736338717u) >> 11) * 0x1p-53;
			t += -log1p(-u) / rate * 1e9;
		} else
			t += 1e9 / rate;
	}
}
