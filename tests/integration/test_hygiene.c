/*
 * test_hygiene.c: the busy share (on /proc/stat texts, then on the real
 * machine with spinning children), the wait for a quiet machine, and the
 * machine's identity from real and made-up /proc files.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common/err.h"
#include "bisectd/measure/hygiene.h"

static void
test_parse_stat(void)
{
	struct cpu_times a, b;

	/* user nice system idle iowait irq softirq steal guest guest_nice */
	CHECK_INT(hygiene_parse_stat("cpu  100 0 50 800 50 0 0 0 40 0\n"
	    "cpu0 1 2 3 4\nintr 1 2 3\n", &a), 0);
	CHECK_INT(a.idle, 850);
	CHECK_INT(a.total, 1000);	/* guest is inside user */
	CHECK_INT(hygiene_parse_stat("cpu  200 0 100 1000 100 0 0 100 90 0\n",
	    &b), 0);
	CHECK_INT(b.idle, 1100);
	CHECK_INT(b.total, 1500);
	/* 500 ticks, 250 idle: half busy (steal counts as busy). */
	CHECK_NEAR(hygiene_busy(&a, &b), 0.5, 1e-9);
	/* No tick between readings, or counters going back: 0. */
	CHECK_NEAR(hygiene_busy(&a, &a), 0, 0);
	CHECK_NEAR(hygiene_busy(&b, &a), 0, 0);
	/* Our own 1 s of CPU at 100 ticks a second: 100 of the 250 busy
	 * ticks were ours. */
	CHECK_NEAR(hygiene_busy_others(&a, &b, 1000000000LL, 100), 0.3, 1e-9);
	CHECK_NEAR(hygiene_busy_others(&a, &b, 0, 100), 0.5, 1e-9);
	/* Sampled ticks can fall short of rusage: never below 0. */
	CHECK_NEAR(hygiene_busy_others(&a, &b, 3000000000LL, 100), 0, 0);
	CHECK_NEAR(hygiene_busy_others(&b, &a, 0, 100), 0, 0);

	/* Old kernels: four fields. */
	CHECK_INT(hygiene_parse_stat("cpu 1 2 3 4\n", &a), 0);
	CHECK_INT(a.idle, 4);
	CHECK_INT(a.total, 10);
	/* The aggregate line need not come first. */
	CHECK_INT(hygiene_parse_stat("x 1\ncpu  1 1 1 7 0\n", &a), 0);
	CHECK_INT(a.idle, 7);

	CHECK_INT(hygiene_parse_stat("cpu0 1 2 3 4\n", &a), -1);
	CHECK_INT(hygiene_parse_stat("cpu  1 2\n", &a), -1);
	CHECK_INT(hygiene_parse_stat("", &a), -1);
}

/* Start one CPU-bound child per online CPU; they end on SIGKILL. */
static int
spin_start(pid_t *pids, int max)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, n = ncpu < 1 ? 1 : ncpu > max ? max : (int)ncpu;

	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == 0) {
			volatile unsigned long x = 0;

			alarm(30);	/* never outlive the test */
			for (;;)
				x++;
		}
	}
	return n;
}

static void
spin_stop(pid_t *pids, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
}

static int calls;

static int
count_calls(void *arg, const struct hygiene_sample *s, int64_t waited_ms)
{
	int stop_after = *(int *)arg;

	CHECK(s->busy >= 0 && s->busy <= 1);
	CHECK(waited_ms >= 0);
	calls++;
	return stop_after > 0 && calls >= stop_after;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* hygiene_wait_quiet() under limit for max_wait_ms at most, in windows
 * of window_ms, the callback giving up at its stop-th call (0: never),
 * calls counted from 0; how long it took, in ms. */
static int64_t
timed_wait(double limit, int max_wait_ms, int window_ms, int stop,
    struct hygiene_sample *s, int *busy)
{
	struct err e = ERR_INIT;
	int64_t t0;

	calls = 0;
	t0 = now_ms();
	CHECK_INT(hygiene_wait_quiet(limit, max_wait_ms, window_ms,
	    count_calls, &stop, s, busy, &e), 0);
	return now_ms() - t0;
}

static void
test_sample_and_wait(void)
{
	struct hygiene_sample s;
	struct err e = ERR_INIT;
	pid_t pids[64];
	int n, busy;
	int64_t took;

	CHECK_INT(hygiene_sample(0, &s, &e), 0);
	CHECK(s.busy >= 0 && s.busy <= 1);
	CHECK(s.window_ms >= 240 && s.window_ms < 5000);
	CHECK(s.load1 >= 0);

	n = spin_start(pids, 64);
	usleep(100000);
	CHECK_INT(hygiene_sample(300, &s, &e), 0);
	/* Every CPU spinning: busy whatever else the machine does. */
	CHECK(s.busy >= 0.6);

	/* Too busy for 5%: waits max_wait, then says busy. */
	took = timed_wait(0.05, 600, 150, 0, &s, &busy);
	CHECK_INT(busy, 1);
	CHECK(calls >= 2);
	CHECK(s.busy >= 0.6);
	CHECK(took >= 600);
	CHECK(took < 5000);

	/* The callback may give up early. */
	took = timed_wait(0.05, 60000, 150, 1, &s, &busy);
	CHECK_INT(busy, 1);
	CHECK_INT(calls, 1);
	CHECK(took < 5000);

	/* A limit of 100% never waits. */
	(void)timed_wait(1.0, 60000, 100, 1, &s, &busy);
	CHECK_INT(busy, 0);
	CHECK_INT(calls, 0);
	spin_stop(pids, n);
}

/* /proc/stat now. */
static void
read_stat(struct cpu_times *t)
{
	char *text = check_read_file("/proc/stat");

	CHECK(text != NULL && hygiene_parse_stat(text, t) == 0);
	free(text);
}

static int64_t
children_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	    1000000000LL + (int64_t)(ru.ru_utime.tv_usec +
	    ru.ru_stime.tv_usec) * 1000;
}

/*
 * The watch between runs: no sleeping at 100%, the time between calls as
 * the window, our reaped children's CPU time left out, a busy window
 * flagging the run at once when max-wait is 0, and a sleeping sample
 * only when there is no full window yet.
 */
static void
test_watch(void)
{
	struct hygiene_watch w;
	struct hygiene_sample s;
	struct cpu_times a, b;
	struct err e = ERR_INIT;
	pid_t pids[64];
	int busy, stop_after = 0, n;
	int64_t t0, kids;
	double share, raw;

	calls = 0;
	hygiene_watch_init(&w);
	CHECK_INT(hygiene_watch_run(&w, 1.0, 60000, 250, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	CHECK_INT(busy, 0);
	CHECK(s.busy < 0);		/* no window yet, and no sample */
	CHECK_INT(s.window_ms, 0);
	usleep(1000000);
	CHECK_INT(hygiene_watch_run(&w, 1.0, 60000, 250, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	/* The second elapsed between the calls, not a sleep of 250 ms. */
	CHECK(s.window_ms >= 1000);
	CHECK(s.busy >= 0 && s.busy <= 1);
	CHECK_INT(calls, 0);
	/* Within 250 ms of the last window: the same figure stands. */
	CHECK_INT(hygiene_watch_run(&w, 1.0, 60000, 250, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	CHECK(s.window_ms >= 1000);

	/* Children spinning on every CPU and reaped before the window
	 * closes are ours: their share comes off the raw busy share. */
	hygiene_watch_init(&w);
	CHECK_INT(hygiene_watch_run(&w, 1.0, 0, 250, NULL, NULL, &s, &busy,
	    &e), 0);
	read_stat(&a);
	kids = children_cpu_ns();
	t0 = now_ms();
	n = spin_start(pids, 64);
	usleep(600000);
	spin_stop(pids, n);
	CHECK_INT(hygiene_watch_run(&w, 1.0, 0, 250, NULL, NULL, &s, &busy,
	    &e), 0);
	read_stat(&b);
	raw = hygiene_busy(&a, &b);
	share = (double)(children_cpu_ns() - kids) / 1e6 /
	    (double)(now_ms() - t0) / (double)sysconf(_SC_NPROCESSORS_ONLN);
	CHECK(share > 0);
	CHECK(s.busy >= 0 && s.busy <= raw - share + 0.1);

	/* Spinning children not yet reaped are someone else's load: with
	 * max-wait 0 the run is flagged busy at once, without a sample. */
	hygiene_watch_init(&w);
	n = spin_start(pids, 64);
	CHECK_INT(hygiene_watch_run(&w, 0.05, 0, 250, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	CHECK_INT(busy, 0);		/* unknown yet: not flagged */
	usleep(400000);
	CHECK_INT(hygiene_watch_run(&w, 0.05, 0, 250, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	CHECK_INT(busy, 1);
	CHECK(s.busy >= 0.3);
	CHECK_INT(calls, 0);

	/* Below 100% with no window yet, and max-wait above 0: one sample
	 * of the sampling window, by sleeping; busy, so it waits on. */
	hygiene_watch_init(&w);
	stop_after = 1;
	CHECK_INT(hygiene_watch_run(&w, 0.05, 60000, 150, count_calls,
	    &stop_after, &s, &busy, &e), 0);
	CHECK_INT(busy, 1);
	CHECK_INT(calls, 1);
	CHECK(s.window_ms >= 140 && s.window_ms < 5000);
	spin_stop(pids, n);
}

static void
test_machine_real(void)
{
	struct machine m, m2;
	struct err e = ERR_INIT;
	struct utsname u;
	size_t i;
	int hex = 1;

	CHECK_INT(hygiene_machine(NULL, &m, &e), 0);
	uname(&u);
	CHECK(m.cpu_model[0] != '\0');
	CHECK_INT(m.cores, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(m.mem_kb > 0);
	CHECK_INT(m.mem_gib, m.mem_kb / (1024 * 1024));
	CHECK_STR(m.arch, u.machine);
	CHECK_STR(m.kernel, u.release);
	CHECK_STR(m.hostname, u.nodename);
	CHECK(m.os[0] != '\0');
	CHECK_INT(strlen(m.hw_key), 64);
	for (i = 0; i < strlen(m.hw_key); i++)
		hex &= strchr("0123456789abcdef", m.hw_key[i]) != NULL;
	CHECK(hex);
	CHECK_INT(hygiene_machine(NULL, &m2, &e), 0);
	CHECK_STR(m.hw_key, m2.hw_key);
}

static void
test_machine_files(void)
{
	struct machine_sources src = { "cpuinfo", "meminfo", "os-release" };
	struct machine m, m2;
	struct err e = ERR_INIT;
	char text[1024];

	check_write_file("cpuinfo", "processor\t: 0\n"
	    "model name\t:   Intel(R) Xeon(R)   CPU E5-2680   v4 @ 2.40GHz \n"
	    "processor\t: 1\nmodel name\t: ignored second\n");
	check_write_file("meminfo", "MemTotal:       16303000 kB\n"
	    "MemFree:  100 kB\n");
	check_write_file("os-release", "NAME=\"Debian\"\n"
	    "PRETTY_NAME=\"Debian GNU/Linux 12 \\\"bookworm\\\"\"\n");
	CHECK_INT(hygiene_machine(&src, &m, &e), 0);
	CHECK_STR(m.cpu_model, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz");
	CHECK_INT(m.mem_kb, 16303000);
	CHECK_INT(m.mem_gib, 15);
	CHECK_STR(m.os, "Debian GNU/Linux 12 \"bookworm\"");
	snprintf(text, sizeof(text), "cpu=Intel(R) Xeon(R) CPU E5-2680 v4 @ "
	    "2.40GHz\ncores=%d\nmem_gib=15\narch=%s\n", m.cores, m.arch);
	CHECK_STR(hygiene_hw_text(&m, text + 512, 512), text);

	/* A few kB less memory after a kernel update: same identity. */
	check_write_file("meminfo", "MemTotal:       16302100 kB\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_STR(m2.hw_key, m.hw_key);
	/* The OS is recorded, not part of the identity. */
	check_write_file("os-release", "PRETTY_NAME=Plain Name\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_STR(m2.os, "Plain Name");
	CHECK_STR(m2.hw_key, m.hw_key);
	/* Twice the memory, or another CPU: another machine. */
	check_write_file("meminfo", "MemTotal:       32606000 kB\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_INT(m2.mem_gib, 31);
	CHECK(strcmp(m2.hw_key, m.hw_key) != 0);
	check_write_file("meminfo", "MemTotal:       16303000 kB\n");
	check_write_file("cpuinfo", "model name : AMD EPYC 7763\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK(strcmp(m2.hw_key, m.hw_key) != 0);

	/* arm64 without a model name: implementer and part. */
	check_write_file("cpuinfo", "processor\t: 0\nBogoMIPS\t: 48.00\n"
	    "CPU implementer\t: 0x41\nCPU architecture: 8\n"
	    "CPU part\t: 0xd0c\n\nHardware\t: x\nModel\t: Some Board\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_STR(m2.cpu_model, "implementer 0x41 part 0xd0c");
	/* POWER names the CPU in "cpu". */
	check_write_file("cpuinfo", "processor\t: 0\ncpu\t\t: POWER9 (raw)\n");
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_STR(m2.cpu_model, "POWER9 (raw)");

	/* Missing files: unknown where that is honest, an error for
	 * memory, which the identity cannot do without. */
	src.cpuinfo = "no-cpuinfo";
	src.os_release = "no-os-release";
	CHECK_INT(hygiene_machine(&src, &m2, &e), 0);
	CHECK_STR(m2.cpu_model, "unknown");
	CHECK_STR(m2.os, "unknown");
	src.meminfo = "no-meminfo";
	CHECK_INT(hygiene_machine(&src, &m2, &e), -1);
	CHECK_CONTAINS(e.msg, "cannot open 'no-meminfo'");
	check_write_file("meminfo", "MemFree: 1 kB\n");
	src.meminfo = "meminfo";
	CHECK_INT(hygiene_machine(&src, &m2, &e), -1);
	CHECK_CONTAINS(e.msg, "'meminfo' has no MemTotal");
}

int
main(void)
{
	check_tmpdir("hygiene");
	CHECK_CASE(test_parse_stat);
	CHECK_CASE(test_sample_and_wait);
	CHECK_CASE(test_watch);
	CHECK_CASE(test_machine_real);
	CHECK_CASE(test_machine_files);
	return check_done();
}
