/* SPDX-License-Identifier: MIT */
/*
 * topsprof_import.c - routes the rows of a topsprof listing (topsprof.c)
 * into the unified DB.
 *
 * Trace mode lists timed activities: GCU rows become device tasks (TASK +
 * COMPUTE_TASK_INFO, taskType "GCU"), RUNTIME rows API rows (CANN_API, type
 * 60004 tops_runtime) and CPU rows host rows (CANN_API, type 60005
 * tops_cpu). Statistics mode has no times, only aggregates per name: those
 * rows land in TB_TOPS_SUMMARY, and every section footer in TB_TOPS_TOTAL, so
 * topsprof-style reports can be printed from them.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/topsprof_import.h"

#include <stdio.h>
#include <string.h>

#include "ingest/topsprof.h"
#include "tracebook/db.h"

typedef struct ctx {
    const row_sink *sink;
    import_ids *ids;
    const import_opts *opt;
    import_result *res;
    int64_t s_gcu;
    const char *path;
    tb_error *err;      /* a sink failure is told here; the listing reader then stops */
} ctx;

static int row(ctx *c, int table, const tb_val *v)
{
    if (row_set_has(&c->opt->skip_rows, table))
        return 0;
    if (c->sink->row(c->sink->ctx, table, v) == 0)
        return 0;
    row_sink_fail(c->sink, c->path, c->err);
    return -1;
}

static int64_t intern(ctx *c, const char *s)
{
    int64_t id = c->sink->intern(c->sink->ctx, s, strlen(s));
    if (id < 0)
        row_sink_fail(c->sink, c->path, c->err);
    return id;
}

static void note_time(ctx *c, int64_t start, int64_t end)
{
    import_note_time(c->res, start, end);
}

static int on_stat(void *p, const tops_stat *s)
{
    ctx *c = p;
    int64_t name = intern(c, s->name);
    if (name < 0)
        return -1;
    tb_val v[11] = {VINT(c->opt->rank), VTEXT(s->klass, strlen(s->klass)),
                    s->device < 0 ? VNULL : VINT(s->device), s->pid < 0 ? VNULL : VINT(s->pid),
                    s->time_pct < 0 ? VNULL : VREAL(s->time_pct), s->time_ns < 0 ? VNULL : VINT(s->time_ns),
                    s->calls < 0 ? VNULL : VINT(s->calls), s->avg_ns < 0 ? VNULL : VINT(s->avg_ns),
                    s->min_ns < 0 ? VNULL : VINT(s->min_ns), s->max_ns < 0 ? VNULL : VINT(s->max_ns), VINT(name)};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    if (s->device >= 0 && s->device < 64)
        c->res->devices_seen |= (uint64_t)1 << s->device;
    return row(c, R_TOPS_SUMMARY, v);
}

static int on_total(void *p, const tops_total *t)
{
    ctx *c = p;
    tb_val v[8] = {VINT(c->opt->rank), VTEXT(t->klass, strlen(t->klass)), t->device < 0 ? VNULL : VINT(t->device),
                   t->pid < 0 ? VNULL : VINT(t->pid), VINT(t->from_trace),
                   t->accumulate_ns < 0 ? VNULL : VINT(t->accumulate_ns),
                   t->total_calls < 0 ? VNULL : VINT(t->total_calls), t->total_ns < 0 ? VNULL : VINT(t->total_ns)};
    c->res->events++;
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    return row(c, R_TOPS_TOTAL, v);
}

static int on_trace(void *p, const tops_trace *t)
{
    ctx *c = p;
    /* a row outside the stored range (a start near 2^63 would not even have
       an end): skipped and counted, as in every input, or an error at its
       line with --strict */
    if (!import_time_ok(t->start_ns, t->dur_ns)) {
        if (c->opt->strict_rows) {
            tb_error_at(c->err, TB_ERR_PARSE, c->path, t->line, 0, t->offset,
                        "a time outside +-2^62 ns (about 146 years from 1970)");
            return -1;
        }
        c->res->events++;
        c->res->dest[TB_DEST_BAD_TIME]++;
        return 0;
    }
    int64_t name = intern(c, t->name);
    if (name < 0)
        return -1;
    int64_t end = t->start_ns + t->dur_ns;
    note_time(c, t->start_ns, end);
    c->res->events++;
    if (!strcmp(t->klass, "RUNTIME") || !strcmp(t->klass, "CPU")) {
        int64_t tid = t->pid < 0 ? 0 : (int64_t)t->pid;
        tb_val v[11] = {VINT(t->start_ns), VINT(end), VINT(!strcmp(t->klass, "RUNTIME") ? 60004 : 60005),
                       VINT(tid << 32 | (tid & 0xffffffff)), VNULL, VINT(name), VINT(c->opt->rank), VNULL};
        c->res->dest[TB_DEST_CANN_API]++;
        return row(c, R_CANN_API, v);
    }
    int64_t dev = t->device < 0 ? 0 : t->device;
    int64_t gid = c->ids->next_task++;
    int64_t node = t->node_name[0] ? intern(c, t->node_name) : -2;
    if (node == -1)
        return -1;
    tb_val task[17] = {VINT(t->start_ns), VINT(end), VINT(dev), VNULL, VINT(gid), t->pid < 0 ? VNULL : VINT(t->pid),
                       VINT(c->s_gcu), VNULL, VNULL, VNULL, VINT(TB_STEP_MODEL_ID), VINT(c->opt->rank), VINT(name)};
    /* the node (graph op) name is the op type of the kernel, when the listing has one */
    tb_val info[8] = {VINT(name), VINT(gid), VINT(c->s_gcu), node < 0 ? VNULL : VINT(node), VNULL, VNULL, VNULL,
                      VINT(c->opt->rank)};
    c->res->dest[TB_DEST_TASK]++;
    c->res->dest[TB_DEST_COMPUTE_TASK_INFO]++;
    if (dev < 64)
        c->res->devices_seen |= (uint64_t)1 << dev;
    return row(c, R_TASK, task) || row(c, R_COMPUTE_TASK_INFO, info);
}

tb_status topsprof_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    res->trace_rank = -1;
    res->stop_offset = -1;
    snprintf(res->kind, sizeof res->kind, "topsprof listing");
    ctx c = {.sink = sink, .ids = ids, .opt = opt, .res = res, .path = path, .err = err};
    if ((c.s_gcu = intern(&c, "GCU")) < 0)
        return err->code;
    tops_callbacks cb = {.ctx = &c, .stat = on_stat, .trace = on_trace, .total = on_total};
    return tops_parse(path, &cb, err);
}
