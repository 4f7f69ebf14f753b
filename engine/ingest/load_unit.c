/* SPDX-License-Identifier: MIT */
/*
 * load_unit.c - loading one rank group's files, one after the other.
 *
 * For each file the right importer runs (trace JSON, msprof DB, torch_npu
 * analysis DB, summary CSV, communication JSON, topsprof listing), told
 * which row tables a better source of the same rank already filled, so that
 * nothing is counted twice within a rank; the counts of what was skipped
 * move to the "better source" destination. The driver (load_driver.c) runs
 * the groups one after the other, the pool (load_pool.c) several at once.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/analysis_db.h"
#include "ingest/load_int.h"
#include "ingest/npu_json.h"
#include "ingest/npu_text.h"
#include "ingest/topsprof_import.h"
#include "ingest/trace_import.h"

/* Which destination counts go with which row tables (for precedence): one
 * or two tables each, -1 for none. */
static const struct {
    int dest;
    int rows[2];
} dest_rows[] = {
    {TB_DEST_TASK, {R_TASK, -1}},
    {TB_DEST_COMPUTE_TASK_INFO, {R_COMPUTE_TASK_INFO, R_FULL_COMPUTE_TASK_INFO}},
    {TB_DEST_MEMCPY_INFO, {R_MEMCPY_INFO, -1}},
    {TB_DEST_COMMUNICATION_TASK_INFO, {R_COMMUNICATION_TASK_INFO, R_FULL_COMMUNICATION_TASK_INFO}},
    {TB_DEST_COMMUNICATION_OP, {R_COMMUNICATION_OP, R_FULL_COMMUNICATION_OP}},
    {TB_DEST_CANN_API, {R_CANN_API, -1}},
    {TB_DEST_PYTORCH_API, {R_PYTORCH_API, R_FULL_PYTORCH_API}},
    {TB_DEST_STEP_TIME, {R_STEP_TIME, -1}},
    {TB_DEST_OVERLAP_ANALYSIS, {R_OVERLAP_ANALYSIS, -1}},
    {TB_DEST_MSTX_EVENTS, {R_MSTX_EVENTS, R_FULL_MSTX_EVENTS}},
};

/* Row tables a source filled, which later sources of the same rank skip.
 * Device tasks go together with the tables that describe them. */
static row_set filled_mask(const import_result *r)
{
    row_set m = r->rows_filled;
    static const int generic[] = {R_FLOW, R_FLOW_END, R_EVENT, R_COUNTER, R_PROCESS, R_THREAD};
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        row_set_del(&m, generic[i]);
    for (size_t i = 0; i < sizeof dest_rows / sizeof dest_rows[0]; i++)
        if (r->dest[dest_rows[i].dest])
            for (int k = 0; k < 2; k++)
                if (dest_rows[i].rows[k] >= 0)
                    row_set_add(&m, dest_rows[i].rows[k]);
    if (row_set_has(&m, R_TASK)) {
        static const int info[] = {R_COMPUTE_TASK_INFO, R_FULL_COMPUTE_TASK_INFO, R_MEMCPY_INFO,
                                   R_COMMUNICATION_TASK_INFO, R_FULL_COMMUNICATION_TASK_INFO};
        for (size_t i = 0; i < sizeof info / sizeof info[0]; i++)
            row_set_add(&m, info[i]);
    }
    return m;
}

/* Counts of events whose table was skipped move to the "better source" counter. */
static void move_skipped(import_result *r, const row_set *skipped)
{
    for (size_t i = 0; i < sizeof dest_rows / sizeof dest_rows[0]; i++) {
        int d = dest_rows[i].dest;
        int hit = 0;
        for (int k = 0; k < 2; k++)
            if (dest_rows[i].rows[k] >= 0 && row_set_has(skipped, dest_rows[i].rows[k]))
                hit = 1;
        if (!hit || !r->dest[d])
            continue;
        /* an event counts once: the tables that only describe a task or an API
         * call (its info rows, its step) are not events of their own */
        int secondary = d == TB_DEST_COMPUTE_TASK_INFO || d == TB_DEST_MEMCPY_INFO ||
                        d == TB_DEST_COMMUNICATION_TASK_INFO || d == TB_DEST_STEP_TIME;
        if (!secondary)
            r->dest[TB_DEST_BETTER_SOURCE] += r->dest[d];
        r->dest[d] = 0;
    }
}


/* The longest event of a trace: the option, else TRACEBOOK_MAX_EVENT_MB, else the reader's default. */
static size_t load_max_event(const tb_load_options *opt)
{
    if (opt->max_event_bytes)
        return opt->max_event_bytes;
    const char *env = getenv("TRACEBOOK_MAX_EVENT_MB");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long mb = strtoull(env, &end, 10);
        if (errno == 0 && *end == 0 && mb > 0 && mb < ((unsigned long long)1 << 40))
            return (size_t)mb << 20;
    }
    return 0;
}

/*
 * Loads the files of one group into sink, one after the other, drawing ids
 * from ids. w is the writer or recorder behind the sink (its error explains
 * a failed row; a recorder also gets a mark before each file). Warnings go
 * to wl. Returns TB_OK or the first error, with err set and naming the file.
 */
tb_status load_unit(const load_ctx *L, unit *g, dbw *w, int recording, const row_sink *sink, import_ids *ids,
                    warn_log *wl, tb_error *err)
{
    const tb_load_options *opt = L->opt;
    row_set filled = {{0}}, skip = {{0}};
    tb_status st = TB_OK;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        src_info *s = &L->src[i];
        struct stat sb;
        if (stat(s->path, &sb) == 0) {
            s->bytes = (int64_t)sb.st_size;
            s->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
        }
        wl->source = s->gid;
        /* a DB input keeps its own OVERLAP_ANALYSIS ids; a replay must not shift them
         * (a shard's group draws them from the load's counters, as its raw inputs did) */
        if (recording && dbw_record_mark(w, s->kind == IN_MSPROF_DB && !s->part ? DBW_MARK_KEEP_OVERLAP_IDS : 0)) {
            *err = *dbw_error(w);
            st = err->code;
            break;
        }
        /* within a group, later (lesser) sources skip the tables an earlier one filled; the
         * slices of one msprof summary (op_summary_slice_<n>_*.csv) are one source: a slice
         * skips what its first slice skipped, not the tables the slices before it filled */
        if (!(i > g->first && s->kind == IN_NPU_CSV && s[-1].kind == IN_NPU_CSV &&
              npu_text_same_series(s[-1].path, s->path)))
            skip = filled;
        if (opt->books_only && s->part)
            continue; /* a merge of the shards' bookkeeping only: none of their rows */
        import_opts io = {.rank = s->rank, .keep_python_functions = opt->keep_python_functions,
                                .warn = load_import_warn, .progress = load_import_progress, .ctx = wl,
                                .total_bytes = (uint64_t)s->bytes, .skip_rows = skip,
                                .strict_rows = opt->strict, .max_event_bytes = load_max_event(opt),
                                .part = s->part};
        switch (s->kind) {
        case IN_MSPROF_DB:
            st = msprof_db_import(s->path, sink, ids, &io, i == g->first && g->dbr.n ? &g->dbr : NULL, &s->r, err);
            break;
        case IN_TOPSPROF:
            st = topsprof_import(s->path, sink, ids, &io, &s->r, err);
            break;
        case IN_NPU_CSV:
            st = npu_text_import(s->path, sink, ids, &io, &s->r, err);
            break;
        case IN_ANALYSIS_DB:
            st = analysis_db_import(s->path, sink, ids, &io, &s->r, err);
            /* the rank's step_trace_time.csv (sorted after it) then adds no second copy */
            if (st == TB_OK && s->r.dest[TB_DEST_OTHER_TABLES])
                row_set_add(&filled, R_STEP_TRACE_TIME);
            break;
        case IN_NPU_JSON:
            st = npu_json_import(s->path, sink, ids, &io, &s->r, err);
            break;
        default:
            st = trace_import(s->path, sink, ids, &io, &s->r, err);
            break;
        }
        if (st != TB_OK) {
            /* the importer set err, a failure of the DB writer included (row_sink_fail) */
            if (err->file[0] == 0)
                snprintf(err->file, sizeof err->file, "%s", s->path);
            break;
        }
        move_skipped(&s->r, &skip);
        row_set more = filled_mask(&s->r);
        row_set_or(&filled, &more);
        if (s->r.truncated) {
            if (opt->strict) {
                st = tb_error_at(err, TB_ERR_TRUNCATED, s->path, 0, 0, s->r.stop_offset,
                                 "input cut short at byte %lld after %llu complete events (--strict)",
                                 (long long)s->r.stop_offset, (unsigned long long)s->r.events);
                break;
            }
            load_warnf(wl, "%s: input cut short at byte %lld: kept %llu complete events, the rest is lost", s->path,
                  (long long)s->r.stop_offset, (unsigned long long)s->r.events);
        }
        if (s->r.trailing > 0) {
            /* zlib ends the file quietly at the last gzip member: say what it skipped */
            if (opt->strict) {
                st = tb_error_at(err, TB_ERR_PARSE, s->path, 0, 0, s->r.trailing,
                                 "data after the end of the gzip stream (--strict)");
                break;
            }
            load_warnf(wl, "%s: data after the end of the gzip stream, from byte %lld, ignored", s->path,
                       (long long)s->r.trailing);
        }
        if (s->r.dest[TB_DEST_UNKNOWN_PHASE])
            load_warnf(wl, "%s: %llu events with an unknown phase kept in TB_EVENT", s->path,
                  (unsigned long long)s->r.dest[TB_DEST_UNKNOWN_PHASE]);
        if (s->r.dest[TB_DEST_BAD_TIME])
            load_warnf(wl, "%s: %llu events with a time outside +-2^62 ns (about 146 years from 1970) skipped",
                       s->path, (unsigned long long)s->r.dest[TB_DEST_BAD_TIME]);
    }
    return st;
}

/* Adds a loaded group's counts to the result. */
void load_count_unit(const load_ctx *L, const unit *g, tb_load_result *res)
{
    for (size_t i = g->first; i < g->first + g->n; i++) {
        const src_info *s = &L->src[i];
        res->events += s->r.events;
        for (int d = 0; d < TB_DEST_COUNT; d++)
            res->dest[d] += s->r.dest[d];
        res->n_files++;
    }
}
