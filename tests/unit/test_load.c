/* SPDX-License-Identifier: MIT */
/*
 * test_load.c - the loading stage end to end through tb_load(): routing of
 * Ascend and Kineto events into the unified tables, flow pairing, device and
 * rank rules, the spill path for metadata that comes late, and the atomic
 * output rules. Each case writes a small trace with known content into a
 * temporary directory and checks exact rows with SQL.
 */
#define _POSIX_C_SOURCE 200809L
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
#include <sqlite3.h>

#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"


static int setup_dir(void **state)
{
    (void)state;
    return tu_make_tmpdir("tb-load");
}

static int teardown_dir(void **state)
{
    (void)state;
    return tu_remove_tmpdir();
}


/* Loads the given inputs into tmpdir/name; returns the status. */
static tb_status load(const char *name, const char *const *inputs, size_t n, int strict, tb_error *err,
                      char *db, size_t dbn)
{
    snprintf(db, dbn, "%s/%s", tmpdir, name);
    unlink(db);
    tb_load_options o = {.inputs = inputs, .n_inputs = n, .output = db, .strict = strict};
    return tb_load(&o, NULL, err);
}


/* Runs a query returning one text value into out. */
static const char *qs(const char *db, char *out, size_t n, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad SQL %s: %s", sql, sqlite3_errmsg(h));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(out, n, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

/* An Ascend timeline whose metadata comes after the events (spill path). */
static const char ascend_late_meta[] =
    "[\n"
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#7\",\"pid\":10,\"tid\":1,\"ts\":\"1000.000\",\"dur\":100,\"cat\":\"cpu_op\",\"args\":{}},\n"
    "{\"ph\":\"X\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":1,\"ts\":\"1001.5\",\"dur\":5.25,\"cat\":\"cpu_op\","
    "\"args\":{\"Sequence number\":3,\"Fwd thread id\":0,\"Input Dims\":\"2,3;3,4\",\"Input type\":\"float\"}},\n"
    "{\"ph\":\"X\",\"name\":\"Enqueue\",\"pid\":10,\"tid\":1,\"ts\":\"1002.000\",\"dur\":1,\"cat\":\"enqueue\",\"args\":{}},\n"
    "{\"ph\":\"X\",\"name\":\"AscendCL@aclnnMm\",\"pid\":20,\"tid\":1,\"ts\":\"1003.000\",\"dur\":2,"
    "\"args\":{\"level\":\"acl\",\"connection_id\":41}},\n"
    "{\"ph\":\"X\",\"name\":\"Node@launch\",\"pid\":20,\"tid\":1,\"ts\":\"1003.500\",\"dur\":1,"
    "\"args\":{\"level\":\"node\",\"connection_id\":42}},\n"
    "{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"name\":\"HostToDevice42\",\"id\":\"42\",\"pid\":20,\"tid\":1,\"ts\":\"1003.500\"},\n"
    "{\"ph\":\"f\",\"cat\":\"HostToDevice\",\"name\":\"HostToDevice42\",\"id\":\"42\",\"pid\":30,\"tid\":2,\"ts\":\"1010.000\",\"bp\":\"e\"},\n"
    "{\"ph\":\"X\",\"name\":\"MatMul_1\",\"pid\":30,\"tid\":2,\"ts\":\"1010.000\",\"dur\":20.0004,"
    "\"args\":{\"Model Id\":4294967295,\"Task Type\":\"AI_CORE\",\"Physic Stream Id\":2,\"Task Id\":7,"
    "\"Subtask Id\":4294967295,\"connection_id\":42}},\n"
    "{\"ph\":\"X\",\"name\":\"EVENT_WAIT\",\"pid\":30,\"tid\":2,\"ts\":\"1031.000\",\"dur\":1,"
    "\"args\":{\"Task Type\":\"EVENT_WAIT\",\"Physic Stream Id\":2,\"Task Id\":8}},\n"
    "{\"ph\":\"X\",\"name\":\"MemcpyAsync\",\"pid\":30,\"tid\":2,\"ts\":\"1033.000\",\"dur\":1,"
    "\"args\":{\"Task Type\":\"MEMCPY_ASYNC\",\"Physic Stream Id\":2,\"Task Id\":9,\"size\":4096}},\n"
    "{\"ph\":\"X\",\"name\":\"aclnnAdd_Other\",\"pid\":30,\"tid\":2,\"ts\":\"1035.000\",\"dur\":1,"
    "\"args\":{\"Task Type\":\"Other\",\"Stream Id\":2,\"Task Id\":10}},\n"
    "{\"ph\":\"X\",\"name\":\"hcom_allReduce__1_0_1\",\"pid\":40,\"tid\":5,\"ts\":\"1040.000\",\"dur\":30,"
    "\"args\":{\"connection_id\":43,\"data_type\":\"FP16\",\"alg_type\":\"RING\",\"count\":1024}},\n"
    "{\"ph\":\"X\",\"name\":\"Computing\",\"pid\":50,\"tid\":0,\"ts\":\"1010.000\",\"dur\":20},\n"
    "{\"ph\":\"X\",\"name\":\"Free\",\"pid\":50,\"tid\":3,\"ts\":\"1030.000\",\"dur\":10},\n"
    "{\"ph\":\"C\",\"name\":\"APP/HBM\",\"pid\":60,\"tid\":0,\"ts\":\"1000.000\",\"args\":{\"KB\":1024,\"peak\":2.5}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":10,\"tid\":0,\"args\":{\"name\":\"Python\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":20,\"tid\":0,\"args\":{\"name\":\"CANN\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":30,\"tid\":0,\"args\":{\"name\":\"Ascend Hardware\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":30,\"tid\":0,\"args\":{\"labels\":\"NPU 3\"}},\n"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":30,\"tid\":2,\"args\":{\"name\":\"Stream 2\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":40,\"tid\":0,\"args\":{\"name\":\"Communication\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":40,\"tid\":0,\"args\":{\"labels\":\"NPU 3\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":50,\"tid\":0,\"args\":{\"name\":\"Overlap Analysis\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":50,\"tid\":0,\"args\":{\"labels\":\"NPU 3\"}},\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":60,\"tid\":0,\"args\":{\"name\":\"NPU MEM\"}}\n"
    "]\n";

static void test_ascend_routing(void **state)
{
    (void)state;
    char path[4200], db[4200], buf[256];
    write_text("ascend.json", ascend_late_meta, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("ascend.db", in, 1, 0, &err, db, sizeof db), TB_OK);

    /* every Ascend Hardware slice is a TASK; compute ones also COMPUTE_TASK_INFO */
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 4);
    assert_int_equal(q1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO"), 2); /* AI_CORE and Other */
    assert_int_equal(q1(db, "SELECT count(*) FROM MEMCPY_INFO WHERE size = 4096 AND memcpyOperation = 65535"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM kernel WHERE name = 'aclnnAdd_Other' AND taskType = 'Other'"), 1);
    /* exact ns from the decimal text; the 4th decimal rounds: 20.0004 us -> 20000 ns */
    assert_int_equal(q1(db, "SELECT startNs FROM kernel WHERE name = 'MatMul_1'"), 1010000);
    assert_int_equal(q1(db, "SELECT dur FROM kernel WHERE name = 'MatMul_1'"), 20000);
    assert_int_equal(q1(db, "SELECT deviceId FROM TASK WHERE taskId = 7"), 3);
    assert_int_equal(q1(db, "SELECT streamId FROM TASK WHERE taskId = 10"), 2); /* Stream Id fallback */
    assert_int_equal(q1(db, "SELECT connectionId FROM TASK WHERE taskId = 7"), 42);
    assert_int_equal(q1(db, "SELECT contextId FROM TASK WHERE taskId = 7"), 4294967295LL);
    assert_int_equal(q1(db, "SELECT modelId FROM TASK WHERE taskId = 8"), 4294967295LL);

    /* host side */
    assert_int_equal(q1(db, "SELECT count(*) FROM CANN_API"), 2);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT type FROM api WHERE name = 'Node@launch'"), "node");
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT type FROM api WHERE name = 'AscendCL@aclnnMm'"), "acl");
    assert_int_equal(q1(db, "SELECT count(*) FROM PYTORCH_API"), 3);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT type FROM api WHERE name = 'Enqueue'"), "queue");
    assert_int_equal(q1(db, "SELECT sequenceNumber FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name"
                            " WHERE s.value = 'aten::mm'"), 3);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT s.value FROM PYTORCH_API p JOIN STRING_IDS s"
                                                " ON s.id = p.inputShapes"),
                        "2,3;3,4");
    assert_int_equal(q1(db, "SELECT id FROM STEP_TIME"), 7);
    assert_int_equal(q1(db, "SELECT endNs - startNs FROM STEP_TIME"), 100000);

    /* communication, overlap lanes, counters */
    assert_int_equal(q1(db, "SELECT count(*) FROM comm_op WHERE opType = 'hcom_allReduce' AND deviceId = 3"), 1);
    assert_int_equal(q1(db, "SELECT dataType FROM COMMUNICATION_OP"), 3); /* FP16 */
    assert_int_equal(q1(db, "SELECT count(*) FROM OVERLAP_ANALYSIS WHERE deviceId = 3"), 2);
    assert_int_equal(q1(db, "SELECT type FROM OVERLAP_ANALYSIS WHERE startNs = 1030000"), 3); /* Free */
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_COUNTER"), 2);
    assert_int_equal(q1(db, "SELECT value FROM counter WHERE series = 'KB'"), 1024);

    /* the flow pairs up and carries the connection id */
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_FLOW"), 1);
    assert_int_equal(q1(db, "SELECT connectionId FROM TB_FLOW WHERE fromNs = 1003500 AND toNs = 1010000"), 42);

    /* bookkeeping */
    assert_int_equal(q1(db, "SELECT rowsRead FROM TB_SOURCE"), 25); /* 15 events + 10 metadata */
    assert_int_equal(q1(db, "SELECT deviceId FROM RANK_DEVICE_MAP"), 3);
    assert_int_equal(q1(db, "SELECT startTimeNs FROM SESSION_TIME_INFO"), 1000000);
    assert_int_equal(q1(db, "SELECT endTimeNs FROM SESSION_TIME_INFO"), 1100000);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT value FROM META_DATA WHERE name = 'SCHEMA_VERSION'"), "1.2.0");
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT layer FROM TB_PROCESS WHERE pid = 30"), "Ascend Hardware");
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT name FROM TB_THREAD WHERE pid = 30 AND tid = 2"), "Stream 2");
}

static const char kineto[] =
    "{\"schemaVersion\": 1,\n"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU Zero\"}, {\"id\": 1, \"name\": \"GPU One\"}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":7,\"tid\":7,\"ts\":100.0,\"dur\":50},\n"
    "  {\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#4\",\"pid\":0,\"tid\":7,\"ts\":101.0,\"dur\":48},\n"
    "  {\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":7,\"tid\":7,\"ts\":101.25,\"dur\":5,"
    "\"args\":{\"Input Dims\":[[2,3],[3,4]]}},\n"
    "  {\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(10): step\",\"pid\":7,\"tid\":7,\"ts\":100.0,\"dur\":50},\n"
    "  {\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":7,\"tid\":7,\"ts\":102.0,\"dur\":3,"
    "\"args\":{\"correlation\":900}},\n"
    "  {\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\",\"pid\":7,\"tid\":7,\"ts\":106.0,\"dur\":1,"
    "\"args\":{\"correlation\":901}},\n"
    "  {\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":900,\"pid\":7,\"tid\":7,\"ts\":102.0},\n"
    "  {\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":900,\"pid\":0,\"tid\":7,\"ts\":110.0,\"bp\":\"e\"},\n"
    "  {\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":777,\"pid\":0,\"tid\":7,\"ts\":111.0,\"bp\":\"e\"},\n"
    "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void gemm_kernel<float>()\",\"pid\":0,\"tid\":7,\"ts\":110.0,\"dur\":20.5,"
    "\"args\":{\"device\":1,\"stream\":7,\"correlation\":900}},\n"
    "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\",\"pid\":0,\"tid\":20,"
    "\"ts\":115.0,\"dur\":30,\"args\":{\"device\":1,\"stream\":20,\"correlation\":901}},\n"
    "  {\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"pid\":0,\"tid\":7,\"ts\":131.0,"
    "\"dur\":2,\"args\":{\"device\":1,\"stream\":7,\"correlation\":902,\"bytes\":64}},\n"
    "  {\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,\"ts\":134.0,\"dur\":1,"
    "\"args\":{\"device\":1,\"stream\":7,\"correlation\":903,\"bytes\":8}},\n"
    "  {\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":7,\"tid\":7,\"ts\":140.0,\"s\":\"t\"},\n"
    "  {\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\","
    "\"ts\":99.0,\"dur\":60},\n"
    "  {\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"python3\"}}\n"
    " ],\n"
    " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 5, \"world_size\": 8},\n"
    " \"baseTimeNanoseconds\": 1700000000000000000\n"
    "}\n";

static void test_kineto_routing(void **state)
{
    (void)state;
    char path[4200], db[4200], buf[256];
    write_text("kineto.json", kineto, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("kineto.db", in, 1, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 4);
    assert_int_equal(q1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM COMMUNICATION_OP"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM MEMCPY_INFO"), 2);
    assert_int_equal(q1(db, "SELECT memcpyOperation FROM MEMCPY_INFO WHERE size = 64"), 2); /* DtoH */
    assert_int_equal(q1(db, "SELECT memcpyOperation FROM MEMCPY_INFO WHERE size = 8"), 65535);
    assert_int_equal(q1(db, "SELECT connectionId FROM kernel"), 900);
    assert_int_equal(q1(db, "SELECT deviceId FROM kernel"), 1);
    assert_int_equal(q1(db, "SELECT dur FROM kernel"), 20500);
    assert_int_equal(q1(db, "SELECT connectionId FROM comm_op"), 901);
    assert_int_equal(q1(db, "SELECT count(*) FROM CANN_API WHERE type = 60001 AND connectionId = 900"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM CANN_API WHERE type = 60002 AND connectionId = 901"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM PYTORCH_API"), 2);
    assert_int_equal(q1(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 60003"), 1);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT s.value FROM PYTORCH_API p JOIN STRING_IDS s"
                                                " ON s.id = p.inputShapes"),
                        "[[2,3],[3,4]]");
    /* steps: user_annotation ProfilerStep only, not its gpu_user_annotation copy */
    assert_int_equal(q1(db, "SELECT count(*) FROM STEP_TIME"), 1);
    assert_int_equal(q1(db, "SELECT id FROM STEP_TIME"), 4);
    /* python_function skipped but counted */
    assert_int_equal(q1(db, "SELECT events FROM TB_LOAD_COUNT WHERE dest = 'skipped python_function'"), 1);
    assert_int_equal(q1(db, "SELECT rowsSkipped FROM TB_SOURCE"), 1);
    /* gpu_user_annotation, the instant and the Trace span are generic events */
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_EVENT"), 3);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT pid FROM TB_EVENT WHERE ph = 'X' AND pid = 'Spans'"), "Spans");
    /* one paired flow, one finish without a start */
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_FLOW"), 2);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_FLOW WHERE fromNs IS NULL AND toNs = 111000"), 1);
    assert_int_equal(q1(db, "SELECT connectionId FROM TB_FLOW WHERE fromNs = 102000"), 900);
    /* rank from distributedInfo (every table's rankId), devices, base time */
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK WHERE rankId = 5"), 4);
    assert_int_equal(q1(db, "SELECT rankId FROM TB_SOURCE"), 5);
    assert_int_equal(q1(db, "SELECT deviceId FROM RANK_DEVICE_MAP WHERE rankId = 5"), 1);
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT name FROM NPU_INFO WHERE id = 1"), "GPU One");
    assert_int_equal(q1(db, "SELECT baseTimeNs FROM SESSION_TIME_INFO"), 1700000000000000000LL);
    char name[96];
    assert_int_equal(tb_db_default_name(db, name, sizeof name, &err), TB_OK);
    assert_string_equal(name, "msprof_20231114221320.db");
}

static void test_flow_pairing(void **state)
{
    (void)state;
    /* f before s, repeated ids paired in order, an unmatched start */
    static const char text[] =
        "[{\"ph\":\"f\",\"cat\":\"fwdbwd\",\"id\":1,\"pid\":1,\"tid\":2,\"ts\":5,\"bp\":\"e\"},"
        "{\"ph\":\"s\",\"cat\":\"fwdbwd\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":1},"
        "{\"ph\":\"s\",\"cat\":\"x\",\"id\":\"7\",\"pid\":1,\"tid\":1,\"ts\":10},"
        "{\"ph\":\"f\",\"cat\":\"x\",\"id\":\"7\",\"pid\":1,\"tid\":3,\"ts\":11},"
        "{\"ph\":\"s\",\"cat\":\"x\",\"id\":\"7\",\"pid\":1,\"tid\":1,\"ts\":20},"
        "{\"ph\":\"f\",\"cat\":\"x\",\"id\":\"7\",\"pid\":1,\"tid\":3,\"ts\":21},"
        "{\"ph\":\"s\",\"cat\":\"y\",\"id\":\"7\",\"pid\":1,\"tid\":1,\"ts\":30}]";
    char path[4200], db[4200];
    write_text("flows.json", text, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("flows.db", in, 1, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_FLOW"), 4);
    assert_int_equal(q1(db, "SELECT toNs FROM flow WHERE cat = 'fwdbwd' AND fromNs = 1000"), 5000);
    assert_int_equal(q1(db, "SELECT toNs FROM flow WHERE cat = 'x' AND fromNs = 10000"), 11000);
    assert_int_equal(q1(db, "SELECT toNs FROM flow WHERE cat = 'x' AND fromNs = 20000"), 21000);
    assert_int_equal(q1(db, "SELECT toNs FROM flow WHERE cat = 'y'"), -1);
}

static void test_h2d_binding(void **state)
{
    (void)state;
    /* older torch_npu: the flow id is (connection_id << 32) | 0xFFFFFFFF; the
     * launching API slice has no connection id of its own */
    static const char text[] =
        "[{\"ph\":\"X\",\"name\":\"AscendCL@aclnnAdd\",\"pid\":20,\"tid\":5,\"ts\":\"100.000\",\"dur\":10,"
        "\"args\":{\"level\":\"acl\"}},"
        "{\"ph\":\"X\",\"name\":\"AscendCL@other\",\"pid\":20,\"tid\":5,\"ts\":\"120.000\",\"dur\":10,"
        "\"args\":{\"level\":\"acl\",\"connection_id\":42}},"
        "{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"name\":\"HostToDevice180388626431\",\"id\":\"180388626431\","
        "\"pid\":20,\"tid\":5,\"ts\":\"105.000\"},"
        "{\"ph\":\"f\",\"cat\":\"HostToDevice\",\"name\":\"HostToDevice180388626431\",\"id\":\"180388626431\","
        "\"pid\":30,\"tid\":1,\"ts\":\"150.000\",\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"name\":\"Add\",\"pid\":30,\"tid\":1,\"ts\":\"150.000\",\"dur\":3,"
        "\"args\":{\"Task Type\":\"AI_VECTOR_CORE\",\"connection_id\":42}},"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":20,\"tid\":0,\"args\":{\"name\":\"CANN\"}},"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":30,\"tid\":0,\"args\":{\"name\":\"Ascend Hardware\"}}]";
    char path[4200], db[4200];
    write_text("h2d.json", text, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("h2d.db", in, 1, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT connectionId FROM flow WHERE cat = 'HostToDevice'"), 42);
    assert_int_equal(q1(db, "SELECT connectionId FROM api WHERE name = 'AscendCL@aclnnAdd'"), 42);
    /* an API that has its own id keeps it */
    assert_int_equal(q1(db, "SELECT connectionId FROM api WHERE name = 'AscendCL@other'"), 42);
    assert_int_equal(q1(db, "SELECT count(*) FROM flow WHERE name = 'HostToDevice180388626431'"), 1);
}

static void copy_path(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void test_msprof_db_with_wal(void **state)
{
    (void)state;
    /* an msprof-style DB whose rows are still in its write-ahead log */
    char live[4200], dir[4200], db[4300], wal[4400], src_wal[4300], out[4200];
    snprintf(live, sizeof live, "%s/live.db", tmpdir);
    snprintf(dir, sizeof dir, "%s/waldb", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(db, sizeof db, "%s/msprof_1.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", db);
    snprintf(src_wal, sizeof src_wal, "%s-wal", live);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(live, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                                  "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
                                  "CREATE TABLE TASK(startNs, endNs, deviceId, connectionId, globalTaskId, globalPid,"
                                  " taskType, contextId, streamId, taskId, modelId, depth);"
                                  "CREATE TABLE COMPUTE_TASK_INFO(name, globalTaskId, blockDim, mixBlockDim, taskType,"
                                  " opType, waitNs);"
                                  "CREATE TABLE status_info(key TEXT, value TEXT);"
                                  "INSERT INTO STRING_IDS VALUES (7, 'MatMul'), (9, 'AI_CORE'), (11, 'MatMulV2');"
                                  "INSERT INTO TASK VALUES (100, 200, 2, 5, 0, 1, 9, 4294967295, 3, 1, 4294967295, 0),"
                                  " (300, 450, 2, 6, 1, 1, 9, 4294967295, 3, 2, 4294967295, 0);"
                                  "INSERT INTO COMPUTE_TASK_INFO VALUES (7, 0, 24, 0, 9, 11, 0), (7, 1, 48, 0, 9, 11, 0);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* copy while the log still holds the rows, as a profiler's output may be left */
    copy_path(live, db);
    copy_path(src_wal, wal);
    sqlite3_close(h);
    long db_size = file_size(db), wal_size = file_size(wal);
    assert_true(wal_size > 0);

    /* a trace loaded first takes globalTaskId 1..: the DB's ids are shifted past them */
    char trace[4200];
    write_text("waldb/trace.json",
               "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":1}]",
               trace, sizeof trace);
    const char *in[] = {trace, db};
    tb_error err;
    assert_int_equal(load("fromwal.db", in, 2, 0, &err, out, sizeof out), TB_OK);
    assert_int_equal(q1(out, "SELECT count(*) FROM TASK WHERE rankId = 1"), 2);
    assert_int_equal(q1(out, "SELECT count(*) FROM kernel WHERE name = 'MatMul' AND opType = 'MatMulV2'"
                             " AND taskType = 'AI_CORE' AND rankId = 1"),
                     2);
    assert_int_equal(q1(out, "SELECT sum(blockNum) FROM COMPUTE_TASK_INFO WHERE rankId = 1"), 72); /* blockDim */
    assert_int_equal(q1(out, "SELECT count(DISTINCT globalTaskId) FROM TASK"), 3);
    assert_int_equal(q1(out, "SELECT min(startNs) FROM TASK WHERE rankId = 1"), 100);
    assert_int_equal(q1(out, "SELECT deviceId FROM RANK_DEVICE_MAP WHERE rankId = 1"), 2);
    char buf[64];
    assert_string_equal(qs(out, buf, sizeof buf, "SELECT kind FROM TB_SOURCE WHERE id = 2"), "msprof db");
    /* the input is untouched: same sizes, no -shm created, log not checkpointed */
    assert_int_equal(file_size(db), db_size);
    assert_int_equal(file_size(wal), wal_size);
    char shm[4400];
    snprintf(shm, sizeof shm, "%s-shm", db);
    assert_int_equal(access(shm, F_OK), -1);
}

static void test_not_an_msprof_db(void **state)
{
    (void)state;
    char path[4200], out[4200];
    snprintf(path, sizeof path, "%s/other.db", tmpdir);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("other_out.db", in, 1, 0, &err, out, sizeof out), TB_ERR_PARSE);
    assert_string_equal(err.file, path);
    assert_string_equal(err.message, "not an msprof-compatible DB (no STRING_IDS table)");
    assert_int_equal(access(out, F_OK), -1);
}

static void test_msprof_prof_dir(void **state)
{
    (void)state;
    /* an msprof collection: PROF_xxx/mindstudio_profiler_output with op_summary and step_trace */
    char dir[4200], p[4200], db[4200];
    snprintf(dir, sizeof dir, "%s/PROF_000001_20240101000000_ABC", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    char out[4300];
    snprintf(out, sizeof out, "%s/mindstudio_profiler_output", dir);
    assert_int_equal(mkdir(out, 0755), 0);
    write_text("PROF_000001_20240101000000_ABC/mindstudio_profiler_output/op_summary_20240101000000.csv",
               "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),"
               "Task Duration(us),Task Wait Time(us)\r\n"
               "2,1,10,5,MatMul_1,MatMul,AI_CORE,\"1000.500\t\",20.25,0\r\n"
               "2,1,11,5,Add_2,Add,AI_VECTOR_CORE,1030.000\t,5,9.25\r\n"
               "2,N/A,N/A,N/A,hcom_allReduce__1_0_1,hcom_allReduce_,COMMUNICATION,1040.000,30,0\r\n",
               p, sizeof p);
    write_text("PROF_000001_20240101000000_ABC/mindstudio_profiler_output/step_trace_20240101000000.csv",
               "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),"
               "FP to BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID\n"
               "2,1,1000.0,1060.0,1080.0,90.0,60,20,N/A,1\n"
               "2,2,1100.0,1160.0,1180.0,95.5,60,20,10,1\n"
               "2,3,1200.0,1250.0,1260.0,70.0,50,10,10,7\n",
               p, sizeof p);
    write_text("PROF_000001_20240101000000_ABC/mindstudio_profiler_output/op_statistic_20240101000000.csv",
               "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
               "2,MatMul,AI_CORE,4,100.5,20.125,25.125,30,80.2\n"
               "2,Add,AI_VECTOR_CORE,2,25,10,12.5,15,19.8\n",
               p, sizeof p);
    write_text("PROF_000001_20240101000000_ABC/mindstudio_profiler_output/api_statistic_20240101000000.csv",
               "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
               "host,acl,aclrtSynchronizeStream,50.5,2,25.25,20,30.5,27.56\n",
               p, sizeof p);
    write_text("PROF_000001_20240101000000_ABC/mindstudio_profiler_output/communication_statistic_20240101000000.csv",
               "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
               "2,hcom_allReduce_,1,30,30,30,30,100\n",
               p, sizeof p);
    const char *in_dir[] = {dir};
    tb_error err;
    assert_int_equal(load("prof.db", in_dir, 1, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT totalNs FROM TB_OP_STATISTIC o JOIN STRING_IDS s ON s.id = o.opType"
                            " WHERE s.value = 'MatMul' AND deviceId = 2 AND count = 4"),
                     100500);
    assert_int_equal(q1(db, "SELECT minNs FROM TB_OP_STATISTIC o JOIN STRING_IDS s ON s.id = o.coreType"
                            " WHERE s.value = 'AI_CORE'"),
                     20125);
    assert_int_equal(q1(db, "SELECT maxNs FROM TB_API_STATISTIC a JOIN STRING_IDS s ON s.id = a.apiName"
                            " WHERE s.value = 'aclrtSynchronizeStream' AND deviceId IS NULL AND count = 2"),
                     30500);
    assert_int_equal(q1(db, "SELECT totalNs FROM TB_COMM_STATISTIC WHERE deviceId = 2"), 30000);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 2);
    assert_int_equal(q1(db, "SELECT count(*) FROM kernel WHERE deviceId = 2"), 2);
    assert_int_equal(q1(db, "SELECT startNs FROM kernel WHERE name = 'MatMul_1'"), 1000500);
    assert_int_equal(q1(db, "SELECT dur FROM kernel WHERE name = 'MatMul_1'"), 20250);
    assert_int_equal(q1(db, "SELECT count(*) FROM comm_op WHERE name = 'hcom_allReduce__1_0_1'"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_ITERATION"), 3);
    assert_int_equal(q1(db, "SELECT startNs FROM TB_ITERATION WHERE iterId = 2"), 1180000 - 95500);
    assert_int_equal(q1(db, "SELECT endNs FROM TB_ITERATION WHERE iterId = 2"), 1180000);
    assert_int_equal(q1(db, "SELECT indexId FROM TB_ITERATION WHERE iterId = 2"), 2);
    assert_int_equal(q1(db, "SELECT indexId FROM TB_ITERATION WHERE modelId = 7"), 1);
    assert_int_equal(q1(db, "SELECT deviceId FROM RANK_DEVICE_MAP"), 2);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_RANK"), 1);
    /* TB_SOURCE: each file relative to the -dir it was found under */
    char buf[256];
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT relPath FROM TB_SOURCE WHERE relPath LIKE '%op_summary%'"),
                        "mindstudio_profiler_output/op_summary_20240101000000.csv");
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_SOURCE WHERE input || '/' || relPath <> path"), 0);
}

static void test_bare_npu_device(void **state)
{
    (void)state;
    /* current msprof pid: (realPid << 10) | (sortIndex << 5) | deviceId, labels "NPU" */
    char text[1024], path[4200], db[4200];
    long long pid = (12345LL << 10) | (14 << 5) | 6;
    snprintf(text, sizeof text,
             "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":\"Ascend Hardware\"}},"
             "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%lld,\"tid\":0,\"args\":{\"labels\":\"NPU\"}},"
             "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%lld,\"tid\":0,\"args\":{\"sort_index\":14}},"
             "{\"ph\":\"X\",\"name\":\"k\",\"pid\":%lld,\"tid\":1,\"ts\":\"1.000\",\"dur\":1,"
             "\"args\":{\"Task Type\":\"AI_CORE\"}}]",
             pid, pid, pid, pid);
    write_text("bare.json", text, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    assert_int_equal(load("bare.db", in, 1, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT deviceId FROM TASK"), 6);
}

static void test_two_ranks(void **state)
{
    (void)state;
    char a[4200], b[4200], db[4200];
    write_text("r0.json", "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k0\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1}]", a,
               sizeof a);
    write_text("r1.json", "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":2,\"dur\":1},"
                          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k0\",\"pid\":0,\"tid\":7,\"ts\":3,\"dur\":1}]",
               b, sizeof b);
    const char *in[] = {a, b};
    tb_error err;
    assert_int_equal(load("ranks.db", in, 2, 0, &err, db, sizeof db), TB_OK);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK WHERE rankId = 0"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK WHERE rankId = 1"), 2);
    /* globalTaskId unique across ranks, strings shared */
    assert_int_equal(q1(db, "SELECT count(DISTINCT globalTaskId) FROM TASK"), 3);
    assert_int_equal(q1(db, "SELECT count(*) FROM STRING_IDS WHERE value = 'k0'"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_SOURCE"), 2);
}

static void test_failed_load_keeps_old_db(void **state)
{
    (void)state;
    char good[4200], bad[4200], db[4200];
    write_text("good.json", "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":1}]", good,
               sizeof good);
    write_text("bad.json", "[{\"ph\":\"X\",\"ts\":1},\n{\"ph\" \"X\"}]", bad, sizeof bad);
    const char *in_good[] = {good}, *in_bad[] = {bad};
    tb_error err;
    assert_int_equal(load("keep.db", in_good, 1, 0, &err, db, sizeof db), TB_OK);
    struct stat before, after;
    assert_int_equal(stat(db, &before), 0);
    /* same output name, malformed input: an error with the position, the old DB intact */
    tb_load_options o = {.inputs = in_bad, .n_inputs = 1, .output = db};
    assert_int_equal(tb_load(&o, NULL, &err), TB_ERR_PARSE);
    assert_string_equal(err.file, bad);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 7); /* the second string where ':' belongs */
    assert_string_equal(err.message, "malformed JSON: expected ':'");
    assert_int_equal(stat(db, &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_int_equal(before.st_ino, after.st_ino);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 1);
    /* and no temporary file is left */
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp-", tmpdir);
    assert_int_not_equal(system(cmd), 0);
}

static void test_truncated(void **state)
{
    (void)state;
    static const char text[] = "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":1,\"dur\":1},\n"
                               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":3,\"dur\":1},\n"
                               "{\"ph\":\"X\",\"cat\":\"kernel\",\"na";
    char path[4200], db[4200];
    write_text("cut.json", text, path, sizeof path);
    const char *in[] = {path};
    tb_error err;
    tb_load_result res;
    snprintf(db, sizeof db, "%s/cut.db", tmpdir);
    tb_load_options o = {.inputs = in, .n_inputs = 1, .output = db};
    assert_int_equal(tb_load(&o, &res, &err), TB_OK);
    assert_int_equal(res.warnings, 1);
    assert_int_equal(res.events, 2);
    assert_int_equal(q1(db, "SELECT count(*) FROM TASK"), 2);
    char buf[4400];
    char want[4400];
    snprintf(want, sizeof want, "%s: input cut short at byte %zu: kept 2 complete events, the rest is lost", path,
             strlen(text) - strlen("{\"ph\":\"X\",\"cat\":\"kernel\",\"na"));
    assert_string_equal(qs(db, buf, sizeof buf, "SELECT message FROM TB_WARNING"), want);
    /* --strict: an error, no DB */
    unlink(db);
    o.strict = 1;
    assert_int_equal(tb_load(&o, NULL, &err), TB_ERR_TRUNCATED);
    assert_int_equal(access(db, F_OK), -1);
    assert_int_equal(tb_exit_code(err.code), TB_EXIT_INPUT);
}

static void test_find_traces(void **state)
{
    (void)state;
    char p[4200], dir[4200];
    snprintf(dir, sizeof dir, "%s/found", tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    char sub[4300];
    snprintf(sub, sizeof sub, "%s/ASCEND_PROFILER_OUTPUT", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    write_text("found/ASCEND_PROFILER_OUTPUT/trace_view.json", "[{\"ph\":\"M\"}]", p, sizeof p);
    write_text("found/ASCEND_PROFILER_OUTPUT/communication.json", "{\"step1\": {}}", p, sizeof p);
    write_text("found/profiler_info_0.json", "{\"config\": {}}", p, sizeof p);
    write_text("found/notes.json", "{\"a\": 1}", p, sizeof p);
    tb_error err;
    char **paths = tb_find_traces(dir, &err);
    assert_non_null(paths);
    assert_non_null(paths[0]);
    assert_non_null(strstr(paths[0], "ASCEND_PROFILER_OUTPUT/trace_view.json"));
    /* communication.json is an input of its own (TB_COMM_*), never a trace;
     * profiler_info_0.json and notes.json are not read */
    assert_non_null(paths[1]);
    assert_non_null(strstr(paths[1], "ASCEND_PROFILER_OUTPUT/communication.json"));
    assert_null(paths[2]);
    tb_paths_free(paths);
    char empty[4300];
    snprintf(empty, sizeof empty, "%s/empty", tmpdir);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_null(tb_find_traces(empty, &err));
    assert_int_equal(err.code, TB_ERR_NOTFOUND);
    assert_null(tb_find_traces("/nonexistent/path", &err));
    assert_int_equal(err.code, TB_ERR_NOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascend_routing),   cmocka_unit_test(test_kineto_routing),
        cmocka_unit_test(test_flow_pairing),     cmocka_unit_test(test_bare_npu_device),
        cmocka_unit_test(test_h2d_binding),      cmocka_unit_test(test_msprof_db_with_wal),
        cmocka_unit_test(test_not_an_msprof_db), cmocka_unit_test(test_msprof_prof_dir),
        cmocka_unit_test(test_two_ranks),        cmocka_unit_test(test_failed_load_keeps_old_db),
        cmocka_unit_test(test_truncated),        cmocka_unit_test(test_find_traces),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
