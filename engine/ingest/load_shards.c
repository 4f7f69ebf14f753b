/* SPDX-License-Identifier: MIT */
/*
 * load_shards.c - scale-out: a load of part of the ranks, and the merge of
 * such parts back into the DB of all the inputs (docs/scale-out.md).
 *
 * A shard (`export db --shard I/N`, or one MPI process) finds every input,
 * groups them into ranks exactly as a load of everything does, and then
 * keeps the groups of its part: groups sorted by the size of their files,
 * largest first, each given to the least loaded part. It loads them with
 * their global rank numbers and TB_SOURCE ids, and records per group the
 * ids the load drew for it (first and how many, unused ones included) and
 * how far STRING_IDS had grown when it was in (TB_SHARD_GROUP), what each
 * rank names itself (TB_SHARD_RANK) and the shard's own figures (TB_SHARD).
 * Whether the ranks' own ids replace the numbers in input order is decided
 * over all ranks, so a shard leaves that to the merge.
 *
 * The merge takes shard DBs alone: it checks they are the N parts of one
 * load (same inputs, same N, each index once), then imports each group on
 * its own, in the order of the load of everything, continuing the load's
 * counters from the group's recorded first ids and interning the strings up
 * to its recorded end. Every id, string id and row order then comes out as
 * in a single load of all the raw inputs; the bookkeeping tables (TB_SOURCE,
 * TB_RANK, SESSION_TIME_INFO, ...) are the shards' own, put back in order.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/sqlite_input.h"
#include "ingest/load_int.h"
#include "tracebook/db.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

/* ---- a shard ---------------------------------------------------------------- */

typedef struct sized {
    int64_t bytes;
    size_t index;
} sized;

static int largest_first(const void *a, const void *b)
{
    const sized *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

tb_status load_shards_select(const tb_load_options *opt, src_info *src, size_t *nsrc, unit *units, size_t *nunits,
                             size_t nranks, shard_run *sr, tb_error *err)
{
    unsigned count = opt->shard_count, me = opt->shard_index;
    if (count == 0 || me >= count)
        return tb_error_set(err, TB_ERR_USAGE, "shard %u of %u: the index must be below the count", me, count);
    size_t n = *nunits;
    sized *order = malloc((n ? n : 1) * sizeof *order);
    int64_t *load = calloc(count, sizeof *load);
    size_t *taken = calloc(count, sizeof *taken);
    unsigned *part = malloc((n ? n : 1) * sizeof *part);
    if (!order || !load || !taken || !part) {
        free(order);
        free(load);
        free(taken);
        free(part);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t u = 0; u < n; u++) {
        unit *g = &units[u];
        g->index = u;
        g->bytes = 0;
        for (size_t i = g->first; i < g->first + g->n; i++) {
            struct stat sb;
            if (stat(src[i].path, &sb) == 0)
                g->bytes += (int64_t)sb.st_size;
        }
        /* the rows of the whole cluster (cluster_*.json) have no rank: one part holds them */
        if (g->cluster)
            part[u] = 0;
        else
            order[m++] = (sized){g->bytes, u};
    }
    qsort(order, m, sizeof *order, largest_first);
    for (size_t k = 0; k < m; k++) {
        unsigned best = 0;
        for (unsigned p = 1; p < count; p++)
            if (load[p] < load[best] || (load[p] == load[best] && taken[p] < taken[best]))
                best = p;
        part[order[k].index] = best;
        load[best] += order[k].bytes;
        taken[best]++;
    }
    sr->nunits_all = n;
    sr->nranks_all = nranks;
    sr->bytes = 0;
    /* keep this part's groups and their files, in their order */
    size_t kept = 0, at = 0;
    for (size_t u = 0; u < n; u++) {
        unit g = units[u];
        if (part[u] != me) {
            for (size_t i = g.first; i < g.first + g.n; i++) {
                free(src[i].path);
                src[i].path = NULL;
            }
            db_ranks_free(&units[u].dbr);
            continue;
        }
        memmove(&src[at], &src[g.first], g.n * sizeof *src);
        g.first = at;
        at += g.n;
        sr->bytes += g.bytes;
        units[kept++] = g;
    }
    *nunits = kept;
    *nsrc = at;
    free(order);
    free(load);
    free(taken);
    free(part);
    return TB_OK;
}

/* Appends "," and the number to a growing text. Returns 0, or -1 when out of memory. */
static int append_num(char **buf, size_t *len, size_t *cap, int64_t v)
{
    char num[32];
    int k = snprintf(num, sizeof num, "%s%lld", *len > 1 ? "," : "", (long long)v);
    if (*len + (size_t)k + 2 > *cap) {
        size_t nc = *cap * 2 + (size_t)k + 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, num, (size_t)k + 1);
    *len += (size_t)k;
    return 0;
}

static const char shard_schema[] =
    "CREATE TABLE TB_SHARD (shardIndex INTEGER, shardCount INTEGER, ranks TEXT, inputBytes INTEGER,"
    " wallSeconds REAL, peakRssBytes INTEGER, host TEXT, inputs TEXT, groupsAll INTEGER, ranksAll INTEGER,"
    " sourcesAll INTEGER);"
    "CREATE TABLE TB_SHARD_GROUP (groupIndex INTEGER, rankLo INTEGER, rankHi INTEGER, cluster INTEGER,"
    " bytes INTEGER, taskFirst INTEGER, taskUsed INTEGER, opFirst INTEGER, opUsed INTEGER,"
    " overlapFirst INTEGER, overlapUsed INTEGER, stringsEnd INTEGER, sourceId INTEGER);"
    "CREATE TABLE TB_SHARD_RANK (rankId INTEGER, claim INTEGER);"
    "CREATE TABLE TB_SHARD_TABLE (rankId INTEGER, tableName TEXT);";

/* TB_SHARD_GROUP, per group the ids its load drew and how far STRING_IDS had
 * grown, and TB_SHARD_RANK, what each rank names; *ranksp: the shard's rank
 * numbers as "[0,1]" (returns new, free with free()). */
static tb_status write_groups(dbw *w, const src_info *src, const unit *units, size_t nunits, const int64_t *claim,
                              char **ranksp, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    tb_status st = TB_OK;
    sqlite3_stmt *sg = NULL, *srk = NULL;
    size_t rlen = 1, rcap = 64;
    char *ranks = malloc(rcap);
    if (!ranks)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    ranks[0] = '[';
    ranks[1] = 0;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SHARD_GROUP VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &sg, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_SHARD_RANK VALUES(?,?)", -1, &srk, NULL))
        goto dberr;
    for (size_t u = 0; u < nunits; u++) {
        const unit *g = &units[u];
        int64_t lo = g->cluster ? -1 : g->rank, hi = g->cluster ? -1 : g->rank + (int64_t)g->nranks - 1;
        int64_t v[] = {(int64_t)g->index, lo, hi, g->cluster, g->bytes,
                       g->id_start.next_task, g->id_end.next_task - g->id_start.next_task,
                       g->id_start.next_op, g->id_end.next_op - g->id_start.next_op,
                       g->id_start.next_overlap, g->id_end.next_overlap - g->id_start.next_overlap,
                       g->strings_end, g->n ? src[g->first].gid : 0};
        for (int k = 0; k < 13; k++)
            sqlite3_bind_int64(sg, k + 1, v[k]);
        if (g->cluster) {
            sqlite3_bind_null(sg, 2);
            sqlite3_bind_null(sg, 3);
        }
        if (sqlite3_step(sg) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(sg);
        for (int64_t r = lo; !g->cluster && r <= hi; r++) {
            sqlite3_bind_int64(srk, 1, r);
            sqlite3_bind_int64(srk, 2, claim[r]);
            if (sqlite3_step(srk) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(srk);
            if (append_num(&ranks, &rlen, &rcap, r)) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                goto done;
            }
        }
    }
    ranks[rlen++] = ']';
    ranks[rlen] = 0;
    goto done;
dberr:
    st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
done:
    sqlite3_finalize(sg);
    sqlite3_finalize(srk);
    if (st == TB_OK)
        *ranksp = ranks;
    else
        free(ranks);
    return st;
}

/* The inputs as given, one a line: the merge refuses shards of different
 * loads. Returns new (free with free()), or NULL when out of memory. */
static char *joined_inputs(const tb_load_options *opt)
{
    size_t ilen = 1;
    for (size_t i = 0; i < opt->n_inputs; i++)
        ilen += strlen(opt->inputs[i]) + 1;
    char *inputs = malloc(ilen);
    if (!inputs)
        return NULL;
    inputs[0] = 0;
    for (size_t i = 0, o = 0; i < opt->n_inputs; i++)
        o += (size_t)snprintf(inputs + o, ilen - o, "%s%s", i ? "\n" : "", opt->inputs[i]);
    return inputs;
}

/* The shard's own row of TB_SHARD: its part, ranks, input bytes, wall time
 * so far, peak RSS, host, inputs and the sizes of the whole load. */
static tb_status write_shard_row(dbw *w, const tb_load_options *opt, const char *ranks, const char *inputs,
                                 const shard_run *sr, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *ssh;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SHARD VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1, &ssh, NULL))
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    struct rusage ru;
    int64_t rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_maxrss * 1024 : 0;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = 0;
    sqlite3_bind_int64(ssh, 1, opt->shard_index);
    sqlite3_bind_int64(ssh, 2, opt->shard_count);
    sqlite3_bind_text(ssh, 3, ranks, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ssh, 4, sr->bytes);
    sqlite3_bind_double(ssh, 5, dbw_now() - sr->t_start);
    sqlite3_bind_int64(ssh, 6, rss);
    sqlite3_bind_text(ssh, 7, host, -1, SQLITE_STATIC);
    sqlite3_bind_text(ssh, 8, inputs, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ssh, 9, (int64_t)sr->nunits_all);
    sqlite3_bind_int64(ssh, 10, (int64_t)sr->nranks_all);
    sqlite3_bind_int64(ssh, 11, (int64_t)sr->nsrc_all);
    tb_status st = TB_OK;
    if (sqlite3_step(ssh) != SQLITE_DONE)
        st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    sqlite3_finalize(ssh);
    return st;
}

/* The rankId index of every table that has one, which the merge reads each
 * group through, and TB_SHARD_TABLE: which of those tables hold rows of each
 * rank (NULL: the cluster-level rows), so that the merge asks only those.
 * Every such table, however many the schema has: a table left out here is
 * a table whose rows the merge never reads. */
static tb_status index_rank_tables(dbw *w, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                           " WHERE m.type = 'table' AND c.name = 'rankId' AND m.name NOT GLOB 'TB_SHARD*'",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    sqlite3_str *sql = sqlite3_str_new(db);
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(q, 0);
        sqlite3_str_appendf(sql, "CREATE INDEX \"TB_SHARD_%w_rank\" ON \"%w\"(rankId);", t, t);
        sqlite3_str_appendf(sql, "INSERT INTO TB_SHARD_TABLE SELECT DISTINCT rankId, %Q FROM \"%w\";", t, t);
    }
    sqlite3_finalize(q);
    int bad = sqlite3_str_errcode(sql);
    char *text = sqlite3_str_finish(sql);
    tb_status st = bad || !text ? tb_error_set(err, TB_ERR_NOMEM, "out of memory") : dbw_exec(w, text, err);
    sqlite3_free(text);
    return st;
}

tb_status load_shards_write(dbw *w, const tb_load_options *opt, const src_info *src, const unit *units, size_t nunits,
                            const int64_t *claim, const shard_run *sr, tb_error *err)
{
    char *ranks = NULL, *inputs = NULL;
    tb_status st = dbw_exec(w, shard_schema, err);
    if (st == TB_OK)
        st = write_groups(w, src, units, nunits, claim, &ranks, err);
    if (st == TB_OK && !(inputs = joined_inputs(opt)))
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (st == TB_OK)
        st = write_shard_row(w, opt, ranks, inputs, sr, err);
    if (st == TB_OK)
        st = index_rank_tables(w, err);
    free(ranks);
    free(inputs);
    return st;
}

/* ---- the merge ---------------------------------------------------------------- */

int load_shards_all(const src_info *src, size_t nsrc)
{
    if (nsrc == 0)
        return 0;
    for (size_t i = 0; i < nsrc; i++)
        if (src[i].kind != IN_MSPROF_DB || !tb_db_is_shard(src[i].path))
            return 0;
    return 1;
}

void load_shards_plan_free(shard_plan *plan)
{
    for (unsigned i = 0; plan->shards && i < plan->count; i++)
        free(plan->shards[i]);
    free(plan->shards);
    for (size_t k = 0; plan->parts && k < plan->nparts; k++) {
        free((char *)plan->parts[k].tables);
        free((char *)plan->parts[k].first);
    }
    free(plan->parts);
    free(plan->claim);
    free(plan->missing);
    free(plan->inputs);
    memset(plan, 0, sizeof *plan);
}

/* The most ranks a shard DB may say its load has. */
#define SHARD_MAX_RANKS 1000000

/* What a shard DB says about itself. */
typedef struct shard_head {
    int64_t index, count, groups, ranks, sources;
    char *inputs;
} shard_head;

static tb_status read_head(sqlite3 *db, const char *path, shard_head *h, tb_error *err)
{
    sqlite3_stmt *q;
    memset(h, 0, sizeof *h);
    if (sqlite3_prepare_v2(db, "SELECT shardIndex, shardCount, groupsAll, ranksAll, sourcesAll, inputs FROM TB_SHARD",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "not a shard DB (TB_SHARD): %s", sqlite3_errmsg(db));
    if (sqlite3_step(q) != SQLITE_ROW) {
        sqlite3_finalize(q);
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "a shard DB without its TB_SHARD row");
    }
    h->index = sqlite3_column_int64(q, 0);
    h->count = sqlite3_column_int64(q, 1);
    h->groups = sqlite3_column_int64(q, 2);
    h->ranks = sqlite3_column_int64(q, 3);
    h->sources = sqlite3_column_int64(q, 4);
    const char *in = (const char *)sqlite3_column_text(q, 5);
    h->inputs = strdup(in ? in : "");
    sqlite3_finalize(q);
    if (!h->inputs)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (h->count < 1 || h->count > 1000000 || h->index < 0 || h->index >= h->count)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "a shard DB that says it is shard %lld of %lld",
                           (long long)h->index, (long long)h->count);
    /* the merge holds an entry per rank of the load: a count no load has
     * would ask for more memory than there is (or wrap its size) */
    if (h->ranks < 0 || h->ranks > SHARD_MAX_RANKS)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1,
                           "TB_SHARD.ranksAll %lld is out of range (0 to %d ranks)", (long long)h->ranks,
                           SHARD_MAX_RANKS);
    return TB_OK;
}

static int by_group(const void *a, const void *b)
{
    const shard_part *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Reads the groups and the rank claims of one shard into the plan. */
static tb_status read_groups(sqlite3 *db, const char *path, shard_plan *plan, size_t *cap, int64_t *claims,
                             int64_t nranks_all, tb_error *err)
{
    sqlite3_stmt *q;
    size_t first = plan->nparts;
    if (sqlite3_prepare_v2(db,
                           "SELECT groupIndex, rankLo, rankHi, cluster, taskFirst, taskUsed, opFirst, opUsed,"
                           " overlapFirst, overlapUsed, stringsEnd, sourceId,"
                           " (SELECT path FROM TB_SOURCE s WHERE s.id = g.sourceId)"
                           " FROM TB_SHARD_GROUP g ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read TB_SHARD_GROUP: %s", sqlite3_errmsg(db));
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (plan->nparts == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            shard_part *np = realloc(plan->parts, nc * sizeof *np);
            if (!np) {
                sqlite3_finalize(q);
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
            plan->parts = np;
            *cap = nc;
        }
        shard_part *p = &plan->parts[plan->nparts++];
        memset(p, 0, sizeof *p);
        p->path = path;
        p->index = (size_t)sqlite3_column_int64(q, 0);
        p->cluster = sqlite3_column_int(q, 3);
        p->rank_lo = p->cluster ? -1 : sqlite3_column_int64(q, 1);
        p->rank_hi = p->cluster ? -1 : sqlite3_column_int64(q, 2);
        p->task_first = sqlite3_column_int64(q, 4);
        p->task_used = sqlite3_column_int64(q, 5);
        p->op_first = sqlite3_column_int64(q, 6);
        p->op_used = sqlite3_column_int64(q, 7);
        p->overlap_first = sqlite3_column_int64(q, 8);
        p->overlap_used = sqlite3_column_int64(q, 9);
        p->strings_end = sqlite3_column_int64(q, 10);
        p->gid = sqlite3_column_int64(q, 11);
        const char *first_path = (const char *)sqlite3_column_text(q, 12);
        if (first_path && !(p->first = strdup(first_path))) {
            sqlite3_finalize(q);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        if (!p->cluster && (p->rank_lo < 0 || p->rank_hi < p->rank_lo || p->rank_hi >= nranks_all)) {
            sqlite3_finalize(q);
            return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "TB_SHARD_GROUP: ranks %lld-%lld out of range",
                               (long long)p->rank_lo, (long long)p->rank_hi);
        }
    }
    sqlite3_finalize(q);
    /* the tables that hold each group's rows, as ",T1,T2," (owned by the plan) */
    if (sqlite3_prepare_v2(db,
                           "SELECT ',' || group_concat(DISTINCT tableName) || ',' FROM TB_SHARD_TABLE"
                           " WHERE (?1 = 1 AND rankId IS NULL) OR rankId BETWEEN ?2 AND ?3",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read TB_SHARD_TABLE: %s", sqlite3_errmsg(db));
    for (size_t k = first; k < plan->nparts; k++) {
        shard_part *p = &plan->parts[k];
        sqlite3_bind_int(q, 1, p->cluster);
        sqlite3_bind_int64(q, 2, p->cluster ? 1 : p->rank_lo);
        sqlite3_bind_int64(q, 3, p->cluster ? 0 : p->rank_hi);
        const char *t = sqlite3_step(q) == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : NULL;
        if (!(p->tables = strdup(t ? t : ","))) {
            sqlite3_finalize(q);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    if (sqlite3_prepare_v2(db, "SELECT rankId, claim FROM TB_SHARD_RANK", -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read TB_SHARD_RANK: %s", sqlite3_errmsg(db));
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t r = sqlite3_column_int64(q, 0), claim = sqlite3_column_int64(q, 1);
        /* a shard writes -1 (the rank names none) or an id a rank can have */
        if (claim < -1 || claim > INT_MAX) {
            sqlite3_finalize(q);
            return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1,
                               "TB_SHARD_RANK.claim %lld (rank %lld) is out of range (-1 to %d)", (long long)claim,
                               (long long)r, INT_MAX);
        }
        if (r >= 0 && r < nranks_all)
            claims[r] = claim;
    }
    sqlite3_finalize(q);
    return TB_OK;
}

/* Reads the head and the groups of every shard DB into the plan: each must
 * be a part of the load the first is (same inputs and counts), each index
 * once. *first: the first's head; *claimsp: per rank of the load what it
 * names (-2: in no shard given; returns new, free with free()). */
static tb_status read_shards(const src_info *src, size_t nsrc, shard_plan *plan, shard_head *first,
                             int64_t **claimsp, tb_error *err)
{
    tb_status st = TB_OK;
    size_t cap = 0;
    for (size_t i = 0; i < nsrc && st == TB_OK; i++) {
        sqlite_input in = {0};
        shard_head h = {0};
        if ((st = sqlite_input_open(&in, src[i].path, err)) != TB_OK)
            break;
        st = read_head(in.db, src[i].path, &h, err);
        if (st == TB_OK && i == 0) {
            *first = h;
            h.inputs = NULL;
            plan->count = (unsigned)first->count;
            if (!(plan->shards = calloc(plan->count, sizeof *plan->shards)) ||
                !(*claimsp = malloc((first->ranks ? (size_t)first->ranks : 1) * sizeof **claimsp))) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            } else {
                for (int64_t r = 0; r < first->ranks; r++)
                    (*claimsp)[r] = -2; /* not in any shard given */
            }
        } else if (st == TB_OK && (h.count != first->count || h.groups != first->groups ||
                                   h.ranks != first->ranks || strcmp(h.inputs, first->inputs) != 0)) {
            st = tb_error_at(err, TB_ERR_USAGE, src[i].path, 0, 0, -1,
                             "shard %lld of %lld is a part of another load than '%s' (other inputs or shard count)",
                             (long long)h.index, (long long)h.count, src[0].path);
        } else if (st == TB_OK && plan->shards[h.index]) {
            st = tb_error_at(err, TB_ERR_USAGE, src[i].path, 0, 0, -1, "shard %lld of %lld given twice: '%s' too",
                             (long long)h.index, (long long)h.count, plan->shards[h.index]);
        }
        if (st == TB_OK && !(plan->shards[h.index] = strdup(src[i].path)))
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        if (st == TB_OK)
            st = read_groups(in.db, plan->shards[h.index], plan, &cap, *claimsp, first->ranks, err);
        free(h.inputs);
        sqlite_input_close(&in);
    }
    return st;
}

/* Every part of the load must be given: a missing one is an error naming it
 * (path0: the first shard, whose folder the message names), or with
 * --keep-going recorded in plan->missing and warned of. *nmissp: how many. */
static tb_status check_missing(const tb_load_options *opt, const char *path0, shard_plan *plan, warn_log *wl,
                               size_t *nmissp, tb_error *err)
{
    size_t nmiss = 0, mlen = 0;
    for (unsigned k = 0; k < plan->count; k++)
        if (!plan->shards[k])
            nmiss++;
    *nmissp = nmiss;
    if (!nmiss)
        return TB_OK;
    char list[512] = "";
    for (unsigned k = 0; k < plan->count && mlen < sizeof list - 16; k++)
        if (!plan->shards[k])
            mlen += (size_t)snprintf(list + mlen, sizeof list - mlen, "%s%u", mlen ? ", " : "", k);
    if (!opt->keep_going) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path0);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(dir, sizeof dir, ".");
        char name[sizeof list + 32];
        if (nmiss == 1)
            snprintf(name, sizeof name, "shard_%s_of_%u.db", list, plan->count);
        else
            snprintf(name, sizeof name, "shard_<I>_of_%u.db", plan->count);
        return tb_error_at(err, TB_ERR_NOTFOUND, dir, 0, 0, -1,
                           "%s %s of %u missing (%s): the merge needs every part, or --keep-going to leave %s out",
                           nmiss == 1 ? "shard" : "shards", list, plan->count, name,
                           nmiss == 1 ? "its ranks" : "their ranks");
    }
    if (!(plan->missing = strdup(list)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    load_warnf(wl, "%s %s of %u missing: %s left out (--keep-going)", nmiss == 1 ? "shard" : "shards", list,
               plan->count, nmiss == 1 ? "its ranks are" : "their ranks are");
    return TB_OK;
}

/* The parts in the load's group order; a group's own strings start where
 * the previous group of its shard's end. A group in two shards is an error. */
static tb_status order_parts(shard_plan *plan, tb_error *err)
{
    /* the parts are still in each shard's order here */
    for (size_t k = 0; k < plan->nparts; k++)
        plan->parts[k].strings_start =
            k > 0 && plan->parts[k - 1].path == plan->parts[k].path ? plan->parts[k - 1].strings_end : 1;
    qsort(plan->parts, plan->nparts, sizeof *plan->parts, by_group);
    for (size_t k = 1; k < plan->nparts; k++)
        if (plan->parts[k].index == plan->parts[k - 1].index)
            return tb_error_at(err, TB_ERR_PARSE, plan->parts[k].path, 0, 0, -1, "group %zu is also in '%s'",
                               plan->parts[k].index, plan->parts[k - 1].path);
    return TB_OK;
}

/* Whether the ranks' own ids replace the numbers in input order: only when
 * every rank of the load is there and names one and no two the same, as in
 * a single load, which also warns, once, about the first two that name the
 * same. */
static int ranks_named(const shard_plan *plan, const int64_t *claims, int64_t nranks, int all_there, warn_log *wl)
{
    int named = all_there, clash = 0;
    for (int64_t r = 0; r < nranks; r++) {
        if (claims[r] < 0)
            named = 0;
        for (int64_t q = 0; q < r && !clash; q++) {
            if (claims[r] < 0 || claims[q] != claims[r])
                continue;
            clash = 1;
            named = 0;
            const shard_part *pq = NULL, *pr = NULL;
            for (size_t k = 0; k < plan->nparts; k++) {
                const shard_part *p = &plan->parts[k];
                if (!p->cluster && q >= p->rank_lo && q <= p->rank_hi)
                    pq = p;
                if (!p->cluster && r >= p->rank_lo && r <= p->rank_hi)
                    pr = p;
            }
            if (pq && pr && pq->first && pr->first) {
                char msg[2048];
                snprintf(msg, sizeof msg, "%s and %s both name rank %lld: ranks are numbered in input order",
                         pq->first, pr->first, (long long)claims[r]);
                load_warn_src(wl, msg, pr->gid);
            }
        }
    }
    return named;
}

/* One source and one group per part, in the plan's order, and plan->claim
 * and plan->nranks: each rank's id in the merged DB (its own when named,
 * else its number in input order). *nsp and *unitsp: returns new (free with
 * free(), and each source's path), both NULL on failure. */
static tb_status part_units(shard_plan *plan, const int64_t *claims, int named, src_info **nsp, unit **unitsp,
                            tb_error *err)
{
    size_t total = 0;
    for (size_t k = 0; k < plan->nparts; k++)
        if (!plan->parts[k].cluster)
            total += (size_t)(plan->parts[k].rank_hi - plan->parts[k].rank_lo + 1);
    src_info *ns = calloc(plan->nparts ? plan->nparts : 1, sizeof *ns);
    unit *units = ns ? calloc(plan->nparts ? plan->nparts : 1, sizeof *units) : NULL;
    if (!units || !(plan->claim = malloc((total ? total : 1) * sizeof *plan->claim)))
        goto nomem;
    size_t r = 0;
    for (size_t k = 0; k < plan->nparts; k++) {
        shard_part *p = &plan->parts[k];
        if (!(ns[k].path = strdup(p->path)))
            goto nomem;
        ns[k].kind = IN_MSPROF_DB;
        ns[k].group = k;
        ns[k].cluster = p->cluster;
        ns[k].hint = -1;
        ns[k].gid = p->gid;
        ns[k].part = p;
        unit *g = &units[k];
        g->first = k;
        g->n = 1;
        g->cluster = p->cluster;
        g->index = p->index;
        g->nranks = p->cluster ? 0 : (size_t)(p->rank_hi - p->rank_lo + 1);
        g->rank = p->cluster ? TB_CLUSTER_RANK : (int)r;
        ns[k].rank = g->rank;
        for (int64_t j = p->rank_lo; !p->cluster && j <= p->rank_hi; j++)
            plan->claim[r++] = named ? claims[j] : j;
    }
    plan->nranks = r;
    *nsp = ns;
    *unitsp = units;
    return TB_OK;
nomem:
    if (ns)
        for (size_t k = 0; k < plan->nparts; k++)
            free(ns[k].path);
    free(ns);
    free(units);
    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
}

tb_status load_shards_plan(const tb_load_options *opt, src_info **srcp, size_t *nsrc, unit **unitsp, size_t *nunits,
                           size_t *nranks, shard_plan *plan, warn_log *wl, tb_error *err)
{
    src_info *src = *srcp, *ns = NULL;
    unit *units = NULL;
    shard_head first = {0};
    int64_t *claims = NULL;
    size_t nmiss = 0;
    memset(plan, 0, sizeof *plan);
    tb_status st = read_shards(src, *nsrc, plan, &first, &claims, err);
    if (st == TB_OK)
        st = check_missing(opt, src[0].path, plan, wl, &nmiss, err);
    if (st == TB_OK)
        st = order_parts(plan, err);
    if (st == TB_OK)
        st = part_units(plan, claims, ranks_named(plan, claims, first.ranks, !nmiss, wl), &ns, &units, err);
    if (st == TB_OK) {
        for (size_t i = 0; i < *nsrc; i++)
            free(src[i].path);
        free(src);
        *srcp = ns;
        *nsrc = plan->nparts;
        *unitsp = units;
        *nunits = plan->nparts;
        *nranks = plan->nranks;
        plan->inputs = first.inputs;
        first.inputs = NULL;
    }
    free(first.inputs);
    free(claims);
    return st;
}

/* ---- the merged DB's bookkeeping ---------------------------------------------- */

/* Copies the rows of one shard's table into a temporary table of w (ord:
 * the shard's index, seq: the row's place in it), with the rankIds mapped
 * through tb_shard_p2f. */
static tb_status copy_rows(sqlite3 *src, const char *path, sqlite3 *dst, const char *table, const char *cols,
                           int ncols, unsigned shard, const char *where, tb_error *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT %s FROM \"%s\"%s ORDER BY rowid", cols, table, where);
    sqlite3_stmt *q, *ins;
    if (sqlite3_prepare_v2(src, sql, -1, &q, NULL) != SQLITE_OK)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "cannot read %s: %s", table, sqlite3_errmsg(src));
    char isql[512];
    int o = snprintf(isql, sizeof isql, "INSERT INTO temp.\"tb_m_%s\" VALUES(?, ?", table);
    for (int i = 0; i < ncols; i++)
        o += snprintf(isql + o, sizeof isql - (size_t)o, ", ?");
    snprintf(isql + o, sizeof isql - (size_t)o, ")");
    if (sqlite3_prepare_v2(dst, isql, -1, &ins, NULL) != SQLITE_OK) {
        sqlite3_finalize(q);
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(dst));
    }
    tb_status st = TB_OK;
    int64_t seq = 0;
    while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
        sqlite3_bind_int64(ins, 1, shard);
        sqlite3_bind_int64(ins, 2, seq++);
        for (int i = 0; i < ncols; i++)
            sqlite3_bind_value(ins, i + 3, sqlite3_column_value(q, i));
        if (sqlite3_step(ins) != SQLITE_DONE)
            st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(dst));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return st;
}

/* The tables taken from the shards, their columns, which shards' rows count
 * (every shard's, or the first's: the files not read, the warnings before
 * any file), and the order the merged DB gets them in. */
static const struct {
    const char *table, *cols;
    int ncols;
    const char *all, *first; /* WHERE of the rows taken from every shard, from the first */
    const char *order;
} books[] = {
    {"TB_SOURCE", "id, rankId, path, kind, bytes, mtimeNs, rowsRead, rowsSkipped, note, input, relPath", 11,
     " WHERE kind NOT IN ('ignored', 'skipped')", " WHERE kind IN ('ignored', 'skipped')", "c1"},
    {"TB_LOAD_COUNT", "sourceId, dest, events", 3, "", NULL, "c1, ord, seq"},
    {"TB_RANK", "rankId, hostName, source", 3, "", NULL, "c1, seq"},
    {"RANK_DEVICE_MAP", "rankId, deviceId", 2, "", NULL, "c1, seq"},
    {"SESSION_TIME_INFO", "startTimeNs, endTimeNs, baseTimeNs, rankId", 4, "", NULL, "c4, seq"},
    {"TB_WARNING", "sourceId, message", 2, " WHERE sourceId > 0", " WHERE sourceId IS NULL OR sourceId <= 0",
     "c1 IS NOT NULL AND c1 > 0, c1, ord, seq"},
};

/* tb_shard_p2f: the shards' rank numbers (in input order) to the merged
 * DB's rankIds. */
static tb_status map_ranks(dbw *w, const shard_plan *plan, const int64_t *final, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    tb_status st = dbw_exec(w, "CREATE TEMP TABLE tb_shard_p2f (p INTEGER PRIMARY KEY, f INTEGER)", err);
    sqlite3_stmt *q = NULL;
    if (st == TB_OK && sqlite3_prepare_v2(db, "INSERT INTO tb_shard_p2f VALUES(?, ?)", -1, &q, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    size_t r = 0;
    for (size_t k = 0; k < plan->nparts && st == TB_OK; k++) {
        const shard_part *p = &plan->parts[k];
        for (int64_t j = p->rank_lo; !p->cluster && j <= p->rank_hi; j++, r++) {
            sqlite3_bind_int64(q, 1, j);
            sqlite3_bind_int64(q, 2, final[r]);
            if (sqlite3_step(q) != SQLITE_DONE)
                st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
            sqlite3_reset(q);
        }
    }
    sqlite3_finalize(q);
    return st;
}

/* Every shard's rows of the bookkeeping tables into temporary tables of w,
 * and the first shard's of the rows only one shard keeps. */
static tb_status gather_books(dbw *w, const shard_plan *plan, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    tb_status st = TB_OK;
    char sql[1024];
    for (size_t b = 0; b < sizeof books / sizeof books[0] && st == TB_OK; b++) {
        int o = snprintf(sql, sizeof sql, "CREATE TEMP TABLE \"tb_m_%s\" (ord, seq", books[b].table);
        for (int i = 0; i < books[b].ncols; i++)
            o += snprintf(sql + o, sizeof sql - (size_t)o, ", c%d", i + 1);
        snprintf(sql + o, sizeof sql - (size_t)o, ")");
        st = dbw_exec(w, sql, err);
    }
    int first = 1;
    for (unsigned k = 0; k < plan->count && st == TB_OK; k++) {
        if (!plan->shards[k])
            continue;
        sqlite_input in = {0};
        if ((st = sqlite_input_open(&in, plan->shards[k], err)) != TB_OK)
            break;
        for (size_t b = 0; b < sizeof books / sizeof books[0] && st == TB_OK; b++) {
            st = copy_rows(in.db, plan->shards[k], db, books[b].table, books[b].cols, books[b].ncols, k,
                           books[b].all, err);
            if (st == TB_OK && first && books[b].first)
                st = copy_rows(in.db, plan->shards[k], db, books[b].table, books[b].cols, books[b].ncols, k,
                               books[b].first, err);
        }
        sqlite_input_close(&in);
        first = 0;
    }
    return st;
}

/* The gathered rows into the merged DB's tables, rankIds as the merged DB
 * numbers them, rows in the order of a single load. */
static tb_status put_books(dbw *w, tb_error *err)
{
    tb_status st = TB_OK;
    char sql[1024];
    for (size_t b = 0; b < sizeof books / sizeof books[0] && st == TB_OK; b++) {
        const char *rc = !strcmp(books[b].table, "SESSION_TIME_INFO") ? "c4"
                         : !strcmp(books[b].table, "TB_SOURCE") || !strcmp(books[b].table, "TB_RANK") ||
                                 !strcmp(books[b].table, "RANK_DEVICE_MAP")
                             ? (!strcmp(books[b].table, "TB_SOURCE") ? "c2" : "c1")
                             : NULL;
        if (rc) {
            snprintf(sql, sizeof sql,
                     "UPDATE temp.\"tb_m_%s\" SET %s = (SELECT f FROM tb_shard_p2f WHERE p = %s) WHERE %s IS NOT NULL",
                     books[b].table, rc, rc, rc);
            if ((st = dbw_exec(w, sql, err)) != TB_OK)
                break;
        }
        int o = snprintf(sql, sizeof sql, "INSERT INTO \"%s\"(%s) SELECT ", books[b].table, books[b].cols);
        for (int i = 0; i < books[b].ncols; i++)
            o += snprintf(sql + o, sizeof sql - (size_t)o, "%sc%d", i ? ", " : "", i + 1);
        /* ranks keep the order of the load (input order), whatever ids they name */
        const char *order = books[b].order;
        char ord[256];
        if (!strcmp(books[b].table, "TB_RANK") || !strcmp(books[b].table, "RANK_DEVICE_MAP") ||
            !strcmp(books[b].table, "SESSION_TIME_INFO")) {
            snprintf(ord, sizeof ord, "(SELECT p FROM tb_shard_p2f WHERE f = %s), seq", rc);
            order = ord;
        }
        snprintf(sql + o, sizeof sql - (size_t)o, " FROM temp.\"tb_m_%s\" ORDER BY %s; DROP TABLE temp.\"tb_m_%s\"",
                 books[b].table, order, books[b].table);
        st = dbw_exec(w, sql, err);
    }
    return st;
}

/* The ranks of shard k as the merged DB numbers them, as "[0,1]". Returns
 * new (free with free()), or NULL when out of memory. */
static char *shard_ranks(const shard_plan *plan, unsigned k, const int64_t *final)
{
    size_t len = 1, cap = 64;
    char *ranks = malloc(cap);
    if (!ranks)
        return NULL;
    ranks[0] = '[';
    ranks[1] = 0;
    for (size_t g = 0, rr = 0; g < plan->nparts; g++) {
        const shard_part *p = &plan->parts[g];
        for (int64_t j = p->rank_lo; !p->cluster && j <= p->rank_hi; j++, rr++)
            if (p->path == plan->shards[k] && append_num(&ranks, &len, &cap, final[rr])) {
                free(ranks);
                return NULL;
            }
    }
    ranks[len++] = ']';
    ranks[len] = 0;
    return ranks;
}

/* Binds into TB_SHARDS row ins what shard k given says: its path, status,
 * ranks, its own figures (TB_SHARD) and, for the cache's staleness check
 * (the shards are the inputs), its file's size and time. */
static tb_status bind_shard(sqlite3_stmt *ins, const shard_plan *plan, unsigned k, const int64_t *final,
                            int books_only, tb_error *err)
{
    sqlite3_bind_text(ins, 3, plan->shards[k], -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 4, books_only ? "scoped" : "merged", -1, SQLITE_STATIC);
    struct stat sb;
    if (stat(plan->shards[k], &sb) == 0) {
        sqlite3_bind_int64(ins, 11, (int64_t)sb.st_size);
        sqlite3_bind_int64(ins, 12, (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec);
    }
    sqlite_input in = {0};
    tb_status st = sqlite_input_open(&in, plan->shards[k], err);
    if (st != TB_OK)
        return st;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(in.db, "SELECT ranks, inputBytes, wallSeconds, peakRssBytes, host FROM TB_SHARD", -1, &q,
                           NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        char *ranks = shard_ranks(plan, k, final);
        if (ranks) {
            sqlite3_bind_text(ins, 5, ranks, -1, SQLITE_TRANSIENT);
            free(ranks);
        }
        for (int i = 1; i <= 4; i++)
            sqlite3_bind_value(ins, i + 5, sqlite3_column_value(q, i));
    }
    sqlite3_finalize(q);
    sqlite_input_close(&in);
    return TB_OK;
}

/* TB_SHARDS: one row per shard of the load, the processes that made them
 * (tracebook_run.json's "processes"); a shard not given is "missing". */
static tb_status write_shards_table(dbw *w, const shard_plan *plan, const int64_t *final, int books_only,
                                    tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    tb_status st = dbw_exec(w,
                            "CREATE TABLE TB_SHARDS (shardIndex INTEGER, shardCount INTEGER, path TEXT, status TEXT,"
                            " ranks TEXT, inputBytes INTEGER, wallSeconds REAL, peakRssBytes INTEGER, host TEXT,"
                            " inputs TEXT, dbBytes INTEGER, dbMtimeNs INTEGER)",
                            err);
    sqlite3_stmt *ins = NULL;
    if (st == TB_OK &&
        sqlite3_prepare_v2(db, "INSERT INTO TB_SHARDS VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
        st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    for (unsigned k = 0; k < plan->count && st == TB_OK; k++) {
        sqlite3_bind_int64(ins, 1, k);
        sqlite3_bind_int64(ins, 2, plan->count);
        for (int i = 3; i <= 12; i++)
            sqlite3_bind_null(ins, i);
        /* the inputs the shards were loaded from (the same for all) */
        sqlite3_bind_text(ins, 10, plan->inputs, -1, SQLITE_STATIC);
        if (!plan->shards[k])
            sqlite3_bind_text(ins, 4, "missing", -1, SQLITE_STATIC);
        else if ((st = bind_shard(ins, plan, k, final, books_only, err)) != TB_OK)
            break;
        if (sqlite3_step(ins) != SQLITE_DONE)
            st = tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return st;
}

tb_status load_shards_books(dbw *w, const shard_plan *plan, const int64_t *final, const import_ids *ids,
                            int books_only, tb_error *err)
{
    tb_status st = map_ranks(w, plan, final, err);
    if (st == TB_OK)
        st = gather_books(w, plan, err);
    if (st == TB_OK)
        st = put_books(w, err);
    if (st == TB_OK)
        st = load_books_meta(w, ids, err);
    if (st == TB_OK)
        st = write_shards_table(w, plan, final, books_only, err);
    /* the shards' rank numbers and the load's ids, for rows gathered from
     * them (cluster-scope reports: report/partial.c) */
    if (st == TB_OK && books_only)
        st = dbw_exec(w,
                      "CREATE TABLE TB_SHARDS_RANK (inputRank INTEGER PRIMARY KEY, rankId INTEGER);"
                      "INSERT INTO TB_SHARDS_RANK SELECT p, f FROM temp.tb_shard_p2f ORDER BY p",
                      err);
    if (st == TB_OK)
        st = dbw_exec(w, "DROP TABLE tb_shard_p2f", err);
    return st;
}
