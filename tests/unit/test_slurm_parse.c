/*
 * test_slurm_parse.c: what the daemon reads of Slurm's tools
 * (bisectd/remote/slurm_parse.c): a job id is the digits sbatch printed
 * or nothing, and what scontrol says of a job or a node is kept as text
 * the store and the status JSON carry, however its administrator typed
 * it (found by fuzz_slurm).
 */
#include <stdint.h>
#include <string.h>

#include "bisectd/remote/slurm.h"
#include "check.h"
#include "common/utf8.h"

/* Whether s is UTF-8 throughout. */
static int
utf8_valid(const char *s)
{
	uint32_t cp;

	for (size_t i = 0, n = strlen(s), k; i < n; i += k)
		if ((k = utf8_decode((const unsigned char *)s + i, n - i,
		    &cp)) == 0)
			return 0;
	return 1;
}

static void
test_jobid(void)
{
	static const char *const refused[] = {
		"", "\n", "0\n", "-4\n", " 40\n", "+40\n", "4x\n", "x4\n",
		/* strtoll() clamped it to INT64_MAX: another job */
		"99999999999999999999\n", "1234567890123456789\n",
	};
	int64_t id = -1;

	CHECK_INT(slurm_parse_jobid("4242\n", &id), 0);
	CHECK_INT(id, 4242);
	CHECK_INT(slurm_parse_jobid("4243;cluster-a\n", &id), 0);
	CHECK_INT(id, 4243);
	CHECK_INT(slurm_parse_jobid("123456789012345678", &id), 0);
	CHECK(id == INT64_C(123456789012345678));
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		id = -1;
		CHECK_INT(slurm_parse_jobid(refused[i], &id), -1);
		CHECK_INT(id, -1);
	}
}

static void
test_job(void)
{
	struct slurm_state st;
	char line[1024], node[601];

	slurm_parse_job("JobId=4242 JobName=bisectd-01234567 JobState=PENDING "
	    "Reason=Resources Dependency=(null) ReqNodeList=node07 "
	    "NodeList=(null) WorkDir=/srv/spool\n", &st);
	CHECK_STR(st.state, "PENDING");
	CHECK_STR(st.node, "");
	CHECK_STR(st.reason, "Resources");
	slurm_parse_job("JobId=1 JobState=COMPLETED Reason=None "
	    "NodeList=node07\n", &st);
	CHECK_STR(st.state, "COMPLETED");
	CHECK_STR(st.node, "node07");
	CHECK_STR(st.reason, "");

	/* Bytes JSON cannot carry, and a control byte, written out. */
	slurm_parse_job("JobId=1 JobState=COMPLETED\xff Reason=a\tb\x1b[2J "
	    "NodeList=n\xc3\xa9\xc2\x85\n", &st);
	CHECK_STR(st.state, "COMPLETED\\xff");
	CHECK_STR(st.reason, "a\\x09b\\x1b[2J");
	CHECK_STR(st.node, "n\xc3\xa9\\xc2\\x85");

	/* A field past its buffer is cut at a character's end. */
	memset(node, 0, sizeof(node));
	for (size_t i = 0; i < 300; i++)
		memcpy(node + 2 * i, "\xc3\xa9", 2);
	snprintf(line, sizeof(line), "JobId=1 JobState=RUNNING NodeList=%s\n",
	    node);
	slurm_parse_job(line, &st);
	CHECK_INT(strlen(st.node), 254);
	CHECK(utf8_valid(st.node));
}

/* squeue's lines: the job's own, not another's whose id it begins. */
static void
test_queue(void)
{
	static const char out[] =
	    "JobId=42 JobState=RUNNING NodeList=node07 Reason=None\n"
	    "JobId=4242 JobState=PENDING NodeList= Reason=Resources\n"
	    "JobId=7 JobState=COMPLETED NodeList=node02 Reason=None";
	struct slurm_state st;

	CHECK_INT(slurm_parse_queue(out, 4242, &st), 1);
	CHECK_STR(st.state, "PENDING");
	CHECK_STR(st.node, "");
	CHECK_STR(st.reason, "Resources");
	CHECK_INT(slurm_parse_queue(out, 42, &st), 1);
	CHECK_STR(st.state, "RUNNING");
	CHECK_STR(st.node, "node07");
	CHECK_STR(st.reason, "");
	/* The last line, without its newline. */
	CHECK_INT(slurm_parse_queue(out, 7, &st), 1);
	CHECK_STR(st.state, "COMPLETED");
	CHECK_INT(slurm_parse_queue(out, 4, &st), 0);
	CHECK_STR(st.state, "");
	CHECK_INT(slurm_parse_queue("", 42, &st), 0);
}

static void
test_node(void)
{
	char why[512], tiny[20];

	CHECK_INT(slurm_parse_node("NodeName=node07 State=IDLE Reason=None\n",
	    "node07", why, sizeof(why)), 0);
	CHECK_INT(slurm_parse_node("NodeName=node07 State=IDLE+DRAIN "
	    "CapWatts=n/a Reason=fan broken  [root@2024-05-01T10:00:00]\n",
	    "node07", why, sizeof(why)), 1);
	CHECK_STR(why, "node node07 is IDLE+DRAIN: fan broken");
	CHECK_INT(slurm_parse_node("NodeName=node07 State=DOWN*\n", "node07",
	    why, sizeof(why)), 1);
	CHECK_STR(why, "node node07 is DOWN*");

	/* A reason typed in Latin-1, with a tab in it. */
	CHECK_INT(slurm_parse_node("NodeName=node07 State=DOWN "
	    "Reason=caf\xe9\tclos\n", "node07", why, sizeof(why)), 1);
	CHECK_STR(why, "node node07 is DOWN: caf\\xe9\\x09clos");
	/* Cut at a character's end, never inside "\xe9" or an escape. */
	CHECK_INT(slurm_parse_node("NodeName=node07 State=DOWN "
	    "Reason=\xc3\xa9\xc3\xa9\xc3\xa9\n", "n7", tiny, sizeof(tiny)),
	    1);
	CHECK_STR(tiny, "node n7 is DOWN: \xc3\xa9");
	CHECK_INT(slurm_parse_node("NodeName=node07 State=DOWN "
	    "Reason=\xff\xff\n", "n7", tiny, sizeof(tiny)), 1);
	CHECK_STR(tiny, "node n7 is DOWN:");
}

int
main(void)
{
	CHECK_CASE(test_jobid);
	CHECK_CASE(test_job);
	CHECK_CASE(test_queue);
	CHECK_CASE(test_node);
	return check_done();
}
