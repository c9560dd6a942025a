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

/*
 * What the metrics keep between scrapes: the text of every family read
 * from the store (all but the running job's), valid while the store's
 * data version and the configuration's generation stay the same.  A
 * scrape of an unchanged store costs one PRAGMA; building it again
 * reads every engine's whole range.  Zero it before the first use;
 * page_metrics_cache_release() frees it.
 */
struct metrics_cache {
	int valid;
	int data_version;
	unsigned conf_generation;
	struct buf *store_part;		/* malloced; NULL until built */
	struct buf *verdict_part;	/* likewise */
	unsigned long rebuilds;		/* builds since the cache began */
};

void page_metrics_cache_release(struct metrics_cache *c);

struct page_ctx {
	const struct conf *conf;
	unsigned conf_generation;	/* changes with each reload */
	struct store *s;		/* read-only */
	const struct json_t *daemon;	/* the daemon's status object */
	struct metrics_cache *metrics;	/* page_metrics()'s; may be NULL */
};

/*
 * The status page: the running jobs and their progress; per engine of
 * the configuration its latest verdict in the words of `bisectctl
 * status`, the next watch, the last alert, the reports of its bisected
 * ranges and a plot of its newest measured releases (report/trend.h);
 * the queue (running and queued jobs, in words), the jobs that ended
 * with their outcomes, the Slurm jobs, the recent alerts.  XHTML
 * syntax, inline style and SVG, no script.  Every string from the store
 * or upstream is escaped.  0, or -1 with e.
 */
int page_status(const struct page_ctx *p, struct buf *out, struct err *e);

/*
 * The metrics in Prometheus text format 0.0.4: runs by engine and
 * outcome, failures by reason, jobs and their durations, the queue, the
 * newest verdict per engine, per-token cost and ceiling per engine and
 * release, and how often p->metrics was built (each build counted in
 * bisectd_metrics_rebuilds_total).  Without p->metrics, everything is
 * read from the store.  0, or -1 with e.
 */
int page_metrics(const struct page_ctx *p, struct buf *out, struct err *e);

/* Append s to out as HTML text, control characters written out. */
int page_html(struct buf *out, const char *s);

#endif
