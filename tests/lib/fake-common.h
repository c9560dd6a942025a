/*
 * fake-common.h: what the stand-ins the tests start (fake-engine,
 * fake-server, testserver) share: dying with their name, whole writes
 * and HTTP chunks, a loopback listener and its port file, stopping on
 * a signal.
 */
#ifndef TESTS_FAKE_COMMON_H
#define TESTS_FAKE_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* The program's name, for die(): each program defines it. */
extern const char *const progname;

/* Set by stop_on_signals()'s handler. */
extern volatile sig_atomic_t stopping;

/* "PROGNAME: " and the message on stderr, then exit(1). */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* SIGTERM and SIGINT set stopping instead of killing; SIGPIPE ignored,
 * so a client gone is a write that fails. */
void stop_on_signals(void);

/* All len bytes to fd, through EINTR and, on a non-blocking fd, a full
 * socket; a blocking one that timed out (SO_SNDTIMEO) gives up: 0 or
 * -1. */
int write_all(int fd, const void *p, size_t len);

/* One chunk of a chunked HTTP body: 0 or -1. */
int write_chunk(int fd, const char *data);

/* s without its leading and trailing blanks, in place. */
char *trim(char *s);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t now_ns(void);

/* A TCP socket listening on 127.0.0.1:port (0: any), SOCK_CLOEXEC and
 * the flags given (SOCK_NONBLOCK); the port it got in *bound. */
int listen_loopback(int port, int flags, int *bound);

/* port and a newline written to path, whole or not at all (a .tmp file
 * renamed), for the test that waits for it. */
void write_port_file(const char *path, int port);

#endif
