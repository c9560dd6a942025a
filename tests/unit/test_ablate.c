/*
 * test_ablate.c: the verdict of an ablation with a positive control, on
 * synthetic run values t = fixed + per_token * n with seeded noise: a
 * working control ranks the switches, a control that moves nothing (the
 * field report's "a whole MoE skipped and 2 ms saved") makes every
 * switch inert, a switch that does nothing is "no measurable effect"
 * with the effect its runs could have seen.
 */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "bisectd/analysis/ablate.h"

#define MS 1e6
#define RUNS 64

static uint64_t rng_state = 12;
static const int len[2] = { 128, 512 };

/* A variant's runs: fixed + per_token * n, each run times 1 + cv N(0,1). */
struct variant {
	double buf[2][RUNS];
	struct fit_cell cells[2];
};

static void
synth(struct variant *v, double fixed_ms, double per_token_ms, double cv,
    size_t runs)
{
	for (size_t i = 0; i < 2; i++) {
		double t = (fixed_ms + per_token_ms * len[i]) * MS;

		for (size_t k = 0; k < runs; k++)
			v->buf[i][k] = t * (1 + cv * check_normal(&rng_state));
		v->cells[i].tokens = len[i];
		v->cells[i].time_ns = v->buf[i];
		v->cells[i].n = runs;
	}
}

static void
set_switch(struct ablate_switch_in *s, const char *name, int control,
    const struct variant *v)
{
	s->name = name;
	s->control = control;
	s->cells = v->cells;
	s->ncells = 2;
}

/* A switch of a two-switch ablation: its name, whether it is the
 * control, and its costs. */
struct arm {
	const char *name;
	int control;
	double fixed_ms, per_token_ms;
};

/* The base and two switches, sw[0] and sw[1], each with runs a side. */
struct pair {
	struct variant base, v[2];
	struct ablate_switch_in sw[2];
};

/* The runs of a base costing fixed_ms + per_token_ms a token and of the
 * switches a and b, at cv: drawn base first, then the control, as the
 * cases were written. */
static struct pair *
pair(double fixed_ms, double per_token_ms, struct arm a, struct arm b,
    double cv, size_t runs)
{
	static struct pair p;
	const struct arm *arm[2] = { &a, &b };
	int first = b.control ? 1 : 0;

	synth(&p.base, fixed_ms, per_token_ms, cv, runs);
	for (int k = 0; k < 2; k++) {
		int i = k == 0 ? first : 1 - first;

		synth(&p.v[i], arm[i]->fixed_ms, arm[i]->per_token_ms, cv,
		    runs);
		set_switch(&p.sw[i], arm[i]->name, arm[i]->control, &p.v[i]);
	}
	return &p;
}

static int
judge(const struct variant *base, struct ablate_switch_in *sw, size_t n,
    double control_min, struct ablate_result *r)
{
	struct ablate_input in = { base->cells, 2, sw, n, control_min };

	return ablate_judge(&in, r);
}

/*
 * A working control: 60% of the per-token cost gone; "attn" takes 20%
 * of it, "norm" the same 20% (indistinguishable: one rank), "head" a
 * fixed 30 ms, "rope" nothing, "sync" adds 10%.
 */
static void
test_ranked(void)
{
	static struct variant base, ctl, attn, norm, head, rope, sync;
	struct ablate_switch_in sw[6];
	struct ablate_result r;
	const struct ablate_switch_out *o;

	synth(&base, 50, 1.0, 0.03, 10);
	synth(&ctl, 50, 0.4, 0.03, 10);
	synth(&attn, 50, 0.8, 0.03, 10);
	synth(&norm, 50, 0.8, 0.03, 10);
	synth(&head, 20, 1.0, 0.03, 10);
	synth(&rope, 50, 1.0, 0.03, 10);
	synth(&sync, 50 * 1.1, 1.1, 0.03, 10);
	set_switch(&sw[0], "rope", 0, &rope);
	set_switch(&sw[1], "attn", 0, &attn);
	set_switch(&sw[2], "experts", 1, &ctl);
	set_switch(&sw[3], "norm", 0, &norm);
	set_switch(&sw[4], "head", 0, &head);
	set_switch(&sw[5], "sync", 0, &sync);
	CHECK_INT(judge(&base, sw, 6, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_RANKED);
	CHECK_INT(r.control, 2);
	CHECK(r.control_beyond_noise && r.control_enough);

	/* The control: 0.6 ms per token and nothing fixed removed, each
	 * inside its interval; 58% of the runtime at 512 tokens. */
	o = &r.sw[2];
	CHECK_INT(o->tokens, 512);
	CHECK_INT(o->effect, EFFECT_REMOVES);
	CHECK_INT(o->rank, 1);
	CHECK(o->per_token_removed_ns.lo < 0.6 * MS &&
	    o->per_token_removed_ns.hi > 0.6 * MS);
	CHECK(o->per_token_removed_ns.lo > 0.5 * MS &&
	    o->per_token_removed_ns.hi < 0.7 * MS);
	CHECK(o->fixed_removed_ns.lo < 0 && o->fixed_removed_ns.hi > 0);
	CHECK_NEAR(o->runtime_removed_rel.value, 307.2 / 562, 0.03);

	/* attn and norm remove the same: second, sharing the rank. */
	CHECK_INT(r.sw[1].effect, EFFECT_REMOVES);
	CHECK_INT(r.sw[3].effect, EFFECT_REMOVES);
	CHECK_INT(r.sw[1].rank, 2);
	CHECK_INT(r.sw[3].rank, 2);
	CHECK_NEAR(r.sw[1].runtime_removed_rel.value, 102.4 / 562, 0.03);

	/* head: 30 ms fixed, nothing per token: ranked below them. */
	CHECK_INT(r.sw[4].effect, EFFECT_REMOVES);
	CHECK_INT(r.sw[4].rank, 4);
	CHECK(r.sw[4].fixed_removed_ns.lo < 30 * MS &&
	    r.sw[4].fixed_removed_ns.hi > 30 * MS);
	CHECK(r.sw[4].fixed_removed_ns.lo > 10 * MS);
	CHECK(r.sw[4].per_token_removed_ns.lo < 0 &&
	    r.sw[4].per_token_removed_ns.hi > 0);

	/* sync makes it slower: a measurable effect, ranked last. */
	CHECK_INT(r.sw[5].effect, EFFECT_ADDS);
	CHECK_INT(r.sw[5].rank, 5);
	CHECK(r.sw[5].runtime_removed_rel.hi < 0);

	/* rope: no measurable effect, with what 10 runs a side at CV 3%
	 * could have seen: about (2.1 + 0.86) x 1.34% = 4%. */
	CHECK_INT(r.sw[0].effect, EFFECT_NONE);
	CHECK_INT(r.sw[0].rank, 0);
	CHECK(r.sw[0].runtime_removed_rel.lo < 0 &&
	    r.sw[0].runtime_removed_rel.hi > 0);
	CHECK(r.sw[0].detectable_rel > 0.025 && r.sw[0].detectable_rel < 0.06);

	/* Report order: ranked by share removed, then the one without. */
	CHECK_INT(r.order[0], 2);
	CHECK(r.order[1] == 1 || r.order[1] == 3);
	CHECK_INT(r.order[3], 4);
	CHECK_INT(r.order[4], 5);
	CHECK_INT(r.order[5], 0);
}

/*
 * The field report: pp512 636.4 ms, routed experts skipped 634.4 ms.
 * Quiet enough that 2 ms is beyond the noise, but 0.3% of the runtime
 * is not what skipping a heavy component removes: inert, nothing
 * ranked, and no switch called "no measurable effect" either.
 */
static void
test_inert_field_report(void)
{
	struct ablate_result r;
	/* 0.9 ms/token + 175.6 ms: 636.4 at 512; the control 2 ms less. */
	struct pair *p = pair(175.6, 0.9, (struct arm){ "experts", 1, 173.6,
	    0.9 }, (struct arm){ "attention", 0, 175.6, 0.9 }, 0.001, 20);

	CHECK_INT(judge(&p->base, p->sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_INERT);
	CHECK(r.control_beyond_noise);
	CHECK(!r.control_enough);
	CHECK_NEAR(r.sw[0].runtime_removed_ns.value, 2 * MS, 0.6 * MS);
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(r.sw[i].rank, 0);
		CHECK_INT(r.sw[i].effect, EFFECT_NOT_JUDGED);
	}
}

/* A control that removes 30% but inside noise this wide is not proof
 * that the switches work. */
static void
test_inert_noise(void)
{
	struct ablate_result r;
	struct pair *p = pair(50, 1.0, (struct arm){ "other", 0, 50, 1.0 },
	    (struct arm){ "experts", 1, 35, 0.7 }, 0.5, 3);

	CHECK_INT(judge(&p->base, p->sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_INERT);
	CHECK_INT(r.control, 1);
	CHECK(!r.control_beyond_noise);
	CHECK(r.sw[1].runtime_removed_rel.lo < 0);
	CHECK_INT(r.sw[0].effect, EFFECT_NOT_JUDGED);
}

/* A control that adds 6%, beyond this noise but short of control_min,
 * is inert as a control: adding time is judged as removing it is (an
 * inert control's interval misses zero below it one time in forty, and
 * such a run was once called the wrong switch). */
static void
test_control_adds_little(void)
{
	struct ablate_result r;
	struct pair *p = pair(50, 1.0, (struct arm){ "control", 1, 53, 1.06 },
	    (struct arm){ "attn", 0, 50, 0.8 }, 0.01, 10);

	CHECK_INT(judge(&p->base, p->sw, 2, 0.20, &r), 0);
	CHECK(r.sw[0].runtime_removed_rel.hi < 0);
	CHECK_NEAR(r.sw[0].runtime_removed_rel.value, -0.06, 0.02);
	CHECK_INT(r.status, ABLATE_INERT);
	for (size_t i = 0; i < 2; i++)
		CHECK_INT(r.sw[i].rank, 0);
}

/* A control that nearly doubles the runtime (one thread against the
 * default) is far beyond the noise: not inert, but the wrong switch for
 * a control; nothing is ranked. */
static void
test_control_adds(void)
{
	struct ablate_result r;
	struct pair *p = pair(50, 1.0, (struct arm){ "one-thread", 1, 95,
	    1.9 }, (struct arm){ "attn", 0, 50, 0.8 }, 0.03, 10);

	CHECK_INT(judge(&p->base, p->sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_CONTROL_ADDS);
	CHECK_STR(ablate_status_name(r.status), "control-adds");
	CHECK(r.sw[0].runtime_removed_rel.hi < 0);
	CHECK_NEAR(r.sw[0].runtime_removed_rel.value, -0.89, 0.05);
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(r.sw[i].rank, 0);
		CHECK_INT(r.sw[i].effect, EFFECT_NOT_JUDGED);
	}
}

/* control-min is the bar: a clear 15% passes at 10% and fails at 20%. */
static void
test_control_min(void)
{
	struct ablate_result r;
	struct pair *p = pair(50, 1.0, (struct arm){ "experts", 1, 50 * 0.85,
	    0.85 }, (struct arm){ "other", 0, 50, 1.0 }, 0.01, 10);

	CHECK_INT(judge(&p->base, p->sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_INERT);
	CHECK(r.control_beyond_noise && !r.control_enough);
	CHECK_NEAR(r.sw[0].runtime_removed_rel.value, 0.15, 0.01);
	CHECK_INT(judge(&p->base, p->sw, 2, 0.10, &r), 0);
	CHECK_INT(r.status, ABLATE_RANKED);
	CHECK_INT(r.sw[0].rank, 1);
	CHECK_INT(r.sw[1].effect, EFFECT_NONE);
}

/*
 * The stated smallest effect means what it says.  At 8 runs a side and
 * CV 5% the removed share's se is sqrt(2) x 5% / sqrt(8) = 2.5%, so the
 * effect seen 80% of the time is (t(0.975, 14) + t(0.8, 14)) x 2.5% =
 * 7.5%: the stated figure averages that, a switch that truly removes it
 * is found (its interval clear of 0) in about ABLATE_POWER of repeated
 * ablations, and one removing half of it far less often.
 */
static void
test_detectable(void)
{
	static struct variant base, ctl, sw_runs;
	struct ablate_switch_in sw[2];
	struct ablate_result r;
	double d = (2.145 + 0.868) * sqrt(2) * 0.05 / sqrt(8), sum = 0;
	int found = 0, found_half = 0, stated = 0, trials = 400;

	set_switch(&sw[0], "experts", 1, &ctl);
	set_switch(&sw[1], "x", 0, &sw_runs);
	for (int t = 0; t < trials; t++) {
		synth(&base, 50, 1.0, 0.05, 8);
		synth(&ctl, 20, 0.4, 0.05, 8);
		synth(&sw_runs, 50 * (1 - d), 1.0 * (1 - d), 0.05, 8);
		if (judge(&base, sw, 2, 0.20, &r) == 0 &&
		    r.sw[1].effect == EFFECT_REMOVES)
			found++;
		synth(&sw_runs, 50, 1.0, 0.05, 8);
		if (judge(&base, sw, 2, 0.20, &r) == 0 &&
		    r.sw[1].effect == EFFECT_NONE) {
			sum += r.sw[1].detectable_rel;
			stated++;
		}
		synth(&sw_runs, 50 * (1 - d / 2), 1.0 * (1 - d / 2), 0.05, 8);
		if (judge(&base, sw, 2, 0.20, &r) == 0 &&
		    r.sw[1].effect == EFFECT_REMOVES)
			found_half++;
	}
	/* 80% of 400, sd 8: 290..350 is about four sd on each side; half
	 * the effect is found about 35% of the time. */
	CHECK(found > 290 && found < 350);
	CHECK(found_half < 200);
	/* The mean stated figure, over the trials with no measurable
	 * effect (about 95% of them). */
	CHECK(stated > 360);
	CHECK_NEAR(sum / stated / d, 1.0, 0.06);
	fprintf(stderr, "found %d, half %d of %d at %.4f; stated %.4f on "
	    "average in %d\n", found, found_half, trials, d, sum / stated,
	    stated);
}

/* What cannot be judged: a control whose runs all failed, malformed
 * input. */
static void
test_unmeasured(void)
{
	struct ablate_result r;
	struct pair *p = pair(50, 1.0, (struct arm){ "experts", 1, 50, 0.4 },
	    (struct arm){ "other", 0, 50, 0.9 }, 0.03, 5);
	struct variant *ctl = &p->v[0], *other = &p->v[1];
	struct ablate_switch_in *sw = p->sw;

	ctl->cells[1].n = 0;
	CHECK_INT(judge(&p->base, sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_NO_CONTROL);
	CHECK_INT(r.sw[0].effect, EFFECT_UNMEASURED);
	CHECK_INT(r.sw[1].effect, EFFECT_NOT_JUDGED);
	CHECK_INT(r.sw[1].rank, 0);

	/* An unmeasured switch beside a working control stays unranked. */
	ctl->cells[1].n = 5;
	other->cells[0].n = 0;
	CHECK_INT(judge(&p->base, sw, 2, 0.20, &r), 0);
	CHECK_INT(r.status, ABLATE_RANKED);
	CHECK_INT(r.sw[1].effect, EFFECT_UNMEASURED);
	CHECK_INT(r.sw[1].rank, 0);
	other->cells[0].n = 5;

	sw[1].control = 1;
	CHECK_INT(judge(&p->base, sw, 2, 0.20, &r), -1);
	sw[0].control = sw[1].control = 0;
	CHECK_INT(judge(&p->base, sw, 2, 0.20, &r), -1);
	sw[0].control = 1;
	CHECK_INT(judge(&p->base, sw, 0, 0.20, &r), -1);
	p->base.cells[0].n = 0;
	CHECK_INT(judge(&p->base, sw, 2, 0.20, &r), -1);
	CHECK_STR(ablate_status_name(ABLATE_INERT), "inert");
	CHECK_STR(ablate_effect_name(EFFECT_NONE), "none");
}

int
main(void)
{
	CHECK_CASE(test_ranked);
	CHECK_CASE(test_inert_field_report);
	CHECK_CASE(test_inert_noise);
	CHECK_CASE(test_control_adds);
	CHECK_CASE(test_control_adds_little);
	CHECK_CASE(test_control_min);
	CHECK_CASE(test_detectable);
	CHECK_CASE(test_unmeasured);
	return check_done();
}
