/*
 * store.h: the SQLite store.  Every SQL statement of the project lives
 * under store/; callers get and give plain structs.  This header is the
 * whole store's; each of the ones it includes is one concern's, with the
 * file that implements it beside it (db.h: db.c, the database itself).
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include "db.h"
#include "release.h"
#include "run.h"
#include "canary.h"
#include "points.h"
#include "release_runs.h"
#include "summary.h"
#include "ablation.h"
#include "job.h"
#include "tally.h"
#include "slurm.h"
#include "alert_log.h"
#include "serve.h"

#endif
