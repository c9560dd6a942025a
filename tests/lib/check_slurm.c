/*
 * check_slurm.c: a Slurm cluster of the test's own (check_slurm.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_slurm.h"

static char cluster[PATH_MAX];

void
check_slurm_stop(void)
{
	char cmd[2 * PATH_MAX + 64];

	if (cluster[0] == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "sh %s/tests/lib/slurm-cluster.sh stop %s",
	    check_source_dir(), cluster);
	check_run(cmd, NULL);
}

int
check_slurm_start(const char *dir, const char *classes)
{
	char cmd[2 * PATH_MAX + 512], *out = NULL, *conf;
	int rc;

	snprintf(cluster, sizeof(cluster), "%s/cluster", dir);
	snprintf(cmd, sizeof(cmd), "sh %s/tests/lib/slurm-cluster.sh start %s "
	    "%s", check_source_dir(), cluster, classes ? classes : "");
	rc = check_run(cmd, &out);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77 && geteuid() != 0) {
		printf("SKIP: no Slurm cluster here: %s", out ? out : "");
		free(out);
		cluster[0] = '\0';
		return 77;
	}
	if (rc != 0 || out == NULL || (conf = strstr(out, "SLURM_CONF=")) ==
	    NULL) {
		fprintf(stderr, "the test cluster did not start: %s\n",
		    out ? out : "");
		free(out);
		check_slurm_stop();
		return 1;
	}
	atexit(check_slurm_stop);
	conf[strcspn(conf, "\n")] = '\0';
	setenv("SLURM_CONF", conf + strlen("SLURM_CONF="), 1);
	free(out);
	return 0;
}
