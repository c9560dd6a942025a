/*
 * fuzz_sse.c: a streamed completion's events as a server might send
 * them (bisectd/measure/sse.c).  The first byte picks the dialect and
 * how the rest is cut into reads.
 *
 * Properties: the tokens counted are the same whatever the cut (a read
 * boundary never changes what a stream says), at most one a complete
 * line; once failed a stream stays failed with its detail said; the
 * counts it reports are -1 or non-negative.
 */
#include <stdlib.h>
#include <string.h>

#include "bisectd/measure/sse.h"
#include "fuzz.h"

/* Feed data in reads of step bytes: the tokens, or -1 failed. */
static int
feed(enum sse_dialect d, const char *data, size_t n, size_t step,
    struct sse_stream *s)
{
	int total = 0;

	sse_init(s, d);
	for (size_t i = 0; i < n; i += step) {
		size_t k = n - i < step ? n - i : step;
		int got = sse_feed(s, data + i, k);

		if (got < 0) {
			if (!s->failed || s->detail[0] == '\0')
				fuzz_fail("-1 without a failure said");
			if (sse_feed(s, "\n", 1) != -1)
				fuzz_fail("a failed stream read on");
			return -1;
		}
		total += got;
	}
	return total;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sse_stream a, b;
	enum sse_dialect d;
	size_t step, lines = 0;
	const char *in;
	int ta, tb;

	if (size < 1)
		return 0;
	d = data[0] & 1 ? SSE_LLAMA : SSE_OPENAI;
	step = 1 + (data[0] >> 1) % 64;
	in = (const char *)data + 1;
	size--;
	for (size_t i = 0; i < size; i++)
		lines += in[i] == '\n';
	ta = feed(d, in, size, size ? size : 1, &a);
	tb = feed(d, in, size, step, &b);
	if (ta != tb)
		fuzz_fail("%d tokens in one read, %d in reads of %zu", ta, tb,
		    step);
	if (ta > (int)lines)
		fuzz_fail("%d tokens from %zu lines", ta, lines);
	if (a.usage_prompt < -1 || a.usage_completion < -1)
		fuzz_fail("a negative count");
	return 0;
}
