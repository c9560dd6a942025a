/*
 * reap.c: collecting a child and what it left behind: the registry of
 * children some run waits for, zombies and marked orphans swept, the
 * cgroup's leftovers, the exit status decoded, the OOM killer noticed
 * (see proc.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "common/clock.h"
#include "proc.h"
#include "procfs.h"

/*
 * The pids of children some run is waiting for: never reaped by the
 * sweeps for orphans.  The lock is held across fork so a sweep in another
 * thread cannot take a new child for an orphan.
 */
pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *reg_pids;		/* reachable for the process's life */
static size_t reg_n, reg_alloc;


void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* ---- the registry of children being waited for ---- */

int
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

/* Add pid, in the slot reg_reserve_locked() made; under reg_lock. */
void
reg_add_locked(pid_t pid)
{
	reg_pids[reg_n++] = pid;
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

void
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

void
become_subreaper(void)
{
	/* Failure leaves orphans to init, as without the runner. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* ---- the OOM killer's counter ---- */

int64_t
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
void
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
