/*
 * test_template.c: command templates split into arguments without a
 * shell, placeholders substituted inside words, hostile values kept whole.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "check.h"
#include "common/err.h"
#include "common/strv.h"
#include "bisectd/process/template.h"

static struct strv argv = STRV_INIT;
static struct err e = ERR_INIT;

/* Expand and return the number of arguments, or -1 with e set. */
static int
expand(const char *tmpl, const struct tmpl_vals *v)
{
	strv_clear(&argv);
	e.msg[0] = '\0';
	if (tmpl_expand(tmpl, v, &argv, &e) < 0)
		return -1;
	return (int)argv.n;
}

static void
test_placeholders(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;

	v.bin = "/cache/basert-0.2.3";
	v.version = "0.2.3";
	v.weights = "/w/qwen.gguf";
	v.prompt = 512;
	v.gen = 0;
	v.threads = 8;
	v.content = "/data/prose.txt";
	CHECK_INT(expand("{bin}/bench -m {weights} -p {prompt} -n {gen} "
	    "-t {threads} -f {content} --tag v{version}", &v), 13);
	CHECK_STR(argv.v[0], "/cache/basert-0.2.3/bench");
	CHECK_STR(argv.v[2], "/w/qwen.gguf");
	CHECK_STR(argv.v[4], "512");
	CHECK_STR(argv.v[6], "0");
	CHECK_STR(argv.v[8], "8");
	CHECK_STR(argv.v[10], "/data/prose.txt");
	CHECK_STR(argv.v[12], "v0.2.3");
	CHECK(argv.v[13] == NULL);
}

static void
test_hostile_values(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;

	v.bin = "/opt/my engine";	/* a path with a space */
	v.version = "0.2.0; rm -rf /";
	v.weights = "$(reboot)";
	v.content = "a b";
	CHECK_INT(expand("{bin}/bench --version {version} -m {weights} "
	    "-f {content}", &v), 7);
	CHECK_STR(argv.v[0], "/opt/my engine/bench");
	CHECK_STR(argv.v[2], "0.2.0; rm -rf /");
	CHECK_STR(argv.v[4], "$(reboot)");
	CHECK_STR(argv.v[6], "a b");

	/* Quotes and backslashes inside a value are data, not syntax. */
	v.version = "x' \"y\" \\z `id`";
	CHECK_INT(expand("run '{version}' \"{version}\" {version}", &v), 4);
	CHECK_STR(argv.v[1], "x' \"y\" \\z `id`");
	CHECK_STR(argv.v[2], "x' \"y\" \\z `id`");
	CHECK_STR(argv.v[3], "x' \"y\" \\z `id`");

	/* A value that looks like a placeholder is not expanded again. */
	v.version = "{weights}";
	CHECK_INT(expand("x {version}", &v), 2);
	CHECK_STR(argv.v[1], "{weights}");
}

static void
test_word_splitting(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;

	CHECK_INT(expand("  a\tb \n c  ", &v), 3);
	CHECK_STR(argv.v[0], "a");
	CHECK_STR(argv.v[2], "c");

	CHECK_INT(expand("'a b' \"c d\" e\\ f", &v), 3);
	CHECK_STR(argv.v[0], "a b");
	CHECK_STR(argv.v[1], "c d");
	CHECK_STR(argv.v[2], "e f");

	/* Adjacent parts join into one word, as in the shell. */
	CHECK_INT(expand("x'y z'\"w\"v", &v), 1);
	CHECK_STR(argv.v[0], "xy zwv");

	/* Escapes inside double quotes: only \" and \\. */
	CHECK_INT(expand("\"a\\\"b\\\\c\\n\"", &v), 1);
	CHECK_STR(argv.v[0], "a\"b\\c\\n");
	/* Single quotes keep backslashes. */
	CHECK_INT(expand("'a\\b'", &v), 1);
	CHECK_STR(argv.v[0], "a\\b");

	/* Shell syntax is ordinary text. */
	CHECK_INT(expand("echo $(id) ; ls | wc > out *", &v), 9);
	CHECK_STR(argv.v[1], "$(id)");
	CHECK_STR(argv.v[2], ";");
	CHECK_STR(argv.v[8], "*");

	/* Line continuation. */
	CHECK_INT(expand("a \\\n b", &v), 2);
	CHECK_STR(argv.v[1], "b");
}

static void
test_empty_values(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;

	v.bin = "/b";
	/* Unquoted, an empty value makes no argument; quoted, an empty one. */
	CHECK_INT(expand("{bin}/x {content} -v", &v), 2);
	CHECK_STR(argv.v[1], "-v");
	CHECK_INT(expand("{bin}/x \"{content}\" '' -v", &v), 4);
	CHECK_STR(argv.v[1], "");
	CHECK_STR(argv.v[2], "");
	/* Negative numbers mean no value. */
	CHECK_INT(expand("x -p{prompt}", &v), 2);
	CHECK_STR(argv.v[1], "-p");
}

static void
test_braces(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;

	v.gen = 64;
	CHECK_INT(expand("awk {{print} {gen}", &v), 3);
	CHECK_STR(argv.v[1], "{print}");
	CHECK_STR(argv.v[2], "64");
	/* Not a well-formed name: literal. */
	CHECK_INT(expand("x {} { {a b} '{{gen}'", &v), 6);
	CHECK_STR(argv.v[1], "{}");
	CHECK_STR(argv.v[2], "{");
	CHECK_STR(argv.v[3], "{a");
	CHECK_STR(argv.v[4], "b}");
	CHECK_STR(argv.v[5], "{gen}");
	/* A backslash outside quotes makes the brace literal. */
	CHECK_INT(expand("x \\{gen}", &v), 2);
	CHECK_STR(argv.v[1], "{gen}");
}

static void
test_errors(void)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	char *big;

	CHECK_INT(expand("bench {model}", &v), -1);
	CHECK_CONTAINS(e.msg, "unknown placeholder '{model}'");
	CHECK_INT(expand("bench 'oops", &v), -1);
	CHECK_CONTAINS(e.msg, "unterminated single quote");
	CHECK_INT(expand("bench \"oops", &v), -1);
	CHECK_CONTAINS(e.msg, "unterminated double quote");
	CHECK_INT(expand("bench oops\\", &v), -1);
	CHECK_CONTAINS(e.msg, "trailing backslash");
	CHECK_INT(expand("   ", &v), -1);
	CHECK_CONTAINS(e.msg, "empty command");
	CHECK_INT(expand("{content}", &v), -1);
	CHECK_CONTAINS(e.msg, "empty command");

	/* A value past the argument bound is refused, not truncated. */
	big = malloc(TMPL_MAX_ARG + 2);
	memset(big, 'a', TMPL_MAX_ARG + 1);
	big[TMPL_MAX_ARG + 1] = '\0';
	v.weights = big;
	CHECK_INT(expand("x {weights}", &v), -1);
	CHECK_CONTAINS(e.msg, "'{weights}' makes an argument longer");
	free(big);

	CHECK_INT(tmpl_check("{bin}/b -p {prompt} {content}", &e), 0);
	CHECK_INT(tmpl_check("{bin}/b {prompts}", &e), -1);
	CHECK_CONTAINS(e.msg, "'{prompts}'");
}

static void
test_quote_argv(void)
{
	const char *args[] = { "/opt/x/bench", "-p", "512", "a b",
	    "it's", "", "$(reboot)", NULL };
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct buf out = BUF_INIT(4096);
	size_t i;

	CHECK_INT(tmpl_quote_argv(args, &out), 0);
	CHECK_STR(out.data, "/opt/x/bench -p 512 'a b' 'it'\\''s' '' "
	    "'$(reboot)'");
	/* The quoted line splits back into the same words. */
	CHECK_INT(expand(out.data, &v), 7);
	for (i = 0; i < 7 && i < argv.n; i++)
		CHECK_STR(argv.v[i], args[i]);
	buf_release(&out);
}

int
main(void)
{
	check_tmpdir("template");
	CHECK_CASE(test_placeholders);
	CHECK_CASE(test_hostile_values);
	CHECK_CASE(test_word_splitting);
	CHECK_CASE(test_empty_values);
	CHECK_CASE(test_braces);
	CHECK_CASE(test_errors);
	CHECK_CASE(test_quote_argv);
	strv_clear(&argv);
	return check_done();
}
