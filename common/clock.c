/* clock.c: the monotonic clock (see clock.h). */
#include <errno.h>
#include <time.h>

#include "clock.h"

int64_t
clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t
clock_now_ms(void)
{
	return clock_now_ns() / 1000000;
}

void
clock_sleep_ns(int64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000LL),
	    (long)(ns % 1000000000LL) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
