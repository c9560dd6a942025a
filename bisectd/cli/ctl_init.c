/*
 * ctl_init.c: bisectctl init, a first configuration in one command: a
 * commented bisectd.conf for llama.cpp's CPU builds on this machine,
 * from its GitHub releases, a folder of archives or a URL template,
 * written only where no file is, then checked as check-config checks it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ctl.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/strv.h"
#include "config/conf.h"
#include "fetch/check.h"

#define LLAMA_REPO	"ggml-org/llama.cpp"
#define ENGINE_NAME	"llama"

/*
 * The platform part of llama.cpp's CPU release assets for this machine
 * ("ubuntu-x64" in llama-b4747-bin-ubuntu-x64.zip), or NULL.
 */
static const char *
llama_platform(const struct utsname *u)
{
	int linux_os = strcmp(u->sysname, "Linux") == 0;
	int mac = strcmp(u->sysname, "Darwin") == 0;

	if (strcmp(u->machine, "x86_64") == 0)
		return linux_os ? "ubuntu-x64" : mac ? "macos-x64" : NULL;
	if (strcmp(u->machine, "aarch64") == 0 ||
	    strcmp(u->machine, "arm64") == 0)
		return linux_os ? "ubuntu-arm64" : mac ? "macos-arm64" : NULL;
	return NULL;
}

/* Whether s can stand on a config line as it is: no newline, no '#'
 * that would start a comment, nothing the line map would trim. */
static int
line_safe(const char *s)
{
	return s[0] != '\0' && strpbrk(s, "\n\r#") == NULL && s[0] != ' ' &&
	    s[0] != '\t' && s[strlen(s) - 1] != ' ' &&
	    s[strlen(s) - 1] != '\t';
}

/* The source lines of the engine section: source, asset and versions. */
static int
source_lines(struct ctl *c, const char *kind, const char *platform,
    struct buf *b)
{
	int rc = 0;

	if (strcmp(kind, "llama.cpp") == 0) {
		if (c->argc > 1)
			return ctl_usage_error("init llama.cpp takes no "
			    "versions: they come from GitHub");
		rc |= buf_printf(b, "\t# llama.cpp's releases on GitHub "
		    "(b4743, b4744, ...), one archive a\n\t# release for "
		    "this machine.\n\tsource = github:%s\n", LLAMA_REPO);
		if (c->api && !line_safe(c->api))
			return ctl_usage_error("--api: '%s' cannot stand in a "
			    "config", c->api);
		if (c->api)
			rc |= buf_printf(b, "\t# The GitHub API asked for the "
			    "releases.\n\tapi = %s\n", c->api);
		/* Asked for by name: said in the file, and on stderr. */
		if (c->api && strncmp(c->api, "http://", 7) == 0) {
			rc |= buf_addstr(b, "\t# That API is plain http: "
			    "nothing it sends is authenticated.\n"
			    "\tallow-http = yes\n");
			fprintf(stderr, "bisectctl: warning: --api is plain "
			    "http; the config allows it (allow-http = yes)\n");
		}
		rc |= buf_printf(b, "\tasset = llama-{version}-bin-%s.zip\n",
		    platform);
	} else if (strncmp(kind, "dir:", 4) == 0) {
		char *dir;

		if (c->argc > 1)
			return ctl_usage_error("init dir:PATH takes no "
			    "versions: they are the archives' names");
		/* By its absolute path: the config's own resolve against
		 * its folder, not the folder init ran in. */
		if ((dir = realpath(kind + 4, NULL)) == NULL)
			return ctl_usage_error("init: cannot find the folder "
			    "'%s'", kind + 4);
		if (!line_safe(dir)) {
			free(dir);
			return ctl_usage_error("init: '%s' cannot stand in a "
			    "config", kind + 4);
		}
		rc |= buf_printf(b, "\t# The archives in a folder, as "
		    "downloaded from llama.cpp's\n\t# releases; each name "
		    "gives its version.\n\tsource = dir:%s\n\tasset = "
		    "llama-{version}-bin-%s.zip\n", dir, platform);
		free(dir);
	} else if (strncmp(kind, "url:", 4) == 0) {
		if (strstr(kind, "{version}") == NULL)
			return ctl_usage_error("init url:TEMPLATE: the "
			    "template has no {version}");
		if (c->argc < 2)
			return ctl_usage_error("init url:TEMPLATE needs the "
			    "versions it downloads, oldest first");
		rc |= buf_printf(b, "\t# Downloaded from a URL template, one "
		    "archive a version.\n\tsource = %s\n\tversions = ", kind);
		for (int i = 1; i < c->argc; i++) {
			if (!line_safe(c->argv[i]) || strchr(c->argv[i], ','))
				return ctl_usage_error("init: version '%s' "
				    "cannot stand in a config", c->argv[i]);
			rc |= buf_printf(b, "%s%s", i > 1 ? "," : "",
			    c->argv[i]);
		}
		rc |= buf_addstr(b, "\n");
	} else
		return ctl_usage_error("init: expected llama.cpp, dir:PATH or "
		    "url:TEMPLATE, got '%s'", kind);
	return rc < 0 ? ctl_error("out of memory") : 0;
}

/* The whole file into b; EXIT_OK or the exit status of its refusal. */
static int
config_text(struct ctl *c, const char *kind, const char *model,
    struct buf *b)
{
	struct utsname u;
	const char *platform;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	if (uname(&u) < 0)
		return ctl_error("init: cannot read the machine's name");
	if ((platform = llama_platform(&u)) == NULL)
		return ctl_error("init: llama.cpp publishes no CPU build for "
		    "%s on %s; give the archives with dir:PATH or "
		    "url:TEMPLATE", u.machine, u.sysname);
	if (!line_safe(kind) || !line_safe(model))
		return ctl_usage_error("init: '%s' cannot stand in a config",
		    line_safe(kind) ? model : kind);
	rc = buf_printf(b,
	    "# bisectd.conf for llama.cpp's CPU builds on this machine (%s, "
	    "%s),\n"
	    "# written by 'bisectctl init'.  Every key is described in\n"
	    "# bisectd.conf(5); 'bisectctl -c FILE check-config' checks it.\n"
	    "\n"
	    "[bisectd]\n"
	    "\t# Relative paths resolve against this file's folder.\n"
	    "\tdatabase = bisectd.db\n"
	    "\tcache = cache\n"
	    "\n"
	    "[weights \"model\"]\n"
	    "\t# The one GGUF file every release is measured on, pinned by "
	    "its sha256.\n"
	    "\tpath = %s\n"
	    "\n"
	    "[engine \"" ENGINE_NAME "\"]\n", u.machine, u.sysname, model);
	if (rc < 0)
		return ctl_error("out of memory");
	if ((rc = source_lines(c, kind, platform, b)) != EXIT_OK)
		return rc;
	rc = buf_printf(b,
	    "\tcommand = {bin}/build/bin/llama-bench -m {weights} -p {prompt} "
	    "-n {gen} -t {threads} -r 1 -o json\n"
	    "\tparser = llama-bench\n"
	    "\tweights = model\n"
	    "\t# Prefill is measured at three lengths and decode apart: a "
	    "line\n"
	    "\t# through three lengths shows whether a slowdown is per token "
	    "or\n"
	    "\t# fixed, and whether the cost of a token grows with the "
	    "prompt.\n"
	    "\tprompts = 128,512,2048\n"
	    "\tfit = 128,512,2048\n"
	    "\tgen = 128\n"
	    "\t# This machine's online CPUs; fewer leave room for the rest "
	    "of it.\n"
	    "\tthreads = %ld\n"
	    "\t# The slowdown a bisect must find.\n"
	    "\tthreshold = 20%%\n"
	    "\t# When the daemon (bisectd -c FILE) looks for new releases and "
	    "compares\n"
	    "\t# each with the last good one: every night at 02:30.\n"
	    "\tschedule = 30 2 * * *\n", cpus > 0 ? cpus : 1);
	return rc < 0 ? ctl_error("out of memory") : EXIT_OK;
}

int
cmd_init(struct ctl *c)
{
	struct buf b = BUF_INIT(1 << 16);
	struct strv problems = STRV_INIT, notes = STRV_INIT;
	struct err e = ERR_INIT;
	struct conf *conf = NULL;
	const char *dir = c->dir ? c->dir : ".";
	char *path = NULL, *model = NULL;
	int rc;

	if (c->model && (model = realpath(c->model, NULL)) == NULL) {
		rc = ctl_usage_error("--model: cannot find '%s'", c->model);
		goto out;
	}
	if ((rc = config_text(c, c->argv[0], model ? model : "model.gguf",
	    &b)) != EXIT_OK)
		goto out;
	if (fs_mkdirs(dir, 0755, &e) < 0 || (path = fs_join(dir,
	    "bisectd.conf")) == NULL) {
		rc = e.msg[0] ? ctl_failed(&e) : ctl_error("out of memory");
		goto out;
	}
	if (fs_write_new(path, b.data, b.len, 0644, &e) < 0) {
		rc = ctl_failed(&e);
		goto out;
	}
	printf("wrote %s\n", path);
	/* Checked as check-config checks it: the file and the disk. */
	rc = conf_load_checked(path, fetch_check_local, &notes, &conf,
	    &problems);
	for (size_t i = 0; i < notes.n; i++)
		fprintf(stderr, "bisectctl: %s\n", notes.v[i]);
	if (rc < 0) {
		for (size_t i = 0; i < problems.n; i++)
			fprintf(stderr, "bisectctl: %s\n", problems.v[i]);
		fprintf(stderr, "bisectctl: edit %s for %s, then run "
		    "'bisectctl -c %s check-config'\n", path, problems.n == 1 ?
		    "it" : "them", path);
		rc = EXIT_FAIL;
		goto out;
	}
	printf("\nnext:\n"
	    "  bisectctl -c %s versions " ENGINE_NAME " --refresh\n"
	    "  bisectctl -c %s bisect --now " ENGINE_NAME " OLD..NEW\n"
	    "  bisectd -c %s          # the nightly watch\n", path, path,
	    path);
	rc = EXIT_OK;
out:
	conf_free(conf);
	strv_clear(&problems);
	strv_clear(&notes);
	buf_release(&b);
	free(path);
	free(model);
	return rc;
}
