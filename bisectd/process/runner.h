/*
 * runner.h: the one way bisectd runs a child process, after git's
 * run-command.h: benchmark runs, pre/post commands and engine servers.
 * It owns spawning (no shell), timing, bounded output capture, timeouts
 * and making sure that no process of a run outlives it.
 *
 * Isolation.  Each run gets its own process group, core dumps off,
 * stdin from /dev/null (or the file stdin_path names) and a minimal
 * environment: PATH, HOME, LANG and CUDA_VISIBLE_DEVICES of ours, then
 * child_spec.env.  The rest of ours (the token-env variable above all)
 * never reaches a child.  When the
 * machine allows it (cgroup v2 mounted, our own cgroup writable,
 * cgroup.kill present: Linux 5.14), each run also gets a cgroup of its
 * own under ours, which the child is started in (clone3 with
 * CLONE_INTO_CGROUP, or a move of its own before exec), and everything
 * left in it when the run ends is killed with cgroup.kill: a grandchild
 * that left the process group with setsid() included.
 * Elsewhere the runner falls back on the child-subreaper attribute: each
 * run's environment carries BISECTD_RUN_ID, and when the run ends any
 * orphan reparented to this process whose environment holds that id is
 * killed (a process that clears its environment escapes this fallback).
 * run_result.isolation says which path a run took.
 *
 * Process-wide effects.  The first spawn makes this process a child
 * subreaper (prctl PR_SET_CHILD_SUBREAPER), so that orphans of a run come
 * back here and are reaped by the runner instead of lingering as zombies
 * where init does not reap.  Zombie children that no run is waiting for
 * are therefore reaped at the start and end of every run: the runner is
 * meant to be this process's only way to start children.
 */
#ifndef BISECTD_RUNNER_H
#define BISECTD_RUNNER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"

struct err;
struct tmpl_vals;

enum run_reason {
	RUN_OK,		/* exited 0 (or was stopped on request) */
	RUN_EXIT,	/* exited with a non-zero status */
	RUN_SIGNAL,	/* killed by a signal the runner did not send */
	RUN_TIMEOUT,	/* ran past timeout_ms and was killed */
	RUN_SPAWN,	/* could not be started: see detail, spawn_errno */
	RUN_OOM		/* SIGKILL with the kernel's OOM counter raised */
};

enum run_isolation {
	RUN_ISOLATE_AUTO,	/* cgroup where possible, else subreaper */
	RUN_ISOLATE_CGROUP,	/* cgroup or fail */
	RUN_ISOLATE_SUBREAPER	/* the fallback, even where cgroups work */
};

/* child_spec.flags, for tests of the paths older kernels take */
#define RUN_NO_PIDFD	0x1	/* wait by polling, as without pidfd_open */
#define RUN_NO_CLONE3	0x2	/* the child enters its cgroup itself, as
				 * without clone3(CLONE_INTO_CGROUP) */
#define RUN_NO_CLONE_VM	0x4	/* the child gets a copy of our memory, as
				 * where clone3 cannot share it */

#define RUN_DEFAULT_GRACE_MS	2000
#define RUN_DEFAULT_STDOUT_MAX	(1024 * 1024)
#define RUN_DEFAULT_STDERR_MAX	(16 * 1024)

struct child_spec {
	const char *const *argv;	/* argv[0]: a path, or a name looked
					 * up in PATH; not owned */
	const char *const *env;		/* NAME=VALUE set on top of PATH,
					 * HOME, LANG and CUDA_VISIBLE_DEVICES,
					 * the only ones of our environment
					 * a child gets;
					 * NULL-terminated, or NULL; not
					 * owned */
	const char *workdir;		/* or NULL: ours; not owned */
	int64_t timeout_ms;		/* 0: none */
	int64_t grace_ms;		/* SIGTERM to SIGKILL; 0: default */
	size_t stdout_max;		/* head of stdout kept; 0: default */
	size_t stderr_max;		/* tail of stderr kept; 0: default */
	enum run_isolation isolation;
	unsigned flags;			/* RUN_NO_PIDFD, RUN_NO_CLONE3,
					 * RUN_NO_CLONE_VM */
	const char *stdin_path;		/* a file the child reads as stdin,
					 * or NULL: /dev/null; not owned */
	uint64_t memory_max;		/* bytes the run's cgroup may use
					 * (memory.max), 0: no cap; only
					 * where the run has a cgroup with
					 * the memory controller */
	const atomic_int *stop;		/* or NULL; set (by a signal
					 * handler, another thread): the
					 * child is ended as on a timeout,
					 * within 100 ms, and the result
					 * says stopped; not owned */
};

#define CHILD_SPEC_INIT { NULL, NULL, NULL, 0, 0, 0, 0, RUN_ISOLATE_AUTO, 0, \
	NULL, 0, NULL }

struct run_result {
	enum run_reason reason;
	int exit_code;		/* the exit status when it exited, else -1 */
	int signal;		/* the signal that ended it, else 0 */
	int spawn_errno;	/* RUN_SPAWN: errno of the failed step */
	char detail[512];	/* RUN_SPAWN: what failed, quoting the subject */
	pid_t pid;		/* the child's pid (and process group) */

	int64_t wall_ns;	/* CLOCK_MONOTONIC, from just before
				 * exec (the child already in its cgroup,
				 * process group and streams) to its exit */
	int64_t user_ns;	/* rusage of wait4: the child and the */
	int64_t sys_ns;		/* descendants it waited for */
	long max_rss_kb;	/* largest resident set among them */

	struct buf out;		/* stdout's first stdout_max bytes; owned */
	struct buf errtail;	/* stderr's last stderr_max bytes; owned */
	uint64_t out_bytes;	/* stdout bytes produced in all */
	uint64_t err_bytes;
	int out_truncated;	/* out_bytes > what out holds */
	int err_truncated;

	enum run_isolation isolation;	/* path taken: CGROUP or SUBREAPER */
	int leftovers;		/* processes of the run found alive or
				 * unreaped after it ended, and killed */
	int timed_out;		/* the timeout fired (reason RUN_TIMEOUT) */
	uint64_t memory_max;	/* the cap memory.max held, 0: none */
	int stopped;		/* ended by run_proc_stop() or child_spec.stop */
};

void run_result_init(struct run_result *r);
void run_result_release(struct run_result *r);

/*
 * Run the child described by s to its end and fill r (initialized here;
 * release it with run_result_release()).  Returns 0 whenever r describes
 * the run, including runs that failed to start (RUN_SPAWN); -1 with e set
 * only when the runner itself could not work (pipes, memory, a cgroup
 * that RUN_ISOLATE_CGROUP demanded).
 *
 * On timeout the process group gets SIGTERM, then after grace_ms SIGKILL
 * (with the whole cgroup).  When the child has ended, whatever remains of
 * its process group and cgroup is killed at once.  stdout and stderr are
 * read while waiting, so a child that writes more than the bounds keeps
 * running; the excess is counted and dropped.
 */
int run_child(const struct child_spec *s, struct run_result *r,
    struct err *e);

/*
 * Expand the command template tmpl with v (template.h), and run it with
 * the rest of base (whose argv is ignored).  A template that does not
 * expand is -1 with e set; otherwise as run_child().  This is how the
 * engine command and its pre and post commands are run.
 */
int run_template(const char *tmpl, const struct tmpl_vals *v,
    const struct child_spec *base, struct run_result *r, struct err *e);

/* A child that keeps running while the caller does other work. */
struct run_proc;

/*
 * Start s in the background: a thread of the runner reads its output and
 * notices its end (s->timeout_ms still applies).  On 0, *out is the
 * handle; a child that could not be started is a handle whose run has
 * already ended with RUN_SPAWN.  -1 as for run_child().
 */
int run_start(const struct child_spec *s, struct run_proc **out,
    struct err *e);

/* 1 once the child has ended (by itself or by its timeout), else 0. */
int run_proc_exited(struct run_proc *p);

/* The child's pid, which is also its process group; 0 if not started. */
pid_t run_proc_pid(const struct run_proc *p);

/*
 * End the child if it is still running (SIGTERM to its process group,
 * SIGKILL after grace_ms, then everything left in its cgroup), wait for
 * it, fill r and free p.  A child stopped here has reason RUN_OK and
 * stopped set; one that had ended before keeps its own reason.
 */
void run_proc_stop(struct run_proc *p, struct run_result *r);

/* "none", "exit", "signal", "timeout", "spawn", "oom": stored names. */
const char *run_reason_name(enum run_reason reason);

/* "cgroup" or "subreaper" (or "auto" for a request). */
const char *run_isolation_name(enum run_isolation iso);

/*
 * One line for people: "exited with status 3", "killed by SIGSEGV
 * (Segmentation fault)", "timed out after 1000 ms (killed by SIGKILL)",
 * "cannot run 'x': No such file or directory".  Returns buf.
 */
const char *run_describe(const struct run_result *r, char *buf, size_t len);


/*
 * Remove the empty cgroup the runner keeps for the next run.  Registered
 * with atexit() when one is first kept; call it earlier where exit() is
 * not the way out.  One left by a process that died is removed by the
 * next process that probes cgroups.
 */
void run_shutdown(void);


#endif
