/* SPDX-License-Identifier: MIT */
/*
 * runner_replay.c - writes a run's reports from the rows gathered from
 * shards (scale/partial.c, docs/scale-out.md).
 *
 * Each shard ran the reports on its own ranks and its rows were gathered
 * into one DB; here, on process 0, every report is written from them as a
 * run over the whole load would have written it: a rank-scope report's rows
 * in rank order with the columns the first shard began its writers with (or
 * skipped, worded as runner_ranks.c words it, when no shard ran it); a
 * cluster-scope report runs over its cluster tables, made from the part
 * tables every shard gathered. A window no shard can show fails here with
 * the error of a single run. It uses the core of runner.c (runner_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "query/runner_int.h"
#include "query/window.h"
#include "util/vec.h"
#include "tracebook/error.h"
#include "tracebook/query.h"

typedef struct replay {
    runner r;                /* only its options: notes and skips say what a run says */
    sqlite3 *db;
    const char *path;
    /* cluster-scope reports: a run over the gathered DB, opened at the first,
     * with the part tables of one spec's cluster tables loaded */
    runner cr;
    tb_run_options cro;
    int cr_open;
    int64_t cr_spec;
    name_list cr_loaded;
} replay;

static tb_status replay_fail(replay *p, tb_error *err)
{
    return tb_error_at(err, TB_ERR_DB, p->path, 0, 0, -1, "gathered rows: %s", sqlite3_errmsg(p->db));
}

/* What report k's run over the shards left: how many shards ran it and the
 * first of them (TB_PART_REPORT). */
static tb_status replay_ran(replay *p, int64_t k, int64_t *ran, int64_t *shard, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(p->db,
                           "SELECT (SELECT count(*) FROM TB_PART_REPORT WHERE k = ?1 AND ran),"
                           " (SELECT min(shardIndex) FROM TB_PART_REPORT WHERE k = ?1 AND ran)",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = replay_fail(p, err);
    } else {
        sqlite3_bind_int64(q, 1, k);
        if (sqlite3_step(q) != SQLITE_ROW) {
            rc = replay_fail(p, err);
        } else {
            *ran = sqlite3_column_int64(q, 0);
            *shard = sqlite3_column_int64(q, 1);
        }
    }
    sqlite3_finalize(q);
    return rc;
}

/* Skips report k, which no shard ran: a requirement is unmet by the load
 * when no shard meets it. */
static tb_status replay_skip(replay *p, const tb_spec_report *rep, int64_t k, tb_run_result *res, tb_error *err)
{
    char *mask = malloc(rep->n_requires + 1), why[512];
    sqlite3_stmt *mq = NULL;
    if (!mask || sqlite3_prepare_v2(p->db, "SELECT unmet FROM TB_PART_REPORT WHERE k = ?", -1, &mq, NULL)) {
        free(mask);
        return mask ? replay_fail(p, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    memset(mask, '1', rep->n_requires);
    mask[rep->n_requires] = 0;
    sqlite3_bind_int64(mq, 1, k);
    while (sqlite3_step(mq) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(mq, 0);
        for (size_t i = 0; i < rep->n_requires; i++)
            if (!m || strlen(m) <= i || m[i] != '1')
                mask[i] = '0';
    }
    sqlite3_finalize(mq);
    runner_scope_skip_reason(rep, p->r.opt->window.set, mask, why, sizeof why);
    free(mask);
    runner_skipped(&p->r, rep, why, res);
    return TB_OK;
}

/* A report's gathered rows on their way to its writers. */
typedef struct gathered {
    tb_sink_column *sc;   /* the columns the writers begin with */
    char **text;          /* their header and name, two a column (owned: sc borrows them) */
    size_t nc;
    tb_cell *cells;       /* one row */
    sqlite3_stmt *rq;     /* the rows, in rank order */
    tb_sink *sinks[RUNNER_MAX_SINKS];
    size_t ns;
} gathered;

/* Reads the columns the first shard that ran report k began its writers with. */
static tb_status replay_columns(replay *p, const tb_spec_report *rep, int64_t shard, int64_t k, gathered *g,
                                tb_error *err)
{
    sqlite3_stmt *cq = NULL;
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(p->db, "SELECT header, name, type FROM TB_PART_COLUMN WHERE shardIndex = ? AND k = ?"
                                  " ORDER BY i",
                           -1, &cq, NULL) != SQLITE_OK)
        return replay_fail(p, err);
    sqlite3_bind_int64(cq, 1, shard);
    sqlite3_bind_int64(cq, 2, k);
    size_t cap = 0;
    while (!rc && sqlite3_step(cq) == SQLITE_ROW) {
        if (g->nc == cap) {
            cap = cap ? cap * 2 : 16;
            tb_sink_column *n1 = realloc(g->sc, cap * sizeof *g->sc);
            char **n2 = n1 ? realloc(g->text, 2 * cap * sizeof *g->text) : NULL;
            if (n1)
                g->sc = n1;
            if (n2)
                g->text = n2;
            if (!n1 || !n2) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
        }
        const char *h = (const char *)sqlite3_column_text(cq, 0), *nm = (const char *)sqlite3_column_text(cq, 1);
        size_t nc = g->nc;
        g->text[2 * nc] = strdup(h ? h : "");
        g->text[2 * nc + 1] = nm ? strdup(nm) : NULL;
        const tb_spec_column *opt = nm ? runner_column_opt(rep, nm) : NULL;
        g->sc[nc] = (tb_sink_column){.header = g->text[2 * nc], .name = g->text[2 * nc + 1],
                                     .type = (tb_col_type)sqlite3_column_int(cq, 2),
                                     .number_format = opt ? opt->format : NULL, .width = opt ? opt->width : 0};
        g->nc++;
        if (!g->text[2 * nc] || (nm && !g->text[2 * nc + 1]))
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    sqlite3_finalize(cq);
    return rc;
}

/* Prepares the gathered rows of report k (TB_PART_ROWS_<k>: rank, seq, then
 * one value a column) and a row of cells for them. */
static tb_status replay_rows(replay *p, const char *what, int64_t k, gathered *g, tb_error *err)
{
    char *sql = sqlite3_mprintf("SELECT * FROM \"TB_PART_ROWS_%lld\" ORDER BY rank, seq", (long long)k);
    if (!sql || !(g->cells = calloc(g->nc ? g->nc : 1, sizeof *g->cells))) {
        sqlite3_free(sql);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    int prc = sqlite3_prepare_v2(p->db, sql, -1, &g->rq, NULL);
    sqlite3_free(sql);
    if (prc != SQLITE_OK)
        return replay_fail(p, err);
    if (sqlite3_column_count(g->rq) != (int)g->nc + 2)
        return tb_error_at(err, TB_ERR_INTERNAL, p->path, 0, 0, -1, "%s: gathered rows of %d columns, %zu expected",
                           what, sqlite3_column_count(g->rq) - 2, g->nc);
    return TB_OK;
}

/* Writes the gathered rows into the report's writers, as one run would. */
static tb_status replay_write(replay *p, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                              gathered *g, tb_run_result *res, tb_error *err)
{
    const tb_run_options *o = p->r.opt;
    tb_status rc = runner_open_sinks(o, spec, rep, label, g->sinks, &g->ns, err);
    if (rc)
        return rc;
    for (size_t j = 0; j < g->ns && !rc; j++)
        rc = g->sinks[j]->begin(g->sinks[j], g->sc, g->nc, err);
    uint64_t rows = 0;
    int step;
    while (!rc && (step = sqlite3_step(g->rq)) == SQLITE_ROW) {
        for (size_t i = 0; i < g->nc; i++)
            cell_of(g->rq, (int)i + 2, g->sc[i].type == TB_COL_DUR_NS || g->sc[i].type == TB_COL_TS_NS,
                    (int)o->unit, 0, &g->cells[i]);
        for (size_t j = 0; j < g->ns && !rc; j++)
            rc = g->sinks[j]->row(g->sinks[j], g->cells, err);
        rows++;
    }
    if (!rc && step != SQLITE_DONE)
        rc = replay_fail(p, err);
    for (size_t j = 0; j < g->ns && !rc; j++)
        rc = g->sinks[j]->finish(g->sinks[j], err);
    if (!rc)
        runner_report_ran(o, rep, g->sinks, g->ns, rows, res);
    return rc;
}

/* Frees what g holds. */
static void gathered_finish(gathered *g)
{
    for (size_t i = 0; i < g->ns; i++)
        g->sinks[i]->destroy(g->sinks[i]);
    for (size_t i = 0; g->text && i < 2 * g->nc; i++)
        free(g->text[i]);
    free(g->text);
    free(g->sc);
    free(g->cells);
    sqlite3_finalize(g->rq);
}

/* Writes report number k from the gathered rows, as runner_run_report_ranks would have. */
static tb_status replay_report(replay *p, const tb_spec *spec, const tb_spec_report *rep, int64_t k,
                               const char *label, tb_run_result *res, tb_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "report '%s'", rep->id);
    if (rep->scope != TB_SCOPE_RANK)
        return tb_error_set(err, TB_ERR_INTERNAL, "%s is not rank-scope: it cannot run from gathered rows", what);
    int64_t ran = 0, shard = -1;
    tb_status rc = replay_ran(p, k, &ran, &shard, err);
    if (rc)
        return rc;
    if (!ran)
        return replay_skip(p, rep, k, res, err);
    gathered g = {0};
    rc = replay_columns(p, rep, shard, k, &g, err);
    if (!rc)
        rc = replay_rows(p, what, k, &g, err);
    if (!rc)
        rc = replay_write(p, spec, rep, label, &g, res, err);
    gathered_finish(&g);
    return rc;
}

/*
 * A cluster-scope report of spec k from the rows gathered from every shard:
 * the part tables of its cluster tables (TB_PART_CLUSTER_<k>_<part>, in
 * shard order) become the TEMP part tables, the tables are made from them
 * (the second phase; kept for the spec's next cluster-scope report, which
 * builds with the same options) and the report runs over them as on one DB.
 */
static tb_status replay_cluster(replay *p, const tb_spec *spec, const tb_spec_report *rep, int64_t k,
                                const char *label, tb_run_result *res, tb_error *err)
{
    runner *r = &p->cr;
    tb_status rc = TB_OK;
    if (!p->cr_open) {
        p->cro = *p->r.opt;
        memset(r, 0, sizeof *r);
        r->opt = &p->cro;
        r->pt = &runner_no_part;
        p->cr_open = 1;
        if ((rc = runner_open_db(r, err)))
            return rc;
        r->sb.trusted = 1; /* the replay's own reads of the gathered rows share the connection */
    }
    if (p->cr_spec != k) {
        p->cr_spec = k;
        p->cr_loaded.n = 0;
        runner_free_built(r);
    }
    name_list parts;
    runner_report_parts(rep, &parts);
    r->sb.trusted = 1;
    for (size_t i = 0; i < parts.n && !rc; i++) {
        size_t had = p->cr_loaded.n;
        runner_add_name(&p->cr_loaded, parts.v[i]);
        if (p->cr_loaded.n == had)
            continue; /* loaded for an earlier report of the spec */
        char *sql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.\"%w\";"
                                    "CREATE TEMP TABLE \"%w\" AS SELECT * FROM main.\"TB_PART_CLUSTER_%lld_%w\""
                                    " ORDER BY shard, seq;",
                                    parts.v[i], parts.v[i], (long long)k, parts.v[i]);
        if (!sql)
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        else if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
            rc = tb_error_at(err, TB_ERR_DB, p->path, 0, 0, -1, "gathered rows of report '%s': %s", rep->id,
                             sqlite3_errmsg(r->db));
        sqlite3_free(sql);
    }
    r->sb.trusted = 0;
    if (rc)
        return rc;
    r->phase = METRICS_COMBINE;
    r->sb.trusted = 0;
    rc = runner_run_report(r, spec, rep, label, res, err);
    r->sb.trusted = 1;
    r->phase = METRICS_WHOLE;
    return rc;
}

/* The window's error over the gathered ranks: worded from each rank's
 * iterations as a single run words it; when no rank has any (no such model,
 * no steps), a shard's message (what it names is the data's, not a rank's). */
static tb_status replay_window_error(replay *p, const char *shard_msg, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    window_held *h = NULL;
    size_t n = 0, cap = 0;
    if (sqlite3_prepare_v2(p->db, "SELECT rank, min(first), max(last) FROM TB_PART_HELD GROUP BY rank ORDER BY rank",
                           -1, &q, NULL) != SQLITE_OK)
        return replay_fail(p, err);
    while (sqlite3_step(q) == SQLITE_ROW) {
        window_held one = {sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2)};
        if (VEC_PUSH(h, n, cap, one)) {
            free(h);
            sqlite3_finalize(q);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    }
    sqlite3_finalize(q);
    tb_status rc = n ? window_held_error(&p->r.opt->window, h, n, err)
                     : tb_error_set(err, TB_ERR_USAGE, "%s", shard_msg ? shard_msg : "the window is not in the data");
    free(h);
    return rc;
}

/* Every report of the run, written from the gathered rows of opt->db. */
tb_status runner_replay_run(const tb_run_options *opt, tb_run_result *res, tb_error *err)
{
    replay p = {.path = opt->db_name, .db = opt->db, .cr_spec = -1};
    p.r.opt = opt;
    p.r.pt = &runner_no_part;
    tb_status rc = TB_OK;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(p.db, "SELECT label, windowMiss FROM TB_PART"
                                 " ORDER BY windowBroken DESC, windowMiss IS NOT NULL, shardIndex",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = replay_fail(&p, err);
        goto done;
    }
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = tb_error_at(err, TB_ERR_INTERNAL, opt->db_name, 0, 0, -1, "no shard's rows were gathered");
        goto done;
    }
    const char *label = (const char *)sqlite3_column_text(q, 0);
    snprintf(res->window_label, sizeof res->window_label, "%s", label ? label : "");
    if (sqlite3_column_type(q, 1) != SQLITE_NULL) {
        /* no shard has a rank with the window, or a rank has only its start:
         * the error a run over all of them gives, from what every rank holds */
        rc = replay_window_error(&p, (const char *)sqlite3_column_text(q, 1), err);
        goto done;
    }
    /* what the shards' runs noted, each note once, in shard order */
    sqlite3_finalize(q);
    q = NULL;
    if (sqlite3_prepare_v2(p.db, "SELECT msg FROM TB_PART_NOTE GROUP BY msg ORDER BY min(shardIndex * 4294967296 + seq)",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = replay_fail(&p, err);
        goto done;
    }
    while (sqlite3_step(q) == SQLITE_ROW)
        runner_notef(opt, "%s", (const char *)sqlite3_column_text(q, 0));
    int64_t k = 0;
    for (size_t s = 0; s < opt->n_specs && !rc; s++)
        for (size_t i = 0; i < opt->specs[s]->n_reports && !rc; i++, k++) {
            const tb_spec_report *rep = &opt->specs[s]->reports[i];
            if (!runner_wanted(opt, rep->id))
                continue;
            /* a cluster-scope report's rows are its spec's; a rank-scope one's its own */
            if (rep->scope == TB_SCOPE_CLUSTER)
                rc = replay_cluster(&p, opt->specs[s], rep, (int64_t)s, res->window_label, res, err);
            else
                rc = replay_report(&p, opt->specs[s], rep, k, res->window_label, res, err);
        }
done:
    sqlite3_finalize(q);
    if (p.cr_open)
        runner_release(&p.cr, NULL);
    return rc;
}

