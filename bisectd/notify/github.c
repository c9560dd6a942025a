/*
 * github.c: the github-issue and github-comment alert sinks (see
 * sink.h).  A confirmed regression becomes an issue of the configured
 * repository, a comment on its issue or pull request NUMBER, or (a
 * github-comment without NUMBER) a comment on the first bad commit a
 * commit drill-down named, written as a maintainer upstream reads it:
 * what moved, by how much, since which release, and the `--for-upstream`
 * markdown report (no local path, no host name).
 *
 * The body starts with a marker, an HTML comment holding the sha256 of
 * the alert's dedup key; before posting, the repository's issues (or the
 * issue's comments) are searched for it.  A POST whose answer was lost
 * (a timeout after GitHub took it) is then found on the next attempt and
 * not posted again.  The token comes from the environment variable
 * token-env names; it goes only into the Authorization header, never
 * into a URL, a message, the log or the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectd/report/build.h"
#include "bisectd/report/print.h"
#include "bisectd/search/request.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/strv.h"
#include "config/conf.h"
#include "fetch/gitrepo.h"
#include "fetch/http.h"
#include "fetch/sha256.h"
#include "sink.h"
#include "store/alert_log.h"

#define GITHUB_TIMEOUT_MS	10000
#define GITHUB_REPLY_MAX	(4 << 20)
/* Pages of 100 issues or comments searched for the marker. */
#define GITHUB_PAGES_MAX	10
/* GitHub takes a body of at most 65,536 characters. */
#define GITHUB_BODY_MAX		60000

struct gh {
	const struct conf_alert *k;
	const char *token;
	struct strv headers;
	char repo[256];
	long number;		/* 0: a new issue, or the commit */
	char commit[41];	/* the first bad commit's id, or "" */
	char marker[SHA256_HEX_LEN + 32];
};

/* Where the posts go: an issue's or pull request's comments, a commit's
 * comments, or the repository's issues; *url malloced. */
static int
gh_url(const struct gh *g, const char *query, char **url)
{
	const char *api = g->k->api, *repo = g->repo;
	int n;

	if (g->number)
		n = asprintf(url, "%s/repos/%s/issues/%ld/comments%s", api,
		    repo, g->number, query);
	else if (g->commit[0])
		n = asprintf(url, "%s/repos/%s/commits/%s/comments%s", api,
		    repo, g->commit, query);
	else
		n = asprintf(url, "%s/repos/%s/issues%s", api, repo, query);
	if (n < 0)
		*url = NULL;
	return n < 0 ? -1 : 0;
}

/* What a post is, in messages. */
static const char *
gh_what(const struct gh *g)
{
	return g->number || g->commit[0] ? "comment" : "issue";
}

static void
gh_opts(const struct gh *g, struct http_opts *ho)
{
	/* One quick try: the retries are alert_sink.c's, spread over hours. */
	ho->allow_http = g->k->allow_http;
	ho->connect_timeout_ms = GITHUB_TIMEOUT_MS / 2;
	ho->total_timeout_ms = GITHUB_TIMEOUT_MS;
	ho->low_speed_time_s = GITHUB_TIMEOUT_MS / 1000;
	ho->max_retries = 0;
	ho->max_redirects = 0;
	ho->max_bytes = GITHUB_REPLY_MAX;
	ho->token = g->token;
	ho->headers = &g->headers;
}

/* Text of an alert's or an answer's field, printable (upstream text is
 * in it), cut to len; "" when it is none. */
static void
field(const json_t *o, const char *key, char *buf, size_t len)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(buf, len, "%s", v ? v : "");
	sink_blank_controls(buf);
}

/* What GitHub said besides its status: its "message", printable and
 * short, or "". */
static void
gh_message(const struct http_response *resp, char *buf, size_t len)
{
	json_t *o = json_loadb(resp->body.data ? resp->body.data : "",
	    resp->body.len, 0, NULL);

	field(o, "message", buf, len < 201 ? len : 201);
	json_decref(o);
}

/* The attempt's error from a status that is not the one wanted. */
static void
gh_refused(const char *what, const struct http_response *resp,
    struct sink_outcome *r)
{
	char msg[256];

	gh_message(resp, msg, sizeof(msg));
	if ((resp->status == 403 || resp->status == 429) &&
	    resp->ratelimit_remaining == 0) {
		char when[32] = "later";
		time_t t = (time_t)resp->ratelimit_reset;
		struct tm tm;

		if (resp->ratelimit_reset > 0 && gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ",
			    &tm);
		err_set(&r->err, "GitHub's rate limit is spent until %s "
		    "(%s)", when, what);
	} else
		err_set(&r->err, "GitHub answered HTTP %ld to %s%s%s",
		    resp->status, what, msg[0] ? ": " : "", msg);
}

/* 1 when the marker stands in the body of an issue or comment already,
 * 0 when not, -1 with r set. */
static int
gh_posted(const struct gh *g, struct sink_outcome *r)
{
	struct http_opts ho = HTTP_OPTS_INIT;
	char *url = NULL;
	int found = 0, rc = 0;

	gh_opts(g, &ho);
	if (gh_url(g, g->number || g->commit[0] ? "?per_page=100" :
	    "?state=all&sort=created&direction=desc&per_page=100", &url) < 0)
		return err_set(&r->err, "out of memory");
	for (int page = 0; url && page < GITHUB_PAGES_MAX && !found; page++) {
		struct http_response resp;
		json_t *a, *x;
		size_t i;

		http_response_init(&resp);
		if (http_get(url, &ho, &resp, &r->err) < 0 ||
		    resp.status != 200) {
			if (resp.status > 0)
				r->http_status = resp.status;
			if (resp.status > 0 && resp.status != 200)
				gh_refused("the search for the marker", &resp,
				    r);
			http_response_release(&resp);
			rc = -1;
			break;
		}
		a = json_loadb(resp.body.data ? resp.body.data : "",
		    resp.body.len, 0, NULL);
		json_array_foreach(a, i, x) {
			const char *body = json_string_value(json_object_get(x,
			    "body"));

			if (body && strstr(body, g->marker) != NULL)
				found = 1;
		}
		if (!json_is_array(a)) {
			err_set(&r->err, "GitHub's list of %ss is no JSON "
			    "array", gh_what(g));
			rc = -1;
		}
		json_decref(a);
		free(url);
		url = rc == 0 && resp.link_next ? strdup(resp.link_next) : NULL;
		http_response_release(&resp);
		if (rc < 0)
			break;
	}
	free(url);
	return rc < 0 ? -1 : found;
}

/*
 * The markdown of the report over the alert's range, for upstream, into
 * *md (malloced); a report that cannot be built says why in its place.
 */
static int
gh_report(const struct conf *c, struct store *s, const json_t *o,
    char **md)
{
	const struct conf_engine *eng;
	struct report_opts ro;
	struct err e = ERR_INIT;
	char spec[600], from[256], to[256], metric[64], engine[128];
	json_t *rep = NULL;
	size_t len;
	FILE *f;
	int code;

	field(o, "engine", engine, sizeof(engine));
	field(json_object_get(o, "range"), "from", from, sizeof(from));
	field(json_object_get(o, "range"), "to", to, sizeof(to));
	field(o, "metric", metric, sizeof(metric));
	snprintf(spec, sizeof(spec), "%s..%s", from, to);
	if ((f = open_memstream(md, &len)) == NULL)
		return -1;
	memset(&ro, 0, sizeof(ro));
	bisect_request_init(&ro.req);
	ro.upstream = 1;
	if ((eng = conf_engine(c, engine)) == NULL)
		err_set(&e, "engine %s is no longer configured", engine);
	else if (bisect_request_set(&ro.req, metric[0] ? metric : NULL,
	    NULL) != 0)
		err_set(&e, "metric '%s' is unknown", metric);
	if (e.msg[0] == '\0' &&
	    report_build(c, eng, s, spec, &ro, &rep, &code, &e) == 0) {
		report_print(rep, REPORT_MARKDOWN, f);
		json_decref(rep);
	} else
		fprintf(f, "(the report of %s could not be built: %s)\n", spec,
		    e.msg);
	return fclose(f) == 0 ? 0 : -1;
}

/* The or comment's JSON, malloced, or NULL. */
static char *
gh_document(const struct gh *g, const struct conf *c, struct store *s,
    const json_t *o)
{
	char engine[128], bad[256], good[256], metric[64], change[64];
	char title[900], *md = NULL, *doc;
	struct buf body = BUF_INIT(GITHUB_BODY_MAX + 4096);
	json_t *d;
	int rc;

	field(o, "engine", engine, sizeof(engine));
	field(o, "first_bad", bad, sizeof(bad));
	field(o, "last_good", good, sizeof(good));
	field(o, "metric", metric, sizeof(metric));
	field(o, "change", change, sizeof(change));
	snprintf(title, sizeof(title), "%s %s: %s slower since %s (%s change, "
	    "found by bisectd)", engine, bad, metric, good, change);
	if (gh_report(c, s, o, &md) < 0)
		return NULL;
	rc = buf_printf(&body, "%s\n**%s**\n\n", g->marker, title);
	if (rc == 0 && strlen(md) > GITHUB_BODY_MAX) {
		/* Cut at a line: GitHub refuses a longer body (422). */
		size_t cut = GITHUB_BODY_MAX;

		while (cut > 0 && md[cut - 1] != '\n')
			cut--;
		rc = buf_add(&body, md, cut);
		if (rc == 0)
			rc = buf_printf(&body, "\n(cut here: `bisectctl report "
			    "--for-upstream` prints the whole report)\n");
	} else if (rc == 0)
		rc = buf_addstr(&body, md);
	free(md);
	if (rc < 0 || (d = json_object()) == NULL) {
		buf_release(&body);
		return NULL;
	}
	if (g->number == 0 && g->commit[0] == '\0')
		json_object_set_new(d, "title", json_string(title));
	json_object_set_new(d, "body", json_stringn(body.data, body.len));
	buf_release(&body);
	doc = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	return doc;
}

void
github_send(const struct conf *c, struct store *s, const struct conf_alert *k,
    const struct store_alert *a, struct sink_outcome *r)
{
	struct http_opts ho = HTTP_OPTS_INIT;
	struct http_response resp;
	struct gh g;
	char hex[SHA256_HEX_LEN + 1], *url = NULL, *doc = NULL;
	json_t *o = NULL;
	int posted;

	memset(&g, 0, sizeof(g));
	g.k = k;
	/* Only what a maintainer can act on: a regression that held when
	 * measured again, interleaved. */
	o = json_loads(a->body ? a->body : "", 0, NULL);
	if (strcmp(a->kind, "regression") != 0 || !json_is_true(
	    json_object_get(json_object_get(o, "verdict"), "confirmed"))) {
		r->ok = 1;
		goto out;
	}
	if (!conf_github_target(k->target, g.repo, sizeof(g.repo),
	    &g.number)) {
		err_set(&r->err, "%s '%s' is no OWNER/REPO", k->kind ==
		    ALERT_GITHUB ? "github-issue" : "github-comment",
		    k->target);
		goto out;
	}
	if (k->kind == ALERT_GITHUB_COMMENT && g.number == 0) {
		const char *id = json_string_value(json_object_get(
		    json_object_get(json_object_get(o, "verdict"), "commit"),
		    "id"));

		/* A verdict that names no commit has none to comment on. */
		if (id == NULL) {
			r->ok = 1;
			goto out;
		}
		/* The id goes into a URL: a full hexadecimal id only. */
		if (!gitrepo_is_id(id)) {
			err_set(&r->err, "the first bad commit's id is no "
			    "commit id");
			goto out;
		}
		snprintf(g.commit, sizeof(g.commit), "%s", id);
	}
	if ((g.token = getenv(k->token_env)) == NULL || g.token[0] == '\0') {
		err_set(&r->err, "$%s is not set: GitHub takes no issue "
		    "without a token", k->token_env);
		goto out;
	}
	if (strv_push(&g.headers, "Accept: application/vnd.github+json") < 0 ||
	    strv_push(&g.headers, "X-GitHub-Api-Version: 2022-11-28") < 0 ||
	    sha256_buf(a->dedup_key, strlen(a->dedup_key), hex) < 0) {
		err_set(&r->err, "out of memory");
		goto out;
	}
	snprintf(g.marker, sizeof(g.marker), "<!-- bisectd-alert %s -->", hex);
	if ((posted = gh_posted(&g, r)) != 0) {
		r->ok = posted == 1;
		goto out;
	}
	if ((doc = gh_document(&g, c, s, o)) == NULL ||
	    gh_url(&g, "", &url) < 0) {
		err_set(&r->err, "cannot build the %s of alert %lld",
		    gh_what(&g), (long long)a->id);
		goto out;
	}
	gh_opts(&g, &ho);
	http_response_init(&resp);
	if (http_post(url, &ho, "application/json", doc, strlen(doc), &resp,
	    &r->err) == 0) {
		r->http_status = resp.status;
		if (resp.status == 201)
			r->ok = 1;
		else
			gh_refused(g.number || g.commit[0] ? "the comment" :
			    "the new issue", &resp, r);
	} else if (resp.status > 0)
		r->http_status = resp.status;
	http_response_release(&resp);
out:
	json_decref(o);
	strv_clear(&g.headers);
	free(url);
	free(doc);
}
