/*
 * test_init.c: bisectctl init as a new user meets it: a config for
 * llama.cpp's GitHub releases that check-config accepts and that lists
 * the releases of a GitHub-shaped server on loopback; the same from a
 * folder of archives and from a URL template; never over a file; and
 * one clear refusal for each bad operand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "check.h"
#include "testserver.h"

static char ctl[4096];

/* The platform part of this machine's llama.cpp CPU asset, as init
 * picks it; NULL where llama.cpp has none. */
static const char *
platform(void)
{
	struct utsname u;

	if (uname(&u) < 0 || strcmp(u.sysname, "Linux") != 0)
		return NULL;
	if (strcmp(u.machine, "x86_64") == 0)
		return "ubuntu-x64";
	if (strcmp(u.machine, "aarch64") == 0)
		return "ubuntu-arm64";
	return NULL;
}

/* bisectctl args exits with status, its stderr saying want. */
static void
ctl_says(const char *args, int status, const char *want)
{
	char *err;

	CHECK_INT(check_ctl_run(ctl, args, NULL), status);
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, want);
	free(err);
}

/* What the user runs next on dir/bisectd.conf: check-config passes, and
 * the versions of llama, refreshed, are listed; the list (malloced). */
static char *
next_steps(const char *dir)
{
	char args[256], *out = NULL;

	snprintf(args, sizeof(args), "-c %s/bisectd.conf check-config", dir);
	CHECK_INT(check_ctl_run(ctl, args, NULL), 0);
	snprintf(args, sizeof(args), "-c %s/bisectd.conf versions llama "
	    "--refresh", dir);
	CHECK_INT(check_ctl_run(ctl, args, &out), 0);
	return out;
}

/* Three releases b100, b101, b102 of ggml-org/llama.cpp, each with this
 * machine's asset, a macOS one and a Vulkan one; b103 a draft. */
static void
make_releases(const struct testserver *ts, const char *plat)
{
	FILE *f;

	CHECK_INT(check_run("mkdir -p srv/api/ggml-org/llama.cpp", NULL), 0);
	if ((f = fopen("srv/api/ggml-org/llama.cpp/releases.jsonl", "w")) ==
	    NULL)
		abort();
	for (int i = 100; i <= 103; i++)
		fprintf(f, "{\"id\": %d, \"tag_name\": \"b%d\", \"draft\": %s, "
		    "\"prerelease\": false, \"assets\": ["
		    "{\"name\": \"llama-b%d-bin-macos-arm64.zip\", "
		    "\"browser_download_url\": \"%s/files/mac\", "
		    "\"digest\": null}, "
		    "{\"name\": \"llama-b%d-bin-%s.zip\", "
		    "\"browser_download_url\": \"%s/files/llama-b%d.zip\", "
		    "\"digest\": null}, "
		    "{\"name\": \"llama-b%d-bin-ubuntu-vulkan-x64.zip\", "
		    "\"browser_download_url\": \"%s/files/vulkan\", "
		    "\"digest\": null}]}\n", i, i, i == 103 ? "true" : "false",
		    i, ts->base, i, plat, ts->base, i, i, ts->base);
	fclose(f);
}

static void
test_github(void)
{
	const char *plat = platform();
	struct testserver ts;
	char args[1024], want[256], *out = NULL, *before, *after;

	if (plat == NULL) {
		printf("skip: llama.cpp has no CPU build for this machine\n");
		return;
	}
	CHECK_INT(check_run("mkdir -p srv/files", NULL), 0);
	if (testserver_start("srv", &ts) < 0) {
		CHECK(!"test server started");
		return;
	}
	make_releases(&ts, plat);
	check_write_file("model.gguf", "GGUF weights\n");
	snprintf(args, sizeof(args), "init llama.cpp --dir gh --model "
	    "model.gguf --api %s/api/", ts.base);
	CHECK_INT(check_ctl_run(ctl, args, &out), 0);
	CHECK_CONTAINS(out, "wrote gh/bisectd.conf");
	CHECK_CONTAINS(out, "bisectctl -c gh/bisectd.conf versions llama "
	    "--refresh");
	CHECK_CONTAINS(out, "bisectctl -c gh/bisectd.conf bisect --now llama");
	free(out);
	before = check_read_file("gh/bisectd.conf");
	CHECK(before != NULL);
	if (before == NULL)
		goto out;
	snprintf(want, sizeof(want), "asset = llama-{version}-bin-%s.zip",
	    plat);
	CHECK_CONTAINS(before, want);
	CHECK_CONTAINS(before, "source = github:ggml-org/llama.cpp");
	CHECK_CONTAINS(before, "parser = llama-bench");
	CHECK_CONTAINS(before, "prompts = 128,512,2048");
	CHECK_CONTAINS(before, "gen = 128");
	CHECK_CONTAINS(before, "schedule = 30 2 * * *");
	/* The model by its absolute path: the config may move. */
	CHECK_CONTAINS(before, "path = /");
	/* The plain-http API of the test is allowed in the file, openly. */
	CHECK_CONTAINS(before, "allow-http = yes");

	/* What the user runs next works as it is. */
	out = next_steps("gh");
	CHECK_CONTAINS(out, "b100");
	CHECK_CONTAINS(out, "b102");
	CHECK(out != NULL && strstr(out, "b103") == NULL);
	free(out);

	/* Never over a file: the second init leaves the first as it was. */
	ctl_says("init llama.cpp --dir gh", 1,
	    "'gh/bisectd.conf' exists: not overwritten");
	after = check_read_file("gh/bisectd.conf");
	CHECK(after != NULL && strcmp(before, after) == 0);
	free(after);
	free(before);
out:
	testserver_stop(&ts);
}

static void
test_dir(void)
{
	const char *plat = platform();
	char args[512], *out = NULL;

	if (plat == NULL)
		return;
	CHECK_INT(check_run("mkdir -p archives", NULL), 0);
	for (int i = 7; i <= 9; i++) {
		snprintf(args, sizeof(args), "archives/llama-b%d-bin-%s.zip", i,
		    plat);
		check_write_file(args, "PK");
	}
	/* No model given: the file is written, and the check names what
	 * is missing and where to fix it. */
	CHECK_INT(check_ctl_run(ctl, "init dir:archives --dir d", NULL), 1);
	out = check_read_file("stderr.txt");
	CHECK_CONTAINS(out, "d/bisectd.conf:12: weights.model.path: expected "
	    "an existing file");
	CHECK_CONTAINS(out, "edit d/bisectd.conf for it");
	CHECK(out != NULL && strstr(out, "source") == NULL);
	free(out);
	check_write_file("d/model.gguf", "GGUF\n");
	out = next_steps("d");
	CHECK_CONTAINS(out, "b7");
	CHECK_CONTAINS(out, "b9");
	free(out);
}

static void
test_url(void)
{
	char *out = NULL;

	check_write_file("m.gguf", "GGUF\n");
	CHECK_INT(check_ctl_run(ctl, "init 'url:https://example.org/"
	    "llama-{version}.zip' b1 b2 --dir u --model m.gguf", NULL), 0);
	out = check_read_file("u/bisectd.conf");
	CHECK_CONTAINS(out, "source = url:https://example.org/"
	    "llama-{version}.zip");
	CHECK_CONTAINS(out, "versions = b1,b2");
	free(out);
	CHECK_INT(check_ctl_run(ctl, "-c u/bisectd.conf check-config", NULL),
	    0);
	/* A template needs its versions, and a {version} to put them in. */
	ctl_says("init 'url:https://example.org/x.zip' b1 --dir u2", 2,
	    "the template has no {version}");
	ctl_says("init 'url:https://example.org/{version}.zip' --dir u2", 2,
	    "needs the versions it downloads");
	CHECK(check_read_file("u2/bisectd.conf") == NULL);
}

static void
test_refusals(void)
{
	ctl_says("init vllm --dir r", 2,
	    "expected llama.cpp, dir:PATH or url:TEMPLATE, got 'vllm'");
	ctl_says("init llama.cpp --dir r --model no-such.gguf", 2,
	    "--model: cannot find 'no-such.gguf'");
	/* A name that would end its line or start a comment. */
	CHECK_INT(check_run("mkdir -p 'a#b'", NULL), 0);
	ctl_says("init 'dir:a#b' --dir r", 2,
	    "init: 'dir:a#b' cannot stand in a config");
	ctl_says("init dir:nowhere --dir r", 2,
	    "init: cannot find the folder 'nowhere'");
	CHECK_INT(check_ctl_run(ctl, "init llama.cpp b1 --dir r", NULL), 2);
	CHECK(check_read_file("r/bisectd.conf") == NULL);
	/* init reads no configuration: a broken one does not stop it. */
	check_write_file("broken.conf", "[bisectd\n");
	CHECK_INT(check_ctl_run(ctl, "-c broken.conf init llama.cpp --help",
	    NULL), 0);
	/* After operands, a bad option is a usage error (and nothing leaks
	 * on the way out: under ASan a leak would make this 134). */
	CHECK_INT(check_ctl_run(ctl, "init llama.cpp --format xx", NULL), 2);
	CHECK_INT(check_ctl_run(ctl, "init llama.cpp --refresh", NULL), 2);
}

int
main(void)
{
	const char *bin = getenv("BISECTCTL");

	check_tmpdir("init");
	snprintf(ctl, sizeof(ctl), "'%s'", bin ? bin : "bisectctl");
	CHECK_CASE(test_github);
	CHECK_CASE(test_dir);
	CHECK_CASE(test_url);
	CHECK_CASE(test_refusals);
	return check_done();
}
