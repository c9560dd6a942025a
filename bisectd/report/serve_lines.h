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

/* The profile and targets as JSON (new reference), for the report. */
struct json_t *serve_profile_report(const struct conf_engine *eng);

/*
 * Each of n releases' "serve" object, in an array (new reference), from
 * the runs stored under the engine's serve definition; NULL with e set
 * when the store fails.
 */
struct json_t *serve_releases_json(struct store *s,
    const struct conf_engine *eng, const struct store_release *rels,
    size_t n, const char *weights_sha256, const char *hw_key,
    struct err *e);

/* Put a release's "serve" object (serve_releases_json()'s) in its
 * report entry rj, and the status its runs give where the cells', which
 * know bench cells alone, say "not-measured". */
void serve_release_attach(struct json_t *rj, struct json_t *serve);

/* The lines of a report's releases and profile; nothing for a report
 * of another mode. */
void serve_text(const struct report *rp, FILE *out, int md);
void serve_html(const struct report *rp, FILE *out);

#endif
