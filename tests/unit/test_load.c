/* SPDX-License-Identifier: MIT */
/*
 * test_load.c - the loading stage end to end through tb_load(): routing of
 * Ascend and Kineto events into the unified tables, flow pairing, device and
 * rank rules, the spill path for metadata that comes late, the atomic
 * output rules, ranks loading in parallel (the same DB as one after the
 * other, errors in input order), DBs that hold several ranks and the
 * writer's own bookkeeping (what it notes, what it binds). Each case
 * writes small inputs with known content into a temporary directory and
 * checks exact rows with SQL.
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
#include <sqlite3.h>

#include "db/ask.h"
#include "db/dbw.h"
#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"



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
    long db_size = tu_file_size(db), wal_size = tu_file_size(wal);
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
    assert_int_equal(tu_file_size(db), db_size);
    assert_int_equal(tu_file_size(wal), wal_size);
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
    assert_int_equal(err.code, TB_ERR_TRUNCATED);
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

/* ---- parallel loading and DBs of several ranks ------------------------------ */

/* Loads inputs into tmpdir/name with the given number of loading threads. */
static tb_status load_jobs(const char *name, const char *const *inputs, size_t n, int jobs, tb_error *err, char *db,
                           size_t dbn)
{
    snprintf(db, dbn, "%s/%s", tmpdir, name);
    unlink(db);
    tb_load_options o = {.inputs = inputs, .n_inputs = n, .output = db, .jobs = jobs};
    return tb_load(&o, NULL, err);
}

/* A growing text buffer. */
typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void text_add(text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = 0;
}

/* Every table of the DB, row by row in rowid order (so the order rows were
 * written in counts too), each value with its type: returns new text (free it). */
static char *dump_db(const char *db)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *tables;
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT name, sql FROM sqlite_master ORDER BY type, name", -1, &tables,
                                        NULL),
                     SQLITE_OK);
    text t = {0};
    text_add(&t, "", 0);
    while (sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        const char *sql = (const char *)sqlite3_column_text(tables, 1);
        char line[8192];
        int w = snprintf(line, sizeof line, "== %s: %s\n", name, sql ? sql : "");
        text_add(&t, line, (size_t)w < sizeof line ? (size_t)w : sizeof line - 1);
        if (!sql || strncmp(sql, "CREATE TABLE", 12) != 0)
            continue;
        char q[512];
        snprintf(q, sizeof q, "SELECT rowid, * FROM \"%s\" ORDER BY rowid", name);
        sqlite3_stmt *rows;
        assert_int_equal(sqlite3_prepare_v2(h, q, -1, &rows, NULL), SQLITE_OK);
        while (sqlite3_step(rows) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(rows); i++) {
                int type = sqlite3_column_type(rows, i);
                const char *v = (const char *)sqlite3_column_text(rows, i);
                w = snprintf(line, sizeof line, "%s%d:%s", i ? "|" : "", type, v ? v : "");
                text_add(&t, line, (size_t)w < sizeof line ? (size_t)w : sizeof line - 1);
            }
            text_add(&t, "\n", 1);
        }
        sqlite3_finalize(rows);
    }
    sqlite3_finalize(tables);
    sqlite3_close(h);
    return t.p;
}

/* Fails unless the two DBs hold the same tables with the same rows in the same order. */
static void assert_same_db(const char *want_db, const char *got_db)
{
    char *a = dump_db(want_db), *b = dump_db(got_db);
    if (strcmp(a, b) != 0) {
        size_t i = 0, line = 0;
        while (a[i] && a[i] == b[i])
            i++;
        size_t start = i;
        while (start > 0 && a[start - 1] != '\n')
            start--;
        for (size_t k = 0; k < start; k++)
            line += a[k] == '\n';
        const char *ea = strchr(a + start, '\n'), *eb = strchr(b + start, '\n');
        print_error("%s and %s differ at dump line %zu:\n  %.*s\n  %.*s\n", want_db, got_db, line + 1,
                    (int)(ea ? ea - (a + start) : 200), a + start, (int)(eb ? eb - (b + start) : 200), b + start);
        free(a);
        free(b);
        fail();
    }
    free(a);
    free(b);
}

/* Writes an msprof-style DB (rows keyed by string ids, task and op ids from 0,
 * OVERLAP_ANALYSIS ids of its own) built by the SQL. */
static void write_db(const char *name, const char *sql, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    unlink(path);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("bad SQL: %s", msg);
    sqlite3_close(h);
}

static const char msprof_small_sql[] =
    "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
    "INSERT INTO STRING_IDS VALUES (1, 'MatMul_1'), (2, 'AI_CORE'), (3, 'hcom_allReduce__1_0_1'), (4, 'group0'),"
    " (5, 'Notify_Wait'), (6, 'aclnnMm'), (7, 'only in the DB'), (8, 'hcom_allReduce');"
    "CREATE TABLE TASK(startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId,"
    " streamId, taskId, modelId);"
    "INSERT INTO TASK VALUES (1000, 2000, 0, 41, 0, 7, 2, 0, 3, 1, 4294967295),"
    " (2500, 2600, 0, 42, 1, 7, 5, 0, 3, 2, 4294967295), (3000, 3900, 0, 43, 2, 7, 2, 0, 3, 3, 4294967295);"
    "CREATE TABLE COMPUTE_TASK_INFO(name, globalTaskId, blockDim, mixBlockDim, taskType, opType);"
    "INSERT INTO COMPUTE_TASK_INFO VALUES (1, 0, 8, 0, 2, 7), (1, 2, 8, 0, 2, 7);"
    "CREATE TABLE COMMUNICATION_OP(opName, startNs, endNs, connectionId, groupName, opId, relay, retry, dataType,"
    " algType, count, opType, deviceId);"
    "INSERT INTO COMMUNICATION_OP VALUES (3, 2400, 2700, 44, 4, 0, 0, 0, 3, NULL, 1024, 8, 0);"
    "CREATE TABLE COMMUNICATION_TASK_INFO(name, globalTaskId, taskType, planeId, groupName, notifyId, rdmaType,"
    " srcRank, dstRank, transportType, size, dataType, linkType, opId);"
    "INSERT INTO COMMUNICATION_TASK_INFO VALUES (5, 1, 5, 0, 4, 1, 0, 0, 1, 0, 64, 3, 1, 0);"
    "CREATE TABLE OVERLAP_ANALYSIS(id, deviceId, startNs, endNs, type);"
    "INSERT INTO OVERLAP_ANALYSIS VALUES (70, 0, 1000, 2000, 0), (71, 0, 2400, 2700, 1);"
    "CREATE TABLE CANN_API(startNs, endNs, type, globalTid, connectionId, name);"
    "INSERT INTO CANN_API VALUES (900, 950, 20000, 30064771079, 41, 6);";

/* Writes a timeline of n kernels named k0..k499 into tmpdir/name. */
static void write_big_trace(const char *name, size_t n, char *path, size_t cap)
{
    size_t tcap = n * 120 + 16, len = 0;
    char *text = malloc(tcap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, tcap - len, "[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, tcap - len,
                                "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%zu\",\"pid\":0,\"tid\":1,\"ts\":%zu,"
                                "\"dur\":1}",
                                i ? ",\n" : "", i % 500, i);
    len += (size_t)snprintf(text + len, tcap - len, "]");
    write_file(path, cap, name, text, len);
    free(text);
}

/* Inputs of several kinds, each a rank: an Ascend timeline (flows, layers,
 * overlap lanes), a Kineto trace, an msprof DB, a torch_npu rank directory
 * with a timeline and a CSV of the same tasks, and flows left unpaired. */
static void write_rank_inputs(char paths[5][4200])
{
    char p[4200];
    write_text("par_a.json", ascend_late_meta, paths[0], sizeof paths[0]);
    write_text("par_b.json", kineto, paths[1], sizeof paths[1]);
    write_db("par_c.db", msprof_small_sql, paths[2], sizeof paths[2]);
    snprintf(paths[3], sizeof paths[3], "%s/par_d_ascend_pt", tmpdir);
    mkdir(paths[3], 0755);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", paths[3]);
    mkdir(p, 0755);
    write_text("par_d_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", ascend_late_meta, p, sizeof p);
    write_text("par_d_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
               "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
               "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes\n"
               "7,4294967295,7,2,MatMul_1,MatMul,AI_CORE,\"1010.000\t\",20.0004,0,8,0,\"\"\"2,3;3,4\"\"\"\n"
               "7,4294967295,8,2,csv_only_kernel,Add,AI_VECTOR_CORE,\"1050.000\t\",1.5,0,4,0,\"\"\"8\"\"\"\n",
               p, sizeof p);
    write_text("par_e.json",
               "[{\"ph\":\"f\",\"cat\":\"fwdbwd\",\"id\":1,\"pid\":1,\"tid\":2,\"ts\":5,\"bp\":\"e\"},"
               "{\"ph\":\"s\",\"cat\":\"fwdbwd\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":1},"
               "{\"ph\":\"s\",\"cat\":\"y\",\"id\":\"7\",\"pid\":1,\"tid\":1,\"ts\":30},"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"MatMul_1\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":2},"
               "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"tid\":0,\"ts\":41,\"args\":{\"KB\":3}},"
               "{\"ph\":\"X\",\"name\":\"Computing\",\"pid\":50,\"tid\":0,\"ts\":40,\"dur\":2},"
               "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":50,\"tid\":0,"
               "\"args\":{\"name\":\"Overlap Analysis\"}}]",
               paths[4], sizeof paths[4]);
}

static void test_parallel_same_as_sequential(void **state)
{
    (void)state;
    char paths[5][4200], seq[4200], par[4200];
    write_rank_inputs(paths);
    const char *in[5];
    for (int i = 0; i < 5; i++)
        in[i] = paths[i];
    /* 2 ranks, 3 ranks (an msprof DB first), 5 ranks: every number of threads,
     * several times, gives the DB a load of one rank after the other gives */
    static const struct {
        size_t first, n;
    } sets[] = {{0, 2}, {2, 3}, {0, 5}, {1, 3}};
    tb_error err;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        assert_int_equal(load_jobs("seq.db", in + sets[k].first, sets[k].n, 1, &err, seq, sizeof seq), TB_OK);
        for (int jobs = 2; jobs <= 4; jobs++) {
            for (int rep = 0; rep < 3; rep++) {
                assert_int_equal(load_jobs("par.db", in + sets[k].first, sets[k].n, jobs, &err, par, sizeof par),
                                 TB_OK);
                assert_same_db(seq, par);
            }
        }
    }
    /* the rows landed where they should: ids run on across ranks, DB ids shifted,
     * strings shared, the DB's overlap ids its own */
    assert_int_equal(load_jobs("par.db", in, 5, 3, &err, par, sizeof par), TB_OK);
    assert_int_equal(q1(par, "SELECT count(*) - count(DISTINCT globalTaskId) FROM TASK"), 0);
    assert_int_equal(q1(par, "SELECT count(*) FROM STRING_IDS WHERE value = 'MatMul_1'"), 1);
    assert_int_equal(q1(par, "SELECT count(*) FROM OVERLAP_ANALYSIS WHERE id IN (70, 71) AND rankId = 2"), 2);
    assert_int_equal(q1(par, "SELECT count(*) FROM COMMUNICATION_TASK_INFO t JOIN COMMUNICATION_OP o"
                             " ON o.opId = t.opId AND o.rankId = t.rankId WHERE t.rankId = 2"),
                     1);
    assert_int_equal(q1(par, "SELECT count(*) FROM TB_FLOW WHERE toNs IS NULL AND rankId = 4"), 1);
    assert_int_equal(q1(par, "SELECT count(DISTINCT rankId) FROM TB_SOURCE"), 5);

    /* a small rank, then a big one: its replay catches up with its recording
     * and the recording thread writes the rest into the DB itself */
    char big[4200];
    write_big_trace("par_big.json", 60000, big, sizeof big);
    const char *small_big[] = {paths[4], big, paths[0]};
    assert_int_equal(load_jobs("seq.db", small_big, 3, 1, &err, seq, sizeof seq), TB_OK);
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(load_jobs("par.db", small_big, 3, 2, &err, par, sizeof par), TB_OK);
        assert_same_db(seq, par);
    }

    /* the 2-rank torch_npu sample, when the tree has it */
    char sample[4200];
    if (tu_samples_path(sample, sizeof sample, "torch_npu_2rank")) {
        const char *s_in[] = {sample};
        assert_int_equal(load_jobs("seq.db", s_in, 1, 1, &err, seq, sizeof seq), TB_OK);
        for (int rep = 0; rep < 3; rep++) {
            assert_int_equal(load_jobs("par.db", s_in, 1, 2, &err, par, sizeof par), TB_OK);
            assert_same_db(seq, par);
        }
    }
}

/* Number of entries in dir (without . and ..). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_parallel_error(void **state)
{
    (void)state;
    char good[4200], bad1[4200], bad2[4200], big[4200];
    write_text("perr_good.json", ascend_late_meta, good, sizeof good);
    write_text("perr_bad1.json", "[{\"ph\":\"X\",\"ts\":1},\n{\"ph\" \"X\"}]", bad1, sizeof bad1);
    write_text("perr_bad2.json", "[{\"ph\":\"X\",\"ts\":1},\n{\"ph\":\"X\",\n\"ts\": ]", bad2, sizeof bad2);
    /* a bigger good rank, still loading when the bad ones fail */
    write_big_trace("perr_big.json", 20000, big, sizeof big);
    char outdir[4200], out[4300];
    snprintf(outdir, sizeof outdir, "%s/perr_out", tmpdir);
    assert_int_equal(mkdir(outdir, 0755), 0);
    snprintf(out, sizeof out, "%s/out.db", outdir);
    /* the second rank is malformed: its error, whatever the threads and even
     * when a later rank fails sooner; nothing is left in the output directory */
    const char *cases[][4] = {{good, bad1, good, NULL}, {big, bad1, bad2, NULL}, {good, bad1, bad2, big}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t nin = cases[c][3] ? 4 : 3;
        for (int jobs = 1; jobs <= 4; jobs++) {
            for (int rep = 0; rep < 3; rep++) {
                tb_error err;
                tb_load_options o = {.inputs = cases[c], .n_inputs = nin, .output = out, .jobs = jobs};
                assert_int_equal(tb_load(&o, NULL, &err), TB_ERR_PARSE);
                assert_string_equal(err.file, bad1);
                assert_int_equal(err.line, 2);
                assert_int_equal(err.column, 7);
                assert_string_equal(err.message, "malformed JSON: expected ':'");
                assert_int_equal(count_entries(outdir), 0);
            }
        }
    }
    /* an error in the first rank while a later one is still loading */
    const char *first_bad[] = {bad2, big, good};
    tb_error err;
    tb_load_options o = {.inputs = first_bad, .n_inputs = 3, .output = out, .jobs = 3};
    assert_int_equal(tb_load(&o, NULL, &err), TB_ERR_PARSE);
    assert_string_equal(err.file, bad2);
    assert_int_equal(count_entries(outdir), 0);
}

/* The rankId values of TB_RANK, comma-separated in order, into out. */
static const char *rank_list(const char *db, char *out, size_t n)
{
    return qs(db, out, n, "SELECT group_concat(rankId) FROM (SELECT rankId FROM TB_RANK ORDER BY rankId)");
}

/* Fails unless every table with a rankId holds, per rank, as many rows in got as in want. */
static void assert_rank_counts(const char *want, const char *got, int64_t want_shift)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(want, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c"
                                        " WHERE m.type = 'table' AND c.name = 'rankId' AND m.name NOT LIKE 'TB_%'"
                                        " AND m.name NOT IN ('SESSION_TIME_INFO', 'RANK_DEVICE_MAP')",
                                        -1, &q, NULL),
                     SQLITE_OK);
    int tables = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(q, 0);
        for (int64_t r = 0; r < 8; r++) {
            int64_t a = q1(want, "SELECT count(*) FROM \"%s\" WHERE rankId = %lld", t, (long long)r);
            int64_t b = q1(got, "SELECT count(*) FROM \"%s\" WHERE rankId = %lld", t, (long long)(r + want_shift));
            if (a != b)
                fail_msg("%s rank %lld: %lld rows in %s, %lld in %s", t, (long long)r, (long long)a, want,
                         (long long)b, got);
        }
        tables++;
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
    assert_true(tables > 10);
}

static void test_multi_rank_db(void **state)
{
    (void)state;
    char a[4200], b[4200], two[4200], re[4200], both[4200], buf[4400];
    /* two Kineto traces naming ranks 5 and 3, exported to one DB */
    write_text("mr_a.json", kineto, a, sizeof a);
    char *k3 = strdup(kineto);
    assert_non_null(k3);
    char *r = strstr(k3, "\"rank\": 5");
    assert_non_null(r);
    r[8] = '3';
    write_text("mr_b.json", k3, b, sizeof b);
    free(k3);
    const char *in[] = {a, b};
    tb_error err;
    assert_int_equal(load_jobs("mr_two.db", in, 2, 0, &err, two, sizeof two), TB_OK);
    assert_string_equal(rank_list(two, buf, sizeof buf), "3,5");
    /* loaded again, alone: the ranks, their rows, TB_RANK and the per-rank tables stay */
    for (int jobs = 1; jobs <= 2; jobs++) {
        tb_load_result res;
        tb_load_options o = {.inputs = (const char *[]){two}, .n_inputs = 1, .output = re, .jobs = jobs};
        snprintf(re, sizeof re, "%s/mr_re.db", tmpdir);
        assert_int_equal(tb_load(&o, &res, &err), TB_OK);
        assert_int_equal(res.warnings, 0);
        assert_string_equal(rank_list(re, buf, sizeof buf), "3,5");
        for (int rank = 3; rank <= 5; rank += 2) {
            assert_int_equal(q1(re, "SELECT count(*) FROM TASK WHERE rankId = %d", rank),
                             q1(two, "SELECT count(*) FROM TASK WHERE rankId = %d", rank));
            assert_int_equal(q1(re, "SELECT count(*) FROM PYTORCH_API WHERE rankId = %d", rank),
                             q1(two, "SELECT count(*) FROM PYTORCH_API WHERE rankId = %d", rank));
            assert_int_equal(q1(re, "SELECT count(*) FROM CANN_API WHERE rankId = %d", rank),
                             q1(two, "SELECT count(*) FROM CANN_API WHERE rankId = %d", rank));
            assert_int_equal(q1(re, "SELECT baseTimeNs FROM SESSION_TIME_INFO WHERE rankId = %d", rank),
                             q1(two, "SELECT baseTimeNs FROM SESSION_TIME_INFO WHERE rankId = %d", rank));
            assert_int_equal(q1(re, "SELECT deviceId FROM RANK_DEVICE_MAP WHERE rankId = %d", rank), 1);
        }
        assert_int_equal(q1(re, "SELECT count(*) FROM TB_RANK WHERE source IN ('%s', '%s')", a, b), 2);
        assert_int_equal(q1(re, "SELECT count(*) FROM TB_SOURCE WHERE rankId IS NULL AND kind = 'msprof db'"), 1);
        assert_int_equal(q1(re, "SELECT count(*) FROM TB_WARNING"), 0);
    }
    /* two such DBs name the same ranks: numbered in input order, with a warning */
    char copy[4200];
    snprintf(copy, sizeof copy, "%s/mr_copy.db", tmpdir);
    copy_path(two, copy);
    const char *in2[] = {two, copy};
    tb_load_result res;
    tb_load_options o = {.inputs = in2, .n_inputs = 2, .output = both};
    snprintf(both, sizeof both, "%s/mr_both.db", tmpdir);
    assert_int_equal(tb_load(&o, &res, &err), TB_OK);
    assert_string_equal(rank_list(both, buf, sizeof buf), "0,1,2,3");
    assert_int_equal(res.warnings, 1);
    char want[9000];
    snprintf(want, sizeof want, "%s and %s both name rank 5: ranks are numbered in input order", two, copy);
    assert_string_equal(qs(both, buf, sizeof buf, "SELECT message FROM TB_WARNING"), want);
    assert_int_equal(q1(both, "SELECT count(*) FROM TASK WHERE rankId = 2"),
                     q1(two, "SELECT count(*) FROM TASK WHERE rankId = 5"));
    assert_int_equal(q1(both, "SELECT count(*) - count(DISTINCT globalTaskId) FROM TASK"), 0);
    /* beside an input that names another rank, every named rank stays */
    char c7[4200];
    char *k7 = strdup(kineto);
    assert_non_null(k7);
    strstr(k7, "\"rank\": 5")[8] = '7';
    write_text("mr_c.json", k7, c7, sizeof c7);
    free(k7);
    const char *in3[] = {c7, two};
    assert_int_equal(load_jobs("mr_three.db", in3, 2, 2, &err, both, sizeof both), TB_OK);
    assert_string_equal(rank_list(both, buf, sizeof buf), "3,5,7");

    /* the 2-rank torch_npu sample, exported and loaded again */
    char sample[4200];
    if (tu_samples_path(sample, sizeof sample, "torch_npu_2rank")) {
        const char *s_in[] = {sample};
        assert_int_equal(load_jobs("mr_sample.db", s_in, 1, 0, &err, two, sizeof two), TB_OK);
        const char *r_in[] = {two};
        assert_int_equal(load_jobs("mr_sample_re.db", r_in, 1, 0, &err, re, sizeof re), TB_OK);
        assert_string_equal(rank_list(re, buf, sizeof buf), "0,1");
        assert_rank_counts(two, re, 0);
        /* TB_RANK kept as the DB had it: each rank's source is still its own input */
        static const char sources[] = "SELECT group_concat(rankId || ' ' || source, ', ')"
                                      " FROM (SELECT * FROM TB_RANK ORDER BY rankId)";
        char want_src[4400];
        qs(two, want_src, sizeof want_src, sources);
        assert_non_null(strstr(want_src, "rank1_ascend_pt"));
        assert_string_equal(qs(re, buf, sizeof buf, sources), want_src);
    }
}

static void test_msprof_db_ranks_by_device(void **state)
{
    (void)state;
    /* an msprof DB of two devices, each its own rank in RANK_DEVICE_MAP */
    char db[4200], out[4200], buf[256];
    write_db("bydev.db",
             "CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
             "INSERT INTO STRING_IDS VALUES (1, 'MatMul'), (2, 'AI_CORE'), (3, 'aclnnMm');"
             "CREATE TABLE RANK_DEVICE_MAP(rankId INTEGER, deviceId INTEGER);"
             "INSERT INTO RANK_DEVICE_MAP VALUES (4, 0), (5, 1);"
             "CREATE TABLE SESSION_TIME_INFO(startTimeNs INTEGER, endTimeNs INTEGER);"
             "INSERT INTO SESSION_TIME_INFO VALUES (1000, 9000);"
             "CREATE TABLE NPU_INFO(id INTEGER, name TEXT);"
             "INSERT INTO NPU_INFO VALUES (0, 'Ascend910B'), (1, 'Ascend910B');"
             "CREATE TABLE HOST_INFO(hostUid TEXT, hostName TEXT);"
             "INSERT INTO HOST_INFO VALUES ('42', 'node-7');"
             "CREATE TABLE TASK(startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId,"
             " streamId, taskId, modelId);"
             "INSERT INTO TASK VALUES (1000, 2000, 0, 1, 0, 7, 2, 0, 3, 1, 4294967295),"
             " (1500, 2500, 1, 2, 1, 7, 2, 0, 3, 1, 4294967295), (3000, 3500, 1, 3, 2, 7, 2, 0, 3, 2, 4294967295);"
             "CREATE TABLE COMPUTE_TASK_INFO(name, globalTaskId, blockDim, mixBlockDim, taskType, opType);"
             "INSERT INTO COMPUTE_TASK_INFO VALUES (1, 0, 8, 0, 2, 1), (1, 1, 8, 0, 2, 1), (1, 2, 8, 0, 2, 1);"
             "CREATE TABLE CANN_API(startNs, endNs, type, globalTid, connectionId, name);"
             "INSERT INTO CANN_API VALUES (900, 950, 20000, 30064771079, 1, 3),"
             " (1400, 1450, 20000, 30064771079, 2, 3);",
             db, sizeof db);
    const char *in[] = {db};
    tb_load_result res;
    tb_error err;
    snprintf(out, sizeof out, "%s/bydev_out.db", tmpdir);
    tb_load_options o = {.inputs = in, .n_inputs = 1, .output = out};
    assert_int_equal(tb_load(&o, &res, &err), TB_OK);
    assert_int_equal(res.warnings, 0);
    assert_string_equal(rank_list(out, buf, sizeof buf), "4,5");
    /* device rows by their device, task descriptions by their task's, host rows to the first rank */
    assert_int_equal(q1(out, "SELECT count(*) FROM TASK WHERE rankId = 4 AND deviceId = 0"), 1);
    assert_int_equal(q1(out, "SELECT count(*) FROM TASK WHERE rankId = 5 AND deviceId = 1"), 2);
    assert_int_equal(q1(out, "SELECT count(*) FROM kernel WHERE rankId = 5 AND name = 'MatMul'"), 2);
    assert_int_equal(q1(out, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)"
                             " WHERE c.rankId = t.rankId"),
                     3);
    assert_int_equal(q1(out, "SELECT count(*) FROM CANN_API WHERE rankId = 4"), 2);
    assert_int_equal(q1(out, "SELECT count(*) FROM NPU_INFO WHERE rankId = 4 AND id = 0"), 1);
    assert_int_equal(q1(out, "SELECT count(*) FROM NPU_INFO WHERE rankId = 5 AND id = 1"), 1);
    assert_string_equal(qs(out, buf, sizeof buf, "SELECT group_concat(rankId || ':' || deviceId) FROM"
                                                 " (SELECT * FROM RANK_DEVICE_MAP ORDER BY rankId)"),
                        "4:0,5:1");
    assert_string_equal(qs(out, buf, sizeof buf, "SELECT group_concat(hostName) FROM TB_RANK"), "node-7,node-7");
    assert_int_equal(q1(out, "SELECT count(*) FROM SESSION_TIME_INFO WHERE startTimeNs = 1000 AND endTimeNs = 9000"),
                     2);
}

/* The index of a column in rows of table t (rows.c). */
static int col_index(int t, const char *name)
{
    const char *c = row_tables[t].columns;
    for (int i = 0; i < row_tables[t].ncols; i++) {
        size_t n = strcspn(c, ",");
        if (n == strlen(name) && strncmp(c, name, n) == 0)
            return i;
        c += n + 1;
    }
    fail_msg("%s: no column %s", row_tables[t].table, name);
    return -1;
}

/* Puts a row of table t whose other columns are NULL. */
static void put_row2(dbw *w, int t, const char *c1, tb_val v1, const char *c2, tb_val v2)
{
    tb_val v[ROW_MAX_COLS];
    for (int i = 0; i < row_tables[t].ncols; i++)
        v[i] = VNULL;
    v[col_index(t, c1)] = v1;
    v[col_index(t, c2)] = v2;
    const row_sink *s = dbw_sink(w);
    assert_int_equal(s->row(s->ctx, t, v), 0);
}

/* What the writer notes of the rows it inserts for the post-processing:
 * flows that may need binding, API calls without a connection id, the
 * distinct (rankId, deviceId) of TASK, and when it no longer knows them. */
static void test_writer_notes(void **state)
{
    (void)state;
    char path[PATH_MAX + 16];
    tb_error err;
    snprintf(path, sizeof path, "%s/notes.db", tmpdir);
    unlink(path);
    dbw *w = dbw_create(path, &err);
    assert_non_null(w);
    const int64_t(*pairs)[2];
    size_t n = 99;
    assert_int_equal(dbw_seen_task_devices(w, &pairs, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(dbw_seen_flow_unbound(w), 0);
    assert_int_equal(dbw_seen_cann_no_conn(w), 0);
    /* flows: one without a finish, one bound to a connection id below 2^32 */
    put_row2(w, R_FLOW, "fromNs", VINT(5), "connectionId", VNULL);
    put_row2(w, R_FLOW, "toNs", VINT(9), "connectionId", VINT(4294967295));
    put_row2(w, R_CANN_API, "startNs", VINT(1), "connectionId", VINT(7));
    /* pairs: NULL ones skipped, repeats kept once, in the order met */
    put_row2(w, R_TASK, "rankId", VINT(1), "deviceId", VINT(2));
    put_row2(w, R_TASK, "rankId", VINT(0), "deviceId", VINT(5));
    put_row2(w, R_TASK, "rankId", VINT(1), "deviceId", VINT(2));
    put_row2(w, R_TASK, "rankId", VNULL, "deviceId", VINT(3));
    put_row2(w, R_TASK, "rankId", VINT(0), "deviceId", VINT(5));
    assert_int_equal(dbw_seen_flow_unbound(w), 0);
    assert_int_equal(dbw_seen_cann_no_conn(w), 0);
    assert_int_equal(dbw_seen_task_devices(w, &pairs, &n), 0);
    assert_int_equal(n, 2);
    assert_true(pairs[0][0] == 1 && pairs[0][1] == 2 && pairs[1][0] == 0 && pairs[1][1] == 5);
    /* a finished flow whose id is no connection id, an API call without one */
    put_row2(w, R_FLOW, "toNs", VINT(9), "connectionId", VINT(INT64_C(4294967296)));
    put_row2(w, R_CANN_API, "startNs", VINT(2), "connectionId", VNULL);
    assert_int_equal(dbw_seen_flow_unbound(w), 1);
    assert_int_equal(dbw_seen_cann_no_conn(w), 1);
    /* 64 pairs are kept, the 65th makes them unknown */
    for (int d = 0; d < 62; d++)
        put_row2(w, R_TASK, "rankId", VINT(7), "deviceId", VINT(d));
    assert_int_equal(dbw_seen_task_devices(w, &pairs, &n), 0);
    assert_int_equal(n, 64);
    put_row2(w, R_TASK, "rankId", VINT(8), "deviceId", VINT(0));
    assert_int_equal(dbw_seen_task_devices(w, &pairs, &n), -1);
    dbw_destroy(w);

    /* a staged flow end may become an unbound flow; a rankId that is text
     * is no pair the writer can stand for */
    unlink(path);
    w = dbw_create(path, &err);
    assert_non_null(w);
    put_row2(w, R_FLOW_END, "ts", VINT(3), "seq", VINT(1));
    put_row2(w, R_TASK, "rankId", VTEXT("1", 1), "deviceId", VINT(0));
    assert_int_equal(dbw_seen_flow_unbound(w), 1);
    assert_int_equal(dbw_seen_task_devices(w, &pairs, &n), -1);
    dbw_destroy(w);
    unlink(path);
}

/* Value c of row i of test_writer_bindings: a column that never changes,
 * NULLs between integers, an integer with a real's bits and the real, text
 * between NULLs and integers, integers then NULLs; its quote() in *q. */
static tb_val binding_val(int i, int c, char *q, size_t cap)
{
    double d = 1.5;
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    tb_val v = VNULL;
    switch (c) {
    case 0: v = VINT(i); break;
    case 1: v = VINT(7); break;
    case 2: v = i % 3 == 0 ? VNULL : VINT(5); break;
    case 3: v = (i / 32) % 2 ? VREAL(1.5) : VINT(bits); break;
    case 4: v = i % 5 == 0 ? VTEXT("t", 1) : i % 5 == 1 ? VNULL : VINT(3); break;
    default: v = i < 50 ? VINT(0) : VNULL; break;
    }
    if (v.type == V_INT)
        snprintf(q, cap, "%lld", (long long)v.i);
    else if (v.type == V_REAL)
        snprintf(q, cap, "1.5");
    else if (v.type == V_TEXT)
        snprintf(q, cap, "'t'");
    else
        snprintf(q, cap, "NULL");
    return v;
}

/* The writer binds again only what a statement's parameter does not already
 * hold: every row must still land as given, through whole batches and the
 * rows inserted one by one after them. And its secure_delete setting for
 * the inserts does not outlast them. */
static void test_writer_bindings(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], want[16384], q[64];
    size_t o = 0;
    tb_error err;
    double secs;
    snprintf(path, sizeof path, "%s/bindings.db", tmpdir);
    unlink(path);
    dbw *w = dbw_create(path, &err);
    assert_non_null(w);
    const row_sink *s = dbw_sink(w);
    assert_int_equal(row_tables[R_OVERLAP_ANALYSIS].ncols, 6);
    for (int i = 0; i < 100; i++) { /* 3 batches of 32 and 4 rows one by one */
        tb_val v[6];
        for (int c = 0; c < 6; c++) {
            v[c] = binding_val(i, c, q, sizeof q);
            o += (size_t)snprintf(want + o, sizeof want - o, "%s%s", c ? "|" : "", q);
        }
        o += (size_t)snprintf(want + o, sizeof want - o, "\n");
        assert_int_equal(s->row(s->ctx, R_OVERLAP_ANALYSIS, v), 0);
    }
    /* the writer inserts with secure_delete off; once it is drained the
     * connection has SQLite's own setting back, for the post-process */
    sqlite3 *mem;
    assert_int_equal(sqlite3_open(":memory:", &mem), SQLITE_OK);
    int64_t own = -1, now = -2;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(mem, "PRAGMA secure_delete", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    own = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(mem);
    assert_int_equal(sqlite3_prepare_v2(dbw_db(w), "PRAGMA secure_delete", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    now = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    assert_int_equal(now, own);
    assert_int_equal(dbw_finish(w, &secs, &err), TB_OK);
    dbw_destroy(w);
    assert_string_equal(rows(path, "SELECT quote(id), quote(deviceId), quote(startNs), quote(endNs), quote(type),"
                                   " quote(rankId) FROM OVERLAP_ANALYSIS ORDER BY rowid"),
                        want);
    unlink(path);
}

/* The small questions of db/ask.h on a connection with a main table, a main
 * view, a temporary table and a temporary view: each schema asked alone and
 * both together, names in another case, a failed question told apart. */
static void test_db_questions(void **state)
{
    (void)state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE TASK (startNs INTEGER, fileOffset INTEGER);"
                                  "CREATE VIEW V AS SELECT 1 AS one;"
                                  "CREATE TEMP TABLE tt (x INTEGER);"
                                  "CREATE TEMP VIEW PYTORCH_API AS SELECT 2 AS two, 3 AS fileOffset;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(db_has_table(db, "main", "TASK", 0), 1);
    assert_int_equal(db_has_table(db, "main", "task", 0), 1); /* SQLite's names ignore case */
    assert_int_equal(db_has_table(db, "main", "V", 0), 0);    /* a view only when asked for */
    assert_int_equal(db_has_table(db, "main", "V", 1), 1);
    assert_int_equal(db_has_table(db, "main", "tt", 0), 0); /* main does not see temp */
    assert_int_equal(db_has_table(db, "temp", "tt", 0), 1);
    assert_int_equal(db_has_table(db, "temp", "TASK", 1), 0);
    assert_int_equal(db_has_table(db, "temp", "PYTORCH_API", 0), 0);
    assert_int_equal(db_has_table(db, "temp", "PYTORCH_API", 1), 1);
    assert_int_equal(db_has_table(db, NULL, "tt", 0), 1);
    assert_int_equal(db_has_table(db, NULL, "TASK", 0), 1);
    assert_int_equal(db_has_table(db, NULL, "nothing", 1), 0);
    assert_int_equal(db_has_table(db, "other", "TASK", 0), -1); /* only main and temp */

    assert_int_equal(db_has_column(db, "main", "TASK", "fileOffset"), 1);
    assert_int_equal(db_has_column(db, "main", "TASK", "FILEOFFSET"), 1);
    assert_int_equal(db_has_column(db, "main", "TASK", "tid"), 0);
    assert_int_equal(db_has_column(db, "main", "nothing", "x"), 0);
    assert_int_equal(db_has_column(db, "main", "PYTORCH_API", "two"), 0);
    assert_int_equal(db_has_column(db, NULL, "PYTORCH_API", "two"), 1); /* the temporary view */
    assert_int_equal(db_has_column(db, "temp", "tt", "x"), 1);
    assert_int_equal(db_has_column(db, "no_such_schema", "TASK", "startNs"), -1);

    int64_t v = 0;
    assert_int_equal(db_one_int(db, "SELECT 41 + 1", &v), 1);
    assert_int_equal(v, 42);
    assert_int_equal(db_one_int(db, "SELECT NULL", &v), 0);
    assert_int_equal(db_one_int(db, "SELECT 1 WHERE 0", &v), 0);
    assert_int_equal(db_one_int(db, "SELECT * FROM no_such_table", &v), -1);
    sqlite3_close(db);
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
        cmocka_unit_test(test_parallel_same_as_sequential), cmocka_unit_test(test_parallel_error),
        cmocka_unit_test(test_multi_rank_db),    cmocka_unit_test(test_msprof_db_ranks_by_device),
        cmocka_unit_test(test_writer_notes),     cmocka_unit_test(test_writer_bindings),
        cmocka_unit_test(test_db_questions),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
