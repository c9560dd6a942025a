/*
 * test_spool.c: the Slurm spool and its files are taken as this
 * daemon's only when no one else could have written them: owned by this
 * user, writable by no one else, a folder or a regular file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bisectd/remote/remote.h"
#include "check.h"
#include "common/err.h"

static void
test_modes(void)
{
	struct err e = ERR_INIT;

	CHECK_INT(mkdir("spool", 0700), 0);
	CHECK_INT(remote_trusted("spool", 1, &e), 0);
	CHECK_INT(chmod("spool", 0770), 0);
	CHECK_INT(remote_trusted("spool", 1, &e), -1);
	CHECK_CONTAINS(e.msg, "'spool' refused: writable by its group "
	    "(mode 0770)");
	CHECK_INT(chmod("spool", 01777), 0);
	CHECK_INT(remote_trusted("spool", 1, &e), -1);
	CHECK_CONTAINS(e.msg, "writable by everyone (mode 1777)");
	CHECK_INT(chmod("spool", 0755), 0);

	check_write_file("spool/a.result", "x");
	CHECK_INT(chmod("spool/a.result", 0644), 0);
	CHECK_INT(remote_trusted("spool/a.result", 0, &e), 0);
	CHECK_INT(chmod("spool/a.result", 0666), 0);
	CHECK_INT(remote_trusted("spool/a.result", 0, &e), -1);
	CHECK_CONTAINS(e.msg, "writable by everyone");
	CHECK_INT(symlink("a.result", "spool/b.result"), 0);
	CHECK_INT(remote_trusted("spool/b.result", 0, &e), -1);
	CHECK_CONTAINS(e.msg, "not a regular file");
	CHECK_INT(remote_trusted("spool/a.result", 1, &e), -1);
	CHECK_CONTAINS(e.msg, "not a folder");
	CHECK_INT(remote_trusted("spool/none.result", 0, &e), -1);
	CHECK_CONTAINS(e.msg, "No such file");
}

/* A request is never written into a spool others may write. */
static void
test_request_refused(void)
{
	struct err e = ERR_INIT;

	CHECK_INT(mkdir("open", 0700), 0);
	CHECK_INT(chmod("open", 0777), 0);
	CHECK_INT(remote_request_write("open", "0123456789abcdef0123456789abcdef",
	    "{}", 0, &e), -1);
	CHECK_CONTAINS(e.msg, "'open' refused");
	CHECK(access("open/0123456789abcdef0123456789abcdef.request",
	    F_OK) < 0);
	CHECK_INT(chmod("open", 0755), 0);
	CHECK_INT(remote_request_write("open", "0123456789abcdef0123456789abcdef",
	    "{}", 0, &e), 0);
}

/* Another user's file, even one no one else may write. */
static void
test_owner(void)
{
	struct err e = ERR_INIT;

	if (geteuid() != 0) {
		fprintf(stderr, "test_owner: skipped, needs root to give a "
		    "file to another user\n");
		return;
	}
	check_write_file("theirs.result", "x");
	CHECK_INT(chown("theirs.result", 65534, 65534), 0);
	CHECK_INT(remote_trusted("theirs.result", 0, &e), -1);
	CHECK_CONTAINS(e.msg, "owned by uid 65534, not by this user");
}

int
main(void)
{
	check_tmpdir("spool");
	umask(022);
	CHECK_CASE(test_modes);
	CHECK_CASE(test_request_refused);
	CHECK_CASE(test_owner);
	return check_done();
}
