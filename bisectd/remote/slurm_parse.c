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

#include "common/utf8.h"
#include "slurm.h"

/* The longest job id taken: 18 digits cannot pass INT64_MAX. */
#define JOBID_DIGITS	18

/*
 * The n bytes at p into dst (size > 0 bytes) as text the store, the
 * status JSON and a terminal all carry: a control byte, a C1 control
 * or a byte that is no part of a UTF-8 character as \xHH, cut before
 * the first character or escape that does not fit.  An administrator's
 * drain reason is free text, in whatever encoding their terminal had.
 */
static void
text_copy(char *dst, size_t size, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t o = 0, k;
	uint32_t cp;

	for (size_t i = 0; i < n; i += k) {
		k = utf8_decode(u + i, n - i, &cp);
		if (k == 0 || cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp <= 0x9f)) {
			if (k == 0)
				k = 1;
			if (o + 4 * k >= size)
				break;
			for (size_t j = 0; j < k; j++)
				o += (size_t)snprintf(dst + o, 5, "\\x%02x",
				    u[i + j]);
		} else {
			if (o + k >= size)
				break;
			memcpy(dst + o, p + i, k);
			o += k;
		}
	}
	dst[o] = '\0';
}

int
slurm_parse_jobid(const char *out, int64_t *id)
{
	size_t n = strspn(out, "0123456789");
	int64_t v = 0;

	/* --parsable: "ID" or "ID;CLUSTER", the ID digits alone: strtoll()
	 * took " +12" and clamped 20 digits to INT64_MAX, another job. */
	if (n == 0 || n > JOBID_DIGITS ||
	    (out[n] != '\n' && out[n] != ';' && out[n] != '\0'))
		return -1;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (out[i] - '0');
	if (v == 0)
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
		text_copy(dst, fields[i].len, p, n);
		if (strcmp(dst, "(null)") == 0 || strcmp(dst, "None") == 0)
			dst[0] = '\0';
	}
}

int
slurm_parse_queue(const char *out, int64_t id, struct slurm_state *st)
{
	char want[40], line[1024];

	memset(st, 0, sizeof(*st));
	snprintf(want, sizeof(want), "JobId=%lld ", (long long)id);
	for (const char *p = out; *p; ) {
		size_t n = strcspn(p, "\n");

		if (strncmp(p, want, strlen(want)) == 0) {
			/* A leading blank: every field after one, as in
			 * scontrol's one line. */
			snprintf(line, sizeof(line), " %.*s", (int)(n <
			    sizeof(line) - 2 ? n : sizeof(line) - 2), p);
			slurm_parse_job(line, st);
			return 1;
		}
		p += n;
		if (*p == '\n')
			p++;
	}
	return 0;
}

int
slurm_parse_node(const char *out, const char *node, char *why, size_t len)
{
	const char *p, *reason;
	char state[128], text[1024];
	size_t n;
	int down;

	state[0] = '\0';
	if ((p = strstr(out, " State=")) != NULL)
		snprintf(state, sizeof(state), "%.*s", (int)strcspn(p + 7,
		    " \n"), p + 7);
	down = strstr(state, "DRAIN") || strstr(state, "DOWN") ||
	    strstr(state, "FAIL");
	if (!down || len == 0)
		return down;
	reason = strstr(out, " Reason=");
	n = (size_t)snprintf(text, sizeof(text), "node %s is %s%s%.*s", node,
	    state, reason ? ": " : "", reason ? (int)strcspn(reason + 8,
	    "\n[") : 0, reason ? reason + 8 : "");
	text_copy(why, len, text, n < sizeof(text) ? n : sizeof(text) - 1);
	/* "Reason=text [root@...]": the text alone, trimmed */
	for (n = strlen(why); n > 0 && why[n - 1] == ' '; n--)
		why[n - 1] = '\0';
	return down;
}
