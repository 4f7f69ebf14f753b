/* SPDX-License-Identifier: MIT */
/*
 * load_driver.c - tb_load(): inputs -> one unified DB, atomically (the driver).
 *
 * The files found under the -dir inputs are grouped into ranks (detect.c);
 * each group is a unit of work whose files load one after the other. Rows
 * stream through the importers into a DB written under a temporary name
 * beside the destination; the session tables (SESSION_TIME_INFO,
 * RANK_DEVICE_MAP, META_DATA, TB_SOURCE, ...) are written once all files
 * are in, and only a complete DB is renamed into place. Any failure removes
 * the temporary file, so a reader never sees half a DB and an older DB of
 * the same name survives.
 *
 * Several groups load in parallel on a small pool of threads: the first
 * group writes into the DB directly, every later one into a recorder (dbw.c)
 * that keeps its rows in an unnamed temporary file, and this thread replays
 * the recordings into the DB in group order as they complete, shifting the
 * ids each group drew from its own counters. Every row, string id and
 * counter id therefore comes out exactly as in a load of one group after
 * the other, whatever the threads' timing; and the first failing group in
 * input order decides the error.
 *
 * The thread pool is in load_pool.c, the bookkeeping tables and the
 * post-processing SQL in load_books.c; load_int.h is what the three share.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/analysis_db.h"
#include "ingest/load_int.h"
#include "ingest/npu_json.h"
#include "ingest/npu_text.h"
#include "ingest/topsprof_import.h"
#include "ingest/trace_import.h"
#include "util/tempname.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

static const char *const dest_names[TB_DEST_COUNT] = {
    [TB_DEST_TASK] = "TASK", [TB_DEST_COMPUTE_TASK_INFO] = "COMPUTE_TASK_INFO",
    [TB_DEST_COMMUNICATION_OP] = "COMMUNICATION_OP", [TB_DEST_COMMUNICATION_TASK_INFO] = "COMMUNICATION_TASK_INFO",
    [TB_DEST_MEMCPY_INFO] = "MEMCPY_INFO", [TB_DEST_CANN_API] = "CANN_API", [TB_DEST_PYTORCH_API] = "PYTORCH_API",
    [TB_DEST_STEP_TIME] = "STEP_TIME", [TB_DEST_OVERLAP_ANALYSIS] = "OVERLAP_ANALYSIS",
    [TB_DEST_MSTX_EVENTS] = "MSTX_EVENTS", [TB_DEST_TB_FLOW] = "TB_FLOW (flow ends)",
    [TB_DEST_TB_COUNTER] = "TB_COUNTER", [TB_DEST_TB_EVENT] = "TB_EVENT", [TB_DEST_METADATA] = "metadata",
    [TB_DEST_SKIPPED_PYTHON] = "skipped python_function", [TB_DEST_EMPTY] = "empty {} events",
    [TB_DEST_UNKNOWN_PHASE] = "unknown phase (TB_EVENT)", [TB_DEST_OTHER_TABLES] = "other tables",
    [TB_DEST_BETTER_SOURCE] = "skipped: table filled by a better source",
    [TB_DEST_BAD_ROWS] = "skipped: rows with a wrong field count",
};

const char *tb_dest_name(int dest)
{
    return dest >= 0 && dest < TB_DEST_COUNT ? dest_names[dest] : "?";
}

/* ---- finding inputs ---------------------------------------------------------- */

void tb_paths_free(char **paths)
{
    if (!paths)
        return;
    for (char **p = paths; *p; p++)
        free(*p);
    free(paths);
}

char **tb_find_traces(const char *path, tb_error *err)
{
    input_set set;
    const char *in[] = {path};
    if (detect_inputs(in, 1, &set, err) != TB_OK)
        return NULL;
    size_t n = 0;
    for (size_t g = 0; g < set.n; g++)
        n += set.groups[g].n;
    char **v = calloc(n + 1, sizeof *v);
    if (!v) {
        input_set_free(&set);
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (size_t g = 0; g < set.n; g++)
        for (size_t i = 0; i < set.groups[g].n; i++) {
            v[k++] = set.groups[g].files[i].path;
            set.groups[g].files[i].path = NULL;
        }
    input_set_free(&set);
    return v;
}


/* ---- loading ---------------------------------------------------------------- */

/* Keeps msg as a warning of source src. */
static void warn_keep(warn_log *wl, const char *msg, int64_t src)
{
    if (wl->n == wl->cap) {
        size_t nc = wl->cap ? wl->cap * 2 : 16;
        char **nm = realloc(wl->msgs, nc * sizeof *nm);
        int64_t *ns = nm ? realloc(wl->src_ids, nc * sizeof *ns) : NULL;
        if (nm)
            wl->msgs = nm;
        if (!nm || !ns)
            return; /* shown, not kept: out of memory */
        wl->src_ids = ns;
        wl->cap = nc;
    }
    if ((wl->msgs[wl->n] = strdup(msg)) != NULL)
        wl->src_ids[wl->n++] = src;
}

/* Shows msg (when the log is live) and keeps it as a warning of source src. */
void load_warn_src(warn_log *wl, const char *msg, int64_t src)
{
    if (wl->live && wl->opt->warn) {
        if (wl->cb_mu)
            pthread_mutex_lock(wl->cb_mu);
        wl->opt->warn(wl->opt->ctx, msg);
        if (wl->cb_mu)
            pthread_mutex_unlock(wl->cb_mu);
    }
    if (wl->res)
        wl->res->warnings++;
    warn_keep(wl, msg, src);
}

void load_warn_add(warn_log *wl, const char *msg)
{
    load_warn_src(wl, msg, wl->source);
}

void load_warnf(warn_log *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void load_warnf(warn_log *wl, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    load_warn_add(wl, msg);
}

/* The importers' callbacks: warnings into the log, progress to the caller. */
void load_import_warn(void *ctx, const char *msg)
{
    load_warn_add(ctx, msg);
}

void load_import_progress(void *ctx, const char *file, uint64_t done, uint64_t total)
{
    warn_log *wl = ctx;
    if (!wl->opt->progress)
        return;
    if (wl->cb_mu)
        pthread_mutex_lock(wl->cb_mu);
    wl->opt->progress(wl->opt->ctx, file, done, total);
    if (wl->cb_mu)
        pthread_mutex_unlock(wl->cb_mu);
}

void load_warn_log_free(warn_log *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        free(wl->msgs[i]);
    free(wl->msgs);
    free(wl->src_ids);
    wl->msgs = NULL;
    wl->src_ids = NULL;
    wl->n = wl->cap = 0;
}

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

static void free_ignored(input_file *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
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
        wl->source = (int64_t)i + 1;
        /* a DB input keeps its own OVERLAP_ANALYSIS ids; a replay must not shift them */
        if (recording && dbw_record_mark(w, s->kind == IN_MSPROF_DB ? DBW_MARK_KEEP_OVERLAP_IDS : 0)) {
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
        import_opts io = {.rank = s->rank, .keep_python_functions = opt->keep_python_functions,
                                .warn = load_import_warn, .progress = load_import_progress, .ctx = wl,
                                .total_bytes = (uint64_t)s->bytes, .skip_rows = skip,
                                .strict_rows = opt->strict};
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
        if (s->r.dest[TB_DEST_UNKNOWN_PHASE])
            load_warnf(wl, "%s: %llu events with an unknown phase kept in TB_EVENT", s->path,
                  (unsigned long long)s->r.dest[TB_DEST_UNKNOWN_PHASE]);
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

tb_status tb_load(const tb_load_options *opt, tb_load_result *res, tb_error *err)
{
    tb_load_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    tb_error_clear(err);
    if (!opt->output || !*opt->output)
        return tb_error_set(err, TB_ERR_USAGE, "no output DB given");
    if (opt->n_inputs == 0)
        return tb_error_set(err, TB_ERR_USAGE, "no input given (-dir PATH)");

    src_info *src = NULL;
    size_t nsrc = 0, srccap = 0, n_ignored = 0, nunits = 0, nranks = 0;
    unit *units = NULL;
    int64_t *claim = NULL, *final = NULL;
    size_t *who = NULL;
    input_file *ignored = NULL;
    warn_log wl = {0};
    char *tmp = NULL;
    dbw *w = NULL;
    tb_status st = TB_OK;

    wl.opt = opt;
    wl.res = res;
    wl.live = 1;
    input_set set;
    if ((st = detect_inputs(opt->inputs, opt->n_inputs, &set, err)) != TB_OK)
        return st;
    for (size_t g = 0; g < set.n; g++) {
        for (size_t i = 0; i < set.groups[g].n; i++) {
            if (nsrc == srccap) {
                srccap = srccap ? srccap * 2 : 8;
                src_info *ns = realloc(src, srccap * sizeof *ns);
                if (!ns) {
                    input_set_free(&set);
                    st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    goto fail;
                }
                src = ns;
            }
            memset(&src[nsrc], 0, sizeof src[nsrc]);
            src[nsrc].path = set.groups[g].files[i].path;
            set.groups[g].files[i].path = NULL;
            src[nsrc].kind = set.groups[g].files[i].kind;
            src[nsrc].group = g;
            src[nsrc].cluster = set.groups[g].cluster;
            src[nsrc].hint = set.groups[g].cluster ? -1 : set.groups[g].rank_hint;
            nsrc++;
        }
    }
    /* files seen but not read are listed (kind "ignored") */
    ignored = set.ignored;
    n_ignored = set.n_ignored;
    set.ignored = NULL;
    set.n_ignored = 0;
    input_set_free(&set);
    for (size_t i = 0; i < n_ignored && opt->note; i++) {
        if (!ignored[i].note)
            continue;
        char msg[PATH_MAX + 256];
        snprintf(msg, sizeof msg, "%s: not read: %s", ignored[i].path, ignored[i].note);
        opt->note(opt->ctx, msg);
    }

    /* the output never replaces an input; an input given twice loads once */
    struct stat ost;
    int out_exists = stat(opt->output, &ost) == 0;
    for (size_t i = 0; i < nsrc; i++) {
        struct stat ist;
        if (stat(src[i].path, &ist) != 0)
            continue;
        if (out_exists && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino) {
            st = tb_error_at(err, TB_ERR_USAGE, opt->output, 0, 0, -1, "the output would replace the input '%s'",
                             src[i].path);
            goto fail;
        }
        for (size_t j = 0; j < i; j++) {
            struct stat jst;
            if (src[j].path && stat(src[j].path, &jst) == 0 && jst.st_dev == ist.st_dev && jst.st_ino == ist.st_ino) {
                load_warnf(&wl, "%s: the same file as %s: loaded once", src[i].path, src[j].path);
                free(src[i].path);
                memmove(&src[i], &src[i + 1], (nsrc - i - 1) * sizeof *src);
                nsrc--;
                i--;
                break;
            }
        }
    }

    /* the groups, and the ranks they give: one each, several for a DB that
     * holds several, none for the cluster-level files */
    if (!(units = calloc(nsrc ? nsrc : 1, sizeof *units))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < nsrc; i++) {
        if (i == 0 || src[i].group != src[i - 1].group) {
            unit *g = &units[nunits++];
            g->first = i;
            g->cluster = src[i].cluster;
            g->nranks = g->cluster ? 0 : 1;
            if (!g->cluster && src[i].kind == IN_MSPROF_DB) {
                if ((st = msprof_db_ranks(src[i].path, &g->dbr, err)) != TB_OK)
                    goto fail;
                if (g->dbr.n)
                    g->nranks = g->dbr.n;
            }
            g->rank = g->cluster ? TB_CLUSTER_RANK : (int)nranks;
            nranks += g->nranks;
        }
        unit *g = &units[nunits - 1];
        g->n++;
        src[i].rank = g->rank;
        src[i].multi = g->dbr.n && i == g->first;
    }

    /* temporary file beside the destination, renamed into place at the end */
    size_t tl = strlen(opt->output) + 128;
    tmp = malloc(tl);
    if (!tmp) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    /* what a killed run left beside the destination goes first */
    tempname_sweep_beside(opt->output);
    int fd = tempname_template(tmp, tl, opt->output) == 0 ? mkstemp(tmp) : (errno = ENAMETOOLONG, -1);
    if (fd < 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    close(fd);
    tb_temp_register(tmp);
    if (!(w = dbw_create(tmp, err))) {
        st = err->code;
        goto fail;
    }

    double t_read = dbw_now();
    import_ids ids = {.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1};
    load_ctx L = {.opt = opt, .src = src, .units = units, .nunits = nunits};
    size_t jobs = load_pool_jobs(opt, nunits);
    if (jobs >= 2) {
        if ((st = load_pool_run(&L, w, &ids, &wl, jobs, tmp, res, err)) != TB_OK)
            goto fail;
    } else {
        for (size_t u = 0; u < nunits; u++) {
            if ((st = load_unit(&L, &units[u], w, 0, dbw_sink(w), &ids, &wl, err)) != TB_OK)
                goto fail;
            load_count_unit(&L, &units[u], res);
        }
    }
    double t_post = dbw_now();
    res->seconds_read = t_post - t_read;
    if (opt->phase)
        opt->phase(opt->ctx, "post-processing");

    /* what each rank names itself: profiler_info_N.json, else the first file
     * that says (a DB that holds several ranks names each of them) */
    if (!(claim = malloc((nranks ? nranks : 1) * sizeof *claim)) ||
        !(final = malloc((nranks ? nranks : 1) * sizeof *final)) ||
        !(who = calloc(nranks ? nranks : 1, sizeof *who))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t u = 0; u < nunits; u++) {
        const unit *g = &units[u];
        for (size_t j = 0; j < g->nranks; j++) {
            int64_t id = g->dbr.n ? g->dbr.v[j].id : src[g->first].hint;
            claim[g->rank + (int)j] = id >= 0 && id <= INT_MAX ? id : -1;
            who[g->rank + (int)j] = g->first;
        }
        for (size_t i = g->first; i < g->first + g->n && !g->dbr.n && !g->cluster; i++)
            if (claim[g->rank] < 0 && src[i].r.trace_rank >= 0 && src[i].r.trace_rank <= INT_MAX)
                claim[g->rank] = src[i].r.trace_rank;
    }
    int any_cluster = 0;
    for (size_t i = 0; i < nsrc; i++)
        any_cluster |= src[i].cluster;
    if (any_cluster && (st = load_books_clear_cluster(w, err)) != TB_OK)
        goto fail;
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = load_books_bind_h2d(w, err)) != TB_OK ||
        (st = load_books_apply_ranks(w, claim, who, src, nranks, final, &wl, err)) != TB_OK)
        goto fail;
    for (size_t i = 0; i < nsrc; i++)
        if (!src[i].cluster)
            src[i].rank = (int)final[src[i].rank];
    if ((st = load_books_write(w, src, nsrc, units, nunits, final, ignored, n_ignored, opt, err)) != TB_OK ||
        (st = load_books_warnings(w, &wl, err)) != TB_OK)
        goto fail;
    res->seconds_post = dbw_now() - t_post;
    if (opt->phase)
        opt->phase(opt->ctx, "indexing");
    if ((st = dbw_finish(w, &res->seconds_index, err)) != TB_OK)
        goto fail;
    dbw_destroy(w);
    w = NULL;
    if (rename(tmp, opt->output) != 0) {
        st = tb_error_at(err, TB_ERR_IO, opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
        goto fail;
    }
    tb_temp_unregister(tmp);
    free(tmp);
    tmp = NULL;
    goto done;

fail:
    dbw_destroy(w);
    if (tmp) {
        unlink(tmp);
        tb_temp_unregister(tmp);
        free(tmp);
    }
    if (st == TB_OK)
        st = TB_ERR_INTERNAL;
    if (err->code == TB_OK)
        err->code = st;
done:
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].path);
    free(src);
    for (size_t u = 0; u < nunits; u++)
        db_ranks_free(&units[u].dbr);
    free(units);
    free(claim);
    free(final);
    free(who);
    free_ignored(ignored, n_ignored);
    load_warn_log_free(&wl);
    return st;
}
