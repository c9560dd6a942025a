/*
 * testserver_helper.c: fork+exec of the loopback test server for the tests
 * (see testserver.h); owns nothing beyond the server process it starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testserver.h"

#ifndef TESTSERVER_BIN
#define TESTSERVER_BIN "testserver"
#endif

static int
read_port(const char *path)
{
	char text[32] = "";
	FILE *f = fopen(path, "r");
	int port = 0;

	if (f == NULL)
		return 0;
	if (fgets(text, sizeof(text), f) != NULL)
		port = atoi(text);
	fclose(f);
	return port;
}

int
testserver_start(const char *root, struct testserver *ts)
{
	char port_file[PATH_MAX + 16], smtp_file[PATH_MAX + 16];
	const char *bin = getenv("TESTSERVER");

	if (bin == NULL || *bin == '\0')
		bin = TESTSERVER_BIN;
	memset(ts, 0, sizeof(*ts));
	if (mkdir(root, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "cannot create '%s': %s\n", root,
		    strerror(errno));
		return -1;
	}
	if (realpath(root, ts->root) == NULL) {
		fprintf(stderr, "cannot resolve '%s': %s\n", root,
		    strerror(errno));
		return -1;
	}
	if (strlen(ts->root) + 32 > sizeof(ts->log)) {
		fprintf(stderr, "path too long: '%s'\n", ts->root);
		return -1;
	}
	snprintf(ts->log, sizeof(ts->log), "%.*s/.testserver.log",
	    PATH_MAX - 32, ts->root);
	snprintf(port_file, sizeof(port_file), "%.*s/.testserver.port",
	    PATH_MAX - 32, ts->root);
	snprintf(smtp_file, sizeof(smtp_file), "%.*s/.testserver.smtp",
	    PATH_MAX - 32, ts->root);
	unlink(port_file);
	unlink(smtp_file);

	if ((ts->pid = fork()) < 0) {
		perror("fork");
		return -1;
	}
	if (ts->pid == 0) {
		setpgid(0, 0);
		execl(bin, "testserver", "--port-file", port_file, "--root",
		    ts->root, "--log", ts->log, "--smtp-port-file", smtp_file,
		    (char *)NULL);
		_exit(127);
	}
	setpgid(ts->pid, ts->pid);
	for (int i = 0; i < 1000; i++) {
		struct timespec tick = { 0, 10 * 1000 * 1000 };
		int status;

		if ((ts->port = read_port(port_file)) > 0) {
			ts->smtp_port = read_port(smtp_file);
			snprintf(ts->base, sizeof(ts->base),
			    "http://127.0.0.1:%d", ts->port);
			return 0;
		}
		if (waitpid(ts->pid, &status, WNOHANG) == ts->pid) {
			fprintf(stderr, "testserver '%s' exited with %d\n",
			    bin, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			ts->pid = 0;
			return -1;
		}
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "testserver '%s' did not start in 10 s\n", bin);
	testserver_stop(ts);
	return -1;
}

void
testserver_stop(struct testserver *ts)
{
	if (ts->pid <= 0)
		return;
	kill(-ts->pid, SIGTERM);
	waitpid(ts->pid, NULL, 0);
	ts->pid = 0;
}

char *
testserver_log(const struct testserver *ts)
{
	FILE *f = fopen(ts->log, "r");
	size_t len = 0, alloc = 4096, n;
	char *data = malloc(alloc);

	if (data == NULL)
		abort();
	if (f != NULL) {
		while ((n = fread(data + len, 1, alloc - len - 1, f)) > 0) {
			len += n;
			if (alloc - len < 1024 &&
			    (data = realloc(data, alloc *= 2)) == NULL)
				abort();
		}
		fclose(f);
	}
	data[len] = '\0';
	return data;
}

int
testserver_count(const struct testserver *ts, const char *sub, ...)
{
	char *log = testserver_log(ts), *line, *save = NULL;
	int count = 0;

	for (line = strtok_r(log, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		const char *s = sub;
		int all = 1;
		va_list ap;

		va_start(ap, sub);
		while (s != NULL && all) {
			all = strstr(line, s) != NULL;
			s = va_arg(ap, const char *);
		}
		va_end(ap);
		count += all;
	}
	free(log);
	return count;
}

void
testserver_log_reset(const struct testserver *ts)
{
	int fd = open(ts->log, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

const char *
testserver_url(const struct testserver *ts, const char *path)
{
	static char buf[4][PATH_MAX];
	static int next;

	next = (next + 1) % 4;
	snprintf(buf[next], sizeof(buf[next]), "%s%s", ts->base, path);
	return buf[next];
}

int
testserver_publish(const struct testserver *ts, const char *repo,
    const char *name, const char *archives, const char *const *versions,
    size_t n)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 80], *p, c;
	FILE *f;

	snprintf(path, sizeof(path), "%s/api/%s", ts->root, repo);
	/* mkdir -p of the folders below root */
	p = path + strlen(ts->root);
	do {
		p += strcspn(p + 1, "/") + 1;
		c = *p;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
			return -1;
		}
		*p = c;
	} while (c != '\0');
	strcat(path, "/releases.jsonl");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		fprintf(stderr, "%s: %s\n", tmp, strerror(errno));
		return -1;
	}
	for (size_t i = n; i-- > 0;) {
		char link[PATH_MAX + 64], target[PATH_MAX + 64], file[128];

		snprintf(link, sizeof(link), "%s/%s-%s.tar.gz", ts->root, name,
		    versions[i]);
		snprintf(target, sizeof(target), "%s/%s-%s.tar.gz", archives,
		    name, versions[i]);
		if (access(link, F_OK) != 0 && symlink(target, link) < 0) {
			fprintf(stderr, "symlink %s: %s\n", link,
			    strerror(errno));
			fclose(f);
			return -1;
		}
		snprintf(file, sizeof(file), "/files/%s-%s.tar.gz", name,
		    versions[i]);
		fprintf(f, "{\"id\": %zu, \"tag_name\": \"v%s\", \"draft\": "
		    "false, \"prerelease\": false, \"assets\": [{\"name\": "
		    "\"%s-%s.tar.gz\", \"browser_download_url\": \"%s\", "
		    "\"digest\": null}]}\n", 100 + i, versions[i], name,
		    versions[i], testserver_url(ts, file));
	}
	if (fclose(f) == EOF || rename(tmp, path) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

void
testserver_write_pattern(const char *path, size_t size, unsigned seed)
{
	FILE *f = fopen(path, "wb");
	uint32_t x = seed * 2654435761u + 1;

	if (f == NULL)
		abort();
	for (size_t i = 0; i < size; i++) {
		/* xorshift32: cheap, and not compressible */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (putc((int)(x & 0xff), f) == EOF)
			abort();
	}
	if (fclose(f) == EOF)
		abort();
}
