/*
 * github.c: the github:OWNER/REPO release source, on the REST API's
 * list-releases endpoint (see source_impl.h): every page by Link
 * rel="next", a conditional first request, a token, and rate limits
 * waited out only when the reset is near.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "config/conf.h"
#include "common/err.h"
#include "http.h"
#include "sha256.h"
#include "release_list.h"
#include "source.h"
#include "source_impl.h"
#include "common/strv.h"

#define DEFAULT_API		"https://api.github.com"
#define PAGE_MAX_BYTES		(16u << 20)
#define RATE_LIMIT_WAITS	3

static void
sleep_s(long s)
{
	struct timespec ts = { (time_t)s, 0 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int
repo_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* OWNER/REPO, each non-empty and of GitHub's name characters. */
static int
valid_repo(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL || slash == s || slash[1] == '\0' ||
	    strchr(slash + 1, '/') != NULL || strstr(s, "..") != NULL)
		return 0;
	for (; *s; s++)
		if (*s != '/' && !repo_char(*s))
			return 0;
	return 1;
}

/* Length of "scheme://host[:port]" at the start of url, 0 if none. */
static size_t
origin_len(const char *url)
{
	const char *p = strstr(url, "://");

	if (p == NULL)
		return 0;
	p += 3;
	p += strcspn(p, "/?#");
	return (size_t)(p - url);
}

/* A next-page URL must stay on the API's origin: the token goes there. */
static int
same_origin(const char *api, const char *url)
{
	size_t n = origin_len(api);

	return n > 0 && origin_len(url) == n &&
	    strncasecmp(api, url, n) == 0;
}

/* GitHub's "message" from an error body, or "". */
static void
api_message(const struct http_response *r, char *out, size_t len)
{
	json_t *root, *m;

	out[0] = '\0';
	if (r->body.len == 0)
		return;
	root = json_loadb(r->body.data, r->body.len, 0, NULL);
	if (root != NULL && (m = json_object_get(root, "message")) != NULL &&
	    json_is_string(m))
		snprintf(out, len, ": %s", json_string_value(m));
	json_decref(root);
}

/* The tag without a leading 'v' before a digit: "v0.2.1" -> "0.2.1". */
static const char *
tag_version(const char *tag)
{
	if ((tag[0] == 'v' || tag[0] == 'V') &&
	    isdigit((unsigned char)tag[1]))
		return tag + 1;
	return tag;
}

/*
 * The asset of release rel for pattern: the one named by expanding
 * {version}, else the only one matching the pattern, else (no pattern)
 * the only asset.  NULL when none fits.
 */
static json_t *
pick_asset(json_t *assets, const char *pattern, const char *version)
{
	json_t *a, *found = NULL;
	char *want;
	size_t i;
	int matches = 0;

	if (!json_is_array(assets))
		return NULL;
	if (pattern == NULL)
		return json_array_size(assets) == 1 ?
		    json_array_get(assets, 0) : NULL;
	if ((want = asset_expand(pattern, version)) == NULL)
		return NULL;
	json_array_foreach(assets, i, a) {
		const char *name = json_string_value(json_object_get(a,
		    "name"));

		if (name == NULL)
			continue;
		if (strcmp(name, want) == 0) {
			free(want);
			return a;
		}
		if (asset_match(pattern, name, NULL)) {
			found = a;
			matches++;
		}
	}
	free(want);
	return matches == 1 ? found : NULL;
}

/* 1 when the JSON string s holds a NUL ("\u0000"), which C text hides. */
static int
has_nul(json_t *s)
{
	const char *v = json_string_value(s);

	return v != NULL && strlen(v) != json_string_length(s);
}

/* List the release as refused, its tag's len bytes escaped. */
static int
add_refused(const char *tag, size_t len, const char *why,
    struct release_list *out)
{
	struct release_info ri;
	int rc;

	memset(&ri, 0, sizeof(ri));
	if ((ri.version = release_version_escape(tag, len)) == NULL)
		return -1;
	ri.refused = (char *)(uintptr_t)why;
	rc = release_list_add(out, &ri);
	free(ri.version);
	return rc;
}

/* Add the release object rel to out when it qualifies. */
static int
add_release(const struct conf_engine *eng, json_t *rel,
    struct release_list *out)
{
	struct release_info ri;
	const char *tag, *name, *url, *digest;
	char hex[SHA256_HEX_LEN + 1];
	json_t *asset, *tagj;

	if (!json_is_object(rel))
		return 0;
	tagj = json_object_get(rel, "tag_name");
	if ((tag = json_string_value(tagj)) == NULL ||
	    json_string_length(tagj) == 0)
		return 0;
	if (json_is_true(json_object_get(rel, "draft")))
		return 0;
	if (json_is_true(json_object_get(rel, "prerelease")) &&
	    !eng->prereleases)
		return 0;
	if (has_nul(tagj))
		return add_refused(tag, json_string_length(tagj),
		    "version holds a NUL byte", out);
	asset = pick_asset(json_object_get(rel, "assets"), eng->asset,
	    tag_version(tag));
	if (asset == NULL)
		return 0;
	name = json_string_value(json_object_get(asset, "name"));
	url = json_string_value(json_object_get(asset,
	    "browser_download_url"));
	if (name == NULL || url == NULL)
		return 0;
	if (has_nul(json_object_get(asset, "name")) ||
	    has_nul(json_object_get(asset, "browser_download_url")))
		return add_refused(tag, strlen(tag), "its asset's name or URL "
		    "holds a NUL byte", out);

	memset(&ri, 0, sizeof(ri));
	ri.version = (char *)(uintptr_t)tag_version(tag);
	ri.url = (char *)(uintptr_t)url;
	ri.asset = (char *)(uintptr_t)name;
	ri.prerelease = json_is_true(json_object_get(rel, "prerelease"));
	/* Older assets have no digest; one that is there vouches for the
	 * transfer from GitHub, not for the publisher. */
	digest = json_string_value(json_object_get(asset, "digest"));
	if (digest != NULL && strncasecmp(digest, "sha256:", 7) == 0 &&
	    sha256_valid_hex(digest + 7)) {
		for (int i = 0; i < SHA256_HEX_LEN; i++)
			hex[i] = (char)tolower((unsigned char)digest[7 + i]);
		hex[SHA256_HEX_LEN] = '\0';
		ri.sha256 = hex;
		ri.sha256_origin = (char *)(uintptr_t)"api-digest";
	}
	return release_list_add(out, &ri);
}

int
github_parse_releases(const struct conf_engine *eng, const char *url,
    const char *json, size_t len, struct release_list *out, struct err *e)
{
	json_error_t jerr;
	json_t *root, *rel;
	size_t i;
	int rc = 0;

	/* A "\u0000" in one tag refuses that release, not the listing. */
	root = json_loadb(json ? json : "", len, JSON_ALLOW_NUL, &jerr);
	if (root == NULL)
		return err_set(e, "'%s' is not JSON (line %d, column %d: %s)",
		    url, jerr.line, jerr.column, jerr.text);
	if (!json_is_array(root)) {
		json_decref(root);
		return err_set(e, "'%s' is not a JSON array of releases", url);
	}
	json_array_foreach(root, i, rel) {
		if (add_release(eng, rel, out) < 0) {
			rc = err_set(e, "'%s': out of memory", url);
			break;
		}
	}
	json_decref(root);
	return rc;
}

static void
format_time(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		snprintf(out, len, "epoch %lld", (long long)t);
}

/*
 * A 403 or 429 that is a rate limit: *wait_s is how long until it lifts,
 * -1 if the answer does not say.  0 when it is not a rate limit.
 */
static int
rate_limited(const struct http_response *r, long *wait_s)
{
	*wait_s = -1;
	if (r->status != 403 && r->status != 429)
		return 0;
	if (r->retry_after_s >= 0)
		*wait_s = r->retry_after_s;
	else if (r->ratelimit_reset >= 0) {
		int64_t d = r->ratelimit_reset - (int64_t)time(NULL) + 1;

		*wait_s = d < 0 ? 0 : (long)d;
	}
	return r->status == 429 || r->ratelimit_remaining == 0 ||
	    r->retry_after_s >= 0;
}

/* GET one page, waiting out a near rate limit.  0, or -1 with e set. */
static int
get_page(const char *url, const struct http_opts *o, long max_wait_s,
    struct http_response *r, struct err *e)
{
	for (int waits = 0;; waits++) {
		char when[64], msg[256];
		long wait_s;

		if (http_get(url, o, r, e) < 0)
			return -1;
		if (!rate_limited(r, &wait_s))
			return 0;
		if (wait_s >= 0 && wait_s <= max_wait_s &&
		    waits < RATE_LIMIT_WAITS) {
			/* At least a second, so a reset in the past can
			 * never turn this into a busy loop. */
			sleep_s(wait_s > 0 ? wait_s : 1);
			continue;
		}
		api_message(r, msg, sizeof(msg));
		if (r->ratelimit_reset >= 0) {
			format_time(r->ratelimit_reset, when, sizeof(when));
			return err_set(e, "GitHub API rate limit for '%s' "
			    "(HTTP %ld%s): it resets at %s, in %ld s", url,
			    r->status, msg, when, wait_s);
		}
		if (wait_s >= 0)
			return err_set(e, "GitHub API rate limit for '%s' "
			    "(HTTP %ld%s): retry after %ld s", url, r->status,
			    msg, wait_s);
		return err_set(e, "GitHub API rate limit for '%s' (HTTP "
		    "%ld%s)", url, r->status, msg);
	}
}

int
github_list(const struct conf_engine *eng, const struct github_opts *go,
    struct source_state *state, struct release_list *out, struct err *e)
{
	struct github_opts defaults = GITHUB_OPTS_INIT;
	struct http_opts o = HTTP_OPTS_INIT;
	struct release_list got = RELEASE_LIST_INIT;
	struct http_response r;
	struct strv headers = STRV_INIT, first_headers = STRV_INIT;
	const char *api = eng->api ? eng->api : DEFAULT_API;
	char *url = NULL, *new_etag = NULL, *base = NULL;
	long max_wait_s;
	int max_pages, page, rc = -1;
	size_t alen;

	if (go == NULL)
		go = &defaults;
	max_wait_s = go->max_wait_s >= 0 ? go->max_wait_s : 60;
	max_pages = go->max_pages > 0 ? go->max_pages : 100;
	if (eng->source_arg == NULL || !valid_repo(eng->source_arg))
		return err_set(e, "engine '%s': '%s' is not OWNER/REPO",
		    eng->name, eng->source_arg ? eng->source_arg : "");
	alen = strlen(api);
	while (alen > 0 && api[alen - 1] == '/')
		alen--;
	if ((base = strndup(api, alen)) == NULL ||
	    asprintf(&url, "%s/repos/%s/releases?per_page=100", base,
	    eng->source_arg) < 0) {
		url = NULL;
		free(base);
		return err_set(e, "engine '%s': out of memory", eng->name);
	}
	if (strv_push(&headers, "Accept: application/vnd.github+json") < 0 ||
	    strv_push(&headers, "X-GitHub-Api-Version: 2022-11-28") < 0 ||
	    strv_extend(&first_headers, &headers) < 0)
		goto nomem;
	if (state != NULL && state->etag != NULL && state->etag[0] != '\0') {
		char *line;

		if (strpbrk(state->etag, "\r\n") != NULL) {
			err_set(e, "engine '%s': bad stored ETag", eng->name);
			goto out;
		}
		if (asprintf(&line, "If-None-Match: %s", state->etag) < 0)
			goto nomem;
		rc = strv_push(&first_headers, line);
		free(line);
		if (rc < 0)
			goto nomem;
		rc = -1;
	}
	o.allow_http = eng->allow_http;
	o.max_bytes = PAGE_MAX_BYTES;
	if (eng->token_env != NULL) {
		const char *t = getenv(eng->token_env);

		if (t != NULL && t[0] != '\0')
			o.token = t;
	}
	http_response_init(&r);
	for (page = 1; url != NULL; page++) {
		if (page > max_pages) {
			err_set(e, "engine '%s': more than %d pages of "
			    "releases at '%s'", eng->name, max_pages, url);
			goto out_r;
		}
		o.headers = page == 1 ? &first_headers : &headers;
		if (get_page(url, &o, max_wait_s, &r, e) < 0) {
			err_prefix(e, "engine '%s'", eng->name);
			goto out_r;
		}
		if (r.status == 304 && page == 1 && state != NULL &&
		    first_headers.n > headers.n) {
			state->not_modified = 1;
			rc = 0;
			goto out_r;
		}
		if (r.status != 200) {
			char msg[256];

			api_message(&r, msg, sizeof(msg));
			err_set(e, "engine '%s': '%s' answered HTTP %ld%s",
			    eng->name, url, r.status, msg);
			goto out_r;
		}
		if (github_parse_releases(eng, url, r.body.data,
		    r.body.len, &got, e) < 0) {
			err_prefix(e, "engine '%s'", eng->name);
			goto out_r;
		}
		if (page == 1 && r.etag != NULL &&
		    (new_etag = strdup(r.etag)) == NULL)
			goto nomem_r;
		free(url);
		url = NULL;
		if (r.link_next != NULL) {
			if (!same_origin(base, r.link_next)) {
				err_set(e, "engine '%s': refusing next page "
				    "'%s': not on '%s'", eng->name,
				    r.link_next, base);
				goto out_r;
			}
			url = r.link_next;
			r.link_next = NULL;
		}
	}
	for (size_t i = 0; i < got.n; i++)
		if (release_list_add(out, &got.v[i]) < 0)
			goto nomem_r;
	if (state != NULL) {
		free(state->etag);
		state->etag = new_etag;
		new_etag = NULL;
	}
	rc = 0;
	goto out_r;
nomem_r:
	err_set(e, "engine '%s': out of memory", eng->name);
out_r:
	http_response_release(&r);
	goto out;
nomem:
	err_set(e, "engine '%s': out of memory", eng->name);
out:
	release_list_release(&got);
	strv_clear(&headers);
	strv_clear(&first_headers);
	free(new_etag);
	free(url);
	free(base);
	return rc;
}

int
source_list_github(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e)
{
	return github_list(eng, NULL, state, out, e);
}

const struct source_kind source_kind_github = { SOURCE_GITHUB, source_list_github };
