/*
 * ctl_compare.c: bisectctl compare: engines measured side by side on
 * this machine, their runs interleaved (acquire/league_run.h), ranked
 * (report/league.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/acquire/league_run.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/report/league.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"
#include "store/store.h"

/* The engine of operand arg and its version: the one after '@', or its
 * newest stored (else listed) release.  0, or the exit code, said. */
static int
resolve(struct ctl *c, struct store *s, const char *arg, struct league_entrant *x)
{
	const char *at = strchr(arg, '@');
	char name[256];
	struct acquire a;
	struct err e = ERR_INIT;

	snprintf(name, sizeof(name), "%.*s", at ? (int)(at - arg) :
	    (int)strlen(arg), arg);
	if ((x->eng = ctl_engine(c, name)) == NULL)
		return EXIT_USAGE;
	if (at && at[1] == '\0')
		return ctl_usage_error("'%s': no version after '@'", arg);
	if (at)
		x->version = strdup(at + 1);
	else if (acquire_init(&a, c->conf, x->eng, s, &e) < 0 ||
	    acquire_newest(&a, 0, &x->version, &e) < 0)
		return ctl_failed(&e);
	return x->version ? 0 : ctl_error("out of memory");
}

int
cmd_compare(struct ctl *c)
{
	struct league_entrant x[BENCH_MAX_TARGETS];
	struct benchlock lock = BENCHLOCK_INIT;
	struct bench_tally tally;
	struct league l;
	struct store *s;
	struct err e = ERR_INIT;
	size_t nx = (size_t)c->argc;
	int rc = EXIT_OK;

	if (nx > BENCH_MAX_TARGETS)
		return ctl_usage_error("at most %d engines at once",
		    BENCH_MAX_TARGETS);
	memset(x, 0, sizeof(x));
	memset(&l, 0, sizeof(l));
	memset(&tally, 0, sizeof(tally));
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	for (size_t i = 0; i < nx && rc == EXIT_OK; i++)
		rc = resolve(c, s, c->argv[i], &x[i]);
	if (rc != EXIT_OK)
		goto done;
	if (ctl_local_begin(c, s, &lock, "bisectctl compare (%zu engines)",
	    nx) != 0) {
		s = NULL;
		rc = EXIT_FAIL;
		goto done;
	}
	for (size_t i = 0; i < nx; i++) {
		x[i].j.progress = ctl_on_progress;
		x[i].j.download = ctl_on_download;
		x[i].j.stop = &ctl_stop;
	}
	rc = league_measure(c->conf, s, x, nx, c->reps, &tally, &e);
	ctl_end_line();
	if (rc < 0)
		rc = ctl_failed(&e);
	benchlock_release(&lock);
	if (rc != EXIT_OK)
		goto done;
	if ((l.v = calloc(nx, sizeof(*l.v))) == NULL) {
		rc = ctl_error("out of memory");
		goto done;
	}
	for (size_t i = 0; i < nx && rc == EXIT_OK; i++, l.n++)
		if (league_entry(&l, i, s, x[i].eng, x[i].version,
		    x[i].j.release_id, x[i].j.weights_sha256, x[i].j.hw_key,
		    &e) < 0)
			rc = ctl_error("%s", e.msg);
	if (rc != EXIT_OK)
		goto done;
	league_rank(&l);
	league_print(&l, ctl_report_format(c), stdout);
	if (tally.failed > 0)
		rc = ctl_error("%d of %d runs failed; the last: %s (see "
		    "'bisectctl runs ENGINE VERSION')", tally.failed, tally.runs,
		    tally.last_failure);
	else if (tally.busy > 0)
		fprintf(stderr, "bisectctl: %d runs started on a busy machine "
		    "and are flagged busy\n", tally.busy);
done:
	league_free(&l);
	for (size_t i = 0; i < nx; i++)
		league_entrant_release(&x[i]);
	if (s)
		store_close(s);
	return rc;
}
