/*
 * serve-client.c: the driver bench/serve-client.sh uses to load a server
 * with serve mode's client (bisectd/measure/load.c) at one rate, and
 * print what the client itself did: requests sent and completed, the
 * rate reached, and its lag (how late requests left against their
 * schedule) at p50, p99 and most.  key=value lines; times in ms.
 *
 * Usage: serve-client URL RATE REQUESTS [fixed|poisson] [OUTPUT]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/analysis/serve.h"
#include "bisectd/measure/load.h"
#include "common/err.h"

int
main(int argc, char **argv)
{
	struct conf_load p;
	struct load_spec ls;
	struct load_result lr;
	struct serve_figures f;
	struct serve_slo slo = { 0, 0 };
	struct err e = ERR_INIT;
	double first = INFINITY, last = -INFINITY, sent_span;

	if (argc < 4) {
		fprintf(stderr, "usage: serve-client URL RATE REQUESTS "
		    "[fixed|poisson] [OUTPUT]\n");
		return 2;
	}
	memset(&p, 0, sizeof(p));
	p.arrival = argc > 4 && strcmp(argv[4], "poisson") == 0 ?
	    ARRIVAL_POISSON : ARRIVAL_FIXED;
	p.rate = atof(argv[2]);
	p.requests = atoi(argv[3]);
	p.warmup = 16;
	p.prompt[0] = 8;
	p.nprompt = 1;
	p.output[0] = argc > 5 ? atoi(argv[5]) : 2;
	p.noutput = 1;
	p.dialect = DIALECT_OPENAI;
	memset(&ls, 0, sizeof(ls));
	ls.url = argv[1];
	ls.profile = &p;
	ls.timeout_ms = 30000;
	ls.seed = 1;
	if (load_run(&ls, &lr, &e) < 0) {
		fprintf(stderr, "serve-client: %s\n", e.msg);
		return 1;
	}
	if (serve_figures(lr.req, lr.n, lr.itl_ns, lr.nitl, &slo, &f) < 0) {
		fprintf(stderr, "serve-client: no request measured\n");
		return 1;
	}
	/* The rate the client kept: measured requests over the span of
	 * their sending. */
	for (size_t i = 0; i < lr.n; i++) {
		first = fmin(first, lr.req[i].sent_ns);
		last = fmax(last, lr.req[i].sent_ns);
	}
	sent_span = lr.n > 1 ? (last - first) / 1e9 : 0;
	printf("rate=%g requests=%zu ok=%zu failed=%zu sent_per_s=%.1f "
	    "lag_p50_ms=%.4f lag_p99_ms=%.4f lag_max_ms=%.4f "
	    "ttft_p50_ms=%.3f e2e_p99_ms=%.3f%s%s\n", p.rate, lr.n, f.ok,
	    lr.n - f.ok, sent_span > 0 ? (double)(lr.n - 1) / sent_span : 0,
	    f.lag_p50_ns / 1e6, f.lag_p99_ns / 1e6, f.lag_max_ns / 1e6,
	    f.pct[SERVE_TTFT][0] / 1e6, f.pct[SERVE_E2E][2] / 1e6,
	    lr.first_error[0] ? " first_error=" : "", lr.first_error);
	load_result_release(&lr);
	return 0;
}
