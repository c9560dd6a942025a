/*
 * test_commits.c: bisectctl bisect --commits end to end on a git
 * repository made here: a small C engine over 24 commits, built with cc
 * at each commit the search asks for.  One commit makes the per-token
 * work three times slower; the commit before it does not compile.  The
 * bisect names the slow commit (with the broken one among the
 * candidates), confirms it, shows the broken build's log, prints the
 * commit in every report format; a bisect killed during a build resumes
 * without building a finished commit again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "check_json.h"
#include "gitengine.h"
#include "fetch/gitrepo.h"

static const char *ctl;

static void
write_config(const char *name, const char *db, const char *cache,
    const char *extra_build)
{
	char text[4096];

	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = %s\n\tmax-busy = 100%%\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"eng\"]\n\tsource = git:repo\n"
	    "\tcommand = {bin}/engine -p {prompt}\n"
	    "\tparser = regex:prefill_ms=([0-9.]+)\n\tregex-unit = ms\n"
	    "\tprompts = 128,512\n\tgen = 16\n\treps = 3\n\twarmup = 0\n"
	    "\ttimeout = 1m\n"
	    "\tbuild = cc -O0 -o {out}/engine {src}/engine.c\n%s%s%s",
	    db, cache, extra_build ? "\tbuild = " : "",
	    extra_build ? extra_build : "", extra_build ? "\n" : "");
	check_write_file(name, text);
}

static int
ctl_text(const char *args, char **out)
{
	char cmd[4096];

	if (snprintf(cmd, sizeof(cmd), "%s %s 2>&1", ctl, args) >=
	    (int)sizeof(cmd))
		abort();
	return check_run(cmd, out);
}

static char *
read_id(const char *file)
{
	char *s = check_read_file(file);

	if (s != NULL)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

static const char *
jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* How many builds the report says each commit had, summed, and the
 * most any one had. */
static void
count_builds(json_t *rep, int *total, int *most, int *trees)
{
	size_t i;
	json_t *r;

	*total = *most = *trees = 0;
	json_array_foreach(json_object_get(rep, "releases"), i, r) {
		json_t *c = json_object_get(r, "commit");
		int n = (int)json_integer_value(json_object_get(c, "builds"));

		*total += n;
		if (n > *most)
			*most = n;
		*trees += strcmp(jstr(c, "build"), "built") == 0;
	}
}

static int cache_state(const char *dir, char building[41]);

/*
 * bisect --dry-run --commits: the commits of the range, the build lines
 * of both ends and the commands that measure them; nothing built.
 */
static void
test_dry_run(void)
{
	char *slow = read_id("slow.id"), *text = NULL, line[4096], cwd[2048];
	const char *p;
	json_t *plan, *b;

	CHECK_INT(ctl_text("-c dry.conf bisect --dry-run --commits eng "
	    "v1.0..v2.0", &text), 0);
	CHECK_CONTAINS(text, "bisect --commits eng v1.0..v2.0: metric "
	    "per-token, threshold 20%; 24 commits, first parents (nothing is "
	    "built or run)\n");
	snprintf(line, sizeof(line), "  %.12s not built \"slow: per-token "
	    "work tripled\"\n", slow ? slow : "?");
	CHECK_CONTAINS(text, line);
	CHECK_CONTAINS(text, "\"the engine\", the good end\n");
	CHECK_CONTAINS(text, "it starts by building both ends:\n");
	/* The good end's build line, in its checkout, {out} expanded. */
	p = text ? strstr(text, " build: cd ") : NULL;
	CHECK(p != NULL);
	snprintf(line, sizeof(line), "%s/dcache/releases/eng/.tmp-",
	    getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	CHECK(p && strstr(p, line) != NULL);
	CHECK_CONTAINS(p, "-src-");
	CHECK_CONTAINS(p, " && cc -O0 -o ");
	CHECK_CONTAINS(p, "/engine.c\n");
	/* Measured with the engine's env, from the built tree. */
	snprintf(line, sizeof(line), "pp512: env ENGINE_QUIET=1 %s/dcache/"
	    "releases/eng/", cwd);
	CHECK_CONTAINS(text, line);
	CHECK_CONTAINS(text, "/engine -p 512\n");
	CHECK_CONTAINS(text, "then it builds and measures the commits between "
	    "them, halving the range each time (about 5 probes).\n");
	free(text);

	CHECK_INT(check_ctl_json(ctl, "-c dry.conf --format json bisect "
	    "--dry-run --commits eng v1.0..v2.0", 0, &plan), 0);
	CHECK_STR(jstr(plan, "points"), "commits");
	CHECK(json_is_true(json_object_get(plan, "first_parent")));
	CHECK_INT(json_array_size(json_object_get(plan, "releases")), 24);
	CHECK_INT(json_array_size(json_object_get(plan, "builds")), 2);
	b = json_array_get(json_object_get(plan, "builds"), 1);
	CHECK(json_is_false(json_object_get(b, "cached")));
	CHECK_INT(json_array_size(json_object_get(b, "commands")), 1);
	CHECK_INT(json_array_size(json_object_get(plan, "commands")), 4);
	json_decref(plan);
	/* Nothing was built: no tree, no checkout, no build started. */
	CHECK_INT(cache_state("dcache/releases/eng", line), 0);
	snprintf(line, sizeof(line), "-c dry.conf runs eng %s", slow);
	CHECK_INT(ctl_text(line, &text), 0);
	CHECK(text && strstr(text, "build started") == NULL);
	free(text);
	free(slow);
}

static void
test_bisect_commits(void)
{
	char *broken = read_id("broken.id"), *slow = read_id("slow.id");
	char *good = read_id("good.id"), *text = NULL, args[512];
	json_t *rep, *v, *c, *x;
	int found_broken = 0, total, most, trees;
	size_t i;

	CHECK_INT(check_ctl_json(ctl, "-c c.conf bisect --now --commits eng "
	    "v1.0..v2.0 --format json", 0, &rep), 3);
	v = json_object_get(rep, "verdict");
	CHECK_STR(jstr(v, "status"), "regression");
	CHECK_STR(jstr(rep, "points"), "commits");
	CHECK_STR(jstr(v, "first_bad"), slow);
	CHECK_STR(jstr(v, "last_good"), good);
	CHECK(json_is_true(json_object_get(v, "confirmed")));
	CHECK_STR(jstr(v, "kind"), "per-token");
	c = json_object_get(v, "commit");
	CHECK_STR(jstr(c, "id"), slow);
	CHECK_STR(jstr(c, "subject"), "slow: per-token work tripled");
	CHECK_STR(jstr(c, "author"), "Ada Lovelace");
	CHECK_STR(jstr(c, "date"), "2026-01-01T16:00:00Z");
	CHECK(json_is_null(json_object_get(c, "url")));
	/* The broken commit was skipped: it is a candidate. */
	json_array_foreach(json_object_get(v, "candidate_commits"), i, x)
		found_broken += strcmp(jstr(x, "id"), broken) == 0 &&
		    strcmp(jstr(x, "build"), "failed") == 0;
	CHECK_INT(found_broken, 1);
	CHECK_INT((int)json_array_size(json_object_get(rep, "releases")), 24);
	/* Only what the search asked for was built: far fewer than 24. */
	count_builds(rep, &total, &most, &trees);
	CHECK(total >= 4 && total <= 12);
	CHECK_INT(most, 1);
	json_decref(rep);

	/* The broken build's log is kept and shown by runs. */
	snprintf(args, sizeof(args), "-c c.conf runs eng %s", broken);
	CHECK_INT(ctl_text(args, &text), 0);
	CHECK_CONTAINS(text, "build: failed, 1 build started");
	CHECK_CONTAINS(text, "refactor the token loop");
	CHECK_CONTAINS(text, "$ cc -O0 -o");
	CHECK_CONTAINS(text, "error");
	free(text);

	/* Every format names the commit, from the store alone. */
	CHECK_INT(ctl_text("-c c.conf report --commits eng v1.0..v2.0",
	    &text), 3);
	CHECK_CONTAINS(text, "first bad commit");
	CHECK_CONTAINS(text, "\"slow: per-token work tripled\" by Ada "
	    "Lovelace, 2026-01-01T16:00:00Z");
	CHECK_CONTAINS(text, "(does not build)");
	free(text);
	CHECK_INT(ctl_text("-c c.conf report --commits eng v1.0..v2.0 "
	    "--format markdown", &text), 3);
	CHECK_CONTAINS(text, "first bad commit");
	CHECK_CONTAINS(text, "slow: per-token work tripled");
	free(text);
	CHECK_INT(ctl_text("-c c.conf report --commits eng v1.0..v2.0 "
	    "--format csv", &text), 3);
	CHECK_CONTAINS(text, ",subject,author,date,url,verdict\n");
	CHECK_CONTAINS(text, "\"slow: per-token work tripled\",\"Ada "
	    "Lovelace\",2026-01-01T16:00:00Z,,first-bad\n");
	CHECK_CONTAINS(text, ",candidate\n");
	free(text);

	/* The ends may be commit ids, abbreviated too; no commit is built
	 * a second time. */
	snprintf(args, sizeof(args), "-c c.conf bisect --now --commits eng "
	    "%.10s..v2.0 --format json", good);
	CHECK_INT(check_ctl_json(ctl, args, 0, &rep), 3);
	CHECK_STR(jstr(json_object_get(rep, "verdict"), "first_bad"), slow);
	count_builds(rep, &total, &most, &trees);
	CHECK_INT(most, 1);
	json_decref(rep);

	/* Hostile or unknown ends: one message, exit 1, nothing built. */
	CHECK_INT(ctl_text("-c c.conf bisect --now --commits eng "
	    "v1.0..no/such/../tag", &text), 1);
	CHECK_CONTAINS(text, "'no/such/../tag' is neither a tag nor a commit");
	free(text);
	CHECK_INT(ctl_text("-c c.conf bisect --now --commits eng v2.0..v1.0",
	    &text), 1);
	CHECK_CONTAINS(text, "is not an ancestor of");
	free(text);
	free(broken);
	free(slow);
	free(good);
}

/* Built trees in the cache, and the commit whose build is under way
 * (its checkout exists) into building, or "". */
static int
cache_state(const char *dir, char building[41])
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int built = 0;

	building[0] = '\0';
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		built += gitrepo_is_id(de->d_name);
		if (strncmp(de->d_name, ".tmp-", 5) == 0 &&
		    strncmp(de->d_name + 45, "-src-", 5) == 0) {
			snprintf(building, 41, "%.40s", de->d_name + 5);
			if (!gitrepo_is_id(building))
				building[0] = '\0';
		}
	}
	closedir(d);
	return built;
}

/* The builds the report says commit id had. */
static int
builds_of(json_t *rep, const char *id)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(rep, "releases"), i, r)
		if (strcmp(jstr(r, "version"), id) == 0)
			return (int)json_integer_value(json_object_get(
			    json_object_get(r, "commit"), "builds"));
	return -1;
}

/*
 * kill -9 during a build: the resumed bisect reaches the same verdict,
 * builds the interrupted commit again, and no finished one.
 */
static void
test_kill_during_build(void)
{
	char *slow = read_id("slow.id"), building[41], path[256], *tree = NULL;
	json_t *rep;
	pid_t pid;
	int status, built = 0, total, most, trees, finished;

	if ((pid = fork()) == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(ctl, ctl, "-c", "k.conf", "bisect", "--now", "--commits",
		    "eng", "v1.0..v2.0", (char *)NULL);
		_exit(127);
	}
	/* Two commits built (the ends), and a third under way. */
	building[0] = '\0';
	for (int k = 0; k < 3000; k++) {
		built = cache_state("kcache/releases/eng", building);
		if (built >= 2 && building[0])
			break;
		check_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	CHECK(built >= 2 && building[0]);
	/* The kill may land just as that build's last line ended: then it
	 * finished, and is not built again either. */
	snprintf(path, sizeof(path), "kcache/releases/eng/%s/.unpacked",
	    building);
	finished = (tree = check_read_file(path)) != NULL;
	free(tree);

	CHECK_INT(check_ctl_json(ctl, "-c k.conf bisect --now --commits eng "
	    "v1.0..v2.0 --format json", 0, &rep), 3);
	CHECK_STR(jstr(json_object_get(rep, "verdict"), "first_bad"), slow);
	count_builds(rep, &total, &most, &trees);
	/* The interrupted build was done again; every other commit was
	 * built once (the broken one too, without a tree). */
	CHECK_INT(builds_of(rep, building), finished ? 1 : 2);
	CHECK_INT(most, finished ? 1 : 2);
	CHECK_INT(total, trees + 1 + !finished);
	CHECK(cache_state("kcache/releases/eng", building) == trees);
	json_decref(rep);
	free(slow);
}

/*
 * drill-down = yes: the release bisect finds 1.3 after 1.2 and goes on
 * by itself into the commits between their tags; the verdict and every
 * format carry both levels.
 */
static void
test_drill_down(void)
{
	char *slow = read_id("slow.id"), *text = NULL;
	json_t *rep, *v, *dd;

	check_write_file("d.conf",
	    "[bisectd]\n\tdatabase = d.db\n\tcache = dcache\n"
	    "\tmax-busy = 100%\n"
	    "[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"eng\"]\n\tsource = dir:rel\n"
	    "\tasset = eng-{version}.tar.gz\n\trepo = repo\n"
	    "\tcommand = {bin}/engine -p {prompt}\n"
	    "\tparser = regex:prefill_ms=([0-9.]+)\n\tregex-unit = ms\n"
	    "\tprompts = 128,512\n\tgen = 16\n\treps = 3\n\twarmup = 0\n"
	    "\ttimeout = 1m\n\tdrill-down = yes\n"
	    "\tbuild = cc -O0 -o {out}/engine {src}/engine.c\n");
	CHECK_INT(check_ctl_json(ctl, "-c d.conf bisect --now eng 1.0..2.0 "
	    "--format json", 0, &rep), 3);
	v = json_object_get(rep, "verdict");
	CHECK_STR(jstr(rep, "points"), "releases");
	CHECK_STR(jstr(v, "first_bad"), "1.3");
	CHECK_STR(jstr(v, "last_good"), "1.2");
	dd = json_object_get(v, "drill_down");
	CHECK_STR(jstr(dd, "range"), "1.2..1.3");
	CHECK_STR(jstr(dd, "status"), "regression");
	CHECK_STR(jstr(dd, "first_bad"), slow);
	CHECK(json_is_true(json_object_get(dd, "confirmed")));
	CHECK_STR(jstr(json_object_get(v, "commit"), "id"), slow);
	json_decref(rep);

	/* The report from the store carries both levels, in each format. */
	CHECK_INT(ctl_text("-c d.conf report eng 1.0..2.0", &text), 3);
	CHECK_CONTAINS(text, "first bad 1.3, last good 1.2");
	CHECK_CONTAINS(text, "drill-down into the commits 1.2..1.3: "
	    "regression");
	CHECK_CONTAINS(text, "\"slow: per-token work tripled\" by Ada");
	free(text);
	CHECK_INT(ctl_text("-c d.conf report eng 1.0..2.0 --format markdown",
	    &text), 3);
	CHECK_CONTAINS(text, "first bad commit");
	free(text);
	CHECK_INT(ctl_text("-c d.conf report eng 1.0..2.0 --format csv",
	    &text), 3);
	CHECK_CONTAINS(text, ",\"1.3\",measured,");
	CHECK_CONTAINS(text, "\"slow: per-token work tripled\",\"Ada "
	    "Lovelace\",2026-01-01T16:00:00Z,,first-bad-commit ");
	free(text);
	CHECK_INT(check_ctl_json(ctl, "-c d.conf report eng 1.0..2.0 --format "
	    "json", 0, &rep), 3);
	CHECK_STR(jstr(json_object_get(json_object_get(rep, "verdict"),
	    "commit"), "id"), slow);
	json_decref(rep);
	free(slow);
}

static void
test_github_link(void)
{
	const char *id = "0123456789abcdef0123456789abcdef01234567";
	char buf[256];

	CHECK_INT(gitrepo_github_link("https://github.com/ggml-org/llama.cpp"
	    ".git", id, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "https://github.com/ggml-org/llama.cpp/commit/"
	    "0123456789abcdef0123456789abcdef01234567");
	CHECK_INT(gitrepo_github_link("git@github.com:o/r", id, buf,
	    sizeof(buf)), 0);
	CHECK_STR(buf, "https://github.com/o/r/commit/"
	    "0123456789abcdef0123456789abcdef01234567");
	CHECK_INT(gitrepo_github_link("https://gitlab.com/o/r", id, buf,
	    sizeof(buf)), -1);
	CHECK_INT(gitrepo_github_link("https://github.com/o/r/x", id, buf,
	    sizeof(buf)), -1);
	CHECK_INT(gitrepo_github_link("https://github.com/o/r?x=\"<", id, buf,
	    sizeof(buf)), -1);
	CHECK_INT(gitrepo_github_link("https://github.com/o/..", id, buf,
	    sizeof(buf)), -1);
	CHECK_INT(gitrepo_github_link("https://github.com/o/r", "v1.0", buf,
	    sizeof(buf)), -1);
	CHECK_INT(gitrepo_is_id("0123456789abcdef0123456789abcdef0123456"), 0);
	CHECK_INT(gitrepo_is_id("../../../../0123456789abcdef0123456789ab"),
	    0);
}

/* The references a range's end is looked up as: only names git takes,
 * a DEL byte included, which libgit2 lets by (found by fuzz_git). */
static void
test_name_refs(void)
{
	char refs[2][GITREPO_REF_MAX], huge[600];

	CHECK_INT(gitrepo_name_refs("1.0", refs), 0);
	CHECK_STR(refs[0], "refs/tags/1.0");
	CHECK_STR(refs[1], "refs/tags/v1.0");
	CHECK_INT(gitrepo_name_refs("abcdef1", refs), 1);
	CHECK_STR(refs[0], "refs/tags/abcdef1");
	CHECK_INT(gitrepo_name_refs("ABCDEF0123456789abcdef0123456789abcdef01",
	    refs), 1);
	CHECK_INT(gitrepo_name_refs("abcdef", refs), 0);
	CHECK_INT(gitrepo_name_refs("abcdefg", refs), 0);
	for (size_t i = 0; i < 4; i++) {
		static const char *const bad[] = {
			"../../x", "a..b", "a//b", "\x7f" "1",
		};

		CHECK_INT(gitrepo_name_refs(bad[i], refs), 0);
		CHECK_STR(refs[0], "");
		CHECK_STR(refs[1], "");
	}
	/* "vNAME" must fit as well as "NAME". */
	memset(huge, 'a', 298);
	huge[298] = '\0';
	gitrepo_name_refs(huge, refs);
	CHECK_INT(strlen(refs[0]), 308);
	CHECK_INT(strlen(refs[1]), 309);
	huge[298] = 'a';
	huge[299] = '\0';
	gitrepo_name_refs(huge, refs);
	CHECK_INT(strlen(refs[0]), 309);
	CHECK_STR(refs[1], "");
}

int
main(void)
{
	check_env(&ctl, NULL, NULL);
	check_tmpdir("commits");
	CHECK_CASE(test_github_link);
	CHECK_CASE(test_name_refs);
	check_write_file("w.bin", "weights\n");
	CHECK_INT(gitengine_make_repo(), 0);
	write_config("c.conf", "c.db", "ccache", NULL);
	write_config("k.conf", "k.db", "kcache", "sleep 1");
	check_write_file("dry.conf", "[bisectd]\n\tdatabase = dry.db\n"
	    "\tcache = dcache\n[weights \"w\"]\n\tpath = w.bin\n"
	    "[engine \"eng\"]\n\tsource = git:repo\n"
	    "\tcommand = {bin}/engine -p {prompt}\n\tenv = ENGINE_QUIET=1\n"
	    "\tparser = regex:prefill_ms=([0-9.]+)\n\tregex-unit = ms\n"
	    "\tprompts = 128,512\n"
	    "\tbuild = cc -O0 -o {out}/engine {src}/engine.c\n");
	CHECK_CASE(test_dry_run);
	CHECK_CASE(test_bisect_commits);
	CHECK_CASE(test_kill_during_build);
	CHECK_INT(gitengine_make_releases(), 0);
	CHECK_CASE(test_drill_down);
	return check_done();
}
