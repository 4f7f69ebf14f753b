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
    shard_plan plan = {0};
    shard_run sr = {.t_start = dbw_now()};
    int merging = 0;

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

    for (size_t i = 0; i < nsrc; i++)
        src[i].gid = (int64_t)i + 1;
    sr.nsrc_all = nsrc;

    /* shard DBs alone: merged in the order of the load they are parts of */
    if (opt->shard_count && load_shards_all(src, nsrc)) {
        st = tb_error_at(err, TB_ERR_USAGE, src[0].path, 0, 0, -1,
                         "the inputs are shard DBs already: --shard splits the raw inputs");
        goto fail;
    }
    if (opt->books_only && !load_shards_all(src, nsrc)) {
        st = tb_error_at(err, TB_ERR_USAGE, nsrc ? src[0].path : opt->inputs[0], 0, 0, -1,
                         "not a shard DB: the bookkeeping alone is merged from shard DBs only");
        goto fail;
    }
    if (!opt->shard_count && load_shards_all(src, nsrc)) {
        merging = 1;
        if ((st = load_shards_plan(opt, &src, &nsrc, &units, &nunits, &nranks, &plan, &wl, err)) != TB_OK)
            goto fail;
        goto planned;
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
    /* a shard: only its part of the groups, which keep their rank numbers */
    if (opt->shard_count &&
        (st = load_shards_select(opt, src, &nsrc, units, &nunits, nranks, &sr, err)) != TB_OK)
        goto fail;

planned:
    ;

    /* temporary file beside the destination, renamed into place at the end */
    size_t tl = strlen(opt->output) + 128;
    tmp = malloc(tl);
    if (!tmp) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto fail;
    }
    /* what a killed run left beside the destination goes first */
    tempname_sweep_beside(opt->output);
    int fd = tempname_template(tmp, tl, opt->output) == 0 ? tempname_make(tmp, 0, NULL) : (errno = ENAMETOOLONG, -1);
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
        tb_temp_unregister(tmp);
        free(tmp);
        tmp = NULL;
        goto fail;
    }
    close(fd);
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
            units[u].id_start = ids;
            if ((st = load_unit(&L, &units[u], w, 0, dbw_sink(w), &ids, &wl, err)) != TB_OK)
                goto fail;
            units[u].id_end = ids;
            units[u].strings_end = dbw_strings_end(w);
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
    for (size_t r = 0; r < nranks; r++)
        claim[r] = -1;
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
    /* a merge of shards: what the ranks named, decided over all shards */
    for (size_t r = 0; merging && r < nranks; r++)
        claim[r] = plan.claim[r];
    if ((st = dbw_pair_staged_flows(w, err)) != TB_OK || (st = load_books_bind_h2d(w, err)) != TB_OK ||
        (st = load_books_bind_pmu(w, err)) != TB_OK)
        goto fail;
    if (opt->shard_count) {
        /* a shard keeps the numbers in input order: whether the ranks' own
         * ids replace them is decided over all the shards, by their merge */
        for (size_t r = 0; r < nranks; r++)
            final[r] = (int64_t)r;
    } else if ((st = load_books_apply_ranks(w, claim, who, src, nranks, final, &wl, err)) != TB_OK) {
        goto fail;
    }
    for (size_t i = 0; i < nsrc; i++)
        if (!src[i].cluster)
            src[i].rank = (int)final[src[i].rank];
    if (merging)
        st = load_shards_books(w, &plan, final, &ids, opt->books_only, err);
    else
        st = load_books_write(w, src, nsrc, sr.nsrc_all, units, nunits, final, ignored, n_ignored, opt, &ids, err);
    if (st == TB_OK && opt->shard_count)
        st = load_shards_write(w, opt, src, units, nunits, claim, &sr, err);
    if (st != TB_OK || (st = load_books_warnings(w, &wl, err)) != TB_OK)
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
    load_shards_plan_free(&plan);
    return st;
}
