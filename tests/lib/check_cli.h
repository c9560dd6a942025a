/*
 * check_cli.h: running bisectctl as test_cli and test_cli_store do: its
 * whole stdout and stderr, under a file size limit or as nobody; and the
 * opening that the tests running it on a configuration of their own
 * share.
 */
#ifndef TESTS_CHECK_CLI_H
#define TESTS_CHECK_CLI_H

#include <stddef.h>

struct cli_result {
	int status;		/* exit status, or 128 + the signal */
	char out[65536];
	char err[65536];
};

enum { AS_ROOT = 0, AS_NOBODY = 1 };

extern const char *cli_ctl;	/* the bisectctl to run */
extern int cli_xfsz_default;	/* leave SIGXFSZ as bisectctl sets it */

/* Run cli_ctl with args (NULL-ended); fsize_limit > 0 sets RLIMIT_FSIZE. */
void cli_run(struct cli_result *r, long fsize_limit, int who,
    const char *const *args);

/* A run of cli_ctl as root and what it must give. */
struct cli_expect {
	const char *args[10];	/* NULL-ended */
	int status;		/* its exit status */
	const char *err;	/* in its stderr; NULL: not looked at */
	int err_lines;		/* its stderr's lines; 0: not counted */
};

/* Each row of the table called name, in order; a row that fails is
 * named with its index and its arguments. */
void cli_expect_all(const char *name, const struct cli_expect *t,
    size_t n);
/* A config at name for the fake engine's releases, its database db. */
void cli_write_config(const char *name, const char *db);

/* The opening of test_cli and test_cli_store: cli_ctl from the
 * environment, a temporary folder for the test called name that nobody
 * may enter too, and in it ok.conf (its database state/bisectd.db), the
 * weights w.bin and an empty releases/. */
void cli_setup(const char *name);

/* The size of cli_open()'s ctl_conf. */
#define CLI_CTL_CONF_MAX 4096

/*
 * A test's opening: check_env() into *ctl, *daemon (when daemon is not
 * NULL) and *build; "BISECTCTL -c conf" into ctl_conf, CLI_CTL_CONF_MAX
 * bytes; a fresh temporary folder for the test called name, where
 * write_config() then writes conf (when it is not NULL).
 */
void cli_open(const char *name, const char *conf, void (*write_config)(void),
    const char **ctl, const char **daemon, const char **build,
    char *ctl_conf);

#endif
