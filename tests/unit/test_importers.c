/* SPDX-License-Identifier: MIT */
/*
 * test_importers.c - every importer reports a failure of the DB writer
 * through tb_error: the writer's own message and code, and the file.
 *
 * A row sink that refuses its k-th call (an intern or a row) stands in for a
 * DB writer whose disk is full; each importer reads a small input through it
 * for every k until one pass gets through, and every refused pass must end
 * with the sink's error, not a guess.
 *
 * Also: an msprof DB's sample tables (HBM, DDR), ENUM rows and unknown
 * tables and columns reach the sink or are named (the warning, the note),
 * and row sets hold every row table. A kernel's type taken from its name
 * follows the rules of docs/inputs.md "Kernel types".
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "db/rows.h"
#include "ingest/kernel_type.h"
#include "ingest/msprof_db.h"
#include "ingest/npu_text.h"
#include "ingest/topsprof_import.h"
#include "ingest/trace_import.h"
#include "testutil.h"

typedef struct failing {
    long calls, fail_at; /* the call that fails (1-based); 0 never */
    tb_error err;
    int64_t next_id;
} failing;

static int refuse(failing *f)
{
    if (f->fail_at && ++f->calls >= f->fail_at) {
        tb_error_set(&f->err, TB_ERR_IO, "the disk is full");
        return 1;
    }
    return 0;
}

static int64_t f_intern(void *ctx, const char *s, size_t n)
{
    (void)s;
    (void)n;
    failing *f = ctx;
    return refuse(f) ? -1 : ++f->next_id;
}

static int f_row(void *ctx, int table, const tb_val *v)
{
    (void)table;
    (void)v;
    return refuse(ctx) ? -1 : 0;
}

static const tb_error *f_error(void *ctx)
{
    return &((failing *)ctx)->err;
}

typedef tb_status (*import_fn)(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                               import_result *res, tb_error *err);

/* Runs imp on path failing at call k = 1, 2, ... until a pass succeeds; each failure must carry the sink's error. */
static void check_importer(import_fn imp, const char *path)
{
    long refused = 0;
    for (long k = 1; k < 100000; k++) {
        failing f = {.fail_at = k};
        row_sink sink = {.ctx = &f, .intern = f_intern, .row = f_row, .error = f_error};
        import_ids ids = {1, 1, 1, 1};
        import_opts opt = {.rank = 0};
        import_result res;
        tb_error err;
        tb_error_clear(&err);
        tb_status st = imp(path, &sink, &ids, &opt, &res, &err);
        if (st == TB_OK) {
            assert_true(f.calls < k); /* the pass that made fewer calls than the refusal */
            assert_true(refused > 0);
            return;
        }
        refused++;
        if (st != TB_ERR_IO || strcmp(err.message, "the disk is full") != 0)
            fail_msg("%s, refused at call %ld: status %d, message '%s'", path, k, (int)st, err.message);
        assert_string_equal(err.file, path);
    }
    fail_msg("%s: never got through", path);
}

static void trace_json(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_text("trace_view.json",
               "[{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"args\": {\"name\": \"Ascend Hardware\"}},\n"
               " {\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 7, \"args\": {\"labels\": \"NPU 0\"}},\n"
               " {\"ph\": \"X\", \"name\": \"MatMul\", \"pid\": 7, \"tid\": 3, \"ts\": \"1.000\", \"dur\": 2.5,"
               " \"args\": {\"Task Type\": \"AI_CORE\", \"connection_id\": 12}},\n"
               " {\"ph\": \"s\", \"name\": \"HostToDevice\", \"cat\": \"HostToDevice\", \"id\": \"12\", \"pid\": 1,"
               " \"tid\": 1, \"ts\": \"0.5\"},\n"
               " {\"ph\": \"f\", \"name\": \"HostToDevice\", \"cat\": \"HostToDevice\", \"id\": \"12\", \"pid\": 7,"
               " \"tid\": 3, \"ts\": \"1.000\", \"bp\": \"e\"}]\n",
               path, sizeof path);
    check_importer(trace_import, path);
}

static void summary_csv(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_text("kernel_details.csv",
               "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
               "Wait Time(us),Block Dim\n"
               "1,4294967295,10,2,MatMul,MatMul,AI_CORE,1704161547420374.537,5.489,0.0,8\n"
               "1,4294967295,11,2,Add,Add,AI_VECTOR_CORE,1704161547420384.000,1.5,0.0,4\n",
               path, sizeof path);
    check_importer(npu_text_import, path);
}

static void topsprof_listing(void **state)
{
    (void)state;
    char path[PATH_MAX];
    write_text("summary.txt",
               "==1== Device \"Enflame GCU (0)\"\n"
               "==1==      Time(%)     Time  Calls      Avg      Min      Max  Name\n"
               "==1== GCU activities:\n"
               "==1==       75.00%    1.20s      4 300.00ms 250.00ms 350.00ms fused_matmul\n"
               "==1==       25.00% 400.00ms      8  50.00ms   1.00ms  99.00ms layer_norm\n"
               "==1==     Accumulate Time 1.60s, Total Calls 12\n"
               "==1==     Total Time 2.00s\n",
               path, sizeof path);
    check_importer(topsprof_import, path);
}

/* An msprof DB in the older layout: HBM with a string-id type, DDR, an ENUM
 * table, a viewer's table with a row, an empty one, a column tracebook lacks. */
static void make_msprof_db(char *path, size_t n)
{
    write_text("msprof_1.db", "", path, n);
    unlink(path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
                                  "INSERT INTO STRING_IDS VALUES (7, 'read'), (8, 'write');"
                                  "CREATE TABLE HBM (deviceId INTEGER, timestampNs INTEGER, bandwidth NUMERIC,"
                                  " hbmId INTEGER, type INTEGER, extra INTEGER);"
                                  "INSERT INTO HBM VALUES (1, 10, 5.5, 0, 7, 1), (1, 20, 6, 1, 8, 1),"
                                  " (1, 30, 7, 0, 7, 1);"
                                  "CREATE TABLE DDR (deviceId INTEGER, timestampNs INTEGER, read NUMERIC,"
                                  " write NUMERIC);"
                                  "INSERT INTO DDR VALUES (1, 10, 1, 2);"
                                  "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);"
                                  "INSERT INTO ENUM_API_TYPE VALUES (25000, 'pta');"
                                  "CREATE TABLE viewer_state (k TEXT); INSERT INTO viewer_state VALUES ('x');"
                                  "CREATE TABLE viewer_empty (k TEXT);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

static tb_status msprof_db_one(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                               import_result *res, tb_error *err)
{
    return msprof_db_import(path, sink, ids, opt, NULL, res, err);
}

static void msprof_db_sink_failure(void **state)
{
    (void)state;
    char path[PATH_MAX];
    make_msprof_db(path, sizeof path);
    check_importer(msprof_db_one, path);
}

/* A sink that counts rows per table and keeps HBM's type ids and ENUM names. */
typedef struct counting {
    long rows[R_TABLE_COUNT];
    int64_t next_id, hbm_types[8];
    char strings[8][16], enum_name[16], warning[512];
    int n_warnings;
} counting;

static int64_t c_intern(void *ctx, const char *s, size_t n)
{
    counting *c = ctx;
    int64_t id = c->next_id++;
    if (id < 8)
        snprintf(c->strings[id], sizeof c->strings[id], "%.*s", (int)n, s);
    return id;
}

static int c_row(void *ctx, int table, const tb_val *v)
{
    counting *c = ctx;
    if (table == R_HBM && c->rows[table] < 8)
        c->hbm_types[c->rows[table]] = v[4].i; /* deviceId,timestampNs,bandwidth,hbmId,type,rankId */
    if (table == R_SOURCE_ENUM)
        snprintf(c->enum_name, sizeof c->enum_name, "%.*s", (int)v[3].n, v[3].s);
    c->rows[table]++;
    return 0;
}

static void c_warn(void *ctx, const char *msg)
{
    counting *c = ctx;
    snprintf(c->warning, sizeof c->warning, "%s", msg);
    c->n_warnings++;
}

static void msprof_db_tables(void **state)
{
    (void)state;
    char path[PATH_MAX];
    make_msprof_db(path, sizeof path);
    counting c = {.next_id = 1};
    row_sink sink = {.ctx = &c, .intern = c_intern, .row = c_row};
    import_ids ids = {1, 1, 1, 1};
    import_opts opt = {.rank = 0, .warn = c_warn, .ctx = &c};
    import_result res;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(msprof_db_import(path, &sink, &ids, &opt, NULL, &res, &err), TB_OK);
    assert_int_equal(c.rows[R_HBM], 3);
    assert_int_equal(c.rows[R_DDR], 1);
    assert_int_equal(c.rows[R_SOURCE_ENUM], 1);
    assert_string_equal(c.enum_name, "pta");
    /* HBM.type re-interned: the ids of 'read' and 'write' in this sink */
    assert_string_equal(c.strings[c.hbm_types[0]], "read");
    assert_string_equal(c.strings[c.hbm_types[1]], "write");
    assert_string_equal(c.strings[c.hbm_types[2]], "read");
    char want[PATH_MAX + 128];
    snprintf(want, sizeof want, "%s: a table not loaded (not in msprof's DB schema): viewer_state (1 row)", path);
    assert_int_equal(c.n_warnings, 1);
    assert_string_equal(c.warning, want);
    assert_string_equal(res.note, "columns not copied: HBM.extra");
    assert_int_equal(res.dest[TB_DEST_OTHER_TABLES], 5);
    /* a later DB of the rank skips the tables this one filled */
    assert_true(row_set_has(&res.rows_filled, R_HBM) && row_set_has(&res.rows_filled, R_SOURCE_ENUM));
    counting c2 = {.next_id = 1};
    sink.ctx = &c2;
    opt = (import_opts){.rank = 0, .skip_rows = res.rows_filled};
    assert_int_equal(msprof_db_import(path, &sink, &ids, &opt, NULL, &res, &err), TB_OK);
    assert_int_equal(c2.rows[R_HBM] + c2.rows[R_DDR] + c2.rows[R_SOURCE_ENUM], 0);
    assert_int_equal(res.dest[TB_DEST_BETTER_SOURCE], 5); /* 3 HBM, 1 DDR, 1 ENUM row */
}

static void row_sets(void **state)
{
    (void)state;
    row_set s = {{0}}, o = {{0}};
    const int t[] = {0, 63, 64, R_TABLE_COUNT - 1};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_false(row_set_has(&s, t[i]));
        row_set_add(&s, t[i]);
        assert_true(row_set_has(&s, t[i]));
    }
    assert_false(row_set_has(&s, 1));
    assert_false(row_set_has(&s, 65));
    row_set_del(&s, 64);
    assert_false(row_set_has(&s, 64));
    assert_true(row_set_has(&s, 63));
    row_set_add(&o, 64);
    row_set_or(&s, &o);
    assert_true(row_set_has(&s, 64));
    /* every row table: its column count, within bounds, and its string columns among its columns */
    for (int k = 0; k < R_TABLE_COUNT; k++) {
        const row_table_def *d = &row_tables[k];
        assert_non_null(d->table);
        int n = 1;
        for (const char *p = d->columns; *p; p++)
            n += *p == ',';
        if (n != d->ncols)
            fail_msg("%s: %d columns listed, ncols %d", d->table, n, d->ncols);
        assert_true(d->ncols <= ROW_MAX_COLS);
        char list[1024];
        snprintf(list, sizeof list, "%s", d->strings);
        for (char *p = list, *e; *p; p = e ? e + 1 : p + strlen(p)) {
            e = strchr(p, ',');
            if (e)
                *e = 0;
            if (!row_is_string(k, p))
                fail_msg("%s: string column '%s'", d->table, p);
            char pat[1100];
            snprintf(pat, sizeof pat, ",%s,", p);
            char cols[1100];
            snprintf(cols, sizeof cols, ",%s,", d->columns);
            if (!strstr(cols, pat))
                fail_msg("%s: string column '%s' is not a column", d->table, p);
        }
    }
}

static int setup(void **state)
{
    (void)state;
    return tu_make_tmpdir("importers");
}

static int teardown(void **state)
{
    (void)state;
    return tu_remove_tmpdir();
}

static void type_is(int gpu, const char *name, const char *want)
{
    size_t len;
    const char *t = gpu ? kernel_type_gpu(name, strlen(name), &len) : kernel_type_ascend(name, strlen(name), &len);
    char got[256];
    snprintf(got, sizeof got, "%.*s", (int)len, t);
    assert_string_equal(got, want);
}

static void kernel_types(void **state)
{
    (void)state;
    type_is(0, "aclnnMm_MatMulCommon_MatMulV2", "MatMulV2");
    type_is(0, "trans_Cast_7", "Cast");
    type_is(0, "aclnnMm_TransData_TransData<float, 4>_0a1b2c3d4e", "TransData");
    type_is(0, "MatMul", "MatMul");
    type_is(0, "Default/network-WithLossCell/Conv2D-op239", "Conv2D");
    type_is(0, "12_34", "");
    type_is(0, "", "");
    type_is(1, "ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn");
    type_is(1, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float,"
               " float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float>)", "MeanOps");
    type_is(1, "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5"
               "_nn_align1::Params)", "cutlass_80_simt_sgemm_128x32_8x5_nn_align1");
    type_is(1, "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_"
               "kernel_impl<float, float>(at::TensorIteratorBase&)::{lambda()#1}, std::array<char*, 2ul> >(int)",
            "pow_tensor_scalar_kernel_impl");
    type_is(1, "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::Binary"
               "Functor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >"
               "(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16> const&)::{lambda(int)#1}>(int)",
            "MulFunctor");
    type_is(1, "void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false>(float*)",
            "softmax_warp_forward");
    /* a launcher whose arguments name no operation keeps its own name */
    type_is(1, "void at::native::elementwise_kernel<128, 4>(int)", "elementwise_kernel");
    /* cut short: no closing '>' */
    type_is(1, "void cutlass::Kernel<Foo", "Foo");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_json),
        cmocka_unit_test(summary_csv),
        cmocka_unit_test(topsprof_listing),
        cmocka_unit_test(msprof_db_sink_failure),
        cmocka_unit_test(msprof_db_tables),
        cmocka_unit_test(row_sets),
        cmocka_unit_test(kernel_types),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
