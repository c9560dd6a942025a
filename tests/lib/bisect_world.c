/*
 * bisect_world.c: synthetic releases, their store and the driver for the
 * bisection's tests (see bisect_world.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bisect_world.h"

uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

double
sample(const struct world *w, size_t rel, int len, int confirm, size_t k)
{
	uint64_t h = mix(w->seed ^ mix(rel * 131 + (uint64_t)len * 7 +
	    (uint64_t)confirm * 3 + k * 1009));
	double u1 = ((double)(h >> 11) + 0.5) / 0x1p53;
	double u2 = (double)(mix(h) >> 11) / 0x1p53;
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	const struct truth *t = &w->t[rel];
	double ms = w->decode ? t->per_token_ms * len :
	    t->fixed_ms + t->per_token_ms * len;

	return ms * MS * (1 + w->cv * z);
}

void
store_init(struct store *s, const struct world *w)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < w->n; i++) {
		s->rel[i].skipped = w->skipped[i];
		for (int c = 0; c < 2; c++)
			s->rel[i].cells[c].samples = s->smp[i][c];
	}
}

size_t
count(const struct bisect_cell *c, int confirm)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		k += c->samples[i].confirm == confirm;
	return k;
}

/* Bring cell c of release rel up to upto samples with the flag; stop
 * after budget new samples (an interruption half-way).  Returns -1 when
 * the budget ran out. */
static int
add_cell(struct store *s, const struct world *w, const struct bisect_params *p,
    size_t rel, int confirm, size_t c, size_t upto, size_t *budget)
{
	size_t src = confirm && rel == w->fake_bad ? rel - 1 : rel;
	struct bisect_cell *cell = &s->rel[rel].cells[c];

	for (size_t k = count(cell, confirm); k < upto; k++) {
		if (budget && *budget == 0)
			return -1;
		if (budget)
			(*budget)--;
		s->smp[rel][c][cell->n].time_ns =
		    sample(w, src, p->lengths[c], confirm, k);
		s->smp[rel][c][cell->n].confirm = confirm;
		cell->n++;
		s->runs++;
	}
	return 0;
}

void
add(struct store *s, const struct world *w, const struct bisect_params *p,
    size_t rel, int confirm, size_t upto, size_t *budget)
{
	for (size_t c = 0; c < p->nlengths; c++)
		if (add_cell(s, w, p, rel, confirm, c, upto, budget) < 0)
			return;
}

/* Release rel's cells up to the runs action a wants of its release t,
 * at most most of each. */
static int
add_wanted(struct store *s, const struct world *w,
    const struct bisect_params *p, const struct bisect_action *a, size_t t,
    size_t rel, size_t most, size_t *budget)
{
	int confirm = a->kind == BISECT_CONFIRM;

	for (size_t c = 0; c < p->nlengths; c++) {
		size_t upto = (size_t)a->want[t][c];

		if (add_cell(s, w, p, rel, confirm, c, upto < most ? upto :
		    most, budget) < 0)
			return -1;
	}
	return 0;
}

void
execute(struct store *s, const struct world *w, const struct bisect_params *p,
    const struct bisect_action *a, size_t *budget)
{
	if (a->kind == BISECT_MEASURE) {
		add_wanted(s, w, p, a, 0, a->release, SIZE_MAX, budget);
		return;
	}
	for (size_t k = 1; k <= (size_t)a->reps; k++)
		if (add_wanted(s, w, p, a, 0, a->good, k, budget) < 0 ||
		    add_wanted(s, w, p, a, 1, a->bad, k, budget) < 0)
			return;
}

/* Drive a bisect from the store's state to its verdict. */
int
drive(struct store *s, const struct world *w, const struct bisect_params *p,
    struct run *r)
{
	r->nact = 0;
	for (;;) {
		struct bisect_action a;

		if (bisect_next(s->rel, w->n, p, &a, &r->v) < 0) {
			fprintf(stderr, "bisect_next: %s\n", a.error);
			return -1;
		}
		if (a.kind == BISECT_DONE)
			return 0;
		if (r->nact == MAXACT)
			return -1;
		r->act[r->nact++] = a;
		execute(s, w, p, &a, NULL);
	}
}

/* A bisect from an empty store. */
int
fresh_run(struct store *s, const struct world *w,
    const struct bisect_params *p, struct run *r)
{
	store_init(s, w);
	return drive(s, w, p, r);
}

int
same_action(const struct bisect_action *a, const struct bisect_action *b)
{
	return a->kind == b->kind && a->reps == b->reps &&
	    memcmp(a->want, b->want, sizeof(a->want)) == 0 &&
	    (a->kind == BISECT_MEASURE ? a->release == b->release :
	    a->good == b->good && a->bad == b->bad);
}

void
world_init(struct world *w, size_t n, double cv, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->n = n;
	w->cv = cv;
	w->seed = seed;
	w->fake_bad = SIZE_MAX;
}

/* The demo's seven releases 0.2.0 .. 0.2.6. */
void
basert(struct world *w, double cv)
{
	static const struct truth t[7] = {
		{ 165, 0.92 }, { 165, 0.97 }, { 165, 0.97 }, { 165, 0.97 },
		{ 159, 3.28 }, { 159, 3.28 }, { 159, 3.28 },
	};

	world_init(w, 7, cv, 42);
	memcpy(w->t, t, sizeof(t));
}

void
params(struct bisect_params *p)
{
	bisect_params_init(p);
	p->nlengths = 2;
	p->lengths[0] = 512;
	p->lengths[1] = 2048;
}
