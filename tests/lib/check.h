/*
 * check.h: the assertions the unit tests use.  A failed check prints
 * FILE:LINE and what differed, counts, and the test goes on so one run
 * shows every failure; check_done() gives the exit status CTest reads.
 *
 * Each test runs in a fresh temporary directory from check_tmpdir(),
 * removed at exit when every check passed (kept for inspection otherwise).
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond) do { \
	check_count++; \
	if (!(cond)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: check failed: %s\n", \
		    __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_INT(a, b) do { \
	long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
	check_count++; \
	if (check_a_ != check_b_) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", \
		    __FILE__, __LINE__, #a, #b, check_a_, check_b_); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *check_a_ = (a), *check_b_ = (b); \
	check_count++; \
	if (check_a_ == NULL || check_b_ == NULL || \
	    strcmp(check_a_, check_b_) != 0) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", \
		    __FILE__, __LINE__, #a, #b, \
		    check_a_ ? check_a_ : "(null)", \
		    check_b_ ? check_b_ : "(null)"); \
	} \
} while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol) do { \
	double check_a_ = (a), check_b_ = (b), check_t_ = (tol); \
	check_count++; \
	if (!(fabs(check_a_ - check_b_) <= check_t_)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: %s ~ %s: %g vs %g (tolerance %g)\n", \
		    __FILE__, __LINE__, #a, #b, check_a_, check_b_, check_t_); \
	} \
} while (0)

/* s contains sub */
#define CHECK_CONTAINS(s, sub) do { \
	const char *check_s_ = (s), *check_sub_ = (sub); \
	check_count++; \
	if (check_s_ == NULL || strstr(check_s_, check_sub_) == NULL) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
		    __FILE__, __LINE__, check_s_ ? check_s_ : "(null)", \
		    check_sub_); \
	} \
} while (0)

/* A standard normal number from the seeded stream *state (splitmix64 and
 * Box-Muller): the same numbers on every machine. */
double check_normal(uint64_t *state);

/*
 * The programs and the build folder ctest hands a test in its
 * environment (tests/CMakeLists.txt): BISECTCTL, BISECTD and
 * BISECTD_BUILD_DIR into those of ctl, daemon and build that are not
 * NULL.  When one asked for is not set, says which and exits 99.
 */
void check_env(const char **ctl, const char **daemon, const char **build);
/* BISECTD_SOURCE_DIR, the source tree; exits 99 when it is not set. */
const char *check_source_dir(void);

/* Create and chdir into a fresh temporary directory, with the benchmark
 * lock ($BISECTD_BENCH_LOCK) in it; returns its path. */
const char *check_tmpdir(const char *test_name);

/* Write a file (relative to the current directory); aborts on failure. */
void check_write_file(const char *path, const char *content);

/*
 * An [engine "NAME"] section for the fake engine's releases
 * NAME-VERSION.tar.gz found by source (a "dir:..." spec): its JSON
 * output read as llama-bench's, prompts 64 and 256, decode of 16
 * tokens, then the lines of extra (may be ""), appended at buf + *len
 * (room for size); *len grows by what was written.
 */
void check_fake_engine(char *buf, size_t size, size_t *len, const char *name,
    const char *source, const char *extra);

/*
 * The opening of a test's configuration over the demo's weights in
 * build: [bisectd] with database db, cache/ and the whole machine to
 * use, then [weights "demo"]; written at buf (room for size).  Returns
 * its length, as check_fake_engine() counts it.
 */
size_t check_demo_head(char *buf, size_t size, const char *db,
    const char *build);

struct release_list;

/* The release of version in l, a source's listing, or NULL. */
const struct release_info *check_listed(const struct release_list *l,
    const char *version);

/* Read a file into a malloced string; NULL if it cannot be read. */
char *check_read_file(const char *path);
/* The same, with its length in *len (0 when it cannot be read). */
char *check_read_bytes(const char *path, size_t *len);

/* A download's progress as its callback (check_on_progress) saw it. */
struct check_progress {
	uint64_t now, total;
	int calls;
};
void check_on_progress(void *arg, uint64_t now, uint64_t total);

/* Run a shell command line for test set-up; returns its exit status and,
 * if out is not NULL, its stdout and stderr (malloced). */
int check_run(const char *cmdline, char **out);

/* Run `ctl args` through the shell, its stderr in stderr.txt; ctl is the
 * program and any options every call of the test gives it ("bisectctl
 * -c t.conf").  Its exit status, and its stdout (malloced) into *out. */
int check_ctl_run(const char *ctl, const char *args, char **out);

/* Run `ctl args` as check_run() does and check that it exits with
 * status and that its stdout and stderr have each string that follows,
 * up to a NULL; a failure names the command line. */
void check_ctl_says(const char *ctl, const char *args, int status, ...)
    __attribute__((sentinel));

/* Run `ctl args` that queues a job on the daemon ("... as job N") and
 * check that it exits with 0 and names the job; its number, or 0. */
int64_t check_ctl_job(const char *ctl, const char *args);

/* A loopback port nobody listens on right now. */
int check_free_port(void);

/* CLOCK_MONOTONIC in seconds, and a plain sleep, for bounded polling. */
double check_now_s(void);
void check_sleep_ms(int ms);

/* Start `bin -c conf` (a daemon) with its stderr appended to log; its pid. */
pid_t check_start_daemon(const char *bin, const char *conf, const char *log);

/* Wait up to timeout_s for pid to end: its exit status (128 + signal when
 * killed), or -1 after killing it when it did not end in time. */
int check_wait_exit(pid_t pid, double timeout_s);

/* The port a daemon started with "http = 127.0.0.1:0" says it serves on
 * in its log file (waiting 20 s at most), or 0. */
int check_http_port(const char *log);

/* xmllint's answer to an XPath expression on the page in file, its first
 * line (malloced), or NULL when xmllint fails. */
char *check_xpath(const char *file, const char *expr);
/* Check that check_xpath() answers expr on file with want; a failure
 * names expr. */
void check_xpath_is(const char *file, const char *expr, const char *want);

/* GET path from 127.0.0.1:port with curl into file: the HTTP status, or
 * -1 (with curl's words on stderr). */
int check_http_get(int port, const char *path, const char *file);

/* A screenshot as pixels: a binary PPM (P6, maxval 255), as pngtopnm
 * writes it. */
struct check_image {
	int w, h;
	unsigned char *rgb;	/* w * h * 3; malloced */
};

/* Read path into *im: 0, or -1 (im->rgb NULL). */
int check_read_ppm(const char *path, struct check_image *im);

/* Pixels within tol of (r, g, b) on every channel. */
long check_count_colour(const struct check_image *im, int r, int g, int b,
    int tol);

/*
 * The screenshot png, through pngtopnm as shot.ppm, into *im, its ink
 * (the pixels that are not white) checked to be well above a blank
 * page's none and well below a page painted over: 0 with *ink and
 * *total (w * h) set, or -1 after a failed check.
 */
int check_screenshot_read(const char *png, struct check_image *im,
    long *ink, long *total);

/*
 * Whether the program tool is on the PATH: 1, or 0 after a failed check
 * that names the Debian package it comes in (scripts/deps.sh installs
 * the packages the tests need), so a missing program reads as what to
 * install, not as a test that broke.
 */
int check_tool(const char *tool, const char *package);

/* The lines of s, its newlines; 0 for NULL. */
int check_count_lines(const char *s);

/* Print "N passed, M failed" and return the exit status for main(). */
/*
 * Run the case fn, called name, unless $CHECK_CASE holds a comma-
 * separated list of cases without it; a case whose checks failed is
 * named with the command that reruns it alone.  CHECK_CASE(test_x)
 * is check_case("test_x", test_x).  Code of main() outside the cases
 * always runs.
 */
void check_case(const char *name, void (*fn)(void));
#define CHECK_CASE(fn) check_case(#fn, fn)

/* "N passed, N failed" and the exit status; with $CHECK_CASE set and no
 * case of that name, a failure. */
int check_done(void);

/* Write size bytes of a fixed pattern to path, as weights of that size
 * (checked: a failure counts). */
void check_write_pattern(const char *path, size_t size);

#endif
