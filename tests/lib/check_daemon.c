/* check_daemon.c: a test's daemon and its store (see check_daemon.h). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "check_daemon.h"
#include "common/err.h"
#include "store/store.h"

void
check_daemon_config(const char *file, const char *dir, const char *build,
    const char *bisectd_keys, const char *engine_keys)
{
	char text[16384];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state/d.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n%s"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/tests/demo-cpu\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\ttimeout = 1m\n%s", dir, bisectd_keys, build, build,
	    engine_keys);
	check_write_file(file, text);
}

void
check_matrix_config(const char *file, const char *dir, const char *runners,
    const char *runner_list, const char *source, const char *extra)
{
	char text[16384];

	check_write_pattern("small.bin", 1024);
	check_write_pattern("big.bin", 1 << 20);
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s/state/d.db\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"small\"]\n\tpath = small.bin\n"
	    "[weights \"big\"]\n\tpath = big.bin\n%s"
	    "[engine \"fleet\"]\n%s\tasset = fleet-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n"
	    "\ttimeout = 1m\n\trunner = %s\n\tweights = small, big\n%s",
	    dir, runners, source, runner_list, extra);
	check_write_file(file, text);
}

struct store *
check_daemon_store(const char *dir)
{
	char path[4200];
	struct err e = ERR_INIT;
	struct store *s = NULL;

	snprintf(path, sizeof(path), "%s/state/d.db", dir);
	if (store_open(path, &s, &e) < 0)
		fprintf(stderr, "store: %s\n", e.msg);
	return s;
}

const char *
check_job_wait(const char *dir, int64_t id, double timeout_s, char *buf,
    size_t len, int *code)
{
	char path[4200];
	double t0 = check_now_s();

	snprintf(path, sizeof(path), "%s/state/d.db", dir);
	snprintf(buf, len, "%s", "");
	if (code != NULL)
		*code = -1;
	while (check_now_s() - t0 < timeout_s) {
		struct store *s = NULL;
		struct store_job j;
		struct err e = ERR_INIT;

		/* Read-only: the daemon is the store's one writer. */
		if (store_open_readonly(path, &s, &e) == 0 &&
		    store_job_get(s, id, &j, &e) == 0) {
			snprintf(buf, len, "%s", j.state);
			if (code != NULL)
				*code = j.exit_code;
			store_job_release(&j);
		}
		store_close(s);
		if (buf[0] && strcmp(buf, "queued") != 0 &&
		    strcmp(buf, "running") != 0)
			break;
		check_sleep_ms(200);
	}
	return buf;
}
