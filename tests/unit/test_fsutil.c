/*
 * test_fsutil.c: fs_write_atomic() from many threads at once to one
 * path: every write succeeds, what a reader finds there is always one
 * writer's whole content, and no temporary is left behind.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"

#define WRITERS 8
#define WRITES 40
#define SIZE (64 * 1024)

static atomic_int failed, done;

static void *
writer(void *arg)
{
	char *data = malloc(SIZE);
	struct err e = ERR_INIT;

	if (data == NULL)
		abort();
	memset(data, 'a' + (int)(intptr_t)arg, SIZE);
	for (int i = 0; i < WRITES; i++)
		if (fs_write_atomic("one.stamp", data, SIZE, 0644, &e) < 0) {
			fprintf(stderr, "writer %d: %s\n", (int)(intptr_t)arg,
			    e.msg);
			failed++;
		}
	free(data);
	done++;
	return NULL;
}

/* Whole: SIZE bytes of one letter. */
static int
whole(const struct buf *b)
{
	if (b->len != SIZE)
		return 0;
	for (size_t i = 1; i < b->len; i++)
		if (b->data[i] != b->data[0])
			return 0;
	return 1;
}

static void
test_one_path_many_threads(void)
{
	pthread_t t[WRITERS];
	int reads = 0, torn = 0, temporaries = 0;
	struct dirent *de;
	DIR *d;

	for (intptr_t i = 0; i < WRITERS; i++)
		CHECK_INT(pthread_create(&t[i], NULL, writer, (void *)i), 0);
	while (done < WRITERS) {
		struct buf b = BUF_INIT(2 * SIZE);
		struct err e = ERR_INIT;

		if (fs_read_file("one.stamp", &b, &e) == 0) {
			reads++;
			torn += !whole(&b);
		}
		buf_release(&b);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(failed, 0);
	CHECK_INT(torn, 0);
	CHECK(reads > 0);
	if ((d = opendir(".")) != NULL) {
		while ((de = readdir(d)) != NULL)
			temporaries += strncmp(de->d_name, "one.stamp.tmp.", 14) == 0;
		closedir(d);
	}
	CHECK_INT(temporaries, 0);
}

/* A temporary a dead process left under this pid's name is not
 * reused: the write goes through and leaves it as it was. */
static void
test_stale_temporary(void)
{
	char stale[64], *text;
	struct err e = ERR_INIT;

	snprintf(stale, sizeof(stale), "two.stamp.tmp.%ld.0", (long)getpid());
	check_write_file(stale, "left by a crash");
	CHECK_INT(fs_write_atomic("two.stamp", "new\n", 4, 0644, &e), 0);
	text = check_read_file("two.stamp");
	CHECK_STR(text, "new\n");
	free(text);
	text = check_read_file(stale);
	CHECK_STR(text, "left by a crash");
	free(text);
}

int
main(void)
{
	check_tmpdir("fsutil");
	CHECK_CASE(test_stale_temporary);
	CHECK_CASE(test_one_path_many_threads);
	return check_done();
}
