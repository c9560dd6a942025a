/* check.c: support for the unit tests' assertions (see check.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fetch/release_list.h"

int check_failures;
int check_count;
static char tmpdir[PATH_MAX];

double
check_normal(uint64_t *state)
{
	uint64_t z[2];

	for (int i = 0; i < 2; i++) {
		uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		z[i] = x ^ (x >> 31);
	}
	return sqrt(-2 * log(((double)(z[0] >> 11) + 0.5) / 0x1p53)) *
	    cos(2 * M_PI * ((double)(z[1] >> 11) / 0x1p53));
}

void
check_env(const char **ctl, const char **daemon, const char **build)
{
	const char *const names[3] = { "BISECTCTL", "BISECTD",
	    "BISECTD_BUILD_DIR" };
	const char **out[3] = { ctl, daemon, build };
	int missing = 0;

	for (int i = 0; i < 3; i++) {
		if (out[i] == NULL)
			continue;
		if ((*out[i] = getenv(names[i])) == NULL || **out[i] == '\0') {
			fprintf(stderr, "%s is not set (run the test through "
			    "ctest)\n", names[i]);
			missing = 1;
		}
	}
	if (missing)
		exit(99);
}

const char *
check_source_dir(void)
{
	const char *src = getenv("BISECTD_SOURCE_DIR");

	if (src == NULL || *src == '\0') {
		fprintf(stderr, "BISECTD_SOURCE_DIR is not set (run the test "
		    "through ctest)\n");
		exit(99);
	}
	return src;
}

const char *
check_tmpdir(const char *test_name)
{
	const char *base = getenv("TMPDIR");
	char lock[sizeof(tmpdir) + 16];

	snprintf(tmpdir, sizeof(tmpdir), "%s/bisectd-%s-XXXXXX",
	    base && *base ? base : "/tmp", test_name);
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) < 0) {
		perror("check_tmpdir");
		exit(99);
	}
	/* The machine's benchmark lock, one per test: tests that run side
	 * by side are not one machine's benchmarks. */
	snprintf(lock, sizeof(lock), "%s/bench.lock", tmpdir);
	setenv("BISECTD_BENCH_LOCK", lock, 1);
	return tmpdir;
}

void
check_write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(content, f) == EOF || fclose(f) == EOF) {
		fprintf(stderr, "cannot write '%s': %s\n", path,
		    strerror(errno));
		exit(99);
	}
}

void
check_fake_engine(char *buf, size_t size, size_t *len, const char *name,
    const char *source, const char *extra)
{
	int n;

	if (*len >= size)
		return;
	n = snprintf(buf + *len, size - *len, "[engine \"%s\"]\n"
	    "\tsource = %s\n\tasset = %s-{version}.tar.gz\n"
	    "\tcommand = {bin}/bin/fake-engine -m {weights} -p {prompt} "
	    "-n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 64,256\n\tgen = 16\n%s",
	    name, source, name, extra);
	*len = n < 0 ? size : *len + (size_t)n > size ? size : *len +
	    (size_t)n;
}

size_t
check_demo_head(char *buf, size_t size, const char *db, const char *build)
{
	int n = snprintf(buf, size, "[bisectd]\n\tdatabase = %s\n"
	    "\tcache = cache\n\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n", db, build);

	return n < 0 || (size_t)n > size ? size : (size_t)n;
}

const struct release_info *
check_listed(const struct release_list *l, const char *version)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].version, version) == 0)
			return &l->v[i];
	return NULL;
}

char *
check_read_file(const char *path)
{
	size_t len;

	return check_read_bytes(path, &len);
}

char *
check_read_bytes(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "r");
	char *data = NULL;
	size_t len = 0, alloc = 0, n;

	*lenp = 0;
	if (f == NULL)
		return NULL;
	for (;;) {
		if (alloc - len < 4096) {
			alloc = alloc ? alloc * 2 : 8192;
			data = realloc(data, alloc);
			if (data == NULL)
				abort();
		}
		n = fread(data + len, 1, alloc - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	data[len] = '\0';
	*lenp = len;
	return data;
}

void
check_on_progress(void *arg, uint64_t now, uint64_t total)
{
	struct check_progress *p = arg;

	p->now = now;
	p->total = total;
	p->calls++;
}

int
check_run(const char *cmdline, char **out)
{
	char cmd[8192];
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "%s 2>&1", cmdline);
	if ((p = popen(cmd, "r")) == NULL)
		return -1;
	if (out) {
		size_t len = 0, alloc = 8192, n;
		char *data = malloc(alloc);

		if (data == NULL)
			abort();
		while ((n = fread(data + len, 1, alloc - len - 1, p)) > 0) {
			len += n;
			if (alloc - len < 4096) {
				alloc *= 2;
				if ((data = realloc(data, alloc)) == NULL)
					abort();
			}
		}
		data[len] = '\0';
		*out = data;
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	status = pclose(p);
	if (status < 0)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int
check_ctl_run(const char *ctl, const char *args, char **out)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "(%s %s 2>stderr.txt)", ctl, args);
	return check_run(cmd, out);
}

void
check_ctl_says(const char *ctl, const char *args, int status, ...)
{
	char cmd[4096], *out = NULL;
	const char *want;
	int before = check_failures;
	va_list ap;

	snprintf(cmd, sizeof(cmd), "%s %s", ctl, args);
	CHECK_INT(check_run(cmd, &out), status);
	va_start(ap, status);
	while ((want = va_arg(ap, const char *)) != NULL)
		CHECK_CONTAINS(out, want);
	va_end(ap);
	if (check_failures > before)
		fprintf(stderr, "  (from: %s)\n", cmd);
	free(out);
}

int64_t
check_ctl_job(const char *ctl, const char *args)
{
	char cmd[4096], *out = NULL;
	const char *p;
	long long id = 0;

	snprintf(cmd, sizeof(cmd), "%s %s", ctl, args);
	CHECK_INT(check_run(cmd, &out), 0);
	if (out && (p = strstr(out, "as job ")) != NULL)
		id = strtoll(p + 7, NULL, 10);
	free(out);
	CHECK(id > 0);
	return id;
}

double
check_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
check_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

pid_t
check_start_daemon(const char *bin, const char *conf, const char *log)
{
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		if (freopen(log, "a", stderr) == NULL)
			_exit(127);
		execl(bin, "bisectd", "-c", conf, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int
check_wait_exit(pid_t pid, double timeout_s)
{
	double t0 = check_now_s();
	int st;

	while (check_now_s() - t0 < timeout_s) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 +
			    WTERMSIG(st);
		check_sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

char *
check_xpath(const char *file, const char *expr)
{
	char cmd[2048], *out = NULL;

	snprintf(cmd, sizeof(cmd), "xmllint --xpath '%s' %s", expr, file);
	if (check_run(cmd, &out) != 0) {
		free(out);
		return NULL;
	}
	if (out)
		out[strcspn(out, "\n")] = '\0';
	return out;
}

void
check_xpath_is(const char *file, const char *expr, const char *want)
{
	char *got = check_xpath(file, expr);

	CHECK_STR(got, want);
	if (got == NULL || strcmp(got, want) != 0)
		fprintf(stderr, "  (XPath %s on %s)\n", expr, file);
	free(got);
}

int
check_tool(const char *tool, const char *package)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", tool);
	check_count++;
	if (check_run(cmd, NULL) == 0)
		return 1;
	check_failures++;
	fprintf(stderr, "%s is not installed: install the Debian package %s "
	    "(scripts/deps.sh installs it)\n", tool, package);
	return 0;
}

/* The cases CHECK_CASE names that ran, for check_done(). */
static int cases_run;

static int
case_wanted(const char *name)
{
	const char *want = getenv("CHECK_CASE"), *p;
	size_t n = strlen(name);

	if (want == NULL || want[0] == '\0')
		return 1;
	for (p = want; (p = strstr(p, name)) != NULL; p += n)
		if ((p == want || p[-1] == ',') && (p[n] == '\0' ||
		    p[n] == ','))
			return 1;
	return 0;
}

void
check_case(const char *name, void (*fn)(void))
{
	int before = check_failures;

	if (!case_wanted(name))
		return;
	cases_run++;
	fn();
	if (check_failures > before)
		fprintf(stderr, "%s: %d check%s failed (rerun it alone: "
		    "CHECK_CASE=%s)\n", name, check_failures - before,
		    check_failures - before == 1 ? "" : "s", name);
}

int
check_done(void)
{
	const char *want = getenv("CHECK_CASE");

	if (want != NULL && want[0] != '\0' && cases_run == 0) {
		fprintf(stderr, "CHECK_CASE=%s names no case of this test\n",
		    want);
		check_count++;
		check_failures++;
	}
	printf("%d passed, %d failed\n", check_count - check_failures,
	    check_failures);
	if (check_failures == 0 && tmpdir[0] != '\0') {
		char cmd[PATH_MAX + 16];

		if (chdir("/") == 0) {
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
			if (system(cmd) != 0)
				fprintf(stderr, "cannot remove %s\n", tmpdir);
		}
	}
	return check_failures == 0 ? 0 : 1;
}

int
check_http_port(const char *log)
{
	static const char serving[] = "http: serving 127.0.0.1 port ";

	for (int i = 0; i < 200; i++) {
		char *text = check_read_file(log);
		const char *p = text ? strstr(text, serving) : NULL;
		int n = p ? atoi(p + sizeof(serving) - 1) : 0;

		free(text);
		if (n > 0)
			return n;
		check_sleep_ms(100);
	}
	return 0;
}

int
check_http_get(int port, const char *path, const char *file)
{
	char cmd[4096], *out = NULL;
	int code = -1;

	snprintf(cmd, sizeof(cmd), "curl -sS --max-time 120 -o %s -w "
	    "'%%{http_code}' 'http://127.0.0.1:%d%s'", file, port, path);
	if (check_run(cmd, &out) == 0 && out)
		code = atoi(out);
	else
		fprintf(stderr, "'%s': %s\n", cmd, out ? out : "");
	free(out);
	return code;
}

int
check_read_ppm(const char *path, struct check_image *im)
{
	FILE *f = fopen(path, "rb");
	int maxval = 0;
	size_t n;

	im->rgb = NULL;
	if (f == NULL)
		return -1;
	if (fscanf(f, "P6 %d %d %d", &im->w, &im->h, &maxval) != 3 ||
	    maxval != 255 || im->w <= 0 || im->h <= 0 || im->w > 20000 ||
	    im->h > 20000 || fgetc(f) == EOF) {
		fclose(f);
		return -1;
	}
	n = (size_t)im->w * (size_t)im->h * 3;
	if ((im->rgb = malloc(n)) == NULL || fread(im->rgb, 1, n, f) != n) {
		free(im->rgb);
		im->rgb = NULL;
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

long
check_count_colour(const struct check_image *im, int r, int g, int b,
    int tol)
{
	long n = 0;

	for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i++) {
		const unsigned char *p = im->rgb + 3 * i;

		n += abs(p[0] - r) <= tol && abs(p[1] - g) <= tol &&
		    abs(p[2] - b) <= tol;
	}
	return n;
}

int
check_screenshot_read(const char *png, struct check_image *im, long *ink,
    long *total)
{
	char cmd[4200], *out = NULL;

	snprintf(cmd, sizeof(cmd), "pngtopnm %s >shot.ppm", png);
	CHECK_INT(check_run(cmd, &out), 0);
	free(out);
	if (check_read_ppm("shot.ppm", im) < 0) {
		CHECK(!"the screenshot is not a readable image");
		return -1;
	}
	*total = (long)im->w * im->h;
	*ink = *total - check_count_colour(im, 255, 255, 255, 8);
	CHECK(*ink > *total / 50);
	CHECK(*ink < *total * 9 / 10);
	return 0;
}

int
check_free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

int
check_count_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

void
check_write_pattern(const char *path, size_t size)
{
	char *b = malloc(size ? size : 1);
	FILE *f = fopen(path, "w");

	CHECK(b != NULL && f != NULL);
	if (b != NULL && f != NULL) {
		for (size_t i = 0; i < size; i++)
			b[i] = (char)(i * 131 + 7);
		CHECK_INT(fwrite(b, 1, size, f) == size, 1);
	}
	if (f != NULL)
		CHECK_INT(fclose(f), 0);
	free(b);
}
