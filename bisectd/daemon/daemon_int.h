/*
 * daemon_int.h: what daemon.c (the loop, the schedules, the control
 * socket, reloads) and workers.c (the threads that run queued jobs)
 * share: the daemon's state and its workers'.
 */
#ifndef BISECTD_DAEMON_INT_H
#define BISECTD_DAEMON_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bisectd/measure/benchlock.h"
#include "common/logto.h"
#include "config/cron.h"
#include "control.h"
#include "store/store.h"

struct conf;
struct daemon_opts;
struct err;
struct http_server;

/* What the signal handlers set; the loop does the work. */
/*
 * Jobs running at once: one on this machine and the rest on Slurm.  A
 * runner's max-jobs beyond this waits its turn.
 */
#define DAEMON_WORKERS	64

/* Each worker's stop flag: set by SIGTERM/SIGINT directly, so a run in
 * progress is the last one even before the loop wakes.  The worker
 * threads read them, hence C11 atomics (lock-free, so a handler may set
 * them too). */
extern atomic_int job_stop[DAEMON_WORKERS];
/* Set by SIGTERM and SIGINT (daemon.c). */
extern volatile sig_atomic_t got_term;

struct schedule {
	char name[300];		/* "engine:NAME" in the store */
	char engine[256];
	struct cron cron;
};

/* The running job's live progress, copied from bench_progress. */
struct progress {
	int valid;
	char version[128];
	char against[128];	/* a confirmation's other release, or "" */
	char cell[64];
	int rep, reps, warmup;
	size_t cell_no, ncells, done, total;
	double elapsed_s, eta_s;
	char waiting[256];
	/* A commit being built instead ("" when none): since when, for
	 * which probe. */
	char building[41];
	char subject[256];
	int probe;
	double build_started;	/* clock_now_ns() / 1e9 */
};

/* Control clients at once; more wait in the listen backlog.  Each pass
 * of the loop accepts at most DAEMON_ACCEPTS_PER_PASS, so a connect
 * flood cannot keep the loop from signals and jobs. */
#define DAEMON_CLIENTS_MAX	16
#define DAEMON_ACCEPTS_PER_PASS	8
/* At most one control-socket log line per this many ms. */
#define DAEMON_CONTROL_LOG_MS	10000
/* The child of a delegated cgroup the daemon moves into at start. */
#define DAEMON_CGROUP_LEAF	"daemon"

struct daemon;

/* A job running in its own thread; the fields below `busy` are the
 * thread's until it writes to done_pipe, then the loop's. */
struct worker {
	struct daemon *d;
	int index;			/* in d->w, and of its stop flag */
	int busy;
	pthread_t thread;
	struct store_job job;
	const struct conf *conf;	/* as the job started */
	char runner[256];		/* its Slurm runner, "": this machine */
	int cancel;			/* cancel asked over the socket */
	int outcome, exit_code;
	char *result;			/* malloced */
	int joined;			/* its thread ended and was joined */
	int end_waiting;		/* its end waits for a locked store */
	time_t started;
	struct progress prog;		/* under d->mu */
};

struct daemon {
	const struct daemon_opts *o;
	struct conf *conf;		/* in force; owned */
	struct conf **retired;		/* replaced while a job used them */
	size_t nretired;
	char *database;			/* as at start; owned */
	char *config_path;		/* owned */
	char lock_path[4096], bench_lock_path[4096];
	struct benchlock lock;		/* the daemon lock */
	struct store *store;		/* the loop's connection */
	int listen_fd;
	/* Clients served together from the loop's poll(), each with its
	 * own deadline: an idle one costs a slot, not everyone's turn. */
	struct control_client clients[DAEMON_CLIENTS_MAX];
	int64_t log_quiet_until;	/* control log lines muted until */
	unsigned log_muted;		/* lines dropped meanwhile */
	time_t started;
	/* The last reload that failed, until one succeeds: when, and its
	 * first problem, for status. */
	time_t reload_failed_at;
	char reload_error[1024];
	int stopping;
	struct http_server *http;	/* or NULL: [bisectd] http unset */
	/* Guards conf against a reload while the HTTP server reads it. */
	pthread_mutex_t conf_mu;
	unsigned conf_generation;	/* reloads so far; under conf_mu */
	int queued;			/* a schedule queued a job */
	int store_waiting;		/* waiting out another's lock */

	struct schedule *sched;
	size_t nsched;

	/* The workers, each a thread while busy, which writes its index
	 * to done_pipe when its job ends. */
	struct worker w[DAEMON_WORKERS];
	int nbusy;
	int done_pipe[2];

	/* Guards each worker's prog, and busy with the job it names, for
	 * the HTTP server's thread; the loop alone writes busy and job. */
	pthread_mutex_t mu;
};

/* Log through the daemon's callback. */
#define logm(d, level, ...) log_to((d)->o->log, (d)->o->arg, (level), \
	__VA_ARGS__)

/* workers.c: start what the queue holds and a free worker may run; take
 * in the workers whose jobs ended, and the ends a locked store kept
 * from being recorded (1 from ends_waiting() while there are some). */
int start_jobs(struct daemon *d, struct err *e);
int finish_jobs(struct daemon *d, struct err *e);
int retry_ends(struct daemon *d, struct err *e);
int ends_waiting(const struct daemon *d);

/* How long the daemon's connections wait for another's write lock: the
 * loop briefly, so the socket and the schedules go on; a job's long,
 * so that its runs wait instead of failing. */
#define DAEMON_LOOP_BUSY_MS	1000
#define DAEMON_JOB_BUSY_MS	(60 * 60 * 1000)

#endif
