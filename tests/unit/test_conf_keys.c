/*
 * test_conf_keys.c: the key table (config/keys.c) against what is made
 * of it and what must agree with it: docs/config-keys.md is exactly
 * conf_keys_reference()'s text, config/bisectd.conf.example shows every
 * key of the table and no other, each default the table sets is one its
 * own key takes, and every row says what it is.
 *
 * After a change to the table, regenerate the reference from the top of
 * the tree:
 *
 *   BISECTD_SOURCE_DIR=. build/tests/test_conf_keys --write
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/strv.h"
#include "config/conf.h"
#include "config/conf_int.h"
#include "config/keys.h"

static char *
reference(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (out == NULL)
		abort();
	conf_keys_reference(out);
	fclose(out);
	return text;
}

/* "section.key" of every key line of the example, in its order. */
static void
example_keys(const char *text, struct strv *keys)
{
	char section[64] = "";

	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n'), *q = p;
		size_t n;

		if (eol == NULL)
			eol = p + strlen(p);
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (*q == '[') {
			n = strcspn(q + 1, " ]\n");
			snprintf(
			    section, sizeof(section), "%.*s", (int)n, q + 1);
		} else if (*q != '#' && q < eol) {
			char key[160];

			n = strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789-");
			if (n > 0) {
				snprintf(key, sizeof(key), "%s.%.*s", section,
				    (int)n, q);
				strv_push(keys, key);
			}
		}
		p = *eol ? eol + 1 : eol;
	}
}

static void
test_reference(const char *src)
{
	char path[4096], *want = reference(), *have;

	snprintf(path, sizeof(path), "%s/docs/config-keys.md", src);
	have = check_read_file(path);
	CHECK(have != NULL);
	if (have && strcmp(have, want) != 0)
		fprintf(stderr, "docs/config-keys.md is not the key table's: "
		    "run test_conf_keys --write in the build's tests/\n");
	CHECK_STR(have, want);
	/* Every section has its table, every key its row. */
	for (size_t i = 0; i < conf_nkeys; i++) {
		char row[160];

		snprintf(row, sizeof(row), "| `%s` |", conf_keys[i].name);
		CHECK(strstr(want, row) != NULL);
	}
	for (int s = 0; s < CONF_NSECTIONS; s++) {
		char head[64];

		snprintf(head, sizeof(head), "## [%s", conf_section_name(s));
		CHECK(strstr(want, head) != NULL);
	}
	free(want);
	free(have);
}

static void
test_example(const char *src)
{
	char path[4096], *text;
	struct strv keys = STRV_INIT, table = STRV_INIT;

	snprintf(path, sizeof(path), "%s/config/bisectd.conf.example", src);
	if ((text = check_read_file(path)) == NULL) {
		CHECK(text != NULL);
		return;
	}
	example_keys(text, &keys);
	CHECK(keys.n > 50);
	for (size_t i = 0; i < conf_nkeys; i++) {
		char key[160];

		snprintf(key, sizeof(key), "%s.%s",
		    conf_section_name(conf_keys[i].section), conf_keys[i].name);
		strv_push(&table, key);
		if (!strv_contains(&keys, key))
			fprintf(stderr, "the example lacks %s\n", key);
		CHECK(strv_contains(&keys, key));
	}
	for (size_t i = 0; i < keys.n; i++) {
		if (!strv_contains(&table, keys.v[i]))
			fprintf(stderr, "the example has %s, which the table "
			    "lacks\n", keys.v[i]);
		CHECK(strv_contains(&table, keys.v[i]));
	}
	strv_clear(&keys);
	strv_clear(&table);
	free(text);
}

/* Each default is one its key takes, and each row is documented once. */
static void
test_rows(void)
{
	struct strv problems = STRV_INIT;
	struct conf c;
	struct conf_loader ld;
	union {
		struct conf c;
		struct conf_weights w;
		struct conf_engine g;
		struct conf_runner r;
		struct conf_ablation a;
		struct conf_alert l;
	} obj;
	char dir[] = "/etc";
	int defaults = 0;

	memset(&c, 0, sizeof(c));
	memset(&ld, 0, sizeof(ld));
	c.dir = dir;
	ld.c = &c;
	ld.problems = &problems;
	ld.file = "table";
	for (size_t i = 0; i < conf_nkeys; i++) {
		const struct conf_key *k = &conf_keys[i];

		CHECK(k->doc != NULL && k->doc[0] != '\0');
		CHECK(k->type != CK_CUSTOM || k->set != NULL);
		CHECK(k->type != CK_ENUM || k->names != NULL);
		CHECK(conf_key_find(k->section, k->name) == k);
		defaults += k->init != NULL;
	}
	for (int s = 0; s < CONF_NSECTIONS; s++) {
		memset(&obj, 0, sizeof(obj));
		conf_key_defaults(&ld, s, &obj, conf_section_name(s));
		conf_key_free(s, &obj);
	}
	CHECK(defaults > 20);
	for (size_t i = 0; i < problems.n; i++)
		fprintf(stderr, "a default its key refuses: %s\n",
		    problems.v[i]);
	CHECK_INT(problems.n, 0);
	/* A default the key refused would be said so. */
	{
		struct conf_entry en;

		memset(&en, 0, sizeof(en));
		memset(&obj, 0, sizeof(obj));
		en.value = "a while";
		snprintf(en.label, sizeof(en.label), "engine.e.timeout");
		conf_key_set(&ld, &obj, conf_key_find(CONF_ENGINE, "timeout"),
		    &en);
		CHECK_INT(problems.n, 1);
	}
	strv_clear(&problems);
}

int
main(int argc, char **argv)
{
	const char *src = check_source_dir();

	if (argc == 2 && strcmp(argv[1], "--write") == 0) {
		char path[4096], *text = reference();

		snprintf(path, sizeof(path), "%s/docs/config-keys.md", src);
		check_write_file(path, text);
		printf("wrote %s\n", path);
		free(text);
		return 0;
	}
	test_reference(src);
	test_example(src);
	CHECK_CASE(test_rows);
	return check_done();
}
