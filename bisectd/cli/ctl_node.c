/*
 * ctl_node.c: bisectctl node-run, what a Slurm batch job runs on its
 * node: one measurement request carried out without the daemon's
 * database, its result left in the spool for the daemon to ingest.
 */
#include <stdio.h>

#include "bisectd/remote/remote.h"
#include "common/err.h"
#include "ctl.h"

int
cmd_node_run(struct ctl *c)
{
	struct err e = ERR_INIT;

	if (remote_node_run(c->conf, c->argv[0], &e) < 0)
		return ctl_failed(&e);
	return EXIT_OK;
}
