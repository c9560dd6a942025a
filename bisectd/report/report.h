/*
 * report.h: the parts of a report (report/build.h) as typed values, and
 * the one place that turns them into the report's JSON and back: the
 * renderers read these fields, so a field that is misspelt does not
 * compile, where a key that is misspelt rendered empty.  The JSON's
 * shape is docs/report.md's; report_json.c holds every key of the parts
 * it writes and reads, report_read.c of those only read (the verdict,
 * reproduce, "about", the serve figures), whose JSON is written where
 * they are made.
 */
#ifndef BISECTD_REPORT_REPORT_H
#define BISECTD_REPORT_REPORT_H

#include <stddef.h>

#include "bisectd/analysis/fit.h"

struct json_t;

/* A figure in ms with its 95% interval; NAN where there is none. */
struct report_ms {
	double value, lo, hi;
};

/* The chosen model's cost per token at a fit length. */
struct report_cost_at {
	long long tokens;
	struct report_ms ms;
};

/*
 * A release's fit, time = fixed + per_token * tokens (or the curve's
 * costs at each length), and the throughput it leaves as a ceiling.
 * Strings are borrowed: from the builder's figures, or from the JSON
 * the report was read from.
 */
struct report_fit {
	int ok;				/* 0: no fit; the rest NAN */
	struct report_ms per_token;	/* the line's slope */
	int curve;			/* the model: 1 curve, 0 line */
	struct report_cost_at cost_at[FIT_MAX_CELLS];	/* ascending */
	size_t ncost_at;
	struct report_ms fixed;
	const char *fixed_not_estimable;	/* why; "": it is */
	const char *fit_hint;		/* NULL: none */
	struct report_ms ceiling;	/* tok/s */
	/* Measured faster than the ceiling allows, and by how much: the
	 * ceiling is then NAN. */
	const char *ceiling_contradicted;	/* "": not */
	double ceiling_tokens;		/* the curve's peak; NAN: none */
};

/* The boundary's interleaved confirmation runs of a cell ("confirm"). */
struct report_confirm {
	int ok;			/* 0: none (the key left out) */
	double tps;
	long long n;		/* runs */
	double ms, ms_sd;
	long long samples;
};

/*
 * A cell of a release: its throughput with the spread between runs and
 * n, its time, and the spread inside a run.  Missing figures are NAN,
 * never zero.
 */
struct report_cell {
	int ok;			/* 0: too few runs for a figure (null) */
	double tps, sd;		/* tok/s, between runs */
	long long n;		/* runs */
	double cv;
	double ms, ms_sd, ms_median;
	long long samples;
	double ms_sd_between, ms_sd_within, cv_within;
	int lower_bound;	/* a run hit its time limit */
	long long throttled_runs;	/* 0: none (the key left out) */
	struct report_confirm confirm;
};

enum report_group { REPORT_PP, REPORT_TG };

/* A cell with its place: group pp (prefill) or tg (decode), and its
 * key there, "512" or "128/prose". */
struct report_cell_at {
	enum report_group group;
	char key[96];
	struct report_cell c;
};

/* A release's energy figures at one prompt length (docs/gpu.md). */
struct report_energy {
	char tokens[16];	/* the prompt length, as the JSON keys it */
	double energy_j;	/* the median joules of a run */
	double tokens_per_j;
	long long runs;		/* runs with an energy figure */
};

/* A release's GPU figures over its analysed runs (docs/gpu.md). */
struct report_gpu {
	int ok;			/* 0: none read (the key left out) */
	long long runs, throttled_runs;
	double sm_mhz;		/* median SM clock; NAN: none read */
	long long mem_peak_bytes;	/* above the baseline; -1: not read */
	struct report_energy pp[FIT_MAX_CELLS];
	size_t npp;
};

/* A figure of a release under load: the mean over its runs (one server
 * start each) with the t interval over runs, their spread and n. */
struct report_summary {
	double value, lo, hi;	/* NAN: none; lo, hi NAN for one run */
	double sd;
	long long n;		/* runs */
};

/* A latency figure of a release under load, "ttft-p50" ... (ms). */
struct report_serve_figure {
	char name[16];
	struct report_summary s;
};

/* Failed requests of one type over a release's runs. */
struct report_request_errors {
	char type[16];		/* "refused", "timeout" ... */
	long long count;
};

/* A release's figures under load (docs/serve.md), in serve mode. */
struct report_serve {
	int ok;			/* 0: none (the key left out) */
	long long runs, failed_runs, client_bound_runs;
	struct report_serve_figure *figures;	/* malloced */
	size_t nfigures;
	struct report_summary req_per_s, out_tok_per_s, goodput_per_s,
	    goodput_share, lag_p99_ms;
	struct report_request_errors *errors;	/* malloced */
	size_t nerrors;
};

/* The load a serve-mode report measured under, and its targets. */
struct report_serve_profile {
	int ok;			/* 0: not serve mode (the key left out) */
	const char *arrival;	/* "concurrency", "poisson" ... */
	const char *dialect;
	double concurrency, rate, warmup;
	int has_requests;	/* a run ends after requests, not after
				 * duration_ms */
	double requests, duration_ms;
	long long *prompt, *output;	/* lengths; malloced */
	size_t nprompt, noutput;
	double slo_ttft_ms, slo_tpot_ms;	/* NAN: no target */
	double max_lag_ms;
};

/* A failed run of a release, or its failed fetch. */
struct report_failure {
	const char *reason;	/* "fetch", or the run's failure */
	const char *detail;
	long long run;		/* the run's id; -1: no run (a fetch) */
};

/* More flags than a release's entry can raise. */
#define REPORT_MAX_FLAGS 16

/*
 * A release's entry (docs/report.md "releases").  Strings are borrowed,
 * as report_fit's.  The parts not typed yet are kept as JSON: the plot
 * (points, fit_band), the commit and the canary; a reference each, NULL
 * when the entry has none.
 */
struct report_release {
	const char *version;
	const char *sha256;		/* the archive's; NULL: none */
	long long throttled_runs;	/* 0: none (the key left out) */
	struct report_fit fit;
	struct report_gpu gpu;
	const char *status;	/* measured, failed, not-measured, skipped */
	struct report_cell_at *cells;	/* pp first, as measured; malloced */
	size_t ncells;
	const char *flags[REPORT_MAX_FLAGS];	/* "noisy", "busy" ... */
	size_t nflags;
	struct report_failure *failures;	/* malloced */
	size_t nfailures;
	/* Measured once with the first release of the same archive. */
	const char *same_archive_as;	/* NULL: its own */
	int has_metric;		/* the verdict was judged on its runs */
	int metric_bytes;	/* the metric is a memory: metric holds bytes
				 * ("metric_bytes"), not ms ("metric_ms") */
	struct report_ms metric;	/* the verdict's metric of it */
	struct report_serve serve;	/* read only: serve_lines.c builds
					 * its JSON */
	struct json_t *fit_band, *points, *commit, *canary;
};

/* A metric's change between two releases of the range: what else
 * changed (docs/report.md). */
struct report_change {
	const char *from, *to;	/* the pair's versions */
	char metric[96];	/* "per-token", "pp512", "tg32/prose" ... */
	char what[128];		/* in words */
	const char *unit;	/* "ms/token", "ms", "tok/s", "bytes" */
	/* A time's change positive when slower, a throughput's when
	 * faster; NAN: none, or no bound there. */
	double change, lo, hi;
	const char *moved;	/* against half the threshold: "slower",
				 * "faster", "unchanged", "unsure" */
	int searched;		/* the metric the bisect searched */
	char *bisect;		/* the command that searches it; NULL:
				 * none; malloced */
};

/* The machine the runs compared were measured on. */
struct report_machine {
	int ok;			/* 0: none known (an empty object) */
	const char *cpu_model, *arch, *kernel, *os, *hw_key;
	const char *hostname;	/* NULL: left out, for upstream */
	long long cores, mem_bytes;
};

/* A relative change (0.05: 5% slower) with its 95% interval; NAN where
 * there is none. */
struct report_rel {
	double value, lo, hi;
};

/* A commit of the range (docs/report.md "verdict.commit"). */
struct report_commit {
	int ok;			/* 0: none (the key left out) */
	const char *id, *short_id, *subject, *author, *date;
	const char *url;	/* NULL: no link */
	const char *build;	/* "built", "failed", "not built" */
};

/* A change point: its boundary pair, its kind, the metric's change. */
struct report_point {
	const char *first_bad, *last_good;	/* "": none */
	const char *kind;	/* "per-token" ... "output"; "": none */
	int confirmed;
	struct report_rel metric_change;
};

/* "Times slower" at a prompt length, first bad over last good. */
struct report_ratio {
	char tokens[16];	/* the prompt length, as the JSON keys it */
	double value, lo, hi;	/* NAN: none */
};

/* A step between consecutive measured releases of a slide. */
struct report_step {
	const char *from, *to;
	struct report_rel change;
};

/* The slide of a gradual verdict. */
struct report_gradual {
	int ok;			/* 0: not gradual (the key left out) */
	const char *from, *to;	/* the span: from is before it */
	size_t nreleases;	/* the releases it spreads over */
	struct report_rel total, per_release;
	const char **between;	/* measured inside it; malloced */
	size_t nbetween;
	struct report_step *steps;	/* largest first; malloced */
	size_t nsteps;
};

/* Where an unknown verdict stopped. */
struct report_inconclusive {
	int ok;			/* 0: none (the key left out) */
	const char *from, *to;
	struct report_rel change;
};

/* The sides' median SM clocks, where both were read. */
struct report_clocks {
	int ok;			/* 0: not both read; the rest NAN */
	const char *good, *bad;	/* the versions compared */
	double good_sm_mhz, bad_sm_mhz;
	int differ;		/* more than 1% apart */
};

/* The drill-down from the release boundary into its commits. */
struct report_drill {
	int ok;			/* 0: none (the key left out) */
	const char *range, *status, *reason;	/* "": none */
};

/* The first tokens two canary texts differ in. */
struct report_diff {
	int ok;			/* 0: none (the key left out) */
	long long token;
	const char *before, *after;
};

/*
 * The report's verdict (docs/report.md "verdict"): the main change point
 * at its top, every change point, the slide of a gradual one, where an
 * unknown stopped and the power.  Strings are borrowed, as report_fit's;
 * a string missing is "", a number NAN.
 */
struct report_verdict {
	int ok;			/* 0: the report has none */
	const char *status;	/* regression, gradual, no-regression,
				 * unknown */
	const char *reason;
	struct report_point change;	/* the main one's */
	const char **candidates;	/* ascending; malloced */
	size_t ncandidates;
	double endpoints_change;
	/* The pair's fit: the deltas, the ratios and their trend. */
	int has_deltas;		/* 0: none (per_token_delta_ms left out) */
	struct report_ms per_token_delta, fixed_delta;
	const char *fixed_not_estimable;	/* why; "": it is */
	struct report_ratio *ratios;	/* ascending length; malloced */
	size_t nratios;
	const char *ratio_trend;
	struct report_point *points;	/* malloced */
	size_t npoints;
	struct report_gradual gradual;
	struct report_inconclusive inconclusive;
	/* Power: what a "no" could have seen, what an "unknown" lacks. */
	double detectable_change;	/* NAN: not said */
	long long runs_per_release;	/* 0: not said */
	int more_runs_said;	/* 0: more_runs_per_release left out */
	long long more_runs;	/* -1: none would decide it (null) */
	struct report_clocks clocks;
	/* A commit range's, or the drill-down's. */
	struct report_commit commit;	/* the first bad one */
	int has_candidate_commits;	/* the key there, even empty */
	struct report_commit *candidate_commits;	/* malloced */
	size_t ncandidate_commits;
	struct report_drill drill_down;
	/* The output canary's: the texts' hashes and first difference. */
	const char *last_good_sha256, *first_bad_sha256;
	struct report_diff diff;
};

/* An archive the reproduce lines fetch. */
struct report_archive {
	const char *version, *url, *sha256;	/* "": none */
};

/* A cell's command line, as its runs executed it. */
struct report_run_line {
	const char *version;
	const char *cell;	/* "pp512" */
	const char *command;
};

/* How to reproduce the verdict (docs/report.md "reproduce"). */
struct report_reproduce {
	struct report_archive *archives;	/* malloced */
	size_t narchives;
	const char **commands;		/* bisectctl's; malloced */
	size_t ncommands;
	struct report_run_line *runs;	/* malloced */
	size_t nruns;
};

/* An engine build the report compared, as the engine told of it. */
struct report_build {
	const char *version;
	const char *build_commit;	/* NULL: not reported */
	long long build_number;		/* -1: not reported */
	const char *backend;		/* NULL: not reported */
};

/*
 * What a maintainer asks for first (report --for-upstream, the
 * report's "about"): the builds of the boundary pair (or the ends), the
 * model, the runs' settings, the CPU.  A size or count not reported is
 * -1.
 */
struct report_about {
	int ok;			/* 0: none (not for upstream) */
	const char *bisectd;	/* its version */
	struct report_build *builds;	/* malloced */
	size_t nbuilds;
	const char *model_type;		/* NULL: not reported */
	const char *weights;
	long long size_bytes, file_bytes, params;
	long long threads;	/* -1: the engine's default */
	long long reps, max_reps, warmup;
	const char *cpu_model;
	const char *cpu_flags;	/* NULL: not reported */
};

/*
 * What the renderers read of a report so far: what it is of (the head),
 * its releases, what else changed, the verdict, how to reproduce it,
 * the "about" for upstream and the serve figures.  Strings are
 * borrowed, as report_fit's.  releases[i] is the JSON's "releases"[i].
 */
struct report {
	const char *engine;
	int commits;		/* its points are commits, not releases */
	const char *from, *to;	/* the range's ends */
	const char *metric;	/* the bisected metric: "per-token", "pp512",
				 * "output" (the canary) ... */
	double threshold;	/* the slowdown a bisect must find */
	const char *shape_unknown;	/* why the fit cannot show the
					 * shape; NULL: it can */
	int serve;		/* a serve engine's: no fit, its figures its
				 * load's ("serve_profile") */
	struct report_machine machine;
	/* On Slurm, the times the bisect lost its node (docs/report.md),
	 * as JSON; NULL when not on Slurm.  A reference. */
	struct json_t *reanchored;
	const char *weights, *weights_sha256;	/* sha256 NULL: not pinned */
	struct report_release *releases;	/* malloced */
	size_t nreleases;
	/* Every metric's change between the ends, then across each change
	 * point; none for the canary's verdict (has_changes 0). */
	int has_changes;
	struct report_change *changes;		/* malloced */
	size_t nchanges;
	struct report_verdict verdict;
	struct report_reproduce reproduce;
	struct report_about about;
	struct report_serve_profile serve_profile;
};

/* "pp" or "tg". */
const char *report_group_name(enum report_group g);

/* The head of report r, every member before its releases, with an empty
 * "releases": a new reference, NULL when out of memory. */
struct json_t *report_head_json(const struct report *r);

/* The changes of r as the report's "what_else_changed": a new
 * reference. */
struct json_t *report_changes_json(const struct report *r);

/* The release's entry r as its JSON object: a new reference, NULL when
 * out of memory. */
struct json_t *report_release_json(const struct report_release *r);

/* Whether any release of rp has a canary. */
int report_has_canary(const struct report *rp);

/* Whether r carries the flag. */
int report_release_flagged(const struct report_release *r, const char *flag);

/* Drop r's references and memory; r is empty after. */
void report_release_clear(struct report_release *r);

/*
 * The typed parts of the report's JSON rep (escaped or not, as
 * report/text_escape.h makes it) into *out; free with report_clear().
 * Returns 0, or -1 when out of memory (then *out is empty).
 */
int report_read(const struct json_t *rep, struct report *out);
void report_clear(struct report *r);

/* A commit's object (a release's "commit", kept as JSON) into *c. */
void report_commit_read(const struct json_t *o, struct report_commit *c);

/* The figure named name ("ttft-p50") of s; all NAN when s has none. */
const struct report_summary *report_serve_figure(const struct report_serve *s,
    const char *name);

/* The cell of group g under key in r; NULL when r has none. */
const struct report_cell *report_release_cell(const struct report_release *r,
    enum report_group g, const char *key);

#endif
