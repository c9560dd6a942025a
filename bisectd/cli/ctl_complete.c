/*
 * ctl_complete.c: the candidates behind bisectctl's bash completion
 * (scripts/bisectctl.bash): commands and options from main.c's tables,
 * engine names from the configuration, versions from the store.  Kept
 * in C so the completion never lists a command or option the binary
 * does not take.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "config/conf.h"
#include "ctl.h"
#include "store/store.h"

/* Print word when it starts with prefix, followed by suffix. */
static void
offer(const char *prefix, const char *word, const char *suffix)
{
	if (strncmp(word, prefix, strlen(prefix)) == 0)
		printf("%s%s\n", word, suffix);
}

/* The long option named by word ("--metric", "--metric=x"), or NULL. */
static const struct option *
long_option(const struct option *opts, const char *word)
{
	size_t n;

	if (strncmp(word, "--", 2) != 0)
		return NULL;
	word += 2;
	n = strcspn(word, "=");
	for (const struct option *o = opts; o->name; o++)
		if (strlen(o->name) == n && strncmp(o->name, word, n) == 0)
			return o;
	return NULL;
}

static void
engines(const struct conf *cf, const char *cur)
{
	for (size_t i = 0; cf && i < cf->nengines; i++)
		offer(cur, cf->engines[i].name, "");
}

/* The engine's versions in the store, read-only; after "GOOD.." in cur
 * the second end, else each with suffix. */
static void
versions(const struct conf *cf, const char *engine, const char *cur,
    const char *suffix)
{
	struct store_release_list l = { NULL, 0 };
	struct err e = ERR_INIT;
	struct store *s = NULL;
	const char *dots = strstr(cur, "..");
	int64_t id;

	if (cf == NULL || conf_engine(cf, engine) == NULL ||
	    store_open_readonly(cf->database, &s, &e) < 0)
		return;
	if (store_engine_find(s, engine, &id, &e) == 0 &&
	    store_release_list(s, id, &l, &e) == 0)
		for (size_t i = 0; i < l.n; i++) {
			if (dots == NULL) {
				offer(cur, l.v[i].version, suffix);
				continue;
			}
			if (strncmp(l.v[i].version, dots + 2,
			    strlen(dots + 2)) == 0)
				printf("%.*s%s\n", (int)(dots + 2 - cur), cur,
				    l.v[i].version);
		}
	store_release_list_release(&l);
	store_close(s);
}

int
ctl_complete(int nwords, char **words, const struct command *cmds,
    const struct option *longopts, unsigned (*takes)(int))
{
	const struct command *cmd = NULL;
	const char *config = getenv("BISECTD_CONFIG"), *cur, *prev;
	const struct option *po;
	struct strv problems = STRV_INIT;
	struct conf *cf = NULL;
	char *operands[4];
	int nops = 0;

	if (nwords < 1)
		return EXIT_OK;
	cur = words[nwords - 1];
	prev = nwords > 1 ? words[nwords - 2] : "";
	for (int i = 0; i < nwords - 1; i++) {
		const struct option *o = long_option(longopts, words[i]);

		if (strcmp(words[i], "-c") == 0 || (o && o->val == 'c')) {
			if (strchr(words[i], '='))
				config = strchr(words[i], '=') + 1;
			else if (i + 1 < nwords - 1)
				config = words[++i];
			continue;
		}
		if (o && o->has_arg == required_argument &&
		    strchr(words[i], '=') == NULL) {
			i++;
			continue;
		}
		if (words[i][0] == '-')
			continue;
		if (cmd == NULL) {
			for (const struct command *k = cmds; k->name; k++)
				if (strcmp(k->name, words[i]) == 0)
					cmd = k;
			if (cmd == NULL)
				return EXIT_OK;	/* an unknown command */
		} else if (nops < 4)
			operands[nops++] = words[i];
	}
	/* The value of an option. */
	if ((po = long_option(longopts, prev)) != NULL &&
	    po->has_arg == required_argument) {
		if (takes(po->val) == TAKES_FORMATS) {
			offer(cur, "text", "");
			if (cmd == NULL || (cmd->takes & TAKES_JSON))
				offer(cur, "json", "");
			if (cmd == NULL || (cmd->takes & TAKES_MARKDOWN))
				offer(cur, "markdown", "");
			if (cmd == NULL || (cmd->takes & TAKES_CSV))
				offer(cur, "csv", "");
		} else if (takes(po->val) == TAKES_METRIC) {
			offer(cur, "per-token", "");
			offer(cur, "fixed", "");
		}
		return EXIT_OK;
	}
	if (strcmp(prev, "-c") == 0)
		return EXIT_OK;	/* a file: the shell's own completion */
	if (cur[0] == '-') {
		offer(cur, "--help", "");
		if (cmd == NULL) {
			offer(cur, "--config", "");
			offer(cur, "--format", "");
			offer(cur, "--version", "");
			return EXIT_OK;
		}
		for (const struct option *o = longopts; o->name; o++) {
			char name[64];

			/* --format where the command prints more than
			 * text; the others as its table lists them. */
			if ((cmd->takes & takes(o->val)) == 0)
				continue;
			snprintf(name, sizeof(name), "--%s", o->name);
			offer(cur, name, "");
		}
		return EXIT_OK;
	}
	if (cmd == NULL) {
		for (const struct command *k = cmds; k->name; k++)
			offer(cur, k->name, "");
		return EXIT_OK;
	}
	if (strcmp(cmd->name, "jobs") == 0) {
		if (nops == 0)
			offer(cur, "prune", "");
		return EXIT_OK;
	}
	if (strncmp(cmd->usage, "ENGINE", 6) != 0 &&
	    strstr(cmd->usage, " ENGINE ") == NULL)
		return EXIT_OK;
	if (config == NULL || config[0] == '\0')
		config = "/etc/bisectd.conf";
	/* A broken configuration completes nothing; it says nothing either:
	 * the shell is not the place for its problems. */
	if (conf_load(config, &cf, &problems) < 0) {
		strv_clear(&problems);
		return EXIT_OK;
	}
	if (nops == 0)
		engines(cf, cur);
	else if (nops == 1 && cmd->max_args >= 2) {
		int range = strstr(cmd->usage, "..") != NULL;

		versions(cf, operands[0], cur, range ? ".." : "");
	}
	conf_free(cf);
	return EXIT_OK;
}
