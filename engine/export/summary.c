/* SPDX-License-Identifier: MIT */
/*
 * summary.c - `export summary`: msprof's and torch_npu's summary files,
 * one set per rank, in the layout each wrote them.
 *
 * Each rank is placed by the input it came from (TB_RANK.source): a rank of
 * an msprof collection (a PROF_* folder, an msprof_*.db or msprof_*.json)
 * gets `<PROF_XXX>/mindstudio_profiler_output/<name>_<timestamp>.csv`,
 * a torch_npu rank (a *_ascend_pt folder, ASCEND_PROFILER_OUTPUT, a
 * trace_view.json, torch_npu's CSVs) `<...>_ascend_pt/ASCEND_PROFILER_OUTPUT/
 * <name>.csv`. With an output directory the same folders are made under it.
 * The files are the built-in summary reports (reports/msprof_summaries.yaml,
 * reports/msprof_db_summaries.yaml, reports/torch_npu_summaries.yaml and
 * the statistics of kernels.yaml, api.yaml, communication.yaml,
 * step_trace.yaml), run by the report job one
 * rank at a time through a rank filter of the window (window.c), so a
 * rank's files hold exactly what a run over that rank alone writes and no
 * Rank ID column. With merge, every rank goes into one folder under the
 * output directory, in one run whose rows carry their Rank ID.
 *
 * A torch_npu rank that was loaded from its own summary CSVs gets them back
 * as it held them (write_kept: the header line and the rows the load kept in
 * TB_SOURCE_CSV; summary_kept.c writes them byte for byte as CSV, keyed by
 * their header as JSON, and as a sheet the report run puts in the workbook),
 * for the whole run or a window of steps; with --spec, for each report that
 * is one of the summaries unchanged (as_read_file). The reports then run
 * for the summaries it did not hold, and the README lists the rank's files
 * not written, with the reason. An msprof
 * rank's README lists the tables of its DB with rows that no file is
 * written from (summary_db.c).
 *
 * A torch_npu rank also gets communication.json and communication_matrix.json
 * back from the tables its own files of them were read into (write_comm),
 * with torch_npu's Total Op Info sums.
 *
 * Every folder written gets a tracebook_run.json listing its files (the
 * report job's, which keeps an earlier listing of the folder under
 * "earlier_runs"), so a later scan of the folder never reads them back as
 * inputs, and a README.txt naming the files and the settings.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/open.h"
#include "export/finish.h"
#include "export/summary_comm.h"
#include "export/summary_db.h"
#include "export/summary_kept.h"
#include "output/output.h"
#include "query/file_ids.h"
#include "query/window.h"
#include "report/manifest.h"
#include "report/report.h"
#include "scale/scale.h"
#include "session/session.h"
#include "spec/spec.h"
#include "tracebook/db.h"
#include "tracebook/export.h"
#include "tracebook/report.h"
#include "tracebook/version.h"
#include "util/dirs.h"

/* The summaries of each layout, in msprof's and torch_npu's order. */
static const char msprof_yaml[] =
    "tracebook: 1\n"
    "reports:\n"
    "  - use: op_summary\n"
    "  - use: op_statistic\n"
    "  - use: api_statistic\n"
    "  - use: task_time\n"
    "  - use: communication_statistic\n"
    "  - use: step_trace\n"
    "  - use: npu_mem\n"
    "  - use: npu_module_mem\n"
    "  - use: msprof_tx\n"
    "  - use: hbm\n"
    "  - use: ddr\n"
    "  - use: llc_read_write\n"
    "  - use: hccs\n"
    "  - use: pcie\n"
    "  - use: ub\n"
    "  - use: msprof_memory_record\n"
    "    id: memory_record\n"
    "  - use: msprof_operator_memory\n"
    "    id: operator_memory\n"
    "  - use: os_runtime_statistic\n"
    "  - use: host_cpu_usage\n"
    "  - use: host_disk_usage\n"
    "  - use: host_network_usage\n"
    "  - use: ai_core_utilization\n"
    "  - use: ai_vector_core_utilization\n"
    "  - use: nic\n"
    "  - use: roce\n"
    "  - use: ccu_mission\n";

/* torch_npu's summaries, in its order: the report each file comes from.
 * A rank that holds its own file of one of them (TB_SOURCE_CSV) gets that
 * file back as read instead (write_kept). */
static const struct {
    const char *use, *id;
} torch_npu_reports[] = {
    {"kernel_details", NULL}, {"operator_details", NULL}, {"step_trace_time", NULL}, {"memory_record", NULL},
    {"operator_memory", NULL}, {"npu_module_mem_torch_npu", "npu_module_mem"}, {"op_statistic", NULL},
    {"api_statistic", NULL},
};
#define N_TORCH_NPU_REPORTS (sizeof torch_npu_reports / sizeof torch_npu_reports[0])

/* The spec text of torch_npu's summaries less those whose bit is set in
 * skip (bit i: torch_npu_reports[i]), each with outputs when not NULL
 * ("csv, json"), into buf; the number of reports in it.
 * loaded_steps: step_trace_time is the step trace as loaded (an
 * analysis.db's), not the one computed from the tasks. */
static size_t torch_npu_yaml(unsigned skip, int loaded_steps, const char *outputs, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "tracebook: 1\nreports:\n"), count = 0;
    for (size_t i = 0; i < N_TORCH_NPU_REPORTS && k < n; i++) {
        if (skip & (1u << i))
            continue;
        count++;
        const char *use = torch_npu_reports[i].use, *id = torch_npu_reports[i].id;
        if (loaded_steps && !strcmp(use, "step_trace_time")) {
            use = "step_trace_time_as_loaded";
            id = "step_trace_time";
        }
        k += (size_t)snprintf(buf + k, n - k, "  - use: %s\n", use);
        if (id && k < n)
            k += (size_t)snprintf(buf + k, n - k, "    id: %s\n", id);
        if (outputs && k < n)
            k += (size_t)snprintf(buf + k, n - k, "    outputs: [%s]\n", outputs);
    }
    return count;
}

enum { LAYOUT_MSPROF, LAYOUT_TORCH_NPU };

typedef struct rank_place {
    int64_t rank;
    int layout;
    char folder[4096];   /* where its files go */
    char tag[96];        /* file tag: msprof's timestamp, "rank<R>" when folders are shared */
    int too_long;        /* the folder's path did not fit */
} rank_place;

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Places one rank from its input path src: layout and folder (under out_dir when given). */
static void place(const char *src, const char *out_dir, rank_place *p)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", src ? src : "");
    /* the last PROF_* or *_ascend_pt component, or an output folder */
    size_t root = 0, n = strlen(path), start = 0;
    int kind = -1, is_out = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && path[i] != '/')
            continue;
        size_t len = i - start;
        const char *c = path + start;
        if (i < n && len > 5 && !strncmp(c, "PROF_", 5))
            kind = LAYOUT_MSPROF, root = i, is_out = 0;
        else if (i < n && ends_with(c, len, "_ascend_pt"))
            kind = LAYOUT_TORCH_NPU, root = i, is_out = 0;
        else if (i < n && len == 22 && !strncmp(c, "ASCEND_PROFILER_OUTPUT", 22))
            kind = LAYOUT_TORCH_NPU, root = i, is_out = 1;
        else if (i < n && len == 26 && !strncmp(c, "mindstudio_profiler_output", 26))
            kind = LAYOUT_MSPROF, root = i, is_out = 1;
        start = i + 1;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (kind < 0) {
        /* a file on its own: torch_npu's names, else msprof's */
        kind = (!strcmp(base, "trace_view.json") || !strncmp(base, "ascend_pytorch_profiler", 23) ||
                !strcmp(base, "analysis.db") ||
                ends_with(base, strlen(base), ".csv"))
                   ? LAYOUT_TORCH_NPU
                   : LAYOUT_MSPROF;
        root = base > path ? (size_t)(base - path - 1) : 0;
    }
    p->layout = kind;
    const char *sub = kind == LAYOUT_MSPROF ? "mindstudio_profiler_output" : "ASCEND_PROFILER_OUTPUT";
    /* the rank's own folder: path[0, root) */
    char rootdir[4096];
    snprintf(rootdir, sizeof rootdir, "%.*s", (int)root, path);
    if (is_out) { /* root is the output folder itself: its parent is the rank's folder */
        char *s = strrchr(rootdir, '/');
        if (s)
            *s = 0;
        else
            rootdir[0] = 0;
    }
    int k;
    if (!out_dir) {
        k = snprintf(p->folder, sizeof p->folder, "%s/%s", rootdir[0] ? rootdir : (path[0] == '/' ? "" : "."), sub);
        p->too_long = k < 0 || (size_t)k >= sizeof p->folder;
        return;
    }
    /* -o DIR: DIR/<the rank's folder name when it has one>/<sub> */
    const char *name = strrchr(rootdir, '/');
    name = name ? name + 1 : rootdir;
    int named = (kind == LAYOUT_MSPROF && !strncmp(name, "PROF_", 5)) ||
                (kind == LAYOUT_TORCH_NPU && ends_with(name, strlen(name), "_ascend_pt"));
    if (named)
        k = snprintf(p->folder, sizeof p->folder, "%s/%s/%s", out_dir, name, sub);
    else
        k = snprintf(p->folder, sizeof p->folder, "%s/%s", out_dir, sub);
    p->too_long = k < 0 || (size_t)k >= sizeof p->folder;
}

/* The export's options with what the session holds: its DB, connection,
 * window and inputs. */
typedef struct sum_opts {
    const tb_summary_options *o;
    tb_session *s;
    sqlite3 *db;
    const char *db_path;
    const tb_window *window;
    const char *const *inputs;
    size_t n_inputs;
    const char *label;   /* the window's label in file names, "" without one */
} sum_opts;

/* The ranks of the DB with the input each came from (new; free with free()). */
static tb_status list_ranks(sqlite3 *db, const char *db_path, const char *out_dir, rank_place **out, size_t *n,
                            tb_error *err)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    tb_status rc = TB_OK;
    if (sqlite3_prepare_v2(db, "SELECT rankId, min(source) FROM TB_RANK GROUP BY rankId ORDER BY rankId", -1, &st,
                           NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT DISTINCT rankId, NULL FROM TASK ORDER BY rankId", -1, &st, NULL) != SQLITE_OK) {
        rc = tb_error_at(err, TB_ERR_PARSE, db_path, 0, 0, -1, "not a unified DB: %s", sqlite3_errmsg(db));
        goto done;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            rank_place *v = realloc(*out, cap * sizeof *v);
            if (!v) {
                rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                goto done;
            }
            *out = v;
        }
        rank_place *p = &(*out)[(*n)++];
        memset(p, 0, sizeof *p);
        p->rank = sqlite3_column_int64(st, 0);
        place((const char *)sqlite3_column_text(st, 1), out_dir, p);
        if (p->too_long) {
            rc = tb_error_set(err, TB_ERR_USAGE, "rank %" PRId64 ": the output folder's path is too long", p->rank);
            goto done;
        }
    }
done:
    sqlite3_finalize(st);
    return rc;
}

typedef struct sum_state {
    const sum_opts *opt;
    json_t *files;   /* base names written into the current folder */
    size_t written;
} sum_state;

static void on_written(void *ctx, const char *path)
{
    sum_state *s = ctx;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strcmp(b, "tracebook_run.json") != 0)
        json_array_append_new(s->files, json_string(b));
    s->written++;
    if (s->opt->o->written)
        s->opt->o->written(s->opt->o->ctx, path);
}

static void on_note(void *ctx, const char *msg)
{
    sum_state *s = ctx;
    if (s->opt->o->note)
        s->opt->o->note(s->opt->o->ctx, msg);
}

/* README.txt (or tracebook_README.txt beside a README.txt that tracebook did
 * not write, msprof's own) naming the files and the settings; its name goes
 * into the folder's tracebook_run.json. */
static const char readme_head[] = "tracebook export summary\n";

static tb_status write_readme(const sum_opts *opt, const rank_place *p, json_t *rank_ids, const char *label,
                              json_t *files, json_t *not_written, char *name, size_t name_len, tb_error *err)
{
    char path[4200];
    snprintf(name, name_len, "README.txt");
    snprintf(path, sizeof path, "%s/%s", p->folder, name);
    FILE *f = fopen(path, "r");
    if (f) {
        char line[64] = "";
        if (!fgets(line, sizeof line, f) || strcmp(line, readme_head) != 0)
            snprintf(name, name_len, "tracebook_README.txt");
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s", p->folder, name);
    char *shard_in = scale_inputs(opt->db);
    size_t cap = 4096 + (opt->o->spec ? strlen(tb_spec_path(opt->o->spec)) : 0) + (shard_in ? strlen(shard_in) * 2 : 0);
    for (size_t i = 0; i < opt->n_inputs; i++)
        cap += strlen(opt->inputs[i]) + 8;
    for (size_t i = 0; i < json_array_size(files); i++)
        cap += strlen(json_string_value(json_array_get(files, i))) + 8 + 120; /* + summary_db_file_note() */
    for (size_t i = 0; i < json_array_size(not_written); i++)
        cap += strlen(json_string_value(json_array_get(not_written, i))) + 8;
    cap += json_array_size(rank_ids) * 24;
    char *text = malloc(cap);
    if (!text) {
        free(shard_in);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    /* cap holds every line: k never passes it (checked once more at the end) */
#define ADD(...) (k += (size_t)snprintf(text + (k < cap ? k : cap), k < cap ? cap - k : 0, __VA_ARGS__))
    ADD("%s", readme_head);
    ADD("\nSummaries in %s's layout, written by tracebook %s, of rank", p->layout == LAYOUT_MSPROF ? "msprof" : "torch_npu",
        tb_version());
    size_t i;
    json_t *v;
    json_array_foreach(rank_ids, i, v)
        ADD("%s %" PRId64, i ? "," : (json_array_size(rank_ids) > 1 ? "s" : ""), (int64_t)json_integer_value(v));
    ADD(", from:\n");
    /* a DB merged from shards: the inputs the shards loaded */
    if (shard_in)
        for (const char *q = shard_in, *nl; *q; q = nl + 1) {
            nl = strchr(q, '\n');
            ADD("  %.*s\n", nl ? (int)(nl - q) : (int)strlen(q), q);
            if (!nl)
                break;
        }
    for (size_t i = 0; !shard_in && i < opt->n_inputs; i++)
        ADD("  %s\n", opt->inputs[i]);
    ADD("\nSettings:\n");
    ADD("  reports: %s\n", opt->o->spec ? tb_spec_path(opt->o->spec) : "the built-in summaries of this layout");
    if (opt->window->set) {
        char words[200];
        window_text(opt->window, words, sizeof words);
        ADD("  window: %s (label %s)\n", words, label);
    }
    else
        ADD("  window: none (the whole run)\n");
    ADD("  times: us; %s\n", opt->o->merge ? "merged (--merge): the rows of every rank, each with its Rank ID"
                                       : "each rank's files hold its rows alone (no Rank ID column)");
    ADD("\nFiles:\n");
    json_array_foreach(files, i, v) {
        const char *note = p->layout == LAYOUT_MSPROF ? summary_db_file_note(json_string_value(v)) : NULL;
        ADD("  %s%s%s%s\n", json_string_value(v), note ? " (" : "", note ? note : "", note ? ")" : "");
    }
    ADD("  tracebook_run.json (what each report wrote or why it was skipped)\n");
    if (json_array_size(not_written)) {
        ADD("\nFiles of the rank%s not written here:\n", opt->o->merge ? "s" : "");
        json_array_foreach(not_written, i, v)
            ADD("  %s\n", json_string_value(v));
    }
#undef ADD
    tb_status rc = k < cap ? json_write_file(path, text, err) : tb_error_set(err, TB_ERR_NOMEM, "README too long");
    free(text);
    free(shard_in);
    return rc;
}

/* Adds {"readme": {"files": [name]}} to the folder's tracebook_run.json. */
static tb_status list_readme(const char *folder, const char *name, json_t *comm_files, json_t *kept, tb_error *err)
{
    json_t *m = manifest_load(folder, NULL);
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    json_t *r = json_object(), *f = json_array();
    json_array_append_new(f, json_string(name));
    json_object_set_new(r, "files", f);
    json_object_set_new(m, "readme", r);
    /* torch_npu's communication files, written beside the report job's */
    if (json_array_size(comm_files)) {
        json_t *c = json_object();
        json_object_set_new(c, "files", json_incref(comm_files));
        json_object_set_new(m, "communication", c);
    }
    /* the ranks' own summary CSVs, written back as read */
    if (json_array_size(kept)) {
        json_t *c = json_object();
        json_object_set_new(c, "files", json_incref(kept));
        json_object_set_new(m, "as_read", c);
    }
    /* an earlier run whose files this one wrote all again (README.txt
     * included) protects nothing more: drop it */
    json_t *earlier = json_object_get(m, "earlier_runs");
    if (json_is_array(earlier)) {
        json_t *now = json_object();
        manifest_files(json_object_get(m, "reports"), now);
        json_object_set_new(now, name, json_true());
        json_t *kept = manifest_still_listed(earlier, now);
        if (json_array_size(kept))
            json_object_set(m, "earlier_runs", kept);
        else
            json_object_del(m, "earlier_runs");
        json_decref(kept);
        json_decref(now);
    }
    tb_status rc = manifest_write(folder, m, NULL, NULL, 0, err);
    json_decref(m);
    return rc;
}

/*
 * A torch_npu rank's communication.json and communication_matrix.json, from
 * what the rank's own files of them loaded (TB_COMM_OP_STAT, _BANDWIDTH,
 * _SIZE_DIST, TB_COMM_MATRIX), the steps of a step-mode window only; none
 * for a graph-mode window. Names get the folder's tag and the window's label
 * as the CSVs do. A file is written only when the rank has rows for it; an
 * input is never replaced. The names written go to files.
 */
static tb_status write_comm(const sum_opts *opt, const rank_place *p, const char *label, json_t *files,
                            sum_state *ss, file_ids *ids, int *have_ids, tb_error *err)
{
    if (opt->window->set && opt->window->model_id != TB_STEP_MODEL_ID) {
        if (opt->o->note) {
            char msg[200];
            snprintf(msg, sizeof msg, "rank %" PRId64 ": communication.json and communication_matrix.json skipped: "
                     "their steps are not graph iterations", p->rank);
            opt->o->note(opt->o->ctx, msg);
        }
        return TB_OK;
    }
    sqlite3 *db = opt->db;
    tb_status st = TB_OK;
    for (int matrix = 0; matrix < 2 && !st; matrix++) {
        char *text = NULL;
        size_t ops = 0;
        if ((st = summary_comm_text(db, p->rank, opt->window, matrix, &text, &ops, err)) || !ops) {
            free(text);
            if (!st && opt->o->note) {
                char msg[200];
                snprintf(msg, sizeof msg, "rank %" PRId64 ": %s skipped: the data has no %s rows%s", p->rank,
                         matrix ? "communication_matrix.json" : "communication.json",
                         matrix ? "TB_COMM_MATRIX" : "TB_COMM_OP_STAT", opt->window->set ? " in the window" : "");
                opt->o->note(opt->o->ctx, msg);
            }
            continue;
        }
        char path[4600];
        const char *tag = p->tag;
        snprintf(path, sizeof path, "%s/%s%s%s%s%s.json", p->folder, matrix ? "communication_matrix" : "communication",
                 *tag ? "_" : "", tag, *label ? "_" : "", label);
        if (opt->o->no_clobber && access(path, F_OK) == 0)
            st = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "exists already (--no-clobber)");
        /* the files the run reads, collected once per export, when a file is first written */
        if (!st && !*have_ids && !(st = file_ids_collect(ids, opt->inputs, opt->n_inputs, opt->db_path, opt->db, err)))
            *have_ids = 1;
        if (!st)
            st = file_ids_check(ids, path, err);
        if (!st)
            st = json_write_file(path, text, err);
        free(text);
        if (!st) {
            const char *base = strrchr(path, '/') + 1;
            json_array_append_new(files, json_string(base));
            on_written(ss, path);
        }
    }
    return st;
}

/* What a summary run carries from step to step. */
typedef struct sum_run {
    const sum_opts *opt;
    tb_summary_result *res;
    rank_place *ranks;
    size_t n;
    tb_spec *layouts[2];   /* the built-in summaries of each layout */
    const tb_spec *given;  /* the summaries asked for instead, or NULL */
    unsigned formats;
    file_ids ids;          /* loaded for the first communication file */
    int have_ids;
} sum_run;

/* ---- a torch_npu rank's own summary CSVs, as read --------------------------- */

/* What writing a folder's kept files carries to the report run after it. */
typedef struct kept_out {
    const char *ranks;     /* merged: the JSON array of the folder's ranks (their rows led by Rank ID), else NULL */
    unsigned formats;      /* TB_OUT_* of the export */
    unsigned done;         /* bits of torch_npu_reports written as read */
    /* XLSX: the spec entry of each kept file's sheet (a report reading its
     * TEMP table), by torch_npu_reports' index; the last slot the others
     * (static_op_mem); new strings */
    char *sheets[N_TORCH_NPU_REPORTS + 1];
    json_t *tables;        /* the TEMP tables made, dropped after the run */
    window_info wi;        /* in a window of steps: each rank's span (window_spans), for the memory files */
} kept_out;

static void kept_out_free(sqlite3 *db, kept_out *ko)
{
    window_info_finish(&ko->wi);
    for (size_t i = 0; i <= N_TORCH_NPU_REPORTS; i++)
        free(ko->sheets[i]);
    size_t i;
    json_t *v;
    json_array_foreach(ko->tables, i, v) {
        char *sql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.\"%w\"", json_string_value(v));
        if (sql)
            sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
    }
    json_decref(ko->tables);
}

/* The index of torch_npu_reports a kept file name stands for ("kernel_details.csv"), N_TORCH_NPU_REPORTS for none. */
static size_t kept_index(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < N_TORCH_NPU_REPORTS; i++) {
        const char *id = torch_npu_reports[i].id ? torch_npu_reports[i].id : torch_npu_reports[i].use;
        if (n == strlen(id) + 4 && !strncmp(name, id, n - 4) && !strcmp(name + n - 4, ".csv"))
            return i;
    }
    return N_TORCH_NPU_REPORTS;
}

/* File name as p's folder names it: the folder's tag and the window's label
 * before its extension ("kernel_details.csv" -> "kernel_details_rank1.csv"
 * in a shared folder, "kernel_details_8_9.csv" in a window); ext replaces
 * the name's own extension when not NULL. */
static void tagged(const rank_place *p, const char *name, const char *label, const char *ext, char *out, size_t n)
{
    const char *dot = strrchr(name, '.');
    int stem = dot ? (int)(dot - name) : (int)strlen(name);
    snprintf(out, n, "%.*s%s%s%s%s%s", stem, name, p->tag[0] ? "_" : "", p->tag, *label ? "_" : "", label,
             ext ? ext : dot ? dot : "");
}

/* The rows of a kept file (named name, its header head[0..n)) that the
 * export writes as read into *k: 1, or 0 when a window cannot select them
 * (no step column, and no time column of the memory files). static_op_mem
 * is the graphs' static memory, the same for any window: whole in one. */
static int kept_select(const sum_opts *opt, const rank_place *p, const kept_out *ko, int64_t file, const char *name,
                       const char *head, size_t n, kept_sel *k)
{
    const tb_window *w = opt->window;
    *k = (kept_sel){.rank = ko->ranks ? -1 : p->rank, .ranks = ko->ranks, .file = file, .col = -1, .tcol = {-1, -1},
                    .spans = ko->wi.ranks, .n_spans = ko->wi.n_ranks};
    if (!w->set || !strcmp(name, "static_op_mem.csv"))
        return 1;
    k->first = w->iteration_id;
    k->last = w->iteration_id + w->iteration_count - 1;
    if ((k->col = kept_step_column(head, n)) >= 0)
        return 1;
    if (!kept_time_columns(head, n, k->tcol))
        return 0;
    /* by time: every rank written has a span in the window (not one whose steps are a step trace alone) */
    for (size_t i = 0; i < ko->wi.n_ranks; i++)
        if ((ko->ranks || ko->wi.ranks[i].rank == p->rank) && ko->wi.ranks[i].end_ns <= 0)
            return 0;
    return 1;
}

/* In a window, when a file of rank p (merged: of any rank) is selected by
 * time, each rank's span of the window into ko->wi (the window applied on
 * the export's connection and taken down again, before any TEMP table of
 * the folder is made). */
static tb_status window_spans(const sum_opts *opt, const rank_place *p, kept_out *ko, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    int timed = 0; /* a file of the rank's (merged: of any rank's) selected by time */
    if (opt->window->set &&
        sqlite3_prepare_v2(opt->db, "SELECT 1 FROM TB_SOURCE_CSV WHERE line = 0 AND (rankId = ?1 OR ?2) AND "
                                    "(record LIKE '%Timestamp(us)%' OR record LIKE '%Allocation Time(us)%') LIMIT 1",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, p->rank);
        sqlite3_bind_int(q, 2, ko->ranks != NULL);
        timed = sqlite3_step(q) == SQLITE_ROW;
    }
    sqlite3_finalize(q);
    if (!timed)
        return TB_OK;
    tb_status st = window_apply(opt->db, opt->window, &ko->wi, err);
    window_reset(opt->db);
    return st;
}

/* The spec entry of a kept file's sheet: a report of the id and title of
 * the one it stands for (as, else the computed one of its name), reading
 * the file's rows from a TEMP table made here; into ko->sheets. */
static tb_status kept_sheet(const sum_run *r, const kept_sel *k, const char *name, const tb_spec_report *as,
                            kept_out *ko, tb_error *err)
{
    char table[64], id[128];
    /* one table per sheet: two reports of a spec may stand for one file */
    snprintf(table, sizeof table, "tb_asread_%lld_%lld", (long long)k->file, (long long)json_array_size(ko->tables));
    snprintf(id, sizeof id, "%.*s", (int)(strlen(name) - 4), name);
    size_t cap = 1 << 16;
    char *cols = malloc(cap), *entry = NULL;
    if (!cols)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    json_array_append_new(ko->tables, json_string(table));
    tb_status st = kept_table(r->opt->db, k, table, cols, cap, err);
    const tb_spec *sp = r->layouts[LAYOUT_TORCH_NPU];
    const char *title = id;
    for (size_t i = 0; i < tb_spec_n_reports(sp); i++)
        if (!strcmp(tb_report_id(tb_spec_report_at(sp, i)), id) && tb_spec_report_at(sp, i)->title)
            title = tb_spec_report_at(sp, i)->title;
    if (as) {
        snprintf(id, sizeof id, "%s", as->id);
        title = as->xlsx_sheet ? as->xlsx_sheet : as->title ? as->title : as->id;
    }
    size_t i = as ? N_TORCH_NPU_REPORTS : kept_index(name);
    size_t old = ko->sheets[i] ? strlen(ko->sheets[i]) : 0, len = old + strlen(cols) + strlen(title) * 6 + 400;
    if (!st && !(entry = realloc(ko->sheets[i], len)))
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    if (!st) {
        ko->sheets[i] = entry;
        json_t *t = json_string(title); /* a JSON string is a YAML double-quoted scalar */
        char *tq = t ? json_dumps(t, JSON_ENCODE_ANY) : NULL;
        json_decref(t);
        if (!tq)
            st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        else
            snprintf(entry + old, len - old,
                     "  - id: %s\n    title: %s\n    sql: SELECT * FROM temp.%s\n    header_units: false\n"
                     "    outputs: [xlsx]\n    columns:\n%s",
                     id, tq, table, cols);
        free(tq);
    }
    free(cols);
    return st;
}

/* Writes one kept file, selected by k, in each format of the export: CSV
 * and JSON files beside the others (named as the file, or as the spec's
 * report as stands for it; their names to kept), the XLSX sheet through the
 * report run (kept_sheet). */
static tb_status kept_formats(sum_run *r, const rank_place *p, const kept_sel *k, const char *name,
                              const tb_spec_report *as, kept_out *ko, sum_state *ss, json_t *kept, tb_error *err)
{
    const sum_opts *opt = r->opt;
    tb_status st = TB_OK;
    char own[200];
    snprintf(own, sizeof own, "%s.csv", as ? as->id : name);
    if (!as)
        snprintf(own, sizeof own, "%s", name);
    for (unsigned f = TB_OUT_CSV; f <= TB_OUT_JSON && !st; f <<= 1) {
        if (!(ko->formats & f) || (f != TB_OUT_CSV && f != TB_OUT_JSON))
            continue;
        char path[4600], base[400];
        tagged(p, own, opt->label, f == TB_OUT_JSON ? ".json" : NULL, base, sizeof base);
        snprintf(path, sizeof path, "%s/%s", p->folder, base);
        if (!(st = file_ids_check(&r->ids, path, err)))
            st = f == TB_OUT_JSON ? kept_write_json(opt->db, k, path, err) : kept_write_csv(opt->db, k, path, err);
        if (!st) {
            json_array_append_new(kept, json_string(base));
            on_written(ss, path);
        }
    }
    if (!st && (ko->formats & TB_OUT_XLSX))
        st = kept_sheet(r, k, name, as, ko, err);
    return st;
}

/* 1 when the strings are both NULL or equal. */
static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The file name of torch_npu's summary that a spec's report stands for
 * into out ("kernel_details.csv" for `use: kernel_details` or the built-in
 * itself): 1 when the report has the summary's SQL and changes nothing of
 * what it writes (its rows, their order and number, its columns, headers
 * and params), 0 otherwise (it is computed). */
static int as_read_file(const sum_run *r, const tb_spec_report *as, char *out, size_t n)
{
    const tb_spec *sp = r->layouts[LAYOUT_TORCH_NPU];
    for (size_t i = 0; i < N_TORCH_NPU_REPORTS && as->sql; i++) {
        const tb_spec_report *b = &sp->reports[i];
        if (!b->sql || strcmp(b->sql, as->sql) != 0)
            continue;
        int same = b->limit == as->limit && b->n_sort == as->n_sort && b->n_columns == as->n_columns &&
                   b->n_params == as->n_params && b->header_units == as->header_units &&
                   b->n_drop_empty == as->n_drop_empty && same_str(b->pivot_key, as->pivot_key) && !as->advice;
        for (size_t k = 0; same && k < b->n_sort; k++)
            same = !strcmp(b->sort[k].column, as->sort[k].column) && b->sort[k].desc == as->sort[k].desc;
        for (size_t k = 0; same && k < b->n_columns; k++)
            same = !strcmp(b->columns[k].name, as->columns[k].name) &&
                   same_str(b->columns[k].header, as->columns[k].header);
        if (same)
            snprintf(out, n, "%s.csv", b->id);
        return same;
    }
    return 0;
}

/*
 * The torch_npu summary CSVs that rank p held, written back as they were
 * read (TB_SOURCE_CSV): the header line byte for byte, every row loaded
 * (a malformed one was left out with a warning), the fields as written, in
 * each format of the export (kept_formats). Merged (ko->ranks: every rank
 * of it into p's folder), a file that each of those ranks held under one
 * header, its rows led by their Rank ID. In a window (step mode,
 * keeps_files), a file whose rows carry their step keeps the rows of the
 * window's steps under its header; one that does not is not written as
 * read (the reports compute it, or the README says why not). as: only the
 * file that the spec's report as stands for (as_read_file), named as it.
 * The bits of the summaries so written go to ko->done (1 for as); the
 * names to kept.
 */
static tb_status write_kept(sum_run *r, const rank_place *p, const tb_spec_report *as, sum_state *ss, json_t *kept,
                            kept_out *ko, tb_error *err)
{
    const sum_opts *opt = r->opt;
    sqlite3_stmt *q = NULL;
    ko->done = 0;
    const char *sql = ko->ranks ? "SELECT c.file, s.value, min(c.record) FROM TB_SOURCE_CSV c JOIN STRING_IDS s "
                                  "ON s.id = c.file WHERE c.line = 0 AND c.rankId IN (SELECT value FROM json_each(?2)) "
                                  "AND (?3 IS NULL OR s.value = ?3) "
                                  "GROUP BY c.file HAVING count(DISTINCT c.rankId) = json_array_length(?2) AND "
                                  "count(DISTINCT c.record) = 1 ORDER BY min(c.rowid)"
                                : "SELECT c.file, s.value, c.record FROM TB_SOURCE_CSV c JOIN STRING_IDS s "
                                  "ON s.id = c.file WHERE c.rankId = ?1 AND c.line = 0 AND (?3 IS NULL OR s.value = ?3) "
                                  "ORDER BY c.rowid";
    if (sqlite3_prepare_v2(opt->db, sql, -1, &q, NULL) != SQLITE_OK)
        return TB_OK; /* a DB from before TB_SOURCE_CSV: the reports write every file */
    if (ko->ranks)
        sqlite3_bind_text(q, 2, ko->ranks, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(q, 1, p->rank);
    char want[200];
    if (as && as_read_file(r, as, want, sizeof want))
        sqlite3_bind_text(q, 3, want, -1, SQLITE_STATIC);
    tb_status st = TB_OK;
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 1), *head = (const char *)sqlite3_column_text(q, 2);
        kept_sel k;
        if (!name || !kept_select(opt, p, ko, sqlite3_column_int64(q, 0), name, head ? head : "",
                                  (size_t)sqlite3_column_bytes(q, 2), &k))
            continue;
        /* the files the run reads, collected once per export, when a file is first written */
        if (!r->have_ids && !(st = file_ids_collect(&r->ids, opt->inputs, opt->n_inputs, opt->db_path, opt->db, err)))
            r->have_ids = 1;
        if (!st)
            st = kept_formats(r, p, &k, name, as, ko, ss, kept, err);
        if (!st && (as || kept_index(name) < N_TORCH_NPU_REPORTS))
            ko->done |= as ? 1u : 1u << kept_index(name);
    }
    sqlite3_finalize(q);
    return st;
}

/* The spec of a torch_npu folder's report run into *own (NULL when it has
 * no report): the built-in summaries less those ko->done wrote as read, each
 * in the export's formats, and in their places the XLSX sheets of the kept
 * files (ko->sheets), in torch_npu's order; loaded_steps: as torch_npu_yaml. */
static tb_status folder_spec(const kept_out *ko, int loaded_steps, tb_spec **own, tb_error *err)
{
    char outputs[32] = "", y[2048];
    *own = NULL;
    snprintf(outputs, sizeof outputs, "%s%s%s", ko->formats & TB_OUT_CSV ? "csv, " : "",
             ko->formats & TB_OUT_JSON ? "json, " : "", ko->formats & TB_OUT_XLSX ? "xlsx, " : "");
    if (strlen(outputs) >= 2)
        outputs[strlen(outputs) - 2] = 0;
    size_t n = strlen("tracebook: 1\nreports:\n") + 1;
    for (size_t i = 0; i <= N_TORCH_NPU_REPORTS; i++)
        n += ko->sheets[i] ? strlen(ko->sheets[i]) : 0;
    size_t cap = n + N_TORCH_NPU_REPORTS * sizeof y;
    char *text = malloc(cap);
    if (!text)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    size_t k = (size_t)snprintf(text, cap, "tracebook: 1\nreports:\n"), count = 0;
    for (size_t i = 0; i <= N_TORCH_NPU_REPORTS; i++) {
        if (ko->sheets[i]) {
            k += (size_t)snprintf(text + k, cap - k, "%s", ko->sheets[i]);
            count++;
        }
        /* the computed summary i alone: the entry after the spec's head */
        if (i < N_TORCH_NPU_REPORTS && torch_npu_yaml(~(1u << i) | ko->done, loaded_steps, outputs, y, sizeof y)) {
            k += (size_t)snprintf(text + k, cap - k, "%s", y + strlen("tracebook: 1\nreports:\n"));
            count++;
        }
    }
    tb_status st = count ? tb_spec_load_mem("builtin:torch_npu-summaries", text, k, own, NULL, NULL, err) : TB_OK;
    free(text);
    return st;
}

/* A rank's files are written back as read when it is torch_npu's and the
 * export writes its own summaries, in any format, for the whole run or a
 * window of steps (torch_npu's steps: its files name no graph iteration). */
static int keeps_files(const sum_opts *opt, const rank_place *p, int given)
{
    return p->layout == LAYOUT_TORCH_NPU && !given &&
           (!opt->window->set || opt->window->model_id == TB_STEP_MODEL_ID);
}

/* Why file base (a source of rank p of this kind and note) is not written
 * back, into buf (n bytes; returned); kept: a summary CSV the rank held
 * (TB_SOURCE_CSV); merged: the export merges the ranks. */
static const char *why_not(const sum_opts *opt, const rank_place *p, const char *base, const char *kind,
                           const char *note, int kept, int merged, char *buf, size_t n)
{
    const char *why = "loaded into the summaries written here, not written back as a file of its own";
    if (kept && opt->window->set)
        why = "its rows carry no step, nor a time that the window's span in the rank can select (the export "
              "without a window writes it)";
    else if (!strncmp(base, "profiler_info", 13) && strstr(base, ".json"))
        why = "the profiler's run information: its name gives the rank's id, no summary holds it";
    else if (!strcmp(kind, "ignored") || !strcmp(kind, "skipped"))
        why = note && *note ? note : "not read";
    else if (strstr(base, "trace_view") || !strcmp(kind, "ascend timeline"))
        why = "the timeline: `tracebook export timeline` writes it";
    else if (!strcmp(kind, "torch_npu analysis db")) {
        char stt[300];
        tagged(p, "step_trace_time.csv", opt->label, NULL, stt, sizeof stt);
        snprintf(buf, n, "its StepTraceTime is %s here (a DB is not written back)", stt);
        return buf;
    }
    else if (!strcmp(kind, "comm json"))
        why = merged ? "torch_npu writes it per rank: the export without --merge writes it back"
                     : "it held no communication op to write back";
    else if (!strcmp(kind, "profiler metadata"))
        why = "the parallel groups: read to map communication ranks to global ones, no summary holds them";
    snprintf(buf, n, "%s", why);
    return buf;
}

/* The subfolders of rank p's root folder (the folder of its
 * ASCEND_PROFILER_OUTPUT/, or of its files), FRAMEWORK/ say, whose files
 * the load found and passed over: one line each into not_written, led by
 * lead ("" or "rank R: "), with the number of files and the reason. */
static void list_subfolders(const sum_opts *opt, const rank_place *p, const char *lead, json_t *not_written)
{
    sqlite3_stmt *q = NULL;
    const char *sql =
        "WITH d(dir) AS (SELECT DISTINCT rtrim(path, replace(path, '/', '')) FROM TB_SOURCE WHERE rankId = ?1), "
        "r(root) AS (SELECT DISTINCT CASE WHEN dir LIKE '%/ASCEND_PROFILER_OUTPUT/' THEN substr(dir, 1, length(dir) - 23) "
        "  ELSE dir END FROM d), "
        "f(rest, note, id) AS (SELECT substr(s.path, length(r.root) + 1), s.note, s.id FROM TB_SOURCE s JOIN r "
        "  ON substr(s.path, 1, length(r.root)) = r.root WHERE s.rankId IS NULL AND s.kind IN ('ignored', 'skipped')) "
        "SELECT substr(rest, 1, instr(rest, '/')) AS sub, count(*), min(note) FROM f "
        "WHERE instr(rest, '/') > 0 AND rest NOT LIKE 'ASCEND_PROFILER_OUTPUT/%' GROUP BY sub ORDER BY min(id)";
    if (sqlite3_prepare_v2(opt->db, sql, -1, &q, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(q, 1, p->rank);
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *sub = (const char *)sqlite3_column_text(q, 0), *note = (const char *)sqlite3_column_text(q, 2);
        long long k = sqlite3_column_int64(q, 1);
        json_array_append_new(not_written, json_sprintf("%s%s: %lld file%s found there, %s", lead, sub ? sub : "", k,
                                                        k == 1 ? "" : "s", note && *note ? note : "not read"));
    }
    sqlite3_finalize(q);
}

/* Why each file of rank p's own folders that was loaded or found is not
 * written back ("trace_view.json: ..."), into not_written: its sources, the
 * files found beside them, those of the rank's root folder (the folder of
 * ASCEND_PROFILER_OUTPUT/: profiler_info_<N>.json, profiler_metadata.json,
 * a trace_view.json there) and its subfolders (list_subfolders). merged:
 * the ranks are merged, each line is led by "rank R: ". */
static void list_not_written(const sum_opts *opt, const rank_place *p, int merged, json_t *written, json_t *as_read,
                             json_t *not_written)
{
    sqlite3_stmt *q = NULL;
    char lead[48] = "";
    if (merged)
        snprintf(lead, sizeof lead, "rank %lld: ", (long long)p->rank);
#define DIR_OF(x) "rtrim(" x ", replace(" x ", '/', ''))"
    const char *sql = "SELECT path, kind, note, EXISTS (SELECT 1 FROM TB_SOURCE_CSV c JOIN STRING_IDS v ON "
                      "v.id = c.file WHERE c.rankId = ?1 AND c.line = 0 AND s.path LIKE '%/' || v.value) "
                      "FROM TB_SOURCE s WHERE rankId = ?1 OR (rankId IS NULL AND "
                      "kind IN ('ignored', 'skipped') AND EXISTS (SELECT 1 FROM TB_SOURCE t WHERE t.rankId = ?1 AND "
                      "(" DIR_OF("t.path") " = " DIR_OF("s.path") " OR " DIR_OF("t.path") " = " DIR_OF("s.path")
                      " || 'ASCEND_PROFILER_OUTPUT/'))) ORDER BY id";
#undef DIR_OF
    if (sqlite3_prepare_v2(opt->db, sql, -1, &q, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(q, 1, p->rank);
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(q, 0), *kind = (const char *)sqlite3_column_text(q, 1);
        const char *note = (const char *)sqlite3_column_text(q, 2);
        const char *base = path ? strrchr(path, '/') : NULL;
        base = base ? base + 1 : (path ? path : "");
        char mine[400], why[400];
        tagged(p, base, opt->label, NULL, mine, sizeof mine);
        int is_written = 0, kept = sqlite3_column_int(q, 3), read_back = 0;
        size_t i;
        json_t *v;
        json_array_foreach(written, i, v)
            is_written |= !strcmp(json_string_value(v), mine);
        json_array_foreach(as_read, i, v)
            read_back |= !strcmp(json_string_value(v), mine);
        if (is_written && merged && kept && !read_back) /* the merged file is computed */
            json_array_append_new(not_written, json_sprintf("%s%s: the merged file is computed, not the rank's own as "
                                                            "read (the ranks written do not all hold it under one "
                                                            "header, or the window cannot select its rows)", lead, base));
        if (is_written || !kind)
            continue;
        why_not(opt, p, base, kind, note, kept, merged, why, sizeof why);
        json_array_append_new(not_written, json_sprintf("%s%s: %s", lead, base, why));
    }
    sqlite3_finalize(q);
    list_subfolders(opt, p, lead, not_written);
}

/* Runs sp's reports into p's folder through the report job: for p's rank
 * alone (rank_only) or for every rank, each row with its Rank ID. */
static tb_status write_folder(const sum_opts *opt, const rank_place *p, const tb_spec *sp,
                              unsigned formats, int rank_only, sum_state *ss, tb_error *err)
{
    tb_report_job job = {
        .run = {.specs = &sp, .n_specs = 1, .unit = TB_UNIT_US, .formats = formats, .note = on_note, .ctx = ss},
        .out_dir = p->folder,
        .written = on_written,
        .file_tag = p->tag[0] ? p->tag : NULL,
        .no_clobber = opt->o->no_clobber,
        .csv_safe = opt->o->csv_safe,
        .msprof_slices = p->layout == LAYOUT_MSPROF,
        .keep_listings = 1,
    };
    tb_window w = *opt->window;
    w.rank_set = rank_only;
    w.rank = p->rank;
    tb_run_result rr;
    return report_job_write(opt->s, &job, &w, &rr, err);
}

/* Whether rank p's step_trace_time is written from the step trace it was
 * loaded with (an analysis.db's StepTraceTime, values as stored) rather
 * than computed from its tasks: a torch_npu rank with such a step trace,
 * the layout's own summaries, in any format, for the whole run or a window
 * of steps (the window keeps the rows of its steps, window.c). Merged, the
 * caller asks each rank written (summaries()). */
static int loaded_steps(const sum_opts *opt, const rank_place *p, int given)
{
    return p->layout == LAYOUT_TORCH_NPU && !given &&
           (!opt->window->set || opt->window->model_id == TB_STEP_MODEL_ID) &&
           (opt->o->merge || summary_db_analysis_steps(opt->db, p->rank));
}


/* msprof's <timestamp> of the files: the session start, UTC. */
static void start_stamp(sqlite3 *db, char *stamp, size_t n)
{
    time_t t = (time_t)db_start_time(db);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, n, "%Y%m%d%H%M%S", &tm);
}

/* File tags: msprof's timestamp; ranks sharing a folder are told apart by rank. */
static void tag_ranks(sum_run *r, const char *stamp)
{
    rank_place *ranks = r->ranks;
    for (size_t i = 0; i < r->n; i++) {
        int shared = 0;
        for (size_t j = 0; j < r->n; j++)
            shared |= j != i && !strcmp(ranks[i].folder, ranks[j].folder);
        if (ranks[i].layout == LAYOUT_MSPROF)
            snprintf(ranks[i].tag, sizeof ranks[i].tag, shared ? "%s_rank%" PRId64 : "%s", stamp, ranks[i].rank);
        else if (shared)
            snprintf(ranks[i].tag, sizeof ranks[i].tag, "rank%" PRId64, ranks[i].rank);
    }
}

/* --merge: every rank in one folder, OUT/mindstudio_profiler_output (or
 * OUT/ASCEND_PROFILER_OUTPUT when every rank is torch_npu's), one set of
 * files whose rows carry their rank. */
static tb_status merge_ranks(sum_run *r, const char *stamp, tb_error *err)
{
    const tb_summary_options *pub = r->opt->o;
    if (!pub->out_dir)
        return tb_error_set(err, TB_ERR_USAGE, "merging the ranks' summaries needs an output folder (-o DIR)");
    int layout = LAYOUT_TORCH_NPU;
    for (size_t i = 0; i < r->n; i++)
        if (r->ranks[i].layout == LAYOUT_MSPROF)
            layout = LAYOUT_MSPROF;
    for (size_t i = 0; i < r->n; i++) {
        rank_place *p = &r->ranks[i];
        p->layout = layout;
        int k = snprintf(p->folder, sizeof p->folder, "%s/%s", pub->out_dir,
                         layout == LAYOUT_MSPROF ? "mindstudio_profiler_output" : "ASCEND_PROFILER_OUTPUT");
        if (k < 0 || (size_t)k >= sizeof p->folder)
            return tb_error_set(err, TB_ERR_USAGE, "the output folder's path is too long");
        snprintf(p->tag, sizeof p->tag, "%s", layout == LAYOUT_MSPROF ? stamp : "");
    }
    return TB_OK;
}

/* --no-clobber: a file of rank p's own (TB_SOURCE_CSV) that is there. */
static tb_status clobber_kept(const sum_run *r, const rank_place *p, tb_error *err)
{
    sqlite3_stmt *q = NULL;
    if (!keeps_files(r->opt, p, r->given != NULL) ||
        sqlite3_prepare_v2(r->opt->db, "SELECT s.value, c.record, c.file FROM TB_SOURCE_CSV c JOIN STRING_IDS s "
                                       "ON s.id = c.file WHERE c.rankId = ? AND c.line = 0", -1, &q, NULL) != SQLITE_OK)
        return TB_OK;
    sqlite3_bind_int64(q, 1, p->rank);
    tb_status st = TB_OK;
    while (!st && sqlite3_step(q) == SQLITE_ROW) {
        char base[400], path[4600];
        const char *name = (const char *)sqlite3_column_text(q, 0), *head = (const char *)sqlite3_column_text(q, 1);
        kept_sel k;
        kept_out ko = {0};
        if (!name || !kept_select(r->opt, p, &ko, sqlite3_column_int64(q, 2), name, head ? head : "",
                                  (size_t)sqlite3_column_bytes(q, 1), &k))
            continue;
        for (unsigned f = TB_OUT_CSV; f <= TB_OUT_JSON && !st; f <<= 1) {
            if (!(r->formats & f) || (f != TB_OUT_CSV && f != TB_OUT_JSON))
                continue;
            tagged(p, name, r->opt->label, f == TB_OUT_JSON ? ".json" : NULL, base, sizeof base);
            snprintf(path, sizeof path, "%s/%s", p->folder, base);
            if (access(path, F_OK) == 0)
                st = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "exists already (--no-clobber)");
        }
    }
    sqlite3_finalize(q);
    return st;
}

/* --no-clobber: refuses, before anything is written, when a file of the run is there. */
static tb_status check_clobber(const sum_run *r, tb_error *err)
{
    const char *lab = r->res->window_label;
    for (size_t i = 0; i < r->n; i++) {
        tb_status st = clobber_kept(r, &r->ranks[i], err);
        if (st)
            return st;
        const tb_spec *sp = r->given ? r->given : r->layouts[r->ranks[i].layout];
        const char *tag = r->ranks[i].tag;
        if (r->formats & TB_OUT_XLSX) {
            char path[4600];
            snprintf(path, sizeof path, "%s/tracebook%s%s%s%s.xlsx", r->ranks[i].folder, *tag ? "_" : "", tag,
                     *lab ? "_" : "", lab);
            if (access(path, F_OK) == 0)
                return tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "exists already (--no-clobber)");
        }
        for (size_t k = 0; k < tb_spec_n_reports(sp); k++) {
            for (unsigned f = TB_OUT_CSV; f <= TB_OUT_JSON; f <<= 1) {
                if (!(r->formats & f) || (f != TB_OUT_CSV && f != TB_OUT_JSON))
                    continue;
                char path[4600];
                snprintf(path, sizeof path, "%s/%s%s%s%s%s.%s", r->ranks[i].folder,
                         tb_report_id(tb_spec_report_at(sp, k)), *tag ? "_" : "", tag, *lab ? "_" : "", lab,
                         f == TB_OUT_JSON ? "json" : "csv");
                if (access(path, F_OK) == 0)
                    return tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "exists already (--no-clobber)");
            }
        }
    }
    return TB_OK;
}

/* The spec a --spec export of a torch_npu folder runs (view, a shallow copy
 * of the given spec whose reports array *reps is new): each report that
 * stands for one of the rank's own files unchanged (as_read_file) is written
 * as read (write_kept), in the workbook by its sheet (from *sheets, a new
 * spec); the others run as given, in the export's formats. */
static tb_status given_view(sum_run *r, const rank_place *p, sum_state *ss, json_t *kept, kept_out *ko, tb_spec *view,
                            tb_spec_report **reps, tb_spec **sheets, tb_error *err)
{
    const tb_spec *g = r->given;
    char *asread = calloc(g->n_reports + 1, 1);
    *reps = calloc(g->n_reports + 1, sizeof **reps);
    tb_status st = asread && *reps ? TB_OK : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t k = 0; !st && k < g->n_reports; k++) {
        char name[200];
        if (!as_read_file(r, &g->reports[k], name, sizeof name))
            continue;
        st = write_kept(r, p, &g->reports[k], ss, kept, ko, err);
        asread[k] = ko->done != 0;
    }
    const char *y = ko->sheets[N_TORCH_NPU_REPORTS];
    if (!st && y) {
        size_t n = strlen(y) + 64;
        char *text = malloc(n);
        st = text ? TB_OK : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        if (!st) {
            snprintf(text, n, "tracebook: 1\nreports:\n%s", y);
            st = tb_spec_load_mem("builtin:torch_npu-summaries", text, strlen(text), sheets, NULL, NULL, err);
        }
        free(text);
    }
    size_t m = 0, j = 0;
    for (size_t k = 0; !st && k < g->n_reports; k++) {
        if (asread[k]) { /* its sheet, when the export writes a workbook */
            if (*sheets && j < (*sheets)->n_reports)
                (*reps)[m++] = (*sheets)->reports[j++];
            continue;
        }
        (*reps)[m] = g->reports[k];
        (*reps)[m++].outputs = r->formats;
    }
    *view = *g;
    view->reports = *reps;
    view->n_reports = m;
    free(asread);
    return st;
}

/* The summaries of folder p's rank (ranks NULL) or, merged, of the ranks of
 * the JSON array ranks: a torch_npu rank's own files as read (when it keeps
 * them; with a spec, those its reports stand for), the reports for the rest. */
static tb_status summaries(sum_run *r, const rank_place *p, const char *ranks, sum_state *ss, json_t *kept,
                           tb_error *err)
{
    const sum_opts *opt = r->opt;
    const tb_spec *sp = r->given ? r->given : r->layouts[p->layout];
    tb_spec *own = NULL, view, *sheets = NULL;
    tb_spec_report *reps = NULL;
    kept_out ko = {.ranks = ranks, .formats = r->formats, .tables = json_array()};
    unsigned formats = r->formats;
    tb_status st = keeps_files(opt, p, 0) ? window_spans(opt, p, &ko, err) : TB_OK;
    if (!st && r->given && keeps_files(opt, p, 0)) {
        if (!(st = given_view(r, p, ss, kept, &ko, &view, &reps, &sheets, err)))
            sp = view.n_reports ? &view : NULL;
        formats = 0; /* each report's own outputs */
    }
    else if (!st && keeps_files(opt, p, r->given != NULL))
        st = write_kept(r, p, NULL, ss, kept, &ko, err);
    /* an analysis.db's step trace, as stored, instead of the computed one (merged: when every rank has one) */
    int loaded = loaded_steps(opt, p, r->given != NULL);
    json_t *ids = ranks ? json_loads(ranks, 0, NULL) : NULL;
    size_t k;
    json_t *v;
    json_array_foreach(ids, k, v)
        loaded &= summary_db_analysis_steps(opt->db, json_integer_value(v));
    json_decref(ids);
    if (!st && !r->given && (ko.done || loaded || ko.sheets[N_TORCH_NPU_REPORTS])) {
        st = folder_spec(&ko, loaded, &own, err);
        sp = own; /* NULL when every summary was the rank's own */
        formats = 0;
    }
    if (!st && sp)
        st = write_folder(opt, p, sp, formats, !ranks, ss, err);
    tb_spec_free(own);
    tb_spec_free(sheets);
    free(reps);
    kept_out_free(opt->db, &ko);
    return st;
}

/* Rank p's files: its summaries, torch_npu's communication files. */
static tb_status rank_files(sum_run *r, const rank_place *p, sum_state *ss, json_t *comm_files, json_t *kept,
                            json_t *not_written, tb_error *err)
{
    const sum_opts *opt = r->opt;
    tb_status st = summaries(r, p, NULL, ss, kept, err);
    if (!st && p->layout == LAYOUT_TORCH_NPU && !r->given)
        st = write_comm(opt, p, r->res->window_label, comm_files, ss, &r->ids, &r->have_ids, err);
    if (!st && keeps_files(opt, p, r->given != NULL))
        list_not_written(opt, p, 0, ss->files, kept, not_written);
    if (!st && p->layout == LAYOUT_MSPROF && !r->given)
        summary_db_not_written(opt->db, p->rank, not_written);
    return st;
}

/* The files of each rank of the folder of rank i (when merged, only its
 * directory); the ranks written go to done_ranks, communication files to comm_files. */
static tb_status folder_ranks(sum_run *r, size_t i, sum_state *ss, json_t *done_ranks, json_t *comm_files,
                              json_t *kept, json_t *not_written, tb_error *err)
{
    const sum_opts *opt = r->opt;
    const tb_summary_options *pub = opt->o;
    tb_status jrc = TB_OK;
    for (size_t k = i; k < r->n && !jrc; k++) {
        rank_place *p = &r->ranks[k];
        if (strcmp(p->folder, r->ranks[i].folder) != 0)
            continue;
        if (!window_rank_has(opt->db, opt->window, p->rank)) {
            if (pub->note) {
                char msg[160];
                snprintf(msg, sizeof msg, "rank %" PRId64 ": not in the window (no iteration %" PRId64 "): no files",
                         p->rank, opt->window->iteration_id);
                pub->note(pub->ctx, msg);
            }
            continue;
        }
        if (dirs_make(p->folder, 1, 0777))
            return tb_error_at(err, TB_ERR_IO, p->folder, 0, 0, -1, "cannot create the directory: %s",
                               strerror(errno));
        if (pub->merge) { /* one run over every rank, after this loop */
            json_array_append_new(done_ranks, json_integer(p->rank));
            continue;
        }
        jrc = rank_files(r, p, ss, comm_files, kept, not_written, err);
        if (!jrc) {
            json_array_append_new(done_ranks, json_integer(p->rank));
            r->res->ranks++;
        }
    }
    return jrc;
}

/* The folder of rank i: its ranks' files (merged: one run over them all), then its README. */
static tb_status write_place(sum_run *r, size_t i, tb_error *err)
{
    const sum_opts *opt = r->opt;
    const tb_summary_options *pub = opt->o;
    sum_state ss = {.opt = opt, .files = json_array()};
    json_t *done_ranks = json_array(), *comm_files = json_array(), *kept = json_array(), *not_written = json_array();
    tb_status jrc = folder_ranks(r, i, &ss, done_ranks, comm_files, kept, not_written, err);
    /* merged: the folder was made above; the files every rank held as read, one run over every rank for the rest */
    if (!jrc && pub->merge && json_array_size(done_ranks)) {
        char *ranks = json_dumps(done_ranks, JSON_COMPACT);
        jrc = ranks ? summaries(r, &r->ranks[i], ranks, &ss, kept, err) : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        free(ranks);
        if (!jrc)
            r->res->ranks += json_array_size(done_ranks);
        /* what each rank held that the merged files do not give, rank by rank */
        size_t k;
        json_t *v;
        json_array_foreach(done_ranks, k, v)
            for (size_t j = 0; !jrc && j < r->n; j++)
                if (r->ranks[j].rank == json_integer_value(v) && keeps_files(opt, &r->ranks[j], r->given != NULL))
                    list_not_written(opt, &r->ranks[j], 1, ss.files, kept, not_written);
    }
    if (!jrc && json_array_size(done_ranks)) {
        char readme[64];
        jrc = write_readme(opt, &r->ranks[i], done_ranks, r->res->window_label, ss.files, not_written, readme,
                           sizeof readme, err);
        if (!jrc)
            jrc = list_readme(r->ranks[i].folder, readme, comm_files, kept, err);
        if (!jrc && pub->written) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", r->ranks[i].folder, readme);
            pub->written(pub->ctx, path);
        }
        r->res->files += json_array_size(ss.files) + 2;
    }
    json_decref(ss.files);
    json_decref(done_ranks);
    json_decref(comm_files);
    json_decref(kept);
    json_decref(not_written);
    return jrc;
}

tb_status tb_summary_write(tb_session *s, const tb_summary_options *pub, tb_summary_result *res, tb_error *err)
{
    memset(res, 0, sizeof *res);
    sum_opts so = {.o = pub, .s = s, .db = session_db(s, err), .db_path = tb_session_db_path(s),
                   .window = tb_session_window(s)};
    if (!so.db)
        return err->code;
    so.inputs = tb_session_inputs(s, &so.n_inputs);
    sum_run r = {.opt = &so, .res = res};
    char stamp[64];
    start_stamp(so.db, stamp, sizeof stamp);
    tb_status rc;
    if ((rc = list_ranks(so.db, so.db_path, pub->out_dir, &r.ranks, &r.n, err)))
        goto done;
    char tn_yaml[1024];
    torch_npu_yaml(0, 0, NULL, tn_yaml, sizeof tn_yaml);
    for (int l = 0; l < 2; l++) {
        const char *y = l == LAYOUT_MSPROF ? msprof_yaml : tn_yaml;
        if ((rc = tb_spec_load_mem(l == LAYOUT_MSPROF ? "builtin:msprof-summaries" : "builtin:torch_npu-summaries", y,
                                   strlen(y), &r.layouts[l], NULL, NULL, err)))
            goto done;
    }
    /* an msprof reports file picks timeline layers only: the summaries run whatever it says */
    r.given = pub->spec && tb_spec_n_reports(pub->spec) ? pub->spec : NULL;
    window_label(so.window, res->window_label, sizeof res->window_label);
    so.label = res->window_label;
    tag_ranks(&r, stamp);
    if (pub->merge && (rc = merge_ranks(&r, stamp, err)))
        goto done;
    r.formats = pub->formats ? pub->formats : TB_OUT_CSV;
    if (pub->no_clobber && (rc = check_clobber(&r, err)))
        goto done;
    /* folder by folder (ranks of one input share one), rank by rank */
    for (size_t i = 0; i < r.n && !rc; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= !strcmp(r.ranks[i].folder, r.ranks[j].folder);
        if (!seen)
            rc = write_place(&r, i, err);
    }
done:
    tb_spec_free(r.layouts[0]);
    tb_spec_free(r.layouts[1]);
    free(r.ranks);
    file_ids_free(&r.ids);
    return rc ? rc : export_finish(s, res->ranks, pub->clear_cache, pub->note, pub->ctx, err);
}
