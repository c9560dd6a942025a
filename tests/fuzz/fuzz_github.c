/*
 * fuzz_github.c: a page of GitHub's releases API and the asset matching
 * (fetch/github.c, fetch/source.c).  The input's first line is the
 * engine's asset pattern (empty: none), the second says whether
 * prereleases count ("1"), the rest is the page.
 *
 * Every release kept has a version and an asset; with a pattern, the
 * asset matches it, and the version it matches for gives the name back
 * through asset_expand().  A refused one has a reason and a printable
 * version, and nothing else is made of it.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "config/conf.h"
#include "fetch/source.h"
#include "fetch/source_impl.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *pattern = fuzz_line(&p, end), *pre = fuzz_line(&p, end);
	static char name[] = "fuzz";
	struct release_list out = RELEASE_LIST_INIT;
	struct conf_engine eng;
	struct err e = ERR_INIT;

	memset(&eng, 0, sizeof(eng));
	eng.name = name;
	eng.asset = pattern[0] != '\0' ? pattern : NULL;
	eng.prereleases = strcmp(pre, "1") == 0;
	if (github_parse_releases(&eng, "https://api.github.com/fuzz",
	    (const char *)p, (size_t)(end - p), &out, &e) < 0 &&
	    e.msg[0] == '\0')
		fuzz_fail("refused without a message");
	for (size_t i = 0; i < out.n; i++) {
		const struct release_info *ri = &out.v[i];
		char *ver = NULL, *back;

		if (ri->refused != NULL) {
			if (ri->version == NULL || ri->refused[0] == '\0')
				fuzz_fail("release %zu refused without a "
				    "version or reason", i);
			for (const char *c = ri->version; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					fuzz_fail("refused version of release "
					    "%zu holds a control byte", i);
			continue;
		}
		if (ri->version == NULL || ri->version[0] == '\0' ||
		    ri->asset == NULL || ri->url == NULL)
			fuzz_fail("release %zu lacks a version, asset or url",
			    i);
		if (ri->prerelease && !eng.prereleases)
			fuzz_fail("prerelease '%s' kept", ri->version);
		if (eng.asset == NULL)
			continue;
		if (!asset_match(eng.asset, ri->asset, &ver)) {
			/* Only the name made from the tag may differ. */
			back = asset_expand(eng.asset, ri->version);
			if (back == NULL || strcmp(back, ri->asset) != 0)
				fuzz_fail("asset '%s' of '%s' does not match "
				    "'%s'", ri->asset, ri->version, eng.asset);
			free(back);
			continue;
		}
		if (ver != NULL) {
			back = asset_expand(eng.asset, ver);
			if (back == NULL || strcmp(back, ri->asset) != 0)
				fuzz_fail("'%s' matches '%s' for '%s', which "
				    "expands to '%s'", ri->asset, eng.asset,
				    ver, back ? back : "(null)");
			free(back);
			free(ver);
		}
	}
	release_list_release(&out);
	free(pattern);
	free(pre);
	return 0;
}
