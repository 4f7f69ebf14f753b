/* SPDX-License-Identifier: MIT */
/*
 * vote.c - slow ranks by vote over the collective ops, as msprof-analyze's
 * slow_rank recipe finds them (docs/metrics.md, "Slow rank by vote").
 *
 * slow_rank_vote_ops: one row per communication op considered, with the
 *     op's vote when it is one. The ops are every rank's COMMUNICATION_OP
 *     rows (comm_op) but sends and receives (a name holding "send" or
 *     "receive"), in rank order, then start, then op id; those of a group
 *     (a group name; none counts as the group '') in which the op names do
 *     not all occur equally often are left out. The times of one op name
 *     in one group, in that order, are its list (timeUs = (end - start) /
 *     1000, microseconds): a list of 3 to 100 times takes Dixon's test at
 *     the 99.5% level (the ratio of the gap at the low end to the range,
 *     its order statistics chosen by the list's length; the smallest time
 *     is an outlier when the ratio passes the critical value, and its
 *     first occurrence is the vote); a longer list takes the 3-sigma rule
 *     (every time below mean - 3 sd, the population sd, is a vote, and when
 *     some time is above mean + 3 sd, the first occurrence of the smallest
 *     time too). Lists of fewer than 4 distinct times have no vote. A short
 *     time is a slow rank: the others waited for it in the collective.
 *
 * The columns: groupName, opName, opOrder (the op's order: groups by first
 * occurrence, op names within a group by first occurrence), pos (the row's
 * place in the order above), rankId, startNs, timeUs, n (the list's length),
 * vote (NULL, or the vote's order among the op's votes, from 1).
 */
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"

/* Critical values of Dixon's test, one-sided, 99.5% level, for 3..100 values
 * (as msprof-analyze's slow rank recipe uses them; index = the count). */
static const double dixon_995[101] = {
    [3] = 0.994, [4] = 0.920, [5] = 0.823, [6] = 0.744, [7] = 0.680, [8] = 0.723, [9] = 0.676, [10] = 0.638,
    [11] = 0.707, [12] = 0.675, [13] = 0.649, [14] = 0.672, [15] = 0.649, [16] = 0.629, [17] = 0.611,
    [18] = 0.595, [19] = 0.580, [20] = 0.568, [21] = 0.556, [22] = 0.545, [23] = 0.536, [24] = 0.526,
    [25] = 0.519, [26] = 0.510, [27] = 0.503, [28] = 0.496, [29] = 0.489, [30] = 0.484, [31] = 0.478,
    [32] = 0.473, [33] = 0.468, [34] = 0.463, [35] = 0.458, [36] = 0.454, [37] = 0.450, [38] = 0.446,
    [39] = 0.442, [40] = 0.439, [41] = 0.435, [42] = 0.432, [43] = 0.429, [44] = 0.425, [45] = 0.423,
    [46] = 0.420, [47] = 0.417, [48] = 0.414, [49] = 0.412, [50] = 0.409, [51] = 0.407, [52] = 0.405,
    [53] = 0.402, [54] = 0.400, [55] = 0.398, [56] = 0.396, [57] = 0.394, [58] = 0.392, [59] = 0.391,
    [60] = 0.388, [61] = 0.387, [62] = 0.385, [63] = 0.383, [64] = 0.382, [65] = 0.380, [66] = 0.379,
    [67] = 0.377, [68] = 0.376, [69] = 0.374, [70] = 0.372, [71] = 0.371, [72] = 0.370, [73] = 0.368,
    [74] = 0.368, [75] = 0.366, [76] = 0.365, [77] = 0.364, [78] = 0.363, [79] = 0.361, [80] = 0.360,
    [81] = 0.359, [82] = 0.358, [83] = 0.356, [84] = 0.356, [85] = 0.355, [86] = 0.353, [87] = 0.352,
    [88] = 0.352, [89] = 0.351, [90] = 0.350, [91] = 0.349, [92] = 0.348, [93] = 0.347, [94] = 0.346,
    [95] = 0.345, [96] = 0.344, [97] = 0.344, [98] = 0.343, [99] = 0.341, [100] = 0.341,
};

/* The critical values as a TEMP table tb_m_dixon(n, crit). */
static tb_status dixon_table(const metric_ctx *m, tb_error *err)
{
    char sql[4096];
    int at = snprintf(sql, sizeof sql,
                      "DROP TABLE IF EXISTS temp.tb_m_dixon; CREATE TEMP TABLE tb_m_dixon(n INTEGER PRIMARY KEY, "
                      "crit REAL); INSERT INTO temp.tb_m_dixon VALUES ");
    for (int n = 3; n <= 100 && at > 0 && (size_t)at < sizeof sql; n++)
        at += snprintf(sql + at, sizeof sql - (size_t)at, "%s(%d, %.3f)", n > 3 ? ", " : "", n, dixon_995[n]);
    if (at <= 0 || (size_t)at + 2 >= sizeof sql)
        return tb_error_set(err, TB_ERR_INTERNAL, "slow_rank_vote_ops: the Dixon table does not fit its statement");
    sql[at] = ';';
    sql[at + 1] = 0;
    return metrics_exec(m, "slow_rank_vote_ops", sql, err);
}

/* The ops and their lists: tb_m_vote (one row per op considered, ordered) and
 * tb_m_vote_op (per op: its order, length, order statistics, mean and sd). */
static tb_status vote_lists(const metric_ctx *m, tb_error *err)
{
    return metrics_exec(
        m, "slow_rank_vote_ops",
        "DROP TABLE IF EXISTS temp.tb_m_vote_all; DROP TABLE IF EXISTS temp.tb_m_vote; "
        "DROP TABLE IF EXISTS temp.tb_m_vote_op;"
        "CREATE TEMP TABLE tb_m_vote_all AS "
        "SELECT row_number() OVER (ORDER BY rankId, startNs, opId) AS pos, rankId, coalesce(groupName, '') AS g, "
        "  name AS op, startNs, (endNs - startNs) / 1000.0 AS t "
        "FROM comm_op WHERE name IS NOT NULL AND instr(name, 'send') = 0 AND instr(name, 'receive') = 0;"
        /* a group whose op names occur unequally often is left out */
        "CREATE TEMP TABLE tb_m_vote AS SELECT * FROM temp.tb_m_vote_all WHERE g NOT IN ("
        "  SELECT g FROM (SELECT g, op, count(*) AS c FROM temp.tb_m_vote_all GROUP BY g, op) "
        "  GROUP BY g HAVING count(DISTINCT c) > 1) ORDER BY pos;"
        "CREATE TEMP TABLE tb_m_vote_op AS "
        "WITH first AS (SELECT g, op, min(pos) AS p FROM temp.tb_m_vote GROUP BY g, op), "
        "gfirst AS (SELECT g, min(pos) AS p FROM temp.tb_m_vote GROUP BY g), "
        "ord AS (SELECT f.g, f.op, row_number() OVER (ORDER BY gf.p, f.p) AS opOrder "
        "  FROM first f JOIN gfirst gf ON gf.g = f.g), "
        "s AS (SELECT v.g, v.op, v.pos, v.t, "
        "  row_number() OVER (PARTITION BY v.g, v.op ORDER BY v.t, v.pos) AS k, "
        "  count(*) OVER (PARTITION BY v.g, v.op) AS n FROM temp.tb_m_vote v), "
        "st AS (SELECT g, op, max(n) AS n, count(DISTINCT t) AS nd, avg(t) AS mean, "
        "  max(CASE WHEN k = 1 THEN t END) AS x0, max(CASE WHEN k = 2 THEN t END) AS x1, "
        "  max(CASE WHEN k = 3 THEN t END) AS x2, max(CASE WHEN k = n THEN t END) AS y1, "
        "  max(CASE WHEN k = n - 1 THEN t END) AS y2, max(CASE WHEN k = n - 2 THEN t END) AS y3, "
        "  max(CASE WHEN k = 1 THEN pos END) AS minPos FROM s GROUP BY g, op) "
        "SELECT o.opOrder, st.*, "
        "  (SELECT sqrt(avg((v.t - st.mean) * (v.t - st.mean))) FROM temp.tb_m_vote v "
        "   WHERE v.g = st.g AND v.op = st.op) AS sd "
        "FROM st JOIN ord o ON o.g = st.g AND o.op = st.op;",
        err);
}

/* The votes: tb_m_vote_pick(pos, vote). Dixon's ratio: (x1 - x0) / (max - x0)
 * up to 7 values, (x1 - x0) / (y2 - x0) up to 10, (x2 - x0) / (y2 - x0) up
 * to 13, (x2 - x0) / (y3 - x0) beyond; 0 when the divisor is. */
static tb_status vote_picks(const metric_ctx *m, tb_error *err)
{
    return metrics_exec(
        m, "slow_rank_vote_ops",
        "DROP TABLE IF EXISTS temp.tb_m_vote_pick;"
        "CREATE TEMP TABLE tb_m_vote_pick AS "
        "WITH dixon AS (SELECT o.*, CASE "
        "    WHEN o.n <= 7 THEN CASE WHEN o.y1 - o.x0 <> 0 THEN (o.x1 - o.x0) / (o.y1 - o.x0) ELSE 0 END "
        "    WHEN o.n <= 10 THEN CASE WHEN o.y2 - o.x0 <> 0 THEN (o.x1 - o.x0) / (o.y2 - o.x0) ELSE 0 END "
        "    WHEN o.n <= 13 THEN CASE WHEN o.y2 - o.x0 <> 0 THEN (o.x2 - o.x0) / (o.y2 - o.x0) ELSE 0 END "
        "    ELSE CASE WHEN o.y3 - o.x0 <> 0 THEN (o.x2 - o.x0) / (o.y3 - o.x0) ELSE 0 END END AS flag "
        "  FROM temp.tb_m_vote_op o WHERE o.n BETWEEN 3 AND 100 AND o.nd > 3), "
        "low AS (SELECT v.pos, o.opOrder, 0 AS late FROM temp.tb_m_vote v "
        "  JOIN temp.tb_m_vote_op o ON o.g = v.g AND o.op = v.op "
        "  WHERE o.n > 100 AND v.t < o.mean - 3 * o.sd), "
        "high AS (SELECT o.minPos AS pos, o.opOrder, 1 AS late FROM temp.tb_m_vote_op o "
        "  WHERE o.n > 100 AND o.y1 > o.mean + 3 * o.sd AND o.minPos NOT IN (SELECT pos FROM low)), "
        "picks AS (SELECT d.minPos AS pos, d.opOrder, 0 AS late FROM dixon d JOIN temp.tb_m_dixon c ON c.n = d.n "
        "  WHERE d.flag > c.crit UNION ALL SELECT * FROM low UNION ALL SELECT * FROM high) "
        "SELECT pos, row_number() OVER (PARTITION BY opOrder ORDER BY late, pos) AS vote FROM picks;",
        err);
}

static tb_status build_vote(const metric_ctx *m, tb_error *err)
{
    tb_status rc;
    if ((rc = dixon_table(m, err)) || (rc = vote_lists(m, err)) || (rc = vote_picks(m, err)))
        return rc;
    return metrics_exec(
        m, "slow_rank_vote_ops",
        "DROP TABLE IF EXISTS temp.slow_rank_vote_ops;"
        "CREATE TEMP TABLE slow_rank_vote_ops AS "
        "SELECT v.g AS groupName, v.op AS opName, o.opOrder, v.pos, v.rankId, v.startNs, v.t AS timeUs, o.n, p.vote "
        "FROM temp.tb_m_vote v JOIN temp.tb_m_vote_op o ON o.g = v.g AND o.op = v.op "
        "LEFT JOIN temp.tb_m_vote_pick p ON p.pos = v.pos ORDER BY o.opOrder, v.pos;"
        "DROP TABLE temp.tb_m_vote_all; DROP TABLE temp.tb_m_vote; DROP TABLE temp.tb_m_vote_op;"
        "DROP TABLE temp.tb_m_vote_pick; DROP TABLE temp.tb_m_dixon;",
        err);
}

const metric_table metrics_vote[] = {
    {"slow_rank_vote_ops", {NULL}, build_vote,
     "per collective op considered (rank, group, name, time) its slow-rank vote: Dixon's test or 3 sigma over "
     "the op's times, as msprof-analyze's slow_rank recipe",
     NULL, {NULL}},
};
const size_t metrics_vote_n = sizeof metrics_vote / sizeof metrics_vote[0];
