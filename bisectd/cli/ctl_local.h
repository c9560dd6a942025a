/*
 * ctl_local.h: what bisectctl's commands that run engines on this
 * machine share (ctl_local.c): Ctrl-C and SIGTERM finishing the current
 * run, the one progress line on a terminal, the benchmark lock, an
 * engine opened with its store and fetcher.
 */
#ifndef BISECTD_CLI_CTL_LOCAL_H
#define BISECTD_CLI_CTL_LOCAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "bisectd/report/print.h"

struct acquire;
struct bench_progress;
struct benchlock;
struct conf_engine;
struct ctl;
struct store;

/* Set to the signal's number by SIGINT and SIGTERM once
 * ctl_local_start() ran: the job's stop flag, so the running engine is
 * ended (its run measured again later) and nothing more starts. */
extern atomic_int ctl_stop;

/* Note whether stderr is a terminal (the progress line redraws one line
 * there) and catch SIGINT and SIGTERM into ctl_stop. */
void ctl_local_start(void);

/*
 * ctl_local_start(), then take this machine's benchmark lock for what
 * (a printf format: the command as a holder shows it), waiting with a
 * line saying who holds it.  0, or -1 with the message printed and s
 * closed.
 */
/* The bench lock alone, as ctl_local_begin() takes it; the store is left
 * open either way.  Returns 0 or -1 (said). */
int ctl_local_lock(struct ctl *c, struct benchlock *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int ctl_local_begin(struct ctl *c, struct store *s, struct benchlock *l,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* End the progress line, if one is on screen. */
void ctl_end_line(void);

/* A download's progress on a terminal: bytes, rate, ETA. */
void ctl_on_download(void *arg, uint64_t now, uint64_t total);

/* A run's progress on a terminal: release, cell, run, ETA. */
void ctl_on_progress(void *arg, const struct bench_progress *p);

/* A line of a job's notes, between progress lines. */
void ctl_on_note(void *arg, const char *line);

/*
 * The engine c->argv[0] with its store and fetcher: 0, or the exit code
 * with the message printed (the store closed).
 */
int ctl_open_engine(struct ctl *c, const struct conf_engine **g,
    struct store **s, struct acquire *a);

/* --format as the report's renderers name it. */
enum report_format ctl_report_format(const struct ctl *c);

#endif
