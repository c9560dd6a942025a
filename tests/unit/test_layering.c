/*
 * test_layering.c: the project's layering, written down once and checked.
 * Every #include of the sources is read; a folder that includes a header
 * from a folder its role does not allow, a third-party header outside its
 * home, anything but the C library in bisectd/analysis/, or two files
 * that include each other (through any path) fail the test, named by
 * file and line.  The first part plants each kind of mistake in a small
 * tree and checks that it is caught, so the check itself cannot rot into
 * one that passes everything.
 */
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

/*
 * Which folders each folder may include from, bottom-up.  A folder always
 * may include its own headers; a role of bisectd/ marked BELOW also every
 * role of bisectd/ listed before it.  An entry ending in ".h" allows that
 * one header only.  tests/ and bench/ drive everything from outside and
 * are not listed: only their third-party headers are not checked either.
 */
#define BELOW 1
#define OUTSIDE "fetch", "store", "config", "common"

static const struct rule {
	const char *dir;
	int below;
	const char *may[8];
} rules[] = {
	{ "common", 0, { NULL } },
	{ "config", 0, { "common", NULL } },
	{ "store", 0, { "common", NULL } },
	{ "fetch", 0, { "config", "common", NULL } },
	{ "bisectd/analysis", 0, { NULL } },
	{ "bisectd/process", 0, { "common", NULL } },
	{ "bisectd/device", 0, { "common", NULL } },
	{ "bisectd/measure", BELOW, { "store", "config", "common",
	    "fetch/http.h", "fetch/http_multi.h", "fetch/sha256.h", NULL } },
	{ "bisectd/acquire", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/remote", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/search", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/report", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/notify", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/jobs", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/daemon", BELOW, { OUTSIDE, NULL } },
	{ "bisectd/cli", BELOW, { OUTSIDE, NULL } },
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

/* Third-party headers and the only places that may include them: a
 * folder ("store") or one file ("fetch/http.c"). */
static const struct home {
	const char *prefix;	/* the header, or its folder with a '/' */
	const char *where[12];
} homes[] = {
	{ "sqlite3.h", { "store", NULL } },
	{ "curl/", { "fetch/http.c", "fetch/http_multi.c", NULL } },
	{ "archive.h", { "fetch/unpack.c", NULL } },
	{ "archive_entry.h", { "fetch/unpack.c", NULL } },
	{ "git2.h", { "config", "fetch", NULL } },
	{ "git2/", { "config", "fetch", NULL } },
	{ "openssl/", { "fetch/sha256.c", NULL } },
	{ "microhttpd.h", { "bisectd/daemon/http.c", NULL } },
	{ "pcre2.h", { "common/regex.c", NULL } },
	{ "dlfcn.h", { "bisectd/device", NULL } },
	{ "jansson.h", { "fetch", "bisectd/measure", "bisectd/acquire",
	    "bisectd/remote", "bisectd/search", "bisectd/report",
	    "bisectd/notify", "bisectd/jobs", "bisectd/daemon", "bisectd/cli",
	    NULL } },
};

/* The headers of ISO C11: all that bisectd/analysis/ may include besides
 * its own. */
static const char *const c_library[] = {
	"assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h",
	"inttypes.h", "iso646.h", "limits.h", "locale.h", "math.h",
	"setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdatomic.h",
	"stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
	"stdnoreturn.h", "string.h", "tgmath.h", "threads.h", "time.h",
	"uchar.h", "wchar.h", "wctype.h", NULL
};

/* The folders whose sources are checked. */
static const char *const checked[] = {
	"common", "config", "store", "fetch", "bisectd", NULL
};

struct file {
	char *path;		/* relative to the root; malloced */
	char *node;		/* path without .c/.h: x.c and x.h are one */
};

struct edge {
	size_t from, to;	/* node indices */
	char where[512];	/* "file:line" of the include */
};

struct tree {
	const char *root;
	struct file *files;
	size_t nfiles;
	char **nodes;
	size_t nnodes;
	struct edge *edges;
	size_t nedges;
	int problems;
	FILE *report;		/* problems are written here, one a line */
};

static struct tree *walking;

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		abort();
	return p;
}

static int
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Is path inside folder dir (or the file dir itself)? */
static int
inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

static int
on_file(const char *path, const struct stat *st, int type, struct FTW *f)
{
	struct tree *t = walking;
	const char *rel = path + strlen(t->root) + 1;
	size_t n = strlen(rel);

	(void)st;
	(void)f;
	if (type != FTW_F || n < 3 || (strcmp(rel + n - 2, ".c") != 0 &&
	    strcmp(rel + n - 2, ".h") != 0))
		return 0;
	t->files = xrealloc(t->files, (t->nfiles + 1) * sizeof(*t->files));
	t->files[t->nfiles].path = strdup(rel);
	t->files[t->nfiles].node = strndup(rel, n - 2);
	t->nfiles++;
	return 0;
}

static size_t
node_of(struct tree *t, const char *node)
{
	for (size_t i = 0; i < t->nnodes; i++)
		if (strcmp(t->nodes[i], node) == 0)
			return i;
	t->nodes = xrealloc(t->nodes, (t->nnodes + 1) * sizeof(*t->nodes));
	t->nodes[t->nnodes] = strdup(node);
	return t->nnodes++;
}

static void
problem(struct tree *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
problem(struct tree *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(t->report, fmt, ap);
	va_end(ap);
	fputc('\n', t->report);
	t->problems++;
}

/* The folder a project file belongs to for the rules: its rule's dir. */
static const struct rule *
rule_of(const char *path)
{
	const struct rule *best = NULL;

	for (size_t i = 0; i < NRULES; i++)
		if (inside(path, rules[i].dir) && (best == NULL ||
		    strlen(rules[i].dir) > strlen(best->dir)))
			best = &rules[i];
	return best;
}

static int
may_include(const struct rule *r, const char *target)
{
	if (inside(target, r->dir))
		return 1;
	for (const struct rule *lower = rules; r->below && lower < r; lower++)
		if (inside(lower->dir, "bisectd") && inside(target, lower->dir))
			return 1;
	for (size_t i = 0; r->may[i]; i++) {
		size_t n = strlen(r->may[i]);

		if (n > 2 && strcmp(r->may[i] + n - 2, ".h") == 0 ?
		    strcmp(target, r->may[i]) == 0 : inside(target, r->may[i]))
			return 1;
	}
	return 0;
}

static void
check_system(struct tree *t, const char *file, int line, const char *hdr)
{
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		const struct home *h = &homes[i];
		int ok = 0;

		if (h->prefix[strlen(h->prefix) - 1] == '/' ?
		    !has_prefix(hdr, h->prefix) : strcmp(hdr, h->prefix) != 0)
			continue;
		for (size_t k = 0; k < 12 && h->where[k]; k++)
			ok |= inside(file, h->where[k]);
		if (!ok) {
			char list[256] = "";

			for (size_t k = 0; k < 12 && h->where[k]; k++) {
				if (k > 0)
					strncat(list, ", ", sizeof(list) -
					    strlen(list) - 1);
				strncat(list, h->where[k], sizeof(list) -
				    strlen(list) - 1);
			}
			problem(t, "%s:%d: <%s> is included outside its "
			    "home (%s)", file, line, hdr, list);
		}
	}
	if (inside(file, "bisectd/analysis")) {
		int ok = 0;

		for (size_t i = 0; c_library[i]; i++)
			ok |= strcmp(hdr, c_library[i]) == 0;
		if (!ok)
			problem(t, "%s:%d: <%s>: bisectd/analysis/ includes "
			    "the C library only", file, line, hdr);
	}
}

/* Resolve "name" as the compiler does here: beside the file, then from
 * the top of the tree.  Returns the index of the file, or -1. */
static long
resolve(struct tree *t, const char *file, const char *name)
{
	char buf[1024];
	const char *slash = strrchr(file, '/');

	snprintf(buf, sizeof(buf), "%.*s/%s", slash ? (int)(slash - file) :
	    0, file, name);
	for (int pass = 0; pass < 2; pass++) {
		const char *want = pass == 0 ? buf : name;

		for (size_t i = 0; i < t->nfiles; i++)
			if (strcmp(t->files[i].path, want) == 0)
				return (long)i;
	}
	return -1;
}

static void
scan_file(struct tree *t, size_t fi)
{
	const char *file = t->files[fi].path;
	char path[1024], line[4096];
	const struct rule *r = rule_of(file);
	FILE *f;
	int no = 0;

	snprintf(path, sizeof(path), "%s/%s", t->root, file);
	if ((f = fopen(path, "r")) == NULL) {
		problem(t, "%s: cannot read: %s", file, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end, open;
		long target;

		no++;
		while (isspace((unsigned char)*p))
			p++;
		if (*p++ != '#')
			continue;
		while (isspace((unsigned char)*p))
			p++;
		if (strncmp(p, "include", 7) != 0)
			continue;
		p += 7;
		while (isspace((unsigned char)*p))
			p++;
		open = *p++;
		if ((open != '"' && open != '<') ||
		    (end = strchr(p, open == '"' ? '"' : '>')) == NULL)
			continue;
		*end = 0;
		if (open == '<') {
			check_system(t, file, no, p);
			continue;
		}
		if ((target = resolve(t, file, p)) < 0) {
			problem(t, "%s:%d: \"%s\" is not a header of the "
			    "project", file, no, p);
			continue;
		}
		if (r && !may_include(r, t->files[target].path))
			problem(t, "%s:%d: \"%s\": %s/ may not include from "
			    "%s", file, no, p, r->dir, t->files[target].path);
		if (strcmp(t->files[fi].node, t->files[target].node) != 0) {
			struct edge *e;

			t->edges = xrealloc(t->edges, (t->nedges + 1) *
			    sizeof(*t->edges));
			e = &t->edges[t->nedges++];
			e->from = node_of(t, t->files[fi].node);
			e->to = node_of(t, t->files[target].node);
			snprintf(e->where, sizeof(e->where), "%s:%d", file, no);
		}
	}
	fclose(f);
}

/* Depth-first search for a cycle among the nodes; each cycle found is
 * one problem naming the include that closes it. */
static void
find_cycles(struct tree *t, size_t n, int *color, size_t *stack,
    size_t depth)
{
	color[n] = 1;
	stack[depth] = n;
	for (size_t i = 0; i < t->nedges; i++) {
		const struct edge *e = &t->edges[i];

		if (e->from != n)
			continue;
		if (color[e->to] == 1) {
			char chain[2048] = "";
			size_t start = 0;

			while (stack[start] != e->to)
				start++;
			for (size_t k = start; k <= depth; k++) {
				strncat(chain, t->nodes[stack[k]],
				    sizeof(chain) - strlen(chain) - 1);
				strncat(chain, " -> ", sizeof(chain) -
				    strlen(chain) - 1);
			}
			strncat(chain, t->nodes[e->to], sizeof(chain) -
			    strlen(chain) - 1);
			problem(t, "%s: closes an include cycle: %s",
			    e->where, chain);
		} else if (color[e->to] == 0) {
			find_cycles(t, e->to, color, stack, depth + 1);
		}
	}
	color[n] = 2;
}

/* Check the tree at root; returns the number of problems written to
 * report. */
static int
check_tree(const char *root, FILE *report)
{
	struct tree t;
	int *color;
	size_t *stack;

	memset(&t, 0, sizeof(t));
	t.root = root;
	t.report = report;
	walking = &t;
	for (size_t i = 0; checked[i]; i++) {
		char dir[1024];

		snprintf(dir, sizeof(dir), "%s/%s", root, checked[i]);
		if (access(dir, F_OK) == 0)
			nftw(dir, on_file, 16, FTW_PHYS);
	}
	for (size_t i = 0; i < t.nfiles; i++)
		scan_file(&t, i);
	color = calloc(t.nnodes + 1, sizeof(*color));
	stack = calloc(t.nnodes + 1, sizeof(*stack));
	for (size_t n = 0; n < t.nnodes; n++)
		if (color[n] == 0)
			find_cycles(&t, n, color, stack, 0);
	free(color);
	free(stack);
	for (size_t i = 0; i < t.nfiles; i++) {
		free(t.files[i].path);
		free(t.files[i].node);
	}
	for (size_t i = 0; i < t.nnodes; i++)
		free(t.nodes[i]);
	free(t.files);
	free(t.nodes);
	free(t.edges);
	return t.problems;
}

static void
plant(const char *path, const char *text)
{
	char dir[1024];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	check_write_file(path, text);
}

/* The check on a tree with one mistake of each kind: each is named. */
static void
test_planted(void)
{
	char cwd[1024], *text = NULL;
	size_t len = 0;
	FILE *out;
	int n;

	check_tmpdir("layering");
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		abort();
	plant("common/err.h", "#include <stdio.h>\n");
	plant("store/store.c", "#include <sqlite3.h>\n#include \"store.h\"\n"
	    "#include \"common/err.h\"\n");
	plant("store/store.h", "\n");
	plant("fetch/http.h", "\n");
	plant("fetch/http.c", "#include <curl/curl.h>\n#include \"http.h\"\n");
	/* 1: a third-party header outside its home */
	plant("fetch/github.c", "#include \"http.h\"\n#include <curl/curl.h>\n");
	plant("bisectd/analysis/fit.h", "#include <math.h>\n");
	/* 2: analysis reaches up into measure; 3: and beyond the C library */
	plant("bisectd/analysis/fit.c", "#include \"fit.h\"\n"
	    "#include \"bisectd/measure/runner.h\"\n#include <unistd.h>\n");
	plant("bisectd/measure/runner.h", "#include \"common/err.h\"\n");
	/* 4: measure reaches up into jobs */
	plant("bisectd/measure/runner.c", "#include \"runner.h\"\n\n"
	    "#include \"bisectd/jobs/driver.h\"\n");
	/* 5: a cycle between two jobs files */
	plant("bisectd/jobs/driver.h", "#include \"bisectd/measure/runner.h\"\n");
	plant("bisectd/jobs/driver.c", "#include \"driver.h\"\n"
	    "#include \"report.h\"\n");
	plant("bisectd/jobs/report.h", "\n");
	plant("bisectd/jobs/report.c", "#include \"report.h\"\n"
	    "#include \"driver.h\"\n");
	/* 6: a search reaches up into the report built from it */
	plant("bisectd/search/range.c", "#include \"bisectd/report/build.h\"\n");
	plant("bisectd/report/build.h", "\n");
	/* 7: the process layer reaches into the store */
	plant("bisectd/process/spawn.c", "#include \"store/store.h\"\n");
	/* 8: a header that is not there */
	plant("bisectd/cli/main.c", "#include \"nowhere.h\"\n"
	    "#include \"bisectd/jobs/driver.h\"\n");

	out = open_memstream(&text, &len);
	n = check_tree(cwd, out);
	fclose(out);
	CHECK_INT(n, 9);
	CHECK_CONTAINS(text, "fetch/github.c:2: <curl/curl.h> is included "
	    "outside its home");
	CHECK_CONTAINS(text, "bisectd/analysis/fit.c:2: "
	    "\"bisectd/measure/runner.h\": bisectd/analysis/ may not include");
	CHECK_CONTAINS(text, "bisectd/analysis/fit.c:3: <unistd.h>: "
	    "bisectd/analysis/ includes the C library only");
	CHECK_CONTAINS(text, "bisectd/measure/runner.c:3: "
	    "\"bisectd/jobs/driver.h\": bisectd/measure/ may not include");
	CHECK_CONTAINS(text, "closes an include cycle");
	CHECK_CONTAINS(text, "bisectd/jobs/driver -> bisectd/jobs/report");
	CHECK_CONTAINS(text, "bisectd/search/range.c:1: "
	    "\"bisectd/report/build.h\": bisectd/search/ may not include");
	CHECK_CONTAINS(text, "bisectd/process/spawn.c:1: \"store/store.h\": "
	    "bisectd/process/ may not include");
	CHECK_CONTAINS(text, "bisectd/cli/main.c:1: \"nowhere.h\" is not a "
	    "header of the project");
	if (check_failures)
		fprintf(stderr, "what the check said:\n%s", text);
	free(text);

	/* The same tree with the mistakes taken out passes. */
	plant("fetch/github.c", "#include \"http.h\"\n");
	plant("bisectd/analysis/fit.c", "#include \"fit.h\"\n");
	plant("bisectd/measure/runner.c", "#include \"runner.h\"\n");
	plant("bisectd/jobs/report.c", "#include \"report.h\"\n");
	plant("bisectd/search/range.c", "\n");
	plant("bisectd/process/spawn.c", "\n");
	plant("bisectd/cli/main.c", "#include \"bisectd/jobs/driver.h\"\n");
	CHECK_INT(check_tree(cwd, stderr), 0);
}

int
main(void)
{
	const char *src = check_source_dir();

	CHECK_CASE(test_planted);
	/* The project itself: every problem is printed as FILE:LINE. */
	CHECK_INT(check_tree(src, stderr), 0);
	return check_done();
}
