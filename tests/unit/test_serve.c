/*
 * test_serve.c: a serve run's figures on numbers worked by hand, the
 * arrival schedule's rate and spread, and the SSE reader of both
 * dialects.
 */
#include <math.h>
#include <string.h>

#include "bisectd/analysis/serve.h"
#include "bisectd/measure/sse.h"
#include "check.h"

static void
test_quantile(void)
{
	double x[] = { 1, 2, 3, 4, 5 };

	CHECK_NEAR(serve_quantile(x, 5, 0.50), 3, 1e-12);
	CHECK_NEAR(serve_quantile(x, 5, 0.90), 4.6, 1e-12);
	CHECK_NEAR(serve_quantile(x, 5, 0.99), 4.96, 1e-12);
	CHECK_NEAR(serve_quantile(x, 1, 0.99), 1, 1e-12);
	CHECK(isnan(serve_quantile(x, 0, 0.5)));
}

/*
 * Four requests due every 100 ms, one failed.  TTFT 10, 20, 40 ms; 11
 * tokens each over e2e 110, 220, 440 ms: TPOT 10, 20, 40 ms.  The run
 * lasts from 0 to the third's end, 200 + 440 ms.
 */
static void
test_figures(void)
{
	struct serve_request r[4] = {
		{ 0, 1e6, 10e6, 110e6, 11, 1 },
		{ 100e6, 100.5e6, 20e6, 220e6, 11, 1 },
		{ 200e6, 200e6, 40e6, 440e6, 11, 1 },
		{ 300e6, 303e6, 0, 0, 0, 0 },
	};
	double itl[] = { 5e6, 10e6, 15e6 };
	struct serve_slo slo = { 25e6, 25e6 };
	struct serve_figures f;

	CHECK_INT(serve_figures(r, 4, itl, 3, &slo, &f), 0);
	CHECK_INT(f.n, 4);
	CHECK_INT(f.ok, 3);
	CHECK_NEAR(f.pct[SERVE_TTFT][0], 20e6, 1);
	CHECK_NEAR(f.pct[SERVE_TTFT][1], 36e6, 1);	/* 20 + .8 x 20 */
	CHECK_NEAR(f.pct[SERVE_TPOT][0], 20e6, 1);
	CHECK_NEAR(f.pct[SERVE_TPOT][2], 39.6e6, 1);
	CHECK_NEAR(f.pct[SERVE_ITL][0], 10e6, 1);
	CHECK_NEAR(f.pct[SERVE_E2E][1], 396e6, 1);
	CHECK_NEAR(f.duration_ns, 640e6, 1);
	CHECK_NEAR(f.req_per_s, 3 / 0.64, 1e-9);
	CHECK_NEAR(f.out_tok_per_s, 33 / 0.64, 1e-9);
	/* Two of the four meet both targets. */
	CHECK_NEAR(f.goodput_per_s, 2 / 0.64, 1e-9);
	CHECK_NEAR(f.goodput_share, 0.5, 1e-12);
	/* Lags 1, 0.5, 0, 3 ms. */
	CHECK_NEAR(f.lag_p50_ns, 0.75e6, 1);
	CHECK_NEAR(f.lag_max_ns, 3e6, 1);
	CHECK_NEAR(f.lag_p99_ns, 2.94e6, 1);
	/* Without targets every complete request is good. */
	slo.ttft_ns = slo.tpot_ns = 0;
	CHECK_INT(serve_figures(r, 4, itl, 3, &slo, &f), 0);
	CHECK_NEAR(f.goodput_share, 0.75, 1e-12);
	CHECK_INT(serve_figures(r, 0, itl, 3, &slo, &f), -1);
}

/* Poisson gaps at 50/s: mean 20 ms within 3 standard errors over 20000
 * (0.6%: 2% would also pass a rate off by 2%), a CV of 1 as an
 * exponential's; equal gaps are exactly 1/rate; one seed, one schedule. */
static void
test_arrivals(void)
{
	static double t[20001], u[20001];
	double sum = 0, sq = 0, mean, cv;
	size_t n = 20000;

	serve_arrivals(1, 50, 7, n + 1, t);
	CHECK_NEAR(t[0], 0, 0);
	for (size_t i = 1; i <= n; i++) {
		double g = t[i] - t[i - 1];

		CHECK(g >= 0);
		sum += g;
		sq += g * g;
	}
	mean = sum / n;
	cv = sqrt(sq / n - mean * mean) / mean;
	CHECK_NEAR(mean, 20e6, 3 * 20e6 / sqrt(n));
	CHECK_NEAR(cv, 1, 0.03);
	serve_arrivals(1, 50, 7, n + 1, u);
	CHECK(memcmp(t, u, sizeof(t)) == 0);
	serve_arrivals(1, 50, 8, n + 1, u);
	CHECK(memcmp(t, u, sizeof(t)) != 0);
	serve_arrivals(0, 8, 7, 4, u);
	CHECK_NEAR(u[3], 375e6, 1e-3);
}

static void
test_sse(void)
{
	static const char openai[] =
	    ": keep-alive\r\n"
	    "data: {\"choices\":[{\"text\":\"He\",\"finish_reason\":null}]}\n\n"
	    "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":null}]}\n\n"
	    "data: {\"choices\":[{\"text\":\"llo\",\"finish_reason\":"
	    "\"length\"}],\"usage\":{\"prompt_tokens\":9,"
	    "\"completion_tokens\":2}}\n\n"
	    "data: [DONE]\n\n";
	static const char llama[] =
	    "data: {\"content\":\"a\",\"stop\":false}\n\n"
	    "data: {\"content\":\"b\",\"stop\":false}\n\n"
	    "data: {\"content\":\"\",\"stop\":true,\"tokens_predicted\":2,"
	    "\"tokens_evaluated\":5,\"stopped_limit\":true}\n\n";
	struct sse_stream s;
	int got = 0;

	/* Byte by byte: events split anywhere read the same. */
	sse_init(&s, SSE_OPENAI);
	for (size_t i = 0; i < sizeof(openai) - 1; i++)
		got += sse_feed(&s, openai + i, 1);
	CHECK_INT(got, 2);
	CHECK(s.done && !s.failed);
	CHECK_INT(s.usage_prompt, 9);
	CHECK_INT(s.usage_completion, 2);
	CHECK_STR(s.finish, "length");
	CHECK_INT(sse_feed(&s, "data: {}\n", 9), -1);
	CHECK_CONTAINS(s.detail, "after the end");

	sse_init(&s, SSE_LLAMA);
	CHECK_INT(sse_feed(&s, llama, sizeof(llama) - 1), 2);
	CHECK(s.done);
	CHECK_INT(s.usage_completion, 2);
	CHECK_STR(s.finish, "length");

	sse_init(&s, SSE_OPENAI);
	CHECK_INT(sse_feed(&s, "data: {\"error\":{\"message\":\"busy\"}}\n",
	    36), -1);
	CHECK_CONTAINS(s.detail, "busy");
	sse_init(&s, SSE_OPENAI);
	CHECK_INT(sse_feed(&s, "data: nope\n", 11), -1);
	CHECK(s.failed && !s.done);
}

int
main(void)
{
	CHECK_CASE(test_quantile);
	CHECK_CASE(test_figures);
	CHECK_CASE(test_arrivals);
	CHECK_CASE(test_sse);
	return check_done();
}
