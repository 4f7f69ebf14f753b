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
 * One group's files load in load_unit.c, several groups at once in
 * load_pool.c; the bookkeeping tables and the post-processing SQL are in
 * load_books.c, the load's warnings in load_warn.c; load_int.h is what they
 * share.
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

#include "ingest/load_int.h"
#include "util/tempname.h"
#include "tracebook/error.h"
#include "tracebook/load.h"

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

static void free_ignored(input_file *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

/* One tb_load call: what its steps fill in turn, freed at the end. */
typedef struct load_run {
    const tb_load_options *opt;
    tb_load_result *res;
    src_info *src;
    size_t nsrc, n_ignored, nunits, nranks;
    unit *units;
    int64_t *claim, *final;
    size_t *who;
    input_file *ignored;
    warn_log wl;
    char *tmp;
    dbw *w;
    shard_plan plan;
    shard_run sr;
    int merging;
    import_ids ids;
} load_run;

/* The detected files as the load's sources in group order, and the files
 * seen but not read (listed with kind "ignored", noted when they say why);
 * takes the paths out of set and frees it. */
static tb_status take_sources(load_run *R, input_set *set, tb_error *err)
{
    const tb_load_options *opt = R->opt;
    size_t cap = 0;
    for (size_t g = 0; g < set->n; g++) {
        for (size_t i = 0; i < set->groups[g].n; i++) {
            if (R->nsrc == cap) {
                cap = cap ? cap * 2 : 8;
                src_info *ns = realloc(R->src, cap * sizeof *ns);
                if (!ns) {
                    input_set_free(set);
                    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                }
                R->src = ns;
            }
            src_info *s = &R->src[R->nsrc++];
            memset(s, 0, sizeof *s);
            s->path = set->groups[g].files[i].path;
            set->groups[g].files[i].path = NULL;
            s->kind = set->groups[g].files[i].kind;
            s->group = g;
            s->cluster = set->groups[g].cluster;
            s->hint = set->groups[g].cluster ? -1 : set->groups[g].rank_hint;
        }
    }
    R->ignored = set->ignored;
    R->n_ignored = set->n_ignored;
    set->ignored = NULL;
    set->n_ignored = 0;
    input_set_free(set);
    for (size_t i = 0; i < R->n_ignored && opt->note; i++) {
        if (!R->ignored[i].note)
            continue;
        char msg[PATH_MAX + 256];
        snprintf(msg, sizeof msg, "%s: not read: %s", R->ignored[i].path, R->ignored[i].note);
        opt->note(opt->ctx, msg);
    }
    return TB_OK;
}

/* The output never replaces an input; an input given twice loads once. */
static tb_status drop_same_files(load_run *R, tb_error *err)
{
    src_info *src = R->src;
    struct stat ost;
    int out_exists = stat(R->opt->output, &ost) == 0;
    for (size_t i = 0; i < R->nsrc; i++) {
        struct stat ist;
        if (stat(src[i].path, &ist) != 0)
            continue;
        if (out_exists && ist.st_dev == ost.st_dev && ist.st_ino == ost.st_ino)
            return tb_error_at(err, TB_ERR_USAGE, R->opt->output, 0, 0, -1,
                               "the output would replace the input '%s'", src[i].path);
        for (size_t j = 0; j < i; j++) {
            struct stat jst;
            if (src[j].path && stat(src[j].path, &jst) == 0 && jst.st_dev == ist.st_dev && jst.st_ino == ist.st_ino) {
                load_warnf(&R->wl, "%s: the same file as %s: loaded once", src[i].path, src[j].path);
                free(src[i].path);
                memmove(&src[i], &src[i + 1], (R->nsrc - i - 1) * sizeof *src);
                R->nsrc--;
                i--;
                break;
            }
        }
    }
    return TB_OK;
}

/* The groups, and the ranks they give: one each, several for a DB that
 * holds several, none for the cluster-level files. */
static tb_status group_units(load_run *R, tb_error *err)
{
    src_info *src = R->src;
    if (!(R->units = calloc(R->nsrc ? R->nsrc : 1, sizeof *R->units)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < R->nsrc; i++) {
        if (i == 0 || src[i].group != src[i - 1].group) {
            unit *g = &R->units[R->nunits++];
            g->first = i;
            g->cluster = src[i].cluster;
            g->nranks = g->cluster ? 0 : 1;
            if (!g->cluster && src[i].kind == IN_MSPROF_DB) {
                tb_status st = msprof_db_ranks(src[i].path, &g->dbr, err);
                if (st != TB_OK)
                    return st;
                if (g->dbr.n)
                    g->nranks = g->dbr.n;
            }
            g->rank = g->cluster ? TB_CLUSTER_RANK : (int)R->nranks;
            R->nranks += g->nranks;
        }
        unit *g = &R->units[R->nunits - 1];
        g->n++;
        src[i].rank = g->rank;
        src[i].multi = g->dbr.n && i == g->first;
    }
    return TB_OK;
}

/* The units of work: shard DBs alone are merged in the order of the load
 * they are parts of (the plan); else the groups, of which a shard keeps
 * only its part (the groups keep their rank numbers). */
static tb_status plan_units(load_run *R, tb_error *err)
{
    const tb_load_options *opt = R->opt;
    if (opt->shard_count && load_shards_all(R->src, R->nsrc))
        return tb_error_at(err, TB_ERR_USAGE, R->src[0].path, 0, 0, -1,
                           "the inputs are shard DBs already: --shard splits the raw inputs");
    if (opt->books_only && !load_shards_all(R->src, R->nsrc))
        return tb_error_at(err, TB_ERR_USAGE, R->nsrc ? R->src[0].path : opt->inputs[0], 0, 0, -1,
                           "not a shard DB: the bookkeeping alone is merged from shard DBs only");
    if (!opt->shard_count && load_shards_all(R->src, R->nsrc)) {
        R->merging = 1;
        return load_shards_plan(opt, &R->src, &R->nsrc, &R->units, &R->nunits, &R->nranks, &R->plan, &R->wl, err);
    }
    tb_status st = group_units(R, err);
    if (st == TB_OK && opt->shard_count)
        st = load_shards_select(opt, R->src, &R->nsrc, R->units, &R->nunits, R->nranks, &R->sr, err);
    return st;
}

/* The DB writer on a temporary file beside the destination, with the mode a
 * new file gets; what a killed run left there goes first. */
static tb_status open_temp(load_run *R, tb_error *err)
{
    const char *output = R->opt->output;
    size_t tl = strlen(output) + 128;
    if (!(R->tmp = malloc(tl)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tempname_sweep_beside(output);
    int fd = tempname_template(R->tmp, tl, output) == 0 ? tempname_make(R->tmp, 0, NULL) : (errno = ENAMETOOLONG, -1);
    if (fd < 0) {
        tb_status st = tb_error_at(err, TB_ERR_IO, output, 0, 0, -1, "cannot write: %s", strerror(errno));
        free(R->tmp);
        R->tmp = NULL;
        return st;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        tb_status st = tb_error_at(err, TB_ERR_IO, output, 0, 0, -1, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(R->tmp);
        tb_temp_unregister(R->tmp);
        free(R->tmp);
        R->tmp = NULL;
        return st;
    }
    close(fd);
    if (!(R->w = dbw_create(R->tmp, err)))
        return err->code;
    return TB_OK;
}

/* Every unit's files into the DB: on the pool when it has two jobs or more,
 * else one unit after the other on this thread. */
static tb_status read_units(load_run *R, tb_error *err)
{
    load_ctx L = {.opt = R->opt, .src = R->src, .units = R->units, .nunits = R->nunits};
    size_t jobs = load_pool_jobs(R->opt, R->nunits);
    if (jobs >= 2)
        return load_pool_run(&L, R->w, &R->ids, &R->wl, jobs, R->tmp, R->res, err);
    for (size_t u = 0; u < R->nunits; u++) {
        unit *g = &R->units[u];
        g->id_start = R->ids;
        tb_status st = load_unit(&L, g, R->w, 0, dbw_sink(R->w), &R->ids, &R->wl, err);
        if (st != TB_OK)
            return st;
        g->id_end = R->ids;
        g->strings_end = dbw_strings_end(R->w);
        load_count_unit(&L, g, R->res);
    }
    return TB_OK;
}

/* What each rank names itself: profiler_info_N.json, else the first file
 * that says (a DB that holds several ranks names each of them); a merge of
 * shards takes what the ranks named, decided over all shards. */
static tb_status claim_ranks(load_run *R, tb_error *err)
{
    size_t nranks = R->nranks;
    if (!(R->claim = malloc((nranks ? nranks : 1) * sizeof *R->claim)) ||
        !(R->final = malloc((nranks ? nranks : 1) * sizeof *R->final)) ||
        !(R->who = calloc(nranks ? nranks : 1, sizeof *R->who)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < nranks; r++)
        R->claim[r] = -1;
    for (size_t u = 0; u < R->nunits; u++) {
        const unit *g = &R->units[u];
        for (size_t j = 0; j < g->nranks; j++) {
            int64_t id = g->dbr.n ? g->dbr.v[j].id : R->src[g->first].hint;
            R->claim[g->rank + (int)j] = id >= 0 && id <= INT_MAX ? id : -1;
            R->who[g->rank + (int)j] = g->first;
        }
        for (size_t i = g->first; i < g->first + g->n && !g->dbr.n && !g->cluster; i++)
            if (R->claim[g->rank] < 0 && R->src[i].r.trace_rank >= 0 && R->src[i].r.trace_rank <= INT_MAX)
                R->claim[g->rank] = R->src[i].r.trace_rank;
    }
    for (size_t r = 0; R->merging && r < nranks; r++)
        R->claim[r] = R->plan.claim[r];
    return TB_OK;
}

/* The post-processing: cluster rows cleared, flows paired, H2D copies, PMU
 * metrics and summary CSVs' kernel types bound, the ranks numbered; then
 * the bookkeeping tables (a merge's from its shards, a shard's part rows)
 * and the warnings. */
static tb_status write_books(load_run *R, tb_error *err)
{
    const tb_load_options *opt = R->opt;
    dbw *w = R->w;
    tb_status st;
    int any_cluster = 0;
    for (size_t i = 0; i < R->nsrc; i++)
        any_cluster |= R->src[i].cluster;
    if (any_cluster && (st = load_books_clear_cluster(w, err)) != TB_OK)
        return st;
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = load_books_bind_h2d(w, err)) != TB_OK ||
        (st = load_books_bind_pmu(w, err)) != TB_OK ||
        (st = load_types_bind(w, R->src, R->nsrc, err)) != TB_OK ||
        (st = load_books_bind_collectives(w, err)) != TB_OK)
        return st;
    if (opt->shard_count) {
        /* a shard keeps the numbers in input order: whether the ranks' own
         * ids replace them is decided over all the shards, by their merge */
        for (size_t r = 0; r < R->nranks; r++)
            R->final[r] = (int64_t)r;
    } else if ((st = load_books_apply_ranks(w, R->claim, R->who, R->src, R->nranks, R->final, &R->wl, err)) !=
               TB_OK) {
        return st;
    }
    for (size_t i = 0; i < R->nsrc; i++)
        if (!R->src[i].cluster)
            R->src[i].rank = (int)R->final[R->src[i].rank];
    if (R->merging)
        st = load_shards_books(w, &R->plan, R->final, &R->ids, opt->books_only, err);
    else
        st = load_books_write(w, R->src, R->nsrc, R->sr.nsrc_all, R->units, R->nunits, R->final, R->ignored,
                              R->n_ignored, opt, &R->ids, err);
    /* TASK as the writer inserted it: no cluster rows cleared, no rank renumbered */
    int as_written = !any_cluster;
    for (size_t r = 0; r < R->nranks && as_written; r++)
        as_written = R->final[r] == (int64_t)r;
    if (st == TB_OK && !R->merging)
        st = load_books_fill_recipe_tables(w, as_written, err);
    if (st == TB_OK && opt->torch_links && !opt->books_only)
        st = load_books_store_torch_links(w, err);
    if (st == TB_OK && opt->shard_count)
        st = load_shards_write(w, opt, R->src, R->units, R->nunits, R->claim, &R->sr, err);
    if (st != TB_OK)
        return st;
    return load_books_warnings(w, &R->wl, err);
}

/* The indexes built, the DB closed and renamed into place. */
static tb_status publish(load_run *R, tb_error *err)
{
    tb_status st = dbw_finish(R->w, &R->res->seconds_index, err);
    if (st != TB_OK)
        return st;
    dbw_destroy(R->w);
    R->w = NULL;
    if (rename(R->tmp, R->opt->output) != 0)
        return tb_error_at(err, TB_ERR_IO, R->opt->output, 0, 0, -1, "cannot write: %s", strerror(errno));
    tb_temp_unregister(R->tmp);
    free(R->tmp);
    R->tmp = NULL;
    return TB_OK;
}

/* What a load holds at its end, failed or not. */
static void run_free(load_run *R)
{
    for (size_t i = 0; i < R->nsrc; i++)
        free(R->src[i].path);
    free(R->src);
    for (size_t u = 0; u < R->nunits; u++)
        db_ranks_free(&R->units[u].dbr);
    free(R->units);
    free(R->claim);
    free(R->final);
    free(R->who);
    free_ignored(R->ignored, R->n_ignored);
    load_warn_log_free(&R->wl);
    load_shards_plan_free(&R->plan);
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

    load_run R = {.opt = opt, .res = res, .sr = {.t_start = dbw_now()},
                  .ids = {.next_task = 1, .next_op = 1, .next_overlap = 1, .next_flow_seq = 1}};
    R.wl.opt = opt;
    R.wl.res = res;
    R.wl.live = 1;
    input_set set;
    tb_status st = detect_inputs(opt->inputs, opt->n_inputs, &set, err);
    if (st != TB_OK)
        return st;
    if ((st = take_sources(&R, &set, err)) != TB_OK || (st = drop_same_files(&R, err)) != TB_OK)
        goto fail;
    for (size_t i = 0; i < R.nsrc; i++)
        R.src[i].gid = (int64_t)i + 1;
    R.sr.nsrc_all = R.nsrc;
    if ((st = plan_units(&R, err)) != TB_OK || (st = open_temp(&R, err)) != TB_OK)
        goto fail;

    double t_read = dbw_now();
    if ((st = read_units(&R, err)) != TB_OK)
        goto fail;
    double t_post = dbw_now();
    res->seconds_read = t_post - t_read;
    if (opt->phase)
        opt->phase(opt->ctx, "post-processing");
    if ((st = claim_ranks(&R, err)) != TB_OK || (st = write_books(&R, err)) != TB_OK)
        goto fail;
    res->seconds_post = dbw_now() - t_post;
    if (opt->phase)
        opt->phase(opt->ctx, "indexing");
    if ((st = publish(&R, err)) != TB_OK)
        goto fail;
    run_free(&R);
    return TB_OK;

fail:
    dbw_destroy(R.w);
    if (R.tmp) {
        unlink(R.tmp);
        tb_temp_unregister(R.tmp);
        free(R.tmp);
    }
    if (st == TB_OK)
        st = TB_ERR_INTERNAL;
    if (err->code == TB_OK)
        err->code = st;
    run_free(&R);
    return st;
}
