/*
 * fuzz_template.c: command templates (bisectd/process/template.c).  The
 * input's first line is the template; the next four lines are the values
 * of {bin}, {version}, {weights} and {content}.
 *
 * Properties: a value never changes the words, so two different sets of
 * non-empty values give the same number of arguments; a template that
 * expands passes tmpl_check(); and tmpl_quote_argv()'s line, read back as
 * a template, gives the same arguments when none holds a '{'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectd/process/template.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/strv.h"
#include "fuzz.h"

/* Values every byte of which is special somewhere: blanks, quotes,
 * backslashes, braces. */
static const struct tmpl_vals other = {
	"/o p/t's \"bin\"", "1.0 {version} \\ x", "w\tw", "c\nc", 7, 0, 12,
	NULL, NULL, -1
};

static int
same_argv(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return 0;
	return 1;
}

static int
has_brace(const struct strv *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (strchr(a->v[i], '{') != NULL)
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *tmpl = fuzz_line(&p, end);
	char *bin = fuzz_line(&p, end), *version = fuzz_line(&p, end);
	char *weights = fuzz_line(&p, end), *content = fuzz_line(&p, end);
	struct tmpl_vals v = { bin, version, weights, content, 512, 128, 4,
	    NULL, NULL, -1 };
	struct strv a = STRV_INIT, b = STRV_INIT, back = STRV_INIT;
	struct buf line = BUF_INIT(1 << 24);
	struct err e = ERR_INIT, e2 = ERR_INIT;
	int rc, rc2;

	rc = tmpl_expand(tmpl, &v, &a, &e);
	if (rc < 0 && e.msg[0] == '\0')
		fuzz_fail("tmpl_expand failed without a message");
	if (bin[0] && version[0] && weights[0] && content[0]) {
		rc2 = tmpl_expand(tmpl, &other, &b, &e2);
		if (rc != rc2 || (rc == 0 && a.n != b.n))
			fuzz_fail("values changed the words: %d/%zu args (%s) "
			    "vs %d/%zu args (%s)", rc, a.n, e.msg, rc2, b.n,
			    e2.msg);
	}
	if (rc == 0) {
		if (tmpl_check(tmpl, &e2) < 0)
			fuzz_fail("expands but tmpl_check says: %s", e2.msg);
		if (tmpl_quote_argv((const char *const *)a.v, &line) < 0)
			abort();
		if (!has_brace(&a)) {
			if (tmpl_expand(line.data, &v, &back, &e2) < 0)
				fuzz_fail("quoted line '%s' does not expand: "
				    "%s", line.data, e2.msg);
			if (!same_argv(&a, &back))
				fuzz_fail("quoted line '%s' gives %zu args, "
				    "not the %zu quoted", line.data, back.n,
				    a.n);
		}
	}
	strv_clear(&a);
	strv_clear(&b);
	strv_clear(&back);
	buf_release(&line);
	free(tmpl);
	free(bin);
	free(version);
	free(weights);
	free(content);
	return 0;
}
