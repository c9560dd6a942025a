/*
 * source.c: source_list() through the table of source kinds, each a
 * struct source_kind of its own file (github.c, urlsrc.c, gitsrc.c,
 * dirsrc.c; see source_impl.h).
 */
#include <stddef.h>

#include "common/err.h"
#include "config/conf.h"
#include "source.h"
#include "source_impl.h"

static const struct source_kind *const kinds[] = {
	&source_kind_github, &source_kind_url, &source_kind_git,
	&source_kind_dir,
};

int
source_list(const struct conf_engine *eng, struct source_state *state,
    struct release_list *out, struct err *e)
{
	if (state != NULL)
		state->not_modified = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i]->kind == eng->source)
			return kinds[i]->list(eng, state, out, e);
	return err_set(e, "engine '%s': unknown source kind", eng->name);
}
