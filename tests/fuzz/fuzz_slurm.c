/*
 * fuzz_slurm.c: what the daemon reads of Slurm's tools
 * (bisectd/remote/slurm_parse.c).  The input is taken as each answer in
 * turn: what `sbatch --parsable` printed, a line of `scontrol show job
 * -o`, squeue's job lines and one of `scontrol show node -o`.
 *
 * Properties: a job id taken is the digits the answer starts with, no
 * sign, blank or overflow, ended by a newline, ';' or the end; the
 * state, node and reason of a job and the reason a node is down are
 * valid UTF-8 without a control byte or C1 control, within their
 * buffers; a job's field holds no blank and is never "(null)" or
 * "None"; job 42 is found in squeue's lines exactly when one starts with
 * its id; a node is down exactly when its State says DRAIN, DOWN or
 * FAIL, and its reason names it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/remote/slurm.h"
#include "common/utf8.h"
#include "fuzz.h"

#define NODE	"node07"
#define WHY	"node " NODE " is "

/* s, within size bytes, is printable UTF-8 text. */
static void
check_text(const char *what, const char *s, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, size);
	uint32_t cp;

	if (n == size)
		fuzz_fail("%s is not NUL-terminated in its %zu bytes", what,
		    size);
	for (size_t i = 0, k; i < n; i += k) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			fuzz_fail("%s '%s' holds control byte 0x%02x", what, s,
			    p[i]);
		if ((k = utf8_decode(p + i, n - i, &cp)) == 0)
			fuzz_fail("%s holds byte 0x%02x, not UTF-8", what,
			    p[i]);
		if (cp >= 0x80 && cp <= 0x9f)
			fuzz_fail("%s holds C1 control U+%04x", what,
			    (unsigned)cp);
	}
}

static void
check_jobid(const char *text)
{
	size_t n = strspn(text, "0123456789");
	int64_t id = 0, want = 0;

	if (slurm_parse_jobid(text, &id) < 0)
		return;
	if (n == 0 || (text[n] != '\n' && text[n] != ';' && text[n] != '\0'))
		fuzz_fail("job id %lld taken from '%.40s', which does not "
		    "start with digits alone", (long long)id, text);
	for (size_t i = 0; i < n; i++) {
		if (want > (INT64_MAX - (text[i] - '0')) / 10)
			fuzz_fail("job id %lld taken from '%.*s', past int64",
			    (long long)id, (int)n, text);
		want = want * 10 + (text[i] - '0');
	}
	if (id <= 0 || id != want)
		fuzz_fail("job id %lld taken from '%.*s'", (long long)id,
		    (int)n, text);
}

static void
check_field(const char *what, const char *key, const char *v, size_t size,
    const char *text)
{
	check_text(what, v, size);
	if (v[0] == '\0')
		return;
	if (strstr(text, key) == NULL)
		fuzz_fail("%s '%s' without %s in the answer", what, v, key);
	if (strpbrk(v, " \n") != NULL)
		fuzz_fail("%s '%s' holds a blank", what, v);
	if (strcmp(v, "(null)") == 0 || strcmp(v, "None") == 0)
		fuzz_fail("%s '%s' kept", what, v);
}

static void
check_job(const char *text)
{
	struct slurm_state st;

	memset(&st, 0x55, sizeof(st));
	slurm_parse_job(text, &st);
	check_field("JobState", " JobState=", st.state, sizeof(st.state),
	    text);
	check_field("NodeList", " NodeList=", st.node, sizeof(st.node), text);
	check_field("Reason", " Reason=", st.reason, sizeof(st.reason), text);
}

/* squeue's lines: job 42's fields as text, or none when no line is its. */
static void
check_queue(const char *text)
{
	struct slurm_state st;
	int found;

	memset(&st, 0x55, sizeof(st));
	found = slurm_parse_queue(text, 42, &st);
	if (found != (strncmp(text, "JobId=42 ", 9) == 0 ||
	    strstr(text, "\nJobId=42 ") != NULL))
		fuzz_fail("job 42 %s, yet the text %s its line",
		    found ? "found" : "not found", found ? "lacks" : "holds");
	check_text("JobState", st.state, sizeof(st.state));
	check_text("NodeList", st.node, sizeof(st.node));
	check_text("Reason", st.reason, sizeof(st.reason));
	if (!found && (st.state[0] || st.node[0] || st.reason[0]))
		fuzz_fail("job 42 not found, yet its fields are set");
}

static void
check_node(const char *text, size_t len)
{
	char *why = malloc(len), state[128];
	const char *p = strstr(text, " State=");
	int down;

	if (why == NULL)
		abort();
	memset(why, 0x55, len);
	state[0] = '\0';
	if (p != NULL)
		snprintf(state, sizeof(state), "%.*s", (int)strcspn(p + 7,
		    " \n"), p + 7);
	down = slurm_parse_node(text, NODE, why, len);
	if (down != (strstr(state, "DRAIN") || strstr(state, "DOWN") ||
	    strstr(state, "FAIL")))
		fuzz_fail("node %s down, yet its State is '%s'",
		    down ? "said" : "not said", state);
	if (down) {
		check_text("why the node is down", why, len);
		if (strncmp(why, WHY, strnlen(why, len) < strlen(WHY) ?
		    strnlen(why, len) : strlen(WHY)) != 0)
			fuzz_fail("why the node is down '%s' does not name it",
			    why);
		if (why[0] != '\0' && why[strlen(why) - 1] == ' ')
			fuzz_fail("why the node is down '%s' ends in a blank",
			    why);
	}
	free(why);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);

	check_jobid(text);
	check_job(text);
	check_queue(text);
	/* The buffer pinned_gone() gives, and one that cuts the text. */
	check_node(text, 512);
	check_node(text, 1 + size % 40);
	free(text);
	return 0;
}
