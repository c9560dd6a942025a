/* check_json.c: bisectctl's JSON answers for the tests (see check_json.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_json.h"

int
check_ctl_json(const char *ctl, const char *args, int quiet, json_t **out)
{
	char *text = NULL;
	int rc = check_ctl_run(ctl, args, &text);

	*out = text ? json_loads(text, 0, NULL) : NULL;
	if (*out == NULL && !quiet) {
		char *err = check_read_file("stderr.txt");

		fprintf(stderr, "not JSON from '%s' (rc %d): %s\nstderr: %s\n",
		    args, rc, text ? text : "", err ? err : "");
		free(err);
	}
	free(text);
	return rc;
}

json_t *
check_ctl_ok_json(const char *ctl, const char *args, int quiet)
{
	char cmd[4096], *text = NULL;
	json_t *j = NULL;

	snprintf(cmd, sizeof(cmd), "(%s %s 2>>ctl.err)", ctl, args);
	if (check_run(cmd, &text) == 0)
		j = json_loads(text ? text : "", 0, NULL);
	else if (!quiet)
		fprintf(stderr, "'%s' failed: %s\n", cmd, text ? text : "");
	free(text);
	return j;
}

json_t *
check_release(json_t *rep, const char *version)
{
	return check_entry(rep, "releases", "version", version);
}

json_t *
check_entry(json_t *o, const char *array, const char *key,
    const char *value)
{
	const char *s;
	size_t i;
	json_t *x;

	json_array_foreach(json_object_get(o, array), i, x)
		if ((s = json_string_value(json_object_get(x, key))) != NULL &&
		    strcmp(s, value) == 0)
			return x;
	return NULL;
}

json_t *
check_change(json_t *rep, const char *from, const char *to,
    const char *metric)
{
	const char *f, *t, *m;
	size_t i;
	json_t *x;

	json_array_foreach(json_object_get(rep, "what_else_changed"), i, x) {
		f = json_string_value(json_object_get(x, "from"));
		t = json_string_value(json_object_get(x, "to"));
		m = json_string_value(json_object_get(x, "metric"));
		if (f != NULL && t != NULL && m != NULL &&
		    strcmp(f, from) == 0 && strcmp(t, to) == 0 &&
		    strcmp(m, metric) == 0)
			return x;
	}
	fprintf(stderr, "no change of %s for %s..%s\n", metric, from, to);
	return NULL;
}

json_t *
check_hook(const char *root, int n)
{
	char path[PATH_MAX + 32], *body;
	json_t *hook;

	snprintf(path, sizeof(path), "%s/hooks/%d.json", root, n);
	body = check_read_file(path);
	hook = body != NULL ? json_loads(body, 0, NULL) : NULL;
	free(body);
	return hook;
}
