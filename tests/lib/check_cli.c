/*
 * check_cli.c: running bisectctl with its output captured (check_cli.h).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_cli.h"

const char *cli_ctl;
int cli_xfsz_default;

static void
drain(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while ((n = read(fd, buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
	close(fd);
}

void
cli_run(struct cli_result *r, long fsize_limit, int who,
    const char *const *args)
{
	int out[2], err[2];
	const char *argv[32];
	pid_t pid;
	int n = 0, status;

	argv[n++] = cli_ctl;
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (pipe(out) < 0 || pipe(err) < 0)
		abort();
	fflush(NULL);
	if ((pid = fork()) == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		if (fsize_limit > 0) {
			struct rlimit rl = { (rlim_t)fsize_limit,
			    (rlim_t)fsize_limit };

			signal(SIGXFSZ, cli_xfsz_default ? SIG_DFL : SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		if (who == AS_NOBODY && (setgid(65534) < 0 ||
		    setuid(65534) < 0))
			_exit(99);
		execv(cli_ctl, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* Small outputs: read one pipe, then the other. */
	drain(out[0], r->out, sizeof(r->out));
	drain(err[0], r->err, sizeof(r->err));
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
}

void
cli_expect_all(const char *name, const struct cli_expect *t, size_t n)
{
	struct cli_result r;

	for (size_t i = 0; i < n; i++) {
		int before = check_failures;

		cli_run(&r, 0, AS_ROOT, t[i].args);
		CHECK_INT(r.status, t[i].status);
		if (t[i].err != NULL)
			CHECK_CONTAINS(r.err, t[i].err);
		if (t[i].err_lines > 0)
			CHECK_INT(check_count_lines(r.err), t[i].err_lines);
		if (check_failures > before) {
			fprintf(stderr, "  in %s[%zu]: bisectctl", name, i);
			for (size_t k = 0; t[i].args[k] != NULL; k++)
				fprintf(stderr, " %s", t[i].args[k]);
			fputc('\n', stderr);
		}
	}
}

void
cli_write_config(const char *name, const char *db)
{
	char text[2048];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} -n {gen} -o json\n"
	    "\tparser = llama-bench\n", db);
	check_write_file(name, text);
}

void
cli_setup(const char *name)
{
	check_env(&cli_ctl, NULL, NULL);
	chmod(check_tmpdir(name), 0755);
	cli_write_config("ok.conf", "state/bisectd.db");
	check_write_file("w.bin", "weights");
	mkdir("releases", 0755);
}

void
cli_open(const char *name, const char *conf, void (*write_config)(void),
    const char **ctl, const char **daemon, const char **build,
    char *ctl_conf)
{
	check_env(ctl, daemon, build);
	snprintf(ctl_conf, CLI_CTL_CONF_MAX, "%s -c %s", *ctl, conf);
	check_tmpdir(name);
	if (write_config != NULL)
		write_config();
}
