/*
 * http.h: the daemon's read-only HTTP server ([bisectd] http): the
 * status page, the reports, /api/ (the JSON bisectctl prints) and
 * /metrics.  It runs in a thread of its own at the lowest CPU priority,
 * reads the store through a read-only connection of its own, and never
 * writes anything: a benchmark in progress only shares the machine with
 * it.  libmicrohttpd is used here and nowhere else.
 */
#ifndef BISECTD_HTTP_H
#define BISECTD_HTTP_H

struct conf;
struct err;
struct http_server;
struct json_t;

/* At most this many connections at once; more wait in the backlog. */
#define HTTP_CONNECTIONS_MAX	16
/* A connection silent this long is closed ... */
#define HTTP_IDLE_S		5
/* ... and any connection this old, however busy: a client that trickles
 * a request byte by byte holds a slot for no longer. */
#define HTTP_CONNECTION_MS	15000
/* Memory per connection, the request line and headers included: a
 * larger request is refused. */
#define HTTP_REQUEST_MAX	16384

struct http_opts {
	const char *address;	/* numeric */
	int port;		/* 0: any free one */
	const char *database;
	/*
	 * The daemon's status object, as its control socket answers
	 * `status` (a new reference, or NULL).  Called from the server's
	 * thread.
	 */
	struct json_t *(*status)(void *arg);
	/* The configuration in force, held from conf_hold() to
	 * conf_release() around each request. */
	const struct conf *(*conf_hold)(void *arg);
	void (*conf_release)(void *arg);
	/* A number each reload changes, read while the configuration is
	 * held: what the server keeps from one configuration is dropped
	 * with it.  May be NULL. */
	unsigned (*conf_generation)(void *arg);
	/* Problems of the server itself (not of clients): one line each,
	 * with syslog's levels as daemon.h's. */
	void (*log)(void *arg, int level, const char *msg);
	void *arg;
};

/*
 * Listen and start serving in a thread of its own.  Returns 0 with *out
 * and *port (the port bound), or -1 with e (the address is in use, ...).
 */
int http_start(const struct http_opts *o, struct http_server **out,
    int *port, struct err *e);

/* Stop serving, close every connection and free h.  NULL is fine. */
void http_stop(struct http_server *h);

#endif
