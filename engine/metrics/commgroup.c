/* SPDX-License-Identifier: MIT */
/*
 * commgroup.c - the communication groups of a cluster, as msprof-analyze's
 * cluster analysis lists them (docs/metrics.md, "Communication groups").
 *
 * communication_group_map: one row per communication group: type
 *     ('collective', or 'p2p' for a group whose ops' names hold send,
 *     receive or recv), rankSet (the ranks, "(0,1,2,3)"), groupName (the
 *     name the ops carry), groupId, pgName (the process group's key and name
 *     in the ranks' profiler_metadata.json parallel_group_info, whose key
 *     msprof-analyze's double hash turns into the group name; '' when no
 *     rank names the group). The ranks are those with an op of the group
 *     (COMMUNICATION_OP, or the rows of a rank's own communication.json),
 *     unless the metadata gives the group's global_ranks, which then win.
 *     Ordered by type, then group name as text. This is the
 *     CommunicationGroupMapping table of msprof-analyze's
 *     communication_group_map recipe and the comm_group_parallel_info of its
 *     communication_group.json.
 */
#include <stdio.h>
#include <stdlib.h>

#include "metrics/metrics.h"

#define WHAT "communication_group_map"

static tb_status db_fail(const metric_ctx *m, const char *what, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* "3,1,2" (TB_COMM_GROUP's ranks as written) into "(1,2,3)", sorted as the
 * recipe sorts global_ranks; 0 when a member is no integer or it does not fit. */
static int rank_tuple(const char *ranks, char *out, size_t n)
{
    long long v[512];
    size_t k = 0;
    const char *p = ranks;
    while (*p) {
        char *end;
        if (k == sizeof v / sizeof v[0])
            return 0;
        v[k++] = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ','))
            return 0;
        p = *end ? end + 1 : end;
    }
    qsort(v, k, sizeof v[0], cmp_ll);
    size_t at = (size_t)snprintf(out, n, "(");
    for (size_t i = 0; i < k && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%lld", i ? "," : "", v[i]);
    if (at + 1 >= n)
        return 0;
    out[at++] = ')';
    out[at] = 0;
    return 1;
}

/* tb_m_cg_info(groupName, groupId, pgName, globalRanks): the process groups
 * of the ranks' profiler_metadata.json, named by the hash of their key. */
static tb_status group_info(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.tb_m_cg_info;"
                                "CREATE TEMP TABLE tb_m_cg_info (groupName TEXT, groupId TEXT, pgName TEXT, "
                                "  globalRanks TEXT);",
                                err);
    if (rc)
        return rc;
    sqlite3_stmt *q = NULL, *ins = NULL;
    if (sqlite3_prepare_v2(m->db,
                           "SELECT DISTINCT groupId, coalesce(pgName, ''), coalesce(ranks, '') FROM TB_COMM_GROUP "
                           "WHERE groupId IS NOT NULL AND coalesce(kind, '') NOT IN ('collective', 'p2p')",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_cg_info VALUES (?1, ?2, ?3, ?4)", -1, &ins, NULL) !=
            SQLITE_OK) {
        rc = db_fail(m, WHAT, err);
        goto done;
    }
    int st;
    while (!rc && (st = sqlite3_step(q)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(q, 0), *ranks = (const char *)sqlite3_column_text(q, 2);
        char name[32], tuple[4096];
        if (!rank_tuple(ranks, tuple, sizeof tuple)) {
            rc = tb_error_set(err, TB_ERR_PARSE,
                              WHAT ": group '%s' of profiler_metadata.json: global_ranks '%s' are not a list of "
                                   "rank numbers",
                              id, ranks);
            break;
        }
        snprintf(name, sizeof name, "%llu", metrics_group_hash(id));
        sqlite3_bind_text(ins, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(ins, 2, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_value(ins, 3, sqlite3_column_value(q, 1));
        sqlite3_bind_text(ins, 4, tuple, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_fail(m, WHAT, err);
        sqlite3_reset(ins);
    }
    if (!rc && st != SQLITE_DONE)
        rc = db_fail(m, WHAT, err);
done:
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

static tb_status build_comm_groups(const metric_ctx *m, tb_error *err)
{
    tb_status rc = group_info(m, err);
    if (rc)
        return rc;
    return metrics_exec(
        m, WHAT,
        "DROP TABLE IF EXISTS temp.communication_group_map;"
        "CREATE TEMP TABLE communication_group_map AS "
        "WITH ops AS ("
        "  SELECT rankId, name, groupName FROM comm_op WHERE groupName IS NOT NULL AND name IS NOT NULL "
        "  UNION SELECT s.rankId, n.value, g.value FROM TB_COMM_OP_STAT s JOIN STRING_IDS n ON n.id = s.opName "
        "  JOIN STRING_IDS g ON g.id = s.groupName WHERE coalesce(s.cluster, 0) = 0 AND s.rankId IS NOT NULL), "
        "typed AS (SELECT DISTINCT CASE WHEN instr(lower(name), 'send') OR instr(lower(name), 'receive') "
        "  OR instr(lower(name), 'recv') THEN 'p2p' ELSE 'collective' END AS type, groupName, rankId FROM ops), "
        "sets AS (SELECT type, groupName, '(' || group_concat(rankId, ',') || ')' AS rankSet FROM "
        "  (SELECT * FROM typed ORDER BY type, groupName, rankId) GROUP BY type, groupName) "
        "SELECT s.type, coalesce(i.globalRanks, s.rankSet) AS rankSet, s.groupName, "
        "  coalesce(i.groupId, '') AS groupId, coalesce(i.pgName, '') AS pgName "
        "FROM sets s LEFT JOIN temp.tb_m_cg_info i ON i.groupName = s.groupName "
        "ORDER BY s.type, CAST(s.groupName AS TEXT), i.groupId;"
        "DROP TABLE temp.tb_m_cg_info;",
        err);
}

const metric_table metrics_commgroup[] = {
    {"communication_group_map", {NULL}, build_comm_groups,
     "per communication group: type, ranks, group name and the process group's id and name, as msprof-analyze's "
     "communication_group_map recipe",
     NULL, {NULL}},
};
const size_t metrics_commgroup_n = sizeof metrics_commgroup / sizeof metrics_commgroup[0];
