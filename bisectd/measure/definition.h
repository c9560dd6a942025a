/*
 * definition.h: what a run of an engine executes, described two ways: as
 * the canonical JSON and sha256 key its runs are stored under (a bench
 * cell's, a canary's), and as the command line people can run again;
 * and how such a run ended, in the store's form.  Shared by bench.c,
 * canary.c and serve_run.c.
 */
#ifndef BISECTD_MEASURE_DEFINITION_H
#define BISECTD_MEASURE_DEFINITION_H

#include <stddef.h>

struct buf;
struct child_spec;
struct conf_engine;
struct err;
struct json_t;
struct run_result;
struct store_run_end;
struct strv;
struct tmpl_vals;

/*
 * o (taken) as canonical JSON, compact with sorted keys however it was
 * put together, in *text (malloced), and its sha256 in key.  -1 when
 * memory runs out.
 */
int def_seal(struct json_t *o, char **text, char key[65]);

/* A new JSON array of v's strings. */
struct json_t *def_strv_json(const struct strv *v);

/* A new JSON array of n lengths. */
struct json_t *def_lengths_json(const int *v, size_t n);

/*
 * The command line template tmpl of eng (its command, its canary)
 * executes with v, for people to run again: preceded by "cd WORKDIR &&"
 * and "env NAME=VALUE ..." when the engine sets them, each word quoted
 * for a POSIX shell.  Appended to out.  Returns 0, or -1 with e set (the
 * template, named key, does not expand, or out's limit is reached).
 */
int def_command_line(const struct conf_engine *eng, const char *tmpl,
    const char *key, const struct tmpl_vals *v, struct buf *out,
    struct err *e);

/* Where and how a run of eng (a bench cell, a canary) executes, into
 * spec: the engine's environment, folder, timeout and memory cap. */
void def_child_spec(const struct conf_engine *eng, struct child_spec *spec);

/*
 * How the run of r ended, as the store keeps it: the runner's clock, the
 * exit status or signal, stderr's tail (pointing into r) and, when it
 * did not run to its end, the failure's stored name with run_describe()'s
 * line written into detail.  A run that ended well has failure NULL:
 * what its output says is the caller's to judge.
 */
void def_stored_end(const struct run_result *r, char *detail, size_t len,
    struct store_run_end *end);

#endif
