/* SPDX-License-Identifier: MIT */
/*
 * summary_db.c - the tables of an msprof rank that `export summary` writes
 * no file from, for the README, and the README's note on a file whose
 * times the DB keeps in another clock than msprof's; and whether a
 * torch_npu rank's step trace is an analysis.db's, to be written as it
 * was stored.
 *
 * msprof's layout is written from the built-in reports of
 * reports/msprof_summaries.yaml and reports/msprof_db_summaries.yaml (and
 * the statistics of kernels.yaml and api.yaml); each runs only when its
 * table holds rows. The data tables of an msprof DB that none of them
 * reads are listed here with the file msprof makes of them, if any, so the
 * README says what the DB holds that the folder does not. The lookup
 * tables (STRING_IDS, ENUM_*, NPU_INFO, SESSION_TIME_INFO, ...) are not
 * data and are not listed.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "export/summary_db.h"

/* An msprof DB table no summary of the layout reads, and msprof's file of it
 * with the reason the DB cannot give it ("" and NULL when msprof writes
 * none: the table is in its timeline or DB only). */
static const struct {
    const char *table, *file, *why;
} unwritten[] = {
    {"QOS", "", NULL},
    {"ACC_PMU", "", NULL},
    {"SOC_BANDWIDTH_LEVEL", "", NULL},
    {"AICORE_FREQ", "", NULL},
    {"SAMPLE_PMU_TIMELINE", "", NULL},
    {"SIO", "", NULL},
    {"DPU_TASK", "", NULL},
    {"HOST_MEM_USAGE", "host_mem_usage",
     "the DB keeps the host's memory usage in % only, and msprof's file gives KB from the host's total memory "
     "(Total Memory(KB), Peak Used Memory(KB), Recommend Memory(KB): no column in %), which the DB does not hold"},
    {"NETDEV_STATS", "", NULL},
    {"OVERLAP_ANALYSIS", "", NULL},
    {"MEMCPY_INFO", "", NULL},
};

/* The rows of table for rank; -1 when the table or its rankId column is missing. */
static int64_t rank_rows(sqlite3 *db, const char *table, int64_t rank)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\" WHERE rankId = ?1", table);
    sqlite3_stmt *q = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, rank);
        if (sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    return n;
}

/* NPU_OP_MEM rows whose type the rank's ENUM_MEMORY (or, in a DB without
 * one, its STRING_IDS) names neither allocate nor release: operator_memory
 * cannot pair them (memory_record has them). */
static void unnamed_op_mem(sqlite3 *db, int64_t rank, json_t *not_written)
{
    const char *sql = "SELECT count(*), group_concat(DISTINCT m.type), EXISTS (SELECT 1 FROM TB_SOURCE_ENUM e WHERE "
                      "e.tableName = 'ENUM_MEMORY' AND e.rankId = ?1) FROM NPU_OP_MEM m WHERE m.rankId = ?1 AND "
                      "NOT EXISTS (SELECT 1 FROM TB_SOURCE_ENUM e WHERE e.tableName IN ('ENUM_MEMORY', 'NPU_OP_MEM.type') "
                      "AND e.rankId IS m.rankId AND e.id = m.type AND lower(e.name) IN ('allocate', 'release'))";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, rank);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0)
            json_array_append_new(
                not_written,
                json_sprintf("operator_memory_*.csv: %" PRId64 " NPU_OP_MEM row%s left out: the DB's %s names "
                             "type %s neither allocate nor release",
                             (int64_t)sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 0) == 1 ? "" : "s",
                             sqlite3_column_int(q, 2) ? "ENUM_MEMORY" : "STRING_IDS",
                             (const char *)sqlite3_column_text(q, 1)));
    }
    sqlite3_finalize(q);
}

/* Devices with AI Core sample metrics that NPU_INFO names no chip of: the
 * columns msprof writes for some chips only are left out (as for a chip
 * that has none of them), which the README says. */
static void unnamed_chips(sqlite3 *db, int64_t rank, json_t *not_written)
{
    const char *sql = "SELECT group_concat(DISTINCT p.deviceId) FROM SAMPLE_PMU_SUMMARY p WHERE p.rankId = ?1 AND "
                      "p.value IS NOT NULL AND NOT EXISTS (SELECT 1 FROM NPU_INFO n WHERE n.id = p.deviceId AND "
                      "n.rankId IS p.rankId AND n.name IS NOT NULL)";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, rank);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
            json_array_append_new(
                not_written,
                json_sprintf("ai_core_utilization_*.csv, ai_vector_core_utilization_*.csv: NPU_INFO names no chip for "
                             "device %s: the columns msprof writes for some chips only (ub_read_bw_mte, "
                             "ub_write_bw_mte, l2_read_bw, l2_write_bw) are not written, and no metric is N/A",
                             (const char *)sqlite3_column_text(q, 0)));
    }
    sqlite3_finalize(q);
}

void summary_db_not_written(sqlite3 *db, int64_t rank, json_t *not_written)
{
    for (size_t i = 0; i < sizeof unwritten / sizeof unwritten[0]; i++) {
        int64_t n = rank_rows(db, unwritten[i].table, rank);
        if (n <= 0)
            continue;
        if (unwritten[i].why)
            json_array_append_new(not_written,
                                  json_sprintf("%s_*.csv: not written from %s (%" PRId64 " row%s in the DB): %s",
                                               unwritten[i].file, unwritten[i].table, n, n == 1 ? "" : "s",
                                               unwritten[i].why));
        else
            json_array_append_new(not_written,
                                  json_sprintf("%s (%" PRId64 " row%s in the DB): msprof writes no summary file "
                                               "of this table (query it with `tracebook query`)",
                                               unwritten[i].table, n, n == 1 ? "" : "s"));
    }
    unnamed_op_mem(db, rank, not_written);
    unnamed_chips(db, rank, not_written);
}

const char *summary_db_file_note(const char *name)
{
    static const struct {
        const char *prefix, *note;
    } notes[] = {
        {"nic_", "Timestamp in the host clock, as the DB keeps it; msprof's own CSV uses the device clock"},
        {"roce_", "Timestamp in the host clock, as the DB keeps it; msprof's own CSV uses the device clock"},
        {"ccu_mission_", "Instruction Start Time in the host clock, as the DB keeps it; msprof's own CSV uses the "
                         "device clock"},
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (!strncmp(name, notes[i].prefix, strlen(notes[i].prefix)))
            return notes[i].note;
    return NULL;
}

int summary_db_analysis_steps(sqlite3 *db, int64_t rank)
{
    const char *sql = "SELECT EXISTS (SELECT 1 FROM TB_STEP_TRACE_TIME WHERE rankId = ?1) AND "
                      "EXISTS (SELECT 1 FROM TB_SOURCE WHERE rankId = ?1 AND kind = 'torch_npu analysis db')";
    sqlite3_stmt *q = NULL;
    int yes = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, rank);
        yes = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0);
    }
    sqlite3_finalize(q);
    return yes;
}
