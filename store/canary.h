/*
 * canary.h: the output canary's runs and their texts.
 */
#ifndef STORE_CANARY_H
#define STORE_CANARY_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

struct err;
struct store;
struct store_run_end;

/* --- the output canary --- */
/* The id of the canary definition key (the sha256 of text), recorded
 * with its text when new. */
int store_canary_definition_ensure(struct store *s, const char *key,
    const char *text, int64_t *id, struct err *e);

struct store_canary_run {
	int64_t id;		/* out */
	int64_t release_id, weights_id, machine_id, definition_id;
	int64_t started;
	struct store_run_end end;	/* failure NULL: it ran and its
					 * text was read */
	const char *text;	/* the generated text; NULL when failed */
	size_t text_len;
	const char *sha256;	/* of text; NULL when failed */
	uint64_t out_bytes;
};

int store_canary_insert(struct store *s, struct store_canary_run *r,
    struct err *e);

struct store_canary_row {
	int64_t id;
	int64_t started;
	int64_t wall_ns;	/* -1: none */
	char *definition;	/* its definition's key */
	char *definition_text;	/* and canonical text */
	char *failure;		/* NULL: ok */
	char *failure_detail;
	char *text;		/* NUL-terminated, text_len bytes before it;
				 * NULL when failed */
	size_t text_len;
	char *sha256;		/* NULL when failed */
	char *err_tail;		/* NULL when none */
	size_t err_len;
};

struct store_canary_rows {
	struct store_canary_row *v;	/* oldest first; malloced */
	size_t n;
};

/* The canary runs of a release under the definition with key def_key,
 * or under every definition when def_key is NULL. */
int store_canary_list(struct store *s, int64_t release_id,
    const char *def_key, struct store_canary_rows *out, struct err *e);
void store_canary_rows_release(struct store_canary_rows *r);

#endif
