/* SPDX-License-Identifier: MIT */
/*
 * reuse.h - computed tables made beside the one asked for, kept until asked.
 *
 * Some computed tables read the same rows the same way: HTA's three
 * breakdowns read every device task of every rank, and a report run that
 * names one of them usually names the others next. A build may then make
 * its siblings in the same pass, into staging tables (temp.tb_m_reuse_<name>)
 * with the notes they gave, under a key of what their rows depend on beside
 * the data: the options, the part of the load, and the run's window (its
 * TEMP views and the TEMP tables that hold its ranges and current rank;
 * the DB itself does not change during a run, and a run's TEMP objects go
 * when it ends). When the sibling is asked for with the same key, its rows
 * move into temp.<name> and its notes are given then, in their order: the
 * table and the notes are those a build of its own would have made. With
 * another key the staging is dropped and the table is built as usual.
 */
#ifndef TB_METRICS_REUSE_H
#define TB_METRICS_REUSE_H

#include "metrics/metrics.h"

/*
 * The key of a build under m: opts (the build's options as text, given by
 * the caller) and m's phase, part and window. Returns new (sqlite3_free),
 * or NULL (out of memory or a failing read: then nothing is reused).
 */
char *reuse_key(const metric_ctx *m, const char *opts);

/*
 * When temp.tb_m_reuse_<name> was made under key: creates temp.<name> with
 * create (its DROP and CREATE statements), moves the rows in, gives the
 * notes kept with them to m->note in order, forgets them, and sets *taken.
 * Else *taken is 0 and nothing changes. key may be NULL (never taken).
 */
tb_status reuse_take(const metric_ctx *m, const char *name, const char *create, const char *key, int *taken,
                     tb_error *err);

/* The staging table's name for name: "tb_m_reuse_<name>" into out. */
void reuse_staging(const char *name, char *out, size_t n);

/*
 * Forgets what is kept of name (staging table, notes, key). Call it before
 * a build that will stage name again, and when staging it failed.
 */
tb_status reuse_forget(const metric_ctx *m, const char *name, tb_error *err);

/* Records that the staging table of name now holds its rows under key. */
tb_status reuse_keep(const metric_ctx *m, const char *name, const char *key, tb_error *err);

/* A note callback (metric_ctx.note) that keeps the notes of name's build
 * for reuse_take; ctx is a reuse_notes. A failed insert is counted. */
typedef struct reuse_notes {
    sqlite3 *db;
    const char *name;
    int failed;
} reuse_notes;

void reuse_note(void *ctx, const char *msg);

#endif
