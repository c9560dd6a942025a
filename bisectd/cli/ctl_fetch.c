/*
 * ctl_fetch.c: bisectctl versions --refresh, fetch and gc.
 */
#include <stdio.h>

#include <jansson.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/measure/canary.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"
#include "fetch/cache.h"

/* A release the source lists under a version no release may have. */
static void
on_refused(void *arg, const char *version, const char *why)
{
	fprintf(stderr, "bisectctl: %s: release '%s' refused: %s\n",
	    (const char *)arg, version, why);
}

int
cmd_refresh(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct acquire a;
	struct err e = ERR_INIT;
	int rc, listed, added;

	if ((rc = ctl_open_engine(c, &g, &s, &a)) != 0)
		return rc;
	a.refused = on_refused;
	a.refused_arg = g->name;
	rc = acquire_refresh(&a, &listed, &added, &e);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	fprintf(stderr, "bisectctl: %s: the source lists %d releases, %d new\n",
	    g->name, listed, added);
	return EXIT_OK;
}

int
cmd_fetch(struct ctl *c)
{
	const struct conf_engine *g;
	struct store *s;
	struct acquire a;
	struct acquired got;
	struct err e = ERR_INIT;
	int rc;

	if ((rc = ctl_open_engine(c, &g, &s, &a)) != 0)
		return rc;
	/* SIGINT/SIGTERM end a download where it is: its partial file
	 * stays for the next fetch to resume. */
	ctl_local_start();
	a.stop = &ctl_stop;
	rc = acquire_release(&a, c->argv[1], &got, &e);
	ctl_end_line();
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	if (c->format == FORMAT_JSON) {
		json_t *o = json_object();

		json_object_set_new(o, "engine", json_string(g->name));
		json_object_set_new(o, "version", json_string(c->argv[1]));
		json_object_set_new(o, "sha256", json_string(got.sha256));
		json_object_set_new(o, "url", got.url ? json_string(got.url) :
		    json_null());
		json_object_set_new(o, "dir", json_string(got.dir));
		json_object_set_new(o, "downloaded",
		    json_boolean(got.downloaded));
		json_object_set_new(o, "unpacked", json_boolean(got.unpacked));
		ctl_print_json(o);
	} else {
		/* A dir: source's archive is never downloaded: what matters
		 * is whether this fetch unpacked it. */
		const char *how = got.downloaded ? "downloaded and unpacked" :
		    !got.unpacked ? "already unpacked" :
		    got.url && got.url[0] == '/' ? "unpacked from the release "
		    "folder" : "archive from the cache, unpacked";

		printf("%s %s: sha256 %s (%s)\n  unpacked in %s\n", g->name,
		    c->argv[1], got.sha256, how, got.dir);
	}
	acquired_release(&got);
	return EXIT_OK;
}

static void
on_gc(void *arg, const char *dir, uint64_t bytes)
{
	(void)arg;
	printf("removed %s (%.1f MiB)\n", dir, (double)bytes / (1 << 20));
}

int
cmd_gc(struct ctl *c)
{
	struct cache_gc_stats st;
	struct err e = ERR_INIT;

	if (cache_gc(c->conf->cache, c->conf->cache_max, NULL, on_gc, NULL,
	    &st, &e) < 0)
		return ctl_failed(&e);
	printf("%llu of %llu unpacked releases removed, %.1f MiB freed, %.1f "
	    "MiB kept (cap %.1f MiB)\n", (unsigned long long)st.removed,
	    (unsigned long long)st.releases, (double)st.removed_bytes /
	    (1 << 20), (double)st.kept_bytes / (1 << 20),
	    (double)c->conf->cache_max / (1 << 20));
	return EXIT_OK;
}
