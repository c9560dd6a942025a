/*
 * fake-engine.c: a stand-in for an inference engine, packed into release
 * archives for the tests and the demo.  It takes llama-bench's options and
 * prints llama-bench's JSON, or serves OpenAI-style streaming completions,
 * spending real CPU time per token as its release.conf says.
 *
 * release.conf ("key = value" lines, '#' comments) sits at the archive's
 * root, beside bin/fake-engine; --release FILE names another.  Keys:
 *   version               reported by --version
 *   build_commit          default: derived from version
 *   build_number          default 0
 *   fixed_us              work per repetition or request, whatever its size
 *   prefill_us_per_token  work per prompt token
 *   prefill_us_per_token_sq  work per prompt token squared: a cost
 *                         that grows with the prompt, as attention's
 *   decode_us_per_token   work per generated token
 *   noise_cv              each repetition's work times 1 + cv * N(0,1)
 *   run_cv                every repetition of one process times the same
 *                         1 + cv * N(0,1), drawn once per process: the
 *                         offset a process start gives a real engine
 *   outlier_p, outlier_x  with probability outlier_p a process is
 *                         outlier_x times slower for its whole run (a
 *                         burst: the host busy, a clock throttled)
 *   content_speedup       decode work divided by this for predictable
 *                         content (prose), a stand-in for speculative
 *                         decoding: --content FILE in bench mode, the
 *                         prompt in server mode
 *   load_us               work once at start, outside every sample
 *   alloc_mb              MiB allocated and touched at start, as
 *                         FAKE_ENGINE_ALLOC_MB: a release's resident set
 *   clock                 wall (default, like llama-bench): samples_ns
 *                         are the wall time each sample took; or cpu:
 *                         the CPU time its work was given, burnt for
 *                         real, so that neither a loaded host nor a
 *                         hypervisor's stolen time reaches the figures
 *   fail                  none, crash, hang, hang-ignore-term,
 *                         setsid-linger, garbage, exit
 *   empty_first_token     N [eos | utf8]: every Nth streamed completion
 *                         (the Nth, the 2Nth ...; 1: all) of this
 *                         release's servers, counted across processes in
 *                         FILE.requests beside the release file, has a
 *                         first token that streams no text.  eos (the
 *                         default): end-of-text, an empty "stop" event
 *                         and [DONE], unless the request holds it back
 *                         (ignore_eos true or min_tokens >= 1).  utf8:
 *                         half a UTF-8 character, held back until the
 *                         next token completes it: with max_tokens 1 an
 *                         empty "length" event and [DONE], whatever the
 *                         request says.  Each says so on stderr.
 *   generate_seed         --generate: the text is a function of the
 *                         prompt and this number (default 0), so a
 *                         release that changes it "computes" differently
 *   generate_jitter       --generate: 1 makes the text differ from run to
 *                         run (a nondeterministic release)
 *   component             NAME PREFILL_US FIXED_US (repeatable): a part
 *                         of the work above (per prompt token, fixed)
 *                         that a switch turns off: --skip NAME or the
 *                         environment variable FAKE_ENGINE_SKIP_NAME
 *                         (NAME in upper case) set to anything but 0
 *   switches              honored (default) or ignored: a build whose
 *                         switches are not wired up, which accepts them
 *                         and does all the work anyway
 *
 * --generate reads a prompt from stdin (or --content FILE) and prints
 * the text it "generates" from it, greedy and seeded: 24 words, plain,
 * or {"content": TEXT, "tokens": 24} with -o json.
 *
 * Environment: FAKE_ENGINE_PIDFILE (fail = setsid-linger, below);
 * FAKE_ENGINE_REQUEST_LOG=FILE: the body of each completions request is
 * appended to FILE, one line of JSON each, for tests of what was asked;
 * FAKE_ENGINE_PRINT_ENV set: the whole environment goes to stderr first,
 * the way a careless engine's diagnostics would print it;
 * FAKE_ENGINE_ALLOC_MB=N: N MiB are allocated and touched before the
 * work, a stand-in for loading weights into memory.
 *
 * Work is arithmetic until this thread's CPU clock has advanced by the
 * cost, so CPU time is exact on a loaded machine while wall time grows.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fake-release-path.h"

#define MAX_TESTS 16
#define CONF_MAX (64 * 1024)
#define CONTENT_MAX (1024 * 1024)
#define HEADER_MAX (16 * 1024)
#define BODY_MAX (1024 * 1024)
#define LINGER_SECONDS 1000
#define MAX_COMPONENTS 8
#define MAX_SKIPS 8

extern char **environ;
static char *touch_kept;	/* touch_memory()'s block, held to exit */

/*
 * Order-0 entropy, in bits per byte, below which content counts as
 * predictable: English prose is about 4.2, random letters and digits
 * (base64) about 6.
 */
#define PROSE_ENTROPY_MAX 5.0

enum fail_mode {
	FAIL_NONE, FAIL_CRASH, FAIL_HANG, FAIL_HANG_IGNORE_TERM,
	FAIL_SETSID_LINGER, FAIL_GARBAGE, FAIL_EXIT
};

/* What an empty first token is (empty_first_token). */
enum empty_kind { EMPTY_NONE, EMPTY_EOS, EMPTY_UTF8 };

static const char *const fail_names[] = {
	"none", "crash", "hang", "hang-ignore-term", "setsid-linger",
	"garbage", "exit"
};

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

static volatile sig_atomic_t stopping;
static uint64_t rng_state;
static volatile uint64_t work_sink;

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("fake-engine: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spend us microseconds of this thread's CPU time, or less if stopping. */
static void
burn(double us)
{
	int64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (int64_t)(us * 1e3);
	uint64_t x = work_sink | 1;
	int i;

	while (!stopping && clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
		for (i = 0; i < 5000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	work_sink = x;
}

/* xorshift64*: a few noisy factors need no more. */
static double
uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0;
}

/* 1 + cv * N(0,1) by Box-Muller, kept positive. */
static double
noise_factor(double cv)
{
	double u1, u2, f;

	if (cv <= 0)
		return 1;
	do
		u1 = uniform01();
	while (u1 <= 0);
	u2 = uniform01();
	f = 1 + cv * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	return f < 0.1 ? 0.1 : f;
}

/* This process's offset (run_cv), drawn on first use. */
static double
run_factor(const struct release *rel)
{
	static double f;

	if (f == 0) {
		f = noise_factor(rel->run_cv);
		if (rel->outlier_p > 0 && uniform01() < rel->outlier_p)
			f *= rel->outlier_x;
	}
	return f;
}

/* ---- release.conf ---- */

static void
release_defaults(struct release *rel)
{
	memset(rel, 0, sizeof(*rel));
	snprintf(rel->version, sizeof(rel->version), "0.0.0");
	rel->content_speedup = 1;
}

static double
conf_number(const char *path, int line, const char *key, const char *val)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(val, &end);
	if (end == val || *end != '\0' || errno != 0 || !isfinite(d) || d < 0)
		die("%s:%d: %s: expected a number >= 0, not '%s'", path, line,
		    key, val);
	return d;
}

static void
conf_set(struct release *rel, const char *path, int line, const char *key,
    const char *val)
{
	size_t i;

	if (strcmp(key, "version") == 0) {
		if (strlen(val) >= sizeof(rel->version))
			die("%s:%d: version too long", path, line);
		snprintf(rel->version, sizeof(rel->version), "%s", val);
	} else if (strcmp(key, "build_commit") == 0) {
		if (strlen(val) >= sizeof(rel->build_commit))
			die("%s:%d: build_commit too long", path, line);
		snprintf(rel->build_commit, sizeof(rel->build_commit), "%s",
		    val);
	} else if (strcmp(key, "build_number") == 0) {
		rel->build_number = (long)conf_number(path, line, key, val);
	} else if (strcmp(key, "fixed_us") == 0) {
		rel->fixed_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "prefill_us_per_token") == 0) {
		rel->prefill_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "prefill_us_per_token_sq") == 0) {
		rel->prefill_us2 = conf_number(path, line, key, val);
	} else if (strcmp(key, "decode_us_per_token") == 0) {
		rel->decode_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "noise_cv") == 0) {
		rel->noise_cv = conf_number(path, line, key, val);
	} else if (strcmp(key, "run_cv") == 0) {
		rel->run_cv = conf_number(path, line, key, val);
	} else if (strcmp(key, "outlier_p") == 0) {
		rel->outlier_p = conf_number(path, line, key, val);
	} else if (strcmp(key, "outlier_x") == 0) {
		rel->outlier_x = conf_number(path, line, key, val);
	} else if (strcmp(key, "content_speedup") == 0) {
		rel->content_speedup = conf_number(path, line, key, val);
		if (rel->content_speedup < 1)
			die("%s:%d: content_speedup must be at least 1", path,
			    line);
	} else if (strcmp(key, "alloc_mb") == 0) {
		rel->alloc_mb = conf_number(path, line, key, val);
	} else if (strcmp(key, "load_us") == 0) {
		rel->load_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "clock") == 0) {
		if (strcmp(val, "cpu") != 0 && strcmp(val, "wall") != 0)
			die("%s:%d: clock: expected wall or cpu", path, line);
		rel->clock_cpu = strcmp(val, "cpu") == 0;
	} else if (strcmp(key, "generate_seed") == 0) {
		rel->generate_seed = (long)conf_number(path, line, key, val);
	} else if (strcmp(key, "generate_jitter") == 0) {
		rel->generate_jitter = conf_number(path, line, key, val) != 0;
	} else if (strcmp(key, "fail") == 0) {
		for (i = 0; i < sizeof(fail_names) / sizeof(fail_names[0]); i++)
			if (strcmp(val, fail_names[i]) == 0)
				break;
		if (i == sizeof(fail_names) / sizeof(fail_names[0]))
			die("%s:%d: fail: unknown mode '%s'", path, line, val);
		rel->fail = (enum fail_mode)i;
	} else if (strcmp(key, "empty_first_token") == 0) {
		char kind[8] = "eos", extra;
		int n = sscanf(val, "%ld %7s %c", &rel->empty_every, kind,
		    &extra);

		if (n < 1 || n > 2 || rel->empty_every < 1 ||
		    (strcmp(kind, "eos") != 0 && strcmp(kind, "utf8") != 0))
			die("%s:%d: empty_first_token: expected N [eos|utf8] "
			    "with N >= 1, not '%s'", path, line, val);
		rel->empty_kind = strcmp(kind, "utf8") == 0 ? EMPTY_UTF8 :
		    EMPTY_EOS;
	} else if (strcmp(key, "component") == 0) {
		struct component *c = &rel->components[rel->ncomponents];
		char extra;

		if (rel->ncomponents == MAX_COMPONENTS)
			die("%s:%d: more than %d components", path, line,
			    MAX_COMPONENTS);
		if (sscanf(val, "%31s %lf %lf %c", c->name, &c->prefill_us,
		    &c->fixed_us, &extra) != 3 || c->prefill_us < 0 ||
		    c->fixed_us < 0)
			die("%s:%d: component: expected NAME PREFILL_US "
			    "FIXED_US, not '%s'", path, line, val);
		rel->ncomponents++;
	} else if (strcmp(key, "switches") == 0) {
		if (strcmp(val, "honored") != 0 && strcmp(val, "ignored") != 0)
			die("%s:%d: switches: expected honored or ignored", path,
			    line);
		rel->switches_ignored = strcmp(val, "ignored") == 0;
	} else {
		die("%s:%d: unknown key '%s'", path, line, key);
	}
}

/* A component is switched off by --skip NAME or FAKE_ENGINE_SKIP_NAME. */
static int
skipped(const struct opts *o, const char *name)
{
	char var[64];
	const char *v;
	size_t i;

	for (i = 0; i < o->nskips; i++)
		if (strcmp(o->skips[i], name) == 0)
			return 1;
	snprintf(var, sizeof(var), "FAKE_ENGINE_SKIP_%s", name);
	for (i = sizeof("FAKE_ENGINE_SKIP_") - 1; var[i]; i++)
		var[i] = var[i] == '-' ? '_' :
		    (char)toupper((unsigned char)var[i]);
	v = getenv(var);
	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Take the work of switched-off components away, unless this build
 * ignores its switches. */
static void
apply_switches(struct release *rel, const struct opts *o)
{
	for (size_t i = 0; i < rel->ncomponents && !rel->switches_ignored;
	    i++) {
		const struct component *c = &rel->components[i];

		if (!skipped(o, c->name))
			continue;
		rel->prefill_us = fmax(0, rel->prefill_us - c->prefill_us);
		rel->fixed_us = fmax(0, rel->fixed_us - c->fixed_us);
	}
}

static char *
trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && strchr(" \t\r\n", end[-1]) != NULL)
		*--end = '\0';
	return s;
}

/* A short stable hex id for a version, standing in for a git hash. */
static void
derive_commit(struct release *rel)
{
	uint32_t h = 2166136261u;
	const char *p;

	for (p = rel->version; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(rel->build_commit, sizeof(rel->build_commit), "%08x",
	    (unsigned)h);
}

static void
release_load(struct release *rel, const char *path)
{
	char line[1024], *key, *val, *eq;
	FILE *f;
	int lineno = 0;
	long size = 0;

	release_defaults(rel);
	if (strlen(path) >= sizeof(rel->path))
		die("release file name too long: '%s'", path);
	snprintf(rel->path, sizeof(rel->path), "%s", path);
	if ((f = fopen(path, "r")) == NULL)
		die("cannot read release parameters '%s': %s", path,
		    strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		size += (long)strlen(line);
		if (size > CONF_MAX)
			die("%s: larger than %d bytes", path, CONF_MAX);
		if ((eq = strchr(line, '#')) != NULL)
			*eq = '\0';
		key = trim(line);
		if (*key == '\0')
			continue;
		if ((eq = strchr(key, '=')) == NULL)
			die("%s:%d: expected 'key = value'", path, lineno);
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		conf_set(rel, path, lineno, key, val);
	}
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(errno));
	fclose(f);
	if (rel->build_commit[0] == '\0')
		derive_commit(rel);
}

/* release.conf at the root of the release: <dir of the binary>/../ */
static void
release_find(struct release *rel, const char *explicit_path)
{
	char path[PATH_MAX + 32];

	if (explicit_path != NULL) {
		release_load(rel, explicit_path);
		return;
	}
	if (fake_release_path(path, sizeof(path)) < 0)
		die("cannot find release.conf: %s", strerror(errno));
	release_load(rel, path);
}

/* ---- content ---- */

static double
entropy_bits(const unsigned char *p, size_t n)
{
	size_t count[256] = { 0 }, i;
	double h = 0, q;

	for (i = 0; i < n; i++)
		count[p[i]]++;
	for (i = 0; i < 256; i++) {
		if (count[i] == 0)
			continue;
		q = (double)count[i] / (double)n;
		h -= q * log2(q);
	}
	return h;
}

/* The decode divisor for text: content_speedup if it reads like prose. */
static double
speedup_for(const struct release *rel, const void *text, size_t n)
{
	if (n == 0 || entropy_bits(text, n) >= PROSE_ENTROPY_MAX)
		return 1;
	return rel->content_speedup;
}

static double
content_speedup_of(const struct release *rel, const char *path)
{
	unsigned char *data;
	size_t n;
	double s;
	FILE *f;

	if (path == NULL)
		return 1;
	if ((f = fopen(path, "rb")) == NULL)
		die("cannot open content '%s': %s", path, strerror(errno));
	if ((data = malloc(CONTENT_MAX)) == NULL)
		die("out of memory");
	n = fread(data, 1, CONTENT_MAX, f);
	if (ferror(f))
		die("cannot read content '%s': %s", path, strerror(errno));
	fclose(f);
	s = speedup_for(rel, data, n);
	free(data);
	return s;
}

/* ---- the weights ---- */

static long long
check_weights(const char *path)
{
	unsigned char head[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (path == NULL)
		die("no model: -m FILE is required");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0)
		die("error: failed to load model '%s': %s", path,
		    strerror(errno));
	if ((n = read(fd, head, sizeof(head))) < 0)
		die("error: failed to load model '%s': %s", path,
		    strerror(errno));
	close(fd);
	if (n == 0)
		die("error: failed to load model '%s': empty file", path);
	return (long long)st.st_size;
}

/* ---- failure modes ---- */

static void
sleep_seconds(int seconds)
{
	struct timespec left = { seconds, 0 };

	while (nanosleep(&left, &left) < 0 && errno == EINTR)
		;
}

/*
 * A grandchild of the caller that leaves the process group with setsid()
 * and stays, the way a careless engine's helper daemon does.  Its pid
 * goes to $FAKE_ENGINE_PIDFILE once it is a session leader.
 */
static void
linger(void)
{
	const char *pidfile = getenv("FAKE_ENGINE_PIDFILE");
	char tmp[PATH_MAX], text[32];
	int fds[2], fd;
	pid_t pid;
	char c;

	if (pipe(fds) < 0)
		die("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		setsid();
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		close(fds[1]);
		sleep_seconds(LINGER_SECONDS);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		die("lingering child did not start");
	close(fds[0]);
	if (pidfile == NULL)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", pidfile);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0)
		die("cannot write '%s': %s", tmp, strerror(errno));
	snprintf(text, sizeof(text), "%ld\n", (long)pid);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    close(fd) < 0 || rename(tmp, pidfile) < 0)
		die("cannot write '%s': %s", pidfile, strerror(errno));
}

/* Fail the way the release says before any work; returns for
 * setsid-linger and garbage, which fail later or not at all. */
static void
fail_early(const struct release *rel)
{
	switch (rel->fail) {
	case FAIL_CRASH:
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		die("still alive after SIGSEGV");
	case FAIL_HANG_IGNORE_TERM:
		signal(SIGTERM, SIG_IGN);
		/* FALLTHROUGH */
	case FAIL_HANG:
		for (;;)
			pause();
	case FAIL_EXIT:
		fprintf(stderr, "fake-engine: error: release %s fails on "
		    "purpose (fail = exit)\n", rel->version);
		exit(3);
	case FAIL_SETSID_LINGER:
		linger();
		break;
	default:
		break;
	}
}

/* ---- bench mode ---- */

static void
iso_time(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *
bench_one(const struct release *rel, const struct opts *o,
    long long model_size, int n_prompt, int n_gen, double speedup)
{
	double cost_us, sum = 0, sumsq = 0, ts_sum = 0, ts_sumsq = 0;
	double mean, sd, ts, ts_mean, ts_sd;
	json_t *rec, *samples_ns, *samples_ts;
	char when[32];
	int64_t t0, ns;
	int r, tokens = n_prompt + n_gen;

	cost_us = rel->fixed_us + n_prompt * rel->prefill_us +
	    (double)n_prompt * n_prompt * rel->prefill_us2 +
	    n_gen * rel->decode_us / speedup;
	samples_ns = json_array();
	samples_ts = json_array();
	iso_time(when, sizeof(when));
	for (r = 0; r < o->reps; r++) {
		double us = cost_us * run_factor(rel) *
		    noise_factor(rel->noise_cv);

		t0 = clock_ns(CLOCK_MONOTONIC);
		burn(us);
		/* The CPU clock runs on while a hypervisor steals the CPU:
		 * a steal in burn()'s last check would add milliseconds of
		 * nobody's work to the sample. */
		ns = rel->clock_cpu ? (int64_t)(us * 1e3) :
		    clock_ns(CLOCK_MONOTONIC) - t0;
		if (ns < 1)
			ns = 1;
		ts = tokens * 1e9 / (double)ns;
		sum += (double)ns;
		sumsq += (double)ns * (double)ns;
		ts_sum += ts;
		ts_sumsq += ts * ts;
		json_array_append_new(samples_ns, json_integer(ns));
		json_array_append_new(samples_ts, json_real(ts));
	}
	mean = sum / o->reps;
	ts_mean = ts_sum / o->reps;
	sd = o->reps > 1 ? sqrt(fmax(0, (sumsq - sum * mean) /
	    (o->reps - 1))) : 0;
	ts_sd = o->reps > 1 ? sqrt(fmax(0, (ts_sumsq - ts_sum * ts_mean) /
	    (o->reps - 1))) : 0;

	rec = json_object();
	json_object_set_new(rec, "build_commit",
	    json_string(rel->build_commit));
	json_object_set_new(rec, "build_number",
	    json_integer(rel->build_number));
	json_object_set_new(rec, "cpu_info", json_string("fake CPU"));
	json_object_set_new(rec, "gpu_info", json_string(""));
	json_object_set_new(rec, "backend", json_string("CPU"));
	json_object_set_new(rec, "model_filename", json_string(o->model));
	json_object_set_new(rec, "model_type", json_string("fake 1B Q4_0"));
	json_object_set_new(rec, "model_size", json_integer(model_size));
	json_object_set_new(rec, "n_batch", json_integer(2048));
	json_object_set_new(rec, "n_ubatch", json_integer(512));
	json_object_set_new(rec, "n_threads", json_integer(o->threads));
	json_object_set_new(rec, "n_prompt", json_integer(n_prompt));
	json_object_set_new(rec, "n_gen", json_integer(n_gen));
	json_object_set_new(rec, "n_depth", json_integer(0));
	json_object_set_new(rec, "test_time", json_string(when));
	json_object_set_new(rec, "avg_ns", json_integer(llround(mean)));
	json_object_set_new(rec, "stddev_ns", json_integer(llround(sd)));
	json_object_set_new(rec, "avg_ts", json_real(ts_mean));
	json_object_set_new(rec, "stddev_ts", json_real(ts_sd));
	json_object_set_new(rec, "samples_ns", samples_ns);
	json_object_set_new(rec, "samples_ts", samples_ts);
	return rec;
}

static void
emit(json_t *rec, int jsonl, json_t *all)
{
	if (jsonl) {
		json_dumpf(rec, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
		putchar('\n');
		fflush(stdout);
		json_decref(rec);
	} else {
		json_array_append_new(all, rec);
	}
}

static int
bench(const struct release *rel, const struct opts *o, long long model_size)
{
	double speedup = content_speedup_of(rel, o->content);
	json_t *all = json_array();
	size_t i;

	if (rel->fail == FAIL_GARBAGE) {
		printf("llama_model_load: loaded meta data\n"
		    "pp%d \x01\x02 {\"avg_ns\": [not json\n",
		    o->nprompts ? o->prompts[0] : 0);
		json_decref(all);
		return 0;
	}
	for (i = 0; i < o->nprompts; i++)
		if (o->prompts[i] > 0)
			emit(bench_one(rel, o, model_size, o->prompts[i], 0, 1),
			    o->jsonl, all);
	for (i = 0; i < o->ngens; i++)
		if (o->gens[i] > 0)
			emit(bench_one(rel, o, model_size, 0, o->gens[i],
			    speedup), o->jsonl, all);
	if (!o->jsonl) {
		json_dumpf(all, stdout, JSON_INDENT(2) |
		    JSON_REAL_PRECISION(10));
		putchar('\n');
	}
	json_decref(all);
	if (fflush(stdout) == EOF)
		die("cannot write output: %s", strerror(errno));
	return 0;
}

/* ---- server mode ---- */

static int
send_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len > 0) {
		n = send(fd, c, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
send_response(int fd, int status, const char *reason, const char *type,
    const char *body)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n", status,
	    reason, type, strlen(body));
	if (send_all(fd, head, strlen(head)) < 0)
		return -1;
	return send_all(fd, body, strlen(body));
}

static int
send_chunk(int fd, const char *data)
{
	char size[32];

	snprintf(size, sizeof(size), "%zx\r\n", strlen(data));
	if (send_all(fd, size, strlen(size)) < 0 ||
	    send_all(fd, data, strlen(data)) < 0)
		return -1;
	return send_all(fd, "\r\n", 2);
}

static int
count_words(const char *s)
{
	int n = 0, in_word = 0;

	for (; *s; s++) {
		if (strchr(" \t\r\n", *s) != NULL)
			in_word = 0;
		else if (!in_word) {
			in_word = 1;
			n++;
		}
	}
	return n;
}

/* Append a request's body to $FAKE_ENGINE_REQUEST_LOG, one line. */
static void
log_request(json_t *req)
{
	const char *path = getenv("FAKE_ENGINE_REQUEST_LOG");
	char *line;
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	if ((line = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS)) == NULL ||
	    (f = fopen(path, "a")) == NULL)
		die("cannot log the request to '%s': %s", path,
		    strerror(errno));
	fprintf(f, "%s\n", line);
	if (fclose(f) == EOF)
		die("cannot write '%s': %s", path, strerror(errno));
	free(line);
}

/*
 * The number of this completions request among all those the release's
 * servers have answered, from 1.  Each run starts a server of its own,
 * so the count is kept in a file, under a lock for servers side by side.
 */
static long
request_number(const struct release *rel)
{
	char path[PATH_MAX + 16], text[32];
	ssize_t n;
	long count;
	int fd;

	snprintf(path, sizeof(path), "%s.requests", rel->path);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
	    flock(fd, LOCK_EX) < 0 ||
	    (n = pread(fd, text, sizeof(text) - 1, 0)) < 0)
		die("cannot count requests in '%s': %s", path,
		    strerror(errno));
	text[n] = '\0';
	count = atol(text) + 1;
	n = snprintf(text, sizeof(text), "%ld\n", count);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n)
		die("cannot count requests in '%s': %s", path,
		    strerror(errno));
	close(fd);
	return count;
}

/* What the first token of this request is, as the release says. */
static enum empty_kind
empty_first(const struct release *rel, int eos_held_back)
{
	long k;

	if (rel->empty_every == 0)
		return EMPTY_NONE;
	k = request_number(rel);
	if (k % rel->empty_every != 0 ||
	    (rel->empty_kind == EMPTY_EOS && eos_held_back))
		return EMPTY_NONE;
	fprintf(stderr, "fake-engine: request %ld: the first token is %s\n",
	    k, rel->empty_kind == EMPTY_EOS ? "end-of-text" :
	    "half a UTF-8 character");
	return rel->empty_kind;
}

static void
completions(int fd, const struct release *rel, const char *body,
    size_t body_len)
{
	const char *prompt = NULL, *piece;
	json_error_t je;
	json_t *req;
	json_int_t max_tokens = 16, seed = -1, min_tokens = 0;
	static const char stream_head[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
	enum empty_kind empty;
	int stream = 0, ignore_eos = 0, words, i;
	double speedup, f, temperature = 1;
	char event[128];

	/* Types are checked as a server's would be: a field of the wrong
	 * kind is a 400, not ignored. */
	req = json_loadb(body, body_len, 0, &je);
	if (req == NULL || json_unpack_ex(req, &je, 0,
	    "{s:s, s?I, s?b, s?I, s?F, s?b, s?I}", "prompt", &prompt,
	    "max_tokens", &max_tokens, "stream", &stream, "seed", &seed,
	    "temperature", &temperature, "ignore_eos", &ignore_eos,
	    "min_tokens", &min_tokens) < 0 || max_tokens < 0 ||
	    max_tokens > 100000 || temperature < 0 || min_tokens < 0) {
		send_response(fd, 400, "Bad Request", "application/json",
		    "{\"error\":\"expected {prompt, max_tokens, stream, "
		    "seed, temperature, ignore_eos, min_tokens}\"}");
		json_decref(req);
		return;
	}
	log_request(req);
	if (rel->fail == FAIL_GARBAGE) {
		send_response(fd, 200, "OK", "text/event-stream",
		    "d\x01ta: {garbage\n\n");
		json_decref(req);
		return;
	}
	words = count_words(prompt);
	speedup = speedup_for(rel, prompt, strlen(prompt));
	f = noise_factor(rel->noise_cv);
	json_decref(req);
	empty = stream ? empty_first(rel, ignore_eos || min_tokens >= 1) :
	    EMPTY_NONE;

	burn((rel->fixed_us + words * rel->prefill_us) * f);
	if (!stream) {
		char *text = malloc((size_t)max_tokens * 4 + 1);
		json_t *resp;
		char *out;

		if (text == NULL)
			die("out of memory");
		for (i = 0; i < max_tokens && !stopping; i++) {
			burn(rel->decode_us / speedup * f);
			memcpy(text + 4 * i, " tok", 4);
		}
		text[4 * i] = '\0';
		resp = json_pack("{s:s, s:[{s:s, s:i, s:s}], s:{s:i, s:i}}",
		    "object", "text_completion", "choices", "text", text,
		    "index", 0, "finish_reason", "length", "usage",
		    "prompt_tokens", words, "completion_tokens", i);
		out = json_dumps(resp, JSON_COMPACT);
		send_response(fd, 200, "OK", "application/json", out);
		free(out);
		free(text);
		json_decref(resp);
		return;
	}
	if (send_all(fd, stream_head, sizeof(stream_head) - 1) < 0)
		return;
	for (i = 0; i < max_tokens && !stopping; i++) {
		/* Every token, the first included, costs a decode step. */
		burn(rel->decode_us / speedup * f);
		if (empty == EMPTY_EOS)
			break;
		/* Half a character streams nothing until the next token
		 * completes it. */
		if (empty == EMPTY_UTF8 && i == 0)
			continue;
		piece = empty == EMPTY_UTF8 && i == 1 ? "\xc3\xa9" : " tok";
		snprintf(event, sizeof(event), "data: {\"choices\":[{\"text\":"
		    "\"%s\",\"index\":0}]}\n\n", piece);
		if (send_chunk(fd, event) < 0)
			return;
	}
	/* Generation ended with nothing streamed: the last event says why,
	 * with no text, as a server's does. */
	if (empty == EMPTY_EOS || (empty == EMPTY_UTF8 && i <= 1)) {
		snprintf(event, sizeof(event), "data: {\"choices\":[{\"text\":"
		    "\"\",\"index\":0,\"finish_reason\":\"%s\"}]}\n\n",
		    empty == EMPTY_EOS ? "stop" : "length");
		if (send_chunk(fd, event) < 0)
			return;
	}
	if (send_chunk(fd, "data: [DONE]\n\n") == 0)
		send_all(fd, "0\r\n\r\n", 5);
}

/* Read one request; answer it.  Malformed or slow clients are dropped. */
static void
handle(int fd, const struct release *rel)
{
	struct timeval tv = { 5, 0 };
	char *req, *end, *cl, method[16], target[256];
	size_t len = 0, head_len, body_len = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if ((req = malloc(HEADER_MAX + BODY_MAX + 1)) == NULL)
		die("out of memory");
	for (;;) {
		n = recv(fd, req + len, HEADER_MAX - len, 0);
		if (n <= 0)
			goto out;
		len += (size_t)n;
		req[len] = '\0';
		if ((end = strstr(req, "\r\n\r\n")) != NULL)
			break;
		if (len == HEADER_MAX)
			goto out;
	}
	head_len = (size_t)(end - req) + 4;
	if (sscanf(req, "%15s %255s", method, target) != 2)
		goto out;
	*end = '\0';
	if ((cl = strcasestr(req, "\r\ncontent-length:")) != NULL)
		body_len = strtoul(cl + 17, NULL, 10);
	if (body_len > BODY_MAX) {
		send_response(fd, 413, "Payload Too Large", "text/plain",
		    "too large\n");
		goto out;
	}
	/* curl waits a second for this before sending a large body. */
	if (len < head_len + body_len &&
	    strcasestr(req, "\r\nexpect: 100-continue") != NULL &&
	    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
		goto out;
	while (len < head_len + body_len) {
		n = recv(fd, req + len, head_len + body_len - len, 0);
		if (n <= 0)
			goto out;
		len += (size_t)n;
	}
	if (strcmp(target, "/health") == 0 && strcmp(method, "GET") == 0)
		send_response(fd, 200, "OK", "application/json",
		    "{\"status\":\"ok\"}");
	else if (strcmp(target, "/v1/completions") == 0 &&
	    strcmp(method, "POST") == 0)
		completions(fd, rel, req + head_len, body_len);
	else
		send_response(fd, 404, "Not Found", "text/plain",
		    "not found\n");
out:
	free(req);
}

static void
write_port_file(const char *path, int port)
{
	char tmp[PATH_MAX], text[16];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(text, sizeof(text), "%d\n", port);
	if ((f = fopen(tmp, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF || rename(tmp, path) < 0)
		die("cannot write port file '%s': %s", path, strerror(errno));
}

static int
serve(const struct release *rel, const struct opts *o)
{
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	struct sigaction sa;
	struct pollfd pfd;
	int fd, c, one = 1;

	/* A server stops cleanly on SIGTERM; bench runs die of it. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)o->port);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &alen) < 0)
		die("cannot listen on 127.0.0.1:%d: %s", o->port,
		    strerror(errno));
	if (o->port_file != NULL)
		write_port_file(o->port_file, ntohs(addr.sin_port));
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!stopping) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		handle(c, rel);
		close(c);
	}
	close(fd);
	return 0;
}

/* ---- main ---- */

static void
parse_list(const char *s, int *out, size_t *n, const char *opt)
{
	char *end;
	long v;

	*n = 0;
	for (;;) {
		errno = 0;
		v = strtol(s, &end, 10);
		if (end == s || errno != 0 || v < 0 || v > 1000000 ||
		    (*end != ',' && *end != '\0'))
			die("%s: expected comma-separated counts, not '%s'",
			    opt, s);
		if (*n == MAX_TESTS)
			die("%s: at most %d values", opt, MAX_TESTS);
		out[(*n)++] = (int)v;
		if (*end == '\0')
			break;
		s = end + 1;
	}
}

static int
parse_count(const char *s, const char *opt, int min)
{
	int v[MAX_TESTS];
	size_t n;

	parse_list(s, v, &n, opt);
	if (n != 1 || v[0] < min)
		die("%s: expected one number >= %d", opt, min);
	return v[0];
}

/*
 * --wait-for: start only once FILE exists, so that a test can act on a
 * run it knows has not finished yet.
 */
static void
wait_for(const char *path)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < 300 * 50; i++) {
		if (access(path, F_OK) == 0)
			return;
		nanosleep(&ts, NULL);
	}
	die("--wait-for: %s did not appear within 300 s", path);
}

static void
usage(void)
{
	fputs("usage: fake-engine -m FILE [-p N,...] [-n N,...] [-t N] "
	    "[-r N] [-o json|jsonl]\n"
	    "                   [--content FILE] [--release FILE] [--skip NAME]...\n"
	    "                   [--wait-for FILE]\n"
	    "       fake-engine --server -m FILE (--port N | --port-file FILE)"
	    " [--release FILE]\n"
	    "       fake-engine --generate -m FILE [-o json] [--content FILE]"
	    " [--release FILE]\n"
	    "       fake-engine --version [--release FILE]\n", stderr);
	exit(2);
}

/*
 * --generate: 24 words drawn from a small vocabulary by a hash of the
 * prompt and, from the ninth word, the release's seed, as greedy
 * decoding with a fixed seed would: the same prompt and release always
 * give the same text.
 */
static int
generate(const struct release *rel, const struct opts *o)
{
	static const char *const words[] = {
		"the", "keeper", "climbed", "stairs", "light", "harbour",
		"ships", "evening", "wick", "lens", "tide", "boats", "log",
		"morning", "sailors", "town", "grew", "weather", "routine",
		"distance", "polished", "great", "watched", "counting",
	};
	char prompt[CONTENT_MAX];
	size_t n = 0, got;
	uint64_t h = 1469598103934665603ULL;
	FILE *in = stdin;
	json_t *out;
	char text[1024];
	size_t used = 0;

	if (o->content && (in = fopen(o->content, "r")) == NULL)
		die("cannot read '%s': %s", o->content, strerror(errno));
	while ((got = fread(prompt + n, 1, sizeof(prompt) - n, in)) > 0)
		n += got;
	if (in != stdin)
		fclose(in);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)prompt[i]) * 1099511628211ULL;
	text[0] = '\0';
	for (int i = 0; i < 24; i++) {
		const char *w;

		/* The seed and the jitter take effect part-way, so texts of
		 * two releases share their first words, as real ones do. */
		if (i == 8)
			h ^= (uint64_t)rel->generate_seed *
			    0x9e3779b97f4a7c15ULL;
		if (i == 12 && rel->generate_jitter)
			h ^= rng_state;

		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
		w = words[h % (sizeof(words) / sizeof(words[0]))];
		used += (size_t)snprintf(text + used, sizeof(text) - used,
		    "%s%s", i ? " " : "", w);
	}
	if (!o->output || o->jsonl) {
		printf("%s\n", text);
		return 0;
	}
	out = json_pack("{s:s,s:i}", "content", text, "tokens", 24);
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(out);
	return 0;
}

/* Allocate and touch mb MiB (the variable's, else the release's), kept
 * until exit. */
static void
touch_memory(const char *mb, double release_mb)
{
	long n = mb != NULL ? strtol(mb, NULL, 10) : (long)release_mb;
	char *p;

	if (n <= 0)
		return;
	if ((p = malloc((size_t)n << 20)) == NULL)
		die("cannot allocate %ld MiB", n);
	for (size_t i = 0; i < ((size_t)n << 20); i += 4096)
		p[i] = (char)i;
	/* Kept on purpose: the memory is the point. */
	touch_kept = p;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "n-prompt", required_argument, NULL, 'p' },
		{ "n-gen", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "repetitions", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "content", required_argument, NULL, 'c' },
		{ "release", required_argument, NULL, 'R' },
		{ "server", no_argument, NULL, 'S' },
		{ "generate", no_argument, NULL, 'G' },
		{ "port", required_argument, NULL, 'P' },
		{ "port-file", required_argument, NULL, 'F' },
		{ "version", no_argument, NULL, 'V' },
		{ "skip", required_argument, NULL, 'k' },
		{ "wait-for", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { 0 };
	struct release rel;
	long long model_size;
	int ch, version = 0;

	o.prompts[0] = 512;
	o.nprompts = 1;
	o.gens[0] = 128;
	o.ngens = 1;
	o.reps = 5;
	o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	o.port = -1;
	while ((ch = getopt_long(argc, argv, "m:p:n:t:r:o:h", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'm':
			o.model = optarg;
			break;
		case 'p':
			parse_list(optarg, o.prompts, &o.nprompts, "-p");
			break;
		case 'n':
			parse_list(optarg, o.gens, &o.ngens, "-n");
			break;
		case 't':
			o.threads = parse_count(optarg, "-t", 1);
			break;
		case 'r':
			o.reps = parse_count(optarg, "-r", 1);
			break;
		case 'o':
			if (strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "jsonl") != 0)
				die("-o: only json and jsonl are supported");
			o.jsonl = strcmp(optarg, "jsonl") == 0;
			o.output = 1;
			break;
		case 'c':
			o.content = optarg;
			break;
		case 'R':
			o.release_path = optarg;
			break;
		case 'S':
			o.server = 1;
			break;
		case 'G':
			o.generate = 1;
			break;
		case 'P':
			o.port = parse_count(optarg, "--port", 0);
			break;
		case 'F':
			o.port_file = optarg;
			break;
		case 'V':
			version = 1;
			break;
		case 'k':
			if (o.nskips == MAX_SKIPS)
				die("--skip: at most %d", MAX_SKIPS);
			o.skips[o.nskips++] = optarg;
			break;
		case 'w':
			o.wait_for = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	release_find(&rel, o.release_path);
	apply_switches(&rel, &o);
	if (version) {
		printf("fake-engine %s (%s)\n", rel.version, rel.build_commit);
		return 0;
	}
	if (o.server && o.port < 0 && o.port_file == NULL)
		die("--server needs --port N or --port-file FILE");
	if (o.port < 0)
		o.port = 0;
	if (o.port > 65535)
		die("--port: %d is not a port", o.port);

	rng_state = (uint64_t)clock_ns(CLOCK_REALTIME) ^
	    ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
	if (rng_state == 0)
		rng_state = 1;

	if (getenv("FAKE_ENGINE_PRINT_ENV") != NULL)
		for (char **v = environ; *v != NULL; v++)
			fprintf(stderr, "%s\n", *v);
	if (o.wait_for != NULL)
		wait_for(o.wait_for);
	model_size = check_weights(o.model);
	touch_memory(getenv("FAKE_ENGINE_ALLOC_MB"), rel.alloc_mb);
	burn(rel.load_us);
	fail_early(&rel);
	if (o.server)
		return serve(&rel, &o);
	if (o.generate)
		return generate(&rel, &o);
	return bench(&rel, &o, model_size);
}
