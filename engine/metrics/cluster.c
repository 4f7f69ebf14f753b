/* SPDX-License-Identifier: MIT */
/*
 * cluster.c - computed tables over a whole cluster: the cluster step trace
 * (msprof-analyze's cluster_step_trace_time.csv), slow ranks in collective
 * communication and the communication matrix.
 *
 * cluster_step_trace_time: one `rank` row per rank and step, from the first
 *     of these sources that has rows, msprof-analyze's first
 *     (metrics.cluster.rank_source picks one): the rows of the ranks'
 *     step_trace_time.csv (TB_STEP_TRACE_TIME), the rank rows of a loaded
 *     cluster_step_trace_time.csv (TB_CLUSTER_STEP_TRACE_TIME, which bring
 *     its own stage rows along), the step trace computed from the device
 *     tasks. Then one `stage` row per step and pipeline stage: the max over
 *     the stage's ranks of each field, the stages msprof-analyze's
 *     (stage_sets: from the pipeline-parallel groups; the p2p groups of a
 *     communication_group.json that names no group; else none). Fields are
 *     REAL microseconds, as the cluster CSV writes them.
 * cluster_step_trace_time_csv: the same rows with msprof-analyze's exact
 *     header (Preparing only when the source had it), for the report.
 * slow_rank_op / slow_rank: per collective op, group and step, transmit =
 *     the least time of the op over its ranks and wait = own time - transmit;
 *     then per rank the total wait, ranked (position 1 = least total wait:
 *     the rank the others waited for).
 * comm_op_bandwidth: per op, rank and transport the Communication Bandwidth
 *     Info and Size Distribution of communication.json and
 *     cluster_communication.json.
 * communication_matrix: bytes, time and bandwidth per step, op, link and
 *     transport, from communication_matrix.json files (TB_COMM_MATRIX), else
 *     from the HCCL tasks (COMMUNICATION_TASK_INFO).
 *
 * Each of them is made in two phases (the part tables, below): per-rank
 * rows first, then the table from them, so that over shards the first runs
 * where the ranks are and the second on the rows gathered.
 *
 * Every build reads unqualified names so that an iteration window (TEMP
 * views of the same names, report/window.c) applies. Two pieces are done in
 * C: the stages (they need set operations SQL states badly) and the step
 * of each communication op (the step rule of steps.h, shared with the step
 * trace and the window).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/steps.h"
#include "util/sort.h"
#include "util/vec.h"

/* The step trace fields, in msprof's column order. */
#define FIELDS                                                                                   \
    "computing, communicationNotOverlapped, overlapped, communication, free, stage, bubble, " \
    "communicationNotOverlappedExcludeReceive, preparing"

/* The Communication Time Info of an op on a rank as its communication.json
 * (and cluster_communication.json) gives it, beside its time: Transit,
 * Wait, Synchronization and Idle Time (ns) and the two ratios; NULL for an
 * op known from the tasks only. */
#define OP_INFO "transitNs, opWaitNs, synchronizationNs, idleNs, waitRatio, synchronizationRatio"
#define OP_INFO_COLS                                                                                    \
    "transitNs INTEGER, opWaitNs INTEGER, synchronizationNs INTEGER, idleNs INTEGER, waitRatio REAL, " \
    "synchronizationRatio REAL"

/* "step2" (communication JSON) and "2" (step trace CSVs) both become "2"; "" is NULL. */
#define STEP_TEXT(x) "CASE WHEN " x " LIKE 'step%' THEN substr(" x ", 5) ELSE NULLIF(CAST(" x " AS TEXT), '') END"

/* Point-to-point ops (sends and receives) by name or type; every other op is collective. */
#define IS_P2P(name, type)                                                                   \
    "(coalesce(" name ", '') LIKE '%send%' OR coalesce(" name ", '') LIKE '%recv%' OR "      \
    "coalesce(" name ", '') LIKE '%receive%' OR coalesce(" type ", '') LIKE '%send%' OR "    \
    "coalesce(" type ", '') LIKE '%recv%' OR coalesce(" type ", '') LIKE '%receive%')"

/* --- small SQLite helpers -------------------------------------------------- */

static tb_status db_fail(const metric_ctx *m, const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

/* Does the query return a row? -1 on an SQLite error (err set). */
static int any_row(const metric_ctx *m, const char *what, const char *sql, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail(m, what, err);
        return -1;
    }
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        db_fail(m, what, err);
        return -1;
    }
    return rc == SQLITE_ROW;
}

/* --- the part tables ---------------------------------------------------------
 *
 * Each cluster table is made in two phases (metrics.h, metrics_phase): the
 * per-rank rows of every source it may use go into TEMP part tables, then
 * the table is made from them. On one DB both run in turn; over shards the
 * first runs on each shard and the second on the rows gathered from all of
 * them (report/partial.c), so which source a table uses is decided over
 * every rank, from facts the first phase records:
 *
 *   tb_cp_facts  (fact)      'tasks': the DB has device tasks; 'stat': it has
 *                            collective rows of communication.json; 'matrix':
 *                            rows of communication_matrix.json
 *   tb_cp_rank   the step trace rows of every rank source
 *   tb_cp_p2p    the rank sets the stages are made of: 'pp' (pipeline groups),
 *                'collective', 'p2p' (a group file naming no group), and
 *                'member' (rankId, groupName of communication.json's
 *                collective ops)
 *   tb_cp_optime the collective ops' time per rank (of communication.json
 *                when the DB has them, else of the ops)
 *   tb_cp_link   the links (communication_matrix.json's rows when the DB
 *                has them, else the HCCL tasks' sums per link)
 *
 * A column named rankId holds the DB's rankId (a shard's numbers are mapped
 * to the load's when gathered); ranks named by data (srcRank, a cluster
 * CSV's Index) are kept as written.
 */

/* Records whether the query returns a row, as fact. */
static tb_status fact(const metric_ctx *m, const char *what, const char *name, const char *exists, tb_error *err)
{
    char *sql = sqlite3_mprintf("CREATE TEMP TABLE IF NOT EXISTS tb_cp_facts (fact TEXT);"
                                "DELETE FROM temp.tb_cp_facts WHERE fact = %Q;"
                                "INSERT INTO temp.tb_cp_facts SELECT %Q WHERE EXISTS (%s);",
                                name, name, exists);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tb_status rc = metrics_exec(m, what, sql, err);
    sqlite3_free(sql);
    return rc;
}

/* Did the first phase record fact (on any shard)? -1 on error. */
static int has_fact(const metric_ctx *m, const char *what, const char *name, tb_error *err)
{
    char *sql = sqlite3_mprintf("SELECT 1 FROM temp.tb_cp_facts WHERE fact = %Q LIMIT 1", name);
    if (!sql) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return -1;
    }
    int yes = any_row(m, what, sql, err);
    sqlite3_free(sql);
    return yes;
}

/* --- cluster_step_trace_time: rank rows ------------------------------------- */

enum rank_source {
    SRC_AUTO = METRICS_SOURCE_AUTO,
    SRC_COMPUTED = METRICS_SOURCE_COMPUTED,
    SRC_STEP_CSV = METRICS_SOURCE_STEP_CSV,
    SRC_CLUSTER_CSV = METRICS_SOURCE_CLUSTER_CSV
};

/* The source column of each rank source's rows. */
static const char *const source_name[] = {
    [SRC_COMPUTED] = "step_trace_time",
    [SRC_STEP_CSV] = "TB_STEP_TRACE_TIME",
    [SRC_CLUSTER_CSV] = "TB_CLUSTER_STEP_TRACE_TIME",
};

/* First phase: the rows of every rank source, the p2p groups, the tasks fact. */
static tb_status collect_rank_rows(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "cluster_step_trace_time";
    /* step_trace_time is in this table's depends: the runner built it with
     * the spec's options (its step trace policy) before this build. The
     * Index of a rank row is its rankId, made when the rows are combined
     * (a shard's rankIds are not yet the load's). */
    tb_status rc = metrics_exec(
        m, what,
        "DROP TABLE IF EXISTS temp.tb_cp_rank;"
        "CREATE TEMP TABLE tb_cp_rank (rankId INTEGER, idxRank INTEGER, step TEXT, idx TEXT, deviceId INTEGER, "
        "  computing REAL, communicationNotOverlapped REAL, overlapped REAL, communication REAL, free REAL, "
        "  stage REAL, bubble REAL, communicationNotOverlappedExcludeReceive REAL, preparing REAL, source TEXT);"
        "INSERT INTO temp.tb_cp_rank "
        "SELECT rankId, NULL, " STEP_TEXT("step") ", NULL, deviceId, "
        "  computing / 1000.0, communicationNotOverlapped / 1000.0, overlapped / 1000.0, "
        "  communication / 1000.0, free / 1000.0, stage / 1000.0, bubble / 1000.0, "
        "  communicationNotOverlappedExcludeReceive / 1000.0, preparing / 1000.0, 'step_trace_time' "
        "FROM step_trace_time;"
        "INSERT INTO temp.tb_cp_rank "
        "SELECT rankId, NULL, " STEP_TEXT("step") ", NULL, deviceId, "
        "  CAST(computing AS REAL), CAST(communicationNotOverlapped AS REAL), CAST(overlapped AS REAL), "
        "  CAST(communication AS REAL), CAST(free AS REAL), CAST(stage AS REAL), CAST(bubble AS REAL), "
        "  CAST(communicationNotOverlappedExcludeReceive AS REAL), CAST(preparing AS REAL), "
        "  'TB_STEP_TRACE_TIME' "
        "FROM TB_STEP_TRACE_TIME;"
        "INSERT INTO temp.tb_cp_rank "
        "SELECT NULL, CASE WHEN trim(indexText) <> '' AND trim(indexText) NOT GLOB '*[^0-9]*' "
        "       THEN CAST(trim(indexText) AS INTEGER) END, " STEP_TEXT("step") ", trim(indexText), NULL, "
        "  CAST(computing AS REAL), CAST(communicationNotOverlapped AS REAL), CAST(overlapped AS REAL), "
        "  CAST(communication AS REAL), CAST(free AS REAL), CAST(stage AS REAL), CAST(bubble AS REAL), "
        "  CAST(communicationNotOverlappedExcludeReceive AS REAL), CAST(preparing AS REAL), "
        "  'TB_CLUSTER_STEP_TRACE_TIME' "
        "FROM TB_CLUSTER_STEP_TRACE_TIME WHERE type = 'rank';"
        /* a loaded cluster CSV's own stage rows, kept when its rank rows are the source */
        "INSERT INTO temp.tb_cp_rank "
        "SELECT NULL, NULL, " STEP_TEXT("step") ", trim(indexText), NULL, "
        "  CAST(computing AS REAL), CAST(communicationNotOverlapped AS REAL), CAST(overlapped AS REAL), "
        "  CAST(communication AS REAL), CAST(free AS REAL), CAST(stage AS REAL), CAST(bubble AS REAL), "
        "  CAST(communicationNotOverlappedExcludeReceive AS REAL), CAST(preparing AS REAL), 'stage' "
        "FROM TB_CLUSTER_STEP_TRACE_TIME WHERE type = 'stage';"
        /* the group rank sets the stage rule reads (stage_sets) */
        "DROP TABLE IF EXISTS temp.tb_cp_p2p;"
        "CREATE TEMP TABLE tb_cp_p2p (kind TEXT, ranks TEXT, groupName TEXT, rankId INTEGER);"
        "INSERT INTO temp.tb_cp_p2p SELECT DISTINCT 'pp', ranks, NULL, NULL FROM TB_COMM_GROUP "
        "  WHERE kind IS NOT 'collective' AND lower(pgName) LIKE 'pp%' AND ranks IS NOT NULL;"
        "INSERT INTO temp.tb_cp_p2p SELECT DISTINCT 'collective', ranks, NULL, NULL FROM TB_COMM_GROUP "
        "  WHERE kind = 'collective' AND ranks IS NOT NULL;"
        "INSERT INTO temp.tb_cp_p2p SELECT DISTINCT 'p2p', ranks, NULL, NULL FROM TB_COMM_GROUP "
        "  WHERE kind = 'p2p' AND ranks IS NOT NULL AND NOT EXISTS (SELECT 1 FROM TB_COMM_GROUP "
        "    WHERE groupName IS NOT NULL OR pgName IS NOT NULL);"
        "INSERT INTO temp.tb_cp_p2p SELECT DISTINCT 'member', NULL, s.value, t.rankId FROM TB_COMM_OP_STAT t "
        "  JOIN STRING_IDS s ON s.id = t.groupName WHERE t.opKind = 'collective' AND t.rankId IS NOT NULL;",
        err);
    if (!rc)
        rc = fact(m, what, "tasks", "SELECT 1 FROM TASK", err);
    /* an iteration window (report/window.c's temp.tb_window) */
    return rc ? rc : fact(m, what, "window", "SELECT 1 FROM temp.sqlite_master WHERE name = 'tb_window'", err);
}

/* Second phase: temp.tb_m_cluster_rank from one source's rows. *rows: did it give any. */
static tb_status rank_rows_from(const metric_ctx *m, enum rank_source s, int *rows, tb_error *err)
{
    *rows = 0;
    char *sql = sqlite3_mprintf(
        "INSERT INTO temp.tb_m_cluster_rank "
        "SELECT step, CASE WHEN rankId IS NULL THEN idx ELSE CAST(rankId AS TEXT) END, "
        "  coalesce(rankId, idxRank), deviceId, computing, communicationNotOverlapped, overlapped, "
        "  communication, free, stage, bubble, communicationNotOverlappedExcludeReceive, preparing, source "
        "FROM temp.tb_cp_rank WHERE source = %Q ORDER BY rowid",
        source_name[s]);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tb_status rc = metrics_exec(m, "cluster_step_trace_time", sql, err);
    sqlite3_free(sql);
    if (!rc)
        *rows = sqlite3_changes(m->db) > 0;
    return rc;
}

/* temp.tb_m_cluster_rank from the rank source the options pick, else (auto)
 * msprof-analyze's: the ranks' step_trace_time.csv, then a loaded cluster
 * CSV's rank rows, then the step trace computed from the device tasks; in an
 * iteration window the computed one first (a CSV row has no time the window
 * could place it by).
 * *used: the source the rows came from (SRC_AUTO when none had rows). */
static tb_status rank_rows(const metric_ctx *m, enum rank_source *used, tb_error *err)
{
    enum rank_source want = (enum rank_source)metrics_opts(m)->rank_source;
    *used = SRC_AUTO;
    tb_status rc = metrics_exec(m, "cluster_step_trace_time",
                                "DROP TABLE IF EXISTS temp.tb_m_cluster_rank;"
                                "CREATE TEMP TABLE tb_m_cluster_rank (step TEXT, idx TEXT, rankId INTEGER, "
                                "  deviceId INTEGER, computing REAL, communicationNotOverlapped REAL, "
                                "  overlapped REAL, communication REAL, free REAL, stage REAL, bubble REAL, "
                                "  communicationNotOverlappedExcludeReceive REAL, preparing REAL, source TEXT);",
                                err);
    if (rc)
        return rc;
    /* in an iteration window the computed step trace first: a CSV's step rows carry no time to place them by */
    int window = has_fact(m, "cluster_step_trace_time", "window", err);
    if (window < 0)
        return err->code;
    static const enum rank_source order[2][3] = {{SRC_STEP_CSV, SRC_CLUSTER_CSV, SRC_COMPUTED},
                                                 {SRC_COMPUTED, SRC_STEP_CSV, SRC_CLUSTER_CSV}};
    for (size_t i = 0; i < 3; i++) {
        enum rank_source s = want != SRC_AUTO ? want : order[window][i];
        int rows = 0;
        if ((rc = rank_rows_from(m, s, &rows, err)))
            return rc;
        if (rows)
            *used = s;
        if (rows || want != SRC_AUTO)
            break;
    }
    return TB_OK;
}

/* --- cluster_step_trace_time: stages ---------------------------------------- */

typedef struct group {
    int64_t *r; /* sorted, distinct */
    size_t n;
} group;

typedef struct groups {
    group *v;
    size_t n;
    int overlap; /* two groups share a rank: not a partition */
} groups;

static void groups_finish(groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].r);
    free(g->v);
    memset(g, 0, sizeof *g);
}

/* Parses "0,1,2" (as TB_COMM_GROUP writes ranks) into a sorted, distinct list.
 * Returns 0, or -1 when the text is not a list of integers. */
static int parse_ranks(const char *s, group *out)
{
    size_t cap = 0, n = 0;
    int64_t *v = NULL;
    const char *p = s;
    while (*p) {
        while (*p == ' ')
            p++;
        char *end = NULL;
        long long x = strtoll(p, &end, 10);
        if (end == p || VEC_PUSH(v, n, cap, (int64_t)x))
            goto bad;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (!n)
        goto bad;
    out->r = v;
    out->n = sort_unique_i64(v, n);
    return 0;
bad:
    free(v);
    return -1;
}

static int same_group(const group *a, const group *b)
{
    return a->n == b->n && !memcmp(a->r, b->r, a->n * sizeof *a->r);
}

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    return sort_cmp_i64(&x->r[0], &y->r[0]);
}

/* The rank sets of one kind of temp.tb_cp_p2p ('pp', 'p2p', 'collective':
 * communication_group.json's collective groups and, per group name of the
 * ranks' communication.json collective ops, the ranks that have it),
 * distinct, ordered by first rank. */
static tb_status read_sets(const metric_ctx *m, const char *kind, groups *g, tb_error *err)
{
    memset(g, 0, sizeof *g);
    sqlite3_stmt *st = NULL;
    const char *sql = strcmp(kind, "collective") != 0
                          ? "SELECT DISTINCT ranks FROM temp.tb_cp_p2p WHERE kind = ?1"
                          : "SELECT ranks FROM temp.tb_cp_p2p WHERE kind = ?1 "
                            "UNION SELECT group_concat(rankId) FROM (SELECT DISTINCT groupName, rankId "
                            "  FROM temp.tb_cp_p2p WHERE kind = 'member' ORDER BY groupName, rankId) GROUP BY groupName";
    if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(m, "cluster_step_trace_time: groups", err);
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        group one;
        const char *text = (const char *)sqlite3_column_text(st, 0);
        if (!text || parse_ranks(text, &one) != 0)
            continue; /* not a rank list: it cannot name a stage */
        int dup = 0;
        for (size_t i = 0; i < g->n && !dup; i++)
            dup = same_group(&g->v[i], &one);
        if (dup) {
            free(one.r);
            continue;
        }
        if (VEC_PUSH(g->v, g->n, cap, one)) {
            free(one.r);
            sqlite3_finalize(st);
            groups_finish(g);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        groups_finish(g);
        return db_fail(m, "cluster_step_trace_time: groups", err);
    }
    if (g->n)
        qsort(g->v, g->n, sizeof *g->v, cmp_group);
    return TB_OK;
}

/* How many ranks two sorted sets share (stops at 2: only 0, 1 and more matter). */
static int shared(const group *a, const group *b)
{
    int k = 0;
    for (size_t i = 0, j = 0; i < a->n && j < b->n && k < 2;) {
        if (a->r[i] == b->r[j])
            k++, i++, j++;
        else if (a->r[i] < b->r[j])
            i++;
        else
            j++;
    }
    return k;
}

/* a |= b (sorted, distinct). 0, or -1 out of memory. */
static int merge_into(group *a, const group *b)
{
    int64_t *v = realloc(a->r, (a->n + b->n) * sizeof *v);
    if (!v)
        return -1;
    memcpy(v + a->n, b->r, b->n * sizeof *v);
    a->r = v;
    a->n = sort_unique_i64(v, a->n + b->n);
    return 0;
}

/* A copy of g into *out; 0 or -1. */
static int copy_group(const group *g, group *out)
{
    out->n = g->n;
    out->r = malloc((g->n ? g->n : 1) * sizeof *out->r);
    if (!out->r)
        return -1;
    memcpy(out->r, g->r, g->n * sizeof *out->r);
    return 0;
}

/* Joins the sets that share a rank into one, as msprof-analyze does: the
 * first (least first rank) with every later set that shares a rank with
 * what it has gathered so far, in order; then again over those left. */
static int join_connected(groups *in, groups *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    char *used = calloc(in->n ? in->n : 1, 1);
    if (!used)
        return -1;
    for (size_t i = 0; i < in->n; i++) {
        if (used[i])
            continue;
        group u;
        if (copy_group(&in->v[i], &u) || VEC_PUSH(out->v, out->n, cap, u)) {
            free(used);
            return -1;
        }
        used[i] = 1;
        for (size_t j = i + 1; j < in->n; j++)
            if (!used[j] && shared(&in->v[j], &out->v[out->n - 1])) {
                if (merge_into(&out->v[out->n - 1], &in->v[j])) {
                    free(used);
                    return -1;
                }
                used[j] = 1;
            }
    }
    free(used);
    return 0;
}

/*
 * msprof-analyze's pipeline stages. With pipeline-parallel groups (p2p
 * groups whose pg_name starts with "pp": communication_group.json's
 * comm_group_parallel_info, profiler_metadata.json's parallel_group_info):
 * the pp groups that share ranks are joined; each collective group that holds
 * at most one rank of every joined pp group is a piece of a stage, and pieces
 * that share a rank are one stage. Else, with the p2p groups of a
 * communication_group.json that names no group (msprof-analyze's earlier
 * files): those groups. Else no stage. Ordered by first rank.
 */
static tb_status stage_sets(const metric_ctx *m, groups *stages, tb_error *err)
{
    groups pp, links = {0}, coll = {0};
    memset(stages, 0, sizeof *stages);
    tb_status rc = read_sets(m, "pp", &pp, err);
    if (rc)
        return rc;
    if (!pp.n) {
        groups_finish(&pp);
        return read_sets(m, "p2p", stages, err);
    }
    if (join_connected(&pp, &links) || (rc = read_sets(m, "collective", &coll, err))) {
        rc = rc ? rc : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    size_t cap = 0;
    for (size_t c = 0; c < coll.n && !rc; c++) {
        int valid = 1;
        for (size_t l = 0; l < links.n && valid; l++)
            valid = shared(&coll.v[c], &links.v[l]) <= 1;
        if (!valid)
            continue;
        /* joins every stage it shares a rank with, else starts one */
        group u;
        if (copy_group(&coll.v[c], &u)) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        size_t k = 0;
        for (size_t s = 0; s < stages->n; s++) {
            if (shared(&stages->v[s], &u)) {
                if (merge_into(&u, &stages->v[s]))
                    rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                free(stages->v[s].r);
            } else {
                stages->v[k++] = stages->v[s];
            }
        }
        stages->n = k;
        if (!rc && VEC_PUSH(stages->v, stages->n, cap, u))
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        if (rc)
            free(u.r);
    }
    if (!rc && stages->n)
        qsort(stages->v, stages->n, sizeof *stages->v, cmp_group);
done:
    groups_finish(&pp);
    groups_finish(&links);
    groups_finish(&coll);
    if (rc)
        groups_finish(stages);
    return rc;
}

/* The group holding rank, or -1. */
static long group_of(const groups *g, int64_t rank)
{
    for (size_t i = 0; i < g->n; i++)
        if (bsearch(&rank, g->v[i].r, g->v[i].n, sizeof rank, sort_cmp_i64))
            return (long)i;
    return -1;
}

/* Python's str() of a tuple of ints: "(0, 1, 2)", "(5,)", "()". Returns new (free with free()). */
static char *tuple_text(const int64_t *r, size_t n)
{
    size_t cap = 3 + n * 24;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t k = 0;
    s[k++] = '(';
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s%lld", i ? ", " : "", (long long)r[i]);
    if (n == 1)
        s[k++] = ',';
    s[k++] = ')';
    s[k] = 0;
    return s;
}

/* Ranks of one step: the distinct integer ranks of its rank rows, sorted. */
typedef struct ranklist {
    int64_t *r;
    size_t n, cap;
} ranklist;

static int ranklist_add(ranklist *l, int64_t x)
{
    return VEC_PUSH(l->r, l->n, l->cap, x);
}

/* Inserts (step, rank, stage idx, stage order) for one step into
 * tb_m_cluster_stage: each rank's stage is the first holding it; ranks in
 * none share the stage "()", as msprof-analyze groups them. */
static tb_status stage_step(const metric_ctx *m, sqlite3_value *step, const groups *g, sqlite3_stmt *ranks,
                            sqlite3_stmt *ins, tb_error *err)
{
    ranklist l = {0};
    tb_status rc = TB_OK;
    sqlite3_reset(ranks);
    sqlite3_bind_value(ranks, 1, step);
    int s;
    while ((s = sqlite3_step(ranks)) == SQLITE_ROW)
        if (ranklist_add(&l, sqlite3_column_int64(ranks, 0)) != 0) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            goto done;
        }
    if (s != SQLITE_DONE) {
        rc = db_fail(m, "cluster_step_trace_time: ranks", err);
        goto done;
    }
    for (size_t i = 0; i < l.n; i++) {
        long gi = group_of(g, l.r[i]);
        char *idx = gi >= 0 ? tuple_text(g->v[gi].r, g->v[gi].n) : tuple_text(NULL, 0);
        if (!idx) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            goto done;
        }
        sqlite3_reset(ins);
        sqlite3_bind_value(ins, 1, step);
        sqlite3_bind_int64(ins, 2, l.r[i]);
        sqlite3_bind_text(ins, 3, idx, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(ins, 4, gi >= 0 ? gi : (long)g->n);
        free(idx);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            rc = db_fail(m, "cluster_step_trace_time: stages", err);
            goto done;
        }
    }
done:
    free(l.r);
    return rc;
}

/* temp.tb_m_cluster_stage: the stage of each rank row (none without stages). */
static tb_status stage_map(const metric_ctx *m, tb_error *err)
{
    groups g;
    sqlite3_stmt *steps = NULL, *ranks = NULL, *ins = NULL;
    tb_status rc = metrics_exec(m, "cluster_step_trace_time",
                                "DROP TABLE IF EXISTS temp.tb_m_cluster_stage;"
                                "CREATE TEMP TABLE tb_m_cluster_stage (step TEXT, rankId INTEGER, idx TEXT, "
                                "  ord INTEGER);",
                                err);
    if (rc)
        return rc;
    if ((rc = stage_sets(m, &g, err)))
        return rc;
    if (!g.n)
        goto done;
    if (sqlite3_prepare_v2(m->db, "SELECT DISTINCT step FROM temp.tb_m_cluster_rank", -1, &steps, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db,
                           "SELECT DISTINCT rankId FROM temp.tb_m_cluster_rank "
                           "WHERE step IS ?1 AND rankId IS NOT NULL ORDER BY rankId",
                           -1, &ranks, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_cluster_stage VALUES (?1, ?2, ?3, ?4)", -1, &ins, NULL) !=
            SQLITE_OK) {
        rc = db_fail(m, "cluster_step_trace_time: stages", err);
        goto done;
    }
    int s;
    while (!rc && (s = sqlite3_step(steps)) == SQLITE_ROW)
        rc = stage_step(m, sqlite3_column_value(steps, 0), &g, ranks, ins, err);
    if (!rc && s != SQLITE_DONE)
        rc = db_fail(m, "cluster_step_trace_time: steps", err);
done:
    sqlite3_finalize(steps);
    sqlite3_finalize(ranks);
    sqlite3_finalize(ins);
    groups_finish(&g);
    return rc;
}

static tb_status build_step_trace(const metric_ctx *m, tb_error *err)
{
    if (m->phase != METRICS_COMBINE) {
        tb_status rc = collect_rank_rows(m, err);
        if (rc || m->phase == METRICS_COLLECT)
            return rc;
    }
    tb_status rc = metrics_exec(m, "cluster_step_trace_time",
                                "DROP TABLE IF EXISTS temp.cluster_step_trace_time;"
                                "CREATE TEMP TABLE cluster_step_trace_time (step TEXT, type TEXT, idx TEXT, "
                                "  computing REAL, communicationNotOverlapped REAL, overlapped REAL, "
                                "  communication REAL, free REAL, stage REAL, bubble REAL, "
                                "  communicationNotOverlappedExcludeReceive REAL, preparing REAL, "
                                "  rankId INTEGER, deviceId INTEGER, source TEXT, seq INTEGER);",
                                err);
    enum rank_source used;
    if (rc || (rc = rank_rows(m, &used, err)))
        return rc;
    /* a loaded cluster CSV's rank rows come with its own stage rows; others get msprof-analyze's stages */
    if (used == SRC_CLUSTER_CSV)
        rc = metrics_exec(m, "cluster_step_trace_time",
                          "DROP TABLE IF EXISTS temp.tb_m_cluster_stage;"
                          "CREATE TEMP TABLE tb_m_cluster_stage (step TEXT, rankId INTEGER, idx TEXT, ord INTEGER);",
                          err);
    else
        rc = stage_map(m, err);
    if (rc)
        return rc;
    /* msprof-analyze's order: rank rows by rank then step, then stage rows by
     * step then stage; seq keeps it */
    char *sql = sqlite3_mprintf(
        "INSERT INTO temp.cluster_step_trace_time "
        "SELECT step, type, idx, " FIELDS ", rankId, deviceId, source, "
        "  row_number() OVER (ORDER BY type = 'stage', rankId, deviceId, CASE WHEN type = 'rank' THEN idx END, "
        "    step IS NOT NULL, CAST(step AS INTEGER), step, ord) "
        "FROM (SELECT step, 'rank' AS type, idx, " FIELDS ", rankId, deviceId, source, 0 AS ord "
        "      FROM temp.tb_m_cluster_rank "
        "      UNION ALL "
        "      SELECT r.step, 'stage', s.idx, max(r.computing), max(r.communicationNotOverlapped), "
        "        max(r.overlapped), max(r.communication), max(r.free), max(r.stage), max(r.bubble), "
        "        max(r.communicationNotOverlappedExcludeReceive), max(r.preparing), NULL, NULL, "
        "        min(r.source), min(s.ord) "
        "      FROM temp.tb_m_cluster_rank r "
        "      JOIN temp.tb_m_cluster_stage s ON s.step IS r.step AND s.rankId = r.rankId "
        "      GROUP BY r.step, s.idx "
        "      UNION ALL "
        "      SELECT step, 'stage', idx, " FIELDS ", NULL, NULL, 'TB_CLUSTER_STEP_TRACE_TIME', rowid "
        "      FROM temp.tb_cp_rank WHERE source = 'stage' AND %d);"
        "DROP TABLE temp.tb_m_cluster_rank;"
        "DROP TABLE temp.tb_m_cluster_stage;",
        used == SRC_CLUSTER_CSV);
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    rc = metrics_exec(m, "cluster_step_trace_time", sql, err);
    sqlite3_free(sql);
    return rc;
}

/* The msprof-analyze layout: exact header, Preparing only when the source had it. */
static tb_status build_step_trace_csv(const metric_ctx *m, tb_error *err)
{
    if (m->phase == METRICS_COLLECT)
        return TB_OK; /* made from cluster_step_trace_time alone */
    int prep = any_row(m, "cluster_step_trace_time_csv",
                       "SELECT 1 FROM temp.cluster_step_trace_time WHERE preparing IS NOT NULL LIMIT 1", err);
    if (prep < 0)
        return err->code;
    char *sql = sqlite3_mprintf(
        "DROP TABLE IF EXISTS temp.cluster_step_trace_time_csv;"
        "CREATE TEMP TABLE cluster_step_trace_time_csv AS "
        "SELECT step AS \"Step\", type AS \"Type\", idx AS \"Index\", computing AS \"Computing\", "
        "  communicationNotOverlapped AS \"Communication(Not Overlapped)\", overlapped AS \"Overlapped\", "
        "  communication AS \"Communication\", free AS \"Free\", stage AS \"Stage\", bubble AS \"Bubble\", "
        "  communicationNotOverlappedExcludeReceive AS \"Communication(Not Overlapped and Exclude Receive)\"%s "
        "FROM temp.cluster_step_trace_time ORDER BY seq;",
        prep ? ", preparing AS \"Preparing\"" : "");
    if (!sql)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tb_status rc = metrics_exec(m, "cluster_step_trace_time_csv", sql, err);
    sqlite3_free(sql);
    return rc;
}

/* --- communication ops with a step ------------------------------------------- */

/* temp.tb_m_cluster_op(rankId, opId, opName, opType, groupName, startNs, endNs, connectionId, step):
 * COMMUNICATION_OP with its step as text: the step of its launching call
 * (metrics/steps.h; NULL when no step holds the call), else, for an op
 * with no launching call, the last step that started at or before the op
 * (the device runs behind the host). */
static tb_status comm_ops(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "communication ops";
    tb_status rc = metrics_exec(m, what,
                                "DROP TABLE IF EXISTS temp.tb_m_cluster_op;"
                                "CREATE TEMP TABLE tb_m_cluster_op AS "
                                "  SELECT o.rankId AS rankId, o.opId AS opId, o.name AS opName, o.opType AS opType, "
                                "    o.groupName AS groupName, o.startNs AS startNs, o.endNs AS endNs, "
                                "    o.connectionId AS connectionId, NULL AS step "
                                "  FROM comm_op o;",
                                err);
    if (rc)
        return rc;
    steps s;
    if ((rc = steps_load(m->db, 1 | STEPS_COMPLETE, what, &s, err)))
        return rc;
    sqlite3_stmt *st = NULL, *upd = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT rowid, ifnull(rankId, 0), connectionId, startNs FROM temp.tb_m_cluster_op "
                           "WHERE startNs IS NOT NULL", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "UPDATE temp.tb_m_cluster_op SET step = ?2 WHERE rowid = ?1", -1, &upd, NULL) !=
            SQLITE_OK) {
        rc = db_fail(m, what, err);
        goto done;
    }
    int step = SQLITE_DONE;
    while (s.n && (step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(st, 1);
        int64_t k = sqlite3_column_type(st, 2) == SQLITE_NULL
                        ? IDMAP_ABSENT
                        : steps_launched(steps_launches(&s, rank), sqlite3_column_int64(st, 2));
        if (k == IDMAP_ABSENT)
            k = steps_started(&s, rank, sqlite3_column_int64(st, 3));
        if (k < 0)
            continue;
        char id[24];
        snprintf(id, sizeof id, "%lld", (long long)s.v[k].id);
        sqlite3_reset(upd);
        sqlite3_bind_int64(upd, 1, sqlite3_column_int64(st, 0));
        sqlite3_bind_text(upd, 2, id, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(upd) != SQLITE_DONE) {
            rc = db_fail(m, what, err);
            goto done;
        }
    }
    if (s.n && step != SQLITE_DONE)
        rc = db_fail(m, what, err);
    else
        rc = metrics_exec(m, what, "CREATE INDEX temp.tb_m_cluster_op_i ON tb_m_cluster_op(opId, rankId);", err);
done:
    sqlite3_finalize(st);
    sqlite3_finalize(upd);
    steps_finish(&s);
    return rc;
}

/* --- slow rank ------------------------------------------------------------------ */

/* First phase: temp.tb_cp_optime, the collective ops' time per rank: the rows
 * of communication.json and cluster_communication.json when the DB has any
 * collective one (fact 'stat'; rawStep and cluster keep what picks one row
 * per op of a rank), else the ops'. */
static tb_status collect_op_times(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "slow_rank_op";
    tb_status rc = metrics_exec(m, what,
                                "DROP TABLE IF EXISTS temp.tb_cp_optime;"
                                "CREATE TEMP TABLE tb_cp_optime (rawStep TEXT, step TEXT, opName TEXT, "
                                "  groupName TEXT, groupRanks TEXT, rankId INTEGER, timeNs INTEGER, "
                                "  cluster INTEGER, source TEXT, " OP_INFO_COLS ");",
                                err);
    if (rc || (rc = fact(m, what, "stat", "SELECT 1 FROM TB_COMM_OP_STAT WHERE opKind = 'collective'", err)))
        return rc;
    int stat = has_fact(m, what, "stat", err);
    if (stat < 0)
        return err->code;
    if (stat)
        return metrics_exec(m, what,
                            "INSERT INTO temp.tb_cp_optime "
                            "SELECT s.step, " STEP_TEXT("s.step") ", n.value, g.value, s.groupRanks, s.rankId, "
                            "  s.elapseNs, s.cluster, 'TB_COMM_OP_STAT', s.transitNs, s.waitNs, "
                            "  s.synchronizationNs, s.idleNs, s.waitRatio, s.synchronizationRatio "
                            "FROM TB_COMM_OP_STAT s "
                            "LEFT JOIN STRING_IDS n ON n.id = s.opName "
                            "LEFT JOIN STRING_IDS g ON g.id = s.groupName "
                            "WHERE s.opKind = 'collective' AND s.elapseNs IS NOT NULL AND s.rankId IS NOT NULL;",
                            err);
    if ((rc = comm_ops(m, err)))
        return rc;
    return metrics_exec(m, what,
                        "INSERT INTO temp.tb_cp_optime "
                        "SELECT NULL, step, opName, groupName, NULL, rankId, endNs - startNs, NULL, "
                        "  'COMMUNICATION_OP', NULL, NULL, NULL, NULL, NULL, NULL "
                        "FROM temp.tb_m_cluster_op "
                        "WHERE rankId IS NOT NULL AND NOT " IS_P2P("opName", "opType") ";"
                        "DROP TABLE temp.tb_m_cluster_op;",
                        err);
}

static tb_status build_slow_rank_op(const metric_ctx *m, tb_error *err)
{
    if (m->phase != METRICS_COMBINE) {
        tb_status rc = collect_op_times(m, err);
        if (rc || m->phase == METRICS_COLLECT)
            return rc;
    }
    tb_status rc = metrics_exec(m, "slow_rank_op",
                                "DROP TABLE IF EXISTS temp.slow_rank_op;"
                                "CREATE TEMP TABLE slow_rank_op (step TEXT, opName TEXT, groupName TEXT, "
                                "  groupRanks TEXT, rankId INTEGER, timeNs INTEGER, transmitNs INTEGER, "
                                "  waitNs INTEGER, ranks INTEGER, source TEXT, " OP_INFO_COLS ");"
                                "DROP TABLE IF EXISTS temp.tb_m_cluster_optime;"
                                "CREATE TEMP TABLE tb_m_cluster_optime (step TEXT, opName TEXT, groupName TEXT, "
                                "  groupRanks TEXT, rankId INTEGER, timeNs INTEGER, source TEXT, " OP_INFO_COLS ");",
                                err);
    if (rc)
        return rc;
    /* any shard with collective rows of communication.json: those rows (a
     * shard without any gave the ops', unused) */
    int stat = has_fact(m, "slow_rank_op", "stat", err);
    if (stat < 0)
        return err->code;
    if (stat)
        /* communication.json and cluster_communication.json may both give an
         * op of a rank: one row each, the cluster file's first */
        rc = metrics_exec(m, "slow_rank_op",
                          "INSERT INTO temp.tb_m_cluster_optime "
                          "SELECT step, opName, groupName, groupRanks, rankId, timeNs, source, " OP_INFO " FROM ("
                          "  SELECT step, opName, groupName, groupRanks, rankId, timeNs, source, " OP_INFO ", "
                          "    row_number() OVER (PARTITION BY rankId, rawStep, opName, groupName "
                          "                       ORDER BY cluster DESC) AS k "
                          "  FROM temp.tb_cp_optime WHERE source = 'TB_COMM_OP_STAT') "
                          "WHERE k = 1;",
                          err);
    else
        rc = metrics_exec(m, "slow_rank_op",
                          "INSERT INTO temp.tb_m_cluster_optime "
                          "SELECT step, opName, groupName, groupRanks, rankId, timeNs, source, " OP_INFO " "
                          "FROM temp.tb_cp_optime WHERE source = 'COMMUNICATION_OP' ORDER BY rowid;",
                          err);
    if (rc)
        return rc;
    return metrics_exec(m, "slow_rank_op",
                        "INSERT INTO temp.slow_rank_op "
                        "SELECT step, opName, groupName, max(groupRanks) OVER w, rankId, timeNs, "
                        "  min(timeNs) OVER w, timeNs - min(timeNs) OVER w, count(*) OVER w, source, " OP_INFO " "
                        "FROM temp.tb_m_cluster_optime "
                        "WINDOW w AS (PARTITION BY step, opName, groupName) "
                        "ORDER BY step IS NOT NULL, CAST(step AS INTEGER), step, opName, groupName, rankId;"
                        "DROP TABLE temp.tb_m_cluster_optime;",
                        err);
}

static tb_status build_slow_rank(const metric_ctx *m, tb_error *err)
{
    if (m->phase == METRICS_COLLECT)
        return TB_OK; /* made from slow_rank_op alone */
    return metrics_exec(m, "slow_rank",
                        "DROP TABLE IF EXISTS temp.slow_rank;"
                        "CREATE TEMP TABLE slow_rank (position INTEGER, rankId INTEGER, ops INTEGER, "
                        "  totalTimeNs INTEGER, totalWaitNs INTEGER, maxWaitNs INTEGER, waitRatio REAL, "
                        "  lastArrivals INTEGER, source TEXT);"
                        "INSERT INTO temp.slow_rank "
                        "SELECT row_number() OVER (ORDER BY sum(waitNs), rankId), rankId, count(*), sum(timeNs), "
                        "  sum(waitNs), max(waitNs), "
                        "  CASE WHEN sum(timeNs) > 0 THEN CAST(sum(waitNs) AS REAL) / sum(timeNs) END, "
                        "  sum(ranks > 1 AND waitNs = 0), min(source) "
                        "FROM temp.slow_rank_op GROUP BY rankId ORDER BY 1;",
                        err);
}

/* --- communication matrix ------------------------------------------------------- */

/* First phase: temp.tb_cp_link: the rows of communication_matrix.json and
 * cluster_communication_matrix.json when the DB has any (fact 'matrix'),
 * else the HCCL tasks' bytes and time summed per step, op, group, link and
 * transport (sums of integers: the shards' sums add up to the load's). */
/* temp.tb_cp_gmap(groupName, local, global): the ranks of each group of the
 * ranks' profiler_metadata.json (TB_COMM_GROUP rows of its
 * parallel_group_info: groupId its key, ranks its global_ranks), local rank
 * i being the i-th of its global ranks in order, as msprof-analyze maps
 * them; the group named by the hash of its key. */
static tb_status collect_group_map(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "communication_matrix";
    tb_status rc = metrics_exec(m, what,
                                "DROP TABLE IF EXISTS temp.tb_cp_gmap;"
                                "CREATE TEMP TABLE tb_cp_gmap (groupName TEXT, local INTEGER, global INTEGER);",
                                err);
    if (rc)
        return rc;
    sqlite3_stmt *q = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT DISTINCT groupId, ranks FROM TB_COMM_GROUP WHERE groupId IS NOT NULL "
                           "AND ranks IS NOT NULL AND coalesce(kind, '') NOT IN ('collective', 'p2p')",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_cp_gmap VALUES (?1, ?2, ?3)", -1, &ins, NULL) != SQLITE_OK) {
        rc = db_fail(m, what, err);
        goto done;
    }
    int st = SQLITE_DONE;
    while (!rc && (st = sqlite3_step(q)) == SQLITE_ROW) {
        group g;
        const char *id = (const char *)sqlite3_column_text(q, 0), *ranks = (const char *)sqlite3_column_text(q, 1);
        if (!id || !ranks || parse_ranks(ranks, &g) != 0)
            continue;
        char name[32];
        snprintf(name, sizeof name, "%llu", metrics_group_hash(id));
        for (size_t i = 0; i < g.n && !rc; i++) {
            sqlite3_reset(ins);
            sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(ins, 2, (sqlite3_int64)i);
            sqlite3_bind_int64(ins, 3, g.r[i]);
            if (sqlite3_step(ins) != SQLITE_DONE)
                rc = db_fail(m, what, err);
        }
        free(g.r);
    }
    if (!rc && st != SQLITE_DONE)
        rc = db_fail(m, what, err);
done:
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

static tb_status collect_links(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "communication_matrix";
    tb_status rc = metrics_exec(m, what,
                                "DROP TABLE IF EXISTS temp.tb_cp_link;"
                                "CREATE TEMP TABLE tb_cp_link (rawStep TEXT, step TEXT, opKind TEXT, opName TEXT, "
                                "  groupName TEXT, groupRanks TEXT, srcRank INTEGER, dstRank INTEGER, "
                                "  transportType, transport TEXT, bytes INTEGER, timeNs INTEGER, bw REAL, "
                                "  cluster INTEGER, rankId INTEGER, source TEXT);",
                                err);
    if (rc || (rc = collect_group_map(m, err)) || (rc = fact(m, what, "matrix", "SELECT 1 FROM TB_COMM_MATRIX", err)))
        return rc;
    int files = has_fact(m, what, "matrix", err);
    if (files < 0)
        return err->code;
    if (files)
        return metrics_exec(
            m, what,
            "INSERT INTO temp.tb_cp_link "
            "SELECT x.step, " STEP_TEXT("x.step") ", x.opKind, n.value, g.value, x.groupRanks, x.srcRank, "
            "  x.dstRank, x.transportType, x.transportType, CAST(round(x.transitSizeMB * 1000000) AS INTEGER), "
            "  CAST(round(x.transitTimeMs * 1000000) AS INTEGER), CAST(x.bandwidthGBs AS REAL), x.cluster, "
            "  x.rankId, 'TB_COMM_MATRIX' "
            "FROM TB_COMM_MATRIX x "
            "LEFT JOIN STRING_IDS n ON n.id = x.opName "
            "LEFT JOIN STRING_IDS g ON g.id = x.groupName;",
            err);
    int tasks = any_row(m, what, "SELECT 1 FROM COMMUNICATION_TASK_INFO LIMIT 1", err);
    if (tasks <= 0)
        return tasks < 0 ? err->code : TB_OK;
    if ((rc = comm_ops(m, err)))
        return rc;
    return metrics_exec(
        m, what,
        "INSERT INTO temp.tb_cp_link "
        "SELECT NULL, o.step, CASE WHEN o.opName IS NULL THEN NULL WHEN " IS_P2P("o.opName", "o.opType") " THEN 'p2p' "
        "    ELSE 'collective' END, o.opName, coalesce(g.value, o.groupName), NULL, c.srcRank, c.dstRank, "
        "  c.transportType, coalesce(e.name, CAST(c.transportType AS TEXT)), sum(c.size), sum(t.endNs - t.startNs), "
        "  NULL, NULL, NULL, 'COMMUNICATION_TASK_INFO' "
        "FROM COMMUNICATION_TASK_INFO c "
        "JOIN TASK t ON t.globalTaskId = c.globalTaskId AND t.rankId IS c.rankId "
        "LEFT JOIN temp.tb_m_cluster_op o ON o.opId = c.opId AND o.rankId IS c.rankId "
        "LEFT JOIN STRING_IDS g ON g.id = c.groupName "
        "LEFT JOIN ENUM_HCCL_TRANSPORT_TYPE e ON e.id = c.transportType "
        "WHERE c.size > 0 "
        "GROUP BY o.step, o.opName, coalesce(g.value, o.groupName), c.srcRank, c.dstRank, c.transportType;"
        "DROP TABLE temp.tb_m_cluster_op;",
        err);
}

/*
 * comm_op_bandwidth: per step, op, group, rank and transport, the op's
 * Communication Bandwidth Info on the rank as communication.json and
 * cluster_communication.json give it (TB_COMM_BANDWIDTH; the cluster
 * file's row wins), with its Size Distribution as those files write it: a
 * JSON object of size (MB, as written) -> [count, time in ms]
 * (TB_COMM_SIZE_DIST), "{}" when it has none.
 */
static tb_status build_op_bandwidth(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "comm_op_bandwidth";
    tb_status rc;
    if (m->phase != METRICS_COMBINE) {
        rc = metrics_exec(
            m, what,
            "DROP TABLE IF EXISTS temp.tb_cp_bw;"
            "CREATE TEMP TABLE tb_cp_bw AS "
            "SELECT b.step AS rawStep, " STEP_TEXT("b.step") " AS step, b.opKind AS opKind, n.value AS opName, "
            "  g.value AS groupName, b.rankId AS rankId, b.transport AS transport, "
            "  CAST(b.transitSizeMB AS REAL) AS transitSizeMB, CAST(b.transitTimeMs AS REAL) AS transitTimeMs, "
            "  CAST(b.bandwidthGBs AS REAL) AS bandwidthGBs, CAST(b.largePacketRatio AS REAL) AS largePacketRatio, "
            "  coalesce((SELECT json_group_object(d.sizeMB, json_array(d.count, d.timeMs)) FROM TB_COMM_SIZE_DIST d "
            "    WHERE d.rankId IS b.rankId AND d.step IS b.step AND d.opName IS b.opName "
            "    AND d.groupName IS b.groupName AND d.transport IS b.transport AND d.cluster IS b.cluster), '{}') "
            "    AS sizeDistribution, "
            "  b.cluster AS cluster "
            "FROM TB_COMM_BANDWIDTH b "
            "LEFT JOIN STRING_IDS n ON n.id = b.opName "
            "LEFT JOIN STRING_IDS g ON g.id = b.groupName "
            "WHERE b.rankId IS NOT NULL ORDER BY b.rowid;",
            err);
        if (rc || m->phase == METRICS_COLLECT)
            return rc;
    }
    return metrics_exec(
        m, what,
        "DROP TABLE IF EXISTS temp.comm_op_bandwidth;"
        "CREATE TEMP TABLE comm_op_bandwidth AS "
        "SELECT step, opKind, opName, groupName, rankId, transport, transitSizeMB, transitTimeMs, bandwidthGBs, "
        "  largePacketRatio, sizeDistribution, 'TB_COMM_BANDWIDTH' AS source FROM ("
        "  SELECT *, row_number() OVER (PARTITION BY rankId, rawStep, opName, groupName, transport "
        "                               ORDER BY cluster DESC) AS k FROM temp.tb_cp_bw) "
        "WHERE k = 1 "
        "ORDER BY step IS NOT NULL, CAST(step AS INTEGER), step, opName, groupName, rankId, transport;",
        err);
}

/*
 * The links of the ranks' own communication_matrix.json files name their
 * ranks by their place in the op's group ("0-1" in a group of ranks 8 and
 * 9 is 8 -> 9). As msprof-analyze does, the group's global ranks in a
 * rank's profiler_metadata.json say it (tb_cp_gmap), else a rank's own link
 * in the group ("i-i" in rank R's file) says that local rank i is R; temp.tb_m_link is
 * tb_cp_link's file rows with gSrc, gDst the global ranks (a cluster
 * file's rows are global already), NULL where no rank's own link maps the
 * local one. The links left out so are said in a note.
 */
static tb_status map_local_ranks(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "communication_matrix";
    tb_status rc = metrics_exec(
        m, what,
        "DROP TABLE IF EXISTS temp.tb_m_rankmap;"
        "CREATE TEMP TABLE tb_m_rankmap AS SELECT groupName, local, min(global) AS global FROM temp.tb_cp_gmap "
        "  GROUP BY groupName, local;"
        "INSERT INTO temp.tb_m_rankmap SELECT s.g, s.l, s.r FROM (SELECT groupName AS g, srcRank AS l, "
        "    min(rankId) AS r FROM temp.tb_cp_link WHERE source = 'TB_COMM_MATRIX' AND NOT coalesce(cluster, 0) "
        "    AND srcRank = dstRank AND rankId IS NOT NULL GROUP BY groupName, srcRank) s "
        "  WHERE NOT EXISTS (SELECT 1 FROM temp.tb_m_rankmap r WHERE r.groupName IS s.g AND r.local = s.l);"
        "DROP TABLE IF EXISTS temp.tb_m_link;"
        "CREATE TEMP TABLE tb_m_link AS SELECT l.*, "
        "  CASE WHEN coalesce(l.cluster, 0) THEN l.srcRank ELSE (SELECT r.global FROM temp.tb_m_rankmap r "
        "    WHERE r.groupName IS l.groupName AND r.local = l.srcRank) END AS gSrc, "
        "  CASE WHEN coalesce(l.cluster, 0) THEN l.dstRank ELSE (SELECT r.global FROM temp.tb_m_rankmap r "
        "    WHERE r.groupName IS l.groupName AND r.local = l.dstRank) END AS gDst "
        "FROM temp.tb_cp_link l WHERE l.source = 'TB_COMM_MATRIX';",
        err);
    if (rc || !m->note)
        return rc;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT count(*), count(DISTINCT opName || '@' || coalesce(groupName, '')), "
                           "  (SELECT group_concat(x, '; ') FROM (SELECT DISTINCT 'group ' || coalesce(groupName, '?') "
                           "    || ' local rank ' || CASE WHEN gSrc IS NULL THEN srcRank ELSE dstRank END AS x "
                           "    FROM temp.tb_m_link WHERE gSrc IS NULL OR gDst IS NULL ORDER BY 1 LIMIT 8)) "
                           "FROM temp.tb_m_link WHERE gSrc IS NULL OR gDst IS NULL",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(m, what, err);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "communication_matrix: %lld links of %lld ops left out: a group-local rank no rank of the load "
                 "maps to a global rank (by its own link in the group): %s%s",
                 (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1),
                 (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 0) > 8 ? "; ..." : "");
        m->note(m->ctx, msg);
    }
    sqlite3_finalize(st);
    return TB_OK;
}

static tb_status build_matrix(const metric_ctx *m, tb_error *err)
{
    if (m->phase != METRICS_COMBINE) {
        tb_status rc = collect_links(m, err);
        if (rc || m->phase == METRICS_COLLECT)
            return rc;
    }
    tb_status rc = metrics_exec(m, "communication_matrix",
                                "DROP TABLE IF EXISTS temp.communication_matrix;"
                                "CREATE TEMP TABLE communication_matrix (step TEXT, opKind TEXT, opName TEXT, "
                                "  groupName TEXT, groupRanks TEXT, srcRank INTEGER, dstRank INTEGER, "
                                "  transport TEXT, bytes INTEGER, timeNs INTEGER, bandwidthGBs REAL, source TEXT);",
                                err);
    if (rc)
        return rc;
    int files = has_fact(m, "communication_matrix", "matrix", err);
    if (files < 0)
        return err->code;
    if (files) {
        /* global ranks; one row per link: the cluster file's, else the source rank's file, else the lowest rank's */
        if ((rc = map_local_ranks(m, err)))
            return rc;
        return metrics_exec(
            m, "communication_matrix",
            "INSERT INTO temp.communication_matrix "
            "SELECT step, opKind, opName, groupName, groupRanks, gSrc, gDst, transport, bytes, timeNs, bw, "
            "  source FROM ("
            "  SELECT step, opKind, opName, groupName, groupRanks, gSrc, gDst, transport, bytes, timeNs, bw, "
            "    source, row_number() OVER (PARTITION BY rawStep, opKind, opName, groupName, gSrc, gDst, "
            "      transport ORDER BY cluster DESC, rankId IS gSrc DESC, rankId) AS k "
            "  FROM temp.tb_m_link WHERE gSrc IS NOT NULL AND gDst IS NOT NULL) "
            "WHERE k = 1 "
            "ORDER BY step IS NOT NULL, CAST(step AS INTEGER), step, opKind, opName, gSrc, gDst, transport;"
            "DROP TABLE temp.tb_m_link; DROP TABLE temp.tb_m_rankmap;",
            err);
    }
    /* bytes per ns is GB/s */
    return metrics_exec(
        m, "communication_matrix",
        "INSERT INTO temp.communication_matrix "
        "SELECT step, opKind, opName, groupName, NULL, srcRank, dstRank, transport, sum(bytes), sum(timeNs), "
        "  CASE WHEN sum(timeNs) > 0 THEN CAST(sum(bytes) AS REAL) / sum(timeNs) END, source "
        "FROM temp.tb_cp_link WHERE source = 'COMMUNICATION_TASK_INFO' "
        "GROUP BY step, opName, groupName, srcRank, dstRank, transportType "
        "ORDER BY step IS NOT NULL, CAST(step AS INTEGER), step, 2, opName, srcRank, dstRank, 8;",
        err);
}

const metric_table metrics_cluster[] = {
    {"cluster_step_trace_time", {"step_trace_time", NULL}, build_step_trace,
     "per rank and step the step trace (us), then per pipeline stage the max over its ranks", NULL,
     {"tb_cp_facts", "tb_cp_rank", "tb_cp_p2p", NULL}},
    {"cluster_step_trace_time_csv", {"cluster_step_trace_time", NULL}, build_step_trace_csv,
     "cluster_step_trace_time with msprof-analyze's cluster_step_trace_time.csv header", NULL, {NULL}},
    {"slow_rank_op", {NULL}, build_slow_rank_op,
     "per collective op, group, step and rank: time, transmit (least time over the ranks) and wait", NULL,
     {"tb_cp_facts", "tb_cp_optime", NULL}},
    {"slow_rank", {"slow_rank_op", NULL}, build_slow_rank,
     "per rank the total wait in collective ops, ranked from the least (the rank the others waited for)", NULL, {NULL}},
    {"communication_matrix", {NULL}, build_matrix,
     "bytes, time and bandwidth per step, op, source rank, destination rank and transport", NULL,
     {"tb_cp_facts", "tb_cp_link", "tb_cp_gmap", NULL}},
    {"comm_op_bandwidth", {NULL}, build_op_bandwidth,
     "per step, op, rank and transport the op's bandwidth info and size distribution, as the communication "
     "files give them", NULL, {"tb_cp_bw", NULL}},
};
const size_t metrics_cluster_n = sizeof metrics_cluster / sizeof metrics_cluster[0];
