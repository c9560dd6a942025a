/*
 * ctl_slurm.c: the measurements placed on Slurm, as `bisectctl status`
 * shows them: each job's Slurm id, state, node and age, from the store.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/err.h"
#include "ctl.h"
#include "store/store.h"

/* Ended jobs shown after those in flight. */
#define CTL_SLURM_ENDED 5

static void
age_text(int64_t since, time_t now, char *buf, size_t len)
{
	long long s = now > since ? (long long)(now - since) : 0;

	if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", s / 60);
	else
		snprintf(buf, len, "%lldh", s / 3600);
}

/* Which rows to show: all in flight, then the newest ended ones. */
static int
shown(const struct store_slurm_jobs *l, size_t i)
{
	size_t later_ended = 0;

	if (strcmp(l->v[i].state, "ingested") != 0 &&
	    strcmp(l->v[i].state, "failed") != 0)
		return 1;
	for (size_t k = i + 1; k < l->n; k++)
		later_ended += strcmp(l->v[k].state, "ingested") == 0 ||
		    strcmp(l->v[k].state, "failed") == 0;
	return later_ended < CTL_SLURM_ENDED;
}

int
ctl_slurm_status(struct store *s, json_t *into)
{
	struct store_slurm_jobs l;
	struct err e = ERR_INIT;
	time_t now = time(NULL);
	json_t *a = into ? json_array() : NULL;
	int header = 0;

	if (store_slurm_list(s, 0, 0, &l, &e) < 0)
		return ctl_error("%s", e.msg);
	for (size_t i = 0; i < l.n; i++) {
		const struct store_slurm_job *j = &l.v[i];
		char age[32];

		if (!shown(&l, i))
			continue;
		if (a) {
			json_array_append_new(a, json_pack("{s:I,s:s,s:I,s:s,"
			    "s:s?,s:s?,s:I,s:i,s:s?,s:s,s:s}",
			    "slurm_id", (json_int_t)j->slurm_id, "request",
			    j->request, "job", (json_int_t)j->job_id, "state",
			    j->state, "node", j->node, "failure", j->failure,
			    "age_s", (json_int_t)(now - j->submitted),
			    "attempt", j->attempt, "pinned", j->pinned,
			    "engine", j->engine, "runner", j->runner));
			continue;
		}
		if (!header++)
			printf("slurm jobs:\n%8s  %-6s %-10s %-10s %-12s %5s  "
			    "%s\n", "SLURM", "JOB", "ENGINE", "STATE", "NODE",
			    "AGE", "NOTE");
		age_text(j->submitted, now, age, sizeof(age));
		printf("%8lld  %-6lld %-10s %-10s %-12s %5s  %s%s\n",
		    (long long)j->slurm_id, (long long)j->job_id,
		    ctl_safe(j->engine), j->state, j->node ? ctl_safe(j->node) :
		    "-", age, j->failure ? j->failure : "", j->attempt > 1 ?
		    " (resubmitted)" : "");
	}
	if (a)
		json_object_set_new(into, "slurm_jobs", a);
	store_slurm_jobs_release(&l);
	return EXIT_OK;
}
