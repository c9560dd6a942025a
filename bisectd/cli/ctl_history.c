/*
 * ctl_history.c: bisectctl history, the change points over every stored
 * release of an engine, from the store alone.
 */
#include <stdio.h>

#include "bisectd/report/history.h"
#include "bisectd/report/print.h"
#include "common/err.h"
#include "config/conf.h"
#include "ctl.h"
#include "ctl_local.h"
#include "store/store.h"

int
cmd_history(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct conf_metric m;
	struct history h;
	struct err e = ERR_INIT;
	struct store *s;
	size_t n;

	if (g == NULL)
		return EXIT_USAGE;
	if (c->metric && (conf_parse_metric(c->metric, &m) < 0 ||
	    m.kind == METRIC_CANARY))
		return ctl_usage_error("--metric: expected per-token, fixed, "
		    "ppN or tgN, got '%s'", c->metric);
	if ((s = ctl_store_readonly(c)) == NULL)
		return EXIT_FAIL;
	if (history_build(c->conf, g, s, c->metric ? &m : NULL, &h, &e) < 0) {
		store_close(s);
		return ctl_failed(&e);
	}
	store_close(s);
	history_print(&h, ctl_report_format(c), stdout);
	n = history_changes(&h);
	history_release(&h);
	if (fflush(stdout) != 0 || ferror(stdout))
		return ctl_error("cannot write the history");
	return n > 0 ? EXIT_REGRESSION : EXIT_OK;
}
