/*
 * run.c: spawning, timing and reaping children: runner.h's interface.  One
 * struct run_proc per child (proc.h): run_child() drives it in the
 * caller's thread, run_start() in a thread of its own, through spawn.c,
 * wait.c and reap.c.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/strv.h"
#include "proc.h"
#include "runner.h"
#include "template.h"

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
