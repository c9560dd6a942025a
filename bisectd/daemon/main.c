/*
 * bisectd: the daemon's main: options, the configuration (-n checks it
 * and exits), then the loop of daemon.c in the foreground, logging to
 * stderr with a timestamp and a level per line.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/conf.h"
#include "daemon.h"
#include "common/err.h"
#include "fetch/check.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: bisectd [-n] [-c FILE]\n"
	    "  -c, --config FILE  configuration (default $BISECTD_CONFIG, "
	    "then\n"
	    "                     /etc/bisectd.conf)\n"
	    "  -n, --check        check the configuration, the release folders\n"
	    "                     and the weights (hashed), and exit\n"
	    "  -h, --help         this help\n"
	    "  -V, --version      print the version\n"
	    "\n"
	    "Runs in the foreground and logs to stderr.  SIGTERM or SIGINT\n"
	    "end the running engines, put their jobs back and stop it;\n"
	    "SIGHUP reloads the configuration\n"
	    "(a bad file is logged, the old one stays, and 'bisectctl status'\n"
	    "says so).\n"
	    "\n"
	    "exit status:\n"
	    "  0  stopped by a signal, or -n: the configuration is good\n"
	    "  1  the daemon failed (store, lock, socket)\n"
	    "  2  usage error, or a configuration with problems\n");
}

static void
log_line(void *arg, int level, const char *msg)
{
	const char *name = level <= DAEMON_LOG_ERR ? "error" :
	    level == DAEMON_LOG_WARNING ? "warning" : "info";
	struct timespec ts;
	struct tm tm;
	char when[32];

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	/* One call per line: stdio locks the stream, so lines from the
	 * worker and the loop never interleave. */
	fprintf(stderr, "%s.%03ld bisectd[%s]: %s\n", when,
	    ts.tv_nsec / 1000000, name, msg);
}

int
main(int argc, char **argv)
{
	const char *path = getenv("BISECTD_CONFIG");
	struct strv problems = STRV_INIT, notes = STRV_INIT;
	struct daemon_opts o = { log_line, NULL };
	struct err e = ERR_INIT;
	struct conf *c;
	int opt, rc, check = 0;

	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};

	while ((opt = getopt_long(argc, argv, "c:nhV", longopts, NULL)) !=
	    -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("bisectd %s\n", BISECTD_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (path == NULL || path[0] == '\0')
		path = "/etc/bisectd.conf";
	setvbuf(stderr, NULL, _IOLBF, 0);
	rc = check ? conf_load_checked(path, fetch_check_local, &notes, &c,
	    &problems) : conf_load(path, &c, &problems);
	for (size_t i = 0; i < notes.n; i++)
		fprintf(stderr, "bisectd: %s\n", notes.v[i]);
	for (size_t i = 0; i < problems.n; i++)
		fprintf(stderr, "bisectd: %s\n", problems.v[i]);
	strv_clear(&notes);
	strv_clear(&problems);
	if (rc < 0)
		return 2;
	if (check) {
		printf("bisectd: %s: ok\n", c->path);
		conf_free(c);
		return 0;
	}
	if (daemon_run(c, &o, &e) < 0) {
		log_line(NULL, DAEMON_LOG_ERR, e.msg);
		return 1;
	}
	return 0;
}
