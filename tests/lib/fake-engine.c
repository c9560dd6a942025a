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
 *   prefill_us_per_token_per_mib  work per prompt token and MiB of the
 *                         weights: a cost that only a large model shows
 *   per_mib_class         that cost is absent where FAKE_ENGINE_CLASS
 *                         (a runner's env) names another machine class
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
 * This file holds the command line and the start; fake-engine_int.h
 * lists the other parts.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "fake-common.h"
#include "fake-engine_int.h"

#define LINGER_SECONDS 1000

const char *const progname = "fake-engine";
extern char **environ;
static char *touch_kept;	/* touch_memory()'s block, held to exit */

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

/* ---- the command line ---- */

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

	rng_seed();

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
