/* SPDX-License-Identifier: MIT */
/*
 * breakdown.c - the breakdown family of computed tables: HTA's temporal,
 * communication/computation-overlap and idle-time breakdowns, and
 * TraceLens' exposed-time partition (reference: metrics.md, "HTA-style
 * breakdown" and "Exposed-time partition").
 *
 * Every table here reads the device tasks of each rank once, through the
 * `device_task` view, with an NPU's HCCL ops (`comm_op` rows that are not
 * also tasks) and the launching call of each (launch_map: the `CANN_API`
 * call with the same connection id, else the one at the start of the task's
 * HostToDevice flow), read by their unqualified names so that an iteration
 * window applies, and writes one or a few rows per rank into a TEMP table.
 * Each rank is computed on its own, as if it were loaded alone: a load may
 * mix vendors (Ascend, Kineto, topsprof), so class rules go by the kind of
 * each task (HTA's and TraceLens' name tests for Kineto's GPU events,
 * tracebook's classes for the others), and a rank that gets no row is named
 * in a note that says why.
 *
 * The HTA tables reproduce HolisticTraceAnalysis' arithmetic, quirks
 * included, because their purpose is to give HTA's numbers:
 *
 *   - times: HTA reads ts and dur as float64 µs, computes end = ts + dur in
 *     float64, then rounds ts up and end down to whole µs (its fix for ns
 *     traces). With `hta.round_us` (default) each stored exact ns value is
 *     turned into the double nearest to it in µs, as Python's float() of the
 *     trace's decimal would be, and rounded the same way; an event shorter
 *     than 1 µs can so end before it starts. Without it, times stay exact ns
 *     and the µs columns hold ns / 1000;
 *   - the window: with 2 or more ProfilerStep#N names (counted per rank),
 *     HTA keeps the CPU events that start before the last step starts and
 *     only the GPU events whose correlation id one of the kept CPU events
 *     has (`hta.drop_last_step`, `hta.linked_only`);
 *   - merging: HTA's merge_kernel_intervals sorts by start and opens a group
 *     whenever a start lies after every earlier end; a group's length is its
 *     largest end minus its first start, so a group made of one negative-
 *     length event counts negatively. hta_merge below keeps those groups
 *     apart (`neg`) so that every sum and sweep sees them as HTA does;
 *   - rounding of the outputs: pandas' round(x, 2), i.e. rint(x * 100) / 100.
 *
 * The exposed-time partition follows TraceLens' GPUEventAnalyser: classes by
 * Kineto category and name, exact ns, one iv_sweep over three classes, and
 * a run-time check of comp + exposed_comm + exposed_memcpy + idle == total.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/interval.h"
#include "metrics/classes.h"
#include "metrics/hta.h"
#include "metrics/metrics.h"
#include "metrics/reuse.h"
#include "util/sort.h"
#include "util/str.h"
#include "util/vec.h"

/* ---- options ------------------------------------------------------------- */

/*
 * The rules of <section>.classes (classes.h patterns), each only when given:
 * they replace the family's built-in tests of those classes.
 */
static tb_status class_overrides(const char *section, const metrics_patterns *comm, const metrics_patterns *mem,
                                 class_over *o, tb_error *err)
{
    char path[64];
    tb_status rc = TB_OK;
    snprintf(path, sizeof path, "%s.classes.communication", section);
    if (comm->set)
        rc = class_rule_create(comm, path, NULL, &o->comm, err);
    snprintf(path, sizeof path, "%s.classes.memory", section);
    if (!rc && mem->set)
        rc = class_rule_create(mem, path, NULL, &o->mem, err);
    return rc;
}

static void class_over_finish(class_over *o)
{
    class_rule_destroy(o->comm);
    class_rule_destroy(o->mem);
    o->comm = o->mem = NULL;
}

static tb_status hta_options(const metric_ctx *m, hta_opts *o, tb_error *err)
{
    const metrics_options *opt = metrics_opts(m);
    o->round_us = opt->hta.round_us;
    o->drop_last = opt->hta.drop_last_step;
    o->linked_only = opt->hta.linked_only;
    o->kernel_wait_us = opt->hta.kernel_wait_us;
    o->stream_events = opt->hta.stream_events;
    return class_overrides("hta", &opt->hta.communication, &opt->hta.memory, &o->over, err);
}

/* ---- HTA's microseconds (hta_time: hta_window.c) ---------------------------- */

/* A time of the HTA domain in µs: whole µs, or exact ns / 1000. */
static double hta_us(int round_us, int64_t v)
{
    return round_us ? (double)v : (double)v / 1000.0;
}

/* pandas' round(x, 2): numpy multiplies by 100, rounds half to even, divides. */
static double round2(double x)
{
    return rint(x * 100.0) / 100.0;
}

/* ---- kernel classes -------------------------------------------------------- */


/* Does needle occur in the first n bytes of s? */
static int has(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0)
            return 1;
    return 0;
}

/*
 * HTA's kernel type of a name (hta/common/types.py, utils.get_kernel_type),
 * tested in its order: communication `(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)`,
 * memory `(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)`, computation when the name
 * does not match the non-compute pattern, else other. Python's re.match
 * anchors at the start and `.` stops at a newline, so "contains" looks at the
 * first line only.
 */
static int hta_kind(const class_over *ov, const char *name)
{
    size_t line = strcspn(name, "\n");
    if (ov->comm ? class_rule_match(ov->comm, name)
                 : str_starts(name, "nccl") || str_starts(name, "hip") || str_starts(name, "hccl") ||
                       has(name, line, "ncclKernel"))
        return K_COMM;
    if (ov->mem ? class_rule_match(ov->mem, name)
                : str_starts(name, "Memcpy") || str_starts(name, "hipMemcpy") || str_starts(name, "Memset") ||
                      str_starts(name, "hipMemset") || str_starts(name, "dma"))
        return K_MEM;
    static const char *const noncompute_prefix[] = {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
                                                    "packet", "pe_exe", "cpum_exe_subgraph", "hccl",
                                                    "collective_subgraph_execution"};
    for (size_t i = 0; i < sizeof noncompute_prefix / sizeof noncompute_prefix[0]; i++)
        if (str_starts(name, noncompute_prefix[i]))
            return K_OTHER;
    if (has(name, line, "Memcpy") || has(name, line, "Memset") || has(name, line, "dma") || has(name, line, "Sync"))
        return K_OTHER;
    if (str_starts(name, "cuda") && line >= 4 && has(name + 4, line - 4, "LaunchKernel"))
        return K_OTHER;
    return K_COMP;
}

/* A device task's class from tracebook's tables (device_task.class), for
 * tasks without a name (an msprof DB's TASK has none). */
static int class_kind(const char *cls)
{
    if (!cls)
        return K_OTHER;
    if (!strcmp(cls, "compute"))
        return K_COMP;
    if (!strcmp(cls, "communication"))
        return K_COMM;
    if (!strcmp(cls, "memory"))
        return K_MEM;
    return K_OTHER;
}

/* A Kineto category of GPU events (the task types a Kineto trace loads as),
 * with Kineto's names of 2022 and before (Kernel, Memcpy, Memset), which HTA
 * takes as kernels too. */
static int kineto_type(const char *task_type)
{
    static const char *const cats[] = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"};
    for (size_t i = 0; task_type && i < sizeof cats / sizeof cats[0]; i++)
        if (!strcmp(task_type, cats[i]))
            return 1;
    return 0;
}

/*
 * HTA's classes are tests on Kineto kernel names: they decide for Kineto's
 * GPU events. Other vendors' tasks go by tracebook's classes (an Ascend
 * EVENT_WAIT or Notify_Wait task is no compute kernel, whatever its name;
 * an NPU's HCCL ops, which are not tasks, are its communication), unless a
 * name rule of hta.classes, given in the spec, matches the task's name.
 */
int hta_classify(const void *cx, const char *name, const char *task_type, const char *cls)
{
    const class_over *ov = cx;
    if (name && kineto_type(task_type))
        return hta_kind(ov, name);
    if (name && ov->comm && class_rule_match(ov->comm, name))
        return K_COMM;
    if (name && ov->mem && class_rule_match(ov->mem, name))
        return K_MEM;
    return class_kind(cls);
}

/* Case-insensitive search of needle (lowercase ASCII) in s. */
static int has_nocase(const char *s, const char *needle)
{
    size_t k = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < k && s[i] && (s[i] | 0x20) == needle[i])
            i++;
        if (i == k)
            return 1;
    }
    return 0;
}

/* name == one of the words, optionally followed by ".kd" (ROCm code objects). */
static int is_word_kd(const char *name, const char *const *words, size_t n)
{
    size_t len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, ".kd"))
        len -= 3;
    for (size_t i = 0; i < n; i++)
        if (strlen(words[i]) == len && !strncmp(name, words[i], len))
            return 1;
    return 0;
}

/*
 * TraceLens' classes (TreePerf/gpu_event_analyser.py, get_gpu_event_lists):
 * GPU events are Kineto's kernel, gpu_memcpy and gpu_memset; gpu_memcpy is
 * memcpy; a kernel with a ROCm 7.1 rocclr copy name is memcpy and one with a
 * rocclr fill name computation; otherwise a kernel or memset whose name
 * contains nccl, rccl or cross_device_reduce (any case) is communication and
 * the rest computation. Tasks of other inputs (NPU) go by tracebook's class:
 * memory, communication, compute; other tasks (syncs, waits) are left out.
 */
static int tl_classify(const void *cx, const char *name, const char *task_type, const char *cls)
{
    const class_over *ov = cx;
    static const char *const copy[] = {"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                       "MEMORY_COPY_DEVICE_TO_DEVICE", "__amd_rocclr_copyBuffer",
                                       "__amd_rocclr_copyBufferRect", "__amd_rocclr_copyBufferAligned",
                                       "__amd_rocclr_copyBufferRectAligned"};
    static const char *const fill[] = {"__amd_rocclr_fillBuffer", "__amd_rocclr_fillBufferAligned"};
    int kernel = task_type && !strcmp(task_type, "kernel");
    if (kernel || (task_type && (!strcmp(task_type, "gpu_memcpy") || !strcmp(task_type, "gpu_memset")))) {
        if (!strcmp(task_type, "gpu_memcpy"))
            return K_MEM;
        const char *n = name ? name : "";
        if (kernel && (ov->mem ? class_rule_match(ov->mem, n) : is_word_kd(n, copy, sizeof copy / sizeof copy[0])))
            return K_MEM;
        if (kernel && is_word_kd(n, fill, sizeof fill / sizeof fill[0]))
            return K_COMP;
        if (ov->comm ? class_rule_match(ov->comm, n)
                     : has_nocase(n, "nccl") || has_nocase(n, "rccl") || has_nocase(n, "cross_device_reduce"))
            return K_COMM;
        return K_COMP;
    }
    int k = class_kind(cls);
    return k == K_OTHER ? K_SKIP : k;
}

/* ---- reading the device tasks of each rank -------------------------------- */

static int ev_push(evvec *x, const dev_ev *e)
{
    return VEC_PUSH(x->v, x->n, x->cap, *e);
}


/*
 * temp.tb_m_launch(rankId, connectionId, launchNs, launchEndNs, launchName):
 * the start, end and name of the call that launched each connection id's
 * device work. The call is the earliest
 * CANN_API row of the rank with that connectionId (Kineto's runtime calls,
 * newer torch_npu timelines, msprof DBs). Older torch_npu timelines number
 * the host calls and the device tasks apart (a task's connection_id is not
 * its launching call's): only their HostToDevice flows join the two. The
 * loader gives each flow the connectionId of the task at its finish; the
 * launching call is then the innermost CANN_API slice on the flow's start
 * thread that encloses the flow's start (as the loader binds such flows).
 * An index on (rank, thread, start) and the longest call's length bound the
 * search: calls that started earlier cannot enclose the flow's start. That
 * second pass runs only when some flow's id has no call of its own.
 *
 * With HTA's stream rule (stream_events) a call that carries a stream is
 * GPU work, not a CPU event: it launches nothing, as in HTA's filter.
 */
static tb_status launch_map(const metric_ctx *m, const char *what, int stream_events, tb_error *err)
{
    static const char direct[] =
        "DROP TABLE IF EXISTS temp.tb_m_launch;"
        "CREATE TEMP TABLE tb_m_launch (rankId INTEGER, connectionId INTEGER, launchNs INTEGER, "
        "  launchEndNs INTEGER, launchName INTEGER, PRIMARY KEY (rankId, connectionId)) WITHOUT ROWID;"
        "INSERT INTO temp.tb_m_launch "
        "  SELECT ifnull(rankId, 0), connectionId, min(startNs), endNs, name FROM CANN_API "
        "  WHERE connectionId IS NOT NULL AND startNs IS NOT NULL GROUP BY 1, 2;";
    static const char direct_cpu[] =
        "DROP TABLE IF EXISTS temp.tb_m_launch;"
        "CREATE TEMP TABLE tb_m_launch (rankId INTEGER, connectionId INTEGER, launchNs INTEGER, "
        "  launchEndNs INTEGER, launchName INTEGER, PRIMARY KEY (rankId, connectionId)) WITHOUT ROWID;"
        "INSERT INTO temp.tb_m_launch "
        "  SELECT ifnull(rankId, 0), connectionId, min(startNs), endNs, name FROM CANN_API "
        "  WHERE connectionId IS NOT NULL AND startNs IS NOT NULL AND (streamId IS NULL OR streamId = -1) "
        "  GROUP BY 1, 2;";
    static const char need[] =
        "SELECT EXISTS (SELECT 1 FROM TB_FLOW f "
        " WHERE f.cat = (SELECT id FROM STRING_IDS WHERE value = 'HostToDevice') "
        "   AND f.connectionId IS NOT NULL AND f.fromNs IS NOT NULL "
        "   AND NOT EXISTS (SELECT 1 FROM temp.tb_m_launch l "
        "                   WHERE l.rankId = ifnull(f.rankId, 0) AND l.connectionId = f.connectionId))";
    static const char flows[] =
        "DROP TABLE IF EXISTS temp.tb_m_calls;"
        "CREATE TEMP TABLE tb_m_calls AS SELECT ifnull(rankId, 0) AS rankId, globalTid AS gtid, startNs, endNs, "
        "  name FROM CANN_API WHERE startNs IS NOT NULL AND endNs IS NOT NULL AND globalTid IS NOT NULL;"
        "CREATE INDEX temp.tb_m_calls_i ON tb_m_calls (rankId, gtid, startNs);"
        "INSERT OR IGNORE INTO temp.tb_m_launch "
        "  SELECT x.rankId, x.connectionId, min(c.startNs), c.endNs, c.name FROM ("
        "    SELECT ifnull(f.rankId, 0) AS rankId, f.connectionId AS connectionId, ("
        "      SELECT k.rowid FROM temp.tb_m_calls k WHERE k.rankId = ifnull(f.rankId, 0) "
        "        AND k.gtid = ((f.fromPid << 32) | (f.fromTid & 4294967295)) "
        "        AND k.startNs BETWEEN f.fromNs - (SELECT max(endNs - startNs) FROM temp.tb_m_calls) AND f.fromNs "
        "        AND k.endNs >= f.fromNs "
        "      ORDER BY k.startNs DESC LIMIT 1) AS callId "
        "    FROM TB_FLOW f "
        "    WHERE f.cat = (SELECT id FROM STRING_IDS WHERE value = 'HostToDevice') "
        "      AND f.connectionId IS NOT NULL AND f.fromNs IS NOT NULL) x "
        "  JOIN temp.tb_m_calls c ON c.rowid = x.callId GROUP BY 1, 2;"
        "DROP TABLE temp.tb_m_calls;";
    tb_status rc = metrics_exec(m, what, stream_events ? direct_cpu : direct, err);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    int more = sqlite3_prepare_v2(m->db, need, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
               sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return more ? metrics_exec(m, what, flows, err) : TB_OK;
}

/* The ranks of the load in order, each with 1 when it has host calls. */
typedef struct rank_list {
    int64_t *id;
    unsigned char *hosted;
    size_t n, cap, capb;
} rank_list;

/* A rank of read_ranks' SQL, with 1 when it has host calls. */
static int rank_row(sqlite3_stmt *st, void *ctx)
{
    rank_list *rl = ctx;
    size_t n = rl->n;
    return VEC_PUSH(rl->id, rl->n, rl->cap, sqlite3_column_int64(st, 0)) ||
           VEC_PUSH(rl->hosted, n, rl->capb, (unsigned char)sqlite3_column_int(st, 1));
}

static tb_status read_ranks(const metric_ctx *m, const char *what, rank_list *rl, tb_error *err)
{
    static const char with_books[] =
        "SELECT r, max(h) FROM (SELECT ifnull(rankId, 0) AS r, 0 AS h FROM TB_RANK "
        "  UNION ALL SELECT DISTINCT ifnull(rankId, 0), 1 FROM CANN_API) GROUP BY r ORDER BY r";
    static const char without[] = "SELECT DISTINCT ifnull(rankId, 0), 1 FROM CANN_API ORDER BY 1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(m->db, with_books, -1, &st, NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(m->db, without, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    return metrics_each_row(m->db, st, what, rank_row, rl, err);
}

/* 1 when rank r is in rl and has host calls. */
static int rank_hosted(const rank_list *rl, int64_t r)
{
    for (size_t i = 0; i < rl->n; i++)
        if (rl->id[i] == r)
            return rl->hosted[i];
    return 0;
}

/*
 * The (rank, correlation) pairs of the GPU slices that were the first
 * element of a Kineto trace's traceEvents (TB_PROFILE_META rows
 * "traceEvents[0].correlation"), a new array in *v (free it), *n pairs.
 */
static tb_status first_slices(const metric_ctx *m, const char *what, int64_t **v, size_t *n, tb_error *err)
{
    static const char sql[] = "SELECT ifnull(rankId, 0), CAST(value AS INTEGER) FROM TB_PROFILE_META "
                              "WHERE name = 'traceEvents[0].correlation'";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
    return metrics_read_int64(m->db, st, what, 2, v, n, err);
}

/* 1 when (rank, conn) is among the n pairs of first_slices. */
static int is_first_slice(const int64_t *v, size_t n, int64_t rank, int64_t conn)
{
    for (size_t i = 0; i < n; i++)
        if (v[2 * i] == rank && v[2 * i + 1] == conn)
            return 1;
    return 0;
}

/* A device task (or op) from a row of each_rank's query. */
static dev_ev read_ev(sqlite3_stmt *st)
{
    return (dev_ev){
        .stream = sqlite3_column_int64(st, 1),
        .s = sqlite3_column_int64(st, 2),
        .e = sqlite3_column_int64(st, 3),
        .ord = sqlite3_column_int64(st, 4),
        .linked = sqlite3_column_type(st, 8) != SQLITE_NULL,
        .launch = sqlite3_column_int64(st, 8),
        .launch_end = sqlite3_column_int64(st, 9),
        .launch_name = sqlite3_column_int64(st, 10),
        .conn = sqlite3_column_int64(st, 11),
        .op = sqlite3_column_type(st, 4) == SQLITE_NULL,
    };
}

/*
 * HTA's stream rule (metrics.md "Where tracebook and HTA differ"): host
 * events that carry a stream (args.stream other than -1) are GPU work too:
 * the CANN_API and PYTORCH_API rows with a streamId, and the complete
 * slices of TB_EVENT whose args hold a stream (cuda_sync's Stream Wait
 * Event, ...). They are classed by name as Kineto kernels are. One with a
 * correlation id is launched by the CPU call of that id (none: not kept by
 * HTA's window); one without is a CPU event for HTA's window, kept by its
 * own start. Their order key is negative: they are no tasks.
 */
static const char stream_events_sql[] =
    "UNION ALL "
    "SELECT a.rankId, a.streamId, a.startNs, a.endNs, -1 - a.rowid, n.value, 'kernel', NULL, "
    "       CASE WHEN a.connectionId IS NULL THEN a.startNs ELSE l.launchNs END, "
    "       CASE WHEN a.connectionId IS NULL THEN a.endNs ELSE l.launchEndNs END, l.launchName, a.connectionId "
    "FROM CANN_API a LEFT JOIN STRING_IDS n ON n.id = a.name "
    "LEFT JOIN temp.tb_m_launch l ON l.rankId = ifnull(a.rankId, 0) AND l.connectionId = a.connectionId "
    "WHERE a.streamId IS NOT NULL AND a.streamId <> -1 AND a.startNs IS NOT NULL AND a.endNs IS NOT NULL "
    "UNION ALL "
    "SELECT p.rankId, p.streamId, p.startNs, p.endNs, -1 - p.rowid, n.value, 'kernel', NULL, "
    "       CASE WHEN p.connectionId IS NULL THEN p.startNs ELSE l.launchNs END, "
    "       CASE WHEN p.connectionId IS NULL THEN p.endNs ELSE l.launchEndNs END, l.launchName, p.connectionId "
    "FROM PYTORCH_API p LEFT JOIN STRING_IDS n ON n.id = p.name "
    "LEFT JOIN temp.tb_m_launch l ON l.rankId = ifnull(p.rankId, 0) AND l.connectionId = p.connectionId "
    "WHERE p.streamId IS NOT NULL AND p.streamId <> -1 AND p.startNs IS NOT NULL AND p.endNs IS NOT NULL "
    "UNION ALL "
    "SELECT e.rankId, e.stream, e.startNs, e.endNs, -1 - e.rowid, n.value, 'kernel', NULL, "
    "       CASE WHEN e.corr IS NULL OR e.corr < 0 THEN e.startNs ELSE l.launchNs END, "
    "       CASE WHEN e.corr IS NULL OR e.corr < 0 THEN e.endNs ELSE l.launchEndNs END, l.launchName, e.corr "
    "FROM (SELECT rowid, rankId, startNs, endNs, name, json_extract(args, '$.stream') AS stream, "
    "             json_extract(args, '$.correlation') AS corr "
    "      FROM TB_EVENT WHERE ph = 'X' AND startNs IS NOT NULL AND endNs IS NOT NULL "
    "        AND args LIKE '%\"stream\"%' AND json_valid(args)) e "
    "LEFT JOIN STRING_IDS n ON n.id = e.name "
    "LEFT JOIN temp.tb_m_launch l ON l.rankId = ifnull(e.rankId, 0) AND l.connectionId = e.corr "
    "WHERE e.stream IS NOT NULL AND e.stream <> -1 ";

/* each_rank's rows: the device tasks with their launching calls */
static const char tasks_sql[] =
    "SELECT d.rankId, d.streamId, d.startNs, d.endNs, d.globalTaskId, d.name, d.taskType, d.class, l.launchNs, "
    "       l.launchEndNs, l.launchName, d.connectionId "
    "FROM device_task d LEFT JOIN temp.tb_m_launch l ON l.rankId = d.rankId AND l.connectionId = d.connectionId "
    "WHERE d.startNs IS NOT NULL AND d.endNs IS NOT NULL "
    "ORDER BY d.rankId";
/* with the communication ops that are not also tasks: on an NPU the
 * HCCL ops are not tasks; on a GPU they repeat NCCL kernels, which are
 * classed by name */
static const char with_ops_sql[] =
    "SELECT * FROM ("
    "SELECT d.rankId AS rankId, d.streamId, d.startNs, d.endNs, d.globalTaskId, d.name, d.taskType, d.class, "
    "       l.launchNs, l.launchEndNs, l.launchName, d.connectionId "
    "FROM device_task d LEFT JOIN temp.tb_m_launch l ON l.rankId = d.rankId AND l.connectionId = d.connectionId "
    "WHERE d.startNs IS NOT NULL AND d.endNs IS NOT NULL "
    "UNION ALL "
    "SELECT c.rankId, NULL, c.startNs, c.endNs, NULL, c.name, NULL, 'communication', l.launchNs, "
    "       l.launchEndNs, l.launchName, c.connectionId "
    "FROM comm_op c LEFT JOIN temp.tb_m_launch l ON l.rankId = c.rankId AND l.connectionId = c.connectionId "
    "WHERE c.startNs IS NOT NULL AND c.endNs IS NOT NULL "
    "  AND NOT EXISTS (SELECT 1 FROM TASK t WHERE t.startNs = c.startNs AND t.rankId = c.rankId "
    "                  AND t.endNs = c.endNs) ";

/*
 * Calls fn once per rank (in rank order) with the rank's device tasks, each
 * classified by classify (K_SKIP leaves a task out) and linked to its
 * launching call (launch_map). Every rank of the load gets its call, a rank
 * without device tasks with none, so that fn can say why it writes no row.
 * With stream_events, the host events that carry a stream come too
 * (stream_events_sql). Each call goes through kr (hta_read_give).
 */
static tb_status read_each_rank(const metric_ctx *m, const char *what, classify_fn classify, const void *cx,
                                rank_fn fn, void *ctx, int with_comm_ops, int stream_events, hta_read *kr,
                                tb_error *err)
{
    static const char tail[] = ") ORDER BY rankId";
    char sql[sizeof with_ops_sql + sizeof stream_events_sql + sizeof tail];
    if (with_comm_ops)
        snprintf(sql, sizeof sql, "%s%s%s", with_ops_sql, stream_events ? stream_events_sql : "", tail);
    else
        snprintf(sql, sizeof sql, "%s", tasks_sql);
    sqlite3_stmt *st = NULL;
    evvec ev = {0};
    rank_list rl = {0};
    int64_t *firsts = NULL;
    size_t next = 0, nfirsts = 0; /* next: the first rank of rl not yet given to fn */
    tb_status rc = launch_map(m, what, stream_events, err);
    if (rc || (rc = read_ranks(m, what, &rl, err)) || (rc = first_slices(m, what, &firsts, &nfirsts, err)))
        goto done;
    if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        goto done;
    }
    int64_t rank = 0;
    int have = 0, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t r = sqlite3_column_int64(st, 0);
        if (!have || r != rank) {
            if (have && (rc = hta_read_give(kr, rank, &ev, fn, ctx, err)))
                goto done;
            /* the ranks before r that have no device task */
            for (; next < rl.n && rl.id[next] <= r; next++) {
                if (rl.id[next] == r || (have && rl.id[next] == rank))
                    continue;
                evvec none = {.hosted = rl.hosted[next]};
                if ((rc = hta_read_give(kr, rl.id[next], &none, fn, ctx, err)))
                    goto done;
            }
            ev.n = ev.read = ev.skipped = 0;
            ev.hosted = rank_hosted(&rl, r);
        }
        rank = r;
        have = 1;
        ev.read++;
        dev_ev e = read_ev(st);
        int k = classify(cx, (const char *)sqlite3_column_text(st, 5), (const char *)sqlite3_column_text(st, 6),
                         (const char *)sqlite3_column_text(st, 7));
        if (k == K_SKIP) {
            ev.skipped++;
            continue;
        }
        e.kind = (unsigned char)k;
        e.memname = (unsigned char)hta_memory_name((const char *)sqlite3_column_text(st, 5));
        e.first = (unsigned char)(nfirsts && sqlite3_column_type(st, 11) != SQLITE_NULL &&
                                  is_first_slice(firsts, nfirsts, r, e.conn));
        if (ev_push(&ev, &e)) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
            goto done;
        }
    }
    if (s != SQLITE_DONE) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        goto done;
    }
    if (have && (rc = hta_read_give(kr, rank, &ev, fn, ctx, err)))
        goto done;
    for (; next < rl.n; next++) {
        if (have && rl.id[next] == rank)
            continue;
        evvec none = {.hosted = rl.hosted[next]};
        if ((rc = hta_read_give(kr, rl.id[next], &none, fn, ctx, err)))
            goto done;
    }
done:
    sqlite3_finalize(st);
    free(ev.v);
    free(rl.id);
    free(rl.hosted);
    free(firsts);
    return rc;
}

/*
 * read_each_rank, recorded by kr (hta_read.c; NULL: not kept), or, when kr
 * replays a read kept from an earlier build of the run, its calls given to
 * fn again.
 */
static tb_status each_rank(const metric_ctx *m, const char *what, classify_fn classify, const void *cx, rank_fn fn,
                           void *ctx, int with_comm_ops, int stream_events, hta_read *kr, tb_error *err)
{
    hta_read none = {.what = what};
    if (kr && kr->replay)
        return hta_read_replay(kr, fn, ctx, err);
    return read_each_rank(m, what, classify, cx, fn, ctx, with_comm_ops, stream_events, kr ? kr : &none, err);
}

/* ---- HTA's merge --------------------------------------------------------- */

/*
 * The groups of HTA's merge_kernel_intervals over v (sorted here): a group
 * opens at a start later than every earlier end and spans to the largest
 * end among its members. Groups with end > start form a merged set (pos);
 * groups with end < start (possible after rounding) are kept as their
 * spans [end, start) (neg), which HTA's sums and sweeps count negatively.
 * Among equal starts HTA's order is unspecified (an unstable sort); here the
 * longest comes first, so shorter ones join its group.
 */
typedef struct hgroups {
    iv *pos, *neg;       /* caller memory, n intervals each */
    size_t npos, nneg;
    size_t ngroups;
    int64_t first;       /* start of the first group */
    int64_t last_end;    /* end of the last group */
    int64_t sum;         /* sum over groups of end - start, signed */
} hgroups;

static void close_group(hgroups *g, int64_t s, int64_t e)
{
    if (!g->ngroups)
        g->first = s;
    g->ngroups++;
    g->last_end = e;
    g->sum += e - s;
    if (e > s)
        g->pos[g->npos++] = (iv){s, e};
    else if (e < s)
        g->neg[g->nneg++] = (iv){e, s};
}

static void hta_merge(iv *v, size_t n, hgroups *g)
{
    g->npos = g->nneg = g->ngroups = 0;
    g->first = g->last_end = g->sum = 0;
    if (!n)
        return;
    iv_sort(v, n);
    int open = 0;
    int64_t gs = 0, ge = 0, runmax = 0;
    for (size_t i = 0; i < n;) {
        size_t j, kmin = i;
        int64_t s = v[i].s, emax = v[i].e;
        for (j = i + 1; j < n && v[j].s == s; j++) {
            if (v[j].e > emax)
                emax = v[j].e;
            if (v[j].e < v[kmin].e)
                kmin = j;
        }
        if (open && s <= runmax) {
            if (emax > ge)
                ge = emax;
        } else if (emax >= s) {
            if (open)
                close_group(g, gs, ge);
            gs = s;
            ge = emax;
        } else {
            /* all of the run end before s and no group is open to take
             * them: each one is a group of its own (HTA's cummax never
             * reaches s), the shortest last */
            if (open)
                close_group(g, gs, ge);
            for (size_t k = i; k < j; k++)
                if (k != kmin)
                    close_group(g, s, v[k].e);
            gs = s;
            ge = v[kmin].e;
        }
        runmax = open ? (emax > runmax ? emax : runmax) : emax;
        open = 1;
        i = j;
    }
    close_group(g, gs, ge);
}

/*
 * The set of time covered by a class in HTA's sweeps (cumulative +1/-1 per
 * group start/end): the positive groups minus every negative span. out needs
 * room for npos + nneg intervals; neg is merged in place.
 */
static size_t hta_effective(hgroups *g, iv *out)
{
    size_t nn = iv_merge(g->neg, g->nneg);
    return iv_subtract(g->pos, g->npos, g->neg, nn, out);
}

/* Scratch for the HTA tables: interval copies and group arrays. */
typedef struct hscratch {
    iv *a, *pos, *neg, *pos2, *neg2, *eff1, *eff2;
} hscratch;

static void hscratch_free(hscratch *x)
{
    free(x->a);
    free(x->pos);
    free(x->neg);
    free(x->pos2);
    free(x->neg2);
    free(x->eff1);
    free(x->eff2);
}

static int hscratch_init(hscratch *x, size_t n)
{
    memset(x, 0, sizeof *x);
    size_t b = (n ? n : 1) * sizeof(iv);
    x->a = malloc(b);
    x->pos = malloc(b);
    x->neg = malloc(b);
    x->pos2 = malloc(b);
    x->neg2 = malloc(b);
    x->eff1 = malloc(b);
    x->eff2 = malloc(b);
    if (!x->a || !x->pos || !x->neg || !x->pos2 || !x->neg2 || !x->eff1 || !x->eff2) {
        hscratch_free(x);
        return -1;
    }
    return 0;
}

/* Copies the events of kind k (any kind when k < 0) into a; returns the count. */
static size_t pick(const evvec *ev, int k, iv *a)
{
    size_t n = 0;
    for (size_t i = 0; i < ev->n; i++)
        if (k < 0 || ev->v[i].kind == k)
            a[n++] = (iv){ev->v[i].s, ev->v[i].e};
    return n;
}

tb_status hta_insert_done(const hta_ctx *h, tb_error *err)
{
    int s = sqlite3_step(h->ins);
    sqlite3_reset(h->ins);
    sqlite3_clear_bindings(h->ins);
    if (s != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    return TB_OK;
}

void hta_bind_us(const hta_ctx *h, int col, int64_t v)
{
    if (h->o.round_us)
        sqlite3_bind_int64(h->ins, col, v);
    else
        sqlite3_bind_double(h->ins, col, (double)v / 1000.0);
}

/* ---- temporal_breakdown --------------------------------------------------- */

/*
 * HTA's get_temporal_breakdown for one rank: kernel_time = end of the last
 * merged group - start of the first; idle = kernel_time - merged length of
 * all GPU events; compute = merged length of the computation kernels;
 * non_compute = kernel_time - compute - idle; each _pctg =
 * round(100 * x / kernel_time, 2).
 */
static tb_status temporal_core(hta_ctx *h, int64_t rank, evvec *ev, tb_error *err)
{
    hscratch x;
    if (hscratch_init(&x, ev->n))
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    hgroups all = {.pos = x.pos, .neg = x.neg}, comp = {.pos = x.pos2, .neg = x.neg2};
    hta_merge(x.a, pick(ev, -1, x.a), &all);
    hta_merge(x.a, pick(ev, K_COMP, x.a), &comp);
    int64_t kernel = all.last_end - all.first;
    int64_t idle = kernel - all.sum;
    int64_t compute = comp.sum;
    int64_t noncompute = kernel - compute - idle;
    /* without negative groups these are lengths of unions: HTA's asserts
     * (idle, compute <= kernel_time, non_compute >= 0) must hold */
    if (!all.nneg && !comp.nneg && (idle < 0 || compute > kernel || noncompute < 0)) {
        hscratch_free(&x);
        return tb_error_set(err, TB_ERR_INTERNAL,
                            "%s: rank %lld: idle %lld, compute %lld, non-compute %lld do not fit kernel time %lld",
                            h->what, (long long)metrics_rank_shown(h->m, rank), (long long)idle, (long long)compute, (long long)noncompute,
                            (long long)kernel);
    }
    hscratch_free(&x);
    if ((idle < 0 || compute > kernel || noncompute < 0) && h->m->note) {
        size_t neg = 0;
        for (size_t i = 0; i < ev->n; i++)
            neg += ev->v[i].e < ev->v[i].s;
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%s: rank %lld: %zu tasks end before they start after HTA's rounding to whole us, so idle "
                 "%lld, compute %lld and non-compute %lld us break HTA's own checks (HTA would stop here); "
                 "metrics.hta.round_us: false gives exact times",
                 h->what, (long long)metrics_rank_shown(h->m, rank), neg, (long long)idle, (long long)compute, (long long)noncompute);
        h->m->note(h->m->ctx, msg);
    }
    sqlite3_bind_int64(h->ins, 1, rank);
    hta_bind_us(h, 2, idle);
    hta_bind_us(h, 3, compute);
    hta_bind_us(h, 4, noncompute);
    hta_bind_us(h, 5, kernel);
    if (kernel != 0) {
        sqlite3_bind_double(h->ins, 6, round2(100.0 * ((double)idle / (double)kernel)));
        sqlite3_bind_double(h->ins, 7, round2(100.0 * ((double)compute / (double)kernel)));
        sqlite3_bind_double(h->ins, 8, round2(100.0 * ((double)noncompute / (double)kernel)));
    }
    return hta_insert_done(h, err);
}

/* The (globalTaskId, value) pairs of the rank's tasks, by globalTaskId, for
 * sql (the rank bound to its parameter). */
static tb_status task_pairs(const hta_ctx *h, const char *sql, int64_t rank, int64_t **pairs, size_t *n,
                            tb_error *err)
{
    sqlite3_stmt *st = NULL;
    *pairs = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(h->m->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: %s", h->what, sqlite3_errmsg(h->m->db));
    sqlite3_bind_int64(st, 1, rank);
    return metrics_read_int64(h->m->db, st, h->what, 2, pairs, n, err);
}

tb_status hta_task_names(const hta_ctx *h, int64_t rank, int64_t **pairs, size_t *n, tb_error *err)
{
    return task_pairs(h,
                      "SELECT globalTaskId, name FROM TASK WHERE ifnull(rankId, 0) = ? "
                      "AND globalTaskId IS NOT NULL ORDER BY globalTaskId",
                      rank, pairs, n, err);
}

tb_status hta_task_devices(const hta_ctx *h, int64_t rank, int64_t **pairs, size_t *n, tb_error *err)
{
    return task_pairs(h,
                      "SELECT globalTaskId, ifnull(deviceId, 0) FROM TASK WHERE ifnull(rankId, 0) = ? "
                      "AND globalTaskId IS NOT NULL ORDER BY globalTaskId",
                      rank, pairs, n, err);
}

int64_t hta_task_name(const int64_t *pairs, size_t n, int64_t task)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < task)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && pairs[2 * lo] == task ? pairs[2 * lo + 1] : 0;
}

static char *hta_opts_text(const metric_ctx *m);

/* Shared driver of the HTA tables: options, steps, table, rows. The
 * steps and the read of the tasks are kept for the next table built under
 * the same options and window, or taken from the one before (hta_read.c). */
tb_status hta_build(const metric_ctx *m, const char *what, const char *create, const char *insert, rank_fn fn,
                    void *extra, tb_error *err)
{
    hta_ctx h = {.m = m, .what = what, .extra = extra};
    hta_read r = {.what = what};
    char *opts = NULL, *key = NULL;
    tb_status rc = hta_options(m, &h.o, err);
    if (rc)
        goto done;
    opts = hta_opts_text(m);
    key = opts ? reuse_key(m, opts) : NULL;
    if ((rc = metrics_exec(m, what, create, err)) || (rc = hta_read_begin(m, what, key, &r, err)) ||
        (rc = hta_read_steps(&r, &h, err)))
        goto done;
    if (sqlite3_prepare_v2(m->db, insert, -1, &h.ins, NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        goto done;
    }
    rc = each_rank(m, what, hta_classify, &h.o.over, fn, &h, 1, 0, &r, err);
done:
    rc = hta_read_end(&r, rc, err);
    sqlite3_free(opts);
    sqlite3_free(key);
    sqlite3_finalize(h.ins);
    hta_window_free(&h);
    class_over_finish(&h.o.over);
    return rc;
}

/* ---- comm_comp_overlap ------------------------------------------------------ */

/*
 * HTA's get_comm_comp_overlap for one rank: merged communication and
 * computation kernels swept together; the time during which both are active
 * over the merged communication time, as round(100 * ratio, 2). NULL when
 * the rank has no communication kernel (HTA: NaN).
 */
static tb_status overlap_core(hta_ctx *h, int64_t rank, evvec *ev, tb_error *err)
{
    hscratch x;
    if (hscratch_init(&x, ev->n))
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", h->what);
    hgroups comm = {.pos = x.pos, .neg = x.neg}, comp = {.pos = x.pos2, .neg = x.neg2};
    hta_merge(x.a, pick(ev, K_COMM, x.a), &comm);
    hta_merge(x.a, pick(ev, K_COMP, x.a), &comp);
    /* eff1 and eff2 hold npos + nneg <= the class's event count intervals */
    size_t n1 = hta_effective(&comm, x.eff1);
    size_t n2 = hta_effective(&comp, x.eff2);
    int64_t both = iv_intersect_len(x.eff1, n1, x.eff2, n2);
    sqlite3_bind_int64(h->ins, 1, rank);
    if (comm.ngroups && comm.sum != 0)
        sqlite3_bind_double(h->ins, 2, round2(100.0 * ((double)both / (double)comm.sum)));
    hscratch_free(&x);
    return hta_insert_done(h, err);
}



/* ---- idle_time_breakdown ---------------------------------------------------- */

static int cmp_stream_start(const void *a, const void *b)
{
    const dev_ev *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/*
 * HTA's get_idle_time_breakdown for one rank, every stream: the tasks of a
 * stream in start order (equal starts in trace order); the gap before a task
 * is its start minus the previous task's end (not merged, may be negative).
 * host_wait when the task's launching call started after the previous task
 * ended, else kernel_wait when the gap is below hta.kernel_wait_us, else
 * other. A stream's first task has no gap but counts in 'other', so every
 * stream has an 'other' row; the categories without tasks have none.
 * idle_time is in µs, idle_time_ratio its share of the stream's sum; both
 * rounded to 2 decimals, the ratio NULL when the stream's sum is 0.
 */
static tb_status idle_core(hta_ctx *h, int64_t rank, evvec *ev, tb_error *err)
{
    static const char *const names[3] = {"host_wait", "kernel_wait", "other"};
    /* streams hold tasks; an NPU's communication ops have none */
    size_t k = 0;
    for (size_t i = 0; i < ev->n; i++)
        if (!ev->v[i].op)
            ev->v[k++] = ev->v[i];
    ev->n = k;
    qsort(ev->v, ev->n, sizeof *ev->v, cmp_stream_start);
    double thr = h->o.round_us ? h->o.kernel_wait_us : h->o.kernel_wait_us * 1000.0;
    for (size_t i = 0; i < ev->n;) {
        int64_t sum[3] = {0, 0, 0};
        int seen[3] = {0, 0, 1};
        size_t j = i + 1;
        for (; j < ev->n && ev->v[j].stream == ev->v[i].stream; j++) {
            const dev_ev *e = &ev->v[j];
            int64_t prev_end = ev->v[j - 1].e, gap = e->s - prev_end;
            int cat = e->linked && e->launch > prev_end ? 0 : (double)gap < thr ? 1 : 2;
            sum[cat] += gap;
            seen[cat] = 1;
        }
        int64_t total = sum[0] + sum[1] + sum[2];
        for (int c = 0; c < 3; c++) {
            if (!seen[c])
                continue;
            sqlite3_bind_int64(h->ins, 1, rank);
            sqlite3_bind_int64(h->ins, 2, ev->v[i].stream);
            sqlite3_bind_text(h->ins, 3, names[c], -1, SQLITE_STATIC);
            sqlite3_bind_double(h->ins, 4, round2(hta_us(h->o.round_us, sum[c])));
            if (total != 0)
                sqlite3_bind_double(h->ins, 5, round2((double)sum[c] / (double)total));
            tb_status rc = hta_insert_done(h, err);
            if (rc)
                return rc;
        }
        i = j;
    }
    return TB_OK;
}



/* ---- the three HTA tables from one read ---------------------------------------- */

enum { HTA_TEMPORAL, HTA_OVERLAP, HTA_IDLE, HTA_N };

static const struct hta_table {
    const char *name;
    const char *columns; /* the CREATE TABLE's column list */
    int ncol;
    /* the rows of one rank from its events as hta_cut left them (idle_core reorders them: last) */
    tb_status (*core)(hta_ctx *h, int64_t rank, evvec *ev, tb_error *err);
} hta_tables[HTA_N] = {
    {"temporal_breakdown",
     "rank INTEGER, idle_time_us NUMERIC, compute_time_us NUMERIC, non_compute_time_us NUMERIC, "
     "kernel_time_us NUMERIC, idle_time_pctg REAL, compute_time_pctg REAL, non_compute_time_pctg REAL",
     8, temporal_core},
    {"comm_comp_overlap", "rank INTEGER, comp_comm_overlap_pctg REAL", 2, overlap_core},
    {"idle_time_breakdown",
     "rank INTEGER, stream INTEGER, idle_category TEXT, idle_time REAL, idle_time_ratio REAL", 5, idle_core},
};

/* DROP and CREATE of table t under the name as (its own, or its staging). Returns new (sqlite3_free). */
static char *hta_create(int t, const char *as)
{
    return sqlite3_mprintf("DROP TABLE IF EXISTS temp.\"%w\"; CREATE TEMP TABLE \"%w\" (%s)", as, as,
                           hta_tables[t].columns);
}

/* The options an HTA table's rows depend on, as text (for reuse_key). Returns new (sqlite3_free). */
static char *hta_opts_text(const metric_ctx *m)
{
    const metrics_options *o = metrics_opts(m);
    const metrics_patterns *p[2] = {&o->hta.communication, &o->hta.memory};
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendf(s, "hta %d %d %d %!.17g %d", o->hta.round_us, o->hta.drop_last_step, o->hta.linked_only,
                        o->hta.kernel_wait_us, o->hta.stream_events);
    for (int k = 0; k < 2; k++) {
        sqlite3_str_appendf(s, "|%d %lld", p[k]->set, (long long)p[k]->n);
        for (size_t i = 0; i < p[k]->n; i++)
            sqlite3_str_appendf(s, " %lld:%s", (long long)strlen(p[k]->v[i]), p[k]->v[i]);
    }
    return sqlite3_str_finish(s);
}

/* The three tables being built in one pass over the tasks: one each, or staged. */
typedef struct hta_all {
    hta_ctx h[HTA_N];
    metric_ctx sm[HTA_N];   /* the siblings' contexts: notes kept for reuse_take */
    reuse_notes rn[HTA_N];
    int on[HTA_N];          /* still being built (a sibling that failed is dropped) */
    int which;              /* the table asked for: its errors are the build's */
} hta_all;

/*
 * One rank for each table being built: HTA's window and times once (the same
 * options for all three), then each table's rows, or its note when nothing
 * remains. temporal and overlap only read the events; idle, last, reorders them.
 */
static tb_status hta_all_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    hta_all *a = ctx;
    hta_cut_info ci;
    size_t kept = hta_filter(&a->h[a->which], rank, ev, &ci);
    for (int t = 0; t < HTA_N; t++) {
        if (!a->on[t])
            continue;
        if (!kept) {
            hta_no_row(&a->h[t], rank, ev, &ci);
        } else {
            tb_error own;
            tb_error_clear(&own);
            tb_status rc = hta_tables[t].core(&a->h[t], rank, ev, t == a->which ? err : &own);
            if (rc && t == a->which)
                return rc;
            a->on[t] = !rc;
        }
        a->on[t] = a->on[t] && !a->rn[t].failed;
    }
    return TB_OK;
}

/* Sets up table t of a (its own table when t is asked for, else its staging) and its INSERT. */
static tb_status hta_setup(const metric_ctx *m, hta_all *a, int t, tb_error *err)
{
    const char *name = hta_tables[t].name;
    char as[128];
    if (t == a->which) {
        snprintf(as, sizeof as, "%s", name);
    } else {
        reuse_staging(name, as, sizeof as);
        a->sm[t] = *m;
        a->rn[t] = (reuse_notes){.db = m->db, .name = name};
        a->sm[t].note = reuse_note;
        a->sm[t].ctx = &a->rn[t];
        a->h[t].m = &a->sm[t];
    }
    sqlite3_str *ins = sqlite3_str_new(NULL);
    sqlite3_str_appendf(ins, "INSERT INTO temp.\"%w\" VALUES (?", as);
    for (int c = 1; c < hta_tables[t].ncol; c++)
        sqlite3_str_appendall(ins, ", ?");
    sqlite3_str_appendall(ins, ")");
    char *create = hta_create(t, as), *insert = sqlite3_str_finish(ins);
    tb_status rc = !create || !insert ? tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", name)
                                      : metrics_exec(m, name, create, err);
    if (!rc && sqlite3_prepare_v2(m->db, insert, -1, &a->h[t].ins, NULL) != SQLITE_OK)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", name, sqlite3_errmsg(m->db));
    sqlite3_free(create);
    sqlite3_free(insert);
    return rc;
}

/*
 * Builds HTA table which. When a build of it in the same run staged it
 * with the same options and window (reuse.h), its rows and notes are taken
 * from there. Else the three tables are built from one read of the tasks:
 * which as temp.<name>, the other two staged for their own turn. A
 * sibling's failure only drops its staging: built alone later, it fails
 * (or not) as it would have.
 */
static tb_status hta_build_three(const metric_ctx *m, int which, tb_error *err)
{
    const char *what = hta_tables[which].name;
    hta_all a = {.which = which};
    char *opts = hta_opts_text(m), *key = opts ? reuse_key(m, opts) : NULL, *create = hta_create(which, what);
    int taken = 0;
    tb_status rc = !create ? tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what)
                           : reuse_take(m, what, create, key, &taken, err);
    if (rc || taken)
        goto done;
    /* with HTA's stream rule, temporal and overlap read the host events
     * that carry a stream too, idle does not: one read serves one kind */
    int host = metrics_opts(m)->hta.stream_events;
    for (int t = 0; t < HTA_N && !rc; t++)
        if (!(rc = reuse_forget(m, hta_tables[t].name, err)))
            a.on[t] = t == which || (key && (!host || (t == HTA_IDLE) == (which == HTA_IDLE)));
    if (!rc && !(rc = hta_options(m, &a.h[which].o, err))) {
        a.h[which].m = m;
        a.h[which].what = what;
        rc = hta_steps(&a.h[which], err);
    }
    for (int t = 0; t < HTA_N && !rc; t++) {
        if (t != which) {
            a.h[t] = a.h[which];
            a.h[t].what = hta_tables[t].name;
            a.h[t].ins = NULL;
        }
        if (a.on[t])
            rc = hta_setup(m, &a, t, err);
    }
    if (!rc)
        rc = each_rank(m, what, hta_classify, &a.h[which].o.over, hta_all_rank, &a, 1, host && which != HTA_IDLE,
                       NULL, err);
    for (int t = 0; t < HTA_N && !rc; t++)
        if (t != which && a.on[t])
            rc = reuse_keep(m, hta_tables[t].name, key, err);
    for (int t = 0; t < HTA_N && !rc; t++)
        if (t != which && !a.on[t])
            rc = reuse_forget(m, hta_tables[t].name, err);
done:
    for (int t = 0; t < HTA_N; t++)
        sqlite3_finalize(a.h[t].ins);
    hta_window_free(&a.h[which]);
    class_over_finish(&a.h[which].o.over);
    sqlite3_free(opts);
    sqlite3_free(key);
    sqlite3_free(create);
    return rc;
}

static tb_status build_temporal(const metric_ctx *m, tb_error *err)
{
    return hta_build_three(m, HTA_TEMPORAL, err);
}

static tb_status build_overlap(const metric_ctx *m, tb_error *err)
{
    return hta_build_three(m, HTA_OVERLAP, err);
}

static tb_status build_idle(const metric_ctx *m, tb_error *err)
{
    return hta_build_three(m, HTA_IDLE, err);
}

/* ---- exposed_time (TraceLens) ------------------------------------------------ */

typedef struct tl_ctx {
    const metric_ctx *m;
    int linked_only;
    sqlite3_stmt *ins;
} tl_ctx;

enum { TL_COMP = 1, TL_COMM = 2, TL_MEMCPY = 4 };

/*
 * TraceLens' GPUEventAnalyser.compute_metrics_dict for one rank, in exact ns:
 * total = last end - first start over the GPU events; computation =
 * |U(comp)|; exposed_comm = |U(comm) \ U(comp)|; exposed_memcpy =
 * |U(memcpy) \ U(comp) \ U(comm)|; idle = total - |U(all)|. The first three
 * come from one sweep, U(all) from a separate merge, and the partition
 * comp + exposed_comm + exposed_memcpy + idle == total is checked.
 */
static tb_status exposed_rank(void *ctx, int64_t rank, evvec *ev, tb_error *err)
{
    static const char what[] = "exposed_time";
    tl_ctx *t = ctx;
    iv_rec *r = malloc((ev->n ? ev->n : 1) * sizeof *r);
    ivec all = IVEC_INIT;
    if (!r || ivec_reserve(&all, ev->n ? ev->n : 1)) {
        free(r);
        ivec_free(&all);
        return tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
    }
    size_t n = 0, unlinked = 0;
    int64_t first = 0, last = 0;
    /* a rank without any host call (a topsprof listing) has nothing to link
     * to: linked_only would empty it, so it does not apply there */
    int linked_only = t->linked_only && ev->hosted;
    if (t->linked_only && !ev->hosted && ev->n)
        metrics_notef(t->m,
              "%s: rank %lld has no host calls to link its device tasks to: its %zu tasks count without "
              "a launching call (metrics.exposed.linked_only does not apply)",
              what, (long long)metrics_rank_shown(t->m, rank), ev->n);
    for (size_t i = 0; i < ev->n; i++) {
        const dev_ev *e = &ev->v[i];
        if (linked_only && !e->linked) {
            unlinked++;
            continue;
        }
        if (e->e < e->s)
            continue;
        int cls = e->kind == K_COMM ? 1 : e->kind == K_MEM ? 2 : 0;
        r[n++] = (iv_rec){e->s, e->e, cls};
        ivec_push(&all, e->s, e->e); /* room reserved: cannot fail */
        if (n == 1 || e->s < first)
            first = e->s;
        if (n == 1 || e->e > last)
            last = e->e;
    }
    tb_status rc = TB_OK;
    int64_t part[IV_MASKS];
    if (!n) {
        /* no row: say why (metrics.md, "When a rank has no rows") */
        if (!ev->read)
            metrics_notef(t->m, "%s: rank %lld: no row: the rank has no device tasks or communication ops", what,
                  (long long)metrics_rank_shown(t->m, rank));
        else if (unlinked)
            metrics_notef(t->m,
                  "%s: rank %lld: no row: none of its %zu device tasks is linked to a launching host call "
                  "(metrics.exposed.linked_only: false counts them)",
                  what, (long long)metrics_rank_shown(t->m, rank), ev->read);
        else
            metrics_notef(t->m,
                  "%s: rank %lld: no row: none of its %zu device tasks is computation, communication or "
                  "memcpy (%zu syncs, waits and other tasks)",
                  what, (long long)metrics_rank_shown(t->m, rank), ev->read, ev->skipped);
        goto done;
    }
    if (iv_sweep(r, n, part, NULL, NULL) != 0) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "%s: out of memory", what);
        goto done;
    }
    ivec_merge(&all);
    int64_t total = last - first, busy = iv_length(all.v, all.n);
    int64_t comp = 0, ecomm = 0, ememcpy = part[TL_MEMCPY], tcomm = 0, tmemcpy = 0;
    for (unsigned mask = 1; mask < 8; mask++) {
        if (mask & TL_COMP)
            comp += part[mask];
        else if (mask & TL_COMM)
            ecomm += part[mask];
        if (mask & TL_COMM)
            tcomm += part[mask];
        if (mask & TL_MEMCPY)
            tmemcpy += part[mask];
    }
    int64_t idle = total - busy;
    if (comp + ecomm + ememcpy + idle != total || idle < 0) {
        rc = tb_error_set(err, TB_ERR_INTERNAL,
                          "%s: rank %lld: computation %lld + exposed_comm %lld + exposed_memcpy %lld + idle %lld ns "
                          "is not the total %lld ns",
                          what, (long long)metrics_rank_shown(t->m, rank), (long long)comp, (long long)ecomm, (long long)ememcpy,
                          (long long)idle, (long long)total);
        goto done;
    }
    int64_t v[9] = {rank, total, comp, ecomm, ememcpy, idle, busy, tcomm, tmemcpy};
    for (int c = 0; c < 9; c++)
        sqlite3_bind_int64(t->ins, c + 1, v[c]);
    int s = sqlite3_step(t->ins);
    sqlite3_reset(t->ins);
    if (s != SQLITE_DONE)
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(t->m->db));
done:
    free(r);
    ivec_free(&all);
    return rc;
}

static tb_status build_exposed(const metric_ctx *m, tb_error *err)
{
    static const char what[] = "exposed_time";
    const metrics_options *opt = metrics_opts(m);
    tl_ctx t = {.m = m, .linked_only = opt->exposed.linked_only};
    class_over over = {0};
    tb_status rc = class_overrides("exposed", &opt->exposed.communication, &opt->exposed.memory, &over, err);
    if (rc)
        goto done;
    rc = metrics_exec(m, what,
                      "DROP TABLE IF EXISTS temp.exposed_time;"
                      "CREATE TEMP TABLE exposed_time (rank INTEGER, total_ns INTEGER, computation_ns INTEGER, "
                      "exposed_comm_ns INTEGER, exposed_memcpy_ns INTEGER, idle_ns INTEGER, busy_ns INTEGER, "
                      "total_comm_ns INTEGER, total_memcpy_ns INTEGER)",
                      err);
    if (rc)
        goto done;
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.exposed_time VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &t.ins,
                           NULL) != SQLITE_OK) {
        rc = tb_error_set(err, TB_ERR_DB, "%s: %s", what, sqlite3_errmsg(m->db));
        goto done;
    }
    rc = each_rank(m, what, tl_classify, &over, exposed_rank, &t, 1, 0, NULL, err);
done:
    sqlite3_finalize(t.ins);
    class_over_finish(&over);
    return rc;
}

/* ---- the family --------------------------------------------------------------- */

const metric_table metrics_breakdown[] = {
    {"temporal_breakdown", {NULL}, build_temporal,
     "HTA's temporal breakdown per rank: idle, compute and non-compute time of the GPU (options hta.*)", "rank", {NULL}},
    {"comm_comp_overlap", {NULL}, build_overlap,
     "HTA's communication/computation overlap per rank: share of communication time overlapped by compute", "rank", {NULL}},
    {"idle_time_breakdown", {NULL}, build_idle,
     "HTA's idle time breakdown per rank and stream: host_wait, kernel_wait, other", "rank", {NULL}},
    {"exposed_time", {NULL}, build_exposed,
     "TraceLens' exposed-time partition per rank: computation, exposed communication and memcpy, idle (ns)", "rank", {NULL}},
};
const size_t metrics_breakdown_n = sizeof metrics_breakdown / sizeof metrics_breakdown[0];
