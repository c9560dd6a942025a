/*
 * report_int.h: what report_json.c (the parts of a report it writes and
 * reads) shares with report_read.c (the parts it only reads, whose JSON
 * is written where they are made): the tables of an object's members,
 * and each file's part of report_read() and report_clear().
 */
#ifndef BISECTD_REPORT_REPORT_INT_H
#define BISECTD_REPORT_REPORT_INT_H

#include <stddef.h>

struct json_t;
struct report;
struct report_serve;

/*
 * The members of a flat object (a cell, its confirmation runs, the
 * machine) as a table, so that each key is written once for both ways:
 * report_json.c writes them in the table's order, report_fields_read()
 * reads them back.
 */
enum field_type {
	F_REAL,		/* double: a number, null when not finite */
	F_INT,		/* long long */
	F_STR,		/* const char *: left out when NULL; "" when read
			 * and missing */
	F_OPT_STR,	/* const char *: left out when NULL, NULL when read
			 * and missing */
	F_CHARS,	/* char[size]: copied whole when read */
	F_TRUE,		/* int: true, left out when 0 */
	F_BOOL,		/* int: true or false */
	F_POSITIVE,	/* long long: left out when 0 or less */
};

struct field {
	const char *key;
	enum field_type type;
	size_t off, size;	/* in the struct */
};

#define FIELD(s, member, type) FIELD_AS(s, member, #member, type)
#define FIELD_AS(s, member, key, type) { key, type, offsetof(s, member), \
	sizeof(((s *)0)->member) }

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* The n members of table f from object o into the struct at v; a
 * member missing is NAN, "" or NULL as its type says. */
void report_fields_read(const struct field *f, size_t n,
    const struct json_t *o, void *v);

/* o[name] and its interval o[name_ci]; NAN where missing. */
void report_value_ci_read(const struct json_t *o, const char *name,
    double *value, double *lo, double *hi);

/* A release's "serve" object sv into *out: 0, or -1 when out of memory
 * (free with report_serve_clear() either way). */
int report_serve_read(const struct json_t *sv, struct report_serve *out);
void report_serve_clear(struct report_serve *s);

/* The verdict, reproduce, "about" and serve profile of the report's
 * JSON rep into *out: 0, or -1 when out of memory (free with
 * report_parts_clear() either way). */
int report_parts_read(const struct json_t *rep, struct report *out);
void report_parts_clear(struct report *r);

#endif
