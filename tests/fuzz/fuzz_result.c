/*
 * fuzz_result.c: a Slurm node's result file as the daemon reads it
 * (bisectd/remote/result.c), before anything of it reaches the store.
 *
 * Properties: a result is taken only when its last line is the sha256 of
 * the body before it, the body is a version 1 result, and it answers the
 * request and plan asked (checked here apart from the reader); anything
 * else is refused with a message that names the file.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/remote/remote.h"
#include "common/err.h"
#include "fetch/sha256.h"
#include "fuzz.h"

#define ID	"0123456789abcdef0123456789abcdef"
#define PLAN	"feedface"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *last;
	struct err e = ERR_INIT;
	json_t *o = NULL;
	char hash[65];
	int rc;

	rc = remote_result_parse(text, size, "r.result", ID, PLAN, &o, &e);
	if (rc != 0) {
		if (o != NULL || rc != REMOTE_REFUSED)
			fuzz_fail("refused, yet %d with a result", rc);
		if (strstr(e.msg, "'r.result'") == NULL)
			fuzz_fail("refusal '%s' does not name the file", e.msg);
		return 0;
	}
	/* Taken: the same judgement made again, here. */
	if (size < 73 || text[size - 1] != '\n')
		fuzz_fail("taken without a checksum line");
	last = text + size - 72;
	if (memcmp(last, "sha256 ", 7) != 0 || last[-1] != '\n')
		fuzz_fail("taken with a last line that is no checksum");
	if (sha256_buf(text, (size_t)(last - 1 - text), hash) < 0 ||
	    memcmp(hash, last + 7, 64) != 0)
		fuzz_fail("taken with a checksum that is not the body's");
	if (!json_is_object(o) || strcmp(json_string_value(json_object_get(o,
	    "request")), ID) != 0 || strcmp(json_string_value(json_object_get(
	    o, "plan")), PLAN) != 0 || json_integer_value(json_object_get(o,
	    "version")) != 1)
		fuzz_fail("taken for another request, plan or version");
	json_decref(o);
	return 0;
}
