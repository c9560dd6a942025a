/* sha256.c: streaming SHA-256 on libcrypto (see sha256.h). */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "sha256.h"

int
sha256_init(struct sha256_ctx *c)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		c->md = NULL;
		return -1;
	}
	c->md = md;
	return 0;
}

int
sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	return EVP_DigestUpdate(c->md, data, len) == 1 ? 0 : -1;
}

int
sha256_final(struct sha256_ctx *c, char hex[SHA256_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	int rc = EVP_DigestFinal_ex(c->md, md, &len) == 1 && len == 32 ? 0 : -1;

	EVP_MD_CTX_free(c->md);
	c->md = NULL;
	if (rc < 0)
		return -1;
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

void
sha256_abort(struct sha256_ctx *c)
{
	EVP_MD_CTX_free(c->md);
	c->md = NULL;
}

int
sha256_buf(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx c;

	if (sha256_init(&c) < 0)
		return -1;
	if (sha256_update(&c, data, len) < 0) {
		sha256_abort(&c);
		return -1;
	}
	return sha256_final(&c, hex);
}

static int
hash_chunk(void *arg, const void *data, size_t len, struct err *e)
{
	(void)e;
	sha256_update(arg, data, len);
	return 0;
}

int
sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1], struct err *e)
{
	struct sha256_ctx c;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, "cannot open '%s'", path);
	if (sha256_init(&c) < 0) {
		close(fd);
		return err_set(e, "cannot hash '%s': libcrypto failed", path);
	}
	rc = fs_read_chunks(fd, path, hash_chunk, &c, e);
	close(fd);
	if (rc < 0)
		sha256_abort(&c);
	else if (sha256_final(&c, hex) < 0)
		rc = err_set(e, "cannot hash '%s': libcrypto failed", path);
	return rc;
}

int
sha256_valid_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return i == SHA256_HEX_LEN;
}
