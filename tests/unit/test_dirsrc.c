/*
 * test_dirsrc.c: the dir: release source (fetch/dirsrc.c) on a real
 * folder: which files count, the versions, absolute paths, errors.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/conf.h"
#include "common/err.h"
#include "fetch/source.h"
#include "fetch/source_impl.h"
#include "fetch/version.h"

static char eng_name[] = "basert";

static void
engine(struct conf_engine *eng, char *dir, char *asset)
{
	memset(eng, 0, sizeof(*eng));
	eng->name = eng_name;
	eng->source = SOURCE_DIR;
	eng->source_arg = dir;
	eng->asset = asset;
}

static int
by_version(const void *a, const void *b)
{
	return version_cmp(((const struct release_info *)a)->version,
	    ((const struct release_info *)b)->version);
}

static void
test_listing(const char *root)
{
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char dir[PATH_MAX], asset[] = "basert-{version}.tar.gz";
	char want[PATH_MAX + 64];
	static const char *const versions[] = {
		"0.2.0", "0.2.9", "0.2.10", "0.3.0", "1.0.0-rc1",
	};

	CHECK_INT(check_run("mkdir -p releases/basert-9.9.9.tar.gz elsewhere && "
	    "cd releases && for v in 0.2.0 0.2.10 0.2.9 1.0.0-rc1; do "
	    "echo $v > basert-$v.tar.gz; done && "
	    "echo no > basert-0.2.0.zip && echo no > notes.txt && "
	    "echo no > .basert-0.5.0.tar.gz && echo no > basert-.tar.gz && "
	    "echo 0.3.0 > ../elsewhere/a && "
	    "ln -s ../elsewhere/a basert-0.3.0.tar.gz && "
	    "ln -s ../elsewhere/missing basert-0.4.0.tar.gz && "
	    "echo no > 'basert-0.6 0.tar.gz'", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/releases", root);
	engine(&eng, dir, asset);
	CHECK_INT(source_list_dir(&eng, NULL, &l, &e), 0);
	CHECK_INT(l.n, 5);
	qsort(l.v, l.n, sizeof(l.v[0]), by_version);
	for (size_t i = 0; i < l.n && i < 5; i++) {
		CHECK_STR(l.v[i].version, versions[i]);
		snprintf(want, sizeof(want), "%s/basert-%s.tar.gz", dir,
		    versions[i]);
		CHECK_STR(l.v[i].url, want);
		snprintf(want, sizeof(want), "basert-%s.tar.gz", versions[i]);
		CHECK_STR(l.v[i].asset, want);
		CHECK(l.v[i].sha256 == NULL);
		CHECK(l.v[i].sha256_origin == NULL);
		CHECK_INT(l.v[i].prerelease, 0);
	}

	/* Appended, not replaced; a relative folder still gives absolute
	 * paths; source_list() dispatches here. */
	{
		char rel[] = "releases";
		struct source_state state = { NULL, 1 };

		engine(&eng, rel, asset);
		CHECK_INT(source_list(&eng, &state, &l, &e), 0);
		CHECK_INT(l.n, 10);
		CHECK_INT(state.not_modified, 0);
		for (size_t i = 5; i < l.n; i++)
			CHECK(l.v[i].url && strncmp(l.v[i].url, dir,
			    strlen(dir)) == 0);
	}
	release_list_release(&l);
}

static void
test_errors(const char *root)
{
	struct conf_engine eng;
	struct release_list l = RELEASE_LIST_INIT;
	struct err e = ERR_INIT;
	char dir[PATH_MAX], asset[] = "x-{version}.zip";

	snprintf(dir, sizeof(dir), "%s/no-such-folder", root);
	engine(&eng, dir, asset);
	CHECK_INT(source_list_dir(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "engine 'basert'");
	CHECK_CONTAINS(e.msg, dir);
	CHECK_CONTAINS(e.msg, "No such file");

	snprintf(dir, sizeof(dir), "%s/releases", root);
	engine(&eng, dir, NULL);
	CHECK_INT(source_list_dir(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "needs an asset pattern");

	snprintf(dir, sizeof(dir), "%s/releases/notes.txt", root);
	engine(&eng, dir, asset);
	CHECK_INT(source_list_dir(&eng, NULL, &l, &e), -1);
	CHECK_CONTAINS(e.msg, "Not a directory");

	/* Nothing matching is an empty list, not an error. */
	CHECK_INT(check_run("mkdir -p empty", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/empty", root);
	engine(&eng, dir, asset);
	CHECK_INT(source_list_dir(&eng, NULL, &l, &e), 0);
	CHECK_INT(l.n, 0);
	release_list_release(&l);
}

int
main(void)
{
	const char *root = check_tmpdir("dirsrc");

	test_listing(root);
	test_errors(root);
	return check_done();
}
