/*
 * cgroup.h: a cgroup v2 per benchmark run, under the cgroup this process
 * was started in: what the runner (runner.c) uses to start a child
 * inside its own cgroup, kill everything the child left behind at once
 * (cgroup.kill), and read what the kernel's OOM killer did there.
 */
#ifndef BISECTD_CGROUP_H
#define BISECTD_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct err;

/*
 * Whether runs can have cgroups here (probed once: cgroup2 mounted, our
 * cgroup writable, cgroup.kill present; cgroups a dead bisectd left are
 * removed then).  1 with our cgroup's folder in where, or 0 with the
 * reason in why; either buffer may be NULL.
 */
int cgroup_available(char *where, size_t wlen, char *why, size_t ylen);

/*
 * Leave the root of the delegated cgroup this process was started in
 * (systemd's Delegate=yes) for its child leaf, made if missing, so that
 * runs can have cgroups beside it with a memory cap: cgroup v2 enables
 * a controller for children only in a cgroup without processes of its
 * own.  Only when we are its one process and may write its cgroup.procs
 * and cgroup.subtree_control; call it before the first run.  1 with the
 * leaf's folder in where; 0 (nothing moved) or -1 (the move failed)
 * with the reason in why.
 */
int cgroup_leave_delegated(const char *leaf, char *where, size_t wlen,
    char *why, size_t ylen);

/* The same on the cgroup folder dir for the process self, recording
 * nothing: what cgroup_leave_delegated does once it found dir. */
int cgroup_move_to_leaf(const char *dir, const char *leaf, pid_t self,
    char *why, size_t ylen);

/*
 * A cgroup for one run, named after marker (the spare one when there
 * is one): its folder open for clone3 (O_DIRECTORY), the folder's path
 * in *dir (malloced) and its memory.events oom_kill count in
 * *oom_before; or -1 with e set.
 */
int cgroup_open_run(const char *marker, char **dir, int64_t *oom_before,
    struct err *e);

/*
 * Done with a run's cgroup: wait (bounded) for it to empty, keep it as
 * the spare, or remove it when killed (Linux kills a child cloned later
 * into a cgroup cgroup.kill was used on).  Frees *dir and sets it NULL.
 */
void cgroup_close_run(char **dir, int killed);

/*
 * Cap the memory of the run cgroup at dir: memory.max = bytes ("max",
 * no cap, when bytes is 0) and no swap beyond it, so that a run over
 * the cap is killed by the kernel inside its cgroup (memory.events
 * oom_kill) instead of the machine choosing a victim, the daemon
 * perhaps.  0, or -1 with errno when the memory controller is not
 * enabled for our cgroup's children.
 */
int cgroup_set_memory_max(const char *dir, uint64_t bytes);

/* Kill every process in the cgroup at dir (cgroup.kill). */
void cgroup_kill(const char *dir);

/* The cgroup's memory.events oom_kill count, -1 without one. */
int64_t cgroup_oom_kills(const char *dir);

/* The pids in the cgroup at dir other than self; how many were stored. */
size_t cgroup_members(const char *dir, pid_t self, pid_t *pids,
    size_t max);

/* Whether pid is (still) in the cgroup at dir. */
int cgroup_has(pid_t pid, const char *dir);

/* Remove the spare cgroup (registered with atexit once one is kept). */
void cgroup_shutdown(void);

#endif
