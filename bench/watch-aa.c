/*
 * watch-aa.c: the false-alarm rate of a watch that compares every
 * metric of the matrix, measured.  Each trial is a fresh store and
 * three fake-engine releases that do the same work (a per-process
 * offset of CV 5%, 3% noise per repetition, and 5% of processes 1.5x
 * slow for their whole run), watched as a daemon would: the first
 * watch of 1.0.1 against 1.0.0, then one of 1.0.2.  A trial alerts when
 * either watch records a regression on any metric; the share of trials
 * that alerted is printed with its 95% (Wilson) interval beside the
 * goal of at most 1%, with the metrics compared and the runs spent.
 *
 * usage: watch-aa FAKE_ENGINE WEIGHTS [-n trials]
 * (bench/watch-aa.sh passes the build's fake engine and demo weights.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisectd/jobs/watch.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "store/store.h"

static int watches_run, metrics_logged;

static void
on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	/* One line per metric the screen compared. */
	metrics_logged += strstr(msg, "Holm at") != NULL ||
	    strstr(msg, " comparing ") != NULL;
	if (getenv("WATCH_AA_VERBOSE"))
		fprintf(stderr, "  %s\n", msg);
}

static int
sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "watch-aa: '%s' failed (%d)\n", cmd, rc);
	return rc;
}

/* Pack release version as the fake engine's archive in rel/. */
static int
pack(const char *engine, const char *version)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "rm -rf st && mkdir -p st/bin rel && "
	    "cp '%s' st/bin/fake-engine && printf 'version = %s\\n"
	    "fixed_us = 2000\\nprefill_us_per_token = 40\\n"
	    "decode_us_per_token = 200\\nnoise_cv = 0.03\\nrun_cv = 0.05\\n"
	    "outlier_p = 0.05\\noutlier_x = 1.5\\nclock = cpu\\n' "
	    ">st/release.conf && tar czf rel/aa-%s.tar.gz -C st bin "
	    "release.conf", engine, version, version);
	return sh(cmd);
}

/* The regression alerts the store holds. */
static long
alerts(struct store *s)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	long n = 0;

	if (store_alert_list(s, 1000, &rows, &e) < 0) {
		fprintf(stderr, "watch-aa: %s\n", e.msg);
		return -1;
	}
	for (size_t i = 0; i < rows.n; i++)
		n += strcmp(rows.v[i].alert.kind, "regression") == 0;
	store_alert_rows_release(&rows);
	return n;
}

/* Every run stored, warm-ups and confirmations included. */
static long
runs_stored(struct store *s)
{
	struct store_tally t;
	struct err e = ERR_INIT;
	long n = 0;

	if (store_tally_runs(s, &t, &e) < 0)
		return -1;
	for (size_t i = 0; i < t.n; i++)
		n += (long)t.v[i].n;
	store_tally_release(&t);
	return n;
}

int
main(int argc, char **argv)
{
	struct watch_opts o = { .log = on_log };
	long trials = 100, alerted = 0, runs = 0;
	char cwd[4096], dir[4200], text[9000];
	double z = 1.96, p, mid, half;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1)
		if (opt == 'n')
			trials = atol(optarg);
		else
			goto usage;
	if (argc - optind != 2 || trials <= 0)
		goto usage;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return 1;
	for (long t = 0; t < trials; t++) {
		struct strv problems = STRV_INIT;
		struct err e = ERR_INIT;
		struct store *s = NULL;
		struct conf *c = NULL;
		long a;

		snprintf(dir, sizeof(dir), "%s/watch-aa-%ld", cwd, t);
		snprintf(text, sizeof(text), "rm -rf '%s' && mkdir -p '%s'", dir,
		    dir);
		if (sh(text) != 0 || chdir(dir) < 0)
			return 1;
		snprintf(text, sizeof(text), "[bisectd]\n\tdatabase = t.db\n"
		    "\tcache = cache\n\tmax-busy = 100%%\n"
		    "[weights \"w\"]\n\tpath = %s\n"
		    "[engine \"aa\"]\n\tsource = dir:rel\n"
		    "\tasset = aa-{version}.tar.gz\n"
		    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
		    "-n {gen} -t 1 -r 1 -o json\n"
		    "\tparser = llama-bench\n\tprompts = 64,256\n"
		    "\tgen = 16,64\n\treps = 5\n\tmax-reps = 40\n"
		    "\twarmup = 0\n\ttimeout = 1m\n", argv[optind + 1]);
		{
			FILE *f = fopen("aa.conf", "w");

			if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
				return 1;
		}
		if (pack(argv[optind], "1.0.0") != 0 ||
		    pack(argv[optind], "1.0.1") != 0 ||
		    conf_load("aa.conf", &c, &problems) < 0 ||
		    store_open("t.db", &s, &e) < 0) {
			fprintf(stderr, "watch-aa: %s%s\n", e.msg,
			    problems.n ? problems.v[0] : "");
			return 1;
		}
		if (watch_run(c, &c->engines[0], s, &o, &e) < 0 ||
		    pack(argv[optind], "1.0.2") != 0 ||
		    watch_run(c, &c->engines[0], s, &o, &e) < 0) {
			fprintf(stderr, "watch-aa: %s\n", e.msg);
			return 1;
		}
		watches_run += 2;
		a = alerts(s);
		runs += runs_stored(s);
		alerted += a > 0;
		if (a > 0)
			fprintf(stderr, "trial %ld alerted (%ld)\n", t, a);
		store_close(s);
		conf_free(c);
		strv_clear(&problems);
		if (chdir(cwd) < 0)
			return 1;
		snprintf(text, sizeof(text), "rm -rf '%s'", dir);
		sh(text);
	}
	/* Wilson's interval for the share alerted. */
	p = (double)alerted / trials;
	mid = (p + z * z / (2 * trials)) / (1 + z * z / trials);
	half = z * sqrt(p * (1 - p) / trials + z * z / (4.0 * trials *
	    trials)) / (1 + z * z / trials);
	printf("trials %ld (2 watches each, %.1f comparisons a watch, %.0f "
	    "runs a trial): alerted %ld = %.1f%% [%.1f%%, %.1f%%]; goal at "
	    "most 1%%\n", trials, (double)metrics_logged / watches_run,
	    (double)runs / trials, alerted, 100 * p, 100 * fmax(0, mid - half),
	    100 * (mid + half));
	return 0;
usage:
	fprintf(stderr, "usage: watch-aa FAKE_ENGINE WEIGHTS [-n trials]\n");
	return 2;
}
