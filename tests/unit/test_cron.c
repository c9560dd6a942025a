/*
 * test_cron.c: cron_parse() and cron_next(): month ends, leap days, the
 * day-of-month / day-of-week OR rule, steps, names, shorthands, an
 * impossible date, and DST changes in two time zones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "config/cron.h"

static void
set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* An instant from its UTC calendar time. */
static time_t
utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return timegm(&tm);
}

/* The next fire of expr after `after`, or -1 (parse failure: -2). */
static time_t
next(const char *expr, time_t after)
{
	struct cron c;
	const char *why;
	time_t t;

	if (cron_parse(expr, &c, &why) < 0) {
		fprintf(stderr, "cannot parse '%s': %s\n", expr, why);
		return -2;
	}
	if (cron_next(&c, after, &t) < 0)
		return -1;
	return t;
}

static void
test_parse_errors(void)
{
	static const char *const bad[] = { "", "* * * *", "* * * * * *",
		"60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *",
		"* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *",
		"@fortnightly", "x * * * *", "1,,2 * * * *", "* * * foo *" };
	struct cron c;
	const char *why = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK_INT(cron_parse(bad[i], &c, &why), -1);
		CHECK(why != NULL && why[0] != '\0');
	}
	CHECK_INT(cron_parse("* * 0 * *", &c, &why), -1);
	CHECK_CONTAINS(why, "day-of-month");
	CHECK_INT(cron_parse("0 0 * jan,DEC sun-sat", &c, &why), 0);
	CHECK_INT(c.month, (1 << 1) | (1 << 12));
	CHECK_INT(c.dow, 0x7f);
	/* 7 is Sunday, as 0 */
	CHECK_INT(cron_parse("0 0 * * 7", &c, &why), 0);
	CHECK_INT(c.dow, 1);
}

/*
 * A fire expected of expr in the case called in: the next after from is
 * at want (both UTC, "YYYY-MM-DD HH:MM[:SS]"), or never when want is
 * NULL.
 */
static const struct fire {
	const char *in, *expr, *from, *want;
} fire_rows[] = {
	/* test_basic: "base" */
	/* strictly after: at 00:00 exactly, @daily is next midnight */
	{ "base", "@daily", "2024-05-01 00:00", "2024-05-02 00:00" },
	{ "base", "@daily", "2024-05-01 23:59", "2024-05-02 00:00" },
	{ "base", "@hourly", "2024-05-01 10:00", "2024-05-01 11:00" },
	/* a Sunday */
	{ "base", "@weekly", "2024-05-01 00:00", "2024-05-05 00:00" },
	{ "base", "@monthly", "2024-12-15 00:00", "2025-01-01 00:00" },
	{ "base", "@yearly", "2024-01-01 00:00", "2025-01-01 00:00" },
	/* steps: every 20 minutes in hours 9-17 every 4 (9, 13, 17) */
	{ "base", "*/20 9-17/4 * * *", "2024-05-01 09:40", "2024-05-01 13:00" },
	{ "base", "*/20 9-17/4 * * *", "2024-05-01 13:00", "2024-05-01 13:20" },
	{ "base", "*/20 9-17/4 * * *", "2024-05-01 17:40", "2024-05-02 09:00" },
	/* "5/15": from 5 to the end, every 15 */
	{ "base", "5/15 * * * *", "2024-05-01 09:50", "2024-05-01 10:05" },
	{ "base", "5/15 * * * *", "2024-05-01 10:35", "2024-05-01 10:50" },
	/* seconds are ignored: from 10:04:59 the next minute is 10:05 */
	{ "base", "* * * * *", "2024-05-01 10:04:59", "2024-05-01 10:05" },
	/* names */
	{ "base", "30 6 * mar mon", "2024-01-01 00:00", "2024-03-04 06:30" },
	/* test_month_ends: "ends" */
	/* the 31st skips the months without one */
	{ "ends", "0 0 31 * *", "2023-01-31 00:00", "2023-03-31 00:00" },
	{ "ends", "0 0 31 * *", "2023-03-31 00:00", "2023-05-31 00:00" },
	{ "ends", "0 0 31 * *", "2023-07-31 00:00", "2023-08-31 00:00" },
	{ "ends", "0 0 31 * *", "2023-08-31 00:00", "2023-10-31 00:00" },
	{ "ends", "0 0 30 * *", "2023-01-30 00:00", "2023-03-30 00:00" },
	/* Feb 29 only in leap years; 2100 is not one, 2000 was */
	{ "ends", "0 0 29 2 *", "2023-03-01 00:00", "2024-02-29 00:00" },
	{ "ends", "0 0 29 2 *", "2024-02-29 00:00", "2028-02-29 00:00" },
	{ "ends", "0 0 29 2 *", "1999-03-01 00:00", "2000-02-29 00:00" },
	{ "ends", "0 12 29 2 *", "2097-03-01 00:00", "2104-02-29 12:00" },
	/* the last day of February through a year-end */
	{ "ends", "0 0 28 2 *", "2024-12-31 00:00", "2025-02-28 00:00" },
	/* never: Feb 30, Feb 31, Apr 31 */
	{ "ends", "0 0 30 2 *", "2024-01-01 00:00", NULL },
	{ "ends", "0 0 31 2 *", "2024-01-01 00:00", NULL },
	{ "ends", "0 0 31 4 *", "2024-01-01 00:00", NULL },
	{ "ends", "0 0 31 2,4,6,9,11 *", "2024-01-01 00:00", NULL },
	/* but Feb 30 or a Monday of February is possible: the OR rule */
	{ "ends", "0 0 30 2 mon", "2024-01-01 00:00", "2024-02-05 00:00" },
	/* test_day_rule: "days" */
	/* Both restricted: the 13th OR a Friday.  October 2024: Fridays
	 * 4, 11, 18, 25; the 13th is a Sunday. */
	{ "days", "0 0 13 * fri", "2024-10-01 00:00", "2024-10-04 00:00" },
	{ "days", "0 0 13 * fri", "2024-10-11 00:00", "2024-10-13 00:00" },
	{ "days", "0 0 13 * 5", "2024-10-13 00:00", "2024-10-18 00:00" },
	/* Only day-of-month restricted: the 13th alone */
	{ "days", "0 0 13 * *", "2024-10-01 00:00", "2024-10-13 00:00" },
	/* Only day-of-week restricted: Fridays alone */
	{ "days", "0 0 * * 5", "2024-10-05 00:00", "2024-10-11 00:00" },
	/* "*" in a list or a range over the whole field counts as
	 * restricted only when written as something other than "*":
	 * 1-31 with Friday is the OR of every day and Friday. */
	{ "days", "0 0 1-31 * 5", "2024-10-05 00:00", "2024-10-06 00:00" },
	/* the month still restricts both */
	{ "days", "0 0 13 11 fri", "2024-10-01 00:00", "2024-11-01 00:00" },
};

/* An instant from its UTC calendar time written as in fire_rows[]; -3
 * when it does not read. */
static time_t
utcs(const char *text)
{
	int y, mo, d, h, mi, sec = 0;

	if (sscanf(text, "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi,
	    &sec) < 5) {
		fprintf(stderr, "not a time: '%s'\n", text);
		return -3;
	}
	return utc(y, mo, d, h, mi) + sec;
}

/* The rows of fire_rows[] in the case called in, in UTC; a row that
 * fails is named with its index and its expression.  The case must have
 * rows. */
static void
check_fires(const char *in)
{
	int rows = 0;

	set_tz("UTC");
	for (size_t i = 0; i < sizeof(fire_rows) / sizeof(fire_rows[0]); i++) {
		const struct fire *f = &fire_rows[i];
		int before = check_failures;

		if (strcmp(f->in, in) != 0)
			continue;
		rows++;
		CHECK_INT(next(f->expr, utcs(f->from)),
		    f->want == NULL ? -1 : utcs(f->want));
		if (check_failures > before)
			fprintf(stderr, "  fire_rows[%zu] (%s): '%s' after "
			    "%s\n", i, in, f->expr, f->from);
	}
	CHECK(rows > 0);
}

static void
test_basic(void)
{
	check_fires("base");
}

static void
test_month_ends(void)
{
	check_fires("ends");
}

static void
test_day_rule(void)
{
	check_fires("days");
}

static void
test_dst_berlin(void)
{
	time_t t, after;
	int fires;

	set_tz("Europe/Berlin");
	/* 2024-03-31: 02:00 CET jumps to 03:00 CEST (01:00 UTC).  A 02:30
	 * job fires once, at the first minute after the gap. */
	t = next("30 2 * * *", utc(2024, 3, 30, 12, 0));
	CHECK_INT(t, utc(2024, 3, 31, 1, 0));
	CHECK_INT(next("30 2 * * *", t), utc(2024, 4, 1, 0, 30));
	/* minutes in the gap collapse onto one fire; 03:00 itself too */
	t = next("0,15,30,45 2,3 * * *", utc(2024, 3, 31, 0, 30));
	CHECK_INT(t, utc(2024, 3, 31, 1, 0));
	CHECK_INT(next("0,15,30,45 2,3 * * *", t), utc(2024, 3, 31, 1, 15));
	/* the day before and after: ordinary */
	CHECK_INT(next("30 2 * * *", utc(2024, 3, 29, 12, 0)),
	    utc(2024, 3, 30, 1, 30));
	/* 2024-10-27: 03:00 CEST goes back to 02:00 CET, so 02:30 exists
	 * twice (00:30 and 01:30 UTC).  It fires once, the first time. */
	t = next("30 2 * * *", utc(2024, 10, 26, 12, 0));
	CHECK_INT(t, utc(2024, 10, 27, 0, 30));
	CHECK_INT(next("30 2 * * *", t), utc(2024, 10, 28, 1, 30));
	/* every 15 minutes through the repeated hour: the wall clock's
	 * 02:00-02:45 fire once each, then 03:00 CET.  Count the fires
	 * from 00:00 to 02:00 UTC: 00:00..00:45 (02:xx CEST), then the
	 * repeated 02:xx CET is skipped, 02:00 UTC is 03:00 CET. */
	after = utc(2024, 10, 26, 23, 59);
	fires = 0;
	while (next("*/15 * * * *", after) < utc(2024, 10, 27, 2, 0)) {
		after = next("*/15 * * * *", after);
		fires++;
	}
	CHECK_INT(fires, 4);
	CHECK_INT(next("*/15 * * * *", utc(2024, 10, 27, 0, 45)),
	    utc(2024, 10, 27, 2, 0));
}

static void
test_dst_new_york(void)
{
	time_t t;

	set_tz("America/New_York");
	/* 2024-03-10: 02:00 EST jumps to 03:00 EDT (07:00 UTC). */
	t = next("30 2 * * *", utc(2024, 3, 9, 12, 0));
	CHECK_INT(t, utc(2024, 3, 10, 7, 0));
	CHECK_INT(next("30 2 * * *", t), utc(2024, 3, 11, 6, 30));
	/* @daily is untouched: midnight exists */
	CHECK_INT(next("@daily", utc(2024, 3, 9, 12, 0)),
	    utc(2024, 3, 10, 5, 0));
	CHECK_INT(next("@daily", utc(2024, 3, 10, 5, 0)),
	    utc(2024, 3, 11, 4, 0));
	/* 2024-11-03: 02:00 EDT goes back to 01:00 EST; 01:30 exists at
	 * 05:30 and 06:30 UTC and fires only at the first. */
	t = next("30 1 * * *", utc(2024, 11, 2, 12, 0));
	CHECK_INT(t, utc(2024, 11, 3, 5, 30));
	CHECK_INT(next("30 1 * * *", t), utc(2024, 11, 4, 6, 30));
	/* a job after the change is an hour later in UTC */
	CHECK_INT(next("0 3 * * *", utc(2024, 11, 3, 5, 30)),
	    utc(2024, 11, 3, 8, 0));
}

int
main(void)
{
	check_tmpdir("test_cron");
	CHECK_CASE(test_parse_errors);
	CHECK_CASE(test_basic);
	CHECK_CASE(test_month_ends);
	CHECK_CASE(test_day_rule);
	CHECK_CASE(test_dst_berlin);
	CHECK_CASE(test_dst_new_york);
	return check_done();
}
