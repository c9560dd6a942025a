/*
 * fake-engine_int.h: what the parts of the fake engine share (see
 * fake-engine.c for what it does): the release's parameters as read
 * from release.conf, the command line, and the functions of each part.
 *
 *   fake-engine.c          the command line, start-up, failure modes
 *   fake-engine_release.c  release.conf, the switches
 *   fake-engine_cost.c     the work: burning CPU time, the noise, the
 *                          content's speed-up
 *   fake-engine_bench.c    llama-bench's JSON, --generate's text
 *   fake-engine_serve.c    the completions server
 */
#ifndef TESTS_FAKE_ENGINE_INT_H
#define TESTS_FAKE_ENGINE_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define MAX_TESTS 16
#define CONTENT_MAX (1024 * 1024)
#define MAX_COMPONENTS 8
#define MAX_SKIPS 8

enum fail_mode {
	FAIL_NONE, FAIL_CRASH, FAIL_HANG, FAIL_HANG_IGNORE_TERM,
	FAIL_SETSID_LINGER, FAIL_GARBAGE, FAIL_EXIT
};

/* What an empty first token is (empty_first_token). */
enum empty_kind { EMPTY_NONE, EMPTY_EOS, EMPTY_UTF8 };

/* A part of the work a switch can turn off. */
struct component {
	char name[32];
	double prefill_us;	/* per prompt token */
	double fixed_us;
};

struct release {
	char version[64];
	char build_commit[16];
	long build_number;
	double fixed_us;
	double prefill_us;	/* per prompt token */
	double prefill_us2;	/* per prompt token squared */
	double prefill_us_mib;	/* per prompt token and MiB of weights */
	char mib_class[64];	/* "": on every machine class */
	double decode_us;	/* per generated token */
	double noise_cv;
	double run_cv;
	double outlier_p, outlier_x;	/* a slow process: chance, factor */
	double content_speedup;
	double load_us;
	double alloc_mb;
	int clock_cpu;		/* samples in thread CPU time, not wall */
	enum fail_mode fail;
	long empty_every;	/* empty_first_token: every Nth, 0: never */
	enum empty_kind empty_kind;
	char path[PATH_MAX];	/* the release file */
	long generate_seed;	/* --generate: what the text depends on */
	int generate_jitter;	/* --generate: differ from run to run */
	struct component components[MAX_COMPONENTS];
	size_t ncomponents;
	int switches_ignored;
};

struct opts {
	const char *model;
	int prompts[MAX_TESTS];
	size_t nprompts;
	int gens[MAX_TESTS];
	size_t ngens;
	int threads;
	int reps;
	int jsonl;
	int output;		/* -o was given */
	const char *content;
	const char *release_path;
	int server;
	int generate;
	int port;
	const char *port_file;
	const char *skips[MAX_SKIPS];	/* --skip NAME */
	size_t nskips;
	const char *wait_for;	/* --wait-for FILE */
};

/* fake-engine_release.c */
/* The release file, explicit_path or the one beside the binary. */
void release_find(struct release *rel, const char *explicit_path);
/* Take the work of switched-off components away, unless this build
 * ignores its switches. */
void apply_switches(struct release *rel, const struct opts *o);

/* fake-engine_cost.c */
extern uint64_t rng_state;	/* seeded by rng_seed() */
/* Seed the noise from this process's start, mixed so that processes
 * started a few nanoseconds apart draw unrelated noise. */
void rng_seed(void);
int64_t clock_ns(clockid_t id);
/* Spend us microseconds of this thread's CPU time, or less if stopping. */
void burn(double us);
/* 1 + cv * N(0,1), kept positive. */
double noise_factor(double cv);
/* This process's offset (run_cv), drawn on first use. */
double run_factor(const struct release *rel);
/* The decode divisor for text: content_speedup if it reads like prose. */
double speedup_for(const struct release *rel, const void *text, size_t n);
/* The same for the file at path; 1 for none. */
double content_speedup_of(const struct release *rel, const char *path);

/* fake-engine_bench.c */
int bench(const struct release *rel, const struct opts *o,
    long long model_size);
int generate(const struct release *rel, const struct opts *o);

/* fake-engine_serve.c */
int serve(const struct release *rel, const struct opts *o);

#endif
