/*
 * check_daemon.h: what the tests that start bisectd in a folder of their
 * own share: its configuration over the demo's releases, and its store
 * read while it runs.
 */
#ifndef TESTS_CHECK_DAEMON_H
#define TESTS_CHECK_DAEMON_H

#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * Write file: a daemon keeping its state in dir/state/ (d.db, its
 * socket), one engine "basert" over build's demo releases timed by the
 * CPU clock (tests/demo-cpu: a loaded machine does not turn a verdict
 * into "unknown"), with bisectd_keys added to [bisectd] and engine_keys
 * to the engine (each "\tKEY = VALUE\n" lines, or "").
 */
void check_daemon_config(const char *file, const char *dir,
    const char *build, const char *bisectd_keys, const char *engine_keys);

/*
 * Write file: a daemon in dir/state/ with the matrix "fleet" of the
 * fake releases "fleet" (tests/CMakeLists.txt) on two runners by the
 * weights "small" (1 KiB) and "big" (1 MiB), written here: runners the
 * two [runner] sections ("r1, r2" their names in runner_list), source
 * the engine's source lines, extra what follows the engine.
 */
void check_matrix_config(const char *file, const char *dir,
    const char *runners, const char *runner_list, const char *source,
    const char *extra);

/* dir/state/d.db, open to read and write; NULL, its error printed, when
 * it does not open. */
struct store *check_daemon_store(const char *dir);

/*
 * Job id's state in dir/state/d.db, read until it is neither queued nor
 * running (timeout_s at most), into buf ("" while never read); its exit
 * code into *code (-1 while never read) when code is not NULL.
 */
const char *check_job_wait(const char *dir, int64_t id, double timeout_s,
    char *buf, size_t len, int *code);

#endif
