/*
 * serve_lines.h: a serve-mode report's figures.  Built: each release's
 * "serve" object (every figure across its runs with spread and n, its
 * failed and client-bound runs, its requests' failures by type) and
 * the report's "serve_profile".  Rendered: lines in text and Markdown,
 * a table and a percentile chart in HTML.  docs/serve.md describes them.
 */
#ifndef BISECTD_REPORT_SERVE_LINES_H
#define BISECTD_REPORT_SERVE_LINES_H

#include <stddef.h>
#include <stdio.h>

struct conf_engine;
struct err;
struct json_t;
struct report;
struct store;
struct store_release;
struct store_serve_rows;

/* The profile and targets as JSON (new reference), for the report. */
struct json_t *serve_profile_report(const struct conf_engine *eng);

/*
 * The runs of each of n releases rels stored under the engine's serve
 * definition into *out (n of them, malloced; free with
 * serve_rows_free()).  Returns 0, or -1 with e set.
 */
int serve_rows_load(struct store *s, const struct conf_engine *eng,
    const struct store_release *rels, size_t n, const char *weights_sha256,
    const char *hw_key, struct store_serve_rows **out, struct err *e);
void serve_rows_free(struct store_serve_rows *rows, size_t n);

/* Each of n releases' "serve" object from its runs rows[i], in an
 * array: a new reference. */
struct json_t *serve_releases_json(const struct store_serve_rows *rows,
    size_t n);

/* Put a release's "serve" object (serve_releases_json()'s) in its
 * report entry rj, and the status its runs give where the cells', which
 * know bench cells alone, say "not-measured". */
void serve_release_attach(struct json_t *rj, struct json_t *serve);

/* The lines of a report's releases and profile; nothing for a report
 * of another mode. */
void serve_text(const struct report *rp, FILE *out, int md);
void serve_html(const struct report *rp, FILE *out);

#endif
