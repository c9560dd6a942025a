/*
 * bisect_world.h: synthetic releases for the bisection's tests
 * (test_bisect.c): each release's true line, t = fixed + per_token * n,
 * with seeded noise that depends only on the release, cell and
 * repetition, as a real store's samples would; a store of their
 * samples; and a driver that carries out the bisection's actions on it
 * to its verdict.
 */
#ifndef TESTS_BISECT_WORLD_H
#define TESTS_BISECT_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "bisectd/analysis/bisect.h"

#define MS 1e6
#define MAXREL 16
#define MAXSMP 400
#define MAXACT 200

struct truth {
	double fixed_ms, per_token_ms;
};

/* A world: the true line of each release and the noise. */
struct world {
	size_t n;
	struct truth t[MAXREL];
	double cv;
	uint64_t seed;
	int skipped[MAXREL];
	int decode;		/* the cells are tgN: time = per_token * n */
	/* a confirmation of this pair sees the good release's figures on
	 * both sides (drift, or a boundary that was never real) */
	size_t fake_bad;
};

struct store {
	struct bisect_release rel[MAXREL];
	struct bisect_sample smp[MAXREL][2][MAXSMP];
	size_t runs;
};

struct run {
	struct bisect_action act[MAXACT];
	size_t nact;
	struct bisect_verdict v;
};

/* A 64-bit mix of x (splitmix64's finaliser): the noise's source. */
uint64_t mix(uint64_t x);
/* Sample k of release rel at length len (ns), confirm or not. */
double sample(const struct world *w, size_t rel, int len, int confirm,
    size_t k);
/* An empty store for w's releases. */
void store_init(struct store *s, const struct world *w);
/* The samples of c with the confirm flag. */
size_t count(const struct bisect_cell *c, int confirm);
/* Bring release rel's cells up to upto samples with the flag; stop
 * after budget new samples (an interruption half-way; NULL: none). */
void add(struct store *s, const struct world *w, const struct bisect_params *p,
    size_t rel, int confirm, size_t upto, size_t *budget);
/* Carry out action a on s, as a driver does: each cell of its release
 * up to the runs a wants of it, a pair one run of each in turn. */
void execute(struct store *s, const struct world *w,
    const struct bisect_params *p, const struct bisect_action *a,
    size_t *budget);
/* Drive a bisect from the store's state to its verdict, its actions
 * into r; -1 when bisect_next() fails or MAXACT actions do not end it. */
int drive(struct store *s, const struct world *w,
    const struct bisect_params *p, struct run *r);
/* A bisect from an empty store. */
int fresh_run(struct store *s, const struct world *w,
    const struct bisect_params *p, struct run *r);
/* Whether a and b ask for the same. */
int same_action(const struct bisect_action *a, const struct bisect_action *b);
/* n releases with noise cv and seed, no line yet. */
void world_init(struct world *w, size_t n, double cv, uint64_t seed);
/* The demo's seven releases 0.2.0 .. 0.2.6. */
void basert(struct world *w, double cv);
/* The bisect's parameters: two lengths, 512 and 2048. */
void params(struct bisect_params *p);

#endif
