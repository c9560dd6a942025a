/*
 * bisectd: the daemon.  This build checks its configuration (-n) and
 * opens the store; the scheduler, queue and alerting loop are built on
 * the same modules.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf.h"
#include "err.h"
#include "store.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: bisectd [-n] [-c FILE]\n"
	    "  -c FILE  configuration (default $BISECTD_CONFIG, then "
	    "/etc/bisectd.conf)\n"
	    "  -n       check the configuration and exit\n");
}

int
main(int argc, char **argv)
{
	const char *path = getenv("BISECTD_CONFIG");
	struct strv problems = STRV_INIT;
	struct conf *c;
	int opt, check = 0;

	while ((opt = getopt(argc, argv, "c:nhV")) != -1) {
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
	if (conf_load(path, &c, &problems) < 0) {
		for (size_t i = 0; i < problems.n; i++)
			fprintf(stderr, "bisectd: %s\n", problems.v[i]);
		strv_clear(&problems);
		return 1;
	}
	if (check) {
		printf("bisectd: %s: ok\n", c->path);
		conf_free(c);
		return 0;
	}
	fprintf(stderr, "bisectd: the daemon loop is not part of this build; "
	    "use 'bisectctl bisect --now'\n");
	conf_free(c);
	return 1;
}
