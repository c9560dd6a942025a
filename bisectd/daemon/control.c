/*
 * control.c: the control socket's listener, its bounded request reader
 * and parser, and the client call bisectctl makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "control.h"
#include "common/err.h"

static int
set_addr(struct sockaddr_un *sa, const char *path, struct err *e)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return err_set(e, "control socket path '%s' is longer than "
		    "%zu bytes", path, sizeof(sa->sun_path) - 1);
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* Wait until fd is ready for events or the deadline passes. */
static int
wait_fd(int fd, short events, int64_t deadline, const char *what,
    struct err *e)
{
	struct pollfd p = { fd, events, 0 };
	int rc;

	for (;;) {
		int64_t left = deadline - clock_now_ms();

		if (left <= 0)
			return err_set(e, "%s: timed out", what);
		rc = poll(&p, 1, (int)left);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return err_errno(e, "%s", what);
	}
}

int
control_listen(const char *path, const char *group, int *fd,
    struct err *e)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t mode = group ? 0660 : 0600;
	mode_t old;
	int s;

	*fd = -1;
	if (set_addr(&sa, path, e) < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		/* Only a daemon holding the pid lock gets here, so a socket
		 * at the path is a dead daemon's. */
		if (!S_ISSOCK(st.st_mode))
			return err_set(e, "cannot listen on '%s': a file that "
			    "is not a socket is in the way", path);
		if (unlink(path) < 0)
			return err_errno(e, "cannot remove the stale socket "
			    "'%s'", path);
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return err_errno(e, "cannot create the control socket");
	/* No window in which the socket is wider open than asked. */
	old = umask(0777 & ~mode);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		err_errno(e, "cannot bind the control socket '%s'", path);
		close(s);
		return -1;
	}
	umask(old);
	if (group) {
		struct group *gr = getgrnam(group);

		if (gr == NULL || chown(path, (uid_t)-1, gr->gr_gid) < 0) {
			if (gr == NULL)
				err_set(e, "socket-group '%s': no such group",
				    group);
			else
				err_errno(e, "cannot give '%s' to group '%s'",
				    path, group);
			unlink(path);
			close(s);
			return -1;
		}
	}
	if (chmod(path, mode) < 0 || listen(s, 16) < 0) {
		err_errno(e, "cannot listen on '%s'", path);
		unlink(path);
		close(s);
		return -1;
	}
	*fd = s;
	return 0;
}

int
control_parse(const char *line, struct control_request *req,
    struct err *e)
{
	memset(req, 0, sizeof(*req));
	if (strcmp(line, "status") == 0)
		req->cmd = CONTROL_STATUS;
	else if (strcmp(line, "wake") == 0)
		req->cmd = CONTROL_WAKE;
	else if (strncmp(line, "cancel ", 7) == 0) {
		const char *p = line + 7;
		char *end;
		long long id;

		if (*p < '1' || *p > '9')
			return err_set(e, "cancel: expected a job number, got "
			    "'%.32s'", p);
		errno = 0;
		id = strtoll(p, &end, 10);
		if (errno != 0 || *end != '\0')
			return err_set(e, "cancel: expected a job number, got "
			    "'%.32s'", p);
		req->cmd = CONTROL_CANCEL;
		req->job_id = id;
	} else {
		/* Quote it only as far as it is printable. */
		char shown[33];
		size_t i;

		for (i = 0; i < sizeof(shown) - 1 && line[i]; i++)
			shown[i] = line[i] >= 0x20 && line[i] < 0x7f ?
			    line[i] : '?';
		shown[i] = '\0';
		return err_set(e, "unknown request '%s' (expected status, "
		    "wake or cancel ID)", shown);
	}
	return 0;
}

/* The complete line in in[0..len), or -1 with e (see control_client_read). */
static int
finish_line(char *line, size_t len, struct control_request *req,
    struct err *e)
{
	char *nl = memchr(line, '\n', len);

	if (nl != line + len - 1)
		return err_set(e, "control request: more than one line");
	*nl = '\0';
	if (memchr(line, '\0', (size_t)(nl - line)) != NULL)
		return err_set(e, "control request: contains a NUL byte");
	return control_parse(line, req, e);
}

void
control_client_start(struct control_client *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->deadline_ms = clock_now_ms() + CONTROL_TIMEOUT_MS;
}

void
control_client_end(struct control_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int
control_client_read(struct control_client *c, struct control_request *req,
    struct err *e)
{
	ssize_t n = read(c->fd, c->in + c->in_len, sizeof(c->in) - 1 -
	    c->in_len);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 :
		    err_errno(e, "control request");
	if (n == 0)
		return err_set(e, "control request: truncated (no newline)");
	c->in_len += (size_t)n;
	c->in[c->in_len] = '\0';
	if (memchr(c->in, '\n', c->in_len) == NULL) {
		if (c->in_len == sizeof(c->in) - 1)
			return err_set(e, "control request: longer than %d "
			    "bytes", CONTROL_REQUEST_MAX);
		return 0;
	}
	if (finish_line(c->in, c->in_len, req, e) < 0)
		return -1;
	return 1;
}

int
control_client_set_reply(struct control_client *c, const char *text,
    struct err *e)
{
	size_t len = strlen(text);

	if (len + 1 > CONTROL_REPLY_MAX)
		return err_set(e, "control reply: %zu bytes is over the "
		    "limit", len);
	if ((c->out = malloc(len + 1)) == NULL)
		return err_errno(e, "control reply");
	memcpy(c->out, text, len);
	c->out[len] = '\n';
	c->out_len = len + 1;
	c->out_off = 0;
	return 0;
}

int
control_client_write(struct control_client *c, struct err *e)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
		    c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return err_errno(e, "control reply");
		}
		c->out_off += (size_t)n;
	}
	return 1;
}

static int
write_all(int fd, const char *p, size_t len, int64_t deadline,
    const char *what, struct err *e)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				if (wait_fd(fd, POLLOUT, deadline, what, e) < 0)
					return -1;
				continue;
			}
			return err_errno(e, "%s", what);
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
control_call(const char *path, const char *request, char **reply,
    struct err *e)
{
	struct sockaddr_un sa;
	struct buf b = BUF_INIT(CONTROL_REPLY_MAX);
	int64_t deadline = clock_now_ms() + 5 * CONTROL_TIMEOUT_MS;
	int fd, rc = -1;

	*reply = NULL;
	if (set_addr(&sa, path, e) < 0)
		return -1;
	if (strlen(request) + 1 > CONTROL_REQUEST_MAX ||
	    strchr(request, '\n') != NULL)
		return err_set(e, "control request '%.32s': too long or more "
		    "than one line", request);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_errno(e, "cannot create a socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED) {
			close(fd);
			return 1;
		}
		if (errno != EINPROGRESS && errno != EAGAIN) {
			err_errno(e, "cannot connect to '%s'", path);
			goto out;
		}
		if (wait_fd(fd, POLLOUT, deadline, "connect", e) < 0)
			goto out;
	}
	if (write_all(fd, request, strlen(request), deadline, "request",
	    e) < 0 || write_all(fd, "\n", 1, deadline, "request", e) < 0)
		goto out;
	for (;;) {
		char chunk[4096];
		ssize_t n;

		if (wait_fd(fd, POLLIN, deadline, "the daemon's reply",
		    e) < 0)
			goto out;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err_errno(e, "cannot read the daemon's reply");
			goto out;
		}
		if (n == 0)
			break;
		if (buf_add(&b, chunk, (size_t)n) < 0) {
			err_set(e, "the daemon's reply is longer than %d "
			    "bytes", CONTROL_REPLY_MAX);
			goto out;
		}
		if (memchr(chunk, '\n', (size_t)n) != NULL)
			break;
	}
	if (b.len == 0 || b.data[b.len - 1] != '\n') {
		err_set(e, "the daemon's reply is truncated");
		goto out;
	}
	b.data[--b.len] = '\0';
	*reply = buf_take(&b);
	rc = 0;
out:
	buf_release(&b);
	close(fd);
	return rc;
}
