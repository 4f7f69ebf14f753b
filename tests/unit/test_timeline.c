/* SPDX-License-Identifier: MIT */
/*
 * test_timeline.c - `export timeline` (tb_timeline_write) end to end: the
 * samples are loaded with tb_load(), exported, and every file written is
 * parsed strictly (jansson, duplicate keys rejected) and checked: every X
 * event has name, pid, tid, ts and dur, every pid is named by a
 * process_name event of the same file, every flow start has its finish in
 * the same file, and the numbers of events are exactly the numbers of rows
 * the DB holds for the layers and the window asked for. Slices must each be
 * such a file, and their events add up to the unsliced export's.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "output/timeline_out.h"
#include "query/window.h"
#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"

/* room for tmpdir and a name under it */
#define PBUF (PATH_MAX + 128)

/* samples/rel of the source tree; skips the test when there is none. */
static void sample(char *path, size_t cap, const char *rel)
{
    if (!tu_samples_path(path, cap, rel)) {
        print_message("samples not found: skipping\n");
        skip();
    }
}

/* Loads samples/rel into tmpdir/name (once per name). */
static void load_sample(const char *rel, const char *name, char *db, size_t n)
{
    char in[PBUF];
    sample(in, sizeof in, rel);
    snprintf(db, n, "%s/%s", tmpdir, name);
    if (access(db, R_OK) == 0)
        return;
    const char *inputs[] = {in};
    tb_load_options o = {.inputs = inputs, .n_inputs = 1, .output = db};
    tb_error err;
    tb_error_clear(&err);
    if (tb_load(&o, NULL, &err) != TB_OK)
        fail_msg("load %s: %s", in, err.message);
}

typedef struct files {
    char path[16][PATH_MAX];
    size_t n;
} files;

static void on_written(void *ctx, const char *path)
{
    files *f = ctx;
    assert_true(f->n < 16);
    snprintf(f->path[f->n++], PATH_MAX, "%s", path);
}

/* tb_timeline_write over a session of the DB at db (read as it is) with window w. */
static tb_status timeline_of(const char *db, tb_window w, const tb_timeline_options *o, tb_timeline_result *res,
                             tb_error *err)
{
    const char *in[] = {db};
    tb_session *s = NULL;
    tb_status st = tb_session_open(&(tb_session_options){.inputs = in, .n_inputs = 1, .window = w}, &s, err);
    if (st == TB_OK)
        st = tb_timeline_write(s, o, res, err);
    tb_session_close(s);
    return st;
}

/* Exports db into tmpdir/out with the given options; fills fl. */
static tb_timeline_result export_db(const char *db, const char *out, const tb_spec *spec, tb_window win,
                                    int64_t slice, files *fl)
{
    char dir[PBUF];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, out);
    memset(fl, 0, sizeof *fl);
    tb_timeline_options o = {.out_dir = dir, .spec = spec, .slice_bytes = slice, .written = on_written, .ctx = fl};
    tb_timeline_result res;
    tb_error err;
    tb_error_clear(&err);
    if (timeline_of(db, win, &o, &res, &err) != TB_OK)
        fail_msg("export %s: %s", db, err.message);
    assert_i64((int64_t)fl->n, (int64_t)res.files);
    return res;
}

/* What one file holds. */
typedef struct stats {
    int64_t x, c, s, f, m, other;
    int64_t x_in[8];          /* X events per layer: see layer_index */
    int kineto;               /* top-level object */
} stats;

static const char *const layers[] = {"Python", "CANN", "Ascend Hardware", "Communication", "Overlap Analysis",
                                     "NPU MEM", "MsprofTx", NULL};

static int layer_index(json_t *names, json_t *pid)
{
    char key[64];
    if (json_is_integer(pid))
        snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(pid));
    else
        snprintf(key, sizeof key, "s:%s", json_string_value(pid));
    const char *name = json_string_value(json_object_get(names, key));
    for (int i = 0; name && layers[i]; i++)
        if (strcmp(name, layers[i]) == 0)
            return i;
    return 7;
}

static void pid_key(json_t *pid, char *key, size_t n)
{
    if (json_is_integer(pid))
        snprintf(key, n, "%" JSON_INTEGER_FORMAT, json_integer_value(pid));
    else if (json_is_string(pid))
        snprintf(key, n, "s:%s", json_string_value(pid));
    else
        fail_msg("pid is neither a number nor a string");
}

/* Parses path strictly and checks the format's invariants; fills st. */
static void check_file(const char *path, stats *st)
{
    memset(st, 0, sizeof *st);
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
    json_t *events = doc;
    if (json_is_object(doc)) {
        st->kineto = 1;
        events = json_object_get(doc, "traceEvents");
    }
    assert_true(json_is_array(events));
    json_t *names = json_object(), *flows = json_object();
    size_t i;
    json_t *e;
    char key[160];
    json_array_foreach(events, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        assert_non_null(ph);
        if (strcmp(ph, "M") == 0 && strcmp(json_string_value(json_object_get(e, "name")), "process_name") == 0) {
            pid_key(json_object_get(e, "pid"), key, sizeof key);
            json_object_set(names, key, json_object_get(json_object_get(e, "args"), "name"));
        }
    }
    json_array_foreach(events, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        json_t *pid = json_object_get(e, "pid");
        if (pid) {
            pid_key(pid, key, sizeof key);
            if (!json_object_get(names, key))
                fail_msg("%s: pid %s is not named", path, key);
        }
        if (strcmp(ph, "X") == 0) {
            assert_true(json_is_string(json_object_get(e, "name")));
            assert_non_null(pid);
            assert_non_null(json_object_get(e, "tid"));
            assert_true(json_is_number(json_object_get(e, "dur")));
            json_t *ts = json_object_get(e, "ts");
            if (st->kineto) {
                assert_true(json_is_number(ts));
            } else {
                /* µs as a string with exactly 3 decimals */
                assert_true(json_is_string(ts));
                const char *s = json_string_value(ts), *dot = strchr(s, '.');
                assert_non_null(dot);
                assert_int_equal(strlen(dot), 4);
            }
            st->x++;
            st->x_in[layer_index(names, pid)]++;
        } else if (strcmp(ph, "C") == 0) {
            st->c++;
        } else if (strcmp(ph, "M") == 0) {
            st->m++;
        } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
            const char *cat = json_string_value(json_object_get(e, "cat"));
            json_t *id = json_object_get(e, "id");
            if (json_is_integer(id))
                snprintf(key, sizeof key, "%s/%" JSON_INTEGER_FORMAT, cat, json_integer_value(id));
            else
                snprintf(key, sizeof key, "%s/%s", cat, json_string_value(id));
            json_int_t n = json_integer_value(json_object_get(flows, key));
            json_object_set_new(flows, key, json_integer(n + (ph[0] == 's' ? 1 : -1)));
            if (ph[0] == 's')
                st->s++;
            else
                st->f++;
        } else {
            st->other++;
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(flows, k, v) {
        if (json_integer_value(v) != 0)
            fail_msg("%s: flow %s has %d unpaired ends", path, k, (int)json_integer_value(v));
    }
    json_decref(names);
    json_decref(flows);
    json_decref(doc);
}

/* rows of a DB, optionally through a window */
static int64_t count_rows(const char *db, const tb_window *w, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    window_info wi = {0};
    tb_error err;
    tb_error_clear(&err);
    if (w && window_apply(h, w, &wi, &err) != TB_OK)
        fail_msg("window: %s", err.message);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(h, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    window_info_finish(&wi);
    sqlite3_close(h);
    return n;
}

static const char hw_rows[] = "SELECT count(*) FROM TASK t WHERE NOT EXISTS "
                              "(SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId)";

/* Every row of the layers' tables is one X event; counters and flows as the DB holds them. */
static void test_whole(void **state)
{
    (void)state;
    char db[PBUF];
    load_sample("ascend_small", "ascend.db", db, sizeof db);
    files fl;
    tb_timeline_result res = export_db(db, "whole", NULL, (tb_window){0}, 0, &fl);
    assert_i64(1, (int64_t)fl.n);
    assert_non_null(strstr(fl.path[0], "/whole/msprof_20240102021227.json"));
    assert_i64(1, (int64_t)res.ranks);
    stats st;
    check_file(fl.path[0], &st);
    assert_false(st.kineto);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM PYTORCH_API"), st.x_in[0]);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM CANN_API"), st.x_in[1]);
    assert_i64(count_rows(db, NULL, hw_rows), st.x_in[2]);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM COMMUNICATION_OP"), st.x_in[3]);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM OVERLAP_ANALYSIS"), st.x_in[4]);
    assert_i64(0, st.x_in[7]);
    assert_i64(count_rows(db, NULL, "SELECT count(DISTINCT pid || '/' || name || '/' || timestampNs) FROM TB_COUNTER"),
               st.c);
    int64_t flows = count_rows(db, NULL, "SELECT count(*) FROM TB_FLOW WHERE fromNs IS NOT NULL AND toNs IS NOT NULL");
    assert_true(flows > 0);
    assert_i64(flows, st.s);
    assert_i64(flows, st.f);
    assert_i64(0, st.other);
    assert_i64(st.x + st.c + st.s + st.f + st.m, (int64_t)res.events);
    /* the sample itself holds 2500 events, metadata included: all of them come
     * back, after the one naming tracebook and the inputs (the origin event) */
    assert_i64(2500 + 1, (int64_t)res.events);
}

/* json_process: only the layers asked for (and Python, which has no key). */
static void test_layers(void **state)
{
    (void)state;
    char db[PBUF], cfg[PBUF];
    load_sample("ascend_small", "ascend.db", db, sizeof db);
    write_text("reports_sample_config.json", "{\"json_process\": {\"ascend\": true, \"cann\": false}}", cfg,
               sizeof cfg);
    tb_spec *spec = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_spec_load(cfg, &spec, NULL, NULL, &err), TB_OK);
    files fl;
    export_db(db, "layers", spec, (tb_window){0}, 0, &fl);
    stats st;
    check_file(fl.path[0], &st);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM PYTORCH_API"), st.x_in[0]);
    assert_i64(0, st.x_in[1]);
    assert_i64(count_rows(db, NULL, hw_rows), st.x_in[2]);
    assert_i64(0, st.x_in[3]);
    assert_i64(0, st.x_in[4]);
    assert_i64(0, st.c); /* NPU MEM */
    assert_i64(st.x_in[0] + st.x_in[2], st.x);
    /* flows with an end in CANN are gone; Python -> Ascend Hardware stay */
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM flow WHERE cat IN ('async_npu', 'async_task_queue', "
                                    "'fwdbwd') AND fromNs IS NOT NULL AND toNs IS NOT NULL"),
               st.s);
    tb_spec_free(spec);
}

/* A window: exactly the rows the window's views hold. */
static void test_window(void **state)
{
    (void)state;
    char db[PBUF];
    load_sample("ascend_small", "ascend.db", db, sizeof db);
    tb_window w = {.set = 1, .model_id = 4294967295LL, .iteration_id = 9, .iteration_count = 1};
    files fl;
    tb_timeline_result res = export_db(db, "window", NULL, w, 0, &fl);
    assert_string_equal(res.window_label, "9");
    assert_non_null(strstr(fl.path[0], "/window/msprof_20240102021227_9.json"));
    stats st;
    check_file(fl.path[0], &st);
    int64_t py = count_rows(db, &w, "SELECT count(*) FROM PYTORCH_API");
    assert_true(py > 0 && py < count_rows(db, NULL, "SELECT count(*) FROM PYTORCH_API"));
    assert_i64(py, st.x_in[0]);
    assert_i64(count_rows(db, &w, "SELECT count(*) FROM CANN_API"), st.x_in[1]);
    assert_i64(count_rows(db, &w, hw_rows), st.x_in[2]);
    assert_i64(count_rows(db, &w, "SELECT count(*) FROM COMMUNICATION_OP"), st.x_in[3]);
    assert_i64(count_rows(db, &w, "SELECT count(*) FROM OVERLAP_ANALYSIS"), st.x_in[4]);
    assert_i64(count_rows(db, &w, "SELECT count(*) FROM TB_FLOW WHERE fromNs IS NOT NULL AND toNs IS NOT NULL"),
               st.s);
    /* a window the data lacks is a usage error, and nothing is written */
    tb_window bad = {.set = 1, .model_id = TB_STEP_MODEL_ID, .iteration_id = 99, .iteration_count = 1};
    char dir[PBUF];
    snprintf(dir, sizeof dir, "%s/badwindow", tmpdir);
    tb_timeline_options o = {.out_dir = dir};
    tb_timeline_result r2;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(timeline_of(db, bad, &o, &r2, &err), TB_ERR_USAGE);
    assert_i64(0, (int64_t)r2.files);
}

/* Slices: each a valid file under msprof's names, events adding up. */
static void test_slices(void **state)
{
    (void)state;
    char db[PBUF];
    load_sample("ascend_small", "ascend.db", db, sizeof db);
    files whole, sl;
    export_db(db, "unsliced", NULL, (tb_window){0}, 0, &whole);
    stats all;
    check_file(whole.path[0], &all);
    const int64_t limit = 64 * 1024;
    tb_timeline_result res = export_db(db, "sliced", NULL, (tb_window){0}, limit, &sl);
    assert_true(sl.n >= 5); /* about 420 KB */
    int64_t x = 0, c = 0, s = 0;
    for (size_t i = 0; i < sl.n; i++) {
        char want[64];
        snprintf(want, sizeof want, "/sliced/msprof_slice_%zu_20240102021227.json", i);
        assert_non_null(strstr(sl.path[i], want));
        struct stat sb;
        assert_int_equal(stat(sl.path[i], &sb), 0);
        /* each slice stays under the limit, but for the metadata of the processes it met last */
        assert_true(sb.st_size <= limit + 2048);
        stats st;
        check_file(sl.path[i], &st);
        assert_true(st.x + st.c + st.s > 0);
        x += st.x;
        c += st.c;
        s += st.s;
    }
    assert_i64(all.x, x);
    assert_i64(all.c, c);
    assert_i64(all.s, s);
    assert_i64((int64_t)sl.n, (int64_t)res.files);
    /* no unsliced file beside the slices */
    char p[PBUF];
    snprintf(p, sizeof p, "%s/sliced/msprof_20240102021227.json", tmpdir);
    assert_int_not_equal(access(p, F_OK), 0);
    /* a limit above the size: one file, the unsliced name */
    files one;
    export_db(db, "big_limit", NULL, (tb_window){0}, 100 * 1024 * 1024, &one);
    assert_i64(1, (int64_t)one.n);
    assert_non_null(strstr(one.path[0], "/big_limit/msprof_20240102021227.json"));
}

/* Several ranks: one file per rank, named apart. */
static void test_ranks(void **state)
{
    (void)state;
    char db[PBUF];
    load_sample("torch_npu_2rank", "two.db", db, sizeof db);
    files fl;
    tb_timeline_result res = export_db(db, "ranks", NULL, (tb_window){0}, 0, &fl);
    assert_i64(2, (int64_t)res.ranks);
    assert_i64(2, (int64_t)fl.n);
    assert_non_null(strstr(fl.path[0], "_rank0.json"));
    assert_non_null(strstr(fl.path[1], "_rank1.json"));
    for (int r = 0; r < 2; r++) {
        stats st;
        check_file(fl.path[r], &st);
        char sql[160];
        /* tasks: Ascend Hardware, and the small HCCL tasks beside the ops in Communication */
        snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM TASK WHERE rankId = %d) + "
                 "(SELECT count(*) FROM COMMUNICATION_OP WHERE rankId = %d)", r, r);
        assert_i64(count_rows(db, NULL, sql), st.x_in[2] + st.x_in[3]);
    }
}

/* Kineto keeps its layout: an object, numeric ts, its categories. */
static void test_kineto(void **state)
{
    (void)state;
    char db[PBUF];
    load_sample("kineto_small", "kineto.db", db, sizeof db);
    files fl;
    export_db(db, "kineto", NULL, (tb_window){0}, 0, &fl);
    stats st;
    check_file(fl.path[0], &st);
    assert_true(st.kineto);
    assert_i64(count_rows(db, NULL, "SELECT (SELECT count(*) FROM TASK) + (SELECT count(*) FROM CANN_API) + "
                                    "(SELECT count(*) FROM PYTORCH_API) + "
                                    "(SELECT count(*) FROM TB_EVENT WHERE ph = 'X')"),
               st.x);
    json_error_t je;
    json_t *doc = json_load_file(fl.path[0], 0, &je);
    assert_non_null(doc);
    assert_true(json_is_integer(json_object_get(doc, "baseTimeNanoseconds")));
    assert_i64(0, json_integer_value(json_object_get(json_object_get(doc, "distributedInfo"), "rank")));
    json_t *e;
    size_t i;
    int kernels = 0;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat && strcmp(cat, "kernel") == 0) {
            kernels++;
            assert_non_null(json_object_get(json_object_get(e, "args"), "correlation"));
        }
    }
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                                    "WHERE s.value = 'kernel'"),
               kernels);
    json_decref(doc);
}

/* A DB without the timeline's processes, flows and lanes (an msprof DB):
 * processes made with msprof's pid layout, lanes computed. */
static void test_made_processes(void **state)
{
    (void)state;
    char src[PBUF], db[PBUF];
    load_sample("ascend_small", "ascend.db", src, sizeof src);
    snprintf(db, sizeof db, "%s/bare.db", tmpdir);
    char cmd[3 * PBUF];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, db);
    assert_int_equal(system(cmd), 0);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    /* and memory as an msprof DB holds it: bytes, events 'app' and 'device' */
    assert_int_equal(sqlite3_exec(h, "DELETE FROM TB_PROCESS; DELETE FROM TB_THREAD; DELETE FROM TB_FLOW; "
                                     "DELETE FROM TB_COUNTER; DELETE FROM OVERLAP_ANALYSIS;"
                                     "INSERT INTO STRING_IDS VALUES (900001, 'app'), (900002, 'device');"
                                     "INSERT INTO NPU_MEM VALUES (900001, 2048, 1048576, 1704161547420306491, 0, 0),"
                                     "  (900002, 0, 3072, 1704161547420406491, 0, 0)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    files fl;
    export_db(db, "bare", NULL, (tb_window){0}, 0, &fl);
    stats st;
    check_file(fl.path[0], &st);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM PYTORCH_API"), st.x_in[0]);
    assert_i64(count_rows(db, NULL, "SELECT count(*) FROM CANN_API"), st.x_in[1]);
    assert_i64(count_rows(db, NULL, hw_rows), st.x_in[2]);
    assert_true(st.x_in[4] > 0); /* computed lanes */
    assert_i64(6, st.c);        /* NPU MEM: three series per NPU_MEM row */
    /* HostToDevice flows from the connection ids: one per task a CANN call launched */
    int64_t h2d = count_rows(db, NULL, "SELECT count(*) FROM TASK t WHERE t.connectionId IN "
                                       "(SELECT connectionId FROM CANN_API) AND NOT EXISTS "
                                       "(SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId)");
    assert_true(h2d > 0);
    assert_i64(h2d, st.s);
    assert_i64(h2d, st.f);
    json_error_t je;
    json_t *doc = json_load_file(fl.path[0], 0, &je);
    json_t *e;
    size_t i;
    int streams = 0;
    json_array_foreach(doc, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *pid = json_object_get(e, "pid");
        if (strcmp(name, "process_name") == 0 &&
            strcmp(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "Ascend Hardware") == 0) {
            /* (realPid << 10) | (14 << 5) | device 0, realPid the Python pid 437675 */
            assert_i64(((int64_t)437675 << 10) | (14 << 5), json_integer_value(pid));
        }
        if (strcmp(name, "APP/Memory") == 0) {
            assert_string_equal(json_string_value(json_object_get(e, "ts")), "1704161547420306.491");
            assert_true(json_number_value(json_object_get(json_object_get(e, "args"), "KB")) == 1026.0);
        }
        if (strcmp(name, "Device/HBM") == 0)
            assert_true(json_number_value(json_object_get(json_object_get(e, "args"), "KB")) == 3.0);
        if (strcmp(name, "thread_name") == 0 &&
            strncmp(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "Stream ", 7) == 0)
            streams++;
    }
    assert_i64(count_rows(db, NULL, "SELECT count(DISTINCT streamId) FROM TASK t WHERE NOT EXISTS "
                                    "(SELECT 1 FROM COMMUNICATION_TASK_INFO c WHERE c.globalTaskId = t.globalTaskId)"),
               streams);
    json_decref(doc);
}

/* An output never replaces a file the DB was loaded from. */
static void test_no_replace(void **state)
{
    (void)state;
    char db[PBUF], db2[PBUF], dir[PBUF];
    load_sample("ascend_small", "ascend.db", db, sizeof db);
    files fl;
    export_db(db, "again", NULL, (tb_window){0}, 0, &fl);
    /* load the exported timeline, then export that DB into the same directory */
    snprintf(db2, sizeof db2, "%s/again.db", tmpdir);
    const char *inputs[] = {fl.path[0]};
    tb_load_options lo = {.inputs = inputs, .n_inputs = 1, .output = db2};
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_load(&lo, NULL, &err), TB_OK);
    struct stat before, after;
    assert_int_equal(stat(fl.path[0], &before), 0);
    snprintf(dir, sizeof dir, "%s/again", tmpdir);
    tb_timeline_options o = {.out_dir = dir};
    tb_timeline_result res;
    assert_int_equal(timeline_of(db2, (tb_window){0}, &o, &res, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "refusing to replace an input file"));
    assert_int_equal(stat(fl.path[0], &after), 0);
    assert_true(before.st_ino == after.st_ino && before.st_mtime == after.st_mtime);
    /* and nothing else was left in the directory */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 1);
}

/* The writer's exact text: times from ns, durations, integers, escapes. */
static void test_writer_text(void **state)
{
    (void)state;
    char dir[PBUF];
    snprintf(dir, sizeof dir, "%s/writer", tmpdir);
    mkdir(dir, 0755);
    tlw *w = NULL;
    tb_error err;
    tb_error_clear(&err);
    tlw_options o = {.dir = dir, .stem = "msprof", .suffix = "1"};
    assert_int_equal(tlw_create(&o, &w, &err), TB_OK);
    tlw_begin(w);
    tlw_cstr(w, "name", "a\"b\\c\n\x01\xff\xc3\xa9");
    tlw_us(w, "ts", 1704161547420306491LL, 1);
    tlw_us(w, "t2", 5, 0);
    tlw_us(w, "t3", -1500, 1);
    tlw_dur(w, "dur", 8340);
    tlw_dur(w, "d2", 1000);
    tlw_obj(w, "args");
    tlw_int(w, "min", INT64_MIN);
    tlw_int(w, "max", INT64_MAX);
    tlw_int(w, "k\"ey", 0);
    tlw_real(w, "r", 0.1);
    tlw_real(w, "tiny", 2.5000000000000047e-07);
    tlw_real(w, "huge", 1e21);
    tlw_obj_end(w);
    assert_int_equal(tlw_end(w, &err), TB_OK);
    tlw_begin(w);
    tlw_cstr(w, "ph", "s");
    tlw_next(w);
    tlw_cstr(w, "ph", "f");
    assert_int_equal(tlw_end(w, &err), TB_OK);
    assert_i64(3, (int64_t)tlw_events(w));
    assert_int_equal(tlw_finish(w, &err), TB_OK);
    const char *const *paths;
    assert_int_equal(tlw_files(w, &paths), 1);
    FILE *f = fopen(paths[0], "rb");
    assert_non_null(f);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    tlw_destroy(w);
    assert_bytes(buf, n,
                 "[\n{\"name\": \"a\\\"b\\\\c\\n\\u0001\\ufffd\xc3\xa9\", \"ts\": \"1704161547420306.491\", "
                 "\"t2\": 0.005, \"t3\": \"-1.500\", \"dur\": 8.34, \"d2\": 1, \"args\": {\"min\": -9223372036854775808, "
                 "\"max\": 9223372036854775807, \"k\\\"ey\": 0, \"r\": 0.1, \"tiny\": 0.00000025000000000000047, "
                 "\"huge\": 1000000000000000000000.0}},\n{\"ph\": \"s\"},\n{\"ph\": \"f\"}\n]\n");
}

/* msprof_slice.json */
static void test_slice_config(void **state)
{
    (void)state;
    char p[PBUF];
    int64_t b = -1;
    tb_error err;
    tb_error_clear(&err);
    write_text("s1.json", "{\"slice_switch\": \"on\", \"slice_file_size(MB)\": 300, \"strategy\": 0}", p, sizeof p);
    assert_int_equal(tb_timeline_slice_config(p, &b, &err), TB_OK);
    assert_i64(300LL << 20, b);
    write_text("s2.json", "{\"slice_switch\": \"on\", \"slice_file_size(MB)\": 100}", p, sizeof p);
    assert_int_equal(tb_timeline_slice_config(p, &b, &err), TB_OK);
    assert_i64(200LL << 20, b);
    write_text("s3.json", "{\"slice_switch\": \"off\", \"slice_file_size(MB)\": 300}", p, sizeof p);
    assert_int_equal(tb_timeline_slice_config(p, &b, &err), TB_OK);
    assert_i64(0, b);
    write_text("s4.json", "{\"slice_switch\": ", p, sizeof p);
    assert_int_equal(tb_timeline_slice_config(p, &b, &err), TB_ERR_PARSE);
    assert_int_equal(err.line, 1);
    snprintf(p, sizeof p, "%s/absent.json", tmpdir);
    assert_int_equal(tb_timeline_slice_config(p, &b, &err), TB_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),        cmocka_unit_test(test_layers), cmocka_unit_test(test_window),
        cmocka_unit_test(test_slices),       cmocka_unit_test(test_ranks),  cmocka_unit_test(test_kineto),
        cmocka_unit_test(test_made_processes), cmocka_unit_test(test_no_replace),
        cmocka_unit_test(test_slice_config),   cmocka_unit_test(test_writer_text),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
