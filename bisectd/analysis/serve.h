/*
 * serve.h: the figures of one serve run, a server under a load profile,
 * from its requests: percentiles of time to first token (TTFT), time per
 * output token (TPOT), inter-token latency (ITL) and end-to-end latency,
 * request and token throughput, goodput under latency targets, and the
 * client's own lag.  Also the arrival schedule the client follows.
 * Pure functions over arrays.
 *
 * The run is the unit of replication: these are one run's figures, one
 * value each; intervals across releases come from the spread of a
 * figure between runs (server starts), never between the requests of
 * one run, which share the server's state.
 */
#ifndef BISECTD_SERVE_H
#define BISECTD_SERVE_H

#include <stddef.h>
#include <stdint.h>

/* The latencies and their percentiles, in the order of config's enum
 * conf_serve_figure: figure = latency * SERVE_NPCT + percentile. */
enum serve_latency { SERVE_TTFT, SERVE_TPOT, SERVE_ITL, SERVE_E2E,
	SERVE_NLAT };
#define SERVE_NPCT	3
extern const double serve_pcts[SERVE_NPCT];	/* 0.50, 0.90, 0.99 */

/* One measured request; times in ns. */
struct serve_request {
	double sched_ns;	/* when it was due, from the run's start */
	double sent_ns;		/* when it left, on the same clock */
	double ttft_ns;		/* sent to its first token */
	double e2e_ns;		/* sent to its last byte */
	int out_tokens;		/* tokens it streamed */
	int ok;			/* 1: a complete stream; else the rest but
				 * sched_ns and sent_ns are unset */
};

/* Goodput's targets; 0: none. */
struct serve_slo {
	double ttft_ns, tpot_ns;
};

struct serve_figures {
	size_t n, ok;		/* requests, complete ones */
	/* [latency][percentile], ns, of the complete requests (ITL: of
	 * every gap between two tokens); NAN when there are none. */
	double pct[SERVE_NLAT][SERVE_NPCT];
	double duration_ns;	/* the first due to the last end */
	double req_per_s;	/* complete requests a second */
	double out_tok_per_s;	/* their tokens a second */
	double goodput_per_s;	/* complete requests within both targets,
				 * a second */
	double goodput_share;	/* the same over every request */
	double lag_p50_ns, lag_p99_ns, lag_max_ns;	/* sent - due */
};

/*
 * The figures of n requests with the nitl inter-token gaps of their
 * streams.  0, or -1 when n is 0 or memory runs out.
 */
int serve_figures(const struct serve_request *r, size_t n,
    const double *itl_ns, size_t nitl, const struct serve_slo *slo,
    struct serve_figures *out);

/* The p-quantile (0..1) of n values sorted ascending, interpolated
 * linearly between order statistics; NAN when n is 0. */
double serve_quantile(const double *sorted, size_t n, double p);

/*
 * n arrival times (ns from the start, ascending, the first at 0) at
 * rate a second: equal gaps, or Poisson (exponential gaps) drawn from
 * seed, so a profile's schedule is the same on every run.
 */
void serve_arrivals(int poisson, double rate, uint64_t seed, size_t n,
    double *t_ns);

#endif
