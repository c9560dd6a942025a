/*
 * build.c: a commit made runnable by building it (see build.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acquire.h"
#include "bisectd/process/runner.h"
#include "bisectd/process/template.h"
#include "build.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "config/conf.h"
#include "fetch/cache.h"
#include "fetch/gitrepo.h"
#include "fetch/unpack.h"
#include "store/store.h"

/* What of a failed build's output is kept: its last bytes. */
#define BUILD_LOG_TAIL	4096

int
commit_buildable(const struct conf_engine *eng, struct err *e)
{
	if (eng->repo == NULL)
		return err_set(e, "engine %s has no repo (set [engine \"%s\"] "
		    "repo to its git repository)", eng->name, eng->name);
	if (eng->build.n == 0)
		return err_set(e, "engine %s has no build lines (set [engine "
		    "\"%s\"] build)", eng->name, eng->name);
	return 0;
}

/* CACHE/releases/ENGINE: where built trees live beside unpacked ones. */
static char *
engine_cache(const struct conf *conf, const struct conf_engine *eng)
{
	char rel[CACHE_DIRNAME_MAX + 16];

	snprintf(rel, sizeof(rel), "releases/%s", eng->name);
	return fs_join(conf->cache, rel);
}

/* Keep the last BUILD_LOG_TAIL bytes of what log holds, malloced. */
static char *
log_tail(const struct buf *log)
{
	size_t off = log->len > BUILD_LOG_TAIL ? log->len - BUILD_LOG_TAIL : 0;

	return strndup(log->data ? log->data + off : "", log->len - off);
}

/* A build line's placeholders: a job per core. */
static void
build_vals(struct tmpl_vals *v, const char *src, const char *out)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	v->src = src;
	v->out = out;
	v->jobs = cores > 0 ? (int)cores : 1;
}

/*
 * Run one build line in src until it ends, or until *stop, when it is
 * stopped.  Its command and output are appended to log.  Returns 0 when
 * it succeeded, 1 when it failed (why in e), 2 when stopped, -1 when the
 * runner could not work.
 */
static int
build_line(const struct conf_engine *eng, const char *line, const char *src,
    const char *out, const atomic_int *stop, struct buf *log, struct err *e)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	struct child_spec spec = CHILD_SPEC_INIT;
	struct strv argv = STRV_INIT;
	struct run_result res;
	struct run_proc *p;
	char why[600];
	int rc;

	build_vals(&v, src, out);
	if (tmpl_expand(line, &v, &argv, e) < 0) {
		strv_clear(&argv);
		return 1;
	}
	buf_addstr(log, "$ ");
	tmpl_quote_argv((const char *const *)argv.v, log);
	buf_addstr(log, "\n");
	spec.argv = (const char *const *)argv.v;
	spec.env = (const char *const *)eng->env.v;
	spec.workdir = src;
	spec.timeout_ms = eng->build_timeout_ms;
	spec.memory_max = eng->max_memory;
	spec.isolation = RUN_ISOLATE_AUTO;
	if (run_start(&spec, &p, e) < 0) {
		strv_clear(&argv);
		return -1;
	}
	while (!run_proc_exited(p) && !(stop && *stop))
		clock_sleep_ns(20 * 1000000LL);
	run_proc_stop(p, &res);
	buf_add(log, res.out.data ? res.out.data : "", res.out.len);
	buf_add(log, res.errtail.data ? res.errtail.data : "",
	    res.errtail.len);
	if (res.stopped)
		rc = 2;
	else if (res.reason != RUN_OK) {
		err_set(e, "'%s' %s", argv.v[0], run_describe(&res, why,
		    sizeof(why)));
		rc = 1;
	} else
		rc = 0;
	run_result_release(&res);
	strv_clear(&argv);
	return rc;
}

/* Check out id into src and run every build line; as build_line(). */
static int
build_tree(const struct conf *conf, const struct conf_engine *eng,
    const char *id, const char *src, const char *out,
    const atomic_int *stop, struct buf *log, struct err *e)
{
	struct gitrepo *g = NULL;
	int rc;

	if (gitrepo_open(conf->cache, eng->name, eng->repo, 1, &g, e) < 0)
		return -1;
	rc = gitrepo_checkout(g, id, src, e);
	gitrepo_close(g);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < eng->build.n; i++)
		if ((rc = build_line(eng, eng->build.v[i], src, out, stop, log,
		    e)) != 0)
			return rc;
	return 0;
}

int
commit_build_plan(const struct conf *conf, const struct conf_engine *eng,
    const char *id, struct strv *lines, char **bin, struct err *e)
{
	struct tmpl_vals v = TMPL_VALS_INIT;
	char *parent, src[4096], out[4096];
	int rc = 0;

	*bin = NULL;
	if (!gitrepo_is_id(id))
		return err_set(e, "'%s' is not a commit id", id);
	if ((parent = engine_cache(conf, eng)) == NULL ||
	    (*bin = fs_join(parent, id)) == NULL) {
		free(parent);
		return err_set(e, "out of memory");
	}
	/* The folders commits_build() makes, their random part as
	 * mkdtemp(3) leaves it to be chosen. */
	snprintf(src, sizeof(src), "%s/.tmp-%s-src-%ld-XXXXXX", parent, id,
	    (long)getpid());
	snprintf(out, sizeof(out), "%s/.tmp-%s-%ld-XXXXXX", parent, id,
	    (long)getpid());
	free(parent);
	if (fetch_unpack_complete(*bin))
		return 1;
	build_vals(&v, src, out);
	for (size_t i = 0; i < eng->build.n && rc == 0; i++) {
		struct strv argv = STRV_INIT;
		struct buf line = BUF_INIT(TMPL_MAX_LEN * 2);
		const char *cd[] = { "cd", src, NULL };
		char *text;

		if (tmpl_expand(eng->build.v[i], &v, &argv, e) < 0)
			rc = err_prefix(e, "engine %s: build", eng->name);
		else if (tmpl_quote_argv(cd, &line) < 0 ||
		    buf_addstr(&line, " && ") < 0 || tmpl_quote_argv(
		    (const char *const *)argv.v, &line) < 0)
			rc = err_set(e, "engine %s: a build line is too long to "
			    "show", eng->name);
		else if ((text = buf_take(&line)) == NULL ||
		    strv_push(lines, text) < 0) {
			free(text);
			rc = err_set(e, "out of memory");
		} else
			free(text);
		buf_release(&line);
		strv_clear(&argv);
	}
	return rc;
}

/* A finished build: the tree under its id, its mark written last. */
static int
install_tree(const char *tmp, const char *dir, struct err *e)
{
	struct err ge = ERR_INIT;
	char *mark = fs_join(tmp, UNPACK_COMPLETE_MARK);
	int rc;

	if (mark == NULL)
		return err_set(e, "out of memory");
	rc = fs_write_atomic(mark, "", 0, 0644, e);
	free(mark);
	if (rc < 0)
		return -1;
	/* A tree left by a build that did not finish is replaced. */
	if (fs_remove_tree(dir, &ge) < 0)
		return err_set(e, "%s", ge.msg);
	if (rename(tmp, dir) < 0)
		return err_errno(e, "cannot rename '%s' to '%s'", tmp, dir);
	return 0;
}

int
commit_build(const struct conf *conf, const struct conf_engine *eng,
    struct store *s, int64_t release_id, const char *id,
    const atomic_int *stop, struct acquired *out, struct err *e)
{
	struct store_commit_info c;
	struct buf log = BUF_INIT(1 << 20);
	struct err ie = ERR_INIT;
	char *parent = NULL, *dir = NULL, src[4096], tmp[4096];
	int64_t t0;
	int rc = -1, brc, have_src = 0, have_tmp = 0;

	memset(out, 0, sizeof(*out));
	if (!gitrepo_is_id(id))
		return err_set(e, "'%s' is not a commit id", id);
	if (commit_buildable(eng, e) < 0)
		return -1;
	if ((rc = store_commit_get(s, release_id, &c, e)) != 0)
		return rc < 0 ? -1 : err_set(e, "%s is not a commit of %s", id,
		    eng->name);
	rc = -1;
	if (c.state == COMMIT_BUILD_FAILED) {
		err_set(e, "commit %.12s does not build (see 'bisectctl runs "
		    "%s %s')", id, eng->name, id);
		goto done;
	}
	if ((parent = engine_cache(conf, eng)) == NULL ||
	    (dir = fs_join(parent, id)) == NULL) {
		err_set(e, "out of memory");
		goto done;
	}
	if (fetch_unpack_complete(dir)) {
		if (c.state != COMMIT_BUILD_DONE &&
		    store_commit_build_done(s, release_id, COMMIT_BUILD_DONE,
		    c.build_ms, NULL, e) < 0)
			goto done;
		cache_touch(dir, NULL);
		goto ok;
	}
	if (fs_mkdirs(parent, 0755, e) < 0 ||
	    store_commit_build_start(s, release_id, e) < 0)
		goto done;
	snprintf(src, sizeof(src), "%s/.tmp-%s-src-%ld-XXXXXX", parent, id,
	    (long)getpid());
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%ld-XXXXXX", parent, id,
	    (long)getpid());
	if ((have_src = mkdtemp(src) != NULL) == 0 ||
	    (have_tmp = mkdtemp(tmp) != NULL) == 0) {
		err_errno(e, "cannot make a build folder in '%s'", parent);
		goto done;
	}
	t0 = clock_now_ms();
	brc = build_tree(conf, eng, id, src, tmp, stop, &log, e);
	/* The checkout goes as soon as the build lines end: while it
	 * exists, the commit is being built. */
	fs_remove_tree(src, &ie);
	have_src = 0;
	if (brc == 2) {
		err_set(e, "the build of %.12s was stopped; it is built again "
		    "when needed", id);
		goto done;
	}
	if (brc == 1) {
		char *tail = log_tail(&log), failure[ERR_MSG_MAX + 64];

		snprintf(failure, sizeof(failure), "build failed: %s", e->msg);
		if (store_commit_build_done(s, release_id, COMMIT_BUILD_FAILED,
		    clock_now_ms() - t0, tail, &ie) < 0 ||
		    store_release_set_state(s, release_id, RELEASE_FAILED,
		    failure, &ie) < 0) {
			free(tail);
			err_set(e, "%s", ie.msg);
			goto done;
		}
		free(tail);
		err_set(e, "commit %.12s: %s", id, failure);
		goto done;
	}
	if (brc < 0 || install_tree(tmp, dir, e) < 0)
		goto done;
	have_tmp = 0;
	if (store_commit_build_done(s, release_id, COMMIT_BUILD_DONE,
	    clock_now_ms() - t0, NULL, e) < 0 ||
	    store_release_set_state(s, release_id, RELEASE_FETCHED, NULL, e) < 0)
		goto done;
	out->unpacked = 1;
	cache_touch(dir, NULL);
	{
		/* Built trees count against cache-max as releases do. */
		struct cache_gc_stats gs;

		cache_gc(conf->cache, conf->cache_max, dir, NULL, NULL, &gs,
		    NULL);
	}
ok:
	out->release_id = release_id;
	memset(out->sha256, 0, sizeof(out->sha256));
	out->dir = dir;
	dir = NULL;
	rc = 0;
done:
	if (have_src)
		fs_remove_tree(src, &ie);
	if (have_tmp)
		fs_remove_tree(tmp, &ie);
	buf_release(&log);
	store_commit_info_release(&c);
	free(parent);
	free(dir);
	return rc;
}
