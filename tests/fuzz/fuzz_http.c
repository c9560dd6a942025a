/*
 * fuzz_http.c: response headers as libcurl hands them over, `Link`
 * (GitHub's pagination), Retry-After, the rate-limit headers and
 * Content-Range (fetch/http.c).  The input is the header block.  What
 * is kept of a header (the rel="next" URL, the ETag, the Content-Type)
 * is a piece of the input.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fetch/http.h"
#include "fuzz.h"

static void
from_input(const char *what, const char *s, const uint8_t *data, size_t size)
{
	if (s != NULL && (s[0] == '\0' && size == 0 ? 0 :
	    memmem(data, size, s, strlen(s)) == NULL))
		fuzz_fail("%s '%s' is not in the headers", what, s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_response r;
	struct err e = ERR_INIT;

	http_response_init(&r);
	if (http_parse_headers((const char *)data, size, &r, &e) < 0 &&
	    e.msg[0] == '\0')
		fuzz_fail("refused without a message");
	from_input("Link next", r.link_next, data, size);
	from_input("ETag", r.etag, data, size);
	from_input("Content-Type", r.content_type, data, size);
	if (r.retry_after_s < -1)
		fuzz_fail("Retry-After of %ld s", r.retry_after_s);
	http_response_release(&r);
	return 0;
}
