/*
 * ablate.h: the verdict of an ablation with a positive control.  Each
 * switch turns one component of an engine off; baseline and switched
 * runs are measured on the fit lengths, and a switch's effect is the
 * time it removes, per token and fixed, and in share of the runtime at
 * the longest fit length.
 *
 * A switch is believed only after the control (a component known to be
 * heavy) has moved the runtime: if the control removes no more than the
 * noise, or less than control_min of the runtime, every switch looks
 * inert in this binary and nothing is ranked ("the switch did nothing",
 * never "the component costs nothing").  A control that measurably
 * added time is no control (nothing is ranked either), and is said to
 * be the wrong switch, not an inert one.  With a working control, a
 * switch whose interval holds 0 has no measurable effect, stated with
 * the smallest effect its runs would have seen; the others are ranked
 * by the share they remove, those indistinguishable sharing a rank.
 *
 * Pure: arrays in, structs out.  Times are ns.
 */
#ifndef BISECTD_ABLATE_H
#define BISECTD_ABLATE_H

#include <stddef.h>

#include "fit.h"
#include "stats.h"

#define ABLATE_MAX_SWITCHES 32

/* The probability with which the stated smallest effect would have been
 * seen (its interval clear of 0). */
#define ABLATE_POWER 0.80

/* One switch's runs (not owned): one run value per process run. */
struct ablate_switch_in {
	const char *name;
	int control;
	const struct fit_cell *cells;	/* per fit length */
	size_t ncells;
};

struct ablate_input {
	const struct fit_cell *baseline;	/* per fit length */
	size_t nbaseline;
	const struct ablate_switch_in *switches;
	size_t nswitches;
	double control_min;	/* fraction of the runtime (0.20) */
};

enum ablate_status {
	ABLATE_RANKED,		/* the control worked: switches judged */
	ABLATE_INERT,		/* the control did not move the runtime */
	ABLATE_CONTROL_ADDS,	/* the control added time: the switches
				 * work, but a control must remove it */
	ABLATE_NO_CONTROL	/* the control could not be measured */
};

enum ablate_effect {
	EFFECT_REMOVES,		/* measurably less time with the switch */
	EFFECT_ADDS,		/* measurably more */
	EFFECT_NONE,		/* no measurable effect (the control worked) */
	EFFECT_NOT_JUDGED,	/* the control did not work: nothing said */
	EFFECT_UNMEASURED	/* too few runs to fit (its runs failed) */
};

struct ablate_switch_out {
	const char *name;	/* the input's */
	int control;
	int tokens;		/* the longest fit length: the runtime's */
	/* Baseline minus switched (positive: the switch removes time). */
	struct estimate runtime_removed_ns;	/* at tokens */
	struct estimate runtime_removed_rel;	/* 1 - switched / baseline */
	struct estimate per_token_removed_ns;
	struct estimate fixed_removed_ns;
	int fixed_estimable;	/* both lines fit; else fixed is an artefact */
	const char *fixed_why;	/* static, NULL when estimable */
	enum ablate_effect effect;
	/* EFFECT_NONE: the share of the runtime a switch would have to
	 * remove (or add) for these runs to show it with ABLATE_POWER. */
	double detectable_rel;
	int rank;		/* 1-based, shared when indistinguishable;
				 * 0: not ranked */
};

struct ablate_result {
	enum ablate_status status;
	size_t control;		/* index of the control switch */
	int control_beyond_noise;	/* its removed share's interval > 0 */
	int control_enough;	/* its removed share >= control_min */
	double control_min;
	struct ablate_switch_out sw[ABLATE_MAX_SWITCHES];	/* input order */
	size_t nswitches;
	/* The switches in report order: ranked ones by rank, then those
	 * with no measurable effect, then the rest. */
	size_t order[ABLATE_MAX_SWITCHES];
};

/*
 * Judge the switches against the baseline.  Returns 0, or -1 when the
 * input is malformed: no switches or more than ABLATE_MAX_SWITCHES, not
 * exactly one control, or a baseline that cannot be fitted (fewer than
 * two lengths, a cell without runs).  A switch that cannot be fitted is
 * EFFECT_UNMEASURED; if that is the control, the status is
 * ABLATE_NO_CONTROL and nothing is judged.
 */
int ablate_judge(const struct ablate_input *in, struct ablate_result *out);

/* "ranked", "inert", "control-adds", "no-control": the report's words. */
const char *ablate_status_name(enum ablate_status s);

/* "removes", "adds", "none", "not-judged", "unmeasured". */
const char *ablate_effect_name(enum ablate_effect e);

#endif
