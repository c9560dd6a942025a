/*
 * logto.h: the logging callback the daemon hands to its parts (queue,
 * watch, alerts), and one printf-style way to call it.
 */
#ifndef COMMON_LOGTO_H
#define COMMON_LOGTO_H

/* Receives one whole message per call; level is syslog(3)'s. */
typedef void (*log_fn)(void *arg, int level, const char *msg);

/* Format a message and hand it to fn; nothing happens when fn is NULL. */
void log_to(log_fn fn, void *arg, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
