/*
 * ablate.h: an ablation with a positive control, as `bisectctl ablate`
 * and a daemon job run it: the release fetched and the weights pinned,
 * the baseline and each of the engine's [ablation] switches measured
 * interleaved on the fit lengths, every run stored tagged with its
 * variant, the verdict of analysis/ablate.h, and the report as JSON
 * (report/ablate_print.h renders it).
 */
#ifndef BISECTD_SEARCH_ABLATE_H
#define BISECTD_SEARCH_ABLATE_H

#include <stdatomic.h>
#include <stdint.h>

struct bench_progress;
struct conf;
struct conf_engine;
struct err;
struct json_t;
struct store;

struct ablate_opts {
	int64_t job_id;		/* 0: run by hand */
	void (*progress)(void *arg, const struct bench_progress *p);
	void *arg;
	const atomic_int *stop;	/* or NULL */
};

/*
 * Ablate version of eng (the caller holds the benchmark lock).  Returns
 * DESIGN.md's exit code with *report set (caller frees): 0 when the
 * control worked and the switches are judged, 4 when they look inert,
 * 2 when the control added time (the wrong switch for a control), 1
 * when the control could not be measured; or -1 with e set when it
 * could not run (no switches, the fetch, the store, a stop).
 */
int ablate_release(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *version, const struct ablate_opts *o,
    struct json_t **report, struct err *e);

/* The exit code of a stored report: as ablate_release() returns. */
int ablate_exit_code(const struct json_t *report);

#endif
