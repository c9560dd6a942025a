/*
 * load.c: the serve-mode load client (see load.h).  One thread keeps
 * the schedule and drives every transfer; a request's times are taken
 * in its chunk callback, before any parsing.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "fetch/http_multi.h"
#include "load.h"
#include "sse.h"

/* Transfers in flight at most: past it requests wait, and their lag
 * says so. */
#define LOAD_MAX_FLIGHT	1024

struct flight {
	struct load *ld;
	size_t index;		/* in the schedule */
	struct sse_stream sse;
	char *body;		/* malloced */
	int64_t due, sent, first, prev, last;	/* ns, on the run's clock:
					 * the first and the latest token,
					 * the latest byte */
	int tokens;
	double *gaps;		/* between its tokens; malloced */
	size_t ngaps, alloc_gaps;
	struct flight *next_free;
	struct flight *next_all;	/* every flight made, to free */
};

struct load {
	const struct load_spec *spec;
	enum sse_dialect dialect;
	size_t warmup, total;		/* the schedule: warm-up first */
	double *sched;			/* rate modes: due times, ns */
	int64_t t0;			/* the run's clock's zero */
	int64_t measured_from;		/* the first measured request's due
					 * time; -1 before it */
	struct http_multi *multi;
	struct flight *free_list;
	struct flight *all;
	size_t inflight;
	uint64_t rng;
	struct load_result *out;
	size_t alloc_req, alloc_itl;
	struct err *e;
	int rc;
};

const char *
load_error_name(enum load_error err)
{
	static const char *const names[LOAD_NERR] = { "ok", "refused",
	    "timeout", "truncated", "http", "stream", "transport" };

	return (unsigned)err < LOAD_NERR ? names[err] : "?";
}

static int64_t
now(const struct load *ld)
{
	return clock_now_ns() - ld->t0;
}

static uint64_t
next_random(struct load *ld)
{
	ld->rng ^= ld->rng << 13;
	ld->rng ^= ld->rng >> 7;
	ld->rng ^= ld->rng << 17;
	return ld->rng;
}

static int
grow(void **v, size_t *alloc, size_t n, size_t size)
{
	void *p;

	if (n < *alloc)
		return 0;
	if ((p = realloc(*v, (*alloc ? *alloc * 2 : 256) * size)) == NULL)
		return -1;
	*v = p;
	*alloc = *alloc ? *alloc * 2 : 256;
	return 0;
}

/* Room for need doubles in *v. */
static int
reserve(double **v, size_t *alloc, size_t need)
{
	size_t a = *alloc ? *alloc : 256;
	double *p;

	if (need <= *alloc)
		return 0;
	while (a < need)
		a *= 2;
	if ((p = realloc(*v, a * sizeof(**v))) == NULL)
		return -1;
	*v = p;
	*alloc = a;
	return 0;
}

/* The request body: a prompt of n words no other request has (so no
 * prompt cache answers it), g tokens with end-of-text held back. */
static char *
make_body(struct load *ld, size_t index, int n, int g)
{
	struct buf b = BUF_INIT((size_t)n * 12 + 512);
	uint64_t tag = next_random(ld);
	int rc;

	rc = buf_addstr(&b, "{\"prompt\":\"");
	for (int i = 0; rc == 0 && i < n; i++)
		rc = buf_printf(&b, "%sw%zx%x", i ? " " : "", index,
		    (unsigned)((tag >> (i % 48)) & 0xfff) + (unsigned)i);
	if (rc == 0 && ld->dialect == SSE_OPENAI)
		rc = buf_printf(&b, "\",\"max_tokens\":%d,\"min_tokens\":%d,"
		    "\"stream\":true,\"ignore_eos\":true,\"temperature\":0,"
		    "\"seed\":1,\"stream_options\":{\"include_usage\":true}}",
		    g, g);
	else if (rc == 0)
		rc = buf_printf(&b, "\",\"n_predict\":%d,\"stream\":true,"
		    "\"ignore_eos\":true,\"temperature\":0,\"seed\":1,"
		    "\"cache_prompt\":false}", g);
	if (rc < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b);
}

static int
on_chunk(void *arg, const char *data, size_t len)
{
	struct flight *f = arg;
	int64_t t = now(f->ld);		/* before any parsing */
	int got = sse_feed(&f->sse, data, len);

	f->last = t;
	if (got < 0)
		return 1;
	for (int i = 0; i < got; i++) {
		/* Tokens of one read arrived together: the gaps after
		 * the first of them are 0, as the client saw them. */
		if (f->tokens == 0)
			f->first = t;
		else {
			if (reserve(&f->gaps, &f->alloc_gaps, f->ngaps + 1) <
			    0)
				return 1;
			f->gaps[f->ngaps++] = (double)(t - f->prev);
		}
		f->prev = t;
		f->tokens++;
	}
	return 0;
}

static enum load_error
outcome(const struct flight *f, const struct http_multi_done *d)
{
	if (d->status != 0 && d->status != 200)
		return LOAD_HTTP;
	switch (d->end) {
	case HTTP_MULTI_OK:
		if (!f->sse.done)
			return LOAD_TRUNCATED;
		return f->tokens > 0 ? LOAD_OK : LOAD_STREAM;
	case HTTP_MULTI_REFUSED:
		return LOAD_REFUSED;
	case HTTP_MULTI_TIMEOUT:
		return LOAD_TIMEOUT;
	case HTTP_MULTI_CUT:
		return LOAD_TRUNCATED;
	case HTTP_MULTI_ABORTED:
		return f->sse.failed ? LOAD_STREAM : LOAD_TRANSPORT;
	default:
		return LOAD_TRANSPORT;
	}
}

static void
on_done(void *ctx, const struct http_multi_done *d)
{
	struct load *ld = ctx;
	struct flight *f = d->arg;
	struct load_result *o = ld->out;
	enum load_error err = outcome(f, d);
	struct serve_request *r;

	ld->inflight--;
	if (f->index >= ld->warmup && ld->rc == 0) {
		if (grow((void **)&o->req, &ld->alloc_req, o->n,
		    sizeof(*o->req)) < 0 || (err == LOAD_OK &&
		    reserve(&o->itl_ns, &ld->alloc_itl, o->nitl + f->ngaps) <
		    0)) {
			ld->rc = err_set(ld->e, "out of memory");
			goto out;
		}
		r = &o->req[o->n++];
		memset(r, 0, sizeof(*r));
		r->sched_ns = (double)f->due;
		r->sent_ns = (double)f->sent;
		o->errors[err]++;
		if (err == LOAD_OK) {
			r->ok = 1;
			r->ttft_ns = (double)(f->first - f->sent);
			r->e2e_ns = (double)(f->last - f->sent);
			r->out_tokens = f->sse.usage_completion > 0 ?
			    (int)f->sse.usage_completion : f->tokens;
			memcpy(o->itl_ns + o->nitl, f->gaps, f->ngaps *
			    sizeof(*f->gaps));
			o->nitl += f->ngaps;
		} else {
			if (err == LOAD_HTTP)
				o->last_status = d->status;
			if (o->first_error[0] == '\0')
				snprintf(o->first_error,
				    sizeof(o->first_error), "%s: %s",
				    load_error_name(err), err == LOAD_HTTP ?
				    "an answer other than 200" :
				    f->sse.failed ? f->sse.detail :
				    d->detail[0] ? d->detail : err ==
				    LOAD_TRUNCATED ? "the stream ended "
				    "without its end" : "no token");
		}
	}
out:
	free(f->body);
	f->body = NULL;
	f->next_free = ld->free_list;
	ld->free_list = f;
}

/* Send request i, due at due (ns on the run's clock). */
static int
send_one(struct load *ld, size_t i, int64_t due)
{
	const struct conf_load *p = ld->spec->profile;
	struct flight *f = ld->free_list;
	int n = p->prompt[next_random(ld) % p->nprompt];
	int g = p->output[next_random(ld) % p->noutput];

	if (f)
		ld->free_list = f->next_free;
	else if ((f = calloc(1, sizeof(*f))) == NULL)
		return err_set(ld->e, "out of memory");
	else {
		f->next_all = ld->all;
		ld->all = f;
	}
	f->ld = ld;
	f->index = i;
	f->due = due;
	f->tokens = 0;
	f->ngaps = 0;
	sse_init(&f->sse, ld->dialect);
	if ((f->body = make_body(ld, i, n, g)) == NULL) {
		f->next_free = ld->free_list;
		ld->free_list = f;
		return err_set(ld->e, "out of memory");
	}
	f->sent = now(ld);
	f->first = f->prev = f->last = f->sent;
	if (http_multi_add(ld->multi, ld->spec->url, f->body,
	    ld->spec->timeout_ms ? ld->spec->timeout_ms : 600000, on_chunk, f,
	    ld->e) < 0) {
		free(f->body);
		f->body = NULL;
		f->next_free = ld->free_list;
		ld->free_list = f;
		return -1;
	}
	ld->inflight++;
	if (i == ld->warmup)
		ld->measured_from = due;
	return 0;
}

/* When request i is due: its schedule's time, or now in a closed
 * loop. */
static int64_t
due_of(const struct load *ld, size_t i, int64_t t)
{
	return ld->sched ? (int64_t)ld->sched[i] : t;
}

/* Whether request i may still start: a duration ends the arrivals. */
static int
within(const struct load *ld, size_t i, int64_t t)
{
	const struct conf_load *p = ld->spec->profile;

	if (i >= ld->total)
		return 0;
	return p->duration_ms == 0 || i <= ld->warmup ||
	    due_of(ld, i, t) - ld->measured_from < p->duration_ms * 1000000;
}

static void *
drive(void *arg)
{
	struct load *ld = arg;
	const struct conf_load *p = ld->spec->profile;
	int closed = p->arrival == ARRIVAL_CONCURRENCY;
	size_t next = 0;

	/* The schedule is kept to microseconds: the kernel's default timer
	 * slack, 50 us a sleep, would be most of the client's lag. */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	ld->t0 = clock_now_ns();
	for (;;) {
		int64_t t = now(ld), wait = 10000000;

		if (ld->spec->stop && atomic_load(ld->spec->stop)) {
			ld->out->stopped = 1;
			break;
		}
		/* Closed loop: a request is due when a slot frees. */
		while (ld->rc == 0 && ld->inflight < LOAD_MAX_FLIGHT &&
		    within(ld, next, t) && (closed ? ld->inflight <
		    (size_t)p->concurrency : due_of(ld, next, t) <= t)) {
			if (send_one(ld, next, due_of(ld, next, t)) < 0)
				ld->rc = -1;
			next++;
			t = now(ld);
		}
		if (ld->rc < 0)
			break;
		if (!within(ld, next, t))
			ld->total = next;	/* no more arrivals */
		if (next >= ld->total && ld->inflight == 0)
			break;
		if (!closed && next < ld->total)
			wait = (int64_t)ld->sched[next] - t;
		if (http_multi_step(ld->multi, wait, on_done, ld, ld->e) < 0) {
			ld->rc = -1;
			break;
		}
		/* Under a millisecond the network is not waited on: a
		 * short sleep keeps the schedule without spinning. */
		if (!closed && next < ld->total && wait > 0 && wait < 1000000)
			clock_sleep_ns(wait < 50000 ? wait : 50000);
	}
	return NULL;
}

int
load_run(const struct load_spec *spec, struct load_result *out,
    struct err *e)
{
	const struct conf_load *p = spec->profile;
	struct load ld;
	pthread_t th;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&ld, 0, sizeof(ld));
	ld.spec = spec;
	ld.dialect = p->dialect == DIALECT_LLAMA ? SSE_LLAMA : SSE_OPENAI;
	ld.out = out;
	ld.e = e;
	ld.rng = spec->seed * 0x9e3779b97f4a7c15u + 1;
	ld.measured_from = -1;
	ld.warmup = (size_t)p->warmup;
	/* A duration's arrivals: enough for the rate and then some. */
	ld.total = ld.warmup + (p->requests > 0 ? (size_t)p->requests :
	    p->arrival == ARRIVAL_CONCURRENCY ? SIZE_MAX / 2 :
	    (size_t)(p->rate * (double)p->duration_ms / 1000 * 1.5) + 64);
	if (p->arrival != ARRIVAL_CONCURRENCY) {
		if ((ld.sched = malloc(ld.total * sizeof(*ld.sched))) == NULL)
			return err_set(e, "out of memory");
		serve_arrivals(p->arrival == ARRIVAL_POISSON, p->rate,
		    spec->seed, ld.total, ld.sched);
	}
	if (http_multi_new(p->arrival == ARRIVAL_CONCURRENCY ?
	    (size_t)p->concurrency : LOAD_MAX_FLIGHT, &ld.multi, e) < 0) {
		free(ld.sched);
		return -1;
	}
	if ((rc = pthread_create(&th, NULL, drive, &ld)) != 0) {
		ld.rc = err_set(e, "cannot start the load thread: %s",
		    strerror(rc));
	} else
		pthread_join(th, NULL);
	http_multi_free(ld.multi);
	while (ld.all) {
		struct flight *f = ld.all;

		ld.all = f->next_all;
		free(f->body);
		free(f->gaps);
		free(f);
	}
	free(ld.sched);
	if (ld.rc < 0)
		load_result_release(out);
	return ld.rc;
}

void
load_result_release(struct load_result *r)
{
	free(r->req);
	free(r->itl_ns);
	memset(r, 0, sizeof(*r));
}
