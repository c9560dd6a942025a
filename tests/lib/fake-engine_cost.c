/*
 * fake-engine_cost.c: the fake engine's work (see fake-engine.c): CPU
 * time burnt for real, each repetition's noise and each process's
 * offset, and the speed-up that predictable content gets.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake-common.h"
#include "fake-engine_int.h"

/*
 * Order-0 entropy, in bits per byte, below which content counts as
 * predictable: English prose is about 4.2, random letters and digits
 * (base64) about 6.
 */
#define PROSE_ENTROPY_MAX 5.0

uint64_t rng_state;
static volatile uint64_t work_sink;

int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spend us microseconds of this thread's CPU time, or less if stopping. */
void
burn(double us)
{
	int64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (int64_t)(us * 1e3);
	uint64_t x = work_sink | 1;
	int i;

	while (!stopping && clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (i = 0; i < 5000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	work_sink = x;
}

/* splitmix64's finaliser: every bit of x reaches every bit out. */
static uint64_t
mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * xorshift's first draws from two close seeds are close too: engines
 * started one after another would share their offsets and outliers.
 */
void
rng_seed(void)
{
	rng_state = mix64(mix64((uint64_t)clock_ns(CLOCK_REALTIME)) ^
	    (uint64_t)getpid());
	if (rng_state == 0)
		rng_state = 1;
}

/* xorshift64*: a few noisy factors need no more. */
static double
uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0;
}

/* 1 + cv * N(0,1) by Box-Muller, kept positive. */
double
noise_factor(double cv)
{
	double u1, u2, f;

	if (cv <= 0)
		return 1;
	do
		u1 = uniform01();
	while (u1 <= 0);
	u2 = uniform01();
	f = 1 + cv * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	return f < 0.1 ? 0.1 : f;
}

/* This process's offset (run_cv), drawn on first use. */
double
run_factor(const struct release *rel)
{
	static double f;

	if (f == 0) {
		f = noise_factor(rel->run_cv);
		if (rel->outlier_p > 0 && uniform01() < rel->outlier_p)
			f *= rel->outlier_x;
	}
	return f;
}

static double
entropy_bits(const unsigned char *p, size_t n)
{
	size_t count[256] = { 0 }, i;
	double h = 0, q;

	for (i = 0; i < n; i++)
		count[p[i]]++;
	for (i = 0; i < 256; i++) {
		if (count[i] == 0)
			continue;
		q = (double)count[i] / (double)n;
		h -= q * log2(q);
	}
	return h;
}

/* The decode divisor for text: content_speedup if it reads like prose. */
double
speedup_for(const struct release *rel, const void *text, size_t n)
{
	if (n == 0 || entropy_bits(text, n) >= PROSE_ENTROPY_MAX)
		return 1;
	return rel->content_speedup;
}

double
content_speedup_of(const struct release *rel, const char *path)
{
	unsigned char *data;
	size_t n;
	double s;
	FILE *f;

	if (path == NULL)
		return 1;
	if ((f = fopen(path, "rb")) == NULL)
		die("cannot open content '%s': %s", path, strerror(errno));
	if ((data = malloc(CONTENT_MAX)) == NULL)
		die("out of memory");
	n = fread(data, 1, CONTENT_MAX, f);
	if (ferror(f))
		die("cannot read content '%s': %s", path, strerror(errno));
	fclose(f);
	s = speedup_for(rel, data, n);
	free(data);
	return s;
}

