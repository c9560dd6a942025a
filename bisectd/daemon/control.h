/*
 * control.h: the daemon's control socket, both sides.  A client connects
 * to the Unix socket, sends one request line and reads one reply line,
 * then the connection closes.  Requests: "status", "wake", "cancel ID".
 * Replies: one JSON object, {"ok": true, ...} or {"ok": false, "error":
 * "..."}.  Both directions are bounded: a request longer than
 * CONTROL_REQUEST_MAX or without its newline is refused, and a reply
 * longer than CONTROL_REPLY_MAX is an error on the client.
 */
#ifndef BISECTD_CONTROL_H
#define BISECTD_CONTROL_H

#include <stddef.h>
#include <stdint.h>

struct err;

#define CONTROL_REQUEST_MAX	128	/* bytes, newline included */
#define CONTROL_REPLY_MAX	65536	/* bytes, newline included */
#define CONTROL_TIMEOUT_MS	2000	/* for one request or reply */

enum control_cmd { CONTROL_STATUS, CONTROL_WAKE, CONTROL_CANCEL };

struct control_request {
	enum control_cmd cmd;
	int64_t job_id;		/* CONTROL_CANCEL */
};

/*
 * Listen on path: a stale socket left by a dead daemon is removed (any
 * other kind of file there is an error).  The socket is mode 0600, or
 * 0660 with group `group` when group is not NULL.  *fd is non-blocking
 * and close-on-exec.
 */
int control_listen(const char *path, const char *group, int *fd,
    struct err *e);

/*
 * Read one request line from a connected client (at most
 * CONTROL_TIMEOUT_MS) and parse it.  Returns 0, or -1 with e saying what
 * was wrong with it (too long, truncated, unknown command, bad number),
 * suitable for the error reply.
 */
int control_read_request(int fd, struct control_request *req, struct err *e);

/* Parse one request line (without its newline). */
int control_parse(const char *line, struct control_request *req,
    struct err *e);

/* Send text and a newline to the client (at most CONTROL_TIMEOUT_MS). */
int control_reply(int fd, const char *text, struct err *e);

/*
 * Client: send request (one line, no newline) to the daemon at path and
 * read its reply into *reply (malloced, without the newline).  Returns
 * 0, 1 when no daemon listens there (no socket, or refused), -1 with e
 * set on other errors.
 */
int control_call(const char *path, const char *request, char **reply,
    struct err *e);

#endif
