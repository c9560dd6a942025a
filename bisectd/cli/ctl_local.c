/*
 * ctl_local.c: what the commands that run engines here share: stopping at
 * Ctrl-C, the progress line, the benchmark lock, the engine and its store
 * opened.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bisectd/acquire/acquire.h"
#include "bisectd/acquire/bench_release.h"
#include "bisectd/measure/benchlock.h"
#include "bisectd/measure/canary.h"
#include "common/clock.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"

atomic_int ctl_stop;	/* lock-free: safe in a handler */

static void
on_signal(int sig)
{
	ctl_stop = sig;
}

/* SIGINT/SIGTERM end the current run (it is measured again), keep what
 * is stored, and stop. */
static void
catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int tty;		/* stderr is a terminal: redraw one line */
static int line_open;	/* a progress line is on screen */

void
ctl_end_line(void)
{
	if (line_open) {
		fputc('\n', stderr);
		line_open = 0;
	}
}

/* A download's progress on a terminal: bytes, rate, ETA. */
void
ctl_on_download(void *arg, uint64_t now, uint64_t total)
{
	static double start, last;
	static uint64_t first;
	double t, rate;

	(void)arg;
	if (!tty)
		return;
	t = clock_now_ns() / 1e9;
	if (start == 0 || now < first) {
		start = t;
		first = now;
	}
	if (t - last < 0.2 && now != total)
		return;
	last = t;
	rate = t > start ? (double)(now - first) / (t - start) : 0;
	if (total > 0 && rate > 0)
		fprintf(stderr, "\r\033[K  %.1f / %.1f MiB (%3.0f%%), %.1f MiB/s, "
		    "ETA %.0fs", (double)now / (1 << 20),
		    (double)total / (1 << 20), 100.0 * (double)now /
		    (double)total, rate / (1 << 20),
		    (double)(total - now) / rate);
	else
		fprintf(stderr, "\r\033[K  %.1f MiB, %.1f MiB/s",
		    (double)now / (1 << 20), rate / (1 << 20));
	line_open = 1;
}

void
ctl_on_progress(void *arg, const struct bench_progress *p)
{
	char eta[32] = "";

	(void)arg;
	if (p->building) {
		if (tty) {
			fprintf(stderr, "\r\033[K  building %.12s (probe %d)",
			    p->building, p->probe);
			line_open = 1;
		}
		return;
	}
	if (p->waiting) {
		/* Off a terminal, say it once a wait passes 10 s, then every
		 * minute: a log should not fill up with it. */
		if (tty) {
			fprintf(stderr, "\r\033[K  %s", p->waiting);
			line_open = 1;
		} else if (p->waited_ms >= 10000 &&
		    p->waited_ms % 60000 < 1000)
			fprintf(stderr, "bisectctl: %s\n", p->waiting);
		return;
	}
	if (isfinite(p->eta_s))
		snprintf(eta, sizeof(eta), ", ETA %.0fs", p->eta_s);
	if (tty) {
		fprintf(stderr, "\r\033[K  %s%s%s%s%s%s cell %zu/%zu %s%d%s%s %s "
		    "%d/%d, run %zu/%zu, %.0fs%s", p->against ? "confirming " :
		    "", p->engine ? p->engine : "", p->engine ? " " : "",
		    p->version, p->against ? " against " : "", p->against ?
		    p->against : "", p->cell, p->ncells,
		    p->c->kind, strcmp(p->c->kind, "pp") == 0 ? p->c->prompt :
		    p->c->gen, p->c->content[0] ? "/" : "", p->c->content,
		    p->warmup ? "warm-up" : "rep", p->rep, p->reps, p->done + 1,
		    p->total, p->elapsed_s, eta);
		line_open = 1;
	}
}

void
ctl_on_note(void *arg, const char *line)
{
	(void)arg;
	ctl_end_line();
	fprintf(stderr, "bisectctl: %s\n", line);
}

static int
on_lock_wait(void *arg, const struct benchlock_holder *h, int64_t waited_ms)
{
	(void)arg;
	if (waited_ms == 0 || waited_ms % 30000 < 1000)
		fprintf(stderr, "bisectctl: waiting for the benchmark lock, "
		    "held by pid %ld (%s)\n", (long)h->pid,
		    h->what[0] ? h->what : "unknown");
	return ctl_stop;
}

/* One benchmark at a time per machine, whatever the store. */
static int
take_lock(struct ctl *c, struct benchlock *l, const char *what)
{
	struct err e = ERR_INIT;
	int rc;

	rc = benchlock_acquire(l, benchlock_path(c->conf->bench_lock), what,
	    on_lock_wait, NULL, &e);
	if (rc < 0)
		return ctl_failed(&e);
	if (rc == 1)
		return ctl_error("interrupted while waiting for the benchmark "
		    "lock");
	return 0;
}

int
ctl_open_engine(struct ctl *c, const struct conf_engine **g, struct store **s,
    struct acquire *a)
{
	struct err e = ERR_INIT;

	if ((*g = ctl_engine(c, c->argv[0])) == NULL)
		return EXIT_USAGE;
	if ((*s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (acquire_init(a, c->conf, *g, *s, &e) < 0) {
		store_close(*s);
		return ctl_failed(&e);
	}
	a->progress = ctl_on_download;
	return 0;
}

enum report_format
ctl_report_format(const struct ctl *c)
{
	return c->format == FORMAT_JSON ? REPORT_JSON :
	    c->format == FORMAT_MARKDOWN ? REPORT_MARKDOWN :
	    c->format == FORMAT_CSV ? REPORT_CSV :
	    c->format == FORMAT_HTML ? REPORT_HTML : REPORT_TEXT;
}

void
ctl_local_start(void)
{
	tty = isatty(2);
	catch_stop();
}

int
ctl_local_lock(struct ctl *c, struct benchlock *l, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return take_lock(c, l, what) != 0 ? -1 : 0;
}

int
ctl_local_begin(struct ctl *c, struct store *s, struct benchlock *l,
    const char *fmt, ...)
{
	char what[512];
	va_list ap;

	ctl_local_start();
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ctl_local_lock(c, l, "%s", what) != 0) {
		store_close(s);
		return -1;
	}
	return 0;
}
