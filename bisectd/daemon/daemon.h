/*
 * daemon.h: the daemon's loop.  One thread sleeps in poll() on the
 * control socket, a self-pipe for signals and the worker's end-of-job
 * pipe, with the timeout set to the next schedule's fire time or alert
 * delivery; worker threads run the queued jobs (jobs/job_run.h): one at
 * a time on this machine, and beside it the bisects whose measurements
 * run as Slurm jobs, up to each Slurm runner's max-jobs.
 */
#ifndef BISECTD_DAEMON_H
#define BISECTD_DAEMON_H

struct conf;
struct err;

/* Log levels: syslog(3)'s numbers. */
#define DAEMON_LOG_ERR		3
#define DAEMON_LOG_WARNING	4
#define DAEMON_LOG_INFO		6

struct daemon_opts {
	/* Where the daemon reports; called from both threads, one whole
	 * message per call. */
	void (*log)(void *arg, int level, const char *msg);
	void *arg;
};

/*
 * Take the daemon lock beside the database (`DATABASE.pid`), open the
 * store, put back jobs a dead daemon left running, listen on the control
 * socket and run until SIGTERM or SIGINT.  c is the daemon's from then
 * on: SIGHUP replaces it with the file reloaded (a bad file is logged
 * and c kept) and it is freed before return.
 *
 * On SIGTERM/SIGINT the running jobs stop after their current run, which
 * is stored, and go back to the queue; their Slurm jobs keep running and
 * are taken up again when they resume.  Returns 0 after such a stop,
 * -1 with e set when the daemon cannot start (another daemon holds the
 * lock, the socket is in use) or the store fails.
 */
int daemon_run(struct conf *c, const struct daemon_opts *o, struct err *e);

#endif
