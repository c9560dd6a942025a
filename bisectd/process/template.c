/*
 * template.c: command templates to argument vectors (see template.h).
 * One pass over the template splits words and appends each placeholder's
 * value verbatim to the word being built, so values are never re-split.
 */
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/strv.h"
#include "template.h"

#define NAME_MAX_LEN 32

struct scan {
	const char *tmpl;
	const struct tmpl_vals *vals;
	struct strv *argv;
	struct err *e;
	struct buf word;	/* the argument being built */
	int in_word;		/* something (even an empty value) began it */
	int quoted;		/* it holds quotes, so it is kept even if empty */
};

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int
add_char(struct scan *s, char c)
{
	s->in_word = 1;
	if (buf_add(&s->word, &c, 1) < 0)
		return err_set(s->e, "command template: an argument is longer "
		    "than %d bytes", TMPL_MAX_ARG);
	return 0;
}

static int
add_value(struct scan *s, const char *name, const char *value)
{
	s->in_word = 1;
	if (value != NULL && buf_addstr(&s->word, value) < 0)
		return err_set(s->e, "command template: '{%s}' makes an "
		    "argument longer than %d bytes", name, TMPL_MAX_ARG);
	return 0;
}

static int
end_word(struct scan *s)
{
	if (s->in_word && (s->word.len > 0 || s->quoted)) {
		if (s->argv->n >= TMPL_MAX_ARGS)
			return err_set(s->e, "command template: more than %d "
			    "arguments", TMPL_MAX_ARGS);
		if (strv_pushn(s->argv, s->word.data ? s->word.data : "",
		    s->word.len) < 0)
			return err_errno(s->e, "command template");
	}
	buf_reset(&s->word);
	s->in_word = s->quoted = 0;
	return 0;
}

static const char *
number(int n, char *tmp, size_t len)
{
	if (n < 0)
		return NULL;
	snprintf(tmp, len, "%d", n);
	return tmp;
}

/*
 * At p[0] == '{': a literal "{" for "{{" or a malformed name, else the
 * named value.  Returns how many template bytes were consumed, or -1.
 */
static int
placeholder(struct scan *s, const char *p)
{
	const struct tmpl_vals *v = s->vals;
	char name[NAME_MAX_LEN + 1], tmp[24];
	const char *value;
	size_t n = 0;

	if (p[1] == '{')
		return add_char(s, '{') < 0 ? -1 : 2;
	while (is_name_char(p[1 + n]) && n < NAME_MAX_LEN)
		n++;
	if (n == 0 || p[1 + n] != '}')
		return add_char(s, '{') < 0 ? -1 : 1;
	memcpy(name, p + 1, n);
	name[n] = '\0';

	if (strcmp(name, "bin") == 0)
		value = v->bin;
	else if (strcmp(name, "version") == 0)
		value = v->version;
	else if (strcmp(name, "weights") == 0)
		value = v->weights;
	else if (strcmp(name, "content") == 0)
		value = v->content;
	else if (strcmp(name, "prompt") == 0)
		value = number(v->prompt, tmp, sizeof(tmp));
	else if (strcmp(name, "gen") == 0)
		value = number(v->gen, tmp, sizeof(tmp));
	else if (strcmp(name, "threads") == 0)
		value = number(v->threads, tmp, sizeof(tmp));
	else if (strcmp(name, "src") == 0 && v->src)
		value = v->src;
	else if (strcmp(name, "out") == 0 && v->out)
		value = v->out;
	else if (strcmp(name, "jobs") == 0 && v->jobs >= 0)
		value = number(v->jobs, tmp, sizeof(tmp));
	else if (v->src || v->out)
		return err_set(s->e, "build template: unknown placeholder "
		    "'{%s}' (known: {src} {out} {jobs}; write {{ for a literal "
		    "brace)", name);
	else
		return err_set(s->e, "command template: unknown placeholder "
		    "'{%s}' (known: {bin} {version} {weights} {prompt} {gen} "
		    "{threads} {content}; write {{ for a literal brace)",
		    name);
	if (add_value(s, name, value) < 0)
		return -1;
	return (int)n + 2;
}

/* Outside escapes: a placeholder at t[*i], or the character itself. */
static int
text(struct scan *s, const char *t, size_t *i)
{
	int n;

	if (t[*i] == '{') {
		if ((n = placeholder(s, t + *i)) < 0)
			return -1;
		*i += (size_t)n;
		return 0;
	}
	if (add_char(s, t[*i]) < 0)
		return -1;
	(*i)++;
	return 0;
}

/* The body of a quoted part starting after the opening quote q; returns
 * the offset just past the closing quote, or -1. */
static int
quoted(struct scan *s, size_t at, char q)
{
	const char *t = s->tmpl;
	size_t i = at;

	s->in_word = s->quoted = 1;
	for (;;) {
		char c = t[i];

		if (c == '\0')
			return err_set(s->e, "command template: unterminated "
			    "%s quote at offset %zu", q == '\'' ?
			    "single" : "double", at - 1);
		if (c == q)
			return (int)(i + 1);
		if (q == '"' && c == '\\' && (t[i + 1] == '"' ||
		    t[i + 1] == '\\')) {
			if (add_char(s, t[i + 1]) < 0)
				return -1;
			i += 2;
		} else if (text(s, t, &i) < 0)
			return -1;
	}
}

static int
scan_all(struct scan *s)
{
	const char *t = s->tmpl;
	size_t i = 0;
	int n;

	while (t[i] != '\0') {
		char c = t[i];

		if (is_blank(c)) {
			if (end_word(s) < 0)
				return -1;
			i++;
		} else if (c == '\\') {
			if (t[i + 1] == '\0')
				return err_set(s->e, "command template: "
				    "trailing backslash");
			if (t[i + 1] == '\n') {	/* line continuation */
				i += 2;
				continue;
			}
			if (add_char(s, t[i + 1]) < 0)
				return -1;
			i += 2;
		} else if (c == '\'' || c == '"') {
			if ((n = quoted(s, i + 1, c)) < 0)
				return -1;
			i = (size_t)n;
		} else if (text(s, t, &i) < 0)
			return -1;
	}
	return end_word(s);
}

int
tmpl_expand(const char *tmpl, const struct tmpl_vals *v, struct strv *argv,
    struct err *e)
{
	struct scan s;
	size_t before = argv->n;
	int rc;

	if (strlen(tmpl) > TMPL_MAX_LEN)
		return err_set(e, "command template: longer than %d bytes",
		    TMPL_MAX_LEN);
	memset(&s, 0, sizeof(s));
	s.tmpl = tmpl;
	s.vals = v;
	s.argv = argv;
	s.e = e;
	buf_init(&s.word, TMPL_MAX_ARG);
	rc = scan_all(&s);
	buf_release(&s.word);
	if (rc == 0 && argv->n == before)
		return err_set(e, "command template: empty command");
	return rc;
}

int
tmpl_check(const char *tmpl, struct err *e)
{
	struct tmpl_vals v = { "bin", "0", "weights", "content", 1, 1, 1,
	    NULL, NULL, -1 };
	struct strv argv = STRV_INIT;
	int rc;

	rc = tmpl_expand(tmpl, &v, &argv, e);
	strv_clear(&argv);
	return rc;
}

static int
is_shell_safe(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("_@%+=:,./-", *s)))
			return 0;
	return 1;
}

int
tmpl_quote_argv(const char *const *argv, struct buf *out)
{
	size_t i;
	const char *p;

	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0 && buf_addstr(out, " ") < 0)
			return -1;
		if (is_shell_safe(argv[i])) {
			if (buf_addstr(out, argv[i]) < 0)
				return -1;
			continue;
		}
		if (buf_addstr(out, "'") < 0)
			return -1;
		for (p = argv[i]; *p; p++)
			if ((*p == '\'' ? buf_addstr(out, "'\\''") :
			    buf_add(out, p, 1)) < 0)
				return -1;
		if (buf_addstr(out, "'") < 0)
			return -1;
	}
	return 0;
}
