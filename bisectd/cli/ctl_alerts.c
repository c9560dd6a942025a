/*
 * ctl_alerts.c: `bisectctl alerts`: the alerts recorded, newest first,
 * with each sink's delivery state and every attempt: what was sent,
 * when, to whom.  It reads the store only.
 */
#include <stdio.h>
#include <string.h>

#include "bisectd/report/fields.h"
#include "bisectd/report/listing_json.h"
#include "ctl.h"
#include "common/err.h"
#include "store/store.h"

/* In the local zone: whoever reads the terminal is here. */
static const char *
when(int64_t t, char *buf, size_t len)
{
	return rep_when(t, 0, buf, len);
}

static void
print_text(const struct store_alert_rows *rows)
{
	char b1[32], b2[32];

	if (rows->n == 0) {
		printf("no alerts\n");
		return;
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct store_alert_row *r = &rows->v[i];

		printf("#%lld  %s  %-15s %-10s %s\n", (long long)r->alert.id,
		    when(r->alert.created, b1, sizeof(b1)), r->alert.kind,
		    r->alert.engine, ctl_safe(r->alert.summary));
		if (r->nsinks == 0)
			printf("      (no sink has taken it yet)\n");
		for (size_t j = 0; j < r->nsinks; j++) {
			const struct store_alert_sink *k = &r->sinks[j];
			const struct store_alert_try *last = k->ntries ?
			    &k->tries[k->ntries - 1] : NULL;

			printf("      %s -> %s: %s", k->sink,
			    ctl_safe(k->target), k->state);
			if (strcmp(k->state, "delivered") == 0)
				printf(" at %s", when(k->delivered, b2,
				    sizeof(b2)));
			else if (strcmp(k->state, "pending") == 0)
				printf(", next try %s", when(k->next_at, b2,
				    sizeof(b2)));
			printf(" (%d attempt%s)", k->attempts,
			    k->attempts == 1 ? "" : "s");
			if (last && !last->ok && last->error)
				printf("; last: %s", ctl_safe(last->error));
			printf("\n");
		}
	}
}

int
cmd_alerts(struct ctl *c)
{
	struct store_alert_rows rows;
	struct err e = ERR_INIT;
	struct store *s;

	if ((s = ctl_store_readonly(c)) == NULL)
		return EXIT_FAIL;
	if (store_alert_list(s, LISTING_ALERTS, &rows, &e) < 0) {
		store_close(s);
		return ctl_failed(&e);
	}
	if (c->format == FORMAT_JSON)
		ctl_print_json(listing_alerts_json(&rows));
	else
		print_text(&rows);
	store_alert_rows_release(&rows);
	store_close(s);
	return EXIT_OK;
}
