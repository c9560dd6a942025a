/*
 * test_benchlock.c: the benchmark lock between two real processes: a
 * child holds it, the parent sees who, waits, and gets it when the child
 * lets go or dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bisectd/measure/benchlock.h"
#include "check.h"
#include "common/err.h"

struct holder_proc {
	pid_t pid;
	int release_wr;		/* write a byte: the child releases */
};

/*
 * Fork a child that takes the lock as what, says so, and holds it until
 * told (or for hold_ms, if > 0), then releases and exits.
 */
static struct holder_proc
start_holder(const char *path, const char *what, int hold_ms)
{
	struct holder_proc h = { -1, -1 };
	int ready[2], release[2];
	char c;

	if (pipe(ready) < 0 || pipe(release) < 0)
		abort();
	if ((h.pid = fork()) == 0) {
		struct benchlock l = BENCHLOCK_INIT;
		struct err e = ERR_INIT;

		close(ready[0]);
		close(release[1]);
		if (benchlock_acquire(&l, path, what, NULL, NULL, &e) != 0)
			_exit(2);
		(void)!write(ready[1], "r", 1);
		if (hold_ms > 0)
			usleep((useconds_t)hold_ms * 1000);
		else
			(void)!read(release[0], &c, 1);
		benchlock_release(&l);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	if (read(ready[0], &c, 1) != 1)
		fprintf(stderr, "holder did not take the lock\n");
	close(ready[0]);
	h.release_wr = release[1];
	return h;
}

static int
finish_holder(struct holder_proc *h)
{
	int status = -1;

	(void)!write(h->release_wr, "x", 1);
	close(h->release_wr);
	waitpid(h->pid, &status, 0);
	return status;
}

struct seen {
	int calls;
	pid_t pid;
	char what[BENCHLOCK_WHAT_MAX];
	int64_t last_waited;
	int release_fd;		/* release the holder on the first call */
	int stop;		/* return nonzero */
};

static int
on_wait(void *arg, const struct benchlock_holder *h, int64_t waited_ms)
{
	struct seen *s = arg;

	s->calls++;
	s->pid = h->pid;
	snprintf(s->what, sizeof(s->what), "%s", h->what);
	CHECK(waited_ms >= s->last_waited);
	s->last_waited = waited_ms;
	if (s->release_fd >= 0) {
		(void)!write(s->release_fd, "x", 1);
		s->release_fd = -1;
	}
	return s->stop;
}

static void
test_two_processes(void)
{
	struct benchlock l = BENCHLOCK_INIT, l2 = BENCHLOCK_INIT;
	struct benchlock_holder who;
	struct err e = ERR_INIT;
	struct holder_proc h;
	struct seen s;
	char *text, expect[64];
	int status;

	h = start_holder("bench.lock", "bisectctl bench basert 0.2.4", 0);

	/* Taken: try says so and names the holder. */
	CHECK_INT(benchlock_try(&l, "bench.lock", "second", &who, &e), 1);
	CHECK_INT(who.pid, h.pid);
	CHECK_STR(who.what, "bisectctl bench basert 0.2.4");
	CHECK_INT(l.fd, -1);
	CHECK_INT(benchlock_holder("bench.lock", &who, &e), 0);
	CHECK_INT(who.pid, h.pid);

	/* Blocking: the callback is told whom we wait for; the holder lets
	 * go when asked, and the lock is ours. */
	memset(&s, 0, sizeof(s));
	s.release_fd = h.release_wr;
	CHECK_INT(benchlock_acquire(&l, "bench.lock", "bisectctl bisect --now",
	    on_wait, &s, &e), 0);
	CHECK(s.calls >= 1);
	CHECK_INT(s.pid, h.pid);
	CHECK_STR(s.what, "bisectctl bench basert 0.2.4");
	CHECK(l.fd >= 0);
	CHECK(fcntl(l.fd, F_GETFD) & FD_CLOEXEC);
	text = check_read_file("bench.lock");
	snprintf(expect, sizeof(expect), "%ld bisectctl bisect --now\n",
	    (long)getpid());
	CHECK_STR(text, expect);
	free(text);
	status = -1;
	close(h.release_wr);
	waitpid(h.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Held by us: a second take in this process is an error; and the
	 * lock is one per open file, so another open would wait. */
	CHECK_INT(benchlock_acquire(&l, "bench.lock", "x", NULL, NULL, &e),
	    -1);
	CHECK_CONTAINS(e.msg, "already held");
	CHECK_INT(benchlock_try(&l2, "bench.lock", "x", &who, &e), 1);
	CHECK_INT(who.pid, getpid());

	benchlock_release(&l);
	CHECK_INT(l.fd, -1);
	benchlock_release(&l);	/* harmless twice */
	CHECK_INT(benchlock_holder("bench.lock", &who, &e), 0);
	CHECK_INT(who.pid, 0);
	CHECK_STR(who.what, "");
}

static void
test_stop_and_remind(void)
{
	struct benchlock l = BENCHLOCK_INIT;
	struct err e = ERR_INIT;
	struct holder_proc h;
	struct seen s;

	/* The callback may give up. */
	h = start_holder("bench.lock", "daemon", 0);
	memset(&s, 0, sizeof(s));
	s.release_fd = -1;
	s.stop = 1;
	CHECK_INT(benchlock_acquire(&l, "bench.lock", "hand", on_wait, &s,
	    &e), 1);
	CHECK_INT(s.calls, 1);
	CHECK_INT(l.fd, -1);
	CHECK_INT(finish_holder(&h), 0);

	/* A long wait is reminded about every second. */
	h = start_holder("bench.lock", "long one", 1300);
	memset(&s, 0, sizeof(s));
	s.release_fd = -1;
	CHECK_INT(benchlock_acquire(&l, "bench.lock", "patient", on_wait, &s,
	    &e), 0);
	CHECK(s.calls >= 2);
	CHECK(s.last_waited >= 900);
	benchlock_release(&l);
	CHECK_INT(finish_holder(&h), 0);
}

static void
test_holder_dies(void)
{
	struct benchlock l = BENCHLOCK_INIT;
	struct benchlock_holder who;
	struct err e = ERR_INIT;
	struct holder_proc h;
	int status;

	h = start_holder("bench.lock", "crashes", 0);
	CHECK_INT(benchlock_try(&l, "bench.lock", "next", &who, &e), 1);
	kill(h.pid, SIGKILL);
	waitpid(h.pid, &status, 0);
	close(h.release_wr);
	/* The kernel dropped the lock with its holder; the stale line is
	 * overwritten by the new one. */
	CHECK_INT(benchlock_try(&l, "bench.lock", "next", &who, &e), 0);
	CHECK_INT(benchlock_holder("bench.lock", &who, &e), 0);
	CHECK_INT(who.pid, getpid());
	CHECK_STR(who.what, "next");
	benchlock_release(&l);
}

static void
test_errors(void)
{
	struct benchlock l = BENCHLOCK_INIT;
	struct benchlock_holder who;
	struct err e = ERR_INIT;
	char what[600];

	CHECK_INT(benchlock_acquire(&l, "no/such/dir/bench.lock", "x", NULL,
	    NULL, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open lock file 'no/such/dir/bench.lock'");
	CHECK_INT(benchlock_try(&l, "no/such/dir/bench.lock", "x", NULL,
	    &e), -1);
	/* Nobody has ever held it. */
	CHECK_INT(benchlock_holder("never.lock", &who, &e), 0);
	CHECK_INT(who.pid, 0);

	/* A multi-line or overlong command is kept on one bounded line. */
	memset(what, 'a', sizeof(what) - 1);
	what[sizeof(what) - 1] = '\0';
	what[3] = '\n';
	CHECK_INT(benchlock_try(&l, "long.lock", what, NULL, &e), 0);
	CHECK_INT(benchlock_holder("long.lock", &who, &e), 0);
	CHECK_INT(who.pid, getpid());
	CHECK(strchr(who.what, '\n') == NULL);
	CHECK(strlen(who.what) < BENCHLOCK_WHAT_MAX);
	CHECK(strncmp(who.what, "aaa aaa", 7) == 0);
	benchlock_release(&l);

	/* Garbage in the file: holder unknown, not an error. */
	check_write_file("junk.lock", "not a pid\n");
	CHECK_INT(benchlock_holder("junk.lock", &who, &e), 0);
	CHECK_INT(who.pid, 0);
}

int
main(void)
{
	check_tmpdir("benchlock");
	/* A holder that timed out on its own has closed its pipe. */
	signal(SIGPIPE, SIG_IGN);
	CHECK_CASE(test_two_processes);
	CHECK_CASE(test_stop_and_remind);
	CHECK_CASE(test_holder_dies);
	CHECK_CASE(test_errors);
	return check_done();
}
