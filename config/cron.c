/*
 * cron.c: parsing 5-field cron expressions and computing when one fires
 * next (see cron.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may",
	"jun", "jul", "aug", "sep", "oct", "nov", "dec" };
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu",
	"fri", "sat" };

/* A number or, where names is given, a three-letter name. */
static int
parse_value(const char **p, int base, const char *const *names, int nnames,
    int *out)
{
	const char *s = *p;
	char *end;
	long v;

	if (names && isalpha((unsigned char)s[0])) {
		for (int i = 0; i < nnames; i++)
			if (strncasecmp(s, names[i], 3) == 0 &&
			    !isalpha((unsigned char)s[3])) {
				*out = i + base;
				*p = s + 3;
				return 0;
			}
		return -1;
	}
	if (!isdigit((unsigned char)s[0]))
		return -1;
	v = strtol(s, &end, 10);
	if (end - s > 4)
		return -1;
	*out = (int)v;
	*p = end;
	return 0;
}

/*
 * One field: comma-separated items of "*", "N", "N-M", each with an
 * optional "/STEP".  Sets bits lo..hi of *bits.
 */
static int
parse_field(const char *s, int lo, int hi, const char *const *names,
    int nnames, int name_base, uint64_t *bits, int *star)
{
	*bits = 0;
	*star = strcmp(s, "*") == 0;
	for (;;) {
		int a, b, step = 1;

		if (*s == '*') {
			a = lo;
			b = hi;
			s++;
		} else {
			if (parse_value(&s, name_base, names, nnames, &a) < 0)
				return -1;
			b = a;
			if (*s == '-') {
				s++;
				if (parse_value(&s, name_base, names, nnames,
				    &b) < 0)
					return -1;
			}
		}
		if (*s == '/') {
			s++;
			if (parse_value(&s, 0, NULL, 0, &step) < 0 || step < 1)
				return -1;
			if (a == b && b != hi)
				b = hi;	/* "5/15" means 5-hi/15 */
		}
		if (a < lo || b > hi || a > b)
			return -1;
		for (int i = a; i <= b; i += step)
			*bits |= (uint64_t)1 << i;
		if (*s == '\0')
			return 0;
		if (*s != ',')
			return -1;
		s++;
	}
}

int
cron_parse(const char *expr, struct cron *c, const char **why)
{
	static const struct {
		const char *name, *expansion;
	} shorthands[] = {
		{ "@hourly", "0 * * * *" },
		{ "@daily", "0 0 * * *" },
		{ "@midnight", "0 0 * * *" },
		{ "@weekly", "0 0 * * 0" },
		{ "@monthly", "0 0 1 * *" },
		{ "@yearly", "0 0 1 1 *" },
		{ "@annually", "0 0 1 1 *" },
	};
	static const char *const field_errors[] = {
		"bad minute field (expected 0-59)",
		"bad hour field (expected 0-23)",
		"bad day-of-month field (expected 1-31)",
		"bad month field (expected 1-12 or jan-dec)",
		"bad day-of-week field (expected 0-7 or sun-sat)",
	};
	char copy[256], *fields[6], *save = NULL, *tok;
	uint64_t bits;
	int nf = 0, star;

	memset(c, 0, sizeof(*c));
	if (expr[0] == '@') {
		for (size_t i = 0; i < sizeof(shorthands) / sizeof(*shorthands);
		    i++)
			if (strcmp(expr, shorthands[i].name) == 0)
				return cron_parse(shorthands[i].expansion, c,
				    why);
		*why = "unknown @ shorthand (expected @hourly, @daily, "
		    "@weekly, @monthly or @yearly)";
		return -1;
	}
	if (strlen(expr) >= sizeof(copy)) {
		*why = "expression too long";
		return -1;
	}
	strcpy(copy, expr);
	for (tok = strtok_r(copy, " \t", &save); tok && nf < 6;
	    tok = strtok_r(NULL, " \t", &save))
		fields[nf++] = tok;
	if (nf != 5) {
		*why = "expected 5 fields: minute hour day-of-month month "
		    "day-of-week";
		return -1;
	}
	if (parse_field(fields[0], 0, 59, NULL, 0, 0, &bits, &star) < 0)
		goto bad0;
	c->minute = bits;
	if (parse_field(fields[1], 0, 23, NULL, 0, 0, &bits, &star) < 0)
		goto bad1;
	c->hour = (uint32_t)bits;
	if (parse_field(fields[2], 1, 31, NULL, 0, 0, &bits, &c->dom_star) < 0)
		goto bad2;
	c->dom = (uint32_t)bits;
	if (parse_field(fields[3], 1, 12, month_names, 12, 1, &bits, &star) < 0)
		goto bad3;
	c->month = (uint16_t)bits;
	if (parse_field(fields[4], 0, 7, dow_names, 7, 0, &bits,
	    &c->dow_star) < 0)
		goto bad4;
	if (bits & (1u << 7))
		bits = (bits | 1u) & 0x7f;
	c->dow = (uint8_t)bits;
	return 0;
bad0:	*why = field_errors[0]; return -1;
bad1:	*why = field_errors[1]; return -1;
bad2:	*why = field_errors[2]; return -1;
bad3:	*why = field_errors[3]; return -1;
bad4:	*why = field_errors[4]; return -1;
}

static int
day_matches(const struct cron *c, const struct tm *tm)
{
	int dom = (c->dom >> tm->tm_mday) & 1;
	int dow = (c->dow >> tm->tm_wday) & 1;

	if (!((c->month >> (tm->tm_mon + 1)) & 1))
		return 0;
	/* crontab(5): with both fields restricted, either may match. */
	if (!c->dom_star && !c->dow_star)
		return dom || dow;
	return dom && dow;
}

/* Whether t shows the wall time of want (date, hour, minute). */
static int
shows(time_t t, const struct tm *want)
{
	struct tm tm;

	localtime_r(&t, &tm);
	return tm.tm_year == want->tm_year && tm.tm_mon == want->tm_mon &&
	    tm.tm_mday == want->tm_mday && tm.tm_hour == want->tm_hour &&
	    tm.tm_min == want->tm_min;
}

/* Whether the wall time t shows is later than want's (same day). */
static int
shows_later(time_t t, const struct tm *want)
{
	struct tm tm;

	localtime_r(&t, &tm);
	if (tm.tm_year != want->tm_year || tm.tm_mon != want->tm_mon ||
	    tm.tm_mday != want->tm_mday)
		return tm.tm_year > want->tm_year ||
		    (tm.tm_year == want->tm_year && (tm.tm_mon > want->tm_mon ||
		    (tm.tm_mon == want->tm_mon && tm.tm_mday > want->tm_mday)));
	return tm.tm_hour * 60 + tm.tm_min > want->tm_hour * 60 + want->tm_min;
}

/*
 * The instant a local wall time first occurs.  mktime() alone does not
 * say: with tm_isdst = -1 it may pick either of the two instants of a
 * repeated time, and for a time inside a gap it returns some instant
 * shifted by the offset change.  So both DST readings are tried and only
 * those that show the wall time asked for are kept; when neither does,
 * the time is in a gap and it fires at the first minute after the gap:
 * the first instant, found by bisection over the day, whose wall time is
 * later.  noon is an instant on the same day.
 */
static time_t
first_instant(const struct tm *want, time_t noon)
{
	time_t best = (time_t)-1, lo, hi;

	for (int dst = 0; dst <= 1; dst++) {
		struct tm probe = *want;
		time_t t;

		probe.tm_sec = 0;
		probe.tm_isdst = dst;
		t = mktime(&probe);
		if (t != (time_t)-1 && shows(t, want) &&
		    (best == (time_t)-1 || t < best))
			best = t;
	}
	if (best != (time_t)-1)
		return best;
	/* In a gap: shows_later() is false at lo and true at hi. */
	lo = noon - 14 * 3600;
	hi = noon + 14 * 3600;
	if (shows_later(lo, want) || !shows_later(hi, want))
		return (time_t)-1;
	while (hi - lo > 1) {
		time_t mid = lo + (hi - lo) / 2;

		if (shows_later(mid, want))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int
cron_next(const struct cron *c, time_t after, time_t *next)
{
	struct tm day;
	time_t t;

	localtime_r(&after, &day);
	day.tm_sec = 0;
	day.tm_min = 0;
	day.tm_hour = 0;
	/* Walk local calendar days; within a matching day, its minutes. */
	for (int n = 0; n < 366 * 8 + 2; n++) {
		struct tm d = day, probe;
		time_t noon;

		d.tm_mday += n;
		d.tm_isdst = -1;
		d.tm_hour = 12;	/* noon: never inside a DST change */
		if ((noon = mktime(&d)) == (time_t)-1)
			return -1;
		if (!day_matches(c, &d))
			continue;
		for (int h = 0; h < 24; h++) {
			if (!((c->hour >> h) & 1))
				continue;
			for (int m = 0; m < 60; m++) {
				if (!((c->minute >> m) & 1))
					continue;
				probe = d;
				probe.tm_hour = h;
				probe.tm_min = m;
				/*
				 * A time that exists twice counts at its
				 * first instant only: once that has passed
				 * it does not fire again.  Times in a gap
				 * all map to the gap's end, so they fire
				 * once together.
				 */
				t = first_instant(&probe, noon);
				if (t != (time_t)-1 && t > after) {
					*next = t;
					return 0;
				}
			}
		}
	}
	return -1;
}

int
cron_next_due(const struct cron *c, time_t last, time_t now, time_t *next)
{
	return cron_next(c, last > 0 ? last : now, next);
}
