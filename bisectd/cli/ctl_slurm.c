/*
 * ctl_slurm.c: the measurements placed on Slurm, as `bisectctl status`
 * shows them: each job's Slurm id, state, node and age, from the store.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/jobs/status.h"
#include "common/err.h"
#include "ctl.h"
#include "store/store.h"

static void
age_text(json_int_t s, char *buf, size_t len)
{
	if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", (long long)s / 60);
	else
		snprintf(buf, len, "%lldh", (long long)s / 3600);
}

static const char *
str(const json_t *o, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? ctl_safe(v) : dflt;
}

int
ctl_slurm_status(struct store *s)
{
	struct err e = ERR_INIT;
	json_t *a, *j;
	size_t i;

	if (status_slurm_json(s, time(NULL), &a, &e) < 0)
		return ctl_failed(&e);
	json_array_foreach(a, i, j) {
		char age[32];

		if (i == 0)
			printf("slurm jobs:\n%8s  %-6s %-10s %-10s %-12s %5s  "
			    "%s\n", "SLURM", "JOB", "ENGINE", "STATE", "NODE",
			    "AGE", "NOTE");
		age_text(json_integer_value(json_object_get(j, "age_s")), age,
		    sizeof(age));
		printf("%8lld  %-6lld %-10s %-10s %-12s %5s  %s%s\n",
		    (long long)json_integer_value(json_object_get(j,
		    "slurm_id")), (long long)json_integer_value(
		    json_object_get(j, "job")), str(j, "engine", "-"),
		    str(j, "state", "-"), str(j, "node", "-"), age,
		    str(j, "failure", ""), json_integer_value(json_object_get(j,
		    "attempt")) > 1 ? " (resubmitted)" : "");
	}
	json_decref(a);
	return EXIT_OK;
}
