/*
 * sink.h: what one delivery attempt of an alert to one sink found, as
 * alert_sink.c stores it, and the sinks that live in files of their own.
 */
#ifndef BISECTD_NOTIFY_SINK_H
#define BISECTD_NOTIFY_SINK_H

#include "common/err.h"

struct conf;
struct conf_alert;
struct store;
struct store_alert;

struct sink_outcome {
	int ok;
	long http_status;	/* -1: none */
	int exit_code;		/* -1: none */
	struct err err;
};

/* Each control byte of s (below 0x20, and 0x7f) made a space: upstream
 * text (a tag, a commit's subject, a server's message) in a summary, a
 * mail header or a terminal line.  Returns s. */
char *sink_blank_controls(char *s);

/*
 * github-issue and github-comment (github.c): a confirmed regression
 * alert posted as an issue of k's repository, as a comment on its issue
 * or pull request NUMBER, or (github-comment without NUMBER) as a comment
 * on the first bad commit the verdict's drill-down named, carrying the
 * markdown of `bisectctl report --for-upstream` over the range the alert
 * names.  Every other alert, an unconfirmed regression, and for a
 * commit's comment a verdict that names no commit, is delivered by
 * posting nothing.  A post that carries the
 * alert's marker is looked for first, so a verdict is never posted
 * twice, even after an attempt whose answer was lost.
 */
void github_send(const struct conf *c, struct store *s,
    const struct conf_alert *k, const struct store_alert *a,
    struct sink_outcome *r);

#endif
