/*
 * slurm_parse.c: what bisectd reads of the answers of Slurm's tools (see
 * slurm.h): the job id `sbatch --parsable` prints, and the fields it
 * takes from one line of `scontrol show job -o` and `scontrol show node
 * -o`.  Pure, so a fuzzer reaches it without a cluster.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm.h"

int
slurm_parse_jobid(const char *out, int64_t *id)
{
	char *end;
	long long v = strtoll(out, &end, 10);

	/* --parsable: "ID" or "ID;CLUSTER". */
	if (v <= 0 || (*end != '\n' && *end != ';' && *end != '\0'))
		return -1;
	*id = v;
	return 0;
}

void
slurm_parse_job(const char *out, struct slurm_state *st)
{
	static const struct {
		const char *key;
		size_t off, len;
	} fields[] = {
		{ " JobState=", offsetof(struct slurm_state, state), 32 },
		{ " NodeList=", offsetof(struct slurm_state, node), 256 },
		{ " Reason=", offsetof(struct slurm_state, reason), 256 },
	};

	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++) {
		const char *p = strstr(out, fields[i].key);
		char *dst = (char *)st + fields[i].off;
		size_t n;

		if (p == NULL)
			continue;
		p += strlen(fields[i].key);
		n = strcspn(p, " \n");
		snprintf(dst, fields[i].len, "%.*s", (int)n, p);
		if (strcmp(dst, "(null)") == 0 || strcmp(dst, "None") == 0)
			dst[0] = '\0';
	}
}

int
slurm_parse_node(const char *out, const char *node, char *why, size_t len)
{
	const char *p;
	char state[128];
	int down;

	state[0] = '\0';
	if ((p = strstr(out, " State=")) != NULL)
		snprintf(state, sizeof(state), "%.*s", (int)strcspn(p + 7,
		    " \n"), p + 7);
	down = strstr(state, "DRAIN") || strstr(state, "DOWN") ||
	    strstr(state, "FAIL");
	if (down) {
		const char *reason = strstr(out, " Reason=");

		snprintf(why, len, "node %s is %s%s%.*s", node, state,
		    reason ? ": " : "", reason ? (int)strcspn(reason + 8,
		    "\n[") : 0, reason ? reason + 8 : "");
		/* "Reason=text [root@...]": the text alone, trimmed */
		while (strlen(why) > 0 && why[strlen(why) - 1] == ' ')
			why[strlen(why) - 1] = '\0';
	}
	return down;
}
