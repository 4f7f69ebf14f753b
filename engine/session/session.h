/* SPDX-License-Identifier: MIT */
/*
 * session.h - the session's inside (private to the engine): what the verbs
 * read of a session (its connection, whether its DB holds gathered rows)
 * and the pieces of session.c, dist.c and scoped.c.
 */
#ifndef TB_SESSION_SESSION_H
#define TB_SESSION_SESSION_H

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>

#include "tracebook/session.h"

/* A distributed run's rounds (compare loads two sides) on process 0. */
#define SESSION_MAX_ROUNDS 4

struct tb_session {
    tb_session_options opt;   /* a copy; the arrays it points to are the caller's */
    tb_window window;
    int have_db;              /* the DB was found or built */
    tb_session_source source;
    char path[PATH_MAX];      /* the DB */
    sqlite3 *db;              /* the one read-only connection, opened at the first need */
    int scoped;               /* the DB holds rows gathered from shards (run_part.replay) */
    char folder[PATH_MAX];    /* a single process's private folder of partials ("" when none) */
    /* a distributed run (opt.dist size > 1) */
    int dist_size, dist_rank;
    char rounds[SESSION_MAX_ROUNDS][PATH_MAX]; /* process 0: each round's folder */
    int n_rounds;
    int failed_early;         /* a process whose command failed before its session: it only answers rounds */
};

/*
 * The session's DB, found or built at the first call (a load, a merge, a
 * round of the processes, the partials of a scoped run), and its read-only
 * connection. Borrowed (valid until tb_session_close); NULL with err set.
 */
sqlite3 *session_db(tb_session *s, tb_error *err);

/* 1 when the session's DB holds the rows of rank- and cluster-scope reports
 * gathered from shards (a run writes them: run_part.replay). */
int session_replay(const tb_session *s);

/* options.c: the load options of the session's inputs (output and shard fields unset). */
tb_load_options session_load_options(const tb_session *s);

/* Removes the files of dir and dir itself (a private folder of the run). */
void session_remove_folder(const char *dir);
/* Frees v[0..n) and v (NULL is fine). */
void session_free_list(char **v, size_t n);

/* dist.c: the rounds of a distributed run (process 0's side). */
/* Every process loads its part of inputs into a shard in a new private
 * folder, whose path goes to dir. A part that failed fails the round (its
 * process and file named) unless keep_going leaves it out with a warning. */
tb_status dist_load(tb_session *s, const char *const *inputs, size_t n, char *dir, size_t cap, tb_error *err);
/* Every process runs the session's reports on its shard of the last round
 * into a partial (books: the round's books DB); *parts gets their paths
 * (new strings in a new array). */
tb_status dist_partials(tb_session *s, const char *books, char ***parts, size_t *n, tb_error *err);
/* Process 0: the books DB of the processes' shards with every shard's rank-
 * and cluster-scope rows gathered into it (scoped_db over processes). */
tb_status dist_scoped_db(tb_session *s, char *books, size_t cap, tb_error *err);
/* Process 0: removes the rounds' folders. */
void dist_drop(tb_session *s);
/* Process 0: tells the others to end with code. */
void dist_stop(tb_session *s, int code);
/* Other processes: serve process 0's rounds until it ends; returns its code. */
int dist_serve(tb_session *s);

/* scoped.c: the books DB of the session's shard DBs with every shard's rank-
 * and cluster-scope rows gathered into it, one shard after the other. */
tb_status scoped_db(tb_session *s, char *books, size_t cap, tb_error *err);
/* The books DB of the shards in inputs at out (a books-only load). */
tb_status scoped_books(tb_session *s, const char *const *inputs, size_t n, const char *out, tb_error *err);
/* One shard's rows of the session's reports into out. */
tb_status scoped_partial(tb_session *s, const char *shard, const char *books, const char *out, tb_error *err);

#endif
