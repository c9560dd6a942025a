/*
 * listing_json.h: the JSON of what the store lists (an
 * engine's releases, a release's runs, the alerts), as `bisectctl
 * ... --format json` prints it and the daemon's /api/ serves it: one
 * builder per listing, so the two cannot differ.
 */
#ifndef BISECTD_LISTING_JSON_H
#define BISECTD_LISTING_JSON_H

/* How many alerts `alerts` shows. */
#define LISTING_ALERTS		100

struct canary_runs;
struct json_t;
struct store_alert_rows;
struct store_release_list;
struct store_run_rows;

/* `versions ENGINE`: the releases in version order.  New reference. */
struct json_t *listing_releases_json(const struct store_release_list *l);

/*
 * `runs ENGINE VERSION`: every stored run, then every canary run (NULL:
 * none), whose cell's kind is "canary" and whose "canary" object holds
 * the sha256 of its text and its status: "deterministic" or
 * "nondeterministic" as its pair says, "not-measured" while the pair is
 * incomplete, "failed" with the failure and its detail.  New reference.
 */
struct json_t *listing_runs_json(const struct store_run_rows *rows,
    const struct canary_runs *canary);

/* `alerts`: the alerts, newest first, with deliveries and attempts.  New
 * reference. */
struct json_t *listing_alerts_json(const struct store_alert_rows *rows);

/*
 * The text bisectctl prints for a JSON value: indented by two, members in
 * their order, reals to 10 digits, a newline after.  Malloced; NULL when
 * out of memory.
 */
char *listing_json_text(const struct json_t *json);

#endif
