/*
 * pages.h: what the daemon's HTTP server shows besides the JSON of
 * bisectctl: the status page (HTML) and the metrics (Prometheus text
 * format).  Each reads the store and the configuration it is given and
 * writes into a buffer; nothing here knows HTTP.
 */
#ifndef BISECTD_PAGES_H
#define BISECTD_PAGES_H

struct buf;
struct conf;
struct err;
struct json_t;
struct store;

struct page_ctx {
	const struct conf *conf;
	struct store *s;		/* read-only */
	const struct json_t *daemon;	/* the daemon's status object */
};

/*
 * The status page: the running job and its progress, the queue, the
 * newest verdict of each engine, the recent alerts.  Every string from
 * the store or upstream is escaped.  0, or -1 with e.
 */
int page_status(const struct page_ctx *p, struct buf *out, struct err *e);

/*
 * The metrics in Prometheus text format 0.0.4: runs by engine and
 * outcome, failures by reason, jobs and their durations, the queue, the
 * newest verdict per engine, per-token cost and ceiling per engine and
 * release.  0, or -1 with e.
 */
int page_metrics(const struct page_ctx *p, struct buf *out, struct err *e);

/* Append s to out as HTML text, control characters written out. */
int page_html(struct buf *out, const char *s);

#endif
