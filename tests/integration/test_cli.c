/*
 * test_cli.c: bisectctl as a user meets it: options anywhere, --help,
 * --version, exit codes, check-config, versions, completion, dry runs,
 * and bad input (config missing, truncated or garbage; a secret in the
 * environment; an engine that cannot start): one clear line on stderr
 * and a non-zero exit.  test_cli_store.c holds the database's cases.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_cli.h"
#include "common/err.h"
#include "store/store.h"

/* Usage errors: exit 2, and what was wrong where it says. */
static const struct cli_expect usage[] = {
	{ { NULL }, 2, NULL, 0 },
	{ { "frobnicate", NULL }, 2, "unknown command 'frobnicate'", 0 },
	{ { "-c", "ok.conf", "check-config", "--refresh", NULL }, 2,
	  "does not take that option", 0 },
	{ { "-c", "ok.conf", "versions", NULL }, 2, NULL, 0 },
	{ { "--format", "yaml", "check-config", NULL }, 2,
	  "--format: expected text, json", 0 },
};

static void
test_help_and_usage(void)
{
	struct cli_result r;

	cli_run(&r, 0, AS_ROOT, (const char *[]){ "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "check-config");
	CHECK_CONTAINS(r.out, "3  regression found");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "--version", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisectctl ");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "versions", "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "versions ENGINE");
	CHECK_CONTAINS(r.out, "\n  --refresh        ask the source again");
	CHECK(strstr(r.out, "exit status") == NULL);
	/* A command that judges says each of its options, the metrics, how
	 * it decides and what its exit status means. */
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "bisect", "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\n  --now            run it here and now");
	CHECK_CONTAINS(r.out, "ppN (prefill at N tokens)");
	CHECK_CONTAINS(r.out, "tgN (decode of N");
	CHECK_CONTAINS(r.out, "\ndeciding:\n  The threshold P");
	CHECK_CONTAINS(r.out, "20% by\n");
	CHECK_CONTAINS(r.out, "\nexit status:\n  0  success");
	CHECK_CONTAINS(r.out, "  3  regression found");
	CHECK(strstr(r.out, "--limit") == NULL);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "status", "--help", NULL });
	CHECK_CONTAINS(r.out, "\n  --all            every job\n");
	cli_expect_all("usage", usage, sizeof(usage) / sizeof(usage[0]));
}

static void
test_check_config(void)
{
	struct cli_result r;

	/* Options after operands, GNU style. */
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "check-config", "-c", "ok.conf",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "engine basert");
	CHECK_CONTAINS(r.out, "fit over 512,2048, metric per-token");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "check-config", "--format",
	    "json", "--config", "ok.conf", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "\"name\": \"basert\"");
	CHECK_CONTAINS(r.out, "\"fit\": [");
	setenv("BISECTD_CONFIG", "ok.conf", 1);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "check-config", NULL });
	CHECK_INT(r.status, 0);
	CHECK(strstr(r.err, "loopback") == NULL);
	unsetenv("BISECTD_CONFIG");
}

/* An HTTP server on an address others reach is said to expose what it
 * shows, at check-config; on loopback nothing is said. */
static void
test_http_exposed(void)
{
	static const char *const open_to_all[] = { "0.0.0.0:0", "[::]:0",
	    "192.0.2.7:8088" };
	static const char *const loopback[] = { "127.0.0.1:0", "127.9.0.1:0",
	    "[::1]:0" };
	char text[4096], *base = check_read_file("ok.conf");
	struct cli_result r;

	CHECK(base != NULL);
	for (size_t i = 0; base && i < 3; i++) {
		snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = %s\n",
		    base, open_to_all[i]);
		check_write_file("http.conf", text);
		cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "http.conf",
		    "check-config", NULL });
		CHECK_INT(r.status, 0);
		CHECK_CONTAINS(r.err, "warning: bisectd.http: not a loopback "
		    "address");
		snprintf(text, sizeof(text), "%s[bisectd]\n\thttp = %s\n",
		    base, loopback[i]);
		check_write_file("http.conf", text);
		cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "http.conf",
		    "check-config", NULL });
		CHECK_INT(r.status, 0);
		CHECK(strstr(r.err, "loopback") == NULL);
	}
	free(base);
}

/* A configuration missing, truncated or garbage: one line, exit 2. */
static const struct cli_expect bad_configs[] = {
	{ { "-c", "missing.conf", "check-config", NULL }, 2,
	  "'missing.conf'", 1 },
	{ { "-c", "trunc.conf", "check-config", NULL }, 2,
	  "trunc.conf:3: syntax error", 1 },
	{ { "-c", "garbage.conf", "check-config", NULL }, 2,
	  "garbage.conf:1:", 1 },
	{ { "-c", "ok.conf", "versions", "ghost", NULL }, 2,
	  "no engine 'ghost'", 0 },
};

static void
test_bad_configs(void)
{
	check_write_file("trunc.conf", "[bisectd]\n\tdatabase = x.db\n"
	    "[engine \"bas");
	check_write_file("garbage.conf", "}}}} not a config {{{{\n");
	cli_expect_all("bad_configs", bad_configs,
	    sizeof(bad_configs) / sizeof(bad_configs[0]));
}

static void
test_versions_empty(void)
{
	struct cli_result r;

	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "no releases of basert known yet");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_STR(r.out, "[]\n");
}

/*
 * Write name: the engine basert over the demo's releases, then its lines
 * engine; the database tag.db and the cache tagcache/, the test's own.
 */
static void
demo_config(const char *name, const char *tag, const char *engine)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[2048];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s.db\n\tcache = %scache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n%s", tag, tag, build, build,
	    engine);
	check_write_file(name, text);
}

/*
 * An engine that prints its environment (the fake engine does with
 * FAKE_ENGINE_PRINT_ENV) shows what the runner handed it: the store's
 * stderr tail must hold the configured variable and never the token.
 */
static void
test_secret_env(void)
{
	struct cli_result r;

	demo_config("env.conf", "env", "\ttoken-env = BISECTD_TEST_TOKEN\n"
	    "\tenv = FAKE_ENGINE_PRINT_ENV=1\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,128\n\tgen = 4\n");
	setenv("BISECTD_TEST_TOKEN", "tok-must-not-leak", 1);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bench",
	    "basert", "0.2.0", "--reps", "1", NULL });
	unsetenv("BISECTD_TEST_TOKEN");
	CHECK_INT(r.status, 0);
	if (r.status != 0)
		fprintf(stderr, "bench: %s", r.err);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.0", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "FAKE_ENGINE_PRINT_ENV=1");
	CHECK_CONTAINS(r.out, "BISECTD_RUN_ID=");
	/* Repetitions count from 1, as the progress line does; both clocks
	 * are shown, and which one the analysis reads. */
	CHECK_CONTAINS(r.out, "\"rep\": 1,");
	CHECK(strstr(r.out, "\"rep\": 0,") == NULL);
	CHECK_CONTAINS(r.out, "\"analysis_reads\": \"engine\"");
	CHECK_CONTAINS(r.out, "\"engine_ms\": ");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "WALL ms   ENGINE ms READS");
	CHECK_CONTAINS(r.out, "READS the one the analysis uses");
	CHECK(strstr(r.out, "    0  run") == NULL);
	CHECK_CONTAINS(r.out, "    1  run     ");
	CHECK(strstr(r.out, "tok-must-not-leak") == NULL);
	CHECK(strstr(r.out, "BISECTD_TEST_TOKEN") == NULL);
	/* The cache, which holds what runs, is the owner's alone. */
	{
		struct stat st;
		mode_t old = umask(022);

		umask(old);
		CHECK_INT(stat("envcache", &st), 0);
		CHECK_INT((int)(st.st_mode & 0777), 0700 & ~old);
	}
}

/* Run the daemon's binary instead of bisectctl. */
static void
run_daemon(struct cli_result *r, const char *const *args)
{
	const char *saved = cli_ctl;

	cli_ctl = getenv("BISECTD");
	cli_run(r, 0, AS_ROOT, args);
	cli_ctl = saved;
}

/* A single backslash: the line, the key and how to write it; the
 * commands that need only [bisectd] run on a broken file (alerts,
 * cancel); a broken [bisectd] itself locks out as before (core.conf). */
static const struct cli_expect broken[] = {
	{ { "-c", "esc.conf", "check-config", NULL }, 2,
	  "esc.conf:9: engine.e.parser: invalid escape '\\d' in the value: "
	  "write a backslash as '\\\\'", 1 },
	{ { "-c", "esc.conf", "alerts", NULL }, 0, "warning: esc.conf:9:", 0 },
	{ { "-c", "esc.conf", "cancel", "7", NULL }, 1, "no job 7", 0 },
	{ { "-c", "core.conf", "status", NULL }, 2,
	  "core.conf:2: bisectd.database: invalid escape", 0 },
};

/*
 * What would fail hours later is caught by check-config and bisectd -n,
 * every problem in one run, each as FILE:LINE: key: what was expected,
 * in the file's order: a weights hash that does not match (hashed), a
 * weights path or a dir: folder that does not exist, a command without
 * {bin}, a regex that does not compile or has no group, a fit length
 * that is no prompt length (named at the fit line).
 */
static void
test_check_config_problems(void)
{
	static const char *const want[] = {
		"p.conf:5: weights.w.sha256: expected the hash of '",
		"p.conf:7: weights.gone.path: expected an existing file or "
		    "folder, but '",
		"p.conf:9: engine.a.source: expected an existing folder of "
		    "release archives, but '",
		"p.conf:12: engine.a.command: expected {bin}",
		"p.conf:13: engine.a.parser: regex 't=([0-9]+' does not compile",
		"p.conf:15: engine.a.fit: 4096 is not one of the prompt lengths",
		"p.conf:21: engine.b.parser: regex 't=[0-9]+' has no capture "
		    "group",
	};
	struct cli_result r;
	const char *at;

	check_write_file("p.conf",
	    "[bisectd]\n"					/* 1 */
	    "\tdatabase = p.db\n"				/* 2 */
	    "[weights \"w\"]\n"				/* 3 */
	    "\tpath = w.bin\n"				/* 4 */
	    "\tsha256 = 00000000000000000000000000000000"
	    "00000000000000000000000000000000\n"		/* 5 */
	    "[weights \"gone\"]\n"				/* 6 */
	    "\tpath = gone.bin\n"				/* 7 */
	    "[engine \"a\"]\n"				/* 8 */
	    "\tsource = dir:no-such-folder\n"			/* 9 */
	    "\tasset = a-{version}.tgz\n"			/* 10 */
	    "\tweights = w\n"					/* 11 */
	    "\tcommand = /usr/bin/true -p {prompt}\n"		/* 12 */
	    "\tparser = \"regex:t=([0-9]+\"\n"		/* 13 */
	    "\tprompts = 128,512\n"				/* 14 */
	    "\tfit = 128,4096\n"				/* 15 */
	    "[engine \"b\"]\n"				/* 16 */
	    "\tsource = dir:releases\n"			/* 17 */
	    "\tasset = b-{version}.tgz\n"			/* 18 */
	    "\tweights = gone\n"				/* 19 */
	    "\tcommand = {bin}/x -p {prompt}\n"		/* 20 */
	    "\tparser = \"regex:t=[0-9]+\"\n");		/* 21 */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "p.conf",
			    "check-config", NULL });
		else
			run_daemon(&r, (const char *[]){ "-n", "-c", "p.conf",
			    NULL });
		CHECK_INT(r.status, 2);
		CHECK_INT(check_count_lines(r.err), 7);
		at = r.err;
		for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
			const char *hit = strstr(at, want[i]);

			CHECK_CONTAINS(at, want[i]);
			if (hit != NULL)
				at = hit;
		}
		/* The hash found is named: sha256 of "weights". */
		CHECK_CONTAINS(r.err, "which is 9a129038d9a00aed");
	}

	/* A single backslash, refused in broken[]. */
	check_write_file("esc.conf",
	    "[bisectd]\n\tdatabase = p.db\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"e\"]\n\tsource = dir:releases\n"
	    "\tasset = e-{version}.tgz\n\tcommand = {bin}/x\n"
	    "\tparser = \"regex:t=(\\d+)\"\n");

	/* The commands that need only [bisectd] run on a broken file. */
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "p.conf", "status",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "daemon: not running");
	CHECK_CONTAINS(r.err, "warning: p.conf:13: engine.a.parser");
	CHECK_CONTAINS(r.err, "warning: 'p.conf' has errors; status reads its "
	    "[bisectd] section alone");
	check_write_file("core.conf", "[bisectd]\n\tdatabase = \"a\\qb\"\n");
	cli_expect_all("broken", broken, sizeof(broken) / sizeof(broken[0]));
}

/* bisectd's own options: --help is help, not an unknown option. */
static void
test_daemon_options(void)
{
	struct cli_result r;

	run_daemon(&r, (const char *[]){ "--help", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "usage: bisectd");
	CHECK_CONTAINS(r.out, "2  usage error, or a configuration with "
	    "problems");
	run_daemon(&r, (const char *[]){ "--version", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisectd ");
	run_daemon(&r, (const char *[]){ "--bogus", NULL });
	CHECK_INT(r.status, 2);
	run_daemon(&r, (const char *[]){ "--check", "-c", "ok.conf", NULL });
	CHECK_INT(r.status, 0);
}

/* Formats the commands cannot print. */
static const struct cli_expect formats[] = {
	{ { "-c", "ok.conf", "status", "--format", "markdown", NULL }, 2,
	  NULL, 0 },
	{ { "-c", "ok.conf", "gc", "--format", "json", NULL }, 2, NULL, 0 },
};

/* Ranges backwards or one-sided, and tags the source does not have
 * (the user's mistake too, after the source was asked once more). */
static const struct cli_expect ranges[] = {
	{ { "-c", "rev.conf", "report", "basert", "0.2.6..0.2.0", NULL }, 2,
	  "'0.2.6' must be an older release than '0.2.0'", 0 },
	{ { "-c", "rev.conf", "report", "basert", "0.2.6", NULL }, 2,
	  NULL, 0 },
	{ { "-c", "rev.conf", "bisect", "--now", "basert", "0.2.0..0.2.99",
	    NULL }, 2, "no release '0.2.99' is known", 0 },
	{ { "-c", "rev.conf", "report", "basert", "0.2.99..0.2.6", NULL }, 2,
	  "no release '0.2.99' is known", 0 },
};

/*
 * A --format a command cannot print is refused (exit 2), not silently
 * replaced by text; a range given backwards is a usage error too.
 */
static void
test_usage_errors(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char text[2048];
	struct cli_result r;

	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "ok.conf", "versions",
	    "basert", "--format", "csv", NULL });
	CHECK_INT(r.status, 2);
	CHECK_CONTAINS(r.err, "versions does not take --format csv");
	CHECK_STR(r.out, "");
	cli_expect_all("formats", formats,
	    sizeof(formats) / sizeof(formats[0]));

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = rev.db\n\tcache = revcache\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -p {prompt}\n", build, build);
	check_write_file("rev.conf", text);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "versions",
	    "basert", "--refresh", NULL });
	CHECK_INT(r.status, 0);
	/* A dir: source's first fetch unpacks from its folder: nothing
	 * came from a cache; the second finds it unpacked. */
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "fetch",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "(unpacked from the release folder)");
	CHECK(strstr(r.out, "cache)") == NULL);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "fetch",
	    "basert", "0.2.0", NULL });
	CHECK_CONTAINS(r.out, "(already unpacked)");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "rev.conf", "bisect",
	    "basert", "0.2.6..0.2.0", NULL });
	CHECK_INT(r.status, 2);
	CHECK(strstr(r.out, "queued") == NULL);
	cli_expect_all("ranges", ranges, sizeof(ranges) / sizeof(ranges[0]));

	/* Weights that do not match their hash: said once, naming the
	 * section. */
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = rev.db\n\tcache = revcache\n"
	    "[weights \"w\"]\n\tpath = %s/demo/weights.bin\n\tsha256 = "
	    "%064d\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/demo/releases\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -p {prompt}\n", build, 0,
	    build);
	check_write_file("hash.conf", text);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "hash.conf", "bench",
	    "basert", "0.2.0", NULL });
	CHECK_INT(r.status, 1);
	CHECK_CONTAINS(r.err, "bisectctl: [weights \"w\"]: weights '");
	CHECK_CONTAINS(r.err, "' do not match: sha256 is ");
	CHECK(strstr(r.err, "weights 'w'") == NULL);
}

/*
 * What bash offers after the words typed: the installed completion
 * script run by bash itself on COMP_WORDS (the last word the partial
 * one), one candidate a line in *out.
 */
static int
complete(const char *script, const char *words, char **out)
{
	char text[4096];

	if (snprintf(text, sizeof(text), "set -e\nsource '%s'\n"
	    "COMP_WORDS=('%s' %s)\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
	    "_bisectctl\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n", script, cli_ctl,
	    words) >= (int)sizeof(text))
		abort();	/* paths of the test's own beyond its buffer */
	check_write_file("complete.sh", text);
	return check_run("bash complete.sh", out);
}

/* What is typed, and what bash then offers. */
static const struct {
	const char *line, *want;
} completions[] = {
	{ "ver", "versions\n" },
	{ "re", "reparse\nreport\n" },
	{ "report --f", "--format\n--for-upstream\n" },
	{ "status --format ''", "text\njson\n" },
	{ "-c env.conf runs b", "basert\n" },
	{ "-c env.conf fetch basert 0.2.",
	  "0.2.0\n0.2.1\n0.2.2\n0.2.3\n0.2.4\n0.2.5\n0.2.6\n" },
	{ "--config=env.conf bisect --all basert 0.2.3..0.2.",
	  "0.2.3..0.2.0\n0.2.3..0.2.1\n0.2.3..0.2.2\n"
	  "0.2.3..0.2.3\n0.2.3..0.2.4\n0.2.3..0.2.5\n0.2.3..0.2.6\n" },
	{ "-c broken.conf fetch ''", "\n" },
};

/*
 * cmake --install puts the bash completion where bash-completion looks,
 * and it completes commands, options, option values, engine names and
 * versions from the store (env.conf's, filled by test_secret_env).
 */
static void
test_completion(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char cmd[4096], script[4200], *out = NULL;

	snprintf(cmd, sizeof(cmd), "cmake --install '%s' --prefix "
	    "\"$PWD/inst\" >/dev/null", build);
	CHECK_INT(check_run(cmd, NULL), 0);
	snprintf(script, sizeof(script),
	    "inst/share/bash-completion/completions/bisectctl");
	CHECK(access(script, R_OK) == 0);
	/* A broken configuration completes nothing, and says nothing. */
	check_write_file("broken.conf", "[engine \"x\"\n");
	for (size_t i = 0; i < sizeof(completions) / sizeof(completions[0]);
	    i++) {
		int before = check_failures;

		CHECK_INT(complete(script, completions[i].line, &out), 0);
		CHECK_STR(out, completions[i].want);
		if (check_failures > before)
			fprintf(stderr, "  in completions[%zu]: '%s'\n", i,
			    completions[i].line);
		free(out);
	}
}

/* bisect --dry-run: the releases and the exact first commands, and
 * nothing fetched or run. */
static void
test_dry_run(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	struct cli_result r;
	char line[8192], cwd[4096];

	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bisect",
	    "--dry-run", "--threshold", "10%", "basert", "0.2.0..0.2.6",
	    NULL });
	CHECK_INT(r.status, 0);
	CHECK_CONTAINS(r.out, "bisect basert 0.2.0..0.2.6: metric per-token, "
	    "threshold 10%; 7 releases (nothing is fetched or run)");
	CHECK_CONTAINS(r.out, ", the good end\n");
	CHECK_CONTAINS(r.out, "  0.2.3                listed\n");
	CHECK_CONTAINS(r.out, "  0.2.6                listed, the bad end\n");
	/* As a run executes it: the engine's env before the command. */
	snprintf(line, sizeof(line), "  0.2.6 pp128: env FAKE_ENGINE_PRINT_ENV=1 "
	    "%s/envcache/releases/basert/0.2.6/bin/fake-engine -m "
	    "%s/demo/weights.bin -p 128 -n 0 -t 1 -r 1 -o json\n",
	    getcwd(cwd, sizeof(cwd)) ? cwd : "?", build);
	CHECK_CONTAINS(r.out, line);
	CHECK_CONTAINS(r.out, "about 3 probes");
	CHECK(access("envcache/releases/basert/0.2.6", F_OK) < 0);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "runs",
	    "basert", "0.2.6", NULL });
	CHECK(strstr(r.out, "pp128") == NULL);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "env.conf", "bisect",
	    "--dry-run", "--now", "basert", "0.2.0..0.2.6", NULL });
	CHECK_INT(r.status, 2);
}

/*
 * The README's command table and bisectctl's --help agree: every
 * command --help lists has the row "| `NAME USAGE` |" with the usage
 * its own --help prints, and the table has no other command.
 */
static void
test_readme_agrees(void)
{
	const char *src = check_source_dir();
	char path[4096], *readme, *p, *table;
	struct cli_result help, one;
	int commands = 0;

	snprintf(path, sizeof(path), "%s/README.md", src);
	readme = check_read_file(path);
	CHECK(readme != NULL);
	if (readme == NULL)
		return;
	table = strstr(readme, "| command | does |");
	CHECK(table != NULL);
	if (table && (p = strstr(table, "\n\n")) != NULL)
		p[1] = '\0';
	/* Markdown writes a "|" inside a cell as "\|". */
	for (p = table; p && *p; p++)
		if (p[0] == '\\' && p[1] == '|')
			memmove(p, p + 1, strlen(p));
	cli_run(&help, 0, AS_ROOT, (const char *[]){ "--help", NULL });
	p = strstr(help.out, "commands:\n");
	CHECK(p != NULL);
	for (p = p ? p + 10 : NULL; p && p[0] == ' ' && p[1] == ' '; ) {
		char name[64], row[512], *u;

		if (sscanf(p, " %63s", name) != 1)
			break;
		cli_run(&one, 0, AS_ROOT, (const char *[]){ name, "--help", NULL });
		CHECK_INT(one.status, 0);
		/* "usage: bisectctl [-c FILE] NAME USAGE\n" */
		u = strstr(one.out, "] ");
		if (u) {
			u[strcspn(u, "\n")] = '\0';
			while (u[0] && u[strlen(u) - 1] == ' ')
				u[strlen(u) - 1] = '\0';
			snprintf(row, sizeof(row), "| `%s` |", u + 2);
			if (table == NULL || strstr(table, row) == NULL)
				fprintf(stderr, "README lacks the row %s\n",
				    row);
			CHECK(table != NULL && strstr(table, row) != NULL);
		}
		commands++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	CHECK(commands >= 14);
	/* No row for a command --help does not list. */
	for (p = table; p && (p = strstr(p, "\n| `")) != NULL; p += 4) {
		char name[64], want[80];

		if (sscanf(p + 4, "%63[a-z-]", name) != 1)
			continue;
		snprintf(want, sizeof(want), "  %s ", name);
		CHECK_CONTAINS(help.out, want);
	}
	free(readme);
}

/* Occurrences of sub in s. */
static int
count_of(const char *s, const char *sub)
{
	int n = 0;

	for (; (s = strstr(s, sub)) != NULL; s += strlen(sub))
		n++;
	return n;
}

/*
 * A command whose binary is missing fails at spawn: the cell fails at
 * once, one stored run per cell instead of one per warm-up and
 * repetition, each saying why.
 */
static void
test_spawn_failure(void)
{
	struct cli_result r;

	demo_config("sp.conf", "sp", "\tcommand = {bin}/bin/no-such-engine "
	    "-p {prompt} -n {gen}\n"
	    "\tprompts = 64,128\n\tgen = 4\n\twarmup = 1\n");
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "sp.conf", "bench",
	    "basert", "0.2.0", "--reps", "3", NULL });
	CHECK_INT(r.status, 1);
	cli_run(&r, 0, AS_ROOT, (const char *[]){ "-c", "sp.conf", "runs",
	    "basert", "0.2.0", "--format", "json", NULL });
	CHECK_INT(r.status, 0);
	/* Three cells (pp64, pp128, tg4); 3 reps after 1 warm-up would
	 * be 12 runs. */
	CHECK_INT(count_of(r.out, "\"failure\": \"spawn\""), 3);
	CHECK_INT(count_of(r.out, "\"id\": "), 3);
	CHECK_CONTAINS(r.out, "no-such-engine");
}

int
main(void)
{
	cli_setup("cli");
	CHECK_CASE(test_help_and_usage);
	CHECK_CASE(test_check_config);
	CHECK_CASE(test_http_exposed);
	CHECK_CASE(test_bad_configs);
	CHECK_CASE(test_versions_empty);
	CHECK_CASE(test_secret_env);
	CHECK_CASE(test_check_config_problems);
	CHECK_CASE(test_daemon_options);
	CHECK_CASE(test_usage_errors);
	CHECK_CASE(test_completion);
	CHECK_CASE(test_dry_run);
	CHECK_CASE(test_readme_agrees);
	CHECK_CASE(test_spawn_failure);
	return check_done();
}
