/*
 * hygiene.h: is the machine quiet enough to measure on, and which machine
 * is it.  The CPU busy share comes from /proc/stat: over the time since
 * the previous run started, this process's own CPU time and its runs'
 * taken out (struct hygiene_watch), or over a short window of sleep when
 * there is no such time yet or the machine was busy; the machine's
 * identity decides which runs may be compared (the README,
 * "Comparability").
 */
#ifndef BISECTD_HYGIENE_H
#define BISECTD_HYGIENE_H

#include <stddef.h>
#include <stdint.h>

#include "bisectd/device/device.h"
#include "common/err.h"
#include "fetch/sha256.h"


#define HYGIENE_WINDOW_MS 250

struct hygiene_sample {
	double busy;		/* 0..1: 1 - (idle + iowait) / total */
	double load1;		/* 1-minute load average, -1 if unknown */
	int64_t window_ms;	/* how long the sample took */
};

/* The counters of /proc/stat's aggregate "cpu" line, in USER_HZ ticks. */
struct cpu_times {
	uint64_t idle;		/* idle + iowait */
	uint64_t total;		/* user .. steal (guest is within user) */
};

/* Parse the aggregate "cpu " line of a /proc/stat text.  0 or -1. */
int hygiene_parse_stat(const char *text, struct cpu_times *t);

/* The busy share between two readings; 0 when no tick passed. */
double hygiene_busy(const struct cpu_times *before,
    const struct cpu_times *after);

/*
 * The busy share between two readings of everything but self_ns of CPU
 * time (ours and our children's), with ticks_per_s USER_HZ ticks a
 * second: from 0 to 1, 0 when no tick passed.
 */
double hygiene_busy_others(const struct cpu_times *before,
    const struct cpu_times *after, int64_t self_ns, long ticks_per_s);

/*
 * Sample the CPU busy share over window_ms (0: HYGIENE_WINDOW_MS) and the
 * load average.  Returns 0 or -1 with e set.
 */
int hygiene_sample(int64_t window_ms, struct hygiene_sample *s,
    struct err *e);

/*
 * Called while waiting for a quiet machine, after each sample that was
 * too busy, with how long the wait has lasted.  Return nonzero to stop
 * waiting (the run then goes ahead, flagged busy).
 */
typedef int (*hygiene_wait_fn)(void *arg, const struct hygiene_sample *s,
    int64_t waited_ms);

/*
 * Sample until the busy share is below max_busy (a fraction; 1 or more
 * never waits) or max_wait_ms has passed.  *last gets the last sample and
 * *busy 1 when the machine never became quiet (or fn asked to stop), 0
 * otherwise.  Returns 0, or -1 with e set when /proc/stat cannot be read.
 */
int hygiene_wait_quiet(double max_busy, int64_t max_wait_ms,
    int64_t window_ms, hygiene_wait_fn fn, void *arg,
    struct hygiene_sample *last, int *busy, struct err *e);

/*
 * The busy share between runs, for free: the window is the time from one
 * run's start to the next's, which holds the run itself and its reaping
 * and storing, and the CPU time this process and its reaped children
 * spent in it is taken out.  A window shorter than the sampling window
 * stays open across runs (a fast engine gets a fresh figure every few
 * runs), and the last full one stands meanwhile.
 */
struct hygiene_watch {
	struct cpu_times at;	/* /proc/stat when the window opened */
	int64_t self_ns;	/* our CPU time and our children's then */
	int64_t opened_ms;	/* CLOCK_MONOTONIC; 0: no window open */
	struct hygiene_sample last;	/* the last full window; busy -1:
					 * none yet */
};

void hygiene_watch_init(struct hygiene_watch *w);

/*
 * Before a run: the busy share into *last (busy -1 when unknown) and
 * *busy 1 when the run goes ahead on a busy machine.  With max_busy 1 or
 * more nothing waits.  Otherwise, when the last full window was busy, or
 * there is none yet, samples by sleeping as hygiene_wait_quiet() does,
 * for at most max_wait_ms; with max_wait_ms 0 it never sleeps: a busy
 * window flags the run and an unknown share lets it go.  Returns 0, or
 * -1 with e set when /proc/stat cannot be read.
 */
int hygiene_watch_run(struct hygiene_watch *w, double max_busy,
    int64_t max_wait_ms, int64_t window_ms, hygiene_wait_fn fn, void *arg,
    struct hygiene_sample *last, int *busy, struct err *e);

/*
 * The machine.  cpu_model, cores, mem_gib and arch are its hardware
 * identity, hashed into hw_key, with every field of each GPU the engine
 * can see (struct device_identity: a driver update or another power
 * limit is another machine); kernel, os and hostname are recorded with
 * each run and only flagged when they change.
 */
struct machine {
	char cpu_model[256];	/* "model name" or the architecture's
				 * equivalent; "unknown" if none */
	int cores;		/* online CPUs */
	uint64_t mem_kb;	/* MemTotal, as read (recorded) */
	int mem_gib;		/* MemTotal rounded down to GiB (identity) */
	char arch[80];		/* uname machine */
	char kernel[256];	/* uname release */
	char os[256];		/* os-release PRETTY_NAME, or "unknown" */
	char hostname[256];
	char hw_key[SHA256_HEX_LEN + 1];	/* sha256 of the identity */
	size_t ngpus;		/* the GPUs the engine can see */
	struct device_identity gpu[DEVICE_MAX];
	char gpu_note[ERR_MSG_MAX];	/* no GPU state: why; "" when
					 * there is */
};

/* Where machine facts are read from; NULL fields mean the real files. */
struct machine_sources {
	const char *cpuinfo;	/* /proc/cpuinfo */
	const char *meminfo;	/* /proc/meminfo */
	const char *os_release;	/* /etc/os-release, then
				 * /usr/lib/os-release */
};

/* Describe this machine.  src may be NULL.  Returns 0 or -1 with e set
 * (only when MemTotal or uname cannot be read). */
int hygiene_machine(const struct machine_sources *src, struct machine *m,
    struct err *e);

/*
 * The CPU's feature flags from a cpuinfo file (NULL: /proc/cpuinfo):
 * x86's "flags" or ARM's "Features" line of the first CPU, as written,
 * into buf (truncated to len).  0, or 1 with buf empty when there is
 * none.
 */
int hygiene_cpu_flags(const char *cpuinfo, char *buf, size_t len);

/*
 * The hardware identity as one canonical text, "cpu=...\ncores=...\n
 * mem_gib=...\narch=...\n", then a "gpuN=..." line per GPU (none on a
 * machine without, whose key is therefore what it was before GPUs were
 * known), into buf; hw_key is its sha256.  Returns buf.
 */
const char *hygiene_hw_text(const struct machine *m, char *buf,
    size_t len);

/*
 * The hygiene advice for the GPUs of m, one line each, "" when there is
 * none: clocks that are not locked (they follow temperature and power,
 * so the same release measures at other speeds), and persistence mode
 * off (the driver state is torn down between runs and every run starts
 * cold).  Returns buf.
 */
const char *hygiene_gpu_advice(const struct machine *m, char *buf,
    size_t len);

#endif
