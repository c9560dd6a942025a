/*
 * conf_int.h: what the configuration's files share inside config/: the
 * loader (the configuration being built, its problems, the line map of
 * the file), one key's entry as read, and the value setters of the key
 * table (keys.c).  load.c reads the file and dispatches each entry
 * through the table; linemap.c finds lines; checks.c judges the whole.
 */
#ifndef CONFIG_CONF_INT_H
#define CONFIG_CONF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/strv.h"

struct conf;

/* One key occurrence in the file's text, for line numbers. */
struct linekey {
	char *name;	/* "section.subsection.key" as libgit2 names it */
	int line;
};

struct conf_loader {
	struct conf *c;
	struct strv *problems;
	struct linekey *keys;
	size_t nkeys;
	const char *file;	/* as given, for messages */
	struct strv escapes;	/* invalid escapes, with their lines */
};

/* One key's value as read, for a setter. */
struct conf_entry {
	const char *section;	/* lowercased */
	const char *sub;	/* case kept, or NULL */
	const char *key;	/* lowercased */
	const char *value;	/* never NULL: a bare key reads as "true" */
	int line;		/* 0 for a default */
	char label[320];	/* "engine.basert.timeout" for messages */
};

/* One problem, "FILE:LINE: MSG" (or "FILE: MSG" for line 0). */
void ld_problem(struct conf_loader *ld, int line, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* linemap.c: the line of each key, which libgit2 does not give. */
void linemap_build(struct conf_loader *ld, const char *text);
/* text with every line outside [bisectd] sections blanked, the line
 * count kept, for conf_load_core().  Caller frees. */
char *core_text(const char *text, size_t len);
/* The line of the nth (from 0) occurrence of name, or 0 if unknown. */
int linemap_find(const struct conf_loader *ld, const char *name, int nth);
/* The line of a section header ("engine.NAME"), found through its first
 * key. */
int linemap_section(const struct conf_loader *ld, const char *prefix);

/* checks.c: every check across keys and sections, once all are read. */
void conf_check_all(struct conf_loader *ld);

struct conf_engine;
/* What an engine or a matrix owns beside its name (load.c). */
void conf_engine_free(struct conf_engine *g);

/* names (NULL-terminated) as "a, b or c" into buf. */
void conf_or_list(const char *const *names, char *buf, size_t len);

/* A copy of s; aborts when a few bytes cannot be had at start-up. */
char *conf_xstrdup(const char *s);

/* The setters of the key types (key_use.c) that keys' own setters use:
 * a string, a path made absolute against the file's folder, whether v
 * is an http(s) URL (or file://), and a duration of at least lo ms. */
void conf_set_str(char **field, const char *v);
void conf_set_path(struct conf_loader *ld, char **field, const char *v);
int conf_valid_url(const char *v, int allow_file);
void conf_want_duration(struct conf_loader *ld, const struct conf_entry *en,
    int64_t lo, int64_t *out);

#endif
