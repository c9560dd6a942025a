/*
 * template.h: turning an engine's command template ("{bin}/bench -p
 * {prompt} ...") into an argument vector, without a shell.  The template
 * is split into words first and placeholders are substituted inside each
 * word afterwards, so a value (a version, a path) can never become
 * another argument, let alone another command.
 */
#ifndef BISECTD_TEMPLATE_H
#define BISECTD_TEMPLATE_H

struct err;
struct strv;
struct buf;

/* The values placeholders stand for.  A NULL string or a negative number
 * expands to the empty string. */
struct tmpl_vals {
	const char *bin;	/* {bin}: the unpacked release's root */
	const char *version;	/* {version} */
	const char *weights;	/* {weights}: the weights file or folder */
	const char *content;	/* {content}: path of the decode text */
	int prompt;		/* {prompt}: prompt tokens */
	int gen;		/* {gen}: tokens to generate */
	int threads;		/* {threads} */
	/* A build line's ({src}, {out}, {jobs}): known placeholders only
	 * where set (non-NULL, jobs >= 0), so a bench command that names
	 * them is refused. */
	const char *src;	/* {src}: the clean checkout */
	const char *out;	/* {out}: the folder that becomes {bin} */
	int jobs;		/* {jobs}: parallel build jobs */
};

#define TMPL_VALS_INIT { NULL, NULL, NULL, NULL, -1, -1, -1, NULL, NULL, -1 }

/* Longest template, and most bytes one expanded argument may have. */
#define TMPL_MAX_LEN (64 * 1024)
#define TMPL_MAX_ARG (128 * 1024)
#define TMPL_MAX_ARGS 4096

/*
 * Split tmpl into words and expand its placeholders, appending one string
 * per argument to argv (which the caller owns and clears).
 *
 * Words: blanks (space, tab, newline) separate words; '...' keeps
 * everything literally up to the next quote; "..." likewise, except that
 * \" and \\ stand for " and \; outside quotes a backslash makes the next
 * character literal.  There are no variables, globs, redirections or
 * command substitutions: "$(x)", ";", "|" and "*" are ordinary characters.
 *
 * Placeholders: {bin} {version} {weights} {prompt} {gen} {threads}
 * {content}, expanded wherever they appear (inside quotes too), except
 * after a backslash outside quotes; "{{" is a literal "{".  A "{" that
 * does not start a well-formed {name} is literal; a well-formed {name}
 * that is not one of the above is an error naming it.  The value is
 * copied verbatim into the current word.  As in the shell, an unquoted
 * word that expands to nothing is dropped, while "" or '' gives an empty
 * argument.
 *
 * Returns 0, or -1 with e set (unterminated quote, trailing backslash,
 * unknown placeholder, empty command, limits passed); argv may then hold
 * part of the result.
 */
int tmpl_expand(const char *tmpl, const struct tmpl_vals *v,
    struct strv *argv, struct err *e);

/*
 * Check tmpl's syntax and placeholder names without values, for
 * check-config.  Returns 0 or -1 with e set.
 */
int tmpl_check(const char *tmpl, struct err *e);

/*
 * Append argv to out as one line a POSIX shell would split back into the
 * same words (single quotes where needed), for "how to reproduce" in
 * reports.  Returns 0, or -1 when out's limit is reached.
 */
int tmpl_quote_argv(const char *const *argv, struct buf *out);

#endif
