/*
 * runner.c: spawning, timing and reaping children (see runner.h).  One
 * struct run_proc per child: run_child() drives it in the caller's thread,
 * run_start() in a thread of its own.  Between fork and exec the child
 * makes only async-signal-safe system calls on values the parent prepared.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>	/* clone3's struct clone_args */

#include "cgroup.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "runner.h"
#include "common/strv.h"
#include "procfs.h"
#include "store/store.h"
#include "template.h"

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
	STAGE_CHDIR, STAGE_RLIMIT, STAGE_EXEC
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
};

enum kill_state { ALIVE, TERM_SENT, KILL_SENT };

struct run_proc {
	pid_t pid;		/* 0 when the child never started */
	int pidfd;		/* -1 when polling instead */
	int out_fd, err_fd;	/* read ends, -1 once closed */
	int stop_rd, stop_wr;	/* run_start(): stop requests, else -1 */
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

/*
 * The pids of children some run is waiting for: never reaped by the
 * sweeps for orphans.  The lock is held across fork so a sweep in another
 * thread cannot take a new child for an orphan.
 */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *reg_pids;		/* reachable for the process's life */
static size_t reg_n, reg_alloc;

static pthread_once_t subreaper_once = PTHREAD_ONCE_INIT;
static atomic_uint run_seq;
static atomic_int no_clone3;	/* clone3 into a cgroup was refused */

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* ---- the registry of children being waited for ---- */

static int
reg_reserve_locked(void)
{
	pid_t *v;
	size_t alloc;

	if (reg_n < reg_alloc)
		return 0;
	alloc = reg_alloc ? reg_alloc * 2 : 16;
	if ((v = realloc(reg_pids, alloc * sizeof(*v))) == NULL)
		return -1;
	reg_pids = v;
	reg_alloc = alloc;
	return 0;
}

static int
reg_has_locked(pid_t pid)
{
	size_t i;

	for (i = 0; i < reg_n; i++)
		if (reg_pids[i] == pid)
			return 1;
	return 0;
}

static void
reg_del(pid_t pid)
{
	size_t i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < reg_n; i++)
		if (reg_pids[i] == pid) {
			reg_pids[i] = reg_pids[--reg_n];
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

/* Whether pid's environment holds BISECTD_RUN_ID=marker. */
static int
has_marker(pid_t pid, const char *marker_kv, char *buf, size_t size)
{
	char path[64];
	size_t klen = strlen(marker_kv);
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	if ((n = procfs_read(path, buf, size)) <= 0)
		return 0;
	for (i = 0; i < (size_t)n; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, marker_kv, klen) == 0 &&
		    buf[i + klen] == '\0')
			return 1;
	return 0;
}

/*
 * Our children's pids, from /proc/self/task/TID/children (an orphan may
 * be reparented to any of our threads), or by scanning /proc where that
 * file does not exist.  Returns how many were stored.
 */
static size_t
list_children(pid_t *pids, size_t max)
{
	char path[96], buf[8192], *p, *end;
	struct dirent *de;
	struct procfs_stat st;
	size_t n = 0;
	DIR *d;
	long v;

	if ((d = opendir("/proc/self/task")) != NULL) {
		int have_file = 0;

		while ((de = readdir(d)) != NULL && n < max) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			if (procfs_pathf(path, sizeof(path),
			    "/proc/self/task/%s/children", de->d_name) < 0 ||
			    procfs_read(path, buf, sizeof(buf)) < 0)
				continue;
			have_file = 1;
			for (p = buf; n < max; p = end) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				pids[n++] = (pid_t)v;
			}
		}
		closedir(d);
		if (have_file)
			return n;
	}
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		v = strtol(de->d_name, NULL, 10);
		if (procfs_stat((pid_t)v, &st) == 0 && st.ppid == getpid())
			pids[n++] = (pid_t)v;
	}
	closedir(d);
	return n;
}

/*
 * Reap the zombie children no run is waiting for.  Returns how many of
 * them were in process group pgrp (0: count none).
 */
static int
reap_zombies(pid_t pgrp)
{
	pid_t kids[512];
	struct procfs_stat st;
	size_t n, i;
	int counted = 0;

	n = list_children(kids, sizeof(kids) / sizeof(kids[0]));
	for (i = 0; i < n; i++) {
		if (procfs_stat(kids[i], &st) < 0 || st.state != 'Z' ||
		    st.ppid != getpid())
			continue;
		pthread_mutex_lock(&reg_lock);
		if (!reg_has_locked(kids[i]) &&
		    waitpid(kids[i], NULL, WNOHANG) == kids[i] &&
		    pgrp > 0 && st.pgrp == pgrp)
			counted++;
		pthread_mutex_unlock(&reg_lock);
	}
	return counted;
}

/* ---- isolation ---- */

static void
become_subreaper(void)
{
	/* Failure leaves orphans to init, as without the runner. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* ---- the OOM killer's counter ---- */

static int64_t
oom_kills_vmstat(char *buf, size_t size)
{
	char *p;

	if (procfs_read("/proc/vmstat", buf, size) < 0 ||
	    (p = strstr(buf, "\noom_kill ")) == NULL)
		return -1;
	return strtoll(p + 10, NULL, 10);
}

/* 1 when the OOM killer is known to have acted during the run. */
static int
oom_happened(struct run_proc *p)
{
	int64_t now;

	if (p->cg_dir != NULL &&
	    (now = cgroup_oom_kills(p->cg_dir)) >= 0)
		return now > (p->cg_oom_before > 0 ? p->cg_oom_before : 0);
	if (p->oom_before < 0)
		return 0;
	now = oom_kills_vmstat(p->chunk, sizeof(p->chunk));
	return now > p->oom_before;
}

/* ---- spawning ---- */

static void
put_ptr(char **slot, const char *s)
{
	memcpy(slot, &s, sizeof(s));	/* execve's prototype lacks const */
}

static int
same_name(const char *a, const char *b)
{
	size_t n = strcspn(a, "=");

	return a[n] == '=' && strncmp(a, b, n + 1) == 0;
}

/*
 * What a child inherits of our environment: only what finding programs
 * and reading text need.  Everything else of ours stays here: the
 * variable token-env names (a GitHub token), proxies, sockets.  The
 * configuration's env entries are how a run gets more.
 */
static const char *const inherited[] = { "PATH", "HOME", "LANG" };

static int
inherits(const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t i = 0; i < sizeof(inherited) / sizeof(inherited[0]); i++)
		if (strlen(inherited[i]) == n &&
		    strncmp(kv, inherited[i], n) == 0 && kv[n] == '=')
			return 1;
	return 0;
}

/* PATH, HOME and LANG from environ, unless add sets them; add; the run
 * marker. */
static char **
build_env(const char *const *add, const char *marker_kv, struct err *e)
{
	size_t nadd = 0, n = 0, i, j;
	size_t nkeep = sizeof(inherited) / sizeof(inherited[0]);
	char **envp;
	int skip;

	while (add != NULL && add[nadd] != NULL) {
		const char *eq = strchr(add[nadd], '=');

		if (eq == NULL || eq == add[nadd]) {
			err_set(e, "bad environment entry '%s': NAME=VALUE "
			    "expected", add[nadd]);
			return NULL;
		}
		nadd++;
	}
	if ((envp = calloc(nkeep + nadd + 2, sizeof(*envp))) == NULL) {
		err_errno(e, "run");
		return NULL;
	}
	for (i = 0; environ != NULL && environ[i] != NULL && n < nkeep; i++) {
		if (!inherits(environ[i]))
			continue;
		skip = 0;
		for (j = 0; j < n && !skip; j++)
			skip = same_name(envp[j], environ[i]);
		for (j = 0; j < nadd && !skip; j++)
			skip = same_name(add[j], environ[i]);
		if (!skip)
			envp[n++] = environ[i];
	}
	for (j = 0; j < nadd; j++)
		put_ptr(&envp[n++], add[j]);
	put_ptr(&envp[n++], marker_kv);
	envp[n] = NULL;
	return envp;
}

static const char *
env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/* Find name in PATH the way execvp does, into out; -1 with errno. */
static int
resolve(const char *name, const char *pathenv, char *out, size_t len)
{
	const char *dir = pathenv, *end;
	struct stat st;
	int saw_eacces = 0;

	if (strchr(name, '/') != NULL) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	if (dir == NULL)
		dir = "/usr/local/bin:/usr/bin:/bin";
	for (;; dir = end + 1) {
		end = strchrnul(dir, ':');
		if ((size_t)snprintf(out, len, "%.*s%s%s", (int)(end - dir),
		    dir, end == dir ? "" : "/", name) < len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			saw_eacces = 1;
		}
		if (*end == '\0')
			break;
	}
	errno = saw_eacces ? EACCES : ENOENT;
	return -1;
}

/*
 * What the child runs before exec may share our memory (start_child), so
 * it keeps no sanitizer bookkeeping: that would be written into ours, for
 * a stack the sanitizer does not know.  For the same reason it ends with
 * the exit system call itself, which no sanitizer intercepts.
 */
#define CHILD_SIDE	__attribute__((no_sanitize_address))

static void CHILD_SIDE __attribute__((noreturn))
child_fail(const struct plan *pl, int stage)
{
	struct child_failure cf;

	memset(&cf, 0, sizeof(cf));
	cf.stage = stage;
	cf.err = errno;
	(void)!write(pl->fail_w, &cf, sizeof(cf));
	for (;;)
		(void)syscall(SYS_exit_group, 127);
}

static int CHILD_SIDE
dup_to(int fd, int to)
{
	if (fd == to)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, to) < 0 ? -1 : 0;
}

/* In the child: async-signal-safe calls only, then exec. */
static void CHILD_SIDE __attribute__((noreturn))
child_exec(const struct plan *pl)
{
	struct sigaction sa;
	struct rlimit rl = { 0, 0 };
	struct child_failure start;
	struct timespec ts;
	sigset_t none;
	int sig;

	/* Handlers are reset by exec, ignored signals are not: give the
	 * engine default dispositions whatever the daemon ignores. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	if (setpgid(0, 0) < 0)
		child_fail(pl, STAGE_SETPGID);
	if (pl->cg_fd >= 0 && write(pl->cg_fd, "0", 1) != 1)
		child_fail(pl, STAGE_CGROUP);
	if (dup_to(pl->devnull, 0) < 0 || dup_to(pl->out_w, 1) < 0 ||
	    dup_to(pl->err_w, 2) < 0)
		child_fail(pl, STAGE_STDIO);
	if (pl->workdir != NULL && chdir(pl->workdir) < 0)
		child_fail(pl, STAGE_CHDIR);
	if (setrlimit(RLIMIT_CORE, &rl) < 0)
		child_fail(pl, STAGE_RLIMIT);
#if defined(SYS_close_range)
	/* Descriptors the daemon opened without O_CLOEXEC stay ours. */
	(void)syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/* The run's clock starts here, the containment above all done: the
	 * harness's own cost stays out of every fixed overhead measured.
	 * clock_gettime is async-signal-safe. */
	memset(&start, 0, sizeof(start));
	start.stage = STAGE_EXECING;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	start.t0 = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	(void)!write(pl->fail_w, &start, sizeof(start));
	execve(pl->path, pl->argv, pl->envp);
	child_fail(pl, STAGE_EXEC);
}

/* Keep fd off 0, 1 and 2 so the child's dup2 calls cannot clobber it. */
static int
above_stdio(int *fd)
{
	int nfd;

	if (*fd > 2)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3)) < 0)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

static void
spawn_failed(struct run_proc *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
spawn_failed(struct run_proc *p, int err, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(p->res.detail, sizeof(p->res.detail), fmt, ap);
	va_end(ap);
	len = strlen(p->res.detail);
	snprintf(p->res.detail + len, sizeof(p->res.detail) - len, ": %s",
	    strerror(err));
	p->res.reason = RUN_SPAWN;
	p->res.spawn_errno = err;
	p->res.wall_ns = p->t0 ? clock_now_ns() - p->t0 : 0;
	atomic_store(&p->done, 1);
}

static void
report_child_failure(struct run_proc *p, const struct plan *pl,
    const struct child_failure *cf)
{
	const char *prog = pl->argv[0];

	switch (cf->stage) {
	case STAGE_SETPGID:
		spawn_failed(p, cf->err, "cannot give '%s' a process group",
		    prog);
		break;
	case STAGE_CGROUP:
		spawn_failed(p, cf->err, "cannot move '%s' into cgroup '%s'",
		    prog, p->cg_dir ? p->cg_dir : "?");
		break;
	case STAGE_STDIO:
		spawn_failed(p, cf->err, "cannot set up the standard streams "
		    "of '%s'", prog);
		break;
	case STAGE_CHDIR:
		spawn_failed(p, cf->err, "cannot change to working directory "
		    "'%s' for '%s'", pl->workdir, prog);
		break;
	case STAGE_RLIMIT:
		spawn_failed(p, cf->err, "cannot turn core dumps off for "
		    "'%s'", prog);
		break;
	default:
		spawn_failed(p, cf->err, "cannot run '%s'", pl->path);
		break;
	}
}

static int
make_pipe(int fds[2], int nonblock_read)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	if (above_stdio(&fds[0]) < 0 || above_stdio(&fds[1]) < 0)
		return -1;
	if (nonblock_read && fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	return 0;
}

static struct run_proc *
proc_new(const struct child_spec *s)
{
	struct run_proc *p;
	size_t cap = s->stderr_max ? s->stderr_max : RUN_DEFAULT_STDERR_MAX;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if ((p->ring = malloc(cap)) == NULL) {
		free(p);
		return NULL;
	}
	p->ring_cap = cap;
	p->pidfd = p->out_fd = p->err_fd = p->stop_rd = p->stop_wr = -1;
	run_result_init(&p->res);
	buf_init(&p->res.out, s->stdout_max ? s->stdout_max :
	    RUN_DEFAULT_STDOUT_MAX);
	p->timeout_ns = s->timeout_ms > 0 ? s->timeout_ms * NS_PER_MS : 0;
	p->grace_ns = (s->grace_ms > 0 ? s->grace_ms : RUN_DEFAULT_GRACE_MS) *
	    NS_PER_MS;
	snprintf(p->marker, sizeof(p->marker), "%ld-%u", (long)getpid(),
	    atomic_fetch_add(&run_seq, 1));
	snprintf(p->marker_kv, sizeof(p->marker_kv), "%s=%s", MARKER_NAME,
	    p->marker);
	return p;
}

static void
proc_free(struct run_proc *p)
{
	if (p == NULL)
		return;
	close_fd(&p->pidfd);
	close_fd(&p->out_fd);
	close_fd(&p->err_fd);
	close_fd(&p->stop_rd);
	close_fd(&p->stop_wr);
	free(p->cg_dir);
	free(p->ring);
	run_result_release(&p->res);
	free(p);
}

/* Choose the isolation path; the cgroup's procs fd or -1 (subreaper). */
static int
choose_isolation(struct run_proc *p, enum run_isolation want,
    uint64_t memory_max, int *cg_fd, struct err *e)
{
	char why[512];
	struct err ignored;

	*cg_fd = -1;
	p->res.isolation = RUN_ISOLATE_SUBREAPER;
	if (want == RUN_ISOLATE_SUBREAPER)
		return 0;
	if (!cgroup_available(NULL, 0, why, sizeof(why))) {
		if (want == RUN_ISOLATE_CGROUP)
			return err_set(e, "runs cannot have cgroups here: %s",
			    why);
		return 0;
	}
	if ((*cg_fd = cgroup_open_run(p->marker, &p->cg_dir,
	    &p->cg_oom_before, want == RUN_ISOLATE_CGROUP ? e :
	    &ignored)) < 0) {
		if (want == RUN_ISOLATE_CGROUP)
			return -1;
		return 0;
	}
	p->res.isolation = RUN_ISOLATE_CGROUP;
	/* Always written: a kept spare cgroup holds the last run's cap. */
	if (cgroup_set_memory_max(p->cg_dir, memory_max) == 0)
		p->res.memory_max = memory_max;
	return 0;
}

#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
#define HAVE_CLONE3_VM 1
#define CHILD_STACK_SIZE	(256 * 1024)

/*
 * clone3 for a child that shares our memory and runs fn(arg) on a stack
 * of its own until it execs, as vfork does: the pid or -errno.  A C
 * wrapper cannot do this, since the child would return through the
 * caller's stack frames.
 */
long run_clone3_vm(struct clone_args *ca, size_t size,
    void (*fn)(const struct plan *), const struct plan *arg)
    __attribute__((visibility("hidden")));

__asm__(
	".text\n"
	".globl run_clone3_vm\n"
	".hidden run_clone3_vm\n"
	".type run_clone3_vm, @function\n"
	"run_clone3_vm:\n"
#if defined(__CET__)
	"	endbr64\n"
#endif
	"	movq %rdx, %r8\n"		/* the syscall keeps r8, r9 */
	"	movq %rcx, %r9\n"
	"	movl $" "435" ", %eax\n"	/* SYS_clone3 */
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	xorl %ebp, %ebp\n"		/* the child, on its stack */
	"	movq %r9, %rdi\n"
	"	call *%r8\n"
	"	movl $127, %edi\n"		/* fn does not return */
	"	movl $" "60" ", %eax\n"	/* SYS_exit */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size run_clone3_vm, .-run_clone3_vm\n");

/* The child's stack while it shares our memory: one at a time, since
 * children start with the registry locked and the parent waits for exec;
 * kept for the process's life, a guard page below it. */
static char *child_stack;

static char *
child_stack_get(void)
{
	char *m;

	if (child_stack != NULL)
		return child_stack;
	m = mmap(NULL, CHILD_STACK_SIZE + 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m, 4096, PROT_NONE) < 0) {
		munmap(m, CHILD_STACK_SIZE + 4096);
		return NULL;
	}
	child_stack = m + 4096;
	return child_stack;
}
#endif

/*
 * Create the child; called with the registry locked and signals blocked.
 * Into a cgroup, clone3(CLONE_INTO_CGROUP) starts it there: moving a
 * process between cgroups waits for an RCU grace period, which would add
 * about a millisecond to every run.  Where the architecture allows, the
 * child shares our memory until it execs (CLONE_VM | CLONE_VFORK, as
 * posix_spawn does): copying and then tearing down our page tables cost
 * more than the rest of the spawn, and the teardown happens inside exec,
 * on the run's clock.  Where clone3 cannot, fork and let the child move
 * itself before exec.
 */
static pid_t
start_child(struct run_proc *p, struct plan *pl, unsigned flags)
{
	int want_pidfd = !(flags & RUN_NO_PIDFD);
	pid_t pid;

#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
	if (pl->cg_dirfd >= 0 && !(flags & RUN_NO_CLONE3) &&
	    !atomic_load(&no_clone3)) {
		struct clone_args ca;
		int pidfd = -1;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_INTO_CGROUP | (want_pidfd ? CLONE_PIDFD : 0);
		ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)pl->cg_dirfd;
#if defined(HAVE_CLONE3_VM)
		if (!(flags & RUN_NO_CLONE_VM) && child_stack_get() != NULL) {
			long rc;

			ca.flags |= CLONE_VM | CLONE_VFORK;
			ca.stack = (uint64_t)(uintptr_t)child_stack;
			ca.stack_size = CHILD_STACK_SIZE;
			rc = run_clone3_vm(&ca, sizeof(ca), child_exec, pl);
			if (rc < 0) {
				errno = (int)-rc;
				pid = -1;
			} else
				pid = (pid_t)rc;
		} else
#endif
		{
			pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
			if (pid == 0)
				child_exec(pl);
		}
		if (pid > 0) {
			p->pidfd = pidfd;
			return pid;
		}
		if (errno != ENOSYS && errno != EINVAL && errno != E2BIG)
			return -1;
		atomic_store(&no_clone3, 1);
	}
#endif
	if (pl->cg_dirfd >= 0 && pl->cg_fd < 0 &&
	    ((pl->cg_fd = openat(pl->cg_dirfd, "cgroup.procs",
	    O_WRONLY | O_CLOEXEC)) < 0 || above_stdio(&pl->cg_fd) < 0))
		return -1;
	pid = fork();
	if (pid == 0)
		child_exec(pl);
#if defined(SYS_pidfd_open)
	if (pid > 0 && want_pidfd)
		p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	return pid;
}

/*
 * Start the child.  Returns 0 with the child running, or with the run
 * already over (p->done) when it could not start; -1 on the runner's own
 * failures.
 */
static int
spawn(struct run_proc *p, const struct child_spec *s, struct err *e)
{
	struct plan pl;
	struct child_failure cf;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, failp[2] = { -1, -1 };
	char path[PATH_MAX];
	sigset_t all, old;
	size_t argc = 0;
	ssize_t n;
	pid_t pid;
	int rc = -1, saved;

	memset(&pl, 0, sizeof(pl));
	pl.devnull = pl.cg_fd = pl.cg_dirfd = -1;
	if (s->argv == NULL || s->argv[0] == NULL || s->argv[0][0] == '\0')
		return err_set(e, "run: empty command");
	pthread_once(&subreaper_once, become_subreaper);

	while (s->argv[argc] != NULL)
		argc++;
	if ((pl.argv = calloc(argc + 1, sizeof(*pl.argv))) == NULL)
		return err_errno(e, "run '%s'", s->argv[0]);
	memcpy(pl.argv, s->argv, argc * sizeof(*pl.argv));
	if ((pl.envp = build_env(s->env, p->marker_kv, e)) == NULL)
		goto out;
	if (resolve(s->argv[0], env_get(pl.envp, "PATH"), path,
	    sizeof(path)) < 0) {
		p->res.isolation = s->isolation == RUN_ISOLATE_CGROUP ?
		    RUN_ISOLATE_CGROUP : RUN_ISOLATE_SUBREAPER;
		spawn_failed(p, errno, "cannot run '%s': not found in PATH "
		    "as an executable file", s->argv[0]);
		rc = 0;
		goto out;
	}
	pl.path = path;
	pl.workdir = s->workdir;
	if (choose_isolation(p, s->isolation, s->memory_max, &pl.cg_dirfd,
	    e) < 0)
		goto out;
	if (make_pipe(outp, 1) < 0 || make_pipe(errp, 1) < 0 ||
	    make_pipe(failp, 0) < 0 ||
	    (pl.devnull = open(s->stdin_path ? s->stdin_path : "/dev/null",
	    O_RDONLY | O_CLOEXEC)) < 0 ||
	    above_stdio(&pl.devnull) < 0 ||
	    (pl.cg_dirfd >= 0 && above_stdio(&pl.cg_dirfd) < 0)) {
		err_errno(e, "cannot set up a run of '%s' (stdin '%s')",
		    s->argv[0], s->stdin_path ? s->stdin_path : "/dev/null");
		goto out;
	}
	pl.out_w = outp[1];
	pl.err_w = errp[1];
	pl.fail_w = failp[1];
	p->oom_before = oom_kills_vmstat(p->chunk, sizeof(p->chunk));

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&reg_lock);
	if (reg_reserve_locked() < 0) {
		pthread_mutex_unlock(&reg_lock);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		err_errno(e, "run '%s'", s->argv[0]);
		goto out;
	}
	/* A fallback: the child reports its own start just before exec. */
	p->t0 = clock_now_ns();
	pid = start_child(p, &pl, s->flags);
	saved = errno;
	if (pid > 0)
		reg_pids[reg_n++] = pid;
	pthread_mutex_unlock(&reg_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		spawn_failed(p, saved, "cannot start '%s'", s->argv[0]);
		rc = 0;
		goto out;
	}

	close_fd(&outp[1]);
	close_fd(&errp[1]);
	close_fd(&failp[1]);
	/* The child's clock reading, then end of file at a successful exec
	 * or the failed step. */
	for (;;) {
		do
			n = read(failp[0], &cf, sizeof(cf));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(cf) || cf.stage != STAGE_EXECING)
			break;
		p->t0 = cf.t0;
	}
	if (n == (ssize_t)sizeof(cf)) {
		int status;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		reg_del(pid);
		report_child_failure(p, &pl, &cf);
		rc = 0;
		goto out;
	}
	p->pid = pid;
	p->res.pid = pid;
	p->out_fd = outp[0];
	p->err_fd = errp[0];
	outp[0] = errp[0] = -1;
	rc = 0;
out:
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&failp[0]);
	close_fd(&failp[1]);
	close_fd(&pl.devnull);
	close_fd(&pl.cg_fd);
	close_fd(&pl.cg_dirfd);
	if (p->pid == 0)
		cgroup_close_run(&p->cg_dir, p->cg_killed);
	free(pl.argv);
	free(pl.envp);
	return rc;
}

/* ---- waiting ---- */

static void
keep_stderr(struct run_proc *p, const char *d, size_t n)
{
	size_t cap = p->ring_cap, first;

	p->res.err_bytes += n;
	if (n >= cap) {
		memcpy(p->ring, d + n - cap, cap);
		p->ring_head = 0;
		p->ring_len = cap;
		return;
	}
	first = cap - p->ring_head < n ? cap - p->ring_head : n;
	memcpy(p->ring + p->ring_head, d, first);
	memcpy(p->ring, d + first, n - first);
	p->ring_head = (p->ring_head + n) % cap;
	p->ring_len = p->ring_len + n > cap ? cap : p->ring_len + n;
}

/* Read what fd has; close it at end of file.  Returns the bytes read,
 * 0 at end of file or when nothing was there. */
static ssize_t
pump(struct run_proc *p, int *fd, int is_out)
{
	ssize_t n;
	size_t kept;

	n = read(*fd, p->chunk, sizeof(p->chunk));
	if (n > 0) {
		if (is_out) {
			p->res.out_bytes += (uint64_t)n;
			kept = buf_add_capped(&p->res.out, p->chunk,
			    (size_t)n);
			if (kept < (size_t)n)
				p->res.out_truncated = 1;
		} else
			keep_stderr(p, p->chunk, (size_t)n);
		return n;
	}
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		close_fd(fd);
	return 0;
}

static void
signal_run(struct run_proc *p, int sig)
{
	(void)kill(-p->pid, sig);
	if (sig == SIGKILL && p->cg_dir != NULL) {
		cgroup_kill(p->cg_dir);
		p->cg_killed = 1;
	}
}

static void
begin_stop(struct run_proc *p, int64_t now)
{
	signal_run(p, SIGTERM);
	p->kstate = TERM_SENT;
	p->kill_at = now + p->grace_ns;
}

/* Without a pidfd: whether the child has ended, leaving it unreaped. */
static int
child_ended(struct run_proc *p)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == ECHILD;
	return si.si_pid != 0;
}

static int
ms_until(int64_t t, int64_t now)
{
	int64_t ms = (t - now + NS_PER_MS - 1) / NS_PER_MS;

	return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Read output and enforce the timeout until the child has ended. */
static void
wait_loop(struct run_proc *p)
{
	int64_t deadline = p->timeout_ns ? p->t0 + p->timeout_ns : 0, now;
	struct pollfd pfd[4];
	int n, wait_ms, i_out, i_err, i_pid, i_stop;
	char c;

	for (;;) {
		now = clock_now_ns();
		if (p->kstate == ALIVE && deadline && now >= deadline) {
			p->res.timed_out = 1;
			begin_stop(p, now);
		}
		if (p->kstate == TERM_SENT && now >= p->kill_at) {
			signal_run(p, SIGKILL);
			p->kstate = KILL_SENT;
		}
		if (p->pidfd < 0 && child_ended(p)) {
			p->t_end = clock_now_ns();
			return;
		}

		wait_ms = -1;
		if (p->kstate == ALIVE && deadline)
			wait_ms = ms_until(deadline, now);
		else if (p->kstate == TERM_SENT)
			wait_ms = ms_until(p->kill_at, now);
		if (p->pidfd < 0) {
			/* Polling costs wake-ups; keep its error near 1%. */
			int slice = (int)((now - p->t0) / NS_PER_MS / 100);

			slice = slice < 1 ? 1 : slice > 20 ? 20 : slice;
			if (wait_ms < 0 || wait_ms > slice)
				wait_ms = slice;
		}

		n = 0;
		i_out = i_err = i_pid = i_stop = -1;
		if (p->out_fd >= 0) {
			pfd[n].fd = p->out_fd;
			pfd[n].events = POLLIN;
			i_out = n++;
		}
		if (p->err_fd >= 0) {
			pfd[n].fd = p->err_fd;
			pfd[n].events = POLLIN;
			i_err = n++;
		}
		if (p->pidfd >= 0) {
			pfd[n].fd = p->pidfd;
			pfd[n].events = POLLIN;
			i_pid = n++;
		}
		if (p->stop_rd >= 0 && p->kstate == ALIVE) {
			pfd[n].fd = p->stop_rd;
			pfd[n].events = POLLIN;
			i_stop = n++;
		}
		if (poll(pfd, (nfds_t)n, wait_ms) < 0) {
			if (errno != EINTR)
				clock_sleep_ns(NS_PER_MS);
			continue;
		}
		if (i_pid >= 0 && pfd[i_pid].revents) {
			p->t_end = clock_now_ns();
			return;
		}
		if (i_out >= 0 && pfd[i_out].revents)
			pump(p, &p->out_fd, 1);
		if (i_err >= 0 && pfd[i_err].revents)
			pump(p, &p->err_fd, 0);
		if (i_stop >= 0 && pfd[i_stop].revents &&
		    read(p->stop_rd, &c, 1) >= 0) {
			p->res.stopped = 1;
			begin_stop(p, clock_now_ns());
		}
	}
}

/*
 * Wait (bounded) for a leftover of the run's cgroup, killed already, to
 * be reaped: by us once it is reparented here, or by its own parent.
 */
static void
reap_cgroup_leftover(struct run_proc *p, pid_t pid, int64_t until)
{
	struct procfs_stat st;

	for (;;) {
		pthread_mutex_lock(&reg_lock);
		if (!reg_has_locked(pid) &&
		    waitpid(pid, NULL, WNOHANG) == pid) {
			pthread_mutex_unlock(&reg_lock);
			return;
		}
		pthread_mutex_unlock(&reg_lock);
		if (procfs_stat(pid, &st) < 0 || clock_now_ns() >= until)
			return;		/* gone, or reaped by another */
		if (st.state != 'Z' &&
		    !cgroup_has(pid, p->cg_dir))
			return;		/* the pid was reused */
		clock_sleep_ns(100000);
	}
}

/* The fallback: kill the orphans that carry this run's marker. */
static void
kill_marked_orphans(struct run_proc *p, int64_t until)
{
	pid_t kids[512];
	struct procfs_stat st;
	size_t n, i;
	int killed, round;

	for (round = 0; round < 64 && clock_now_ns() < until; round++) {
		killed = 0;
		n = list_children(kids, sizeof(kids) / sizeof(kids[0]));
		for (i = 0; i < n; i++) {
			if (procfs_stat(kids[i], &st) < 0 || st.state == 'Z' ||
			    st.ppid != getpid() ||
			    !has_marker(kids[i], p->marker_kv, p->chunk,
			    sizeof(p->chunk)))
				continue;
			(void)kill(kids[i], SIGKILL);
			while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
				;
			p->res.leftovers++;
			killed++;
		}
		/* Killing one may have orphaned its children: again. */
		if (killed == 0)
			break;
	}
}

static void
decode_status(struct run_proc *p, int status)
{
	struct run_result *r = &p->res;

	if (WIFEXITED(status))
		r->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r->signal = WTERMSIG(status);

	if (r->stopped)
		r->reason = RUN_OK;
	else if (r->timed_out)
		r->reason = RUN_TIMEOUT;
	else if (WIFEXITED(status))
		r->reason = r->exit_code == 0 ? RUN_OK : RUN_EXIT;
	else if (r->signal == SIGKILL && p->kstate == ALIVE &&
	    oom_happened(p))
		r->reason = RUN_OOM;
	else
		r->reason = RUN_SIGNAL;
}

static void
take_stderr(struct run_proc *p)
{
	size_t start = (p->ring_head + p->ring_cap - p->ring_len) %
	    p->ring_cap, first;

	buf_init(&p->res.errtail, p->ring_cap);
	first = p->ring_cap - start < p->ring_len ? p->ring_cap - start :
	    p->ring_len;
	(void)buf_add(&p->res.errtail, p->ring + start, first);
	(void)buf_add(&p->res.errtail, p->ring, p->ring_len - first);
	p->res.err_truncated = p->res.err_bytes > p->ring_len;
}

/*
 * The child has ended (not yet reaped): kill what is left of the run,
 * reap the child with its rusage, clean up.
 */
static void
finish(struct run_proc *p)
{
	pid_t left[512];
	size_t nleft = 0, i;
	struct rusage ru;
	int64_t until;
	int status = 0;
	pid_t w;

	if (p->cg_dir != NULL)
		nleft = cgroup_members(p->cg_dir, p->pid, left,
		    sizeof(left) / sizeof(left[0]));
	/* The child is a zombie, so its pid still names the group.  An empty
	 * cgroup stays empty: the zombie can start nothing more. */
	(void)kill(-p->pid, SIGKILL);
	if (p->cg_dir != NULL && nleft > 0) {
		cgroup_kill(p->cg_dir);
		p->cg_killed = 1;
	}
	memset(&ru, 0, sizeof(ru));
	do
		w = wait4(p->pid, &status, 0, &ru);
	while (w < 0 && errno == EINTR);
	reg_del(p->pid);
	if (p->t_end == 0)
		p->t_end = clock_now_ns();
	p->res.wall_ns = p->t_end - p->t0;
	p->res.user_ns = (int64_t)ru.ru_utime.tv_sec * 1000000000LL +
	    (int64_t)ru.ru_utime.tv_usec * 1000;
	p->res.sys_ns = (int64_t)ru.ru_stime.tv_sec * 1000000000LL +
	    (int64_t)ru.ru_stime.tv_usec * 1000;
	p->res.max_rss_kb = ru.ru_maxrss;
	if (w == p->pid)
		decode_status(p, status);
	else {
		p->res.reason = RUN_SIGNAL;	/* lost: never a silent OK */
		snprintf(p->res.detail, sizeof(p->res.detail),
		    "the child's status was lost: %s", strerror(errno));
	}

	until = clock_now_ns() + CLEANUP_NS;
	p->res.leftovers = (int)nleft;
	for (i = 0; i < nleft; i++)
		reap_cgroup_leftover(p, left[i], until);
	/* Members of the process group die of the SIGKILL above; their
	 * zombies come back to us as orphans. */
	while (kill(-p->pid, 0) == 0 && clock_now_ns() < until) {
		int n = reap_zombies(p->pid);

		if (p->cg_dir == NULL)
			p->res.leftovers += n;
		clock_sleep_ns(100000);
	}
	if (p->cg_dir == NULL)
		kill_marked_orphans(p, until);
	(void)reap_zombies(0);

	/* What the run wrote is in the pipes by now; a killed grandchild
	 * may have held them open, so read without waiting for their end. */
	while (p->out_fd >= 0 && pump(p, &p->out_fd, 1) > 0)
		;
	while (p->err_fd >= 0 && pump(p, &p->err_fd, 0) > 0)
		;
	close_fd(&p->out_fd);
	close_fd(&p->err_fd);
	take_stderr(p);
	close_fd(&p->pidfd);
	/* After the pipes: emptying the cgroup may wait, its output not. */
	cgroup_close_run(&p->cg_dir, p->cg_killed);
	atomic_store(&p->done, 1);
}

/* ---- public ---- */

void
run_result_init(struct run_result *r)
{
	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	buf_init(&r->out, RUN_DEFAULT_STDOUT_MAX);
	buf_init(&r->errtail, RUN_DEFAULT_STDERR_MAX);
}

void
run_result_release(struct run_result *r)
{
	buf_release(&r->out);
	buf_release(&r->errtail);
}

static void
move_result(struct run_proc *p, struct run_result *r)
{
	*r = p->res;
	buf_init(&p->res.out, 0);
	buf_init(&p->res.errtail, 0);
}

int
run_child(const struct child_spec *s, struct run_result *r, struct err *e)
{
	struct run_proc *p;

	run_result_init(r);
	if ((p = proc_new(s)) == NULL)
		return err_errno(e, "run");
	if (spawn(p, s, e) < 0) {
		proc_free(p);
		return -1;
	}
	if (p->pid > 0) {
		wait_loop(p);
		finish(p);
	}
	move_result(p, r);
	proc_free(p);
	return 0;
}

int
run_template(const char *tmpl, const struct tmpl_vals *v,
    const struct child_spec *base, struct run_result *r, struct err *e)
{
	struct strv argv = STRV_INIT;
	struct child_spec s = *base;
	int rc;

	run_result_init(r);
	if (tmpl_expand(tmpl, v, &argv, e) < 0) {
		strv_clear(&argv);
		return -1;
	}
	s.argv = (const char *const *)argv.v;
	rc = run_child(&s, r, e);
	strv_clear(&argv);
	return rc;
}

static void *
proc_thread(void *arg)
{
	struct run_proc *p = arg;

	wait_loop(p);
	finish(p);
	return NULL;
}

int
run_start(const struct child_spec *s, struct run_proc **out, struct err *e)
{
	struct run_proc *p;
	sigset_t all, old;
	int fds[2], rc;

	*out = NULL;
	if ((p = proc_new(s)) == NULL)
		return err_errno(e, "run");
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		err_errno(e, "run '%s'", s->argv && s->argv[0] ?
		    s->argv[0] : "");
		proc_free(p);
		return -1;
	}
	p->stop_rd = fds[0];
	p->stop_wr = fds[1];
	if (spawn(p, s, e) < 0) {
		proc_free(p);
		return -1;
	}
	if (p->pid > 0) {
		/* Signals are for the caller's threads, not the pump. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&p->thread, NULL, proc_thread, p);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			/* Without a thread, end the child here. */
			p->res.stopped = 1;
			begin_stop(p, clock_now_ns());
			p->stop_rd = -1;
			close(fds[0]);
			wait_loop(p);
			finish(p);
		} else
			p->has_thread = 1;
	}
	*out = p;
	return 0;
}

int
run_proc_exited(struct run_proc *p)
{
	return atomic_load(&p->done) != 0;
}

pid_t
run_proc_pid(const struct run_proc *p)
{
	return p->pid;
}

void
run_proc_stop(struct run_proc *p, struct run_result *r)
{
	if (p->has_thread) {
		(void)!write(p->stop_wr, "x", 1);
		pthread_join(p->thread, NULL);
	}
	move_result(p, r);
	proc_free(p);
}

const char *
run_reason_name(enum run_reason reason)
{
	switch (reason) {
	case RUN_OK:
		return "none";
	case RUN_EXIT:
		return "exit";
	case RUN_SIGNAL:
		return "signal";
	case RUN_TIMEOUT:
		return "timeout";
	case RUN_SPAWN:
		return "spawn";
	case RUN_OOM:
		return "oom";
	}
	return "unknown";
}

const char *
run_isolation_name(enum run_isolation iso)
{
	switch (iso) {
	case RUN_ISOLATE_AUTO:
		return "auto";
	case RUN_ISOLATE_CGROUP:
		return "cgroup";
	case RUN_ISOLATE_SUBREAPER:
		return "subreaper";
	}
	return "unknown";
}

void
run_stored_end(const struct run_result *r, char *detail, size_t len,
    struct store_run_end *end)
{
	end->wall_ns = r->wall_ns;
	end->exit_code = r->exit_code;
	end->signal = r->signal;
	end->err_tail = r->errtail.data;
	end->err_len = r->errtail.len;
	end->failure = NULL;
	end->failure_detail = NULL;
	if (r->reason != RUN_OK) {
		end->failure = run_reason_name(r->reason);
		end->failure_detail = run_describe(r, detail, len);
	}
}

static void
describe_signal(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev != NULL)
		snprintf(buf, len, "SIG%s (%s)", abbrev, strsignal(sig));
	else
		snprintf(buf, len, "signal %d", sig);
}

const char *
run_describe(const struct run_result *r, char *buf, size_t len)
{
	char sig[96];

	switch (r->reason) {
	case RUN_OK:
		if (r->stopped)
			snprintf(buf, len, "stopped on request");
		else
			snprintf(buf, len, "exited with status 0");
		break;
	case RUN_EXIT:
		snprintf(buf, len, "exited with status %d", r->exit_code);
		break;
	case RUN_SIGNAL:
		if (r->detail[0] != '\0') {
			snprintf(buf, len, "%s", r->detail);
			break;
		}
		describe_signal(r->signal, sig, sizeof(sig));
		snprintf(buf, len, "killed by %s", sig);
		break;
	case RUN_TIMEOUT:
		if (r->signal != 0) {
			describe_signal(r->signal, sig, sizeof(sig));
			snprintf(buf, len, "timed out after %lld ms (killed "
			    "by %s)", (long long)(r->wall_ns / NS_PER_MS),
			    sig);
		} else
			snprintf(buf, len, "timed out after %lld ms (exited "
			    "with status %d on SIGTERM)",
			    (long long)(r->wall_ns / NS_PER_MS), r->exit_code);
		break;
	case RUN_SPAWN:
		snprintf(buf, len, "%s", r->detail);
		break;
	case RUN_OOM:
		if (r->memory_max > 0)
			snprintf(buf, len, "out of memory: went over its cap "
			    "of %llu MiB (max-memory) and was killed (SIGKILL)",
			    (unsigned long long)(r->memory_max >> 20));
		else
			snprintf(buf, len, "killed by the out-of-memory killer "
			    "(SIGKILL)");
		break;
	}
	return buf;
}

void
run_shutdown(void)
{
	cgroup_shutdown();
}
