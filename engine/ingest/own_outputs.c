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
 * - a tracebook DB (one that has TB_SOURCE) found while scanning is passed
 *   over when a file its TB_SOURCE lists is an input of this same run: the
 *   DB was loaded from it. Files are matched by base name, size and
 *   modification time, which survive a move of the whole folder. A folder of
 *   tracebook DBs alone loads them, and a DB named as a -dir of its own
 *   always loads.
 *
 * Each file passed over stays in the load's list of files not read, with
 * the reason, so TB_SOURCE and `info` show it.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/own_outputs.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/sqlite_input.h"
#include "ingest/msprof_db.h"

/* ---- tracebook_run.json ------------------------------------------------------ */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

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
    qsort(out->names, out->n, sizeof *out->names, cmp_name);
    return 0;
}

int own_list_has(const own_list *l, const char *name)
{
    return l->n && bsearch(&name, l->names, l->n, sizeof *l->names, cmp_name) != NULL;
}

void own_list_free(own_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

/* ---- DBs derived from this run's inputs ----------------------------------- */

/* A file's identity across moves: base name, size, modification time. */
typedef struct ident {
    const char *base;
    int64_t bytes, mtime_ns;
} ident;

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

/* 1 when path is a tracebook DB, and then whether one of its sources is in ids (*derived). */
static int tracebook_db_from(const char *path, const ident *ids, size_t n, int *derived)
{
    *derived = 0;
    if (!msprof_db_is_db(path))
        return 0;
    sqlite_input s;
    tb_error ignored;
    if (sqlite_input_open(&s, path, &ignored) != TB_OK)
        return 0; /* the import says why */
    int own = sqlite_input_has_table(s.db, "TB_SOURCE");
    sqlite3_stmt *q = NULL;
    if (own && n &&
        sqlite3_prepare_v2(s.db,
                           "SELECT path, bytes, mtimeNs FROM TB_SOURCE"
                           " WHERE kind NOT IN ('ignored', 'skipped') AND path IS NOT NULL",
                           -1, &q, NULL) == SQLITE_OK) {
        while (!*derived && sqlite3_step(q) == SQLITE_ROW) {
            const char *p = (const char *)sqlite3_column_text(q, 0);
            ident key = {.base = base_of(p ? p : ""), .bytes = sqlite3_column_int64(q, 1),
                         .mtime_ns = sqlite3_column_int64(q, 2)};
            *derived = bsearch(&key, ids, n, sizeof *ids, cmp_ident) != NULL;
        }
    }
    sqlite3_finalize(q);
    sqlite_input_close(&s);
    return own;
}

tb_status own_drop_derived(input_set *set, tb_error *err)
{
    size_t total = 0, nid = 0;
    for (size_t g = 0; g < set->n; g++)
        total += set->groups[g].n;
    ident *ids = malloc((total ? total : 1) * sizeof *ids);
    if (!ids)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    /* every input but the tracebook DBs: what such a DB may have been loaded from */
    for (size_t g = 0; g < set->n; g++)
        for (size_t i = 0; i < set->groups[g].n; i++) {
            input_file *f = &set->groups[g].files[i];
            struct stat sb;
            if (stat(f->path, &sb) != 0)
                continue;
            f->own_db = -1;
            if (f->kind == IN_MSPROF_DB) {
                int derived;
                f->own_db = tracebook_db_from(f->path, NULL, 0, &derived);
                if (f->own_db)
                    continue;
            }
            ids[nid++] = (ident){.base = base_of(f->path), .bytes = (int64_t)sb.st_size,
                                 .mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec};
        }
    qsort(ids, nid, sizeof *ids, cmp_ident);
    tb_status st = TB_OK;
    for (size_t g = 0; g < set->n && st == TB_OK; g++) {
        rank_group *rg = &set->groups[g];
        for (size_t i = 0; i < rg->n;) {
            input_file *f = &rg->files[i];
            int derived = 0;
            if (f->kind == IN_MSPROF_DB && f->own_db == 1 && !f->named)
                tracebook_db_from(f->path, ids, nid, &derived);
            if (!derived) {
                i++;
                continue;
            }
            if (detect_add_ignored(set, f->path, OWN_NOTE_DERIVED)) {
                st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
            free(f->path);
            memmove(&rg->files[i], &rg->files[i + 1], (rg->n - i - 1) * sizeof *rg->files);
            rg->n--;
        }
    }
    free(ids);
    return st;
}
