/*
 * test_sbatch.c: the sbatch command line of a measurement request keeps
 * every option its runner sets, the pin to the bisect's node included,
 * however many there are.
 */
#include <string.h>

#include "bisectd/remote/slurm.h"
#include "check.h"
#include "common/strv.h"
#include "config/conf.h"

/* Every runner option at once: the pin used to be dropped here. */
static void
test_every_option(void)
{
	char spool[] = "/srv/spool", part[] = "bench", acct[] = "perf",
	    gres[] = "gpu:1", cons[] = "a100&nvlink";
	struct conf_runner rn;
	struct strv argv = STRV_INIT;

	memset(&rn, 0, sizeof(rn));
	rn.kind = RUNNER_SLURM;
	rn.spool = spool;
	rn.partition = part;
	rn.account = acct;
	rn.gres = gres;
	rn.constraint = cons;
	rn.time_limit_ms = 2 * 3600 * 1000 + 1;
	rn.exclusive = 1;
	CHECK_INT(slurm_sbatch_argv(&rn, "0123456789abcdef0123456789abcdef",
	    "node07", "/srv/spool/node-run.sh", &argv), 0);
	CHECK_STR(argv.v[0], "sbatch");
	CHECK(strv_contains(&argv, "--parsable"));
	CHECK(strv_contains(&argv, "--job-name=bisectd-01234567"));
	CHECK(strv_contains(&argv, "--output=/srv/spool/0123456789abcdef0123456789abcdef"
	    ".log"));
	CHECK(strv_contains(&argv, "--chdir=/srv/spool"));
	CHECK(strv_contains(&argv, "--partition=bench"));
	CHECK(strv_contains(&argv, "--account=perf"));
	CHECK(strv_contains(&argv, "--gres=gpu:1"));
	CHECK(strv_contains(&argv, "--constraint=a100&nvlink"));
	CHECK(strv_contains(&argv, "--time=121"));
	CHECK(strv_contains(&argv, "--nodelist=node07"));
	CHECK(strv_contains(&argv, "--exclusive"));
	CHECK_STR(argv.v[argv.n - 1], "/srv/spool/node-run.sh");
	CHECK_INT(argv.n, 13);
	strv_clear(&argv);
}

/* Nothing but the spool: no option the runner does not set. */
static void
test_fewest(void)
{
	char spool[] = "/srv/spool";
	struct conf_runner rn;
	struct strv argv = STRV_INIT;

	memset(&rn, 0, sizeof(rn));
	rn.spool = spool;
	CHECK_INT(slurm_sbatch_argv(&rn, "ab", NULL, "s.sh", &argv), 0);
	CHECK_INT(argv.n, 6);
	for (size_t i = 0; i < argv.n; i++)
		CHECK(strncmp(argv.v[i], "--nodelist", 10) != 0 &&
		    strcmp(argv.v[i], "--exclusive") != 0);
	strv_clear(&argv);
}

int
main(void)
{
	CHECK_CASE(test_every_option);
	CHECK_CASE(test_fewest);
	return check_done();
}
