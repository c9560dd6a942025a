/*
 * runner-bench.c: the driver bench/runner-bench.sh uses to time a command
 * through the runner (run_child), and to compare a run's full cost with a
 * bare posix_spawn + wait4 of the same command, alternated run by run so
 * that drift on a shared machine hits both alike: the harness's overhead.
 * Prints key=value lines; times in milliseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "bisectd/process/runner.h"

extern char **environ;

struct stat_acc {
	double sum, sumsq, min;
	int n;
	double *v;		/* every value, for the median; malloced */
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
acc_add(struct stat_acc *a, double v)
{
	if (a->n == 0 || v < a->min)
		a->min = v;
	a->sum += v;
	a->sumsq += v * v;
	a->v[a->n++] = v;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
acc_median(struct stat_acc *a)
{
	if (a->n == 0)
		return 0;
	qsort(a->v, (size_t)a->n, sizeof(*a->v), cmp_double);
	return a->n % 2 ? a->v[a->n / 2] :
	    (a->v[a->n / 2 - 1] + a->v[a->n / 2]) / 2;
}

static double
acc_mean(const struct stat_acc *a)
{
	return a->n ? a->sum / a->n : 0;
}

static double
acc_sd(const struct stat_acc *a)
{
	double m = acc_mean(a), var;

	if (a->n < 2)
		return 0;
	var = (a->sumsq - a->n * m * m) / (a->n - 1);
	return var > 0 ? sqrt(var) : 0;
}

/* The bare minimum: spawn with output to /dev/null, wait. */
static int
bare_run(char *const *argv, double *ms)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	double t0;
	pid_t pid;
	int status, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	t0 = now_ms();
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	*ms = now_ms() - t0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void
usage(void)
{
	fputs("usage: runner-bench [-n RUNS] [-w WARMUP] "
	    "[-i auto|cgroup|subreaper] [-b] -- COMMAND [ARG...]\n"
	    "  -b  also time a bare posix_spawn + wait4 of COMMAND\n",
	    stderr);
	exit(2);
}

/* One run through the runner: its own wall time and the call's cost. */
static int
runner_run(const struct child_spec *s, double *wall_ms, double *call_ms,
    double *user_ms, double *sys_ms, const char **iso)
{
	struct run_result r;
	struct err e = ERR_INIT;
	char line[600];
	double t0 = now_ms();

	if (run_child(s, &r, &e) < 0) {
		fprintf(stderr, "runner-bench: %s\n", e.msg);
		return -1;
	}
	*call_ms = now_ms() - t0;
	if (r.reason != RUN_OK) {
		fprintf(stderr, "runner-bench: '%s' %s\n", s->argv[0],
		    run_describe(&r, line, sizeof(line)));
		run_result_release(&r);
		return -1;
	}
	*wall_ms = (double)r.wall_ns / 1e6;
	*user_ms = (double)r.user_ns / 1e6;
	*sys_ms = (double)r.sys_ns / 1e6;
	*iso = run_isolation_name(r.isolation);
	run_result_release(&r);
	return 0;
}

int
main(int argc, char **argv)
{
	struct child_spec s = CHILD_SPEC_INIT;
	struct stat_acc wall, call, user, sys, bare;
	int runs = 100, warmup = 3, baseline = 0, ch, i;
	const char *iso = "auto", *taken = "";
	double w, c, u, y, b = 0;

	while ((ch = getopt(argc, argv, "n:w:i:b")) != -1) {
		switch (ch) {
		case 'n':
			runs = atoi(optarg);
			break;
		case 'w':
			warmup = atoi(optarg);
			break;
		case 'i':
			iso = optarg;
			break;
		case 'b':
			baseline = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || runs < 1 || warmup < 0)
		usage();
	if (strcmp(iso, "cgroup") == 0)
		s.isolation = RUN_ISOLATE_CGROUP;
	else if (strcmp(iso, "subreaper") == 0)
		s.isolation = RUN_ISOLATE_SUBREAPER;
	else if (strcmp(iso, "auto") != 0)
		usage();
	s.argv = (const char *const *)(argv + optind);
	s.timeout_ms = 600000;
	memset(&wall, 0, sizeof(wall));
	memset(&call, 0, sizeof(call));
	memset(&user, 0, sizeof(user));
	memset(&sys, 0, sizeof(sys));
	memset(&bare, 0, sizeof(bare));
	if ((wall.v = calloc((size_t)runs, sizeof(double))) == NULL ||
	    (call.v = calloc((size_t)runs, sizeof(double))) == NULL ||
	    (user.v = calloc((size_t)runs, sizeof(double))) == NULL ||
	    (sys.v = calloc((size_t)runs, sizeof(double))) == NULL ||
	    (bare.v = calloc((size_t)runs, sizeof(double))) == NULL) {
		perror("runner-bench");
		return 1;
	}

	for (i = -warmup; i < runs; i++) {
		if (runner_run(&s, &w, &c, &u, &y, &taken) < 0)
			return 1;
		if (baseline && bare_run(argv + optind, &b) < 0) {
			fprintf(stderr, "runner-bench: bare run of '%s' "
			    "failed\n", argv[optind]);
			return 1;
		}
		if (i < 0)
			continue;
		acc_add(&wall, w);
		acc_add(&call, c);
		acc_add(&user, u);
		acc_add(&sys, y);
		if (baseline)
			acc_add(&bare, b);
	}
	printf("isolation=%s\nruns=%d\n", taken, runs);
	printf("runner_mean_ms=%.4f\nrunner_sd_ms=%.4f\nrunner_min_ms=%.4f\n"
	    "runner_median_ms=%.4f\n", acc_mean(&wall), acc_sd(&wall),
	    wall.min, acc_median(&wall));
	printf("call_mean_ms=%.4f\ncall_median_ms=%.4f\n", acc_mean(&call),
	    acc_median(&call));
	printf("user_mean_ms=%.4f\nsys_mean_ms=%.4f\n", acc_mean(&user),
	    acc_mean(&sys));
	if (baseline) {
		printf("bare_mean_ms=%.4f\nbare_sd_ms=%.4f\n"
		    "bare_median_ms=%.4f\n", acc_mean(&bare), acc_sd(&bare),
		    acc_median(&bare));
		printf("overhead_mean_ms=%.4f\noverhead_median_ms=%.4f\n",
		    acc_mean(&call) - acc_mean(&bare),
		    acc_median(&call) - acc_median(&bare));
	}
	run_shutdown();
	free(wall.v);
	free(call.v);
	free(user.v);
	free(sys.v);
	free(bare.v);
	return 0;
}
