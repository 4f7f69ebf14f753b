/* SPDX-License-Identifier: MIT */
/*
 * detect.c - finds the inputs under each -dir and groups them by rank.
 *
 * Kinds are recognised by name and by the first bytes (a trace is a JSON
 * array of objects or an object with "traceEvents"; a DB starts with the
 * SQLite header; a topsprof listing by its class headers). JSON files that
 * sit beside traces but are not traces (communication.json,
 * profiler_info_N.json, ...) are not taken for traces; those with an importer
 * of their own (communication.json, communication_matrix.json, their
 * cluster_* forms, communication_group.json, profiler_metadata.json: see
 * npu_json.c) are known by name before the trace test. Files nobody reads are
 * kept in a list so that `info` can show them. Raw data directories of an
 * msprof collection (device_N/data, host/data) are not searched.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/detect.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/msprof_db.h"
#include "ingest/npu_json.h"
#include "ingest/npu_text.h"
#include "ingest/own_outputs.h"
#include "ingest/topsprof.h"
#include "util/bytesrc.h"
#include "util/str.h"

#define MAX_DEPTH 5
#define SNIFF_BYTES ((size_t)64 * 1024) /* how much of a .json file the trace test looks at */

/* JSON files beside traces that are not traces (formats.md). */
static int known_non_trace(const char *name)
{
    static const char *const pre[] = {"communication", "profiler_info", "profiler_metadata", "cluster_",
                                      "reports_sample_config", "msprof_slice.json", "step_trace_",
                                      "parallel_group", "metadata"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (str_starts(name, pre[i]))
            return 1;
    return 0;
}

/* Looks at the first bytes: a trace is an array of objects or has "traceEvents".
 * Returns 1 or 0, or -1 when the file cannot be read (errno set). */
static int looks_like_trace(const char *path)
{
    bytesrc *src = bytesrc_open(path, NULL);
    if (!src)
        return -1;
    const char *p;
    size_t n;
    tb_error err;
    int rc = bytesrc_peek(src, SNIFF_BYTES, &p, &n, &err);
    if (rc < 0 && err.code == TB_ERR_TRUNCATED)
        rc = 0; /* a gzip trace cut short: its head still tells */
    if (rc == 0 && n > 0) {
        if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3;
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
            p++;
        if (*p == '[') {
            p++;
            while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
                p++;
            rc = *p == '{' || *p == ']';
        } else {
            rc = *p == '{' && (strstr(p, "\"traceEvents\"") || strstr(p, "\"ph\""));
        }
    }
    if (rc < 0 && err.code != TB_ERR_IO)
        errno = EIO; /* corrupt compressed data */
    bytesrc_close(src);
    return rc;
}

/* A directory holding one rank's outputs. */
static int is_rank_root(const char *dir, const char *name)
{
    if (str_starts(name, "PROF_") || str_ends(name, "_ascend_pt"))
        return 1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d)) != NULL)
        found = !strcmp(de->d_name, "ASCEND_PROFILER_OUTPUT") || !strcmp(de->d_name, "mindstudio_profiler_output") ||
                (str_starts(de->d_name, "profiler_info_") && str_ends(de->d_name, ".json"));
    closedir(d);
    return found;
}

/* profiler_info_<N>.json in dir gives the rank N. */
static int64_t rank_from_profiler_info(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int64_t rank = -1;
    while ((de = readdir(d)) != NULL) {
        if (!str_starts(de->d_name, "profiler_info_") || !str_ends(de->d_name, ".json"))
            continue;
        char *end;
        errno = 0;
        long long r = strtoll(de->d_name + 14, &end, 10);
        if (end != de->d_name + 14 && errno == 0 && strcmp(end, ".json") == 0 && r >= 0)
            rank = r;
    }
    closedir(d);
    return rank;
}

static int add_file(input_file **v, size_t *n, size_t *cap, const char *path, int kind)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        input_file *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    memset(&(*v)[*n], 0, sizeof **v);
    if (!((*v)[*n].path = strdup(path)))
        return -1;
    (*v)[*n].kind = kind;
    (*n)++;
    return 0;
}

int detect_add_ignored(input_set *set, const char *path, const char *note)
{
    if (add_file(&set->ignored, &set->n_ignored, &set->cap_ignored, path, IN_IGNORED))
        return -1;
    set->ignored[set->n_ignored - 1].note = note;
    return 0;
}

static rank_group *add_group(input_set *set, const char *root)
{
    if (set->n == set->cap) {
        size_t nc = set->cap ? set->cap * 2 : 8;
        rank_group *ng = realloc(set->groups, nc * sizeof *ng);
        if (!ng)
            return NULL;
        set->groups = ng;
        set->cap = nc;
    }
    rank_group *g = &set->groups[set->n];
    memset(g, 0, sizeof *g);
    g->rank_hint = -1;
    if (!(g->root = strdup(root)))
        return NULL;
    set->n++;
    return g;
}

/* Kind of a regular file: -1 when it cannot be read. */
static int classify(const char *path, const char *name)
{
    if ((str_ends(name, ".db") || str_ends(name, ".txt") || str_ends(name, ".log") || str_ends(name, ".csv")) &&
        access(path, R_OK) != 0)
        return -1;
    if (str_ends(name, ".db")) {
        if (!strcmp(name, "analysis.db")) /* torch_npu's step trace DB: not an msprof DB */
            return msprof_db_is_db(path) ? IN_ANALYSIS_DB : IN_IGNORED;
        return msprof_db_is_db(path) ? IN_MSPROF_DB : IN_IGNORED;
    }
    /* before the trace test below, which passes over these names (known_non_trace) */
    if (npu_json_is_known(name))
        return IN_NPU_JSON;
    if ((str_ends(name, ".json") || str_ends(name, ".json.gz")) && !known_non_trace(name)) {
        int t = looks_like_trace(path);
        return t < 0 ? -1 : t ? IN_TRACE_JSON : IN_IGNORED;
    }
    if (npu_text_is_known(path))
        return IN_NPU_CSV;
    if (str_ends(name, ".txt") || str_ends(name, ".log") || str_ends(name, ".csv"))
        return tops_is_listing(path) ? IN_TOPSPROF : IN_IGNORED;
    return IN_IGNORED;
}

typedef struct walker {
    input_set *set;
    rank_group *group; /* the rank root being walked, or NULL */
    char bad[PATH_MAX];
} walker;

/* The names in dir but the hidden ones, sorted, so that ranks and files
 * come in a stable order. 0; 1 when dir cannot be opened; -1 when out of
 * memory (what was read is in *namesp all the same, to free). */
static int read_names(const char *dir, char ***namesp, size_t *np)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *namesp = names;
    *np = n;
    return rc;
}

static int walk(walker *w, const char *dir, int depth);

/* A subfolder, walked in turn (not past MAX_DEPTH, nor into msprof's data
 * and log); a rank root met outside any opens its group. */
static int walk_subdir(walker *w, const char *path, const char *name, int depth)
{
    if (depth >= MAX_DEPTH || !strcmp(name, "data") || !strcmp(name, "log"))
        return 0;
    rank_group *outer = w->group;
    if (!w->group && is_rank_root(path, name)) {
        if (!(w->group = add_group(w->set, path)))
            return -1;
        w->group->rank_hint = rank_from_profiler_info(path);
    }
    int rc = walk(w, path, depth + 1);
    w->group = outer;
    return rc;
}

/* A file to read, into its group: that of the rank root being walked; the
 * one cluster group for results about the whole cluster, which belong to no
 * rank; else a group of its own. */
static int add_input(walker *w, const char *dir, const char *path, const char *name, int kind)
{
    rank_group *g = w->group;
    if (!g && (!strncmp(name, "cluster_", 8) || !strcmp(name, "communication_group.json"))) {
        if (w->set->cluster_index < 0) {
            size_t idx = w->set->n;
            if (!add_group(w->set, dir))
                return -1;
            w->set->groups[idx].cluster = 1;
            w->set->cluster_index = (long)idx;
        }
        g = &w->set->groups[w->set->cluster_index];
    }
    if (!g && !(g = add_group(w->set, path)))
        return -1;
    return add_file(&g->files, &g->n, &g->cap, path, kind) ? -1 : 0;
}

/* A regular file: what a tracebook run wrote (own_outputs.c) is listed as
 * not read; one that cannot be read stops the walk (-2, w->bad names it);
 * one of no kind tracebook reads is listed as ignored; the rest are inputs. */
static int walk_file(walker *w, const own_list *own, const char *dir, const char *path, const char *name)
{
    if (own->n && (own_list_has(own, name) || !strcmp(name, "tracebook_run.json")))
        return detect_add_ignored(w->set, path, own_list_has(own, name) ? OWN_NOTE_RUN_FILE : OWN_NOTE_RUN_META) ? -1
                                                                                                                 : 0;
    int kind = classify(path, name);
    if (kind < 0) {
        snprintf(w->bad, sizeof w->bad, "%s", path);
        return -2;
    }
    if (kind == IN_IGNORED)
        return add_file(&w->set->ignored, &w->set->n_ignored, &w->set->cap_ignored, path, kind) ? -1 : 0;
    return add_input(w, dir, path, name, kind);
}

static int walk(walker *w, const char *dir, int depth)
{
    char **names = NULL;
    size_t n = 0;
    int rc = read_names(dir, &names, &n);
    if (rc > 0)
        return 0;
    own_list own = {0};
    if (rc == 0 && own_list_load(dir, &own))
        rc = -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            rc = walk_subdir(w, path, names[i], depth);
        else if (S_ISREG(st.st_mode))
            rc = walk_file(w, &own, dir, path, names[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    own_list_free(&own);
    return rc;
}

static int by_kind(const void *a, const void *b)
{
    const input_file *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    /* msprof's task_time repeats op_summary's tasks: after the other CSVs, so they win */
    if (x->kind == IN_NPU_CSV && npu_text_order(x->path) != npu_text_order(y->path))
        return npu_text_order(x->path) - npu_text_order(y->path);
    return strcmp(x->path, y->path);
}

/* Removes the groups from index `from` on that hold no file. */
static void drop_empty_groups(input_set *set, size_t from)
{
    for (size_t g = from; g < set->n;) {
        if (set->groups[g].n == 0) {
            free(set->groups[g].root);
            free(set->groups[g].files);
            memmove(&set->groups[g], &set->groups[g + 1], (set->n - g - 1) * sizeof *set->groups);
            set->n--;
        } else {
            g++;
        }
    }
}

/* The length of path's folder part (up to its last '/'; 0 when it has none). */
static size_t dir_len(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? (size_t)(s - path) : 0;
}

/* 1 when file f is a torch_npu profiler DB (ascend_pytorch_profiler[_<rank>].db)
 * in the folder of path (its first dn bytes). */
static int torch_npu_db_beside(const input_file *f, const char *path, size_t dn)
{
    const char *base = f->path + dir_len(f->path) + (strchr(f->path, '/') ? 1 : 0);
    return f->kind == IN_MSPROF_DB && dir_len(f->path) == dn && !strncmp(f->path, path, dn) &&
           str_starts(base, "ascend_pytorch_profiler");
}

/* An analysis.db found outside any rank root is a group of its own; torch_npu
 * writes it beside its rank's ascend_pytorch_profiler_<rank>.db, and
 * msprof-analyze reads it as that rank's: it joins the group of the one
 * torch_npu DB in its folder (none or several: it stays on its own). Groups
 * left empty are dropped by the caller. */
static int join_analysis_dbs(input_set *set)
{
    for (size_t g = 0; g < set->n; g++) {
        rank_group *a = &set->groups[g];
        if (a->cluster || a->n != 1 || a->files[0].kind != IN_ANALYSIS_DB || a->files[0].named ||
            strcmp(a->root, a->files[0].path) != 0)
            continue;
        const char *path = a->files[0].path;
        size_t dn = dir_len(path);
        rank_group *to = NULL;
        int found = 0;
        for (size_t h = 0; h < set->n; h++)
            for (size_t i = 0; h != g && !set->groups[h].cluster && i < set->groups[h].n; i++)
                if (torch_npu_db_beside(&set->groups[h].files[i], path, dn)) {
                    found++;
                    to = &set->groups[h];
                    break;
                }
        if (found != 1)
            continue;
        if (to->n == to->cap) {
            size_t nc = to->cap ? to->cap * 2 : 8;
            input_file *nv = realloc(to->files, nc * sizeof *nv);
            if (!nv)
                return -1;
            to->files = nv;
            to->cap = nc;
        }
        to->files[to->n++] = a->files[0]; /* the path moves with it */
        a->n = 0;
    }
    return 0;
}

tb_status detect_inputs(const char *const *paths, size_t n, input_set *out, tb_error *err)
{
    memset(out, 0, sizeof *out);
    out->cluster_index = -1;
    walker w = {.set = out};
    for (size_t i = 0; i < n; i++) {
        const char *p = paths[i];
        struct stat st;
        if (stat(p, &st) != 0) {
            tb_error_at(err, errno == ENOENT ? TB_ERR_NOTFOUND : TB_ERR_IO, p, 0, 0, -1, "cannot read: %s",
                        strerror(errno));
            goto fail;
        }
        size_t before = out->n;
        out->cluster_index = -1; /* each -dir has its own cluster group */
        if (!S_ISDIR(st.st_mode)) {
            const char *base = strrchr(p, '/');
            base = base ? base + 1 : p;
            /* a file named on the command line is read as a trace unless it is a DB, a
             * listing or a JSON file known by name (communication.json, ...); another JSON
             * name or a pipe is taken at its word, without reading ahead */
            int kind = IN_TRACE_JSON;
            if (S_ISREG(st.st_mode) &&
                ((!str_ends(base, ".json") && !str_ends(base, ".json.gz")) || npu_json_is_known(base))) {
                kind = classify(p, base);
                if (kind < 0) {
                    tb_error_at(err, TB_ERR_IO, p, 0, 0, -1, "cannot read: %s", strerror(errno ? errno : EIO));
                    goto fail;
                }
                /* a .db that is no SQLite file is reported as such by the DB reader */
                if (kind == IN_IGNORED)
                    kind = str_ends(base, ".db") ? IN_MSPROF_DB : IN_TRACE_JSON;
            }
            rank_group *g = add_group(out, p);
            if (!g || add_file(&g->files, &g->n, &g->cap, p, kind))
                goto nomem;
            g->files[g->n - 1].named = 1;
            continue;
        }
        /* the -dir itself may be one rank's root */
        const char *base = strrchr(p, '/');
        base = base && base[1] ? base + 1 : p;
        w.group = NULL;
        if (is_rank_root(p, base) || !strcmp(base, "ASCEND_PROFILER_OUTPUT") ||
            !strcmp(base, "mindstudio_profiler_output")) {
            if (!(w.group = add_group(out, p)))
                goto nomem;
            w.group->rank_hint = rank_from_profiler_info(p);
        }
        int rc = walk(&w, p, 0);
        w.group = NULL;
        if (rc == -2) {
            tb_error_at(err, TB_ERR_IO, w.bad, 0, 0, -1, "cannot read: %s", strerror(errno ? errno : EIO));
            goto fail;
        }
        if (rc)
            goto nomem;
        /* drop rank roots that held nothing readable */
        drop_empty_groups(out, before);
        if (out->n == before) {
            tb_error_at(err, TB_ERR_NOTFOUND, p, 0, 0, -1,
                        "no input found (looked for msprof/torch_npu timelines and DBs, Kineto traces, "
                        "topsprof listings)");
            goto fail;
        }
    }
    /* an analysis.db goes with the torch_npu DB of its rank */
    if (join_analysis_dbs(out))
        goto nomem;
    drop_empty_groups(out, 0);
    /* a tracebook DB or timeline made from inputs of this run would count them twice */
    if (own_mark_derived(out, err) != TB_OK)
        goto fail;
    for (size_t g = 0; g < out->n; g++) {
        rank_group *rg = &out->groups[g];
        for (size_t i = 0; i < rg->n;) {
            if (!rg->files[i].note) {
                i++;
                continue;
            }
            if (detect_add_ignored(out, rg->files[i].path, rg->files[i].note))
                goto nomem;
            free(rg->files[i].path);
            memmove(&rg->files[i], &rg->files[i + 1], (rg->n - i - 1) * sizeof *rg->files);
            rg->n--;
        }
    }
    drop_empty_groups(out, 0);
    for (size_t g = 0; g < out->n; g++)
        qsort(out->groups[g].files, out->groups[g].n, sizeof *out->groups[g].files, by_kind);
    return TB_OK;
nomem:
    tb_error_set(err, TB_ERR_NOMEM, "out of memory");
fail:
    input_set_free(out);
    return err->code;
}

void input_set_free(input_set *set)
{
    for (size_t g = 0; g < set->n; g++) {
        for (size_t i = 0; i < set->groups[g].n; i++)
            free(set->groups[g].files[i].path);
        free(set->groups[g].files);
        free(set->groups[g].root);
    }
    free(set->groups);
    for (size_t i = 0; i < set->n_ignored; i++)
        free(set->ignored[i].path);
    free(set->ignored);
    memset(set, 0, sizeof *set);
}
