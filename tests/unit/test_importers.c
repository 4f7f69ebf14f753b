/* SPDX-License-Identifier: MIT */
/*
 * test_importers.c - every importer reports a failure of the DB writer
 * through tb_error: the writer's own message and code, and the file.
 *
 * A row sink that refuses its k-th call (an intern or a row) stands in for a
 * DB writer whose disk is full; each importer reads a small input through it
 * for every k until one pass gets through, and every refused pass must end
 * with the sink's error, not a guess.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "db/rows.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_json),
        cmocka_unit_test(summary_csv),
        cmocka_unit_test(topsprof_listing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
