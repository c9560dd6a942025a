/*
 * fake-common.c: what the stand-ins the tests start share (see
 * fake-common.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fake-common.h"

volatile sig_atomic_t stopping;

void
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
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

void
stop_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len > 0) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		/* A non-blocking socket that is full is waited for; a
		 * blocking one says EAGAIN only once its time is up. */
		if (n < 0 && errno == EAGAIN &&
		    (fcntl(fd, F_GETFL) & O_NONBLOCK)) {
			struct pollfd pfd = { fd, POLLOUT, 0 };

			poll(&pfd, 1, 100);
			continue;
		}
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

int
write_chunk(int fd, const char *data)
{
	char head[32];
	size_t n = strlen(data);

	snprintf(head, sizeof(head), "%zx\r\n", n);
	if (write_all(fd, head, strlen(head)) < 0 ||
	    write_all(fd, data, n) < 0)
		return -1;
	return write_all(fd, "\r\n", 2);
}

char *
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

int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
listen_loopback(int port, int flags, int *bound)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1, fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0)) < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		die("cannot listen on 127.0.0.1:%d: %s", port,
		    strerror(errno));
	if (bound != NULL)
		*bound = ntohs(sa.sin_port);
	return fd;
}

void
write_port_file(const char *path, int port)
{
	char tmp[PATH_MAX], text[32];
	int fd, n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(text, sizeof(text), "%d\n", port);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0 || write_all(fd, text, (size_t)n) < 0 ||
	    close(fd) < 0 || rename(tmp, path) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
}
