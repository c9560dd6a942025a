/*
 * clock.h: the monotonic clock in nanoseconds, and a sleep on it that
 * goes on after a signal: what timeouts and bounded waits are measured by.
 */
#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in ns. */
int64_t clock_now_ns(void);

/* CLOCK_MONOTONIC now, in ms. */
int64_t clock_now_ms(void);

/* Sleep ns nanoseconds, resumed after EINTR. */
void clock_sleep_ns(int64_t ns);

#endif
