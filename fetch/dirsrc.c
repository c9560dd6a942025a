/*
 * dirsrc.c: the dir:PATH release source, for air-gapped machines and
 * tests: the regular files of one folder (symlinks to files count) whose
 * names match the engine's asset pattern, each a release whose version
 * is the {version} part and whose url is the file's absolute path.
 * Subfolders and names starting with '.' are not looked at.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/conf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "release_list.h"
#include "source_impl.h"

/* dir made absolute against the working directory if it is not
 * (conf_load() already makes it absolute); malloced. */
static char *
absolute_dir(const char *dir)
{
	char cwd[PATH_MAX];

	if (dir[0] == '/')
		return strdup(dir);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	return fs_join(cwd, dir);
}

/* Add the file called name if it matches; 0 also when it does not. */
static int
add_file(const struct conf_engine *eng, const char *dir, const char *name,
    struct release_list *out, struct err *e)
{
	struct release_info r;
	struct stat st;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	if (!asset_match(eng->asset, name, &r.version))
		return 0;
	r.url = fs_join(dir, name);
	r.asset = strdup(name);
	if (r.version == NULL || r.url == NULL || r.asset == NULL)
		rc = err_errno(e, "engine '%s': cannot list '%s'", eng->name,
		    dir);
	else if (stat(r.url, &st) == 0 && S_ISREG(st.st_mode) &&
	    release_list_add(out, &r) < 0)
		rc = err_errno(e, "engine '%s': cannot list '%s'", eng->name,
		    dir);
	release_info_release(&r);
	return rc;
}

int
source_list_dir(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e)
{
	struct dirent *de;
	char *dir;
	DIR *d;
	int rc = 0;

	(void)state;

	if (eng->asset == NULL)
		return err_set(e, "engine '%s': a dir: source needs an asset "
		    "pattern with {version}", eng->name);
	if ((dir = absolute_dir(eng->source_arg)) == NULL)
		return err_errno(e, "engine '%s': cannot resolve '%s'",
		    eng->name, eng->source_arg);
	if ((d = opendir(dir)) == NULL) {
		err_errno(e, "engine '%s': cannot open release folder '%s'",
		    eng->name, dir);
		free(dir);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			rc = add_file(eng, dir, de->d_name, out, e);
	if (rc == 0 && errno != 0)
		rc = err_errno(e, "engine '%s': cannot read release folder "
		    "'%s'", eng->name, dir);
	closedir(d);
	free(dir);
	return rc;
}

const struct source_kind source_kind_dir = { SOURCE_DIR, source_list_dir };
