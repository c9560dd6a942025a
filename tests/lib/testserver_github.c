/*
 * testserver_github.c: the GitHub-shaped API of testserver.c (its header
 * comment lists the paths): list-releases from a file of release objects,
 * and issues and comments that a POST stores and a GET lists.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testserver_int.h"

static uint64_t
fnv1a(const char *p, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	while (len-- > 0) {
		h ^= (unsigned char)*p++;
		h *= 1099511628211ULL;
	}
	return h;
}

/* The 403 of a spent rate limit that resets reset_s from now (an hour
 * when reset_s < 0); limit: the headers before the remaining count, or
 * "". */
static void
rate_limited(int fd, const struct req *rq, const char *limit, long reset_s)
{
	char headers[512];

	snprintf(headers, sizeof(headers), "Content-Type: application/json"
	    "\r\n%sX-RateLimit-Remaining: 0\r\nX-RateLimit-Reset: %lld\r\n",
	    limit, (long long)time(NULL) + (reset_s < 0 ? 3600 : reset_s));
	respond(fd, rq, 403, headers,
	    "{\"message\": \"API rate limit exceeded\"}", 38);
}

/* Read the repository's mode file into mode; consume it if "-once". */
static void
api_mode(const char *dir, char *mode, size_t len)
{
	char path[PATH_MAX + 8], used[PATH_MAX + 16];
	FILE *f;

	mode[0] = '\0';
	snprintf(path, sizeof(path), "%s/mode", dir);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(mode, (int)len, f) == NULL)
		mode[0] = '\0';
	fclose(f);
	mode[strcspn(mode, "\r\n")] = '\0';
	{
		char word[64] = "";

		sscanf(mode, "%63s", word);
		if (strlen(word) > 5 &&
		    strcmp(word + strlen(word) - 5, "-once") == 0) {
			snprintf(used, sizeof(used), "%s.used", path);
			/* rename is atomic: one request wins the mode. */
			if (rename(path, used) < 0)
				mode[0] = '\0';
		}
	}
}

void
serve_api(int fd, const struct req *rq)
{
	char owner[256], repo[256], dir[PATH_MAX], path[PATH_MAX + 32];
	char mode[256], word[64] = "", headers[4096], etag[40];
	const char *p = rq->path + strlen("/api/repos/"), *slash;
	long arg = -1, per_page, page, nitems = 0, first, last_page;
	char *data = NULL, *body = NULL, **lines = NULL;
	size_t dlen = 0, blen = 0;
	FILE *f;

	if ((slash = strchr(p, '/')) == NULL || slash - p >= 256)
		goto notfound;
	snprintf(owner, sizeof(owner), "%.*s", (int)(slash - p), p);
	p = slash + 1;
	if ((slash = strchr(p, '/')) == NULL || slash - p >= 256 ||
	    strcmp(slash, "/releases") != 0)
		goto notfound;
	snprintf(repo, sizeof(repo), "%.*s", (int)(slash - p), p);
	if (!safe_name(owner) || !safe_name(repo))
		goto notfound;
	snprintf(dir, sizeof(dir), "%s/api/%s/%s", root, owner, repo);
	snprintf(path, sizeof(path), "%s/releases.jsonl", dir);
	if ((f = fopen(path, "r")) == NULL)
		goto notfound;
	{
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, f)) > 0) {
			char **nl;

			while (n > 0 && isspace((unsigned char)line[n - 1]))
				line[--n] = '\0';
			if (n == 0)
				continue;
			if ((nl = realloc(lines, (size_t)(nitems + 1) *
			    sizeof(*lines))) == NULL)
				break;
			lines = nl;
			lines[nitems++] = strdup(line);
		}
		free(line);
		fclose(f);
	}

	api_mode(dir, mode, sizeof(mode));
	sscanf(mode, "%63s %ld", word, &arg);
	if (strncmp(word, "ratelimit403", 12) == 0) {
		rate_limited(fd, rq, "X-RateLimit-Limit: 60\r\n", arg);
		goto out;
	}
	if (strncmp(word, "ratelimit429", 12) == 0) {
		snprintf(headers, sizeof(headers),
		    "Content-Type: application/json\r\nRetry-After: %ld\r\n",
		    arg < 0 ? 60 : arg);
		respond(fd, rq, 429, headers,
		    "{\"message\": \"secondary rate limit\"}", 35);
		goto out;
	}

	per_page = query_long(rq->query, "per_page", 30);
	if (per_page < 1)
		per_page = 30;
	if (per_page > 100)
		per_page = 100;
	page = query_long(rq->query, "page", 1);
	if (page < 1)
		page = 1;
	last_page = nitems == 0 ? 1 : (nitems + per_page - 1) / per_page;

	if (strncmp(word, "notjson", 7) == 0 && (arg < 0 || arg == page)) {
		static const char html[] = "<html><body>Service moved"
		    "</body></html>\n";

		respond(fd, rq, 200, "Content-Type: text/html\r\n", html,
		    sizeof(html) - 1);
		goto out;
	}

	first = (page - 1) * per_page;
	for (long i = first; i < nitems && i < first + per_page; i++)
		dlen += strlen(lines[i]) + 1;
	if ((body = malloc(dlen + 3)) == NULL)
		goto out;
	body[blen++] = '[';
	for (long i = first; i < nitems && i < first + per_page; i++) {
		size_t l = strlen(lines[i]);

		if (i > first)
			body[blen++] = ',';
		memcpy(body + blen, lines[i], l);
		blen += l;
	}
	body[blen++] = ']';
	body[blen] = '\0';

	snprintf(etag, sizeof(etag), "\"%016llx\"",
	    (unsigned long long)fnv1a(body, blen));
	snprintf(headers, sizeof(headers),
	    "Content-Type: application/json; charset=utf-8\r\nETag: %s\r\n"
	    "X-RateLimit-Remaining: 59\r\n", etag);
	if (rq->inm[0] != '\0' && strstr(rq->inm, etag) != NULL) {
		respond(fd, rq, 304, headers, NULL, 0);
		goto out;
	}
	{
		const char *host = strcmp(word, "foreignlink") == 0 ?
		    "localhost" : "127.0.0.1";
		char base[1024], link[3000] = "";
		size_t ll;

		snprintf(base, sizeof(base),
		    "http://%s:%d/api/repos/%s/%s/releases?per_page=%ld&page=",
		    host, http_port, owner, repo, per_page);
		if (page > 1)
			snprintf(link + strlen(link), sizeof(link) -
			    strlen(link), "<%s%ld>; rel=\"prev\", ", base,
			    page - 1);
		if (page < last_page)
			snprintf(link + strlen(link), sizeof(link) -
			    strlen(link), "<%s%ld>; rel=\"next\", "
			    "<%s%ld>; rel=\"last\", ", base, page + 1, base,
			    last_page);
		if (page > 1)
			snprintf(link + strlen(link), sizeof(link) -
			    strlen(link), "<%s1>; rel=\"first\", ", base);
		if ((ll = strlen(link)) > 2) {
			link[ll - 2] = '\0';
			snprintf(headers + strlen(headers), sizeof(headers) -
			    strlen(headers), "Link: %s\r\n", link);
		}
	}
	respond(fd, rq, 200, headers, body, blen);
out:
	for (long i = 0; i < nitems; i++)
		free(lines[i]);
	free(lines);
	free(body);
	free(data);
	return;
notfound:
	respond_text(fd, rq, 404, "{\"message\": \"Not Found\"}\n");
}


/* The numbers of DIR's N.json files under the root, newest first, into
 * *v (malloced); how many. */
static size_t
numbered(const char *dir, long **v)
{
	char d[2 * PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *dp;

	*v = NULL;
	snprintf(d, sizeof(d), "%s/%s", root, dir);
	if ((dp = opendir(d)) == NULL)
		return 0;
	while ((de = readdir(dp)) != NULL) {
		char *end;
		long k = strtol(de->d_name, &end, 10);
		long *nv;

		if (k <= 0 || strcmp(end, ".json") != 0 ||
		    (nv = realloc(*v, (n + 1) * sizeof(**v))) == NULL)
			continue;
		*v = nv;
		(*v)[n++] = k;
	}
	closedir(dp);
	/* Newest first, as GitHub lists issues by sort=created desc. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && (*v)[j - 1] < (*v)[j]; j--) {
			long t = (*v)[j];

			(*v)[j] = (*v)[j - 1];
			(*v)[j - 1] = t;
		}
	return n;
}

/* GET: the stored bodies as one JSON array. */
static void
list_numbered(int fd, const struct req *rq, const char *dir)
{
	long *v;
	size_t n = numbered(dir, &v), len = 2, off = 0;
	char *body;

	for (size_t i = 0; i < n; i++) {
		char p[3 * PATH_MAX];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s/%ld.json", root, dir, v[i]);
		if (stat(p, &st) == 0)
			len += (size_t)st.st_size + 1;
	}
	if ((body = malloc(len + 1)) == NULL) {
		free(v);
		return;
	}
	body[off++] = '[';
	for (size_t i = 0; i < n; i++) {
		char p[3 * PATH_MAX];
		FILE *f;
		size_t got;

		snprintf(p, sizeof(p), "%s/%s/%ld.json", root, dir, v[i]);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		if (off > 1)
			body[off++] = ',';
		got = fread(body + off, 1, len - off - 1, f);
		off += got;
		fclose(f);
	}
	body[off++] = ']';
	respond(fd, rq, 200, "Content-Type: application/json\r\n", body, off);
	free(body);
	free(v);
}

/*
 *   /api/repos/OWNER/REPO/issues[?...]
 *   /api/repos/OWNER/REPO/issues/N/comments[?...]
 *   /api/repos/OWNER/REPO/commits/SHA/comments[?...]
 *                        POST stores the request's body (JSON) as
 *                        --root/api/OWNER/REPO/issues/K.json (comments:
 *                        issue-N-comments/K.json, commit-SHA-comments/
 *                        K.json), K = 1, 2, ..., and
 *                        answers 201 {"number": K} ({"id": K}); GET
 *                        answers the stored bodies, newest first, as one
 *                        JSON array.  The Authorization header of each
 *                        POST is kept in --root/api/OWNER/REPO/auth.  The
 *                        mode file beside releases.jsonl may hold:
 *                          post500-once     a 500 to one POST
 *                          post422          422 Validation Failed
 *                          lost-once        one POST stored, its answer
 *                                           never sent (connection closed)
 *                          ratelimit403 S   403, X-RateLimit-Remaining: 0
 */
void
serve_issues(int fd, const struct req *rq)
{
	char owner[256], repo[256], dir[PATH_MAX], store[PATH_MAX + 64];
	char mode[256], word[64] = "", reply[64], sha[65];
	const char *p = rq->path + strlen("/api/repos/"), *rest;
	long arg = -1, number = 0;
	int k;

	if (sscanf(p, "%255[^/]/%255[^/]/", owner, repo) != 2 ||
	    !safe_name(owner) || !safe_name(repo)) {
		respond_text(fd, rq, 404, "{\"message\": \"Not Found\"}\n");
		return;
	}
	rest = p + strlen(owner) + strlen(repo) + 2;
	if (strcmp(rest, "issues") == 0)
		snprintf(store, sizeof(store), "api/%s/%s/issues", owner, repo);
	else if (sscanf(rest, "issues/%ld/comments", &number) == 1 &&
	    number > 0)
		snprintf(store, sizeof(store), "api/%s/%s/issue-%ld-comments",
		    owner, repo, number);
	else if (sscanf(rest, "commits/%64[^/]/comments", sha) == 1 &&
	    safe_name(sha)) {
		snprintf(store, sizeof(store), "api/%s/%s/commit-%s-comments",
		    owner, repo, sha);
		number = -1;	/* a comment: answered with its id */
	} else {
		respond_text(fd, rq, 404, "{\"message\": \"Not Found\"}\n");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/api/%s/%s", root, owner, repo);
	if (strcmp(rq->method, "GET") == 0) {
		list_numbered(fd, rq, store);
		return;
	}
	if (strcmp(rq->method, "POST") != 0) {
		respond_text(fd, rq, 405, "{\"message\": \"Not Allowed\"}\n");
		return;
	}
	{
		char path[PATH_MAX + 16];
		FILE *f;

		snprintf(path, sizeof(path), "%s/auth", dir);
		if ((f = fopen(path, "w")) != NULL) {
			fprintf(f, "%s\n", rq->auth);
			fclose(f);
		}
	}
	api_mode(dir, mode, sizeof(mode));
	sscanf(mode, "%63s %ld", word, &arg);
	if (strcmp(word, "post500-once") == 0) {
		respond_text(fd, rq, 500, "{\"message\": \"Server Error\"}\n");
		return;
	}
	if (strcmp(word, "post422") == 0) {
		static const char failed[] =
		    "{\"message\": \"Validation Failed\"}";

		respond(fd, rq, 422, "Content-Type: application/json\r\n",
		    failed, sizeof(failed) - 1);
		return;
	}
	if (strncmp(word, "ratelimit403", 12) == 0) {
		rate_limited(fd, rq, "", arg);
		return;
	}
	if ((k = store_numbered(store, "json", rq->body, rq->body_len)) < 0) {
		respond_text(fd, rq, 500, "{\"message\": \"cannot store\"}\n");
		return;
	}
	/* Taken, and the answer lost on the way. */
	if (strcmp(word, "lost-once") == 0)
		return;
	snprintf(reply, sizeof(reply), "{\"%s\": %d}", number ? "id" :
	    "number", k);
	respond(fd, rq, 201, "Content-Type: application/json\r\n", reply,
	    strlen(reply));
}
