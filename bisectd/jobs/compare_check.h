/*
 * compare_check.h: a [compare "NAME"] section's scheduled check: the
 * league table of bisectctl compare measured again (the engines' runs
 * interleaved), its leaders on prefill and on decode kept, and an alert
 * when another engine now leads either beyond the noise.  The field
 * report's last rule: the yardstick had quietly been overtaken.
 */
#ifndef BISECTD_COMPARE_CHECK_H
#define BISECTD_COMPARE_CHECK_H

#include <stdint.h>

#include "watch.h"

struct conf;
struct conf_compare;
struct err;
struct store;

/*
 * When k is next due (epoch seconds): its last check plus its every, or
 * now when it was never checked.  0 with *when set, or -1.
 */
int compare_check_next(struct store *s, const struct conf_compare *k,
    int64_t *when, struct err *e);

/*
 * Measure k's engines (each at its release, else its newest), rank them,
 * and compare each side's leader (the entry first alone) with the last
 * one kept: another engine leading records an alert (kind "compare",
 * once per new leader and release; an engine is one entry, whatever its
 * release).  The first check, or a side whose
 * first place is shared, alerts nothing; a side's last leader is kept
 * until another leads alone.  A failed run fails the check: a failure
 * never passes for a slower engine.  The table's JSON goes to *league
 * when league is not NULL (new reference).  Returns 0 (same leaders),
 * 3 (an alert), or -1 with e set.
 */
int compare_check_run(const struct conf *c, struct store *s,
    const struct watch_opts *o, const struct conf_compare *k,
    struct json_t **league, struct err *e);

#endif
