/*
 * matrix.h: one range across a matrix's cells (docs/fleet.md): each
 * runner and weights file its own report, and one table of them, which
 * says where the range regressed and where it did not, with what power.
 */
#ifndef BISECTD_REPORT_MATRIX_H
#define BISECTD_REPORT_MATRIX_H

#include <stdio.h>

#include "print.h"
#include "report.h"

struct conf;
struct conf_engine;
struct err;
struct json_t;
struct report_opts;
struct store;

/* A cell's part of the table. */
struct report_matrix_cell {
	const char *name;	/* its engine: "ENGINE/RUNNER/WEIGHTS" */
	const char *runner;	/* "" for this machine */
	const char *weights;
	int code;		/* its report's exit code */
	char *error;		/* why it has no report; NULL: it has one */
	struct json_t *json;	/* its report, or NULL */
	struct report rep;	/* read from json; zero without it */
	/* The same for people: upstream's strings with their controls
	 * written out (text_escape.h), read once. */
	struct json_t *esc;
	struct report esc_rep;
};

struct report_matrix {
	const char *name;	/* the matrix's [engine] */
	const char *spec;	/* "A..B" */
	struct report_matrix_cell *cells;	/* malloced */
	size_t ncells;
};

/*
 * The report of spec on every cell of matrix m, as report_build() makes
 * each from the store alone.  A cell whose report cannot be built (its
 * store lacks a version) keeps its error, and the others go on.  The
 * exit code is a regression's if any cell regressed, else a failure's
 * if one could not be built, else an unknown's if any is, else 0.
 * Returns 0, or -1 when out of memory.
 */
int report_matrix_build(const struct conf *c, const struct conf_engine *m,
    struct store *s, const char *spec, const struct report_opts *o,
    struct report_matrix *out, int *exit_code, struct err *e);
void report_matrix_clear(struct report_matrix *mx);

/* The table as JSON (docs/fleet.md): a new reference, NULL when out of
 * memory. */
struct json_t *report_matrix_json(const struct report_matrix *mx);

/*
 * Every cell of mx but the one called self in words, for an alert:
 * "m/a/x: no regression (within noise, would have seen 6.0%); m/b/y:
 * not judged over A..B yet", into buf (len bytes).  Returns buf.
 */
const char *report_matrix_others(const struct report_matrix *mx,
    const char *self, char *buf, size_t len);

/*
 * The matrix's verdict in one line, for its alert, once every cell has
 * decided (regression, gradual or no regression) and one of them moved:
 * "m A..B: m/a/x regressed at B (per-token +99.2% [...]); unchanged:
 * m/b/x (within noise, would have seen 6.0%), ...".  Returns 1 with buf
 * filled, 0 while a cell is undecided or none moved.
 */
int report_matrix_verdict(const struct report_matrix *mx, char *buf,
    size_t len);

/* The table in format f; HTML a grid of runners by weights. */
void report_matrix_print(const struct report_matrix *mx, enum report_format f,
    FILE *out);

#endif
