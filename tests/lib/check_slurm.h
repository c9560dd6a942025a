/*
 * check_slurm.h: a Slurm cluster of the test's own, from
 * tests/lib/slurm-cluster.sh.
 */
#ifndef TESTS_CHECK_SLURM_H
#define TESTS_CHECK_SLURM_H

/*
 * Start the cluster in dir/cluster: one node named after this host, or
 * with classes ("m1 m2 m1") one node per class (slurm-cluster.sh says
 * how).  Returns 0 with SLURM_CONF set and its stop registered with
 * atexit(); 77 where it cannot run here and we are not root (said, for
 * a skip); 1 when it did not start (said).
 */
int check_slurm_start(const char *dir, const char *classes);

/* Stop the cluster check_slurm_start() started; again is harmless. */
void check_slurm_stop(void);

#endif
