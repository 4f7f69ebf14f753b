/* SPDX-License-Identifier: MIT */
/*
 * msprof_db.c - imports an msprof-compatible SQLite DB (msprof_*.db,
 * ascend_pytorch_profiler*.db, or one tracebook wrote) into the unified DB.
 *
 * Real DBs differ from the published schema (formats.md §3): columns are
 * read by name, with aliases (blockDim -> blockNum), missing columns become
 * NULL, unknown columns are not copied. Every table of msprof's DB reference
 * is read (its device and host sample tables, DDR, HBM, LLC, ..., into
 * tables of their own), the rows of ENUM_* tables go to TB_SOURCE_ENUM (with
 * the STRING_IDS names of NPU_OP_MEM's types when there is no ENUM_MEMORY), and
 * any other table that holds rows is named in one warning: nothing is
 * dropped without a word. Every text attribute is an id
 * into the source's STRING_IDS; those ids are re-interned into ours so two
 * inputs never clash. globalTaskId and opId are shifted past the ids already
 * used, so every task stays unique in a multi-rank DB; connectionId stays as
 * it is (it pairs rows within one rank, and rankId tells ranks apart).
 *
 * A DB that holds several ranks keeps them (msprof_db_ranks): rows of a DB
 * tracebook wrote keep their rankId, rows of an msprof DB whose
 * RANK_DEVICE_MAP lists several ranks find theirs through their deviceId
 * (or their task's); each of the DB's ranks becomes a rank of the load.
 *
 * The input is never modified: it is opened through sqlite_input.c (a DB
 * with a write-ahead log is read from a private copy, any other immutable).
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/msprof_db.h"
#include "db/ask.h"
#include "db/sqlite_input.h"

#include "tracebook/error.h"
#include "tracebook/load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How a destination column is filled from the source row. */
/* K_TIME: a time read as an integer; K_NS: another ns column (a duration, a
 * sum: any name ending in Ns), read as written; both checked against the range */
enum col_kind { K_PLAIN, K_STRING, K_TIME, K_NS, K_GTID, K_OPID, K_RANK, K_OVERLAP };
/* The largest id a renumbered globalTaskId, opId or overlap id may take:
 * ids of crafted DBs near 2^63 would overflow when moved. */
#define ID_LIMIT ((int64_t)1 << 62)

/* Which source table fills which row table; string-id columns are those
 * rows.c names for the row table. */
typedef struct table_spec {
    const char *src;       /* source table */
    int row;               /* destination row table */
    int dest;              /* TB_DEST_* counter, -1 none */
    const char *aliases;   /* "dst=src,dst=src" */
} table_spec;

static const table_spec specs[] = {
    {"TASK", R_TASK, TB_DEST_TASK, ""},
    {"COMPUTE_TASK_INFO", R_FULL_COMPUTE_TASK_INFO, TB_DEST_COMPUTE_TASK_INFO,
     "blockNum=blockDim,mixBlockNum=mixBlockDim"},
    {"COMMUNICATION_SCHEDULE_TASK_INFO", R_COMMUNICATION_SCHEDULE_TASK_INFO, -1, ""},
    {"COMMUNICATION_TASK_INFO", R_FULL_COMMUNICATION_TASK_INFO, TB_DEST_COMMUNICATION_TASK_INFO, ""},
    {"COMMUNICATION_OP", R_FULL_COMMUNICATION_OP, TB_DEST_COMMUNICATION_OP, ""},
    {"CANN_API", R_CANN_API, TB_DEST_CANN_API, ""},
    {"PYTORCH_API", R_FULL_PYTORCH_API, TB_DEST_PYTORCH_API, ""},
    {"STEP_TIME", R_STEP_TIME, TB_DEST_STEP_TIME, ""},
    {"MEMCPY_INFO", R_MEMCPY_INFO, TB_DEST_MEMCPY_INFO, ""},
    {"OVERLAP_ANALYSIS", R_OVERLAP_ANALYSIS, TB_DEST_OVERLAP_ANALYSIS, ""},
    {"MSTX_EVENTS", R_FULL_MSTX_EVENTS, TB_DEST_MSTX_EVENTS, ""},
    {"NPU_MEM", R_NPU_MEM, -1, ""},
    {"NPU_MODULE_MEM", R_NPU_MODULE_MEM, -1, ""},
    {"NPU_OP_MEM", R_NPU_OP_MEM, -1, ""},
    {"MEMORY_RECORD", R_MEMORY_RECORD, -1, ""},
    {"OP_MEMORY", R_OP_MEMORY, -1, ""},
    {"PYTORCH_CALLCHAINS", R_PYTORCH_CALLCHAINS, -1, ""},
    {"CONNECTION_IDS", R_CONNECTION_IDS, -1, ""},
    {"GC_RECORD", R_GC_RECORD, -1, ""},
    {"TASK_PMU_INFO", R_TASK_PMU_INFO, -1, ""},
    {"NPU_INFO", R_NPU_INFO, -1, ""},
    {"HOST_INFO", R_HOST_INFO, -1, ""},
    /* msprof's device and host sample tables, kept under their own names */
    {"QOS", R_QOS, -1, ""},
    {"AICORE_FREQ", R_AICORE_FREQ, -1, ""},
    {"ACC_PMU", R_ACC_PMU, -1, ""},
    {"SOC_BANDWIDTH_LEVEL", R_SOC_BANDWIDTH_LEVEL, -1, ""},
    {"NIC", R_NIC, -1, ""},
    {"ROCE", R_ROCE, -1, ""},
    {"LLC", R_LLC, -1, ""},
    {"SAMPLE_PMU_TIMELINE", R_SAMPLE_PMU_TIMELINE, -1, ""},
    {"SAMPLE_PMU_SUMMARY", R_SAMPLE_PMU_SUMMARY, -1, ""},
    {"HBM", R_HBM, -1, ""},
    {"DDR", R_DDR, -1, ""},
    {"HCCS", R_HCCS, -1, ""},
    {"UB", R_UB, -1, ""},
    {"SIO", R_SIO, -1, ""},
    {"CCU", R_CCU, -1, ""},
    {"DPU_TASK", R_DPU_TASK, -1, ""},
    {"PCIE", R_PCIE, -1, ""},
    {"CPU_USAGE", R_CPU_USAGE, -1, ""},
    {"HOST_MEM_USAGE", R_HOST_MEM_USAGE, -1, ""},
    {"HOST_DISK_USAGE", R_HOST_DISK_USAGE, -1, ""},
    {"HOST_NETWORK_USAGE", R_HOST_NETWORK_USAGE, -1, ""},
    {"OSRT_API", R_OSRT_API, -1, ""},
    {"NETDEV_STATS", R_NETDEV_STATS, -1, ""},
    /* tracebook's own tables, in a DB tracebook wrote */
    {"TB_PROCESS", R_PROCESS, -1, ""},
    {"TB_COLLECTIVE", R_COLLECTIVE, -1, ""},
    {"TB_MEMCPY_BW", R_MEMCPY_BW, -1, ""},
    {"TB_THREAD", R_THREAD, -1, ""},
    {"TB_FLOW", R_FLOW, -1, ""},
    {"TB_EVENT", R_EVENT, -1, ""},
    {"TB_COUNTER", R_COUNTER, -1, ""},
    {"TB_STEP_TRACE_TIME", R_STEP_TRACE_TIME, -1, ""},
    {"TB_TOPS_SUMMARY", R_TOPS_SUMMARY, -1, ""},
    {"TB_TOPS_TOTAL", R_TOPS_TOTAL, -1, ""},
    {"TB_ITERATION", R_ITERATION, -1, ""},
    {"TB_ITERATION_REDUCE", R_ITERATION_REDUCE, -1, ""},
    {"TB_KERNEL_PMU", R_KERNEL_PMU, -1, ""},
    {"TB_KERNEL_TYPE", R_KERNEL_TYPE, -1, ""},
    {"TB_COMM_OP_STAT", R_COMM_OP_STAT, -1, ""},
    {"TB_COMM_BANDWIDTH", R_COMM_BANDWIDTH, -1, ""},
    {"TB_COMM_SIZE_DIST", R_COMM_SIZE_DIST, -1, ""},
    {"TB_COMM_MATRIX", R_COMM_MATRIX, -1, ""},
    {"TB_COMM_GROUP", R_COMM_GROUP, -1, ""},
    {"TB_CLUSTER_STEP_TRACE_TIME", R_CLUSTER_STEP_TRACE_TIME, -1, ""},
    {"TB_NPU_MODULE_MEM", R_TB_NPU_MODULE_MEM, -1, ""},
    {"TB_PROFILE_META", R_PROFILE_META, -1, ""},
    {"TB_STATIC_OP_MEM", R_STATIC_OP_MEM, -1, ""},
    {"TB_OPERATOR_DETAILS", R_OPERATOR_DETAILS, -1, ""},
    {"TB_OP_STATISTIC", R_OP_STATISTIC, -1, ""},
    {"TB_API_STATISTIC", R_API_STATISTIC, -1, ""},
    {"TB_COMM_STATISTIC", R_COMM_STATISTIC, -1, ""},
    {"TB_SOURCE_ENUM", R_SOURCE_ENUM, -1, ""},
    {"TB_SOURCE_CSV", R_SOURCE_CSV, -1, ""},
};

/* Tables of an input that are known but not copied: their facts are read
 * (SESSION_TIME_INFO, RANK_DEVICE_MAP, STRING_IDS; META_DATA's rows go to
 * TB_PROFILE_META) or this load writes its own (the bookkeeping of an
 * earlier load). ENUM_* tables go to
 * TB_SOURCE_ENUM; sqlite_* tables are SQLite's. */
static const char *const known_tables[] = {
    "STRING_IDS", "SESSION_TIME_INFO", "META_DATA", "RANK_DEVICE_MAP", "TB_SOURCE", "TB_LOAD_COUNT",
    "TB_WARNING", "TB_RANK", "TB_SHARD", "TB_SHARD_GROUP", "TB_SHARD_RANK", "TB_SHARD_TABLE", "TB_SHARDS", NULL,
};

static const char *const time_cols[] = {"startNs", "endNs", "timestampNs", "timestamp", "allocationTime",
                                        "releaseTime", "activeReleaseTime", NULL};

/* ---- id maps ---------------------------------------------------------------- */

typedef struct idmap {
    int64_t *key, *val;
    unsigned char *used;
    size_t cap, n;
} idmap;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static int idmap_put(idmap *m, int64_t k, int64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        idmap nm = {0};
        nm.cap = m->cap ? m->cap * 2 : 1024;
        nm.key = malloc(nm.cap * sizeof *nm.key);
        nm.val = malloc(nm.cap * sizeof *nm.val);
        nm.used = calloc(nm.cap, 1);
        if (!nm.key || !nm.val || !nm.used) {
            free(nm.key);
            free(nm.val);
            free(nm.used);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->used[i])
                idmap_put(&nm, m->key[i], m->val[i]);
        free(m->key);
        free(m->val);
        free(m->used);
        *m = nm;
    }
    size_t mask = m->cap - 1, i = mix((uint64_t)k) & mask;
    while (m->used[i] && m->key[i] != k)
        i = (i + 1) & mask;
    if (!m->used[i]) {
        m->used[i] = 1;
        m->n++;
    }
    m->key[i] = k;
    m->val[i] = v;
    return 0;
}

static int idmap_get(const idmap *m, int64_t k, int64_t *v)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1, i = mix((uint64_t)k) & mask;
    while (m->used[i]) {
        if (m->key[i] == k) {
            *v = m->val[i];
            return 1;
        }
        i = (i + 1) & mask;
    }
    return 0;
}

static void idmap_free(idmap *m)
{
    free(m->key);
    free(m->val);
    free(m->used);
}


/* ---- import ------------------------------------------------------------------ */


/* The source column for a destination column: itself or its alias, if present. */
static int src_column(sqlite3 *db, const table_spec *sp, const char *dst, char *out, size_t n)
{
    char candidates[2][128];
    int nc = 0;
    size_t dn = strlen(dst);
    if (dn >= sizeof candidates[0])
        return 0;
    memcpy(candidates[nc++], dst, dn + 1);
    for (const char *p = sp->aliases; *p;) {
        const char *eq = strchr(p, '='), *e = strchr(p, ',');
        if (!eq)
            break;
        size_t klen = (size_t)(eq - p);
        size_t vlen = e ? (size_t)(e - eq - 1) : strlen(eq + 1);
        if (klen == strlen(dst) && strncmp(p, dst, klen) == 0 && vlen < sizeof candidates[0])
            snprintf(candidates[nc++], sizeof candidates[0], "%.*s", (int)vlen, eq + 1);
        if (!e)
            break;
        p = e + 1;
    }
    for (int i = 0; i < nc; i++) {
        if (db_has_column(db, "main", sp->src, candidates[i]) > 0) {
            size_t cn = strlen(candidates[i]);
            if (cn >= n)
                return 0;
            memcpy(out, candidates[i], cn + 1);
            return 1;
        }
    }
    return 0;
}

/* A DB rankId and the index of its rank among the DB's ranks. */
typedef struct rank_key {
    int64_t id;
    size_t index;
} rank_key;

typedef struct ctx {
    const row_sink *sink;
    const import_opts *opt;
    import_result *res;
    idmap strings;
    sqlite3_stmt *string_by_id; /* a shard's group: the value of an earlier group's string */
    int64_t gtid_base, op_base, max_gtid, max_op;
    int64_t overlap_base;  /* a shard's group: added to its OVERLAP_ANALYSIS ids */
    tb_error *err;
    const char *path;
    const db_ranks *ranks; /* several ranks, or NULL */
    rank_key *keys;        /* ranks->v by id, for the rank of each row */
    int task_ranks;        /* temp.tb_task_rank holds each task's DB rank (by device) */
} ctx;

/* The load's rank of a row whose DB rankId is id (the DB's first rank when
 * the row names none, or one the DB does not list). */
static int64_t row_rank(const ctx *c, sqlite3_stmt *q, int col)
{
    /* a shard's group: its ranks in a row from the group's first */
    if (c->opt->part && !c->opt->part->cluster && sqlite3_column_type(q, col) != SQLITE_NULL)
        return c->opt->rank + (sqlite3_column_int64(q, col) - c->opt->part->rank_lo);
    if (!c->ranks || sqlite3_column_type(q, col) == SQLITE_NULL)
        return c->opt->rank;
    int64_t id = sqlite3_column_int64(q, col);
    size_t lo = 0, hi = c->ranks->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->keys[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->ranks->n && c->keys[lo].id == id)
        return c->opt->rank + (int64_t)c->keys[lo].index;
    return c->opt->rank;
}

static tb_status import_strings(ctx *c, sqlite3 *db)
{
    sqlite3_stmt *q;
    /* a shard's group: the strings its shard met first in it, in their
     * order, so that STRING_IDS comes out as in a load of all the raw
     * inputs; those of the shard's earlier groups, which the merge interned
     * already, are looked up when a row names them (string_by_id) */
    if (sqlite3_prepare_v2(db, c->opt->part ? "SELECT id, value FROM STRING_IDS WHERE id >= ? AND id < ? ORDER BY id"
                                            : "SELECT id, value FROM STRING_IDS",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read STRING_IDS: %s", sqlite3_errmsg(db));
    if (c->opt->part) {
        sqlite3_bind_int64(q, 1, c->opt->part->strings_start);
        sqlite3_bind_int64(q, 2, c->opt->part->strings_end);
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(q, 1);
        size_t n = (size_t)sqlite3_column_bytes(q, 1);
        int64_t id = c->sink->intern(c->sink->ctx, v ? v : "", v ? n : 0);
        if (id < 0) {
            sqlite3_finalize(q);
            return row_sink_fail(c->sink, c->path, c->err);
        }
        if (idmap_put(&c->strings, sqlite3_column_int64(q, 0), id)) {
            sqlite3_finalize(q);
            return tb_error_set(c->err, TB_ERR_NOMEM, "cannot intern the strings of %s", c->path);
        }
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read STRING_IDS: %s", sqlite3_errmsg(db));
    return TB_OK;
}

/* A shard's group: our id of the string its shard interned as sid for an
 * earlier group (interned again by value: the merge has it already, so its
 * id is the one the load of all the raw inputs gives). -1 when the shard
 * has no such string, -2 when out of memory. */
static int64_t earlier_string(ctx *c, int64_t sid)
{
    sqlite3_stmt *q = c->string_by_id;
    int64_t id = -1;
    sqlite3_bind_int64(q, 1, sid);
    if (sqlite3_step(q) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(q, 0);
        size_t n = (size_t)sqlite3_column_bytes(q, 0);
        id = c->sink->intern(c->sink->ctx, v ? v : "", v ? n : 0);
        if (id >= 0 && idmap_put(&c->strings, sid, id))
            id = -2;
    }
    sqlite3_reset(q);
    return id;
}

/* Rows of the table, for the "skipped: better source" count. */
static int64_t count_rows(sqlite3 *db, const char *table)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", table);
    sqlite3_stmt *q;
    int64_t n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    return n;
}

/* The select item giving a row's DB rankId: NULL for a DB of one rank (the
 * row takes the load's rank), the row's own rankId in a DB tracebook wrote,
 * else the rank RANK_DEVICE_MAP gives its device, or its task's device.
 * Returns the length written. */
static size_t rank_expr(ctx *c, sqlite3 *db, const table_spec *sp, char *out, size_t n, const char *sep)
{
    const char *dev = !strcmp(sp->src, "NPU_INFO") ? "id" : "deviceId";
    if (!c->ranks)
        return (size_t)snprintf(out, n, "%sNULL", sep);
    if (!c->ranks->by_device)
        return (size_t)snprintf(out, n, "%s%s", sep,
                                db_has_column(db, "main", sp->src, "rankId") > 0 ? "\"rankId\"" : "NULL");
    if (db_has_column(db, "main", sp->src, dev) > 0)
        return (size_t)snprintf(out, n,
                                "%s(SELECT min(m.rankId) FROM RANK_DEVICE_MAP m WHERE m.deviceId = \"%s\".\"%s\")", sep,
                                sp->src, dev);
    if (c->task_ranks && db_has_column(db, "main", sp->src, "globalTaskId") > 0)
        return (size_t)snprintf(out, n, "%s(SELECT r FROM temp.tb_task_rank WHERE g = \"%s\".globalTaskId LIMIT 1)",
                                sep, sp->src);
    return (size_t)snprintf(out, n, "%sNULL", sep);
}

/* Adds the source table's columns that no destination column reads
 * (TASK.depth, COMPUTE_TASK_INFO.waitNs, ...) to the source's note, so
 * that what is not copied is said (TB_SOURCE.note, info). */
static void note_dropped_columns(ctx *c, sqlite3 *db, const char *table, char used[][128], int nused)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') ORDER BY cid", table);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return;
    char *note = c->res->note;
    size_t cap = sizeof c->res->note;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(q, 0);
        int read = 0;
        for (int i = 0; col && i < nused && !read; i++)
            read = !strcmp(used[i], col);
        if (!col || read)
            continue;
        size_t n = strlen(note);
        if (n + 1 >= cap)
            break;
        int k = snprintf(note + n, cap - n, "%s%s.%s", n ? ", " : "columns not copied: ", table, col);
        if (k < 0 || (size_t)k >= cap - n) {
            /* cut at the last whole column, and say there is more */
            char *comma = strrchr(note, ',');
            if (comma && (size_t)(comma - note) + 6 < cap)
                snprintf(comma, cap - (size_t)(comma - note), ", ...");
            break;
        }
    }
    sqlite3_finalize(q);
}

/* A table an earlier source of this rank filled: its rows are counted,
 * not read; a row that only describes a task counts with its task, not on
 * its own. */
static void count_skipped(ctx *c, sqlite3 *db, const table_spec *sp)
{
    int64_t n = count_rows(db, sp->src);
    int secondary = sp->dest == TB_DEST_COMPUTE_TASK_INFO || sp->dest == TB_DEST_COMMUNICATION_TASK_INFO ||
                    sp->dest == TB_DEST_MEMCPY_INFO || sp->row == R_COMMUNICATION_SCHEDULE_TASK_INFO ||
                    sp->row == R_TASK_PMU_INFO;
    if (!secondary)
        c->res->dest[TB_DEST_BETTER_SOURCE] += (uint64_t)n;
    c->res->events += (uint64_t)n;
}

/* One group of a shard DB: whether the table holds a row of it. Most hold
 * none, and asking its rankId index is much cheaper than reading the
 * table's columns (0 too when the table has no rankId column). */
static int part_has_rows(const shard_part *pt, sqlite3 *db, const table_spec *sp)
{
    char probe[256];
    if (pt->cluster)
        snprintf(probe, sizeof probe, "SELECT 1 FROM \"%s\" WHERE rankId IS NULL LIMIT 1", sp->src);
    else
        snprintf(probe, sizeof probe, "SELECT 1 FROM \"%s\" WHERE rankId BETWEEN %lld AND %lld LIMIT 1", sp->src,
                 (long long)pt->rank_lo, (long long)pt->rank_hi);
    sqlite3_stmt *q;
    int any = 0;
    if (sqlite3_prepare_v2(db, probe, -1, &q, NULL) == SQLITE_OK) {
        any = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
    }
    return any;
}

/* What a destination column holds, which decides how its value is mapped. */
static int column_kind(ctx *c, const table_spec *sp, const char *name)
{
    if (!strcmp(name, "rankId"))
        return K_RANK;
    if (row_is_string(sp->row, name))
        return K_STRING;
    if (!strcmp(name, "globalTaskId"))
        return K_GTID;
    if (!strcmp(name, "opId"))
        return K_OPID;
    if (c->opt->part && sp->row == R_OVERLAP_ANALYSIS && !strcmp(name, "id"))
        return K_OVERLAP;
    for (const char *const *t = time_cols; *t; t++)
        if (!strcmp(*t, name))
            return K_TIME;
    size_t n = strlen(name);
    return n > 2 && !strcmp(name + n - 2, "Ns") ? K_NS : K_PLAIN;
}

/* The SELECT reading the table in the destination's column order: one item
 * per destination column, NULL where the source has none; kinds: each
 * column's kind. A shard DB's group reads its own rows; another DB notes the
 * source columns not read. */
static void select_sql(ctx *c, sqlite3 *db, const table_spec *sp, char *sql, size_t cap, int *kinds)
{
    const row_table_def *rt = &row_tables[sp->row];
    char used[ROW_MAX_COLS][128]; /* the source columns read */
    int nused = 0;
    size_t o = (size_t)snprintf(sql, cap, "SELECT ");
    char cols[1024];
    snprintf(cols, sizeof cols, "%s", rt->columns);
    char *name = cols;
    for (int i = 0; i < rt->ncols; i++) {
        char *comma = strchr(name, ',');
        if (comma)
            *comma = 0;
        char srcname[128];
        /* a shard DB has tracebook's own schema: every destination column, by its name */
        int present = c->opt->part ? (snprintf(srcname, sizeof srcname, "%.127s", name), 1)
                                   : src_column(db, sp, name, srcname, sizeof srcname);
        if (present && nused < ROW_MAX_COLS)
            snprintf(used[nused++], sizeof used[0], "%s", srcname);
        kinds[i] = column_kind(c, sp, name);
        if (kinds[i] == K_RANK)
            o += rank_expr(c, db, sp, sql + o, cap - o, i ? ", " : "");
        else if (!present)
            o += (size_t)snprintf(sql + o, cap - o, "%sNULL", i ? ", " : "");
        else if (kinds[i] == K_TIME)
            o += (size_t)snprintf(sql + o, cap - o, "%sCAST(\"%s\" AS INTEGER)", i ? ", " : "", srcname);
        else
            o += (size_t)snprintf(sql + o, cap - o, "%s\"%s\"", i ? ", " : "", srcname);
        name = comma ? comma + 1 : name + strlen(name);
    }
    o += (size_t)snprintf(sql + o, cap - o, " FROM \"%s\"", sp->src);
    if (c->opt->part) {
        /* one group of a shard DB: its own rows (the shard indexes rankId;
         * the probe found some, so the table has the column) */
        const shard_part *pt = c->opt->part;
        if (pt->cluster)
            snprintf(sql + o, cap - o, " WHERE rankId IS NULL ORDER BY rowid");
        else
            snprintf(sql + o, cap - o, " WHERE rankId BETWEEN %lld AND %lld ORDER BY rowid", (long long)pt->rank_lo,
                     (long long)pt->rank_hi);
    } else {
        note_dropped_columns(c, db, sp->src, used, nused);
    }
}

/* One source row as destination values: string ids and task/op/overlap ids
 * mapped into the load's, rankIds as rank_expr chose. *bad_time: a time
 * outside the stored range. TB_OK, or the error (c->err set). */
static inline tb_status row_values(ctx *c, const char *src, sqlite3_stmt *q, int ncols, const int *kinds, tb_val *v,
                                   int *bad_time)
{
    *bad_time = 0;
    for (int i = 0; i < ncols; i++) {
        int t = sqlite3_column_type(q, i);
        if ((kinds[i] == K_TIME || kinds[i] == K_NS) && t == SQLITE_INTEGER &&
            !import_time_ok(sqlite3_column_int64(q, i), 0))
            *bad_time = 1;
        if (kinds[i] == K_NS && t == SQLITE_FLOAT && !(fabs(sqlite3_column_double(q, i)) < 0x1p62))
            *bad_time = 1;
        if (kinds[i] == K_RANK) {
            v[i] = VINT(row_rank(c, q, i));
            continue;
        }
        if (t == SQLITE_NULL) {
            v[i] = VNULL;
            continue;
        }
        if (kinds[i] == K_STRING) {
            int64_t nid;
            int64_t sid = sqlite3_column_int64(q, i);
            if (idmap_get(&c->strings, sid, &nid))
                v[i] = VINT(nid);
            else if (c->string_by_id && (nid = earlier_string(c, sid)) >= 0)
                v[i] = VINT(nid);
            else if (c->string_by_id && nid == -2)
                return tb_error_set(c->err, TB_ERR_NOMEM, "cannot intern the strings of %s", c->path);
            else
                v[i] = VNULL;
        } else if (kinds[i] == K_GTID || kinds[i] == K_OPID || (kinds[i] == K_OVERLAP && t == SQLITE_INTEGER)) {
            int64_t x = sqlite3_column_int64(q, i), y;
            int64_t base = kinds[i] == K_GTID ? c->gtid_base : kinds[i] == K_OPID ? c->op_base : c->overlap_base;
            if (__builtin_add_overflow(x, base, &y) || y > ID_LIMIT || y < -ID_LIMIT)
                return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1,
                                   "table %s: %s %lld is out of the range of ids (+-2^62 after renumbering)", src,
                                   sqlite3_column_name(q, i), (long long)x);
            int64_t *mx = kinds[i] == K_GTID ? &c->max_gtid : &c->max_op;
            if (kinds[i] != K_OVERLAP && x > *mx)
                *mx = x;
            v[i] = VINT(y);
        } else if (t == SQLITE_INTEGER) {
            v[i] = VINT(sqlite3_column_int64(q, i));
        } else if (t == SQLITE_FLOAT) {
            v[i] = VREAL(sqlite3_column_double(q, i));
        } else if (t == SQLITE_BLOB) { /* argsValues: packed numbers, kept as bytes */
            const char *s = sqlite3_column_blob(q, i);
            size_t n = (size_t)sqlite3_column_bytes(q, i);
            v[i] = VBLOB(s ? s : "", n); /* an empty BLOB comes as NULL: kept empty, not NULL */
        } else {
            const char *s = (const char *)sqlite3_column_text(q, i);
            size_t n = (size_t)sqlite3_column_bytes(q, i);
            v[i] = VTEXT(s, n);
        }
    }
    return TB_OK;
}

static tb_status import_table(ctx *c, sqlite3 *db, const table_spec *sp)
{
    if (row_set_has(&c->opt->skip_rows, sp->row)) {
        count_skipped(c, db, sp);
        return TB_OK;
    }
    if (c->opt->part && !part_has_rows(c->opt->part, db, sp))
        return TB_OK; /* no rows of the group, or no rankId column */
    int ncols = row_tables[sp->row].ncols;
    int kinds[32];
    char sql[4096];
    select_sql(c, db, sp, sql, sizeof sql, kinds);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read table %s: %s", sp->src,
                           sqlite3_errmsg(db));
    tb_val v[32];
    int rc;
    uint64_t rows = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int bad_time;
        tb_status st = row_values(c, sp->src, q, ncols, kinds, v, &bad_time);
        if (st != TB_OK) {
            sqlite3_finalize(q);
            return st;
        }
        /* a time outside the stored range (+-2^62 ns): skipped and counted, as in a trace */
        if (bad_time) {
            if (c->opt->strict_rows) {
                sqlite3_finalize(q);
                return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1,
                                   "table %s: a time outside +-2^62 ns (about 146 years from 1970)", sp->src);
            }
            c->res->dest[TB_DEST_BAD_TIME]++;
            continue;
        }
        if (c->sink->row(c->sink->ctx, sp->row, v)) {
            sqlite3_finalize(q);
            return row_sink_fail(c->sink, c->path, c->err);
        }
        rows++;
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read table %s: %s", sp->src,
                           sqlite3_errmsg(db));
    if (rows)
        row_set_add(&c->res->rows_filled, sp->row);
    if (sp->dest >= 0)
        c->res->dest[sp->dest] += rows;
    else
        c->res->dest[TB_DEST_OTHER_TABLES] += rows;
    c->res->events += rows;
    return TB_OK;
}

/* The rows of the input's ENUM_* tables go to TB_SOURCE_ENUM as written:
 * this DB's own enums are fixed, and an input's may add ids (older msprof
 * DBs: 25000 pta) or name them otherwise (5500 hccl). */
static tb_status import_enums(ctx *c, sqlite3 *db)
{
    int skip = row_set_has(&c->opt->skip_rows, R_SOURCE_ENUM);
    sqlite3_stmt *t;
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'ENUM_*' ORDER BY name",
                           -1, &t, NULL) != SQLITE_OK)
        return TB_OK;
    tb_status st = TB_OK;
    uint64_t rows = 0;
    while (st == TB_OK && sqlite3_step(t) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(t, 0);
        if (!table || db_has_column(db, "main", table, "id") <= 0 || db_has_column(db, "main", table, "name") <= 0)
            continue;
        if (skip) {
            /* an earlier DB of the rank gave its enums: counted as skipped, as a table is */
            int64_t n = count_rows(db, table);
            c->res->dest[TB_DEST_BETTER_SOURCE] += (uint64_t)n;
            c->res->events += (uint64_t)n;
            continue;
        }
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT id, name FROM \"%s\" ORDER BY rowid", table);
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
            continue;
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(q, 1);
            tb_val v[4] = {VINT(c->opt->rank), VTEXT(table, strlen(table)),
                           sqlite3_column_type(q, 0) == SQLITE_NULL ? VNULL : VINT(sqlite3_column_int64(q, 0)),
                           name ? VTEXT(name, (size_t)sqlite3_column_bytes(q, 1)) : VNULL};
            if (c->sink->row(c->sink->ctx, R_SOURCE_ENUM, v)) {
                st = row_sink_fail(c->sink, c->path, c->err);
                break;
            }
            rows++;
        }
        sqlite3_finalize(q);
    }
    sqlite3_finalize(t);
    if (rows)
        row_set_add(&c->res->rows_filled, R_SOURCE_ENUM);
    c->res->dest[TB_DEST_OTHER_TABLES] += rows;
    c->res->events += rows;
    return st;
}

/* The names of NPU_OP_MEM's types when the input has no ENUM_MEMORY: msprof
 * documents NPU_OP_MEM.type as an id of the DB's STRING_IDS ("allocate",
 * "release"), which a load does not keep, so each type the rows use goes
 * to TB_SOURCE_ENUM as tableName 'NPU_OP_MEM.type' with its STRING_IDS
 * value, and operator_memory can tell allocations from releases. A DB with
 * ENUM_MEMORY names them there (import_enums); a DB tracebook wrote (a
 * shard, an export) keeps its TB_SOURCE_ENUM rows of them. */
static tb_status import_op_mem_types(ctx *c, sqlite3 *db)
{
    if (c->opt->part || row_set_has(&c->opt->skip_rows, R_SOURCE_ENUM) ||
        row_set_has(&c->opt->skip_rows, R_NPU_OP_MEM) || db_has_table(db, "main", "ENUM_MEMORY", 0) > 0 ||
        db_has_table(db, "main", "TB_SOURCE_ENUM", 0) > 0 || db_has_column(db, "main", "NPU_OP_MEM", "type") <= 0)
        return TB_OK;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT m.type, s.value FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = m.type "
                           "WHERE typeof(m.type) = 'integer' ORDER BY m.type",
                           -1, &q, NULL) != SQLITE_OK)
        return TB_OK;
    static const char table[] = "NPU_OP_MEM.type";
    tb_status st = TB_OK;
    int any = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 1);
        tb_val v[4] = {VINT(c->opt->rank), VTEXT(table, sizeof table - 1), VINT(sqlite3_column_int64(q, 0)),
                       name ? VTEXT(name, (size_t)sqlite3_column_bytes(q, 1)) : VNULL};
        if (c->sink->row(c->sink->ctx, R_SOURCE_ENUM, v)) {
            st = row_sink_fail(c->sink, c->path, c->err);
            break;
        }
        any = 1;
    }
    sqlite3_finalize(q);
    if (any)
        row_set_add(&c->res->rows_filled, R_SOURCE_ENUM);
    return st;
}

/* The rows of the DB's own META_DATA (a profile's: torch_npu writes its
 * profiler metadata there, distributed_args and pp_info among them) into
 * TB_PROFILE_META, name and value as written, with the load's rank. A DB
 * tracebook wrote holds its own bookkeeping there (TRACEBOOK_VERSION) and
 * its profile's rows in TB_PROFILE_META, copied as a table of its own; a DB
 * of several ranks does not say whose its rows are, and keeps them out. */
static tb_status import_profile_meta(ctx *c, sqlite3 *db)
{
    if (c->opt->part || c->ranks || row_set_has(&c->opt->skip_rows, R_PROFILE_META) ||
        db_has_table(db, "main", "META_DATA", 0) <= 0 || db_has_table(db, "main", "TB_PROFILE_META", 0) > 0 ||
        db_has_column(db, "main", "META_DATA", "name") <= 0 || db_has_column(db, "main", "META_DATA", "value") <= 0)
        return TB_OK;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT CAST(name AS TEXT), CAST(value AS TEXT) FROM META_DATA WHERE NOT EXISTS "
                           "(SELECT 1 FROM META_DATA WHERE name = 'TRACEBOOK_VERSION') ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read META_DATA: %s", sqlite3_errmsg(db));
    tb_status st = TB_OK;
    uint64_t rows = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        const char *value = (const char *)sqlite3_column_text(q, 1);
        tb_val v[3] = {VINT(c->opt->rank), name ? VTEXT(name, (size_t)sqlite3_column_bytes(q, 0)) : VNULL,
                       value ? VTEXT(value, (size_t)sqlite3_column_bytes(q, 1)) : VNULL};
        if (c->sink->row(c->sink->ctx, R_PROFILE_META, v)) {
            st = row_sink_fail(c->sink, c->path, c->err);
            break;
        }
        rows++;
    }
    sqlite3_finalize(q);
    /* not counted among the rows read: the DB's bookkeeping, as before it was kept */
    if (rows)
        row_set_add(&c->res->rows_filled, R_PROFILE_META);
    return st;
}

/* 1 when the table is one this importer reads or knows. */
static int known_table(const char *name)
{
    if (!strncmp(name, "sqlite_", 7) || !strncmp(name, "ENUM_", 5))
        return 1;
    for (const char *const *k = known_tables; *k; k++)
        if (!strcmp(*k, name))
            return 1;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (!strcmp(specs[i].src, name))
            return 1;
    return 0;
}

/* Warns once, naming every table of the input that holds rows but is
 * neither loaded nor known (a viewer's backup copy, its own bookkeeping):
 * nothing is dropped without a word. Empty tables lose nothing. */
static void warn_unknown_tables(ctx *c, sqlite3 *db)
{
    if (!c->opt->warn)
        return;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &q, NULL) !=
        SQLITE_OK)
        return;
    char list[1024];
    size_t o = 0;
    int n = 0;
    list[0] = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (!name || known_table(name))
            continue;
        int64_t rows = count_rows(db, name);
        if (rows <= 0)
            continue;
        if (o < sizeof list) {
            int k = snprintf(list + o, sizeof list - o, "%s%s (%lld row%s)", n ? ", " : "", name, (long long)rows,
                             rows == 1 ? "" : "s");
            o += k > 0 ? (size_t)k : 0;
        }
        n++;
    }
    sqlite3_finalize(q);
    if (!n)
        return;
    char msg[1400];
    snprintf(msg, sizeof msg, "%s: %s not loaded (not in msprof's DB schema): %s", c->path,
             n == 1 ? "a table" : "tables", list);
    c->opt->warn(c->opt->ctx, msg);
}

/* 1 when column col of q is a time within the stored range: a
 * session span or base time outside it is not taken, as a row's is not. */
static int time_in_range(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) != SQLITE_NULL && import_time_ok(sqlite3_column_int64(q, col), 0);
}

static int span_in_range(sqlite3_stmt *q)
{
    return time_in_range(q, 0) && time_in_range(q, 1);
}

/* Session span and rank of the source, when it says. */
static void source_facts(ctx *c, sqlite3 *db)
{
    sqlite3_stmt *q;
    if (db_has_table(db, "main", "SESSION_TIME_INFO", 0) > 0 &&
        sqlite3_prepare_v2(db, "SELECT min(startTimeNs), max(endTimeNs) FROM SESSION_TIME_INFO", -1, &q, NULL) ==
            SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW && span_in_range(q)) {
            c->res->min_ns = sqlite3_column_int64(q, 0);
            c->res->max_ns = sqlite3_column_int64(q, 1);
            c->res->has_times = 1;
        }
        sqlite3_finalize(q);
        /* tracebook's own DBs keep Kineto's base time here; msprof's baseTimeNs is
         * something else (its times are Unix time already), so it counts only
         * when the times are not */
        if (c->res->has_times && c->res->min_ns < 946684800000000000LL &&
            sqlite3_prepare_v2(db, "SELECT min(baseTimeNs) FROM SESSION_TIME_INFO", -1, &q, NULL) == SQLITE_OK) {
            if (sqlite3_step(q) == SQLITE_ROW && time_in_range(q, 0)) {
                c->res->base_time_ns = sqlite3_column_int64(q, 0);
                c->res->has_base_time = 1;
            }
            sqlite3_finalize(q);
        }
    }
    /* the TASK rows import_table keeps (?1: the stored range's limit), for the span of a DB without a session span */
    if (!c->res->has_times && db_has_table(db, "main", "TASK", 0) > 0 &&
        sqlite3_prepare_v2(db,
                           "SELECT min(startNs), max(endNs) FROM TASK WHERE startNs > -?1 AND startNs < ?1"
                           " AND endNs > -?1 AND endNs < ?1",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, TB_TIME_LIMIT_NS);
        if (sqlite3_step(q) == SQLITE_ROW && span_in_range(q)) {
            c->res->min_ns = sqlite3_column_int64(q, 0);
            c->res->max_ns = sqlite3_column_int64(q, 1);
            c->res->has_times = 1;
        }
        sqlite3_finalize(q);
    }
    if (db_has_table(db, "main", "RANK_DEVICE_MAP", 0) > 0 &&
        sqlite3_prepare_v2(db, "SELECT min(rankId), max(rankId) FROM RANK_DEVICE_MAP", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL &&
            sqlite3_column_int64(q, 0) == sqlite3_column_int64(q, 1))
            c->res->trace_rank = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    if (db_has_table(db, "main", "TASK", 0) > 0 &&
        sqlite3_prepare_v2(db, "SELECT DISTINCT deviceId FROM TASK WHERE deviceId BETWEEN 0 AND 63", -1, &q, NULL) ==
            SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW)
            c->res->devices_seen |= (uint64_t)1 << sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
    }
}

int msprof_db_is_db(const char *path)
{
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == 16 && memcmp(head, "SQLite format 3", 16) == 0;
}

/* ---- ranks ------------------------------------------------------------------ */

void db_ranks_free(db_ranks *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].host);
        free(r->v[i].source);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

static char *dup_col(sqlite3_stmt *q, int col)
{
    const char *t = (const char *)sqlite3_column_text(q, col);
    return t ? strdup(t) : NULL;
}

/* The ranks listed by the query (column 0 the rankId, 1 and 2 the host and
 * source, when it has them). Returns 0, or -1 when out of memory. */
static int list_ranks(sqlite3 *db, const char *sql, db_ranks *out)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return 0;
    int rc = 0, cols = sqlite3_column_count(q);
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        db_rank *nv = realloc(out->v, (out->n + 1) * sizeof *nv);
        if (!nv) {
            rc = -1;
            break;
        }
        out->v = nv;
        db_rank *r = &out->v[out->n++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(q, 0);
        r->host = cols > 1 ? dup_col(q, 1) : NULL;
        r->source = cols > 2 ? dup_col(q, 2) : NULL;
    }
    sqlite3_finalize(q);
    return rc;
}

/* Devices, time span and base time of each rank. A DB tracebook wrote has
 * them per rank; an msprof DB has one session for all its devices. */
static void rank_facts(sqlite3 *db, db_ranks *out)
{
    int own = !out->by_device;
    for (size_t i = 0; i < out->n; i++) {
        db_rank *r = &out->v[i];
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT DISTINCT deviceId FROM RANK_DEVICE_MAP WHERE rankId = ?"
                                   " AND deviceId BETWEEN 0 AND 63", -1, &q, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, r->id);
            while (sqlite3_step(q) == SQLITE_ROW)
                r->devices |= (uint64_t)1 << sqlite3_column_int(q, 0);
            sqlite3_finalize(q);
        }
        if (db_has_table(db, "main", "SESSION_TIME_INFO", 0) <= 0)
            continue;
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT min(startTimeNs), max(endTimeNs), %s FROM SESSION_TIME_INFO%s",
                 db_has_column(db, "main", "SESSION_TIME_INFO", "baseTimeNs") > 0 ? "min(baseTimeNs)" : "NULL",
                 own ? " WHERE rankId = ?" : "");
        if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
            continue;
        if (own)
            sqlite3_bind_int64(q, 1, r->id);
        if (sqlite3_step(q) == SQLITE_ROW && span_in_range(q)) {
            r->min_ns = sqlite3_column_int64(q, 0);
            r->max_ns = sqlite3_column_int64(q, 1);
            r->has_times = 1;
            /* as for a DB of one rank: msprof's baseTimeNs counts only when its times are not Unix time */
            if (time_in_range(q, 2) && (own || r->min_ns < 946684800000000000LL)) {
                r->base_time_ns = sqlite3_column_int64(q, 2);
                r->has_base_time = 1;
            }
        }
        sqlite3_finalize(q);
    }
}

tb_status msprof_db_ranks(const char *path, db_ranks *out, tb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!msprof_db_is_db(path))
        return TB_OK;
    sqlite_input s;
    tb_error ignored;
    if (sqlite_input_open(&s, path, &ignored) != TB_OK)
        return TB_OK; /* the import says why */
    int rc = 0;
    if (db_has_table(s.db, "main", "TB_RANK", 0) > 0) {
        rc = list_ranks(s.db, "SELECT rankId, hostName, source FROM TB_RANK WHERE rankId IS NOT NULL ORDER BY rowid",
                        out);
    } else if (db_has_table(s.db, "main", "RANK_DEVICE_MAP", 0) > 0 &&
               db_has_table(s.db, "main", "STRING_IDS", 0) > 0) {
        out->by_device = 1;
        rc = list_ranks(s.db,
                        db_has_table(s.db, "main", "HOST_INFO", 0) > 0
                            ? "SELECT DISTINCT rankId, (SELECT hostName FROM HOST_INFO LIMIT 1) FROM RANK_DEVICE_MAP"
                              " WHERE rankId IS NOT NULL ORDER BY rankId"
                            : "SELECT DISTINCT rankId FROM RANK_DEVICE_MAP WHERE rankId IS NOT NULL ORDER BY rankId",
                        out);
    }
    if (rc == 0 && out->n >= 2)
        rank_facts(s.db, out);
    sqlite_input_close(&s);
    if (rc != 0) {
        db_ranks_free(out);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    if (out->n < 2)
        db_ranks_free(out); /* one rank: loaded as before */
    return TB_OK;
}

static int by_rank_id(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Prepares the rank of each row: ids sorted for lookup and, in an msprof DB,
 * the rank of each task (through its device) for the tables that describe tasks. */
static tb_status setup_ranks(ctx *c, sqlite3 *db)
{
    if (!(c->keys = malloc(c->ranks->n * sizeof *c->keys)))
        return tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < c->ranks->n; i++)
        c->keys[i] = (rank_key){c->ranks->v[i].id, i};
    qsort(c->keys, c->ranks->n, sizeof *c->keys, by_rank_id);
    if (!c->ranks->by_device || db_has_table(db, "main", "TASK", 0) <= 0 ||
        db_has_column(db, "main", "TASK", "deviceId") <= 0 || db_has_column(db, "main", "TASK", "globalTaskId") <= 0)
        return TB_OK;
    char *msg = NULL;
    if (sqlite3_exec(db,
                     "CREATE TEMP TABLE tb_task_rank AS SELECT globalTaskId AS g,"
                     " (SELECT min(m.rankId) FROM RANK_DEVICE_MAP m WHERE m.deviceId = t.deviceId) AS r FROM TASK t;"
                     "CREATE INDEX temp.tb_task_rank_g ON tb_task_rank(g);",
                     NULL, NULL, &msg) != SQLITE_OK) {
        tb_status st = tb_error_at(c->err, TB_ERR_DB, c->path, 0, 0, -1, "cannot map tasks to ranks: %s",
                                   msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return st;
    }
    c->task_ranks = 1;
    return TB_OK;
}

/* The single value of q (the smallest id of a table), 0 when it has none or is not there. */
static int64_t min_id(sqlite3 *db, const char *q)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v < 0 ? 0 : v;
}

/* One group of a shard DB: its ids move by as much as the group's first
 * ids differ from the load's counters, and the counters advance by what the
 * shard's load drew for it, unused ids included, so every id comes out as
 * in a load of all the raw inputs at once. */
static tb_status import_part(ctx *c, sqlite3 *db, import_ids *ids, const shard_part *pt)
{
    const int64_t f[] = {pt->task_first, pt->op_first, pt->overlap_first, pt->task_used, pt->op_used, pt->overlap_used};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i] < 0 || f[i] > ID_LIMIT)
            return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "TB_SHARDS: an id count %lld out of range",
                               (long long)f[i]);
    c->gtid_base = ids->next_task - pt->task_first;
    c->op_base = ids->next_op - pt->op_first;
    c->overlap_base = ids->next_overlap - pt->overlap_first;
    if (sqlite3_prepare_v2(db, "SELECT value FROM STRING_IDS WHERE id = ?", -1, &c->string_by_id, NULL) != SQLITE_OK)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "cannot read STRING_IDS: %s", sqlite3_errmsg(db));
    tb_status st = import_strings(c, db);
    if (st != TB_OK)
        return st;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        /* the shard lists the tables that hold the group's rows: no query for the others */
        char key[80];
        snprintf(key, sizeof key, ",%s,", specs[i].src);
        if (pt->tables ? !strstr(pt->tables, key) : db_has_table(db, "main", specs[i].src, 0) <= 0)
            continue;
        if ((st = import_table(c, db, &specs[i])) != TB_OK)
            return st;
    }
    if (__builtin_add_overflow(ids->next_task, pt->task_used, &ids->next_task) ||
        __builtin_add_overflow(ids->next_op, pt->op_used, &ids->next_op) ||
        __builtin_add_overflow(ids->next_overlap, pt->overlap_used, &ids->next_overlap) || ids->next_task > ID_LIMIT ||
        ids->next_op > ID_LIMIT || ids->next_overlap > ID_LIMIT)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1, "TB_SHARDS: its id counts take the load past 2^62");
    snprintf(c->res->kind, sizeof c->res->kind, "shard db");
    return TB_OK;
}

/* Rows of several ranks in a DB that does not list them (or is not the
 * first input of its rank directory) load as one rank: a warning says so. */
static void warn_mixed_ranks(ctx *c, sqlite3 *db)
{
    sqlite3_stmt *q;
    if (c->ranks || db_has_column(db, "main", "TASK", "rankId") <= 0 ||
        sqlite3_prepare_v2(db, "SELECT count(DISTINCT rankId) FROM TASK", -1, &q, NULL) != SQLITE_OK)
        return;
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 1 && c->opt->warn) {
        char msg[1400];
        snprintf(msg, sizeof msg,
                 "%s holds rows of %lld ranks: loaded as one rank (a DB keeps its ranks when it lists them in"
                 " TB_RANK or RANK_DEVICE_MAP and is the first input of its rank)",
                 c->path, (long long)sqlite3_column_int64(q, 0));
        c->opt->warn(c->opt->ctx, msg);
    }
    sqlite3_finalize(q);
}

/* A whole DB (not a shard's group): every table it has, its enums, the
 * tables not read said, then the load's counters advanced. */
static tb_status import_whole(ctx *c, sqlite3 *db, import_ids *ids)
{
    /* the DB's ids continue the load's counters from its own smallest id: a
     * DB tracebook wrote (ids from 1) keeps them when it loads first, so
     * merged DBs hold the ids a load of all their raw inputs at once gives */
    int64_t min_task = min_id(db, "SELECT min(globalTaskId) FROM TASK");
    int64_t min_op = min_id(db, "SELECT min(opId) FROM COMMUNICATION_OP");
    /* a DB tracebook wrote says how many ids its load drew (ids from 1) */
    int64_t used_task = -1, used_op = -1;
    if (db_has_table(db, "main", "META_DATA", 0) > 0) {
        used_task = min_id(db, "SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'TRACEBOOK_TASK_IDS_USED'");
        used_op = min_id(db, "SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'TRACEBOOK_OP_IDS_USED'");
        if (used_task > 0 || used_op > 0)
            min_task = min_op = 1;
        else
            used_task = used_op = -1;
    }
    c->gtid_base -= min_task;
    c->op_base -= min_op;
    tb_status st = import_strings(c, db);
    if (st != TB_OK)
        return st;
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        if (db_has_table(db, "main", specs[i].src, 0) <= 0)
            continue;
        if ((st = import_table(c, db, &specs[i])) != TB_OK)
            return st;
    }
    if ((st = import_enums(c, db)) != TB_OK || (st = import_op_mem_types(c, db)) != TB_OK ||
        (st = import_profile_meta(c, db)) != TB_OK)
        return st;
    warn_unknown_tables(c, db);
    warn_mixed_ranks(c, db);
    /* every id was checked against ID_LIMIT, so the spans fit; what a DB
     * says it used is checked here */
    int64_t span_task = used_task >= 0 ? used_task : c->max_gtid - min_task + 1;
    int64_t span_op = used_op >= 0 ? used_op : c->max_op - min_op + 1;
    if (span_task > ID_LIMIT || span_op > ID_LIMIT || __builtin_add_overflow(ids->next_task, span_task, &ids->next_task) ||
        __builtin_add_overflow(ids->next_op, span_op, &ids->next_op) || ids->next_task > ID_LIMIT ||
        ids->next_op > ID_LIMIT)
        return tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1,
                           "its task or operator ids (%lld, %lld in use) take the load past 2^62 ids",
                           (long long)span_task, (long long)span_op);
    source_facts(c, db);
    return TB_OK;
}

tb_status msprof_db_open_input(const char *path, const char *kind, import_result *res, sqlite_input *s,
                               tb_error *err)
{
    memset(res, 0, sizeof *res);
    res->trace_rank = -1;
    res->stop_offset = -1;
    snprintf(res->kind, sizeof res->kind, "%s", kind);
    if (!msprof_db_is_db(path))
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "not an SQLite DB");
    return sqlite_input_open(s, path, err);
}

tb_status msprof_db_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                           const db_ranks *ranks, import_result *res, tb_error *err)
{
    sqlite_input s;
    tb_status st = msprof_db_open_input(path, "msprof db", res, &s, err);
    if (st != TB_OK)
        return st;
    ctx c = {.sink = sink, .opt = opt, .res = res, .err = err, .path = path,
             .gtid_base = ids->next_task, .op_base = ids->next_op,
             .ranks = ranks && ranks->n >= 2 ? ranks : NULL};
    if (db_has_table(s.db, "main", "STRING_IDS", 0) <= 0)
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "not an msprof-compatible DB (no STRING_IDS table)");
    else if (!c.ranks || (st = setup_ranks(&c, s.db)) == TB_OK)
        st = opt->part ? import_part(&c, s.db, ids, opt->part) : import_whole(&c, s.db, ids);
    sqlite3_finalize(c.string_by_id);
    free(c.keys);
    idmap_free(&c.strings);
    sqlite_input_close(&s);
    return st;
}
