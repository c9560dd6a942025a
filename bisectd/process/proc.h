/*
 * proc.h: what the runner's files share inside bisectd/process/: the
 * state of one child (struct run_proc), the plan the child follows
 * between fork and exec, and the steps of its life, one file each:
 * spawn.c starts it, wait.c pumps its output and enforces its timeout,
 * reap.c collects it and whatever it left behind, run.c is runner.h's
 * interface over them.
 */
#ifndef BISECTD_PROCESS_PROC_H
#define BISECTD_PROCESS_PROC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runner.h"

extern char **environ;

#define MARKER_NAME	"BISECTD_RUN_ID"
#define CHUNK		65536
#define CLEANUP_NS	(5LL * 1000 * 1000 * 1000)	/* reaping bound */
#define NS_PER_MS	1000000LL

/*
 * What the child reports through the close-on-exec pipe: STAGE_EXECING
 * with the clock's reading just before execve, then (only if it fails)
 * the step that failed.  Each record is written whole (under PIPE_BUF).
 */
enum stage {
	STAGE_EXECING = 0, STAGE_SETPGID, STAGE_CGROUP, STAGE_STDIO,
	STAGE_CHDIR, STAGE_RLIMIT, STAGE_EXEC, STAGE_PDEATHSIG
};

struct child_failure {
	int stage;
	int err;
	int64_t t0;		/* STAGE_EXECING: CLOCK_MONOTONIC, ns */
};

/* Everything the child needs, prepared by the parent before fork. */
struct plan {
	const char *path;	/* the program, resolved */
	char **argv;		/* pointers into the spec; array owned */
	char **envp;		/* pointers into environ/spec; array owned */
	const char *workdir;
	int devnull, out_w, err_w, fail_w;
	int cg_dirfd;		/* the run cgroup's folder, or -1 */
	int cg_fd;		/* its cgroup.procs when the child must move
				 * itself (no clone3), or -1 */
	pid_t parent;		/* the process that waits for the child */
};

enum kill_state { ALIVE, TERM_SENT, KILL_SENT };

struct run_proc {
	pid_t pid;		/* 0 when the child never started */
	int pidfd;		/* -1 when polling instead */
	int out_fd, err_fd;	/* read ends, -1 once closed */
	int stop_rd, stop_wr;	/* run_start(): stop requests, else -1 */
	const atomic_int *stop;	/* child_spec.stop: a stop flag, or NULL */
	char *cg_dir;		/* this run's cgroup or NULL; malloced */
	int cg_killed;		/* cgroup.kill was used on it */
	char marker[64];	/* this run's BISECTD_RUN_ID value */
	char marker_kv[96];	/* "BISECTD_RUN_ID=..." for the child */

	int64_t t0, t_end;	/* CLOCK_MONOTONIC, ns */
	int64_t timeout_ns, grace_ns;
	enum kill_state kstate;
	int64_t kill_at;
	int64_t oom_before;	/* /proc/vmstat oom_kill, -1 if unknown */
	int64_t cg_oom_before;	/* the cgroup's memory.events oom_kill */

	char *ring;		/* stderr tail; malloced */
	size_t ring_cap, ring_head, ring_len;

	struct run_result res;
	pthread_t thread;
	int has_thread;
	atomic_int done;
	char chunk[CHUNK];	/* read buffer */
};

/* reap.c: the registry of children being waited for, and the end. */
extern pthread_mutex_t reg_lock;
int reg_reserve_locked(void);
void reg_add_locked(pid_t pid);
void reg_del(pid_t pid);
void close_fd(int *fd);
void become_subreaper(void);
int64_t oom_kills_vmstat(char *buf, size_t size);
void finish(struct run_proc *p);

/* spawn.c */
struct run_proc *proc_new(const struct child_spec *s);
void proc_free(struct run_proc *p);
int spawn(struct run_proc *p, const struct child_spec *s, struct err *e);

/* wait.c */
ssize_t pump(struct run_proc *p, int *fd, int is_out);
void begin_stop(struct run_proc *p, int64_t now);
void wait_loop(struct run_proc *p);

#endif
