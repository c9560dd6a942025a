/*
 * wait.c: waiting for a child: its output pumped, its stderr's tail
 * kept, its timeout and stop requests turned into signals (see
 * proc.h).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "common/clock.h"
#include "proc.h"

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
ssize_t
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

void
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
void
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
		if (p->kstate == ALIVE && p->stop && atomic_load(p->stop)) {
			p->res.stopped = 1;
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
		/* A signal interrupts poll() in its own thread only. */
		if (p->stop && p->kstate == ALIVE && (wait_ms < 0 ||
		    wait_ms > 100))
			wait_ms = 100;
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
