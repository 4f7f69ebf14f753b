/* SPDX-License-Identifier: MIT */
/*
 * own_outputs.c - tracebook never reads its own outputs as inputs.
 *
 * Runs write beside their inputs: `export db` puts msprof_<timestamp>.db in
 * the profile's folder, and a report's -o may be an input folder. Scanning
 * that folder again must not load those files a second time. Two rules,
 * both file by file (msprof writes its own summaries into the same folders,
 * and those must still load):
 *
 * - every file that a tracebook_run.json lists as an output of its run is
 *   passed over, in the folder of that tracebook_run.json, and so is the
 *   metadata file itself;
 * - a tracebook DB (one that has TB_SOURCE), or a timeline that `export
 *   timeline` wrote (its first event names the inputs), found while
 *   scanning is passed over when a file it was made from is an input of
 *   this same run: it would count that file's events twice. Files are matched by base name, size and
 *   modification time, which survive a move of the whole folder. A folder of
 *   tracebook DBs alone loads them, and a DB named as a -dir of its own
 *   always loads.
 *
 * Each file passed over stays in the load's list of files not read, with
 * the reason, so TB_SOURCE and `info` show it.
 */
#define _GNU_SOURCE /* memmem */
#include "ingest/own_outputs.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/ask.h"
#include "db/sqlite_input.h"
#include "ingest/msprof_db.h"
#include "util/bytesrc.h"
#include "util/sort.h"

/* ---- tracebook_run.json ------------------------------------------------------ */

/* Adds every string of an array under a "files" key, at any depth. */
static int collect(json_t *v, int in_files, own_list *out, size_t *cap)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (collect(x, !strcmp(k, "files"), out, cap))
                return -1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (in_files && json_is_string(x)) {
                const char *s = json_string_value(x);
                if (!*s || strchr(s, '/'))
                    continue; /* outputs sit beside the metadata file */
                if (out->n == *cap) {
                    size_t nc = *cap ? *cap * 2 : 16;
                    char **nn = realloc(out->names, nc * sizeof *nn);
                    if (!nn)
                        return -1;
                    out->names = nn;
                    *cap = nc;
                }
                if (!(out->names[out->n] = strdup(s)))
                    return -1;
                out->n++;
            } else if (collect(x, 0, out, cap)) {
                return -1;
            }
        }
    }
    return 0;
}

int own_list_load(const char *dir, own_list *out)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/tracebook_run.json", dir) >= (int)sizeof path)
        return 0;
    struct stat sb;
    /* run metadata is small; a large file of that name is not one */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > 64 * 1024 * 1024)
        return 0;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!root)
        return 0;
    size_t cap = 0;
    int rc = 0;
    const char *tool = json_string_value(json_object_get(root, "tool"));
    if (tool && !strcmp(tool, "tracebook"))
        rc = collect(root, 0, out, &cap);
    json_decref(root);
    if (rc) {
        own_list_free(out);
        return -1;
    }
    /* a listing may name no file (a shards' folder: export db --shard) */
    if (out->n)
        qsort(out->names, out->n, sizeof *out->names, sort_cmp_str);
    return 0;
}

int own_list_has(const own_list *l, const char *name)
{
    return l->n && bsearch(&name, l->names, l->n, sizeof *l->names, sort_cmp_str) != NULL;
}

void own_list_free(own_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

/* ---- outputs derived from this run's inputs ------------------------------- */

/* A file's identity across moves: base name, size, modification time. */
typedef struct ident {
    const char *base;
    int64_t bytes, mtime_ns;
} ident;

/* What a candidate says it was made from: tracebook's DB or timeline. */
typedef struct origin {
    int own;             /* 1: tracebook wrote it */
    ident *src;          /* the inputs it was loaded from (names owned) */
    size_t n;
} origin;

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int cmp_ident(const void *a, const void *b)
{
    const ident *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->base, y->base);
}

static void origin_free(origin *o)
{
    for (size_t i = 0; i < o->n; i++)
        free((char *)o->src[i].base);
    free(o->src);
    memset(o, 0, sizeof *o);
}

static int origin_add(origin *o, const char *path, int64_t bytes, int64_t mtime_ns)
{
    ident *nv = realloc(o->src, (o->n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    o->src = nv;
    if (!(nv[o->n].base = strdup(base_of(path ? path : ""))))
        return -1;
    nv[o->n].bytes = bytes;
    nv[o->n].mtime_ns = mtime_ns;
    o->n++;
    return 0;
}

/* A tracebook DB (it has TB_SOURCE) and the files its TB_SOURCE lists;
 * *history = 1 for a history DB (history_info, no TB_SOURCE). */
static int db_origin(const char *path, origin *o, int *history)
{
    *history = 0;
    if (!msprof_db_is_db(path))
        return 0;
    sqlite_input s;
    tb_error ignored;
    if (sqlite_input_open(&s, path, &ignored) != TB_OK)
        return 0; /* the import says why */
    o->own = db_has_table(s.db, "main", "TB_SOURCE", 0) > 0;
    *history = !o->own && db_has_table(s.db, "main", "history_info", 0) > 0 &&
               db_has_table(s.db, "main", "night_cell", 0) > 0;
    sqlite3_stmt *q = NULL;
    int rc = 0;
    if (o->own &&
        sqlite3_prepare_v2(s.db,
                           "SELECT path, bytes, mtimeNs FROM TB_SOURCE"
                           " WHERE kind NOT IN ('ignored', 'skipped') AND path IS NOT NULL",
                           -1, &q, NULL) == SQLITE_OK)
        while (rc == 0 && sqlite3_step(q) == SQLITE_ROW)
            rc = origin_add(o, (const char *)sqlite3_column_text(q, 0), sqlite3_column_int64(q, 1),
                            sqlite3_column_int64(q, 2));
    sqlite3_finalize(q);
    sqlite_input_close(&s);
    return rc;
}

/*
 * A timeline that `export timeline` wrote starts with a `tracebook_export`
 * metadata event whose args list the inputs as [name, bytes, mtimeNs]
 * (export/timeline.c); earlier versions wrote it as the process_name
 * "tracebook export" of pid 0, which is still recognised. It is looked for
 * on the first lines only: the writer puts one event per line, that one
 * first.
 */
static int timeline_origin(const char *path, origin *o)
{
    tb_error ignored;
    bytesrc *src = bytesrc_open(path, &ignored);
    if (!src)
        return 0; /* the import says why */
    const char *head;
    size_t len = 0;
    int rc = 0;
    if (bytesrc_peek(src, 4096, &head, &len, &ignored) == 0) {
        const char *hit = memmem(head, len, "\"tracebook_export\"", 18);
        if (!hit)
            hit = memmem(head, len, "\"tracebook export\"", 18);
        const char *from = hit, *to = hit;
        while (from && from > head && from[-1] != '\n')
            from--;
        while (to && to < head + len && *to != '\n')
            to++;
        size_t n = hit ? (size_t)(to - from) : 0;
        while (n && (from[n - 1] == ',' || from[n - 1] == '\r' || from[n - 1] == ' '))
            n--;
        json_error_t je;
        json_t *ev = n ? json_loadb(from, n, 0, &je) : NULL;
        json_t *args = json_object_get(ev, "args");
        json_t *sources = json_object_get(args, "sources");
        const char *pname = json_string_value(json_object_get(ev, "name"));
        const char *aname = json_string_value(json_object_get(args, "name"));
        int marker = pname && (!strcmp(pname, "tracebook_export") ||
                               (aname && !strcmp(pname, "process_name") && !strcmp(aname, "tracebook export")));
        if (marker && json_is_array(sources)) {
            o->own = 1;
            size_t i;
            json_t *x;
            json_array_foreach(sources, i, x) {
                if (rc == 0 && json_is_string(json_array_get(x, 0)))
                    rc = origin_add(o, json_string_value(json_array_get(x, 0)),
                                    (int64_t)json_integer_value(json_array_get(x, 1)),
                                    (int64_t)json_integer_value(json_array_get(x, 2)));
            }
        }
        json_decref(ev);
    }
    bytesrc_close(src);
    return rc;
}

tb_status own_mark_derived(input_set *set, tb_error *err)
{
    size_t total = 0;
    for (size_t g = 0; g < set->n; g++)
        total += set->groups[g].n;
    ident *ids = malloc((total ? total : 1) * sizeof *ids);
    origin *orig = calloc(total ? total : 1, sizeof *orig);
    tb_status st = TB_OK;
    if (!ids || !orig) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* what each candidate is; the inputs that are not tracebook's own are
     * what such an output may have been made from */
    size_t k = 0, nid = 0;
    for (size_t g = 0; g < set->n; g++)
        for (size_t i = 0; i < set->groups[g].n; i++, k++) {
            input_file *f = &set->groups[g].files[i];
            struct stat sb;
            if (stat(f->path, &sb) != 0 || !S_ISREG(sb.st_mode))
                continue; /* a pipe is read once, by its importer */
            /* a DB named as a -dir of its own always loads (a history never);
             * a timeline named so needs no look */
            int history = 0;
            int rc = f->kind == IN_MSPROF_DB ? db_origin(f->path, &orig[k], &history)
                     : f->kind == IN_TRACE_JSON && !f->named ? timeline_origin(f->path, &orig[k])
                                                             : 0;
            if (rc) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                goto done;
            }
            if (history) {
                f->note = OWN_NOTE_HISTORY;
                continue;
            }
            f->own_db = f->kind == IN_MSPROF_DB ? orig[k].own : 0;
            if (orig[k].own)
                continue;
            ids[nid++] = (ident){.base = base_of(f->path), .bytes = (int64_t)sb.st_size,
                                 .mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec};
        }
    qsort(ids, nid, sizeof *ids, cmp_ident);
    k = 0;
    for (size_t g = 0; g < set->n; g++)
        for (size_t i = 0; i < set->groups[g].n; i++, k++) {
            input_file *f = &set->groups[g].files[i];
            int derived = 0;
            for (size_t j = 0; orig[k].own && !f->named && j < orig[k].n && !derived; j++)
                derived = bsearch(&orig[k].src[j], ids, nid, sizeof *ids, cmp_ident) != NULL;
            if (derived)
                f->note = f->kind == IN_MSPROF_DB ? OWN_NOTE_DERIVED : OWN_NOTE_TIMELINE;
        }
done:
    for (size_t i = 0; orig && i < total; i++)
        origin_free(&orig[i]);
    free(orig);
    free(ids);
    return st;
}
