/*
 * keys.h: every key of the configuration, one row each: its section,
 * name, type and field, bounds, default and a line of documentation.
 * load.c parses and frees through the table, test_conf_keys checks that
 * bisectd.conf.example shows exactly its keys (and so bisectd.conf(5),
 * made from the example), and docs/config-keys.md is generated from it
 * (conf_keys_reference(), written by test_conf_keys --write).
 */
#ifndef CONFIG_KEYS_H
#define CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct conf_entry;
struct conf_loader;

enum conf_section {
	CONF_BISECTD,		/* [bisectd]: struct conf */
	CONF_WEIGHTS,		/* [weights "NAME"]: struct conf_weights */
	CONF_ENGINE,		/* [engine "NAME"]: struct conf_engine */
	CONF_RUNNER,		/* [runner "NAME"]: struct conf_runner */
	CONF_ABLATION,		/* [ablation "NAME"]: struct conf_ablation */
	CONF_ALERT,		/* [alert "NAME"]: struct conf_alert */
	CONF_YARDSTICK,		/* [yardstick]: struct conf */
	CONF_COMPARE,		/* [compare "NAME"]: struct conf_compare */
	CONF_NSECTIONS
};

enum conf_key_type {
	CK_STR,			/* char *, as written */
	CK_PATH,		/* char *, made absolute against the file's
				 * folder */
	CK_URL,			/* char *, an http(s) URL */
	CK_SHA256,		/* char *, 64 hex digits, lowercased */
	CK_BOOL,		/* int: true/yes/on/1 or false/no/off/0 */
	CK_INT,			/* int, from lo to hi */
	CK_ENUM,		/* int, the index of the value in names */
	CK_DURATION,		/* int64_t ms, at least lo */
	CK_PERCENT,		/* double, a fraction */
	CK_SIZE,		/* uint64_t bytes, above zero */
	CK_LENGTHS,		/* int[CONF_MAX_LENGTHS], its count a size_t
				 * at off_n */
	CK_ENV,			/* struct strv of NAME=VALUE, repeatable */
	CK_CUSTOM		/* set() of its own; owns as owned says */
};

/* What conf_free() frees at a CK_CUSTOM key's field. */
enum conf_owned { CO_NONE, CO_STR, CO_STRV };

struct conf_key {
	enum conf_section section;
	const char *name;
	enum conf_key_type type;
	size_t off;			/* the field in the section's struct */
	size_t off_n;			/* CK_LENGTHS: the count's field */
	int64_t lo, hi;			/* CK_INT; CK_DURATION: lo */
	const char *const *names;	/* CK_ENUM: NULL-terminated */
	void (*set)(struct conf_loader *ld, void *obj,
	    const struct conf_entry *en);	/* CK_CUSTOM */
	enum conf_owned owned;		/* CK_CUSTOM */
	size_t line_off;		/* an int field that gets the key's
					 * line, or 0 */
	const char *init;		/* the default, in the key's own
					 * syntax, set when the section starts;
					 * or NULL */
	const char *form;		/* the value, for people: "PATH" */
	const char *dflt;		/* the default for people when it is
					 * not init (computed, or inherited);
					 * or NULL */
	const char *doc;		/* one line */
};

extern const struct conf_key conf_keys[];
extern const size_t conf_nkeys;

/* "bisectd", "weights", ... */
const char *conf_section_name(enum conf_section s);

/* The key called name of section, or NULL. */
const struct conf_key *conf_key_find(enum conf_section section,
    const char *name);

/* The reference of every key as Markdown, one table per section, in the
 * table's order: docs/config-keys.md. */
void conf_keys_reference(FILE *out);

/* For load.c: the key k of obj (the section's struct) set from en. */
void conf_key_set(struct conf_loader *ld, void *obj, const struct conf_key *k,
    const struct conf_entry *en);
/* Each key of section that has a default, set to it in obj. */
void conf_key_defaults(struct conf_loader *ld, enum conf_section section,
    void *obj, const char *label);
/* Free what obj's keys of section own, and NULL it. */
void conf_key_free(enum conf_section section, void *obj);

#endif
