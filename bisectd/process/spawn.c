/*
 * spawn.c: starting a child: its environment and program resolved, the
 * plan it follows between fork (or clone3 into its cgroup) and exec,
 * and what it reports back if a step fails.  Between fork and exec the
 * child makes only async-signal-safe system calls on values the parent
 * prepared (see proc.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/sched.h>	/* clone3's struct clone_args */

#include "cgroup.h"
#include "common/clock.h"
#include "common/err.h"
#include "proc.h"

static pthread_once_t subreaper_once = PTHREAD_ONCE_INIT;
static atomic_uint run_seq;
static atomic_int no_clone3;	/* clone3 into a cgroup was refused */

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
 * and reading text need, and the GPUs it may use: CUDA_VISIBLE_DEVICES
 * names those the machine key describes and the run samples, so the
 * engine runs on the same.  Everything else of ours stays here: the
 * variable token-env names (a GitHub token), proxies, sockets.  The
 * configuration's env entries are how a run gets more.
 */
static const char *const inherited[] = { "PATH", "HOME", "LANG",
    "CUDA_VISIBLE_DEVICES" };

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

/* PATH, HOME, LANG and CUDA_VISIBLE_DEVICES from environ, unless add
 * sets them; add; the run marker. */
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
	/* The run dies with the process that waits for it: a build or an
	 * engine never outlives a killed daemon or bisectctl.  When that
	 * process died already, before the request, end here. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(pl, STAGE_PDEATHSIG);
	if (getppid() != pl->parent)
		_exit(127);
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
	case STAGE_PDEATHSIG:
		spawn_failed(p, cf->err, "cannot tie '%s' to this process's "
		    "life", prog);
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

struct run_proc *
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
	p->stop = s->stop;
	p->grace_ns = (s->grace_ms > 0 ? s->grace_ms : RUN_DEFAULT_GRACE_MS) *
	    NS_PER_MS;
	snprintf(p->marker, sizeof(p->marker), "%ld-%u", (long)getpid(),
	    atomic_fetch_add(&run_seq, 1));
	snprintf(p->marker_kv, sizeof(p->marker_kv), "%s=%s", MARKER_NAME,
	    p->marker);
	return p;
}

void
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
int
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
	pl.parent = getpid();
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
		reg_add_locked(pid);
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
