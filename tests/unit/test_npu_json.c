/* SPDX-License-Identifier: MIT */
/*
 * test_npu_json.c - the communication analysis, cluster and summary inputs
 * of torch_npu and msprof-analyze, end to end through tb_load():
 * communication.json and communication_matrix.json (per rank and cluster),
 * communication_group.json, profiler_metadata.json, analysis.db (also with
 * a write-ahead log, and its precedence over step_trace_time.csv),
 * npu_module_mem.csv, static_op_mem.csv, operator_details.csv and
 * cluster_step_trace_time.csv. Each case writes small inputs with known
 * content under $TMPDIR and compares the exact rows. Malformed JSON must fail
 * at FILE:LINE:COL; CSV rows of the wrong width are skipped with a FILE:LINE
 * warning, or fail with --strict. Finally every such file of the shared
 * public samples is loaded, when ../shared/data/public is there (skipped
 * otherwise; set TB_SHARED_DATA to point elsewhere), and its rows are
 * counted against numbers taken independently with Python.
 */
#define _POSIX_C_SOURCE 200809L
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

#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"




/* Warnings of a load, one per line. */
static char warnings[16384];

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(warnings);
    snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
}

/* Loads the inputs into tmpdir/name (db gets its path); returns the status. */
static tb_status load(const char *name, const char *const *inputs, size_t n, int strict, tb_error *err,
                      char *db, size_t dbn)
{
    snprintf(db, dbn, "%s/%s", tmpdir, name);
    unlink(db);
    warnings[0] = 0;
    tb_error_clear(err);
    tb_load_options o = {.inputs = inputs, .n_inputs = n, .output = db, .strict = strict, .warn = on_warn};
    return tb_load(&o, NULL, err);
}

/* Loads one input that must load; returns the DB path (static). */
static const char *load_ok(const char *name, const char *input)
{
    static char db[4200];
    tb_error err;
    const char *in[] = {input};
    tb_status st = load(name, in, 1, 0, &err, db, sizeof db);
    if (st != TB_OK)
        fail_msg("%s: %s:%ld:%ld: %s", input, err.file, err.line, err.column, err.message);
    return db;
}

/* Runs a query returning one integer (or -1 for NULL). */


/* The rows of a TB_COMM_* table with the string ids resolved. */
#define NAME(col) "(SELECT value FROM STRING_IDS WHERE id = " col ")"

static const char op_stat_sql[] =
    "SELECT rankId, step, opKind, " NAME("opName") ", " NAME("groupName") ", startTimeNs, elapseNs, transitNs,"
    " waitNs, synchronizationNs, idleNs, waitRatio, synchronizationRatio, groupRanks, cluster"
    " FROM TB_COMM_OP_STAT ORDER BY rowid";
static const char bandwidth_sql[] =
    "SELECT rankId, step, " NAME("opName") ", transport, transitSizeMB, transitTimeMs, bandwidthGBs,"
    " largePacketRatio, opKind, " NAME("groupName") ", groupRanks, cluster FROM TB_COMM_BANDWIDTH ORDER BY rowid";
static const char matrix_sql[] =
    "SELECT rankId, step, opKind, " NAME("opName") ", " NAME("groupName") ", srcRank, dstRank, transportType,"
    " transitSizeMB, transitTimeMs, bandwidthGBs, groupRanks, cluster FROM TB_COMM_MATRIX ORDER BY rowid";
static const char group_sql[] =
    "SELECT kind, groupIndex, ranks, " NAME("groupName") ", groupId, pgName, groupRank, rankId"
    " FROM TB_COMM_GROUP ORDER BY rowid";

/* ---- communication.json / communication_matrix.json, one rank --------------- */

/* An op of each kind, one without '@', sums that are not ops, a NaN Python wrote,
 * exponents, a µs start with a half, a member spelled in lower case. */
static const char comm_json[] =
    "{\"step1\": {\"p2p\": {\"hcom_send__1_0@111\": {\"Communication Time Info\": {\n"
    "  \"Start Timestamp(us)\": 1700000000000000.5, \"Elapse Time(ms)\": 0.0015, \"Transit Time(ms)\": 1e-3,\n"
    "  \"Wait Time(ms)\": 0, \"Synchronization Time(ms)\": 2.5E-4, \"Idle Time(ms)\": 0.0000005,\n"
    "  \"Wait Time Ratio\": 0.0, \"Synchronization Time Ratio\": 0.25},\n"
    " \"Communication Bandwidth Info\": {\n"
    "  \"RDMA\": {\"Transit Size(MB)\": 2.5, \"Transit Time(ms)\": 0.001, \"Bandwidth(GB/s)\": 2500.0,\n"
    "           \"Large Packet Ratio\": 1.0, \"Size Distribution\": {\"2.5\": [1, 0.001]}},\n"
    "  \"HCCS\": {\"Transit Size(MB)\": 0, \"Transit Time(ms)\": 0, \"Bandwidth(GB/s)\": 0,\n"
    "           \"Large Packet Ratio\": 0, \"Size Distribution\": {}}}},\n"
    " \"Total Op Info\": {\"Communication Time Info\": {\"Elapse Time(ms)\": 0.0015},\n"
    "                   \"Communication Bandwidth Info\": {\"RDMA\": {\"Transit Size(MB)\": 2.5}}}},\n"
    " \"collective\": {\"hcom_allReduce__2_1@222\": {\"Communication Time Info\": {\n"
    "  \"Start Timestamp(us)\": 1700000000000100.123, \"Elapse Time(ms)\": 12.3456789, \"Transit Time(ms)\": 10,\n"
    "  \"Wait Time(ms)\": 1.2, \"Synchronization Time(ms)\": 1.1, \"Idle Time(ms)\": 1.1456789,\n"
    "  \"Wait Time Ratio\": 0.1071, \"Synchronization Time Ratio\": NaN},\n"
    " \"Communication Bandwidth Info\": {\"SIO\": {\"Transit Size(MB)\": 1e-06, \"Transit Time(ms)\": 0.5,\n"
    "  \"Bandwidth(GB/s)\": 0.002, \"Large Packet Ratio\": 0}}},\n"
    " \"noGroupOp\": {\"Communication Time Info\": {\"elapse time(ms)\": \"0.5\"}},\n"
    " \"Total Op Info\": {\"Communication Time Info\": {}}}}}\n";

static const char matrix_json[] =
    "{\"step1\": {\"p2p\": {\"hcom_send__1_0@111\": {\n"
    "   \"3-4\": {\"Transport Type\": \"RDMA\", \"Transit Size(MB)\": 2.5, \"Transit Time(ms)\": 0.001,"
    " \"Bandwidth(GB/s)\": 2500.0},\n"
    "   \"3-3\": {\"Transport Type\": \"LOCAL\", \"Transit Size(MB)\": 2.5, \"Transit Time(ms)\": 0.0001,"
    " \"Bandwidth(GB/s)\": 25000.5}},\n"
    "  \"Total Op Info\": {\"3-4\": {\"Transport Type\": \"RDMA\", \"Transit Size(MB)\": 2.5}}},\n"
    " \"collective\": {\"hcom_allReduce__2_1@222\": {\"x\": {\"Transport Type\": \"HCCS\"}}}}}\n";

static void test_comm_per_rank(void **state)
{
    (void)state;
    char dir[4200], p[4200], out[4300];
    make_dirs("r_ascend_pt/ASCEND_PROFILER_OUTPUT", out, sizeof out);
    make_dirs("r_ascend_pt", dir, sizeof dir);
    write_text("r_ascend_pt/profiler_info_3.json", "{\"rank_id\": 3}", p, sizeof p);
    write_text("r_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", comm_json, p, sizeof p);
    write_text("r_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json", matrix_json, p, sizeof p);
    const char *db = load_ok("comm.db", dir);

    /* ms -> ns exactly, half up: 0.0000005 ms = 0.5 ns -> 1; 12.3456789 ms -> 12345679; NaN -> NULL;
     * no '@' -> no group; a member found ignoring case */
    assert_string_equal(rows(db, op_stat_sql),
                        "3|step1|p2p|hcom_send__1_0|111|1700000000000000500|1500|1000|0|250|1|0|0.25||0\n"
                        "3|step1|collective|hcom_allReduce__2_1|222|1700000000000100123|12345679|10000000|1200000|"
                        "1100000|1145679|0.1071|||0\n"
                        "3|step1|collective|noGroupOp|||500000||||||||0\n");
    assert_string_equal(rows(db, bandwidth_sql),
                        "3|step1|hcom_send__1_0|RDMA|2.5|0.001|2500|1|p2p|111||0\n"
                        "3|step1|hcom_send__1_0|HCCS|0|0|0|0|p2p|111||0\n"
                        "3|step1|hcom_allReduce__2_1|SIO|1.0e-06|0.5|0.002|0|collective|222||0\n");
    /* the Size Distribution: size key as written, packets, transit ms */
    assert_string_equal(rows(db, "SELECT rankId, step, opKind, transport, sizeMB, count, timeMs FROM TB_COMM_SIZE_DIST"),
                        "3|step1|p2p|RDMA|2.5|1|0.001\n");
    /* a link key that is not SRC-DST keeps its row, ranks NULL */
    assert_string_equal(rows(db, matrix_sql),
                        "3|step1|p2p|hcom_send__1_0|111|3|4|RDMA|2.5|0.001|2500||0\n"
                        "3|step1|p2p|hcom_send__1_0|111|3|3|LOCAL|2.5|0.0001|25000.5||0\n"
                        "3|step1|collective|hcom_allReduce__2_1|222|||HCCS|||||0\n");
    /* bookkeeping: one rank (from profiler_info_3.json), counts in "other tables" */
    assert_string_equal(rows(db, "SELECT kind, rowsRead FROM TB_SOURCE WHERE kind <> 'ignored' ORDER BY id"),
                        "comm json|7\ncomm json|3\n");
    assert_string_equal(rows(db, "SELECT dest, events FROM TB_LOAD_COUNT ORDER BY sourceId"),
                        "other tables|7\nother tables|3\n");
    assert_string_equal(rows(db, "SELECT rankId FROM TB_RANK"), "3\n");
    /* profiler_info_3.json is not a trace: listed as ignored */
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_SOURCE WHERE kind = 'ignored'"
                            " AND path LIKE '%%profiler_info_3.json'"),
                     1);
    assert_string_equal(warnings, "");

    /* named on the command line, the file is read as what it is, not as a trace */
    write_text("r_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json", comm_json, p, sizeof p);
    db = load_ok("comm_file.db", p);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_COMM_OP_STAT"), 3);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_COMM_BANDWIDTH"), 3);
}

/* ---- cluster_communication.json / cluster_communication_matrix.json ---------- */

static const char cluster_comm_json[] =
    "{\"p2p\": {\"step1\": {\"hcom_send__1_0@111\": {\n"
    "    \"0\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 10.5, \"Elapse Time(ms)\": 2},\n"
    "           \"Communication Bandwidth Info\": {\"RDMA\": {\"Transit Size(MB)\": 1, \"Bandwidth(GB/s)\": 3}}},\n"
    "    \"8\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 11, \"Elapse Time(ms)\": 2.0000004}}},\n"
    "   \"Total Op Info\": {\"0\": {\"Communication Time Info\": {\"Elapse Time(ms)\": 2}}}}},\n"
    " \"(0, 1, 2, 3)\": {\"step1\": {\"hcom_allReduce__2_1@222\": {\n"
    "    \"1\": {\"Communication Time Info\": {\"Start Timestamp(us)\": 12, \"Wait Time Ratio\": 0.5}}}}},\n"
    " \"junk\": 5}\n";

static const char cluster_matrix_json[] =
    "{\"(0, 1)\": {\"step1\": {\"hcom_allReduce__2_1@222\": {\"0-1\": {\"Transport Type\": \"HCCS\","
    " \"Transit Size(MB)\": 0.5, \"Transit Time(ms)\": 0.25, \"Bandwidth(GB/s)\": 2}},\n"
    "  \"Total Op Info\": {\"0-1\": {\"Transport Type\": \"HCCS\"}}}},\n"
    " \"p2p\": {\"step1\": {\"hcom_send__1_0@111\": {\"0-8\": {\"Transport Type\": \"RDMA\"}}}}}\n";

static void test_comm_cluster(void **state)
{
    (void)state;
    char dir[4200], p[4200];
    make_dirs("cluster_analysis_output", dir, sizeof dir);
    write_text("cluster_analysis_output/cluster_communication.json", cluster_comm_json, p, sizeof p);
    const char *db = load_ok("cluster.db", p);
    /* rankId from the rank keys; the collective group's rank set; cluster = 1 */
    assert_string_equal(rows(db, op_stat_sql),
                        "0|step1|p2p|hcom_send__1_0|111|10500|2000000||||||||1\n"
                        "8|step1|p2p|hcom_send__1_0|111|11000|2000000||||||||1\n"
                        "1|step1|collective|hcom_allReduce__2_1|222|12000||||||0.5||0,1,2,3|1\n");
    assert_string_equal(rows(db, bandwidth_sql), "0|step1|hcom_send__1_0|RDMA|1||3||p2p|111||1\n");
    /* the top-level "junk": 5 is skipped with one warning */
    assert_non_null(strstr(warnings, "cluster_communication.json: 1 entry of an unexpected shape skipped,"
                                     " the first at 'junk'\n"));

    write_text("cluster_analysis_output/cluster_communication_matrix.json", cluster_matrix_json, p, sizeof p);
    db = load_ok("cluster_matrix.db", p);
    /* the file names no rank for a link: rankId NULL */
    assert_string_equal(rows(db, matrix_sql),
                        "|step1|collective|hcom_allReduce__2_1|222|0|1|HCCS|0.5|0.25|2|0,1|1\n"
                        "|step1|p2p|hcom_send__1_0|111|0|8|RDMA|||||1\n");
    assert_string_equal(warnings, "");
}

/* ---- communication_group.json and profiler_metadata.json -------------------- */

static void test_comm_groups(void **state)
{
    (void)state;
    char dir[4200], p[4200];
    make_dirs("groups", dir, sizeof dir);
    /* the second [0, 1] takes the second named entry of that rank set; [5, 6] matches
     * no listed group and becomes a row of its own; empty names are NULL */
    write_text("groups/communication_group.json",
               "{\"collective\": [[0, 1], [2, 3], [0, 1]], \"p2p\": [[0, 1, 2, 3]],\n"
               " \"comm_group_parallel_info\": [\n"
               "  {\"type\": \"collective\", \"rank_set\": [0, 1], \"group_name\": \"g01\", \"group_id\": \"id01\","
               " \"pg_name\": \"tp\"},\n"
               "  {\"type\": \"collective\", \"rank_set\": [0, 1], \"group_name\": \"g01b\", \"group_id\": \"id01b\","
               " \"pg_name\": \"dp\"},\n"
               "  {\"type\": \"collective\", \"rank_set\": [5, 6], \"group_name\": \"g56\", \"group_id\": \"\","
               " \"pg_name\": \"pp\"},\n"
               "  {\"type\": \"p2p\", \"rank_set\": [0, 1, 2, 3], \"group_name\": \"\", \"group_id\": \"\","
               " \"pg_name\": \"\"}]}\n",
               p, sizeof p);
    const char *db = load_ok("groups.db", dir);
    assert_string_equal(rows(db, group_sql),
                        "collective|0|0,1|g01|id01|tp||\n"
                        "collective|1|2,3|||||\n"
                        "collective|2|0,1|g01b|id01b|dp||\n"
                        "p2p|0|0,1,2,3|||||\n"
                        "collective|3|5,6|g56||pp||\n");
    assert_string_equal(rows(db, "SELECT kind FROM TB_SOURCE"), "comm group json\n");

    /* profiler_metadata.json: its parallel groups; distributed_args.rank names the rank */
    char meta[4200];
    make_dirs("meta_ascend_pt", meta, sizeof meta);
    write_text("meta_ascend_pt/profiler_metadata.json",
               "{\"distributed_args\": {\"rank\": 5, \"world_size\": 8},\n"
               " \"ENV_VARIABLES\": {\"HCCL_ALGO\": \"\"},\n"
               " \"parallel_group_info\": {\n"
               "  \"idA\": {\"group_name\": \"dp\", \"group_rank\": 1, \"global_ranks\": [1, 5]},\n"
               "  \"idB\": {\"group_name\": \"tp\", \"group_rank\": 0, \"global_ranks\": [5, 4]},\n"
               "  \"idC\": {\"group_name\": \"dp\", \"group_rank\": 0, \"global_ranks\": [5]}}}\n",
               p, sizeof p);
    db = load_ok("meta.db", meta);
    assert_string_equal(rows(db, group_sql),
                        "dp|0|1,5||idA|dp|1|5\n"
                        "tp|0|5,4||idB|tp|0|5\n"
                        "dp|1|5||idC|dp|0|5\n");
    assert_string_equal(rows(db, "SELECT rankId FROM TB_RANK"), "5\n");
    assert_string_equal(rows(db, "SELECT kind FROM TB_SOURCE"), "profiler metadata\n");
    /* and every top-level member as a TB_PROFILE_META row of the rank, the text as written */
    assert_string_equal(rows(db, "SELECT rankId, name, length(value), json_type(value) FROM TB_PROFILE_META"),
                        "5|distributed_args|28|object\n"
                        "5|ENV_VARIABLES|17|object\n"
                        "5|parallel_group_info|214|object\n");

    /* strings as their text, numbers keep their JSON types, escapes in keys, nested braces in strings */
    make_dirs("meta2_ascend_pt", meta, sizeof meta);
    write_text("meta2_ascend_pt/profiler_metadata.json",
               "\xEF\xBB\xBF {\"pp_info\" : {\"pp_type\": \"DualPipeV\", \"microbatch_num\": 8, \"x\": \"}]\"},"
               "\"s\":\"a\\\"b\\u00e9\", \"k\\u0031\": 12.50 ,\"t\": true, \"z\": null, \"e\": {}, \"l\": [1, [2]]}",
               p, sizeof p);
    db = load_ok("meta2.db", meta);
    assert_string_equal(rows(db, "SELECT name, value, CASE WHEN json_valid(value) THEN json_type(value) END, "
                                 "CASE WHEN json_valid(value) THEN json_type(value, '$.microbatch_num') END "
                                 "FROM TB_PROFILE_META"),
                        "pp_info|{\"pp_type\": \"DualPipeV\", \"microbatch_num\": 8, \"x\": \"}]\"}|object|integer\n"
                        "s|a\"b\xC3\xA9||\n"
                        "k1|12.50|real|\n"
                        "t|true|true|\n"
                        "z|null|null|\n"
                        "e|{}|object|\n"
                        "l|[1, [2]]|array|\n");
}

/* ---- malformed JSON ----------------------------------------------------------------- */

static void expect_json_error(const char *name, const char *text, long line, long col, const char *msg)
{
    char dir[4200], p[4200], rel[256], db[4200];
    snprintf(rel, sizeof rel, "bad_%s", name);
    make_dirs(rel, dir, sizeof dir);
    snprintf(rel, sizeof rel, "bad_%s/%s", name, name);
    write_text(rel, text, p, sizeof p);
    tb_error err;
    const char *in[] = {dir};
    assert_int_equal(load("bad.db", in, 1, 0, &err, db, sizeof db), TB_ERR_PARSE);
    assert_string_equal(err.file, p);
    assert_int_equal(err.line, line);
    assert_int_equal(err.column, col);
    assert_string_equal(err.message, msg);
    assert_int_equal(access(db, F_OK), -1); /* nothing left behind */
}

static void test_malformed_json(void **state)
{
    (void)state;
    /* the position is the original text's, though numbers are quoted before parsing */
    expect_json_error("communication.json", "{\"step1\": {\"p2p\": {\n  \"a@b\": [1, 2,, 3]}}}", 2, 16,
                      "malformed JSON: unexpected token near ','");
    expect_json_error("communication_matrix.json", "{\"step1\": 12x}", 1, 13,
                      "malformed JSON: '}' expected near 'x'");
    expect_json_error("cluster_communication.json", "{\"p2p\": {}", 1, 10,
                      "malformed JSON: '}' expected near end of file");
    expect_json_error("communication_group.json", "\n  \n", 1, 1, "empty input, expected a JSON object");
    expect_json_error("profiler_metadata.json", "[1, 2]", 0, 0,
                      "expected a JSON object at the top, found an array");
}

/* ---- analysis.db --------------------------------------------------------------------- */

static void sql_exec(sqlite3 *h, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
}

static const char step_trace_schema[] =
    "CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC, communication_not_overlapped "
    "NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, "
    "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);"
    "CREATE TABLE status_info(id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT, value TEXT);";

static const char step_trace_sql[] =
    "SELECT rankId, deviceId, step, computing, communicationNotOverlapped, overlapped, communication, free, stage,"
    " bubble, communicationNotOverlappedExcludeReceive, preparing FROM TB_STEP_TRACE_TIME ORDER BY rowid";

static void copy_file(const char *from, const char *to)
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

static void test_analysis_db(void **state)
{
    (void)state;
    char dir[4200], p[4300], db[4200];
    make_dirs("an_ascend_pt/ASCEND_PROFILER_OUTPUT", dir, sizeof dir);
    snprintf(p, sizeof p, "%s/analysis.db", dir);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
    sql_exec(h, step_trace_schema);
    sql_exec(h, "INSERT INTO StepTraceTime VALUES (0, NULL, 75.72, 0, 0, 0, 271016.82, 271092.54, 0, 0, 0);"
                "INSERT INTO StepTraceTime VALUES (1, '7', 1.5, 2, 3, 4, 5, 6, 7, 8, NULL);"
                "INSERT INTO StepTraceTime VALUES (2, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9);");
    sqlite3_close(h);
    /* the rank's step_trace_time.csv, sorted after the DB, adds no second copy */
    char csv[4300];
    write_text("an_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
               "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing\n0,7,1,1,1,1,1,1,1,1,1\n",
               csv, sizeof csv);
    write_text("an_ascend_pt/profiler_info_2.json", "{}", db, sizeof db);
    char root[4200];
    make_dirs("an_ascend_pt", root, sizeof root);
    const char *out = load_ok("analysis.db", root);
    assert_string_equal(rows(out, step_trace_sql),
                        "2|0||75.72|0|0|0|271016.82|271092.54|0|0|0\n"
                        "2|1|7|1.5|2|3|4|5|6|7|8|\n"
                        "2|2|8|1|2|3|4|5|6|7|8|9\n");
    assert_string_equal(rows(out, "SELECT s.kind, c.dest, c.events FROM TB_LOAD_COUNT c JOIN TB_SOURCE s"
                                  " ON s.id = c.sourceId ORDER BY s.id"),
                        "torch_npu analysis db|other tables|3\n"
                        "torch_npu csv|skipped: table filled by a better source|1\n");

    /* with a write-ahead log: the rows in the log are read, the input is not touched */
    char wdir[4200], wdb[4300], wwal[4300], src[4300];
    make_dirs("an_wal", wdir, sizeof wdir);
    snprintf(src, sizeof src, "%s/writer.db", tmpdir);
    assert_int_equal(sqlite3_open(src, &h), SQLITE_OK);
    sql_exec(h, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
    sql_exec(h, step_trace_schema);
    sql_exec(h, "INSERT INTO StepTraceTime(deviceId, step, computing) VALUES (4, 'a', 0.5), (5, 'b', 0.25);");
    /* copy the DB and its log while the writer still holds them */
    snprintf(wdb, sizeof wdb, "%s/analysis.db", wdir);
    snprintf(wwal, sizeof wwal, "%s/analysis.db-wal", wdir);
    copy_file(src, wdb);
    char srcwal[4400];
    snprintf(srcwal, sizeof srcwal, "%s-wal", src);
    copy_file(srcwal, wwal);
    sqlite3_close(h);
    assert_true(tu_file_size(wwal) > 0);
    long db_size = tu_file_size(wdb), wal_size = tu_file_size(wwal);
    out = load_ok("analysis_wal.db", wdir);
    assert_string_equal(rows(out, step_trace_sql), "0|4|a|0.5||||||||\n0|5|b|0.25||||||||\n");
    assert_int_equal(tu_file_size(wdb), db_size);
    assert_int_equal(tu_file_size(wwal), wal_size);
    snprintf(p, sizeof p, "%s/analysis.db-shm", wdir);
    assert_int_equal(access(p, F_OK), -1);

    /* a DB without StepTraceTime loads nothing, with a warning */
    char edir[4200];
    make_dirs("an_empty", edir, sizeof edir);
    snprintf(p, sizeof p, "%s/analysis.db", edir);
    assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
    sql_exec(h, "CREATE TABLE other (a);");
    sqlite3_close(h);
    out = load_ok("analysis_empty.db", edir);
    assert_int_equal(q1(out, "SELECT count(*) FROM TB_STEP_TRACE_TIME"), 0);
    char want[4600];
    snprintf(want, sizeof want, "%s: no StepTraceTime table: nothing loaded\n", p);
    assert_string_equal(warnings, want);
}

/* ---- summary CSVs ------------------------------------------------------------------ */

static void test_summary_csvs(void **state)
{
    (void)state;
    char root[4200], out_dir[4200], p[4300], db[4200];
    make_dirs("csv_ascend_pt/ASCEND_PROFILER_OUTPUT", out_dir, sizeof out_dir);
    make_dirs("csv_ascend_pt", root, sizeof root);
    write_text("csv_ascend_pt/profiler_info_1.json", "{}", p, sizeof p);
    /* torch_npu: MB, CRLF, a TAB after the time, no Device_id, a short row */
    char mm[4300];
    write_text("csv_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv",
               "Component,Timestamp(us),Total Reserved(MB),Device\r\n"
               "SLOG,1724670453385978.290\t,1.5,NPU:2\r\n"
               "APP,1724670453385979.5,N/A,NPU:2\r\n"
               "BAD,1\r\n",
               mm, sizeof mm);
    /* msprof: KB, Device_id */
    write_text("csv_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem_20240101000000.csv",
               "Device_id,Component,Timestamp(us),Total Reserved(KB),Device\n1,HCCL,10.5,2,NPU:1\n", p, sizeof p);
    write_text("csv_ascend_pt/ASCEND_PROFILER_OUTPUT/static_op_mem.csv",
               "Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)\n"
               "host,sqrt_01,0,0,31,32,2343.78125\n"
               "3,add_1,m1,2,4,5,0.5\n",
               p, sizeof p);
    write_text("csv_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_details.csv",
               "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),Device Self Duration(us),"
               "Device Total Duration(us),Device Self Duration With AICore(us),Device Total Duration With AICore(us)\n"
               "aten::zero_,\"\"\"232138240\"\"\",\"a.py(1): f;\nb.py(2): g\",221.16,256.85,0,496.8508203,0,"
               "496.8508203\n"
               "aten::empty,\";\n;\n\",,66.25,66.25,N/A,0,0,0\n",
               p, sizeof p);
    const char *in[] = {root};
    tb_error err;
    assert_int_equal(load("csv.db", in, 1, 0, &err, db, sizeof db), TB_OK);
    char want[4600];
    snprintf(want, sizeof want, "%s:4: row has 2 fields, the header has 4: row skipped (an error with --strict)\n", mm);
    assert_string_equal(warnings, want);
    assert_string_equal(rows(db, "SELECT rankId, " NAME("component") ", timestampNs, totalReservedBytes, deviceId"
                                 " FROM TB_NPU_MODULE_MEM ORDER BY rowid"),
                        "1|SLOG|1724670453385978290|1572864|2\n"
                        "1|APP|1724670453385979500||2\n"
                        "1|HCCL|10500|2048|1\n");
    assert_string_equal(rows(db, "SELECT rankId, deviceId, typeof(deviceId), " NAME("opName") ", " NAME("modelName")
                                 ", graphId, nodeIndexStart, nodeIndexEnd, sizeBytes FROM TB_STATIC_OP_MEM"
                                 " ORDER BY rowid"),
                        "1|host|text|sqrt_01|0|0|31|32|2400032\n"
                        "1|3|text|add_1|m1|2|4|5|512\n");
    /* durations as exact ns (a 4th decimal rounds); shapes unwrapped; stacks kept with their newlines */
    assert_string_equal(rows(db, "SELECT rankId, " NAME("name") ", " NAME("inputShapes") ", callStack, hostSelfNs,"
                                 " hostTotalNs, deviceSelfNs, deviceTotalNs, deviceSelfAicoreNs, deviceTotalAicoreNs"
                                 " FROM TB_OPERATOR_DETAILS ORDER BY rowid"),
                        "1|aten::zero_|232138240|a.py(1): f;\nb.py(2): g|221160|256850|0|496851|0|496851\n"
                        "1|aten::empty|;\n;\n||66250|66250||0|0|0\n");
    assert_int_equal(q1(db, "SELECT events FROM TB_LOAD_COUNT c JOIN TB_SOURCE s ON s.id = c.sourceId"
                            " WHERE s.path LIKE '%%npu_module_mem.csv' AND c.dest = 'skipped: rows with a wrong"
                            " field count'"),
                     1);

    /* --strict: the short row is an error at FILE:LINE */
    assert_int_equal(load("csv_strict.db", in, 1, 1, &err, db, sizeof db), TB_ERR_PARSE);
    assert_string_equal(err.file, mm);
    assert_int_equal(err.line, 4);
    assert_string_equal(err.message, "row has 2 fields, the header has 4");

    /* msprof-analyze cluster step trace: as written, Step may be empty, no Preparing column */
    char cdir[4200];
    make_dirs("cluster_csv", cdir, sizeof cdir);
    write_text("cluster_csv/cluster_step_trace_time.csv",
               "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive)\n"
               ",rank,0,1.5,2,3,4,5,6,7,8\n"
               "2,stage,\"(0, 1)\",1,2,3,4,5,6,0.0,8.25\n"
               "2,rank,1\n",
               p, sizeof p);
    const char *in2[] = {cdir};
    assert_int_equal(load("cluster_csv.db", in2, 1, 0, &err, db, sizeof db), TB_OK);
    assert_string_equal(rows(db, "SELECT * FROM TB_CLUSTER_STEP_TRACE_TIME ORDER BY rowid"),
                        "|rank|0|1.5|2|3|4|5|6|7|8|\n"
                        "2|stage|(0, 1)|1|2|3|4|5|6|0|8.25|\n");
    snprintf(want, sizeof want, "%s:4: row has 3 fields, the header has 11: row skipped (an error with --strict)\n", p);
    assert_string_equal(warnings, want);
    assert_string_equal(rows(db, "SELECT kind FROM TB_SOURCE"), "msprof-analyze csv\n");
}

/* ---- the shared public samples ---------------------------------------------------- */

/* 1 when dir/ascend/cluster_analysis_output exists. */

/*
 * Each file loaded on its own, and the rows of each table it fills. The
 * counts were taken independently with Python, e.g. for communication.json:
 *   d = json.load(open(f))
 *   ops = [o for step in d.values() for kind in step.values()
 *          for k, o in kind.items() if k != 'Total Op Info']
 *   op_rows = len(ops); bandwidth_rows = sum(len(o['Communication Bandwidth Info']) for o in ops)
 * for the cluster form one level more (group -> step -> op -> rank), for the
 * matrices the "src-dst" links of every op but "Total Op Info"; for
 * communication_group.json the lists' lengths (collective + p2p; every
 * comm_group_parallel_info entry of misc/ names one of them); for
 * profiler_metadata.json len(d['parallel_group_info']); for CSVs
 *   rows = [r for r in csv.reader(open(f, newline='', encoding='utf-8-sig')) if r]
 *   sum(1 for r in rows[1:] if len(r) == len(rows[0]))
 * and for analysis.db `SELECT count(*) FROM StepTraceTime` (sqlite3, immutable=1).
 */
static const struct shared_file {
    const char *rel;
    const char *table;
    int64_t rows;
} shared_files[] = {
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/communication.json", "TB_COMM_OP_STAT", 28},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/communication.json", "TB_COMM_BANDWIDTH", 112},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/communication.json", "TB_COMM_OP_STAT", 28},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/communication.json", "TB_COMM_BANDWIDTH", 112},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/communication_matrix.json", "TB_COMM_MATRIX", 111},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/communication_matrix.json", "TB_COMM_MATRIX", 112},
    {"cluster_analysis_output/cluster_communication.json", "TB_COMM_OP_STAT", 6},
    {"cluster_analysis_output/cluster_communication.json", "TB_COMM_BANDWIDTH", 24},
    {"cluster_analysis_output/cluster_communication_matrix.json", "TB_COMM_MATRIX", 8},
    {"cluster_analysis_output/communication_group.json", "TB_COMM_GROUP", 29},             /* 27 + 2 */
    {"misc/communication_group.json", "TB_COMM_GROUP", 22},                                /* 21 + 1 */
    {"misc/profiler_metadata.json", "TB_COMM_GROUP", 21},
    {"cluster_analysis_output/cluster_step_trace_time.csv", "TB_CLUSTER_STEP_TRACE_TIME", 18},
    {"cluster_analysis_output/cluster_step_trace_time_8ranks.csv", "TB_CLUSTER_STEP_TRACE_TIME", 9},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv", "TB_NPU_MODULE_MEM", 78},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/static_op_mem.csv", "TB_STATIC_OP_MEM", 56},
    {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/operator_details.csv", "TB_OPERATOR_DETAILS", 2},
    {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/operator_details.csv", "TB_OPERATOR_DETAILS", 3},
    {"msprof_db/analysis.db", "TB_STEP_TRACE_TIME", 4},
};

static void test_shared_files(void **state)
{
    (void)state;
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof shared_files / sizeof shared_files[0]; i++) {
        const struct shared_file *f = &shared_files[i];
        shared_path(path, sizeof path, f->rel);
        const char *db = load_ok("shared.db", path);
        int64_t got = q1(db, "SELECT count(*) FROM %s", f->table);
        if (got != f->rows)
            fail_msg("%s: %lld rows in %s, expected %lld", f->rel, (long long)got, f->table, (long long)f->rows);
        if (strcmp(warnings, "") != 0)
            fail_msg("%s: unexpected warnings:\n%s", f->rel, warnings);
    }
}

/*
 * Values, against sums taken with Python's decimal module over the number
 * text (json.load(..., parse_float=str)): each time rounded half up to ns,
 *   ns = int((Decimal(t) * 10**6).quantize(Decimal(1), rounding=ROUND_HALF_UP))
 * and the start (µs) times 10**3, minus 1695115378000000000 per row to stay
 * in int64 (28 ops per rank).
 */
static void test_shared_values(void **state)
{
    (void)state;
    char path[PATH_MAX];
    static const struct {
        const char *rel;
        int64_t start, elapse, idle, first;
    } sums[] = {
        {"torch_npu_rank0/ASCEND_PROFILER_OUTPUT/communication.json", 22726966200, 152254935, 29341092,
         INT64_C(1695115378810042500)},
        {"torch_npu_rank1/ASCEND_PROFILER_OUTPUT/communication.json", 22723499100, 157167420, 36017580,
         INT64_C(1695115378810055500)},
    };
    for (size_t i = 0; i < 2; i++) {
        shared_path(path, sizeof path, sums[i].rel);
        const char *db = load_ok("shared_values.db", path);
        assert_int_equal(q1(db, "SELECT sum(startTimeNs - 1695115378000000000) FROM TB_COMM_OP_STAT"), sums[i].start);
        assert_int_equal(q1(db, "SELECT sum(elapseNs) FROM TB_COMM_OP_STAT"), sums[i].elapse);
        assert_int_equal(q1(db, "SELECT sum(idleNs) FROM TB_COMM_OP_STAT"), sums[i].idle);
        /* the first op, exactly: "Start Timestamp(us)": 1695115378810042.5 (rank 0), ...055.5 (rank 1) */
        assert_int_equal(q1(db, "SELECT startTimeNs FROM TB_COMM_OP_STAT WHERE rowid = 1"), sums[i].first);
    }
    /* the cluster file: ranks 0 and 1 of its ops, elapse summed as above */
    shared_path(path, sizeof path, "cluster_analysis_output/cluster_communication.json");
    const char *db = load_ok("shared_values.db", path);
    assert_int_equal(q1(db, "SELECT sum(elapseNs) FROM TB_COMM_OP_STAT"), 16800315);
    assert_string_equal(rows(db, "SELECT DISTINCT rankId FROM TB_COMM_OP_STAT ORDER BY 1"), "0\n1\n");
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_COMM_OP_STAT WHERE groupRanks = '0,1,2,3,4,5,6,7'"), 4);
    /* misc/communication_group.json: 21 of its 22 groups carry a group id (the p2p one is empty) */
    shared_path(path, sizeof path, "misc/communication_group.json");
    db = load_ok("shared_values.db", path);
    assert_int_equal(q1(db, "SELECT count(*) FROM TB_COMM_GROUP WHERE groupId IS NOT NULL"), 21);
}

/* Every directory of the shared Ascend samples with these inputs loads, with the counts above. */
static void test_shared_dirs(void **state)
{
    (void)state;
    char path[PATH_MAX];
    static const struct {
        const char *rel;
        const char *sql;
        const char *want;
    } dirs[] = {
        {"cluster_analysis_output",
         "SELECT (SELECT count(*) FROM TB_COMM_OP_STAT), (SELECT count(*) FROM TB_COMM_BANDWIDTH),"
         " (SELECT count(*) FROM TB_COMM_MATRIX), (SELECT count(*) FROM TB_COMM_GROUP),"
         " (SELECT count(*) FROM TB_CLUSTER_STEP_TRACE_TIME)",
         "6|24|8|29|27\n"},
        {"misc", "SELECT count(*) FROM TB_COMM_GROUP", "43\n"},
        {"msprof_db", "SELECT count(*) FROM TB_STEP_TRACE_TIME", "4\n"},
        {"torch_npu_rank0",
         "SELECT (SELECT count(*) FROM TB_COMM_OP_STAT), (SELECT count(*) FROM TB_COMM_BANDWIDTH),"
         " (SELECT count(*) FROM TB_COMM_MATRIX), (SELECT count(*) FROM TB_NPU_MODULE_MEM),"
         " (SELECT count(*) FROM TB_OPERATOR_DETAILS), (SELECT count(*) FROM TB_STEP_TRACE_TIME)",
         "28|112|111|78|2|1\n"},
        {"torch_npu_rank1",
         "SELECT (SELECT count(*) FROM TB_COMM_OP_STAT), (SELECT count(*) FROM TB_COMM_BANDWIDTH),"
         " (SELECT count(*) FROM TB_COMM_MATRIX), (SELECT count(*) FROM TB_STATIC_OP_MEM),"
         " (SELECT count(*) FROM TB_OPERATOR_DETAILS), (SELECT count(*) FROM TB_STEP_TRACE_TIME),"
         " (SELECT DISTINCT rankId FROM TB_COMM_OP_STAT)",
         "28|112|112|56|3|1|1\n"},
    };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        shared_path(path, sizeof path, dirs[i].rel);
        const char *db = load_ok("shared_dir.db", path);
        const char *got = rows(db, dirs[i].sql);
        if (strcmp(got, dirs[i].want) != 0)
            fail_msg("%s: got %s, expected %s", dirs[i].rel, got, dirs[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_per_rank),   cmocka_unit_test(test_comm_cluster),
        cmocka_unit_test(test_comm_groups),     cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_analysis_db),     cmocka_unit_test(test_summary_csvs),
        cmocka_unit_test(test_shared_files),    cmocka_unit_test(test_shared_values),
        cmocka_unit_test(test_shared_dirs),
    };
    return cmocka_run_group_tests(tests, tu_setup_tmpdir, tu_teardown_tmpdir);
}
