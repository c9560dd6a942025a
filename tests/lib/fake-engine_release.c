/*
 * fake-engine_release.c: the fake engine's release.conf, its keys listed
 * in fake-engine.c, and the switches that take components' work away.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-common.h"
#include "fake-engine_int.h"
#include "fake-release.h"

static const char *const fail_names[] = {
	"none", "crash", "hang", "hang-ignore-term", "setsid-linger",
	"garbage", "exit"
};

static void
release_defaults(struct release *rel)
{
	memset(rel, 0, sizeof(*rel));
	snprintf(rel->version, sizeof(rel->version), "0.0.0");
	rel->content_speedup = 1;
}

static double
conf_number(const char *path, int line, const char *key, const char *val)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(val, &end);
	if (end == val || *end != '\0' || errno != 0 || !isfinite(d) || d < 0)
		die("%s:%d: %s: expected a number >= 0, not '%s'", path, line,
		    key, val);
	return d;
}

static void
conf_set(void *arg, const char *path, int line, const char *key,
    const char *val)
{
	struct release *rel = arg;
	size_t i;

	if (strcmp(key, "version") == 0) {
		if (strlen(val) >= sizeof(rel->version))
			die("%s:%d: version too long", path, line);
		snprintf(rel->version, sizeof(rel->version), "%s", val);
	} else if (strcmp(key, "build_commit") == 0) {
		if (strlen(val) >= sizeof(rel->build_commit))
			die("%s:%d: build_commit too long", path, line);
		snprintf(rel->build_commit, sizeof(rel->build_commit), "%s",
		    val);
	} else if (strcmp(key, "build_number") == 0) {
		rel->build_number = (long)conf_number(path, line, key, val);
	} else if (strcmp(key, "fixed_us") == 0) {
		rel->fixed_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "prefill_us_per_token") == 0) {
		rel->prefill_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "prefill_us_per_token_per_mib") == 0) {
		rel->prefill_us_mib = conf_number(path, line, key, val);
	} else if (strcmp(key, "per_mib_class") == 0) {
		snprintf(rel->mib_class, sizeof(rel->mib_class), "%s", val);
	} else if (strcmp(key, "prefill_us_per_token_sq") == 0) {
		rel->prefill_us2 = conf_number(path, line, key, val);
	} else if (strcmp(key, "decode_us_per_token") == 0) {
		rel->decode_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "noise_cv") == 0) {
		rel->noise_cv = conf_number(path, line, key, val);
	} else if (strcmp(key, "run_cv") == 0) {
		rel->run_cv = conf_number(path, line, key, val);
	} else if (strcmp(key, "outlier_p") == 0) {
		rel->outlier_p = conf_number(path, line, key, val);
	} else if (strcmp(key, "outlier_x") == 0) {
		rel->outlier_x = conf_number(path, line, key, val);
	} else if (strcmp(key, "content_speedup") == 0) {
		rel->content_speedup = conf_number(path, line, key, val);
		if (rel->content_speedup < 1)
			die("%s:%d: content_speedup must be at least 1", path,
			    line);
	} else if (strcmp(key, "alloc_mb") == 0) {
		rel->alloc_mb = conf_number(path, line, key, val);
	} else if (strcmp(key, "load_us") == 0) {
		rel->load_us = conf_number(path, line, key, val);
	} else if (strcmp(key, "clock") == 0) {
		if (strcmp(val, "cpu") != 0 && strcmp(val, "wall") != 0)
			die("%s:%d: clock: expected wall or cpu", path, line);
		rel->clock_cpu = strcmp(val, "cpu") == 0;
	} else if (strcmp(key, "generate_seed") == 0) {
		rel->generate_seed = (long)conf_number(path, line, key, val);
	} else if (strcmp(key, "generate_jitter") == 0) {
		rel->generate_jitter = conf_number(path, line, key, val) != 0;
	} else if (strcmp(key, "fail") == 0) {
		for (i = 0; i < sizeof(fail_names) / sizeof(fail_names[0]); i++)
			if (strcmp(val, fail_names[i]) == 0)
				break;
		if (i == sizeof(fail_names) / sizeof(fail_names[0]))
			die("%s:%d: fail: unknown mode '%s'", path, line, val);
		rel->fail = (enum fail_mode)i;
	} else if (strcmp(key, "empty_first_token") == 0) {
		char kind[8] = "eos", extra;
		int n = sscanf(val, "%ld %7s %c", &rel->empty_every, kind,
		    &extra);

		if (n < 1 || n > 2 || rel->empty_every < 1 ||
		    (strcmp(kind, "eos") != 0 && strcmp(kind, "utf8") != 0))
			die("%s:%d: empty_first_token: expected N [eos|utf8] "
			    "with N >= 1, not '%s'", path, line, val);
		rel->empty_kind = strcmp(kind, "utf8") == 0 ? EMPTY_UTF8 :
		    EMPTY_EOS;
	} else if (strcmp(key, "component") == 0) {
		struct component *c = &rel->components[rel->ncomponents];
		char extra;

		if (rel->ncomponents == MAX_COMPONENTS)
			die("%s:%d: more than %d components", path, line,
			    MAX_COMPONENTS);
		if (sscanf(val, "%31s %lf %lf %c", c->name, &c->prefill_us,
		    &c->fixed_us, &extra) != 3 || c->prefill_us < 0 ||
		    c->fixed_us < 0)
			die("%s:%d: component: expected NAME PREFILL_US "
			    "FIXED_US, not '%s'", path, line, val);
		rel->ncomponents++;
	} else if (strcmp(key, "switches") == 0) {
		if (strcmp(val, "honored") != 0 && strcmp(val, "ignored") != 0)
			die("%s:%d: switches: expected honored or ignored", path,
			    line);
		rel->switches_ignored = strcmp(val, "ignored") == 0;
	} else {
		die("%s:%d: unknown key '%s'", path, line, key);
	}
}

/* A component is switched off by --skip NAME or FAKE_ENGINE_SKIP_NAME. */
static int
skipped(const struct opts *o, const char *name)
{
	char var[64];
	const char *v;
	size_t i;

	for (i = 0; i < o->nskips; i++)
		if (strcmp(o->skips[i], name) == 0)
			return 1;
	snprintf(var, sizeof(var), "FAKE_ENGINE_SKIP_%s", name);
	for (i = sizeof("FAKE_ENGINE_SKIP_") - 1; var[i]; i++)
		var[i] = var[i] == '-' ? '_' :
		    (char)toupper((unsigned char)var[i]);
	v = getenv(var);
	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

void
apply_switches(struct release *rel, const struct opts *o)
{
	for (size_t i = 0; i < rel->ncomponents && !rel->switches_ignored;
	    i++) {
		const struct component *c = &rel->components[i];

		if (!skipped(o, c->name))
			continue;
		rel->prefill_us = fmax(0, rel->prefill_us - c->prefill_us);
		rel->fixed_us = fmax(0, rel->fixed_us - c->fixed_us);
	}
}

/* A short stable hex id for a version, standing in for a git hash. */
static void
derive_commit(struct release *rel)
{
	uint32_t h = 2166136261u;
	const char *p;

	for (p = rel->version; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(rel->build_commit, sizeof(rel->build_commit), "%08x",
	    (unsigned)h);
}

/* release.conf at the root of the release: <dir of the binary>/../ */
void
release_find(struct release *rel, const char *explicit_path)
{
	release_defaults(rel);
	fake_release_read(explicit_path, rel->path, sizeof(rel->path),
	    conf_set, rel);
	if (rel->build_commit[0] == '\0')
		derive_commit(rel);
}
