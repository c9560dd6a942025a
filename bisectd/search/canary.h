/*
 * canary.h: the output canary over a release range.  Which release first
 * generates text that differs from the good end's, judged from the store
 * alone (report, bisect --now and the daemon's jobs judge alike), and the
 * driver that measures one canary pair per probe until it is known, as
 * git bisect does for a yes/no property: texts are compared exactly, so
 * no statistics are needed.  A release that cannot be fetched, whose
 * canary fails or whose two runs differ is skipped.
 */
#ifndef BISECTD_SEARCH_CANARY_H
#define BISECTD_SEARCH_CANARY_H

#include <stdatomic.h>
#include <stddef.h>

#include "bisectd/analysis/bisect.h"
#include "bisectd/measure/canary.h"
#include "range.h"

struct acquire;
struct conf;
struct conf_engine;
struct pinned_weights;
struct err;
struct json_t;
struct store;

/* The canary definition key of eng's releases under this weights hash
 * and machine; "" when the prompt was never pinned (nothing measured). */
int canary_definition_key(struct store *s, const struct conf_engine *eng,
    const char *weights_sha256, const char *hw_key, char key[65],
    struct err *e);

struct canary_judgement {
	size_t n;			/* releases lo..hi */
	struct canary_status *st;	/* per release; malloced */
	enum flag_state *flags;		/* per release; malloced */
	int done;			/* 1: status, boundary below */
	int probe;			/* not done: the release to measure
					 * next (index in the range), or -1
					 * when none can be */
	enum bisect_status status;
	int exit_code;			/* 0, 3, 4, or 1: an end cannot be
					 * judged */
	struct flag_step step;		/* done with a change: the answer */
	char reason[600];
};

/* Judge releases r->lo..r->hi from the canary runs the store holds
 * under def_key.  Returns 0 with *j filled (free it with
 * canary_judgement_release()), or -1 with e set. */
int canary_judge(struct store *s, const struct range *r, const char *def_key,
    struct canary_judgement *j, struct err *e);
void canary_judgement_release(struct canary_judgement *j);

/* The report's "verdict" object for the output metric.  New reference. */
struct json_t *canary_judgement_json(const struct canary_judgement *j,
    const struct range *r);

/* What measuring canaries needs once: the engine's source, the pinned
 * weights and prompt, this machine and the definition key. */
struct canary_session {
	struct acquire *acq;		/* malloced */
	struct pinned_weights *w;	/* malloced */
	struct canary_prompt prompt;
	struct canary_ctx k;
	int64_t engine_id;
	char hw[65];
	char key[65];
};

int canary_session_open(const struct conf *conf,
    const struct conf_engine *eng, struct store *s, const atomic_int *stop,
    struct canary_session *x, struct err *e);
void canary_session_close(struct canary_session *x);

/*
 * Fetch version if needed and run its canary pair if the store lacks it.
 * Returns 0 and *st (release with canary_status_release()), 1 when the
 * release cannot be fetched (the store keeps why; fe says it), or -1
 * with e set.
 */
int canary_session_measure(struct canary_session *x, const char *version,
    struct canary_status *st, struct err *fe, struct err *e);

/*
 * Record the alert that version generates different text from since on
 * the canary prompt, once per engine, pair and canary definition (the
 * dedup key).  faster_by > 0: the version is also that much faster
 * (0.3: 30%) on metric, said in the same line.  Returns 0 when recorded,
 * 1 when alerted before, -1.
 */
int canary_alert(struct store *s, const struct conf_engine *eng,
    const char *def_key, const char *since, const struct canary_status *a,
    const char *version, const struct canary_status *b, double faster_by,
    const char *metric, struct err *e);

struct canary_opts {
	void (*note)(void *arg, const char *line);	/* probe log lines */
	void *arg;
	const atomic_int *stop;
};

/*
 * Bisect spec ("GOOD..BAD") of eng for the first release whose canary
 * text differs from GOOD's, one canary pair per probe.  On 0, *exit_code
 * is the judgement's (0 no change, 3 a change, 4 unknown, 1 an end that
 * cannot be judged) and *verdict (when not NULL) its JSON, a new
 * reference.  Returns -1 with e set when the tool or the infrastructure
 * failed.
 */
int canary_bisect(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, const char *spec, const struct canary_opts *o,
    struct json_t **verdict, int *exit_code, struct err *e);

#endif
