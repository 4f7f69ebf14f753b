/* SPDX-License-Identifier: MIT */
/*
 * runner_ranks.c - runs a report of `scope: rank` once per rank.
 *
 * The window's TEMP views are made to show one rank at a time, under its id
 * in the whole load (query/window.c: window_for_rank); computed tables that
 * are rank by rank are built once over every rank and read through views of
 * the current rank, others are built again for each rank; the rows of every
 * rank go to the same sinks in rank order, and the views of every rank are
 * put back after. It runs on the core of runner.c (runner_int.h), and the
 * wording of its skips is shared with runner_replay.c, which writes such a
 * report from the rows gathered from shards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "query/runner_int.h"
#include "query/window.h"
#include "tracebook/error.h"
#include "tracebook/query.h"

/* The id the DB's rank shows: its id in the whole load (run_part.rank_ids). */
int64_t runner_shown_id(const run_part *o, int64_t rank)
{
    for (size_t j = 0; j < o->n_rank_ids; j++)
        if (o->rank_ids[j] == rank)
            return o->rank_shown[j];
    return rank;
}

typedef struct scope_rank {
    int64_t rank;  /* rankId in the DB */
    int64_t shown; /* its id in the whole load */
} scope_rank;

static int by_shown(const void *a, const void *b)
{
    const scope_rank *x = a, *y = b;
    return x->shown < y->shown ? -1 : x->shown > y->shown;
}

/* The ranks a rank-scope report runs on, by their id in the load: the
 * window's ranks, else those of TB_RANK (a DB made another way: its tasks'). */
static tb_status scope_ranks(runner *r, scope_rank **out, size_t *n, tb_error *err)
{
    const tb_run_options *o = r->opt;
    scope_rank *v = NULL;
    size_t k = 0, cap = 0;
    *out = NULL;
    *n = 0;
    if (o->window.set) {
        if (!(v = malloc((r->wi->n_ranks ? r->wi->n_ranks : 1) * sizeof *v)))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        for (; k < r->wi->n_ranks; k++)
            v[k].rank = r->wi->ranks[k].rank;
    } else {
        static const char *const rank_sql[] = {"SELECT DISTINCT rankId FROM main.TB_RANK ORDER BY 1",
                                               "SELECT DISTINCT rankId FROM main.TASK ORDER BY 1"};
        r->sb.trusted = 1;
        for (size_t q = 0; q < 2 && k == 0; q++) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(r->db, rank_sql[q], -1, &st, NULL) != SQLITE_OK)
                continue;
            while (sqlite3_step(st) == SQLITE_ROW) {
                if (k == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    scope_rank *nv = realloc(v, nc * sizeof *nv);
                    if (!nv) {
                        sqlite3_finalize(st);
                        free(v);
                        r->sb.trusted = 0;
                        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    }
                    v = nv;
                    cap = nc;
                }
                v[k++].rank = sqlite3_column_int64(st, 0);
            }
            sqlite3_finalize(st);
        }
        r->sb.trusted = 0;
    }
    for (size_t i = 0; i < k; i++)
        v[i].shown = runner_shown_id(r->pt, v[i].rank);
    if (k)
        qsort(v, k, sizeof *v, by_shown);
    *out = v;
    *n = k;
    return TB_OK;
}

/*
 * Which of a rank-scope report's `requires` no row of the DB (as its views
 * show it, every rank at once) meets: mask[i] '1' for requirement i, '0'
 * when met or when it names a computed table (those are built per rank).
 * Returns new, NULL when out of memory.
 */
static char *requires_mask(runner *r, const tb_spec_report *rep)
{
    char *mask = malloc(rep->n_requires + 1);
    if (!mask)
        return NULL;
    for (size_t i = 0; i < rep->n_requires; i++)
        mask[i] = !metrics_find(rep->requires[i]) && !runner_has_rows(r, rep->requires[i], NULL) ? '1' : '0';
    mask[rep->n_requires] = 0;
    return mask;
}

void runner_scope_skip_reason(const tb_spec_report *rep, int window, const char *mask, char *out, size_t n)
{
    const char *in = window ? " in the window" : "";
    for (size_t i = 0; mask && i < rep->n_requires; i++)
        if (mask[i] == '1') {
            snprintf(out, n, "the data has no %s rows%s", rep->requires[i], in);
            return;
        }
    if (!rep->n_requires) {
        snprintf(out, n, "the data has no ranks%s", in);
        return;
    }
    size_t k = (size_t)snprintf(out, n, "no rank has %s", rep->n_requires > 1 ? "rows of all of " : "");
    for (size_t i = 0; i < rep->n_requires && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", rep->requires[i]);
    if (k < n)
        snprintf(out + k, n - k, "%s%s", rep->n_requires > 1 ? "" : " rows", in);
}

/* The computed tables a report names (SQL or requires), and whether every
 * one of them, with what it depends on, is rank by rank (metric_table.rank_col). */
typedef struct named_tables {
    const tb_spec_report *rep;
    const metric_table *t[16];
    size_t n;
    int by_rank;
} named_tables;

static int rank_by_rank(const metric_table *t, int depth)
{
    if (!t || !t->rank_col || depth > 8)
        return 0;
    for (size_t d = 0; d < 4 && t->depends[d]; d++)
        if (!rank_by_rank(metrics_find(t->depends[d]), depth + 1))
            return 0;
    return 1;
}

static void collect_named(void *ctx, const metric_table *t)
{
    named_tables *nt = ctx;
    int named = runner_names_word(nt->rep->sql, t->name);
    for (size_t i = 0; i < nt->rep->n_requires && !named; i++)
        named = sqlite3_stricmp(nt->rep->requires[i], t->name) == 0;
    if (!named)
        return;
    if (nt->n == sizeof nt->t / sizeof nt->t[0] || !rank_by_rank(t, 0))
        nt->by_rank = 0;
    else
        nt->t[nt->n++] = t;
}

/*
 * on 1: each computed table of nt (built over every rank) becomes
 * temp.tb_rank_all_<name>, indexed on its rank column, and a TEMP view of
 * its name shows the current rank's rows (tb_rank_now; with the id the rank
 * shows when renumber). on 0: back as it was (the views are gone already).
 * Renamed in legacy mode: nothing refers to a computed table by name.
 */
static tb_status rank_table_views(runner *r, const named_tables *nt, int renumber, int on, tb_error *err)
{
    tb_status rc = TB_OK;
    r->sb.trusted = 1;
    sqlite3_exec(r->db, "PRAGMA legacy_alter_table = ON", NULL, NULL, NULL);
    for (size_t i = 0; i < nt->n && !rc; i++) {
        const char *t = nt->t[i]->name, *col = nt->t[i]->rank_col;
        char *sql = NULL;
        if (!on) {
            sql = sqlite3_mprintf("DROP INDEX IF EXISTS temp.\"tb_rank_all_%w_r\";"
                                  "ALTER TABLE temp.\"tb_rank_all_%w\" RENAME TO \"%w\";", t, t, t);
        } else {
            /* the select list: every column, the rank's shown id for its rank column */
            sqlite3_str *cols = sqlite3_str_new(r->db);
            sqlite3_stmt *q = NULL;
            if (renumber && sqlite3_prepare_v2(r->db, "SELECT name FROM pragma_table_info(?1, 'temp') ORDER BY cid",
                                               -1, &q, NULL) == SQLITE_OK) {
                sqlite3_bind_text(q, 1, t, -1, SQLITE_STATIC);
                for (int k = 0; sqlite3_step(q) == SQLITE_ROW; k++) {
                    const char *c = (const char *)sqlite3_column_text(q, 0);
                    if (!strcmp(c, col))
                        sqlite3_str_appendf(cols, "%s(SELECT shown FROM temp.tb_rank_now) AS \"%w\"", k ? ", " : "",
                                            c);
                    else
                        sqlite3_str_appendf(cols, "%s\"%w\"", k ? ", " : "", c);
                }
                sqlite3_finalize(q);
            } else {
                sqlite3_str_appendall(cols, "*");
            }
            char *list = sqlite3_str_finish(cols);
            sql = list ? sqlite3_mprintf("ALTER TABLE temp.\"%w\" RENAME TO \"tb_rank_all_%w\";"
                                         "CREATE INDEX temp.\"tb_rank_all_%w_r\" ON \"tb_rank_all_%w\"(\"%w\");"
                                         "CREATE TEMP VIEW \"%w\" AS SELECT %s FROM temp.\"tb_rank_all_%w\""
                                         " WHERE \"%w\" IS (SELECT rank FROM temp.tb_rank_now);",
                                         t, t, t, t, col, t, list, t, col)
                       : NULL;
            sqlite3_free(list);
        }
        char *msg = NULL;
        if (!sql)
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        else if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK)
            rc = tb_error_set(err, TB_ERR_DB, "computed table '%s' by rank: %s", t, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_free(sql);
    }
    sqlite3_exec(r->db, "PRAGMA legacy_alter_table = OFF", NULL, NULL, NULL);
    r->sb.trusted = 0;
    return rc;
}

/* What a rank-scope report's run carries from one rank to the next. */
typedef struct rank_run {
    runner *r;
    const tb_spec *spec;
    const tb_spec_report *rep;
    const char *label;
    char what[300];
    scope_rank *ranks;      /* the ranks it runs on, in the order they show */
    size_t n;
    sqlite3_stmt **req;     /* the requirements' checks, prepared at the first rank and kept */
    int renumber;           /* a rank shows an id other than its own */
    named_tables nt;        /* the computed tables it names */
    int once;               /* they are rank by rank: built once, the statement prepared once */
    int viewed;             /* their views of the current rank are up */
    sqlite3_stmt *kept;     /* the statement prepared once (once) */
    tb_sink *sinks[RUNNER_MAX_SINKS];
    size_t ns;
    int opened;             /* the sinks are open (a rank met `requires`) */
    tb_sink_column *sc;     /* the columns the sinks were begun with */
    column *cols;           /* ... and what those borrow */
    size_t ncols;
    uint64_t rows;
} rank_run;

/* Finds the ranks and builds once the computed tables that are rank by rank. */
static tb_status rank_run_start(rank_run *rr, tb_error *err)
{
    runner *r = rr->r;
    tb_status rc = scope_ranks(r, &rr->ranks, &rr->n, err);
    rr->req = calloc(rr->rep->n_requires + 1, sizeof *rr->req);
    if (!rr->req && !rc)
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < r->pt->n_rank_ids; k++)
        rr->renumber |= r->pt->rank_ids[k] != r->pt->rank_shown[k];
    /* computed tables that are rank by rank: built once now, over every
     * rank, and read through views of the current rank; the statement is
     * then prepared once. Others are built again for each rank. */
    metrics_each(collect_named, &rr->nt);
    rr->once = rr->nt.by_rank;
    if (!rc && rr->once && rr->n)
        rc = runner_build_needed(r, rr->rep->sql, rr->spec, rr->rep, err);
    return rc;
}

/* Makes the views, and the computed tables, show rank k alone. */
static tb_status rank_run_show(rank_run *rr, size_t k, tb_error *err)
{
    runner *r = rr->r;
    tb_window w = r->opt->window;
    w.rank_set = 1;
    w.rank = rr->ranks[k].rank;
    r->sb.trusted = 1;
    tb_status rc = window_for_rank(r->db, &w, rr->ranks[k].shown, rr->renumber, err);
    r->sb.trusted = 0;
    if (!rc && rr->once && !rr->viewed) {
        rr->viewed = 1;
        rc = rank_table_views(r, &rr->nt, rr->renumber, 1, err);
    } else if (!rc && !rr->once) {
        runner_free_built(r);
        rc = runner_build_needed(r, rr->rep->sql, rr->spec, rr->rep, err);
    }
    return rc;
}

/* Runs rank k into the sinks, opened at the first rank that meets `requires`. */
static tb_status rank_run_one(rank_run *rr, size_t k, tb_error *err)
{
    runner *r = rr->r;
    const tb_run_options *o = r->opt;
    char why[200];
    tb_status rc = rank_run_show(rr, k, err);
    if (rc)
        return rc;
    if (runner_unmet(r, rr->rep, rr->req, why, sizeof why))
        return TB_OK;
    sqlite3_stmt *st = rr->kept;
    column *c = NULL;
    size_t nc = 0;
    if (st)
        sqlite3_reset(st);
    else if ((rc = runner_prepare_report(r, rr->spec, rr->rep, rr->what, &st, &c, &nc, err)))
        return rc;
    else if (rr->once)
        rr->kept = st;
    if (!rr->opened) {
        rr->opened = 1;
        rc = runner_open_sinks(o, rr->spec, rr->rep, rr->label, rr->sinks, &rr->ns, err);
        /* the columns the sinks were begun with stay theirs (they borrow them) */
        if (!rc)
            rc = runner_begin_sinks(r, c, nc, rr->sinks, rr->ns, &rr->sc, err);
        rr->cols = c;
        rr->ncols = nc;
        c = NULL;
        nc = 0;
    }
    if (!rc && r->pt->rank_start)
        r->pt->rank_start(o->sink_ctx, rr->rep, rr->ranks[k].shown);
    if (!rc)
        rc = runner_pump(r, st, rr->cols, rr->ncols, rr->sinks, rr->ns, rr->what, &rr->rows, err);
    if (st != rr->kept)
        sqlite3_finalize(st);
    runner_columns_free(c, nc);
    return rc;
}

/* Drops the kept statements and puts back the views of every rank; returns
 * rc, or the error of putting them back when rc is TB_OK. */
static tb_status rank_run_restore(rank_run *rr, tb_status rc, tb_error *err)
{
    runner *r = rr->r;
    sqlite3_finalize(rr->kept);
    for (size_t i = 0; rr->req && i < rr->rep->n_requires; i++)
        sqlite3_finalize(rr->req[i]);
    free(rr->req);
    rr->req = NULL;
    /* every rank's views again; the computed tables of every rank back under
     * their names (those of the last rank dropped) */
    if (rr->n) {
        tb_error e2;
        r->sb.trusted = 1;
        tb_status back = window_for_rank(r->db, &r->opt->window, 0, 0, rc ? &e2 : err);
        r->sb.trusted = 0;
        if (!back && rr->viewed)
            back = rank_table_views(r, &rr->nt, rr->renumber, 0, rc ? &e2 : err);
        if (!rc)
            rc = back;
        if (!rr->once || rc)
            runner_free_built(r);
    }
    return rc;
}

/*
 * A rank-scope report: run on each rank alone, in rank order (the TEMP views
 * show that rank's rows, under its id in the load; computed tables are built
 * from them), every rank's rows into the same sinks. A requirement no row
 * meets skips it at once ("the data has no X rows"); else sinks open with
 * the first rank that meets `requires`, and when none does the report is
 * skipped ("no rank has ..."). The views of every rank are put back after.
 */
tb_status runner_run_report_ranks(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                                  tb_run_result *res, tb_error *err)
{
    const tb_run_options *o = r->opt;
    char first_why[512] = "";
    /* a requirement no rank can meet skips the report before any rank runs */
    char *mask = requires_mask(r, rep);
    if (!mask)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (r->pt->requires_seen)
        r->pt->requires_seen(o->sink_ctx, rep, mask);
    if (strchr(mask, '1')) {
        runner_scope_skip_reason(rep, o->window.set, mask, first_why, sizeof first_why);
        free(mask);
        runner_skipped(r, rep, first_why, res);
        return TB_OK;
    }
    rank_run rr = {.r = r, .spec = spec, .rep = rep, .label = label, .nt = {.rep = rep, .by_rank = 1}};
    snprintf(rr.what, sizeof rr.what, "report '%s'", rep->id);
    tb_status rc = rank_run_start(&rr, err);
    for (size_t k = 0; k < rr.n && !rc; k++)
        rc = rank_run_one(&rr, k, err);
    rc = rank_run_restore(&rr, rc, err);
    if (!rc && !rr.opened) {
        runner_scope_skip_reason(rep, o->window.set, mask, first_why, sizeof first_why);
        runner_skipped(r, rep, first_why, res);
    } else if (!rc) {
        for (size_t j = 0; j < rr.ns && !rc; j++)
            rc = rr.sinks[j]->finish(rr.sinks[j], err);
        if (!rc)
            runner_report_ran(o, rep, rr.sinks, rr.ns, rr.rows, res);
    }
    for (size_t i = 0; i < rr.ns; i++)
        rr.sinks[i]->destroy(rr.sinks[i]);
    free(rr.sc);
    runner_columns_free(rr.cols, rr.ncols);
    free(rr.ranks);
    free(mask);
    return rc;
}
