/* SPDX-License-Identifier: MIT */
/*
 * load.c - tb_load(): inputs -> one unified DB, atomically.
 *
 * Each trace file found under the -dir inputs is one rank. Files are
 * streamed through the trace importer into a DB written under a temporary
 * name beside the destination; the session tables (SESSION_TIME_INFO,
 * RANK_DEVICE_MAP, META_DATA, TB_SOURCE, ...) are written once all files are
 * in, and only a complete DB is renamed into place. Any failure removes the
 * temporary file, so a reader never sees half a DB and an older DB of the
 * same name survives.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../ingest/trace_import.h"
#include "dbw.h"
#include "tracebook/tracebook.h"

static const char *const dest_names[TB_DEST_COUNT] = {
    [TB_DEST_TASK] = "TASK", [TB_DEST_COMPUTE_TASK_INFO] = "COMPUTE_TASK_INFO",
    [TB_DEST_COMMUNICATION_OP] = "COMMUNICATION_OP", [TB_DEST_COMMUNICATION_TASK_INFO] = "COMMUNICATION_TASK_INFO",
    [TB_DEST_MEMCPY_INFO] = "MEMCPY_INFO", [TB_DEST_CANN_API] = "CANN_API", [TB_DEST_PYTORCH_API] = "PYTORCH_API",
    [TB_DEST_STEP_TIME] = "STEP_TIME", [TB_DEST_OVERLAP_ANALYSIS] = "OVERLAP_ANALYSIS",
    [TB_DEST_MSTX_EVENTS] = "MSTX_EVENTS", [TB_DEST_TB_FLOW] = "TB_FLOW (flow ends)",
    [TB_DEST_TB_COUNTER] = "TB_COUNTER", [TB_DEST_TB_EVENT] = "TB_EVENT", [TB_DEST_METADATA] = "metadata",
    [TB_DEST_SKIPPED_PYTHON] = "skipped python_function", [TB_DEST_EMPTY] = "empty {} events",
    [TB_DEST_UNKNOWN_PHASE] = "unknown phase (TB_EVENT)",
};

const char *tb_dest_name(int dest)
{
    return dest >= 0 && dest < TB_DEST_COUNT ? dest_names[dest] : "?";
}

/* ---- finding trace files --------------------------------------------------- */

typedef struct pathlist {
    char **v;
    size_t n, cap;
} pathlist;

static int pl_add(pathlist *pl, const char *p)
{
    if (pl->n + 2 > pl->cap) {
        size_t ncap = pl->cap ? pl->cap * 2 : 8;
        char **nv = realloc(pl->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        pl->v = nv;
        pl->cap = ncap;
    }
    if (!(pl->v[pl->n] = strdup(p)))
        return -1;
    pl->n++;
    pl->v[pl->n] = NULL;
    return 0;
}

void tb_paths_free(char **paths)
{
    if (!paths)
        return;
    for (char **p = paths; *p; p++)
        free(*p);
    free(paths);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* JSON files beside traces that are not traces (formats.md). */
static int known_non_trace(const char *name)
{
    static const char *const pre[] = {"communication", "profiler_info", "profiler_metadata", "cluster_",
                                      "reports_sample_config", "msprof_slice.json", "step_trace_",
                                      "parallel_group", "metadata"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (strncmp(name, pre[i], strlen(pre[i])) == 0)
            return 1;
    return 0;
}

/* Looks at the first bytes: a trace is an array of objects or has "traceEvents".
 * Returns 1 or 0, or -1 when the file cannot be read (errno set). */
static int looks_like_trace(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return -1;
    static char buf[1 << 16];
    int n = gzread(gz, buf, sizeof buf - 1);
    gzclose(gz);
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;
    buf[n] = 0;
    const char *p = buf;
    if ((unsigned char)p[0] == 0xEF)
        p += 3;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    if (*p == '[') {
        p++;
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
            p++;
        return *p == '{' || *p == ']';
    }
    return *p == '{' && (strstr(p, "\"traceEvents\"") || strstr(p, "\"ph\""));
}

/* Collects trace files under dir. Returns 0, -1 when out of memory, or -2
 * when a candidate file cannot be read (its path in bad). */
static int walk(const char *dir, int depth, pathlist *pl, char *bad, size_t badn)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth < 4 && (rc = walk(path, depth + 1, pl, bad, badn)) != 0)
                break;
        } else if (S_ISREG(st.st_mode) && (ends_with(de->d_name, ".json") || ends_with(de->d_name, ".json.gz")) &&
                   !known_non_trace(de->d_name)) {
            int t = looks_like_trace(path);
            if (t < 0) {
                snprintf(bad, badn, "%s", path);
                rc = -2;
                break;
            }
            if (t && pl_add(pl, path)) {
                rc = -1;
                break;
            }
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tb_find_traces(const char *path, tb_error *err)
{
    struct stat st;
    pathlist pl = {0};
    if (stat(path, &st) != 0) {
        tb_error_at(err, errno == ENOENT ? TB_ERR_NOTFOUND : TB_ERR_IO, path, 0, 0, -1, "cannot read: %s",
                    strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (pl_add(&pl, path))
            goto nomem;
        return pl.v;
    }
    char bad[PATH_MAX];
    int wrc = walk(path, 0, &pl, bad, sizeof bad);
    if (wrc == -2) {
        tb_error_at(err, TB_ERR_IO, bad, 0, 0, -1, "cannot read: %s", strerror(errno ? errno : EIO));
        tb_paths_free(pl.v);
        return NULL;
    }
    if (wrc)
        goto nomem;
    if (pl.n == 0) {
        tb_error_at(err, TB_ERR_NOTFOUND, path, 0, 0, -1,
                    "no trace file found (looked for trace_view.json, msprof_*.json, Kineto *.json[.gz])");
        free(pl.v);
        return NULL;
    }
    qsort(pl.v, pl.n, sizeof *pl.v, cmp_str);
    return pl.v;
nomem:
    tb_paths_free(pl.v);
    tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return NULL;
}

/* ---- loading ---------------------------------------------------------------- */

typedef struct src_info {
    char *path;
    int rank;
    int64_t bytes, mtime_ns;
    trace_import_result r;
} src_info;

static void warnf(const tb_load_options *opt, sqlite3 *db, int64_t src, tb_load_result *res, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void warnf(const tb_load_options *opt, sqlite3 *db, int64_t src, tb_load_result *res, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (opt->warn)
        opt->warn(opt->ctx, msg);
    res->warnings++;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_WARNING(sourceId, message) VALUES(?, ?)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, src);
        sqlite3_bind_text(st, 2, msg, -1, SQLITE_TRANSIENT);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
}

static tb_status bookkeeping(dbw *w, src_info *src, size_t nsrc, tb_error *err)
{
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *s_src = NULL, *s_cnt = NULL, *s_rdm = NULL, *s_rank = NULL, *s_meta = NULL, *s_sess = NULL;
    tb_status st = TB_ERR_DB;
    if (sqlite3_prepare_v2(db, "INSERT INTO TB_SOURCE VALUES(?,?,?,?,?,?,?,?,?)", -1, &s_src, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_LOAD_COUNT VALUES(?,?,?)", -1, &s_cnt, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO RANK_DEVICE_MAP VALUES(?,?)", -1, &s_rdm, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO TB_RANK VALUES(?,NULL,?)", -1, &s_rank, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO META_DATA VALUES(?,?)", -1, &s_meta, NULL) ||
        sqlite3_prepare_v2(db, "INSERT INTO SESSION_TIME_INFO VALUES(?,?,?,?)", -1, &s_sess, NULL)) {
        tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
        goto done;
    }
    for (size_t i = 0; i < nsrc; i++) {
        src_info *s = &src[i];
        uint64_t skipped = s->r.dest[TB_DEST_SKIPPED_PYTHON] + s->r.dest[TB_DEST_EMPTY];
        char note[160];
        if (s->r.truncated)
            snprintf(note, sizeof note, "cut short at byte %lld", (long long)s->r.stop_offset);
        else
            note[0] = 0;
        sqlite3_bind_int64(s_src, 1, (int64_t)i + 1);
        sqlite3_bind_int(s_src, 2, s->rank);
        sqlite3_bind_text(s_src, 3, s->path, -1, SQLITE_STATIC);
        sqlite3_bind_text(s_src, 4, s->r.kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s_src, 5, s->bytes);
        sqlite3_bind_int64(s_src, 6, s->mtime_ns);
        sqlite3_bind_int64(s_src, 7, (int64_t)s->r.events);
        sqlite3_bind_int64(s_src, 8, (int64_t)skipped);
        if (note[0])
            sqlite3_bind_text(s_src, 9, note, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(s_src, 9);
        if (sqlite3_step(s_src) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_src);
        for (int d = 0; d < TB_DEST_COUNT; d++) {
            if (!s->r.dest[d])
                continue;
            sqlite3_bind_int64(s_cnt, 1, (int64_t)i + 1);
            sqlite3_bind_text(s_cnt, 2, tb_dest_name(d), -1, SQLITE_STATIC);
            sqlite3_bind_int64(s_cnt, 3, (int64_t)s->r.dest[d]);
            if (sqlite3_step(s_cnt) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_cnt);
        }
        for (int dev = 0; dev < 64; dev++) {
            if (!(s->r.devices_seen & ((uint64_t)1 << dev)))
                continue;
            sqlite3_bind_int(s_rdm, 1, s->rank);
            sqlite3_bind_int(s_rdm, 2, dev);
            if (sqlite3_step(s_rdm) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_rdm);
        }
        sqlite3_bind_int(s_rank, 1, s->rank);
        sqlite3_bind_text(s_rank, 2, s->path, -1, SQLITE_STATIC);
        if (sqlite3_step(s_rank) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_rank);
        if (s->r.has_times) {
            /* one row per rank: ranks may run on different clocks */
            sqlite3_bind_int64(s_sess, 1, s->r.min_ns);
            sqlite3_bind_int64(s_sess, 2, s->r.max_ns);
            if (s->r.has_base_time)
                sqlite3_bind_int64(s_sess, 3, s->r.base_time_ns);
            else
                sqlite3_bind_null(s_sess, 3);
            sqlite3_bind_int(s_sess, 4, s->rank);
            if (sqlite3_step(s_sess) != SQLITE_DONE)
                goto dberr;
            sqlite3_reset(s_sess);
        }
    }
    static const char *const meta[][2] = {
        {"SCHEMA_VERSION", "1.2.0"}, {"SCHEMA_VERSION_MAJOR", "1"}, {"SCHEMA_VERSION_MINOR", "2"},
        {"SCHEMA_VERSION_MICRO", "0"}, {"TRACEBOOK_VERSION", TB_VERSION}, {"TRACEBOOK_SCHEMA", "1"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
        sqlite3_bind_text(s_meta, 1, meta[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(s_meta, 2, meta[i][1], -1, SQLITE_STATIC);
        if (sqlite3_step(s_meta) != SQLITE_DONE)
            goto dberr;
        sqlite3_reset(s_meta);
    }
    st = TB_OK;
    goto done;
dberr:
    tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
done:
    sqlite3_finalize(s_src);
    sqlite3_finalize(s_cnt);
    sqlite3_finalize(s_rdm);
    sqlite3_finalize(s_rank);
    sqlite3_finalize(s_meta);
    sqlite3_finalize(s_sess);
    return st;
}

/*
 * Binds HostToDevice flows to the slices at their ends: the finish encloses a
 * device task, whose connectionId becomes the flow's (older torch_npu flow ids
 * encode it as (id << 32) | 0xFFFFFFFF, so the id itself is not used), and the
 * start encloses a CANN API slice, which takes that connectionId when its own
 * args carried none.
 */
static const char bind_h2d_sql[] =
    "CREATE TEMP TABLE h2d AS"
    " SELECT f.rowid AS frow, f.rankId AS rankId, ((f.fromPid << 32) | (f.fromTid & 4294967295)) AS gtid,"
    "  f.fromNs AS fromNs,"
    "  (SELECT t.connectionId FROM TASK t WHERE t.startNs <= f.toNs AND t.endNs >= f.toNs"
    "    AND t.globalPid = f.toPid AND t.rankId = f.rankId ORDER BY t.startNs DESC LIMIT 1) AS conn"
    " FROM TB_FLOW f WHERE f.cat = (SELECT id FROM STRING_IDS WHERE value = 'HostToDevice')"
    "  AND f.fromNs IS NOT NULL AND f.toNs IS NOT NULL;"
    "UPDATE TB_FLOW SET connectionId = h.conn FROM h2d h WHERE TB_FLOW.rowid = h.frow AND h.conn IS NOT NULL;"
    "CREATE INDEX tb_tmp_cann_tid ON CANN_API(globalTid, startNs);"
    "CREATE TEMP TABLE h2d_api AS"
    " SELECT (SELECT c.rowid FROM CANN_API c WHERE c.globalTid = h.gtid AND c.startNs <= h.fromNs"
    "   AND c.endNs >= h.fromNs AND c.rankId = h.rankId ORDER BY c.startNs DESC LIMIT 1) AS crow, h.conn AS conn"
    " FROM h2d h WHERE h.conn IS NOT NULL;"
    "UPDATE CANN_API SET connectionId = b.conn FROM h2d_api b"
    " WHERE CANN_API.rowid = b.crow AND CANN_API.connectionId IS NULL;"
    "DROP INDEX tb_tmp_cann_tid; DROP TABLE h2d; DROP TABLE h2d_api;";

/* Ranks named by the traces themselves (distributedInfo.rank) win over input order when they are distinct. */
static tb_status apply_trace_ranks(dbw *w, src_info *src, size_t nsrc, tb_error *err)
{
    for (size_t i = 0; i < nsrc; i++) {
        if (src[i].r.trace_rank < 0 || src[i].r.trace_rank > INT_MAX)
            return TB_OK;
        for (size_t j = 0; j < i; j++)
            if (src[j].r.trace_rank == src[i].r.trace_rank)
                return TB_OK;
    }
    int changed = 0;
    for (size_t i = 0; i < nsrc; i++)
        changed |= src[i].r.trace_rank != src[i].rank;
    if (!changed)
        return TB_OK;
    /* shift through negative ids so no two inputs ever share a rank mid-way */
    sqlite3 *db = dbw_db(w);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db,
                           "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                           " WHERE m.type = 'table' AND c.name = 'rankId'",
                           -1, &q, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "SQLite: %s", sqlite3_errmsg(db));
    tb_status st = TB_OK;
    while (st == TB_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(q, 0);
        for (int pass = 0; pass < 2 && st == TB_OK; pass++) {
            for (size_t i = 0; i < nsrc && st == TB_OK; i++) {
                char sql[256];
                if (pass == 0)
                    snprintf(sql, sizeof sql, "UPDATE \"%s\" SET rankId = %d WHERE rankId = %d", t, -1 - src[i].rank,
                             src[i].rank);
                else
                    snprintf(sql, sizeof sql, "UPDATE \"%s\" SET rankId = %lld WHERE rankId = %d", t,
                             (long long)src[i].r.trace_rank, -1 - src[i].rank);
                st = dbw_exec(w, sql, err);
            }
        }
    }
    sqlite3_finalize(q);
    if (st == TB_OK)
        for (size_t i = 0; i < nsrc; i++)
            src[i].rank = (int)src[i].r.trace_rank;
    return st;
}

tb_status tb_load(const tb_load_options *opt, tb_load_result *res, tb_error *err)
{
    tb_load_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    tb_error_clear(err);
    if (!opt->output || !*opt->output)
        return tb_error_set(err, TB_ERR_USAGE, "no output DB given");
    if (opt->n_inputs == 0)
        return tb_error_set(err, TB_ERR_USAGE, "no input given (-dir PATH)");

    src_info *src = NULL;
    size_t nsrc = 0, srccap = 0;
    char *tmp = NULL;
    dbw *w = NULL;
    tb_status st = TB_OK;

    for (size_t i = 0; i < opt->n_inputs; i++) {
        char **files = tb_find_traces(opt->inputs[i], err);
        if (!files) {
            st = err->code;
            goto fail;
        }
        for (char **f = files; *f; f++) {
            if (nsrc == srccap) {
                srccap = srccap ? srccap * 2 : 8;
                src_info *ns = realloc(src, srccap * sizeof *ns);
                if (!ns) {
                    tb_paths_free(files);
                    st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    goto fail;
                }
                src = ns;
            }
            memset(&src[nsrc], 0, sizeof src[nsrc]);
            src[nsrc].path = strdup(*f);
            src[nsrc].rank = (int)nsrc;
            if (!src[nsrc].path) {
                tb_paths_free(files);
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                goto fail;
            }
            nsrc++;
        }
        tb_paths_free(files);
    }

    /* the output never replaces an input; an input given twice loads once */
    struct stat ost;
    int out_exists = stat(opt->output, &ost) == 0;
    for (size_t i = 0; i < nsrc; i++) {
        struct stat ist;
        if (stat(src[i].path, &ist) != 0)
            continue;
        if (out_exists && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino) {
            st = tb_error_at(err, TB_ERR_USAGE, opt->output, 0, 0, -1, "the output would replace the input '%s'",
                             src[i].path);
            goto fail;
        }
        for (size_t j = 0; j < i; j++) {
            struct stat jst;
            if (src[j].path && stat(src[j].path, &jst) == 0 && jst.st_dev == ist.st_dev && jst.st_ino == ist.st_ino) {
                if (opt->warn) {
                    char msg[2 * PATH_MAX + 64];
                    snprintf(msg, sizeof msg, "%s: the same file as %s: loaded once", src[i].path, src[j].path);
                    opt->warn(opt->ctx, msg);
                }
                res->warnings++;
                free(src[i].path);
                memmove(&src[i], &src[i + 1], (nsrc - i - 1) * sizeof *src);
                nsrc--;
                i--;
                break;
            }
        }
    }
    for (size_t i = 0; i < nsrc; i++)
        src[i].rank = (int)i;

    /* temporary file beside the destination, renamed into place at the end */
    size_t tl = strlen(opt->output) + 32;
    tmp = malloc(tl);
    if (!tmp) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    snprintf(tmp, tl, "%s.tmp-XXXXXX", opt->output);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    close(fd);
    tb_temp_register(tmp);
    if (!(w = dbw_create(tmp, err))) {
        st = err->code;
        goto fail;
    }

    double t_read = dbw_now();
    import_ids ids = {.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1};
    for (size_t i = 0; i < nsrc; i++) {
        struct stat sb;
        if (stat(src[i].path, &sb) == 0) {
            src[i].bytes = (int64_t)sb.st_size;
            src[i].mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
        }
        trace_import_opts io = {.rank = src[i].rank, .keep_python_functions = opt->keep_python_functions,
                                .warn = opt->warn, .progress = opt->progress, .ctx = opt->ctx,
                                .total_bytes = (uint64_t)src[i].bytes};
        st = trace_import(src[i].path, dbw_sink(w), &ids, &io, &src[i].r, err);
        if (st != TB_OK) {
            const tb_error *we = dbw_error(w);
            if (we->code != TB_OK && err->message[0] == 0)
                *err = *we;
            if (err->file[0] == 0)
                snprintf(err->file, sizeof err->file, "%s", src[i].path);
            goto fail;
        }
        res->events += src[i].r.events;
        for (int d = 0; d < TB_DEST_COUNT; d++)
            res->dest[d] += src[i].r.dest[d];
        res->n_files++;
        if (src[i].r.truncated) {
            if (opt->strict) {
                st = tb_error_at(err, TB_ERR_TRUNCATED, src[i].path, 0, 0, src[i].r.stop_offset,
                                 "input cut short at byte %lld after %llu complete events (--strict)",
                                 (long long)src[i].r.stop_offset, (unsigned long long)src[i].r.events);
                goto fail;
            }
            warnf(opt, dbw_db(w), (int64_t)i + 1, res,
                  "%s: input cut short at byte %lld: kept %llu complete events, the rest is lost", src[i].path,
                  (long long)src[i].r.stop_offset, (unsigned long long)src[i].r.events);
        }
        if (src[i].r.dest[TB_DEST_UNKNOWN_PHASE])
            warnf(opt, dbw_db(w), (int64_t)i + 1, res, "%s: %llu events with an unknown phase kept in TB_EVENT",
                  src[i].path, (unsigned long long)src[i].r.dest[TB_DEST_UNKNOWN_PHASE]);
    }
    double t_post = dbw_now();
    res->seconds_read = t_post - t_read;
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = dbw_exec(w, bind_h2d_sql, err)) != TB_OK ||
        (st = apply_trace_ranks(w, src, nsrc, err)) != TB_OK || (st = bookkeeping(w, src, nsrc, err)) != TB_OK)
        goto fail;
    res->seconds_post = dbw_now() - t_post;
    if ((st = dbw_finish(w, &res->seconds_index, err)) != TB_OK)
        goto fail;
    dbw_destroy(w);
    w = NULL;
    if (rename(tmp, opt->output) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        goto fail;
    }
    tb_temp_unregister(tmp);
    free(tmp);
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    return TB_OK;

fail:
    dbw_destroy(w);
    if (tmp) {
        unlink(tmp);
        tb_temp_unregister(tmp);
        free(tmp);
    }
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    if (st == TB_OK)
        st = TB_ERR_INTERNAL;
    if (err->code == TB_OK)
        err->code = st;
    return st;
}

/* ---- default names ------------------------------------------------------------ */

tb_status tb_db_default_name(const char *db_path, char *out, size_t outlen, tb_error *err)
{
    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return tb_error_at(err, TB_ERR_DB, db_path, 0, 0, -1, "cannot open the DB");
    }
    sqlite3_stmt *q;
    int64_t ns = 0;
    /* session start: baseTime + start (Kineto), else the earliest event when it is Unix time, else newest mtime */
    if (sqlite3_prepare_v2(db,
                           "SELECT min(CASE WHEN baseTimeNs IS NOT NULL THEN baseTimeNs + startTimeNs"
                           " WHEN startTimeNs > 946684800000000000 THEN startTimeNs END) FROM SESSION_TIME_INFO",
                           -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
            ns = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    if (ns == 0 && sqlite3_prepare_v2(db, "SELECT max(mtimeNs) FROM TB_SOURCE", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            ns = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    time_t t = (time_t)(ns / 1000000000LL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
    if ((size_t)snprintf(out, outlen, "msprof_%s.db", stamp) >= outlen)
        return tb_error_set(err, TB_ERR_USAGE, "output path too long");
    return TB_OK;
}
