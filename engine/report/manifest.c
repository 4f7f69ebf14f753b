/* SPDX-License-Identifier: MIT */
/*
 * manifest.c - the one writer of tracebook_run.json (manifest.h), and what
 * reads an earlier run's back: its inputs and its spec and window
 * (tb_run_inputs, tb_run_spec_window), and a shard's figures joining the
 * record of its load (tb_shard_record).
 *
 * Every command that writes files describes them here: report and export
 * summary (report/job.c), compare and history report (nightly/), export db
 * --shard. The file is what tracebook's own scanner reads to pass over its
 * outputs (ingest/own_outputs.c), so every file a run wrote is listed under
 * a "files" key.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"
#include "report/manifest.h"
#include "scale/scale.h"
#include "tracebook/db.h"
#include "tracebook/load.h"
#include "tracebook/report.h"
#include "tracebook/version.h"

json_t *manifest_new(void)
{
    json_t *m = json_object();
    json_object_set_new(m, "tool", json_string("tracebook"));
    json_object_set_new(m, "version", json_string(tb_version()));
    return m;
}

tb_status manifest_write(const char *dir, json_t *m, const file_ids *ids, char *path, size_t n, tb_error *err)
{
    char at[PATH_MAX + 32];
    snprintf(at, sizeof at, "%s/tracebook_run.json", dir);
    if (path)
        snprintf(path, n, "%s", at);
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    size_t tl = strlen(text);
    char *withnl = realloc(text, tl + 2);
    if (!withnl) {
        free(text);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    withnl[tl] = '\n';
    withnl[tl + 1] = 0;
    tb_status st = ids ? file_ids_check(ids, at, err) : TB_OK;
    if (st == TB_OK)
        st = json_write_file(at, withnl, err);
    free(withnl);
    return st;
}

json_t *manifest_load(const char *dir, json_error_t *je)
{
    char at[PATH_MAX + 32];
    snprintf(at, sizeof at, "%s/tracebook_run.json", dir);
    /* run metadata is a regular file: reading a FIFO would wait for a writer */
    struct stat sb;
    if (stat(at, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (je) {
            memset(je, 0, sizeof *je);
            snprintf(je->text, sizeof je->text, "%s", "not a regular file");
        }
        return NULL;
    }
    return json_load_file(at, 0, je);
}

json_t *manifest_window(const tb_window *w, const char *label)
{
    if (!w->set)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "model_id", json_integer(w->model_id));
    json_object_set_new(o, "iteration_id", json_integer(w->iteration_id));
    json_object_set_new(o, "iteration_count", json_integer(w->iteration_count));
    if (label)
        json_object_set_new(o, "label", json_string(label));
    return o;
}

static void files_under(json_t *v, int in_files, json_t *set)
{
    const char *k;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, k, x)
            files_under(x, !strcmp(k, "files"), set);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) {
            if (in_files && json_is_string(x))
                json_object_set_new(set, json_string_value(x), json_true());
            else
                files_under(x, 0, set);
        }
    }
}

void manifest_files(json_t *v, json_t *set)
{
    files_under(v, 0, set);
}

json_t *manifest_still_listed(json_t *runs, json_t *now)
{
    json_t *kept = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        json_t *f = json_object();
        manifest_files(r, f);
        const char *k;
        json_t *x;
        int superseded = 1; /* a run that listed no file protects nothing */
        json_object_foreach(f, k, x)
            superseded &= json_object_get(now, k) != NULL;
        if (!superseded)
            json_array_append(kept, r);
        json_decref(f);
    }
    return kept;
}

void manifest_keep_earlier(json_t *m, const char *dir)
{
    json_t *old = manifest_load(dir, NULL);
    if (!json_is_object(old)) {
        json_decref(old);
        return;
    }
    json_t *now = json_object(), *cand = json_array();
    manifest_files(json_object_get(m, "reports"), now);
    json_t *prev = json_object_get(old, "earlier_runs");
    size_t i;
    json_t *r;
    if (json_is_array(prev))
        json_array_foreach(prev, i, r)
            json_array_append(cand, r);
    json_object_del(old, "earlier_runs");
    json_array_append(cand, old);
    json_t *runs = manifest_still_listed(cand, now);
    if (json_array_size(runs))
        json_object_set(m, "earlier_runs", runs);
    json_decref(runs);
    json_decref(cand);
    json_decref(now);
    json_decref(old);
}

/* ---- an earlier run's record -------------------------------------------- */

/* dir's tracebook_run.json, or an error naming it. */
static tb_status load_run(const char *dir, json_t **m, tb_error *err)
{
    json_error_t je;
    if ((*m = manifest_load(dir, &je)))
        return TB_OK;
    char at[PATH_MAX + 32];
    snprintf(at, sizeof at, "%s/tracebook_run.json", dir);
    return tb_error_at(err, TB_ERR_PARSE, at, je.line, je.column, -1, "%s", je.text);
}

/* dir's inputs (see tb_run_inputs): a NULL-terminated array. */
static tb_status folder_inputs(const char *dir, char ***out, size_t *n, tb_error *err)
{
    *out = NULL;
    *n = 0;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tracebook_run.json", dir);
    json_t *m = NULL;
    tb_status st = load_run(dir, &m, err);
    if (st)
        goto done;
    /* the DB the run kept beside its reports stands for its inputs (which may be gone) */
    const char *kept = json_string_value(json_object_get(m, "trace_db"));
    if (kept && !strchr(kept, '/')) {
        struct stat sb;
        size_t k = strlen(dir) + strlen(kept) + 2;
        char *p = malloc(k);
        if (!p || !(*out = calloc(2, sizeof **out))) {
            free(p);
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            goto done;
        }
        snprintf(p, k, "%s/%s", dir, kept);
        if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
            (*out)[(*n)++] = p;
            goto done;
        }
        free(p);
        free(*out);
        *out = NULL;
    }
    json_t *in = json_object_get(m, "inputs");
    if (!json_is_array(in) || json_array_size(in) == 0) {
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "no 'inputs' list: not the folder of a report run");
        goto done;
    }
    if (!(*out = calloc(json_array_size(in) + 1, sizeof **out))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(in); i++) {
        const char *s = json_string_value(json_array_get(in, i));
        if (!s) {
            st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "'inputs' entry %zu is not a string", i);
            goto done;
        }
        struct stat sb;
        char *p = NULL;
        /* as written (the earlier run's current directory, usually this one), else beside the folder */
        if (s[0] == '/' || stat(s, &sb) == 0) {
            p = strdup(s);
        } else {
            size_t k = strlen(dir) + strlen(s) + 2;
            if ((p = malloc(k)))
                snprintf(p, k, "%s/%s", dir, s);
        }
        if (!p) {
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            goto done;
        }
        (*out)[(*n)++] = p;
        /* gone (a nightly job deleted the raw profile): say what would have kept the run */
        if (stat(p, &sb) != 0) {
            int e = errno;
            st = tb_error_at(err, e == ENOENT ? TB_ERR_NOTFOUND : TB_ERR_IO, p, 0, 0, -1,
                             "cannot read: %s; the run's folder %s keeps no trace DB "
                             "(a report run with --keep-db keeps one, and its folder then stands alone)", strerror(e),
                             dir);
            goto done;
        }
    }
done:
    if (st) {
        for (size_t i = 0; i < *n; i++)
            free((*out)[i]);
        free(*out);
        *out = NULL;
        *n = 0;
    }
    json_decref(m);
    return st;
}

tb_status tb_run_inputs(const char *const *given, size_t n, char ***out, size_t *n_out, tb_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (n == 1 && tb_run_folder(given[0]))
        return folder_inputs(given[0], out, n_out, err);
    if (!(*out = calloc(n + 1, sizeof **out)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (; *n_out < n; (*n_out)++)
        if (!((*out)[*n_out] = strdup(given[*n_out]))) {
            tb_paths_free(*out);
            *out = NULL;
            *n_out = 0;
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    return TB_OK;
}

int tb_run_folder(const char *path)
{
    struct stat sb;
    char meta[PATH_MAX];
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return 0;
    snprintf(meta, sizeof meta, "%s/tracebook_run.json", path);
    if (stat(meta, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    return !tb_db_shard_folder(path);
}

int tb_run_folder_is(const char *path, const char *dir)
{
    char a[PATH_MAX], b[PATH_MAX];
    return tb_run_folder(path) && realpath(path, a) && realpath(dir, b) && !strcmp(a, b);
}

tb_status tb_run_spec_window(const char *dir, char **spec, tb_window *w, tb_error *err)
{
    *spec = NULL;
    memset(w, 0, sizeof *w);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tracebook_run.json", dir);
    json_t *m = NULL;
    tb_status st = load_run(dir, &m, err);
    if (st)
        goto done;
    const char *s = json_string_value(json_object_get(json_array_get(json_object_get(m, "specs"), 0), "path"));
    if (!s) {
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "no 'specs' list: not the folder of a report run");
        goto done;
    }
    if (!(*spec = strdup(s))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    json_t *win = json_object_get(m, "window");
    if (json_is_object(win)) {
        w->set = 1;
        w->model_id = json_integer_value(json_object_get(win, "model_id"));
        w->iteration_id = json_integer_value(json_object_get(win, "iteration_id"));
        w->iteration_count = json_integer_value(json_object_get(win, "iteration_count"));
    }
done:
    json_decref(m);
    return st;
}

/* ---- a shard of export db --shard ---------------------------------------- */

tb_status tb_shard_record(const char *shard_db, tb_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", shard_db);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    json_t *entry = NULL;
    int64_t count = 0;
    char *inputs = NULL;
    tb_status st = scale_shard_entry(shard_db, &entry, &count, &inputs, err);
    if (st != TB_OK)
        return st;
    /* the N shards of a load may finish at once: one at a time */
    int fd = out_dir_lock(dir, NULL, NULL);
    json_t *m = manifest_load(dir, NULL);
    json_t *in = json_array();
    for (char *p = inputs, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        json_array_append_new(in, nl ? json_stringn(p, (size_t)(nl - p)) : json_string(p));
        if (!nl)
            break;
    }
    /* another load's record (other inputs or count) is replaced, not mixed in */
    if (!json_is_object(m) || !json_equal(json_object_get(m, "inputs"), in) ||
        json_integer_value(json_object_get(m, "shard_count")) != count ||
        !json_is_array(json_object_get(m, "processes"))) {
        json_decref(m);
        m = manifest_new();
        json_object_set_new(m, "command", json_string("export db --shard"));
        json_object_set(m, "inputs", in);
        json_object_set_new(m, "shard_count", json_integer(count));
        json_object_set_new(m, "processes", json_array());
    }
    json_decref(in);
    json_t *list = json_object_get(m, "processes"), *sorted = json_array();
    int64_t me = json_integer_value(json_object_get(entry, "shard"));
    int placed = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) {
        int64_t k = json_integer_value(json_object_get(x, "shard"));
        if (k == me)
            continue;
        if (!placed && k > me) {
            json_array_append(sorted, entry);
            placed = 1;
        }
        json_array_append(sorted, x);
    }
    if (!placed)
        json_array_append(sorted, entry);
    json_object_set_new(m, "processes", sorted);
    st = manifest_write(dir, m, NULL, NULL, 0, err);
    if (fd >= 0)
        close(fd);
    json_decref(m);
    json_decref(entry);
    free(inputs);
    return st;
}
