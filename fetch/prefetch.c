/*
 * prefetch.c: downloads ahead on threads of their own (see prefetch.h).
 * As many threads as downloads may be queued take the queue in order,
 * so that the release needed next never waits behind the one that is
 * not (servers cap a connection, seldom a client); the caller's thread
 * queues and takes.  Everything an item holds is guarded by the mutex,
 * but for the download itself, which runs unlocked on fields no one
 * else writes while it runs.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/err.h"
#include "download.h"
#include "prefetch.h"

enum item_state { ITEM_QUEUED, ITEM_RUNNING, ITEM_DONE, ITEM_FAILED };

struct item {
	/* Into one allocation, strings, that the item owns; the hashes
	 * and origin NULL when not given. */
	const char *version, *url, *expected, *origin, *pinned;
	char *strings;
	enum item_state state;
	atomic_int abort;	/* its download stops */
	char sha[65];
	char *path;		/* ITEM_DONE: the cached archive */
	struct item *next;
};

/* Threads at most, whatever max_queued says. */
#define PREFETCH_MAX_THREADS 16

struct prefetch {
	struct prefetch_opts o;
	char *cache;
	pthread_t threads[PREFETCH_MAX_THREADS];
	size_t nthreads;
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* an item queued, or one no longer running */
	struct item *items;	/* in queue order */
	int quit;
	struct prefetch_stats st;
};

static void
item_free(struct item *it)
{
	free(it->strings);
	free(it->path);
	free(it);
}

/* Copy s's strings into it->strings; -1 when memory runs out. */
static int
item_strings(struct item *it, const struct prefetch_item_spec *s)
{
	const char *in[5] = { s->version, s->url, s->expected_sha256,
	    s->expected_origin, s->pinned_sha256 };
	const char **out[5] = { &it->version, &it->url, &it->expected,
	    &it->origin, &it->pinned };
	size_t len = 0;
	char *p;

	for (int i = 0; i < 5; i++)
		len += in[i] ? strlen(in[i]) + 1 : 0;
	if ((p = it->strings = malloc(len ? len : 1)) == NULL)
		return -1;
	for (int i = 0; i < 5; i++) {
		*out[i] = in[i] ? memcpy(p, in[i], strlen(in[i]) + 1) : NULL;
		p += in[i] ? strlen(in[i]) + 1 : 0;
	}
	return 0;
}

static struct item *
find(struct prefetch *p, const char *version, struct item ***link)
{
	struct item **l;

	for (l = &p->items; *l; l = &(*l)->next)
		if (strcmp((*l)->version, version) == 0) {
			if (link)
				*link = l;
			return *l;
		}
	return NULL;
}

static void
run_one(struct prefetch *p, struct item *it)
{
	struct download_opts o = DOWNLOAD_OPTS_INIT;
	struct download_result r = DOWNLOAD_RESULT_INIT;
	struct err e = ERR_INIT;
	int rc;

	o.cache = p->cache;
	o.expected_sha256 = it->expected;
	o.expected_origin = it->origin;
	o.pinned_sha256 = it->pinned;
	o.allow_http = p->o.allow_http;
	o.deadline_ms = p->o.deadline_ms;
	o.max_speed = p->o.max_speed;
	o.stop = &it->abort;
	rc = fetch_download(it->url, &o, &r, &e);
	pthread_mutex_lock(&p->mu);
	/* A changed archive is the caller's to refuse and alert on. */
	if (rc == 0 && r.pin != PIN_CHANGED) {
		it->state = ITEM_DONE;
		memcpy(it->sha, r.sha256, sizeof(it->sha));
		it->path = r.path;
		r.path = NULL;
		p->st.done++;
	} else {
		it->state = ITEM_FAILED;
		p->st.failed++;
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	download_result_release(&r);
}

static void *
loop(void *arg)
{
	struct prefetch *p = arg;
	sigset_t all;

	/* Signals are the caller's thread's to take; the CPU the
	 * benchmark's, this thread's is what is left (hashing, copying). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct item *it;

		for (it = p->items; it && it->state != ITEM_QUEUED;
		    it = it->next)
			;
		if (p->quit)
			break;
		if (it == NULL) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		it->state = ITEM_RUNNING;
		/* The item stays in the list while it runs: no one frees a
		 * running one. */
		pthread_mutex_unlock(&p->mu);
		run_one(p, it);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
prefetch_new(const struct prefetch_opts *o, struct prefetch **out,
    struct err *e)
{
	struct prefetch *p;
	size_t want = o->max_queued < PREFETCH_MAX_THREADS ? o->max_queued :
	    PREFETCH_MAX_THREADS;
	int rc = 0;

	*out = NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->cache = strdup(o->cache)) == NULL) {
		free(p);
		return err_set(e, "out of memory");
	}
	p->o = *o;
	p->o.cache = p->cache;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	while (p->nthreads < (want ? want : 1) && (rc = pthread_create(
	    &p->threads[p->nthreads], NULL, loop, p)) == 0)
		p->nthreads++;
	if (p->nthreads == 0) {
		prefetch_free(p);
		return err_set(e, "cannot start a prefetch thread: %s",
		    strerror(rc));
	}
	*out = p;
	return 0;
}

int
prefetch_want(struct prefetch *p, const struct prefetch_item_spec *s)
{
	struct item *it, **l;
	size_t n = 0;

	if (s->version == NULL || s->url == NULL)
		return 0;
	pthread_mutex_lock(&p->mu);
	for (l = &p->items; *l; l = &(*l)->next)
		n += (*l)->state == ITEM_QUEUED || (*l)->state == ITEM_RUNNING;
	if (find(p, s->version, NULL) != NULL || n >= p->o.max_queued) {
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	if ((it = calloc(1, sizeof(*it))) == NULL) {
		pthread_mutex_unlock(&p->mu);
		return -1;
	}
	if (item_strings(it, s) < 0) {
		pthread_mutex_unlock(&p->mu);
		item_free(it);
		return -1;
	}
	it->state = ITEM_QUEUED;
	*l = it;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 1;
}

int
prefetch_take(struct prefetch *p, const char *version, char sha[65],
    char **path)
{
	struct item *it, **l;
	int got = 0;

	*path = NULL;
	if (p == NULL)
		return 0;
	pthread_mutex_lock(&p->mu);
	if ((it = find(p, version, &l)) == NULL) {
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	if (it->state == ITEM_RUNNING) {
		/* Needed now: not at the capped rate.  Its bytes stay in
		 * the cache for the caller's download to resume. */
		atomic_store(&it->abort, 1);
		while (it->state == ITEM_RUNNING)
			pthread_cond_wait(&p->cv, &p->mu);
		if (it->state == ITEM_DONE)
			p->st.taken_done++;	/* it ended first */
		else
			p->st.taken_stopped++;
	} else if (it->state == ITEM_DONE)
		p->st.taken_done++;
	else if (it->state == ITEM_QUEUED)
		p->st.dropped++;
	if (it->state == ITEM_DONE) {
		memcpy(sha, it->sha, 65);
		*path = it->path;
		it->path = NULL;
		got = 1;
	}
	*l = it->next;
	pthread_mutex_unlock(&p->mu);
	item_free(it);
	return got;
}

void
prefetch_stats(struct prefetch *p, struct prefetch_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void
prefetch_free(struct prefetch *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	for (struct item *it = p->items; it; it = it->next)
		atomic_store(&it->abort, 1);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	while (p->items) {
		struct item *it = p->items;

		p->items = it->next;
		item_free(it);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->cache);
	free(p);
}
