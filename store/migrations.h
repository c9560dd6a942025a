/*
 * migrations.h: the schema migrations embedded from sql/NNN_*.sql by
 * sql/embed.cmake.  migrations[i].version == i + 1; the database's
 * PRAGMA user_version is the number of the last one applied.
 */
#ifndef STORE_MIGRATIONS_H
#define STORE_MIGRATIONS_H

#include <stddef.h>

struct migration {
	int version;
	const char *name;	/* the file's name, for messages */
	const char *sql;
};

extern const struct migration migrations[];
extern const size_t migrations_count;

#endif
