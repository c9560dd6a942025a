/*
 * control.h: the daemon's control socket, both sides.  A client connects
 * to the Unix socket, sends one request line and reads one reply line,
 * then the connection closes.  Requests: "status", "wake", "cancel ID".
 * The daemon serves many clients at once from its poll() loop through
 * struct control_client, without blocking.
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
 * One client of a server that serves many at once from its poll() loop:
 * what it has sent so far, then the reply still to send.  Nothing here
 * blocks.
 */
struct control_client {
	int fd;				/* -1: a free slot */
	int64_t deadline_ms;		/* clock_now_ms(): closed after */
	char in[CONTROL_REQUEST_MAX];
	size_t in_len;
	char *out;			/* the reply and its newline, or
					 * NULL while reading; malloced */
	size_t out_len, out_off;
};

/* Take fd (non-blocking) into the free slot c, due within
 * CONTROL_TIMEOUT_MS of now. */
void control_client_start(struct control_client *c, int fd);

/* Close the client's connection and free the slot. */
void control_client_end(struct control_client *c);

/*
 * Read what c's socket has: 0 when the request is not complete yet, 1
 * with *req parsed, -1 with e saying what was wrong (too long,
 * truncated, more than one line, unknown command, bad number), for the
 * error reply; the connection stays open for it.
 */
int control_client_read(struct control_client *c, struct control_request *req,
    struct err *e);

/* Queue text and a newline as c's reply; -1 with e when it is over
 * CONTROL_REPLY_MAX or memory is short. */
int control_client_set_reply(struct control_client *c, const char *text,
    struct err *e);

/* Send what the socket takes of the reply: 1 when all is sent, 0 when
 * more is to come, -1 with e. */
int control_client_write(struct control_client *c, struct err *e);

/* Parse one request line (without its newline). */
int control_parse(const char *line, struct control_request *req,
    struct err *e);

/*
 * Client: send request (one line, no newline) to the daemon at path and
 * read its reply into *reply (malloced, without the newline).  Returns
 * 0, 1 when no daemon listens there (no socket, or refused), -1 with e
 * set on other errors.
 */
int control_call(const char *path, const char *request, char **reply,
    struct err *e);

#endif
