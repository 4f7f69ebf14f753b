/* SPDX-License-Identifier: MIT */
/*
 * listing.c - `print summary` and `print trace`: the DB as the text listings
 * topsprof prints (tb_print_summary, tb_print_trace; tracebook/export.h).
 *
 * Statistics mode groups by name, per activity class: DEVICE (device tasks
 * with a name: the `device_task` view, every TASK row), HOST (host ops:
 * PYTORCH_API, the `api` view's PYTORCH rows) and RUNTIME (runtime and API
 * calls: CANN_API, the `api` view's CANN rows). Each class prints rows
 * `Time(%) Time Calls Avg Min Max Name` sorted by total time, then
 * "Accumulate Time <t>, Total Calls <n>" and, for DEVICE, "Total Time <t>"
 * (the first task's start to the last task's end), as topsprof does for its
 * GCU class. Trace mode lists the device tasks by start time (relative to
 * the first one) with their Node Name (the op type, when the DB has one).
 *
 * The layout is the one topsprof writes to --log-file (no "==<pid>=="
 * prefix), column for column, so that tracebook's own topsprof reader
 * (ingest/topsprof.c) reads a printed listing back: a test prints a sample
 * and loads the result. The SQL runs on a read-only connection with the
 * iteration window applied (report/window.c), so the window options select
 * the same rows as for a report. Rows are streamed from SQLite: a trace of
 * millions of tasks needs no more memory than one row. The listing goes to
 * a temporary file and reaches its file or stream only when complete. The time text
 * ("56.61ms") comes from the output stage (numfmt_unit_time).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/overflow.h"
#include "output/output.h"
#include "query/window.h"
#include "session/session.h"
#include "tracebook/export.h"
#include "util/dirs.h"

typedef struct lst {
    const tb_print_options *opt;
    sqlite3 *db;        /* the session's connection */
    const char *db_path;
    const char *verb;   /* "print summary" or "print trace", for messages */
    FILE *f;
    tb_error *err;
    char *name;         /* the Name cell being printed (owned; grows) */
    size_t name_cap;
    int nomem;          /* a cell could not grow: the run fails at its end */
    sqlite3_stmt *shown;   /* with a width: a name's text (make_names), else NULL */
} lst;

/* An activity class: where its rows come from (a FROM clause with the rank, device, name and times). */
typedef struct klass {
    const char *title;   /* "DEVICE" */
    const char *what;    /* "device task": the "does not contain ... data." line */
    const char *from;    /* SELECT rankId, deviceId, name, startNs, endNs, dur ... */
    int total_time;      /* prints "Total Time" */
} klass;

static const klass classes[] = {
    {"DEVICE", "device task",
     "SELECT rankId, deviceId, name, startNs, endNs, dur FROM device_task WHERE name IS NOT NULL AND name <> ''", 1},
    {"HOST", "host op",
     "SELECT rankId, NULL AS deviceId, name, startNs, endNs, dur FROM api"
     " WHERE source = 'PYTORCH' AND name IS NOT NULL AND name <> ''", 0},
    {"RUNTIME", "runtime api",
     "SELECT rankId, NULL AS deviceId, name, startNs, endNs, dur FROM api"
     " WHERE source = 'CANN' AND name IS NOT NULL AND name <> ''", 0},
};
#define N_CLASSES (sizeof classes / sizeof classes[0])

static tb_status sql_fail(lst *l, const char *what)
{
    /* a sum beyond 64 bits over out-of-range times: the table and column */
    tb_status rc = db_overflow_explain(l->db, l->db_path, l->verb, l->err);
    if (rc)
        return rc;
    return tb_error_at(l->err, TB_ERR_DB, l->db_path, 0, 0, -1, "%s: %s", what, sqlite3_errmsg(l->db));
}

static tb_status prepare(lst *l, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(l->db, sql, -1, q, NULL) != SQLITE_OK)
        return sql_fail(l, "cannot read the DB");
    return TB_OK;
}

static const char *tm(lst *l, int64_t ns, char *buf)
{
    numfmt_unit_time(ns, l->opt->fixed_unit ? (int)l->opt->unit / 3 : -1, buf);
    return buf;
}

/*
 * The text of s fitted to w code points (0: any length) into l->name:
 * control characters become spaces (a name must stay on its line), and a
 * longer text is cut in its middle ("fused_attention_fw...<half, 128>"), so
 * that names that only differ at their end (template arguments, shapes)
 * stay apart. A cut never splits a UTF-8 sequence. *cut gets 1 when the text
 * was cut. Borrowed (valid until the next call).
 */
static const char *fit(lst *l, const unsigned char *s, size_t w, int *cut)
{
    size_t n = s ? strlen((const char *)s) : 0;
    *cut = 0;
    if (n + 1 > l->name_cap) {
        size_t cap = n + 64;
        char *p = realloc(l->name, cap);
        if (!p) {
            l->nomem = 1;
            return "";
        }
        l->name = p;
        l->name_cap = cap;
    }
    size_t cps = 0;
    for (size_t i = 0; i < n; i++) {
        l->name[i] = s[i] < 0x20 || s[i] == 0x7f ? ' ' : (char)s[i];
        cps += (s[i] & 0xc0) != 0x80;
    }
    l->name[n] = 0;
    if (w == 0 || cps <= w)
        return l->name;
    if (w < 5)
        w = 5;
    /* head code points, "...", tail code points: two thirds before the cut */
    size_t tail = (w - 3) / 3, head = w - 3 - tail;
    size_t hb = 0, k = 0;
    while (hb < n && k <= head) {
        if ((l->name[hb] & 0xc0) != 0x80 && k++ == head)
            break;
        hb++;
    }
    size_t tb = n;
    k = 0;
    while (tb > hb && k < tail) {
        tb--;
        if ((l->name[tb] & 0xc0) != 0x80)
            k++;
    }
    memmove(l->name + hb + 3, l->name + tb, n - tb + 1);
    memcpy(l->name + hb, "...", 3);
    *cut = 1;
    return l->name;
}

/*
 * With --width, every name (and op type) the listing may print gets its
 * text once, in name order, in a TEMP table: cut to the width, or when that
 * text is already taken by another name, cut to one more character, and so
 * on, so that two names are never cut to the same text (a text cut at width
 * w is w characters long, so it never equals a longer one).
 */
static tb_status make_names(lst *l)
{
    sqlite3_stmt *all = NULL, *taken = NULL, *put = NULL;
    tb_status st = TB_OK;
    if (sqlite3_exec(l->db,
                     "CREATE TEMP TABLE tb_print_name(name TEXT PRIMARY KEY, shown TEXT);"
                     " CREATE INDEX temp.tb_print_shown ON tb_print_name(shown)",
                     NULL, NULL, NULL) != SQLITE_OK)
        return sql_fail(l, "cannot make the names");
    if ((st = prepare(l,
                      "SELECT name FROM device_task UNION SELECT name FROM api UNION SELECT s.value FROM"
                      " COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.opType ORDER BY 1",
                      &all)) ||
        (st = prepare(l, "SELECT 1 FROM temp.tb_print_name WHERE shown = ?", &taken)) ||
        (st = prepare(l, "INSERT INTO temp.tb_print_name VALUES (?, ?)", &put)))
        goto done;
    int rc;
    while (!st && (rc = sqlite3_step(all)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(all, 0);
        if (!name || !*name)
            continue;
        const char *text;
        int cut = 0;
        for (size_t w = (size_t)l->opt->width;; w++) {
            text = fit(l, name, w, &cut);
            if (!cut)
                break;
            sqlite3_bind_text(taken, 1, text, -1, SQLITE_TRANSIENT);
            int hit = sqlite3_step(taken) == SQLITE_ROW;
            sqlite3_reset(taken);
            if (!hit)
                break;
        }
        if (!cut)
            continue; /* printed as it is */
        sqlite3_bind_text(put, 1, (const char *)name, -1, SQLITE_STATIC);
        sqlite3_bind_text(put, 2, text, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(put) != SQLITE_DONE)
            st = sql_fail(l, "cannot make the names");
        sqlite3_reset(put);
    }
    if (!st && rc != SQLITE_DONE)
        st = sql_fail(l, "cannot read the DB");
    if (!st)
        st = prepare(l, "SELECT shown FROM temp.tb_print_name WHERE name = ?", &l->shown);
done:
    sqlite3_finalize(all);
    sqlite3_finalize(taken);
    sqlite3_finalize(put);
    return st;
}

/* The text of a Name or Node Name cell (see fit and make_names). Borrowed (valid until the next call). */
static const char *cell(lst *l, const unsigned char *s)
{
    int cut;
    if (!l->shown || !s)
        return fit(l, s, 0, &cut);
    sqlite3_bind_text(l->shown, 1, (const char *)s, -1, SQLITE_STATIC);
    const char *text = sqlite3_step(l->shown) == SQLITE_ROW ? fit(l, sqlite3_column_text(l->shown, 0), 0, &cut)
                                                            : fit(l, s, 0, &cut);
    sqlite3_reset(l->shown);
    sqlite3_clear_bindings(l->shown);
    return text;
}

/* ---- statistics ------------------------------------------------------------ */

/* The totals of one class over the rows of where (a condition on rankId and deviceId, or "1"). */
typedef struct totals {
    int64_t acc, calls, first, last;
} totals;

static tb_status class_totals(lst *l, const klass *k, const char *where, totals *t)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT total(dur), count(*), min(startNs), max(endNs) FROM (%s) WHERE %s", k->from,
             where);
    sqlite3_stmt *q;
    tb_status st = prepare(l, sql, &q);
    if (st)
        return st;
    memset(t, 0, sizeof *t);
    if (sqlite3_step(q) == SQLITE_ROW) {
        t->acc = (int64_t)sqlite3_column_double(q, 0);
        t->calls = sqlite3_column_int64(q, 1);
        t->first = sqlite3_column_int64(q, 2);
        t->last = sqlite3_column_int64(q, 3);
    } else {
        st = sql_fail(l, "cannot read the DB");
    }
    sqlite3_finalize(q);
    return st;
}

static void footer(lst *l, const totals *t, int with_total)
{
    char a[NUMFMT_MAX];
    fprintf(l->f, "    Accumulate Time %s, Total Calls %" PRId64 "\n", tm(l, t->acc, a), t->calls);
    if (with_total)
        fprintf(l->f, "    Total Time %s\n", tm(l, t->last - t->first, a));
}

/* One class's block: its title, rows and footer (or "does not contain"), then an empty line. */
static tb_status stat_class(lst *l, const klass *k, const char *where)
{
    totals t;
    tb_status st = class_totals(l, k, where, &t);
    if (st)
        return st;
    fprintf(l->f, "%s activities:\n", k->title);
    if (t.calls == 0) {
        fprintf(l->f, "    does not contain %s data.\n\n", k->what);
        return TB_OK;
    }
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT name, sum(dur) AS t, count(*), min(dur), max(dur) FROM (%s) WHERE %s"
             " GROUP BY name ORDER BY t DESC, name",
             k->from, where);
    sqlite3_stmt *q;
    if ((st = prepare(l, sql, &q)))
        return st;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t time = sqlite3_column_int64(q, 1), calls = sqlite3_column_int64(q, 2);
        char b[4][NUMFMT_MAX], pct[32];
        snprintf(pct, sizeof pct, "%.2f%%", t.acc > 0 ? 100.0 * (double)time / (double)t.acc : 0.0);
        /* the average as topsprof shows it: rounded to the nanosecond */
        int64_t avg = calls > 0 ? (time + calls / 2) / calls : 0;
        fprintf(l->f, "%12s %8s %6" PRId64 " %8s %8s %8s %s\n", pct, tm(l, time, b[0]), calls, tm(l, avg, b[1]),
                tm(l, sqlite3_column_int64(q, 3), b[2]), tm(l, sqlite3_column_int64(q, 4), b[3]),
                cell(l, sqlite3_column_text(q, 0)));
    }
    if (rc != SQLITE_DONE)
        st = sql_fail(l, "cannot read the DB");
    sqlite3_finalize(q);
    if (st)
        return st;
    footer(l, &t, k->total_time);
    fputc('\n', l->f);
    return TB_OK;
}

static const char stat_header[] = "     Time(%)     Time  Calls      Avg      Min      Max  Name\n";

/* The device's name in NPU_INFO, or "" (the table is optional). */
static void device_name(lst *l, int64_t rank, int64_t dev, char *out, size_t n)
{
    out[0] = 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(l->db, "SELECT name FROM NPU_INFO WHERE rankId = ? AND id = ? AND name <> ''", -1, &q,
                           NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(q, 1, rank);
    sqlite3_bind_int64(q, 2, dev);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(out, n, "%s", cell(l, sqlite3_column_text(q, 0)));
    sqlite3_finalize(q);
}

/* `Device "<name>[ rank <r>] (<device>)"`, the name "device" when NPU_INFO has none. */
static void device_line(lst *l, const char *name, int with_rank, int64_t rank, int64_t dev)
{
    fprintf(l->f, "Device \"%s", name[0] ? name : "device");
    if (with_rank)
        fprintf(l->f, " rank %" PRId64, rank);
    fprintf(l->f, " (%" PRId64 ")\"\n", dev);
}

/* How many ranks the printed rows come from. */
static tb_status count_ranks(lst *l, int64_t *n)
{
    sqlite3_stmt *q;
    tb_status st = prepare(l,
                           "SELECT count(*) FROM (SELECT rankId FROM device_task UNION SELECT rankId FROM api)", &q);
    if (st)
        return st;
    *n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
    sqlite3_finalize(q);
    return TB_OK;
}

/*
 * --per-device: one block per (rank, device) of the device tasks, opened by
 * `Device "<name> (<device>)"` as nvprof prints it (the form tracebook's
 * topsprof reader takes). Host ops and runtime calls belong to a rank, not
 * a device: they are printed with the rank's first device. A rank with host
 * or runtime rows but no device task gets a block of its own, opened by
 * "Rank <r> host:" (no device line).
 */
static tb_status summary_per_device(lst *l)
{
    int64_t nranks = 0;
    tb_status st = count_ranks(l, &nranks);
    if (st)
        return st;
    sqlite3_stmt *q;
    st = prepare(l,
                 "SELECT rankId, deviceId FROM (SELECT DISTINCT rankId, deviceId FROM device_task"
                 " WHERE name IS NOT NULL AND name <> ''"
                 " UNION SELECT DISTINCT rankId, NULL FROM api WHERE rankId NOT IN (SELECT rankId FROM device_task"
                 " WHERE name IS NOT NULL AND name <> '')) ORDER BY rankId, deviceId",
                 &q);
    if (st)
        return st;
    int rc;
    int64_t prev_rank = 0;
    int first = 1;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(q, 0);
        int has_dev = sqlite3_column_type(q, 1) != SQLITE_NULL;
        int64_t dev = sqlite3_column_int64(q, 1);
        int rank_first = first || rank != prev_rank;
        first = 0;
        prev_rank = rank;
        char where[128], name[256];
        if (has_dev) {
            device_name(l, rank, dev, name, sizeof name);
            device_line(l, name, nranks > 1, rank, dev);
        } else {
            fprintf(l->f, "Rank %" PRId64 " host:\n", rank);
        }
        fputs(stat_header, l->f);
        for (size_t i = 0; i < N_CLASSES && !st; i++) {
            if (classes[i].total_time) {
                if (!has_dev)
                    continue;
                snprintf(where, sizeof where, "rankId = %" PRId64 " AND deviceId = %" PRId64, rank, dev);
            } else {
                if (!rank_first)
                    continue;
                snprintf(where, sizeof where, "rankId = %" PRId64, rank);
            }
            st = stat_class(l, &classes[i], where);
        }
    }
    if (!st && rc != SQLITE_DONE)
        st = sql_fail(l, "cannot read the DB");
    sqlite3_finalize(q);
    return st;
}

/* ---- trace ----------------------------------------------------------------- */

static const char trace_from[] =
    "SELECT t.rankId AS rankId, t.deviceId AS deviceId, t.name AS name, t.startNs AS startNs, t.endNs AS endNs,"
    " t.dur AS dur, t.globalTaskId AS gid,"
    " (SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.opType"
    "  WHERE c.globalTaskId = t.globalTaskId AND c.rankId = t.rankId) AS node"
    " FROM device_task t WHERE t.name IS NOT NULL AND t.name <> ''";

/* One "DEVICE trace:" section over the tasks of where. */
static tb_status trace_section(lst *l, const char *where)
{
    totals t;
    const klass *k = &classes[0];
    tb_status st = class_totals(l, k, where, &t);
    if (st)
        return st;
    fputs("     Start   Duration                        Node Name Name\n", l->f);
    fprintf(l->f, "%s trace:\n", k->title);
    if (t.calls == 0) {
        fprintf(l->f, "    does not contain %s data.\n\n", k->what);
        return TB_OK;
    }
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT startNs, dur, node, name FROM (%s) WHERE %s ORDER BY startNs, rankId, gid",
             trace_from, where);
    sqlite3_stmt *q;
    if ((st = prepare(l, sql, &q)))
        return st;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        char b[2][NUMFMT_MAX];
        tm(l, sqlite3_column_int64(q, 0) - t.first, b[0]);
        tm(l, sqlite3_column_int64(q, 1), b[1]);
        /* cell() reuses one buffer: print the node before taking the name */
        fprintf(l->f, "%10s %10s %32s ", b[0], b[1], cell(l, sqlite3_column_text(q, 2)));
        fprintf(l->f, "%s\n", cell(l, sqlite3_column_text(q, 3)));
    }
    if (rc != SQLITE_DONE)
        st = sql_fail(l, "cannot read the DB");
    sqlite3_finalize(q);
    if (st)
        return st;
    footer(l, &t, 1);
    fputc('\n', l->f);
    return TB_OK;
}

static tb_status trace_per_device(lst *l)
{
    int64_t nranks = 0;
    tb_status st = count_ranks(l, &nranks);
    sqlite3_stmt *q;
    if (st || (st = prepare(l,
                            "SELECT DISTINCT rankId, deviceId FROM device_task WHERE name IS NOT NULL AND name <> ''"
                            " ORDER BY rankId, deviceId",
                            &q)))
        return st;
    int rc, any = 0;
    while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t rank = sqlite3_column_int64(q, 0), dev = sqlite3_column_int64(q, 1);
        char where[128], name[256];
        device_name(l, rank, dev, name, sizeof name);
        device_line(l, name, nranks > 1, rank, dev);
        snprintf(where, sizeof where, "rankId = %" PRId64 " AND deviceId = %" PRId64, rank, dev);
        st = trace_section(l, where);
        any = 1;
    }
    if (!st && rc != SQLITE_DONE)
        st = sql_fail(l, "cannot read the DB");
    sqlite3_finalize(q);
    if (!st && !any)
        st = trace_section(l, "1");
    return st;
}

/* ---- the job --------------------------------------------------------------- */

/* Where the listing goes: opt->out_path through a temporary renamed at the
 * end (afile), or a stream through a spool copied to it at the end, so that
 * a run that fails part way (an overflow in a later class) leaves nothing
 * on the stream, not even the header lines it had printed. */
typedef struct dest {
    afile af;
    spool sp;
    FILE *f;
} dest;

static tb_status dest_open(dest *d, const tb_print_options *opt, tb_error *err)
{
    if (opt->out_path) {
        (void)dirs_make(opt->out_path, 0, 0777); /* a failure is the file's, said next */
        tb_status st = afile_open(opt->out_path, &d->af, err);
        d->f = st ? NULL : d->af.f;
        return st;
    }
    tb_status st = spool_open(&d->sp, "tracebook-print", "listing", err);
    if (st)
        return st;
    if (!(d->f = fopen(d->sp.path, "w")))
        return tb_error_at(err, TB_ERR_IO, d->sp.path, 0, 0, -1, "cannot write: %s", strerror(errno));
    return TB_OK;
}

/* Commits the listing when st is TB_OK, else drops it; returns st or the commit's failure. */
static tb_status dest_close(dest *d, const tb_print_options *opt, tb_status st, tb_error *err)
{
    if (opt->out_path) {
        if (!d->f)
            return st;
        if (st == TB_OK)
            return afile_commit(&d->af, err);
        afile_abort(&d->af);
        return st;
    }
    if (d->f && fclose(d->f) != 0 && st == TB_OK)
        st = tb_error_at(err, TB_ERR_IO, d->sp.path, 0, 0, -1, "cannot write: %s", strerror(errno));
    tb_status sent = spool_close(&d->sp, opt->out, st == TB_OK, "the listing", err);
    return st ? st : sent;
}

static tb_status run(tb_session *s, const tb_print_options *opt, int trace, tb_error *err)
{
    if (!opt->out_path && !opt->out)
        return tb_error_set(err, TB_ERR_USAGE, "print: no output given");
    lst l = {.opt = opt, .err = err, .db = session_db(s, err), .db_path = tb_session_db_path(s),
             .verb = trace ? "print trace" : "print summary"};
    dest d = {0};
    window_info wi = {0};
    tb_status st;
    if (!l.db)
        return err->code;
    sqlite3_stmt *probe;
    if (sqlite3_prepare_v2(l.db, "SELECT 1 FROM device_task, api LIMIT 0", -1, &probe, NULL) != SQLITE_OK) {
        st = tb_error_at(err, TB_ERR_PARSE, l.db_path, 0, 0, -1, "not a DB written by tracebook: %s",
                         sqlite3_errmsg(l.db));
        goto done;
    }
    sqlite3_finalize(probe);
    sqlite3_exec(l.db, "PRAGMA temp_store = FILE", NULL, NULL, NULL);
    if ((st = window_apply(l.db, tb_session_window(s), &wi, err)))
        goto done;
    if (opt->width > 0 && (st = make_names(&l)))
        goto done;
    if ((st = dest_open(&d, opt, err)))
        goto done;
    l.f = d.f;
    if (trace) {
        st = opt->per_device ? trace_per_device(&l) : trace_section(&l, "1");
    } else if (opt->per_device) {
        st = summary_per_device(&l);
    } else {
        fputs(stat_header, l.f);
        for (size_t i = 0; i < N_CLASSES && !st; i++)
            st = stat_class(&l, &classes[i], "1");
    }
    if (!st && l.nomem)
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (!st && ferror(l.f))
        st = tb_error_set(err, TB_ERR_IO, "cannot write the listing");
done:
    st = dest_close(&d, opt, st, err);
    free(l.name);
    sqlite3_finalize(l.shown);
    window_info_finish(&wi);
    window_reset(l.db);
    return st;
}

tb_status tb_print_summary(tb_session *s, const tb_print_options *opt, tb_error *err)
{
    return run(s, opt, 0, err);
}

tb_status tb_print_trace(tb_session *s, const tb_print_options *opt, tb_error *err)
{
    return run(s, opt, 1, err);
}
