/*
 * fetch-bench.c: the fetch path as bisectd runs it, for bench/fetch-bench.sh
 * to time: download into the content-addressed cache (hashed while
 * streaming, fsynced, renamed), then unpack into a release directory.
 *
 *	fetch-bench [--no-sync] URL CACHE DEST
 *
 * Prints the archive's sha256 and each phase's wall time on stdout.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fetch/download.h"
#include "common/err.h"
#include "fetch/unpack.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct download_opts o = DOWNLOAD_OPTS_INIT;
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct unpack_limits lim = UNPACK_LIMITS_INIT;
	struct err e = ERR_INIT;
	double t0, t1, t2;
	int i = 1;

	if (argc > 1 && strcmp(argv[1], "--no-sync") == 0) {
		lim.no_sync = 1;
		i++;
	}
	if (argc - i != 3) {
		fprintf(stderr, "usage: fetch-bench [--no-sync] URL CACHE "
		    "DEST\n");
		return 2;
	}
	o.cache = argv[i + 1];
	o.allow_http = 1;	/* the benchmark's server is on loopback */
	t0 = now();
	if (fetch_download(argv[i], &o, &r, &e) < 0) {
		fprintf(stderr, "fetch-bench: %s\n", e.msg);
		return 1;
	}
	t1 = now();
	if (fetch_unpack(r.path, argv[i + 2], &lim, &e) < 0) {
		fprintf(stderr, "fetch-bench: %s\n", e.msg);
		download_result_release(&r);
		return 1;
	}
	t2 = now();
	printf("sha256 %s\ndownload %.3f s\nunpack %.3f s\n", r.sha256,
	    t1 - t0, t2 - t1);
	download_result_release(&r);
	return 0;
}
