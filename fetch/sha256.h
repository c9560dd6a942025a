/*
 * sha256.h: streaming SHA-256 over libcrypto's EVP interface, and the hex
 * form every other module stores and compares.
 */
#ifndef FETCH_SHA256_H
#define FETCH_SHA256_H

#include <stddef.h>

struct err;

#define SHA256_HEX_LEN 64

struct sha256_ctx {
	void *md;	/* EVP_MD_CTX *, owned */
};

int sha256_init(struct sha256_ctx *c);
int sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* Writes 64 lowercase hex digits and a NUL into hex[65]; frees c. */
int sha256_final(struct sha256_ctx *c, char hex[SHA256_HEX_LEN + 1]);
/* Frees c without a result (error paths). */
void sha256_abort(struct sha256_ctx *c);

/* Hash len bytes at data in one call.  Returns 0, or -1 (libcrypto). */
int sha256_buf(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

/* Hash the whole file at path. */
int sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1], struct err *e);

/* 1 when s is 64 hex digits (either case), else 0. */
int sha256_valid_hex(const char *s);

#endif
