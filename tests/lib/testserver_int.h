/*
 * testserver_int.h: what testserver.c shares with the GitHub-shaped API
 * it serves (testserver_github.c): the request as read, the root folder
 * and port, and the helpers that answer.
 */
#ifndef TESTSERVER_INT_H
#define TESTSERVER_INT_H

#include <stddef.h>
#include <stdint.h>

#define HEAD_MAX	65536

struct req {
	char method[16];
	char target[4096];	/* path and query as sent */
	char path[4096];
	char query[4096];
	char range[256];
	char inm[256];		/* If-None-Match */
	char if_range[256];	/* If-Range */
	char auth[512];		/* Authorization */
	char ctype[256];	/* Content-Type */
	char head[HEAD_MAX];	/* the raw header block */
	size_t head_len;
	char *body;		/* malloced, NUL-terminated */
	size_t body_len;
};

extern const char *root;	/* --root */
extern int http_port;

void respond(int fd, const struct req *rq, int status, const char *headers,
    const char *body, size_t len);
void respond_text(int fd, const struct req *rq, int status, const char *text);
long query_long(const char *query, const char *name, long def);
int safe_name(const char *name);
/* Store data as DIR/N.EXT under the root, N the first free number: N,
 * or -1. */
int store_numbered(const char *dir, const char *ext, const char *data,
    size_t len);

/* GitHub's list-releases and issues (testserver_github.c). */
void serve_api(int fd, const struct req *rq);
void serve_issues(int fd, const struct req *rq);

#endif
