/*
 * ctl_ablate.c: bisectctl ablate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectd/measure/benchlock.h"
#include "bisectd/measure/canary.h"
#include "bisectd/report/ablate_print.h"
#include "bisectd/search/ablate.h"
#include "common/err.h"
#include "ctl.h"
#include "ctl_local.h"

/* The newest finished ablation of a release, from the store alone. */
static int
ablate_last(struct ctl *c, const struct conf_engine *g)
{
	struct err e = ERR_INIT;
	struct store *s;
	json_t *rep;
	char *text = NULL;
	int64_t rid;
	int rc;

	if ((s = ctl_store_readonly(c)) == NULL)
		return EXIT_FAIL;
	if ((rc = ctl_release_id(s, g->name, c->argv[1], &rid)) != 0) {
		store_close(s);
		return rc;
	}
	rc = store_ablation_latest(s, rid, &text, &e);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	if (text == NULL)
		return ctl_error("no finished ablation of %s %s is stored "
		    "('bisectctl ablate %s %s' queues one)", g->name,
		    c->argv[1], g->name, c->argv[1]);
	rep = json_loads(text, 0, NULL);
	free(text);
	if (rep == NULL)
		return ctl_error("the stored ablation of %s %s is not JSON",
		    g->name, c->argv[1]);
	ablate_print(rep, ctl_report_format(c), stdout);
	rc = ablate_exit_code(rep);
	json_decref(rep);
	return rc;
}

int
cmd_ablate(struct ctl *c)
{
	const struct conf_engine *g = ctl_engine(c, c->argv[0]);
	struct benchlock lock = BENCHLOCK_INIT;
	struct ablate_opts o;
	struct err e = ERR_INIT;
	struct store *s;
	json_t *rep;
	int rc;

	if (g == NULL)
		return EXIT_USAGE;
	if (conf_ablation_control(c->conf, g->name) == NULL)
		return ctl_usage_error("engine %s has no [ablation] switches; "
		    "see the README's \"Ablation with a positive control\"",
		    g->name);
	if (c->last)
		return ablate_last(c, g);
	if ((s = ctl_store(c)) == NULL)
		return EXIT_FAIL;
	if (!c->now) {
		json_t *args = json_pack("{s:s}", "version", c->argv[1]);
		char *text = json_dumps(args, JSON_COMPACT);
		int64_t id;

		rc = store_job_enqueue(s, "ablate", g->name, text, 0, &id, &e);
		free(text);
		json_decref(args);
		store_close(s);
		if (rc < 0)
			return ctl_failed(&e);
		printf("queued ablation of %s %s as job %lld ('bisectctl ablate "
		    "--last %s %s' shows its report once done; --now runs it "
		    "here)\n", g->name, c->argv[1], (long long)id, g->name,
		    c->argv[1]);
		ctl_wake(c);
		return EXIT_OK;
	}
	if (ctl_local_begin(c, s, &lock, "bisectctl ablate --now %s %s", g->name,
	    c->argv[1]) != 0)
		return EXIT_FAIL;
	memset(&o, 0, sizeof(o));
	o.progress = ctl_on_progress;
	o.stop = &ctl_stop;
	rc = ablate_release(c->conf, g, s, c->argv[1], &o, &rep, &e);
	ctl_end_line();
	benchlock_release(&lock);
	store_close(s);
	if (rc < 0)
		return ctl_failed(&e);
	ablate_print(rep, ctl_report_format(c), stdout);
	if (rc == EXIT_FAIL)
		ctl_error("%s", json_string_value(json_object_get(rep,
		    "reason")));
	json_decref(rep);
	return rc;
}
