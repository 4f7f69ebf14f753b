/* SPDX-License-Identifier: MIT */
/*
 * job.c - the report job: a report run and the files it writes.
 *
 * Connects the runner (runner.c) to the writers of the output stage: the
 * runner asks for a sink per report and format, this file names the file
 * (`<dir>/<report id>[_<window label>].<ext>`, as nsys names its
 * `<base>_<report>[_<filter>]` outputs), opens the writer, and keeps what
 * each report produced for the run metadata file, tracebook_run.json, which
 * records everything the CSVs have no room for: the inputs, the window, the
 * time unit, the specs and their metrics policy, the tool version and the
 * files and row count of each report. The metadata holds no clock time, so
 * the same inputs give the same file.
 *
 * XLSX outputs go to one workbook per run (`<dir>/tracebook.xlsx`, or the
 * spec's `workbook.file`; `_<window label>` before `.xlsx` in a window),
 * one sheet per report. This file writes its About sheet's rows from the DB
 * (the inputs and their sizes, ranks and devices, the window, the metrics
 * policies, the load's warnings, the version, the units, the session start
 * taken from the data, which is also the workbook's creation time so that the
 * same inputs give the same bytes) and hands the writer (output/xlsx_out.c)
 * plain text and column names only. The workbook is put in place after the
 * last report, so a failed run leaves none.
 *
 * HTML outputs go to one page per run the same way (`<dir>/report.html`, or
 * the spec's `html.file`), a section per report in the order the reports
 * run (spec order), headed by the same facts as the About sheet with the
 * load's warnings apart (output/html_out.c). A section names the report's
 * CSV when the report writes one, for the rows a long table leaves out.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db/open.h"
#include "output/output.h"
#include "query/file_ids.h"
#include "query/runner.h"
#include "query/window.h"
#include "report/advisor.h"
#include "report/baseline.h"
#include "report/manifest.h"
#include "report/report.h"
#include "spec/msprof_reports.h"
#include "scale/scale.h"
#include "session/session.h"
#include "spec/spec.h"
#include "util/sort.h"
#include "util/tempname.h"
#include "tracebook/db.h"
#include "tracebook/error.h"
#include "tracebook/load.h"
#include "tracebook/report.h"
#include "util/dirs.h"

typedef struct about_rows {
    xlsx_pair *v;
    size_t n, cap;
} about_rows;

typedef struct job_state {
    tb_report_job *job;
    sqlite3 *db;              /* the session's connection */
    const char *db_path;      /* the session's DB */
    const tb_window *window;  /* the run's */
    const char *const *in;    /* the session's inputs */
    size_t n_in;
    /* read before the run (the connection is the runner's while it runs):
     * the data's start, the inputs of the shards a DB was merged from, the
     * About sheet's rows of the DB, the processes */
    int64_t start;
    char *shard_in;
    about_rows facts;
    file_ids inputs;          /* files the outputs must not replace */
    json_t *reports;         /* array of per-report objects */
    json_t *current;         /* the object of the report being run */
    xlsx_book *book;         /* the run's workbook, made by the first xlsx sheet */
    char *book_path;         /* its final path (owned) */
    tb_sink *sheet;          /* the xlsx sink open now (owned by the runner) */
    xlsx_cond *conds;        /* the open sheet's conditional formats (owned) */
    html_page *page;         /* the run's HTML page, made by the first html section */
    char *page_path;         /* its final path (owned) */
    tb_sink *section;        /* the html sink open now (owned by the runner) */
    char *full_file;         /* the open section's CSV name (owned) */
    json_t *skipped_notes;   /* reports skipped, for the About sheet */
    advisor *adv;            /* the findings of the run's advisor rules, or NULL: it has none */
    const tb_spec_report *adv_wrapped; /* the rule whose first sink the advisor wraps already */
    baseline *bl;             /* --base: the base run's rows of the baseline reports, or NULL */
    tb_error *err;
} job_state;

/* The object for rep in js->reports, made on first use. */
static json_t *report_obj(job_state *js, const tb_spec *spec, const tb_spec_report *rep)
{
    if (js->current && !strcmp(json_string_value(json_object_get(js->current, "id")), rep->id))
        return js->current;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(rep->id));
    json_object_set_new(o, "title", json_string(rep->title ? rep->title : rep->id));
    if (spec)
        json_object_set_new(o, "spec", json_string(spec->path));
    if (rep->use)
        json_object_set_new(o, "builtin", json_string(rep->use));
    json_object_set_new(o, "files", json_array());
    json_array_append_new(js->reports, o);
    js->current = o;
    return o;
}

/* ---- the workbook ---------------------------------------------------------- */

/* A growable list of About rows (owned strings). */

static int about_add(about_rows *a, const char *key, const char *value)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        xlsx_pair *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    char *k = strdup(key), *val = strdup(value ? value : "");
    if (!k || !val) {
        free(k);
        free(val);
        return -1;
    }
    a->v[a->n++] = (xlsx_pair){.key = k, .value = val};
    return 0;
}

static void about_free(about_rows *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free((char *)a->v[i].key);
        free((char *)a->v[i].value);
    }
    free(a->v);
}

/* Adds the (key, value) rows of sql; a DB without the table adds none. Returns 0 or -1 (no memory). */
static int about_sql(about_rows *a, sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0), *v = (const char *)sqlite3_column_text(st, 1);
        rc = about_add(a, k ? k : "", v ? v : "");
    }
    sqlite3_finalize(st);
    return rc;
}


/* The About sheet's rows: what the run read and how it counted. */
static int about_build(const job_state *js, const char *label, int64_t start, about_rows *a)
{
    const tb_report_job *job = js->job;
    const tb_run_options *o = &job->run;
    char buf[512];
    if (about_add(a, "tracebook", tb_version()))
        return -1;
    if (start) {
        time_t t = (time_t)start;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC (from the data)", &tm);
    } else {
        snprintf(buf, sizeof buf, "unknown");
    }
    if (about_add(a, "session start", buf))
        return -1;
    snprintf(buf, sizeof buf,
             "time columns in %s (#,##0.000 with decimals, #,##0 in ns); ratio columns as percentages "
             "(0.00%%, stored as fractions); sizes in bytes; counts #,##0",
             tb_unit_name(o->unit));
    if (about_add(a, "units", buf))
        return -1;
    char text[200];
    window_text(js->window, text, sizeof text);
    if (js->window->set)
        snprintf(buf, sizeof buf, "%s (%s)", text, label && *label ? label : "-");
    else
        snprintf(buf, sizeof buf, "%s", text);
    if (about_add(a, "window", buf))
        return -1;
    for (size_t i = 0; i < o->n_specs; i++) {
        const tb_spec *sp = o->specs[i];
        if (about_add(a, "spec", sp->path) ||
            about_add(a, "step trace policy", sp->step_trace_policy ? sp->step_trace_policy : "torch_npu") ||
            about_add(a, "metrics options", sp->metrics_json ? sp->metrics_json : "defaults"))
            return -1;
    }
    /* a DB merged from shards names the inputs the shards loaded, as a run
     * over those inputs does: the workbook is the same either way */
    int shards = js->shard_in != NULL;
    for (const char *p = js->shard_in, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        snprintf(buf, sizeof buf, "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
        if (about_add(a, "input", buf))
            return -1;
    }
    for (size_t i = 0; !shards && i < js->n_in; i++)
        if (about_add(a, "input", js->in[i]))
            return -1;
    /* --base: what the baseline reports' rows are set beside */
    if (job->base && about_add(a, "base run", job->base_name ? job->base_name : "-"))
        return -1;
    for (size_t i = 0; i < js->facts.n; i++)
        if (about_add(a, js->facts.v[i].key, js->facts.v[i].value))
            return -1;
    return 0;
}

/* What the About sheet and the metadata read of the DB, before the run. */
static int about_facts(job_state *js)
{
    js->start = db_start_time(js->db);
    js->shard_in = scale_inputs(js->db);
    sqlite3 *db = js->db;
    return about_sql(&js->facts, db,
                     "SELECT 'file read', path || ' (' || kind || ', ' || bytes || ' bytes, rank ' || rankId || ')'"
                     " FROM TB_SOURCE WHERE kind IS NOT 'ignored' ORDER BY id") ||
           about_sql(&js->facts, db,
                     "SELECT 'rank ' || r.rankId, 'host ' || coalesce(r.hostName, '-') || ', devices ' ||"
                     " coalesce((SELECT group_concat(deviceId, ', ') FROM RANK_DEVICE_MAP m"
                     " WHERE m.rankId = r.rankId), '-') FROM TB_RANK r ORDER BY r.rankId") ||
           about_sql(&js->facts, db, "SELECT 'load warning', message FROM TB_WARNING ORDER BY rowid LIMIT 10000");
}

/* The run's workbook (html 0) or page (html 1): the specs' workbook.file or
 * html.file, else tracebook.xlsx or report.html; the window label before the
 * extension. */
static tb_status book_path(const job_state *js, const char *label, int html, char **out, tb_error *err)
{
    const tb_run_options *o = &js->job->run;
    const char *name = NULL, *from = NULL, *ext = html ? ".html" : ".xlsx";
    for (size_t i = 0; i < o->n_specs; i++) {
        const char *f = html ? o->specs[i]->html_file : o->specs[i]->workbook_file;
        if (!f)
            continue;
        if (name && strcmp(name, f))
            return tb_error_set(err, TB_ERR_USAGE, "specs %s and %s name different %s ('%s', '%s'): a run "
                                "writes one", from, o->specs[i]->path, html ? "pages" : "workbooks", name, f);
        name = f;
        from = o->specs[i]->path;
    }
    if (!name)
        name = html ? "report.html" : "tracebook.xlsx";
    size_t n = strlen(name);
    size_t stem = n > 5 && !strcmp(name + n - 5, ext) ? n - 5 : n;
    const char *tag = js->job->file_tag ? js->job->file_tag : "";
    size_t len = strlen(js->job->out_dir) + n + strlen(tag) + (label ? strlen(label) : 0) + 16;
    char *p = malloc(len);
    if (!p)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    snprintf(p, len, "%s/%.*s%s%s%s%s%s", js->job->out_dir, (int)stem, name, *tag ? "_" : "", tag,
             label && *label ? "_" : "", label ? label : "", ext);
    if (js->job->no_clobber && access(p, F_OK) == 0) {
        tb_status nc = tb_error_at(err, TB_ERR_USAGE, p, 0, 0, -1, "exists already (--no-clobber)");
        free(p);
        return nc;
    }
    *out = p;
    return TB_OK;
}

/* The sheet name a report asks for: xlsx.sheet, else its title, else its id. */
static const char *sheet_want(const tb_spec_report *r)
{
    return r->xlsx_sheet ? r->xlsx_sheet : r->title ? r->title : r->id;
}

/* Does report r of spec sp run and write format fmt (the runner's rule for a report's formats)? */
static int writes_fmt(const tb_run_options *o, const tb_spec *sp, const tb_spec_report *r, unsigned fmt)
{
    int wanted = !o->n_only;
    for (size_t i = 0; i < o->n_only && !wanted; i++)
        wanted = !strcmp(o->only[i], r->id);
    unsigned f = o->formats ? o->formats : r->outputs ? r->outputs : sp->outputs ? sp->outputs : TB_OUT_CSV;
    return wanted && (f & fmt);
}

#define writes_xlsx(o, sp, r) writes_fmt(o, sp, r, TB_OUT_XLSX)

/* Starts the run's workbook (once). */
static tb_status book_open(job_state *js, const char *label, tb_error *err)
{
    if (js->book)
        return TB_OK;
    tb_status rc = book_path(js, label, 0, &js->book_path, err);
    if (rc)
        return rc;
    if ((rc = file_ids_check(&js->inputs, js->book_path, err)))
        return rc;
    about_rows a = {0};
    int64_t start = js->start;
    if (about_build(js, label, start, &a)) {
        about_free(&a);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    int contents = 0;
    for (size_t i = 0; i < js->job->run.n_specs; i++)
        contents |= js->job->run.specs[i]->workbook_contents;
    rc = xlsx_create(js->book_path, &(xlsx_options){.about = a.v, .n_about = a.n, .created = start, .contents = contents},
                     &js->book, err);
    about_free(&a);
    /* the advisor's findings first, then workbook.sheets: those reports' sheets, in that order */
    const tb_run_options *o = &js->job->run;
    if (!rc && js->adv)
        rc = xlsx_sheet_reserve(js->book, ADVISOR_SHEET_KEY, ADVISOR_SHEET, err);
    for (size_t s = 0; s < o->n_specs && !rc; s++)
        for (size_t i = 0; i < o->specs[s]->n_workbook_sheets && !rc; i++)
            for (size_t k = 0; k < o->specs[s]->n_reports && !rc; k++) {
                const tb_spec_report *r = &o->specs[s]->reports[k];
                if (strcmp(r->id, o->specs[s]->workbook_sheets[i]) || !writes_xlsx(o, o->specs[s], r))
                    continue;
                rc = xlsx_sheet_reserve(js->book, r->id, sheet_want(r), err);
            }
    return rc;
}

static xlsx_chart_kind chart_kind(const char *t)
{
    static const struct { const char *name; xlsx_chart_kind kind; } kinds[] = {
        {"bar", XLSX_CHART_BAR},       {"stacked_bar", XLSX_CHART_STACKED_BAR},
        {"column", XLSX_CHART_COLUMN}, {"stacked_column", XLSX_CHART_STACKED_COLUMN},
        {"line", XLSX_CHART_LINE},     {"pie", XLSX_CHART_PIE},
    };
    for (size_t i = 0; t && i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(t, kinds[i].name))
            return kinds[i].kind;
    return XLSX_CHART_NONE;
}

/* Does sql alias a column "name:rank" (written only when several ranks are loaded)? */
static int rank_alias(const char *sql, const char *name)
{
    if (!sql || !name)
        return 0;
    size_t n = strlen(name);
    for (const char *p = strchr(sql, '"'); p; p = strchr(p + 1, '"'))
        if (!strncmp(p + 1, name, n) && !strncmp(p + 1 + n, ":rank\"", 6))
            return 1;
    return 0;
}

/* A report's sheet in the run's workbook. */
static tb_status open_sheet(job_state *js, const tb_spec_report *rep, const char *label, tb_sink **out, tb_error *err)
{
    tb_status rc = book_open(js, label, err);
    if (rc)
        return rc;
    free(js->conds);
    js->conds = NULL;
    if (rep->n_conds && !(js->conds = calloc(rep->n_conds, sizeof *js->conds)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    static const xlsx_cond_kind kinds[] = {XLSX_COND_THRESHOLD, XLSX_COND_TOP, XLSX_COND_DATA_BAR,
                                           XLSX_COND_COLOR_SCALE};
    static const xlsx_cond_op ops[] = {XLSX_OP_GT, XLSX_OP_GE, XLSX_OP_LT, XLSX_OP_LE, XLSX_OP_EQ, XLSX_OP_NE};
    for (size_t i = 0; i < rep->n_conds; i++)
        js->conds[i] = (xlsx_cond){.column = rep->conds[i].column, .kind = kinds[rep->conds[i].type],
                                   .op = ops[rep->conds[i].op], .value = rep->conds[i].value,
                                   .top = rep->conds[i].top};
    /* --base: a row per figure, which the report's chart and conditional formats do not fit */
    xlsx_sheet_options so = {
        .name = sheet_want(rep),
        .key = rep->id,
        .chart = {.kind = baseline_has(js->bl, rep) ? XLSX_CHART_NONE : chart_kind(rep->chart_type),
                  .categories = rep->chart_categories,
                  .values = (const char *const *)rep->chart_values, .n_values = rep->n_chart_values,
                  .below = rep->chart_below, .series_by = rep->chart_series_by,
                  .series_by_rank = rank_alias(rep->sql, rep->chart_series_by)},
        .conds = js->conds,
        .n_conds = baseline_has(js->bl, rep) ? 0 : rep->n_conds,
    };
    rc = xlsx_sheet_sink(js->book, &so, out, err);
    js->sheet = rc ? NULL : *out;
    return rc;
}

/* ---- the HTML page ---------------------------------------------------------- */

/* The page's heading: the first spec's html.title, else "tracebook report". */
static const char *page_title(const tb_run_options *o)
{
    for (size_t i = 0; i < o->n_specs; i++)
        if (o->specs[i]->html_title)
            return o->specs[i]->html_title;
    return "tracebook report";
}

/* Starts the run's page (once): the About sheet's rows, the load's warnings apart. */
static tb_status page_open(job_state *js, const char *label, tb_error *err)
{
    if (js->page)
        return TB_OK;
    tb_status rc = book_path(js, label, 1, &js->page_path, err);
    if (rc || (rc = file_ids_check(&js->inputs, js->page_path, err)))
        return rc;
    about_rows a = {0};
    const char **warn = NULL;
    xlsx_pair *facts = NULL;
    char units[200];
    snprintf(units, sizeof units, "time columns in %s; ratio columns in percent (0 to 100); sizes in bytes",
             tb_unit_name(js->job->run.unit));
    size_t n_warn = 0, n_facts = 0;
    if (about_build(js, label, js->start, &a) ||
        (a.n && (!(warn = calloc(a.n, sizeof *warn)) || !(facts = calloc(a.n, sizeof *facts))))) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < a.n; i++) {
        if (!strcmp(a.v[i].key, "load warning"))
            warn[n_warn++] = a.v[i].value;
        else if (!strcmp(a.v[i].key, "units"))
            facts[n_facts++] = (xlsx_pair){.key = "units", .value = units};
        else
            facts[n_facts++] = a.v[i];
    }
    rc = html_create(js->page_path,
                     &(html_options){.title = page_title(&js->job->run), .facts = facts, .n_facts = n_facts,
                                     .warnings = warn, .n_warnings = n_warn},
                     &js->page, err);
done:
    free(warn);
    free(facts);
    about_free(&a);
    return rc;
}

/* A report's section of the run's page. */
static tb_status open_section(job_state *js, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                              tb_sink **out, tb_error *err)
{
    tb_status rc = page_open(js, label, err);
    if (rc)
        return rc;
    free(js->full_file);
    js->full_file = NULL;
    if (writes_fmt(&js->job->run, spec, rep, TB_OUT_CSV)) {
        const char *tag = js->job->file_tag ? js->job->file_tag : "";
        size_t n = strlen(rep->id) + strlen(tag) + (label ? strlen(label) : 0) + 16;
        if (!(js->full_file = malloc(n)))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        snprintf(js->full_file, n, "%s%s%s%s%s.csv", rep->id, *tag ? "_" : "", tag, label && *label ? "_" : "",
                 label ? label : "");
    }
    html_section_options so = {
        .title = rep->title ? rep->title : rep->id,
        .description = baseline_has(js->bl, rep) ? BASE_TEXT : rep->description,
        .chart = {.kind = baseline_has(js->bl, rep) ? XLSX_CHART_NONE : chart_kind(rep->chart_type),
                  .categories = rep->chart_categories,
                  .values = (const char *const *)rep->chart_values, .n_values = rep->n_chart_values,
                  .series_by = rep->chart_series_by, .series_by_rank = rank_alias(rep->sql, rep->chart_series_by)},
        .full_file = js->full_file,
        .name = rep->id,
    };
    rc = html_section_sink(js->page, &so, out, err);
    js->section = rc ? NULL : *out;
    return rc;
}

static tb_status open_file_sink(job_state *js, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                const char *label, tb_sink **out, tb_error *err)
{
    *out = NULL;
    report_obj(js, spec, rep);
    if (format == TB_OUT_CONSOLE) {
        console_options co = {.title = rep->title ? rep->title : rep->id, .max_col_width = js->job->console_width};
        return console_sink_create(js->job->console ? js->job->console : stdout, &co, out, err);
    }
    if (format == TB_OUT_XLSX)
        return open_sheet(js, rep, label, out, err);
    if (format == TB_OUT_HTML)
        return open_section(js, spec, rep, label, out, err);
    const char *ext = format == TB_OUT_JSON ? "json" : "csv";
    const char *tag = js->job->file_tag ? js->job->file_tag : "";
    size_t n = strlen(js->job->out_dir) + strlen(rep->id) + strlen(tag) + (label ? strlen(label) : 0) + 16;
    char *path = malloc(n);
    if (!path)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    snprintf(path, n, "%s/%s%s%s%s%s.%s", js->job->out_dir, rep->id, *tag ? "_" : "", tag,
             label && *label ? "_" : "", label ? label : "", ext);
    if (js->job->no_clobber && access(path, F_OK) == 0) {
        tb_status nc = tb_error_at(err, TB_ERR_USAGE, path, 0, 0, -1, "exists already (--no-clobber)");
        free(path);
        return nc;
    }
    tb_status rc = file_ids_check(&js->inputs, path, err);
    if (rc) {
        free(path);
        return rc;
    }
    csv_sink_options co = {.slice_insert = js->job->msprof_slices ? strlen(rep->id) + 1 : 0,
                           .formula_safe = js->job->csv_safe};
    rc = format != TB_OUT_JSON ? csv_sink_create(path, &co, out, err)
         : rep->json_document   ? json_doc_sink_create(path, out, err)
                                : json_sink_create(path, NULL, out, err);
    free(path);
    return rc;
}

/* A report's sink; an advisor rule's first one goes through the advisor too, and with --base a
 * baseline report's through baseline_wrap (report/baseline.c). */
static tb_status open_sink(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                           const char *label, tb_sink **out, tb_error *err)
{
    job_state *js = ctx;
    tb_status rc = open_file_sink(js, spec, rep, format, label, out, err);
    if (!rc && *out && rep->advice && js->adv && js->adv_wrapped != rep) {
        js->adv_wrapped = rep;
        int sheet = *out == js->sheet;
        rc = advisor_wrap(js->adv, rep, *out, out, err);
        if (rc && sheet)
            js->sheet = NULL;
    }
    if (!rc && *out && js->bl) {
        tb_sink *inner = advisor_inner(*out);
        int sheet = inner == js->sheet, section = inner == js->section;
        if ((rc = baseline_wrap(js->bl, rep, *out, out, err)) && sheet)
            js->sheet = NULL;
        if (rc && section)
            js->section = NULL;
    }
    return rc;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void sink_done(void *ctx, const tb_spec_report *rep, tb_sink *sink)
{
    job_state *js = ctx;
    sink = advisor_inner(baseline_inner(sink));
    const char *const *paths = NULL;
    size_t n = sink_written(sink, &paths);
    json_t *o = report_obj(js, NULL, rep);
    json_t *files = json_object_get(o, "files");
    if (sink == js->sheet) {
        /* the workbook is listed now and put in place after the last report */
        json_t *sheets = json_array();
        for (size_t k = 0; xlsx_sink_sheet(sink, k); k++)
            json_array_append_new(sheets, json_string(xlsx_sink_sheet(sink, k)));
        json_array_append_new(files, json_string(base_name(js->book_path)));
        json_object_set_new(o, "sheets", sheets);
        js->sheet = NULL;
    }
    if (sink == js->section) {
        /* the page too is put in place after the last report */
        json_array_append_new(files, json_string(base_name(js->page_path)));
        js->section = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(files, json_string(base_name(paths[i])));
        if (js->job->written)
            js->job->written(js->job->run.ctx, paths[i]);
    }
}

static void report_done(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    job_state *js = ctx;
    json_t *o = report_obj(js, NULL, rep);
    if (skipped) {
        json_object_set_new(o, "skipped", json_string(skipped));
        char note[512];
        snprintf(note, sizeof note, "report '%s' skipped: %s", rep->id, skipped);
        json_array_append_new(js->skipped_notes, json_string(note));
    }
    else
        json_object_set_new(o, "rows", json_integer((json_int_t)rows));
    if (rep->advice && js->adv)
        advisor_ran(js->adv, rep, skipped, rows);
    js->current = NULL;
    /* the caller's own, for a progress display */
    if (js->job->run.report_done)
        js->job->run.report_done(js->job->run.ctx, rep, skipped, rows);
}

/* Is b a + "_" + a digit...: the name a split CSV or a window label gives a's files? */
static int shadows(const char *a, const char *b)
{
    size_t n = strlen(a);
    return !strncmp(a, b, n) && b[n] == '_' && b[n + 1] >= '0' && b[n + 1] <= '9';
}

/* Does the run run an advisor rule (a report with `advice:` that --report keeps)? */
static int runs_rules(const tb_run_options *o)
{
    int wanted;
    for (size_t a = 0; a < o->n_specs; a++)
        for (size_t i = 0; i < o->specs[a]->n_reports; i++)
            if (o->specs[a]->reports[i].advice) {
                wanted = !o->n_only;
                for (size_t k = 0; k < o->n_only && !wanted; k++)
                    wanted = !strcmp(o->only[k], o->specs[a]->reports[i].id);
                if (wanted)
                    return 1;
            }
    return 0;
}

/* Does a rule of the run write a file (csv, json or xlsx)? When every rule
 * writes to the console only, so does the advisor (it still counts). */
static int rules_write_files(const tb_run_options *o)
{
    for (size_t a = 0; a < o->n_specs; a++)
        for (size_t i = 0; i < o->specs[a]->n_reports; i++) {
            const tb_spec_report *r = &o->specs[a]->reports[i];
            unsigned f = o->formats ? o->formats : r->outputs ? r->outputs : o->specs[a]->outputs ? o->specs[a]->outputs
                                                                                                   : TB_OUT_CSV;
            int wanted = !o->n_only;
            for (size_t k = 0; k < o->n_only && !wanted; k++)
                wanted = !strcmp(o->only[k], r->id);
            if (r->advice && wanted && (f & ~(unsigned)TB_OUT_CONSOLE))
                return 1;
        }
    return 0;
}

/* The same report id twice would write the same files, and so would ids
 * like "a" and "a_1" (a's second CSV slice, or a's files in a window). */
static tb_status check_ids(const tb_run_options *o, tb_error *err)
{
    int rules = runs_rules(o);
    /* tracebook_run.json is the run's own: a report of that name would be written over */
    for (size_t a = 0; a < o->n_specs; a++)
        for (size_t i = 0; i < o->specs[a]->n_reports; i++) {
            const tb_spec_report *r = &o->specs[a]->reports[i];
            if (!strcmp(r->id, "tracebook_run"))
                return tb_error_at(err, TB_ERR_USAGE, r->pos.file, r->pos.line, r->pos.column, -1,
                                   "report id 'tracebook_run' names the run's metadata file "
                                   "tracebook_run.json: give the report another id");
            if (rules && (!strcmp(r->id, "advisor") || shadows("advisor", r->id)))
                return tb_error_at(err, TB_ERR_USAGE, r->pos.file, r->pos.line, r->pos.column, -1,
                                   "report id '%s' could name the advisor's files advisor.csv and advisor.json: "
                                   "give the report another id", r->id);
        }
    for (size_t a = 0; a < o->n_specs; a++)
        for (size_t i = 0; i < o->specs[a]->n_reports; i++)
            for (size_t b = 0; b < o->n_specs; b++)
                for (size_t k = 0; k < o->specs[b]->n_reports; k++)
                    if (shadows(o->specs[a]->reports[i].id, o->specs[b]->reports[k].id))
                        return tb_error_set(err, TB_ERR_USAGE,
                                            "report ids '%s' and '%s' could name the same file (split CSVs and "
                                            "window labels add _N to an id): rename '%s'",
                                            o->specs[a]->reports[i].id, o->specs[b]->reports[k].id,
                                            o->specs[b]->reports[k].id);
    for (size_t a = 0; a < o->n_specs; a++)
        for (size_t i = 0; i < o->specs[a]->n_reports; i++)
            for (size_t b = a; b < o->n_specs; b++)
                for (size_t k = b == a ? i + 1 : 0; k < o->specs[b]->n_reports; k++)
                    if (!strcmp(o->specs[a]->reports[i].id, o->specs[b]->reports[k].id))
                        return tb_error_set(err, TB_ERR_USAGE,
                                            "report id '%s' is used by %s and %s: give one of them another id",
                                            o->specs[a]->reports[i].id, o->specs[a]->path, o->specs[b]->path);
    return TB_OK;
}

/* The kind of a warning, from its text: the load's messages are fixed
 * sentences (docs/cli.md lists the kinds). */
static const char *warning_kind(const char *msg)
{
    static const struct {
        const char *has, *kind;
    } kinds[] = {
        {"input cut short", "cut short"},
        {"row skipped", "rows skipped"},
        {"of an unexpected shape skipped", "rows skipped"},
        {"precision lost", "precision lost"},
        {"not loaded (not in msprof's DB schema)", "tables not loaded"},
        {"with an unknown phase", "unknown phase"},
        {"nothing loaded", "nothing loaded"},
        {": not read", "nothing loaded"},
        {"both name rank", "ranks"},
        {"loaded as one rank", "ranks"},
        {"loaded once", "input given twice"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strstr(msg, kinds[i].has))
            return kinds[i].kind;
    return "other";
}

static void count_in(json_t *obj, const char *key)
{
    json_t *n = json_object_get(obj, key);
    json_object_set_new(obj, key, json_integer(n ? json_integer_value(n) + 1 : 1));
}

/*
 * The warnings of the run for its metadata: every TB_WARNING row of the DB
 * (the load's, with its source file, also when the DB came from the cache),
 * then the run's own (the specs'), counted per kind and per file, and the
 * sources that skipped rows or carry a note (a cut-short file). *count gets
 * the number of warnings. Returns new (NULL when out of memory).
 */
static json_t *warnings_obj(const job_state *js, uint64_t *count)
{
    const tb_report_job *job = js->job;
    json_t *o = json_object(), *kinds = json_object(), *files = json_object(), *load = json_array(),
           *run = json_array(), *sources = json_array();
    *count = 0;
    if (!o || !kinds || !files || !load || !run || !sources) {
        json_decref(o);
        json_decref(kinds);
        json_decref(files);
        json_decref(load);
        json_decref(run);
        json_decref(sources);
        return NULL;
    }
    sqlite3 *db = js->db;
    sqlite3_stmt *st;
    if (db) {
        if (sqlite3_prepare_v2(db, "SELECT s.path, w.message FROM TB_WARNING w LEFT JOIN TB_SOURCE s"
                                   " ON s.id = w.sourceId ORDER BY w.rowid", -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *file = (const char *)sqlite3_column_text(st, 0);
                const char *msg = (const char *)sqlite3_column_text(st, 1);
                const char *kind = warning_kind(msg ? msg : "");
                json_t *w = json_object();
                json_object_set_new(w, "file", file ? json_string(file) : json_null());
                json_object_set_new(w, "kind", json_string(kind));
                json_object_set_new(w, "message", json_string(msg ? msg : ""));
                json_array_append_new(load, w);
                count_in(kinds, kind);
                if (file)
                    count_in(files, file);
                (*count)++;
            }
            sqlite3_finalize(st);
        }
        if (sqlite3_prepare_v2(db, "SELECT path, rowsSkipped, note FROM TB_SOURCE WHERE kind NOT IN ('ignored',"
                                   " 'skipped') AND (rowsSkipped > 0 OR note IS NOT NULL) ORDER BY id",
                               -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *file = (const char *)sqlite3_column_text(st, 0);
                const char *note = (const char *)sqlite3_column_text(st, 2);
                json_t *s = json_object();
                json_object_set_new(s, "file", json_string(file ? file : ""));
                json_object_set_new(s, "rowsSkipped", json_integer(sqlite3_column_int64(st, 1)));
                json_object_set_new(s, "note", note ? json_string(note) : json_null());
                json_array_append_new(sources, s);
            }
            sqlite3_finalize(st);
        }
    }
    for (size_t i = 0; i < job->n_warnings; i++) {
        json_t *w = json_object();
        json_object_set_new(w, "kind", json_string("spec"));
        json_object_set_new(w, "message", json_string(job->warnings[i]));
        json_array_append_new(run, w);
        count_in(kinds, "spec");
        (*count)++;
    }
    json_object_set_new(o, "count", json_integer((json_int_t)*count));
    json_object_set_new(o, "kinds", kinds);
    json_object_set_new(o, "files", files);
    json_object_set_new(o, "load", load);
    json_object_set_new(o, "run", run);
    json_object_set_new(o, "sources", sources);
    return o;
}

/*
 * What the load did not take as written, for the run metadata: the layers
 * (processes) of a trace whose events only the generic TB_EVENT and
 * TB_COUNTER keep (TB_PROCESS.unrouted; a DB written before that column
 * has none), and per input the kernels whose type was taken from their
 * name (docs/inputs.md "Ascend layers", "Kernel types"). Returns new (NULL
 * when out of memory).
 */
static json_t *loading_obj(sqlite3 *db)
{
    json_t *o = json_object(), *layers = json_array();
    if (!o || !layers) {
        json_decref(o);
        json_decref(layers);
        return NULL;
    }
    sqlite3_stmt *st;
    if (db && sqlite3_prepare_v2(db,
                                 "SELECT p.rankId, p.pid, p.name, p.layer, p.unrouted,"
                                 " (SELECT s.path FROM TB_SOURCE s WHERE s.rankId IS p.rankId"
                                 "  AND s.kind IN ('ascend timeline', 'kineto') ORDER BY s.id LIMIT 1)"
                                 " FROM TB_PROCESS p WHERE p.unrouted > 0 ORDER BY p.rankId, p.name, p.pid",
                                 -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            json_t *l = json_object();
            const char *name = (const char *)sqlite3_column_text(st, 2);
            const char *file = (const char *)sqlite3_column_text(st, 5);
            json_object_set_new(l, "rank", json_integer(sqlite3_column_int64(st, 0)));
            json_object_set_new(l, "file", file ? json_string(file) : json_null());
            json_object_set_new(l, "pid", sqlite3_column_type(st, 1) == SQLITE_INTEGER
                                              ? json_integer(sqlite3_column_int64(st, 1))
                                              : json_string((const char *)sqlite3_column_text(st, 1)));
            json_object_set_new(l, "process", name ? json_string(name) : json_null());
            const char *layer = (const char *)sqlite3_column_text(st, 3);
            json_object_set_new(l, "layer", layer ? json_string(layer) : json_null());
            json_object_set_new(l, "events", json_integer(sqlite3_column_int64(st, 4)));
            json_array_append_new(layers, l);
        }
        sqlite3_finalize(st);
    }
    json_object_set_new(o, "layers_not_routed", layers);
    json_t *derived = json_array();
    if (derived && db &&
        sqlite3_prepare_v2(db,
                           "SELECT s.path, s.rankId, c.events FROM TB_LOAD_COUNT c JOIN TB_SOURCE s ON s.id = c.sourceId"
                           " WHERE c.dest = ?1 ORDER BY s.id",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, tb_dest_name(TB_DEST_DERIVED_TYPE), -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            json_t *d = json_object();
            const char *file = (const char *)sqlite3_column_text(st, 0);
            json_object_set_new(d, "file", json_string(file ? file : ""));
            json_object_set_new(d, "rank", sqlite3_column_type(st, 1) == SQLITE_NULL
                                               ? json_null()
                                               : json_integer(sqlite3_column_int64(st, 1)));
            json_object_set_new(d, "kernels", json_integer(sqlite3_column_int64(st, 2)));
            json_object_set_new(d, "rule", json_string("docs/inputs.md#kernel-types"));
            json_array_append_new(derived, d);
        }
        sqlite3_finalize(st);
    }
    if (derived)
        json_object_set_new(o, "derived_kernel_types", derived);
    return o;
}

static json_t *metadata(const job_state *js, const tb_run_options *o, const tb_run_result *res, json_t *reports)
{
    json_t *m = manifest_new();
    json_t *in = json_array();
    for (size_t i = 0; i < js->n_in; i++)
        json_array_append_new(in, json_string(js->in[i]));
    json_object_set_new(m, "inputs", in);
    json_object_set_new(m, "window", manifest_window(&o->window, res->window_label));
    json_object_set_new(m, "timeunit", json_string(tb_unit_name(o->unit)));
    json_t *specs = json_array();
    for (size_t i = 0; i < o->n_specs; i++) {
        const tb_spec *sp = o->specs[i];
        json_t *s = json_object();
        json_object_set_new(s, "path", json_string(sp->path));
        json_object_set_new(s, "kind", json_string(sp->msprof_reports ? "msprof reports file" : "tracebook spec"));
        json_t *jp = json_object();
        json_object_set_new(jp, "all_layers", json_boolean(sp->json_process.all));
        json_t *layers = json_array();
        for (size_t k = 0; k < sp->json_process.n_layers; k++)
            json_array_append_new(layers, json_string(sp->json_process.layers[k]));
        json_object_set_new(jp, "layers", layers);
        if (sp->json_process.fallback[0])
            json_object_set_new(jp, "fallback", json_string(sp->json_process.fallback));
        json_object_set_new(s, "json_process", jp);
        json_object_set_new(s, "step_trace_policy",
                            json_string(sp->step_trace_policy ? sp->step_trace_policy : "torch_npu"));
        json_array_append_new(specs, s);
    }
    json_object_set_new(m, "specs", specs);
    if (js->job->base)
        json_object_set_new(m, "base", json_string(js->job->base_name));
    json_object_set_new(m, "reports", json_incref(reports));
    /* a DB merged from shards: the processes that loaded its ranks */
    json_t *procs = scale_processes(js->db);
    if (procs)
        json_object_set_new(m, "processes", procs);
    json_t *ld = loading_obj(js->db);
    if (ld)
        json_object_set_new(m, "loading", ld);
    uint64_t n;
    json_t *w = warnings_obj(js, &n);
    if (w)
        json_object_set_new(m, "warnings", w);
    return m;
}

/* Does any report of the run write format fmt? */
static int wants_fmt(const tb_run_options *o, unsigned fmt)
{
    for (size_t s = 0; s < o->n_specs; s++)
        for (size_t k = 0; k < o->specs[s]->n_reports; k++)
            if (writes_fmt(o, o->specs[s], &o->specs[s]->reports[k], fmt))
                return 1;
    return 0;
}

#define wants_xlsx(o) wants_fmt(o, TB_OUT_XLSX)

/* The workbook's Advisor sheet (reserved first when the book opened): the
 * findings, when the run writes a workbook. */
static tb_status advisor_sheet(job_state *js, const tb_run_options *o, const char *label, tb_error *err)
{
    if (!wants_xlsx(o))
        return TB_OK;
    tb_sink *sheet = NULL;
    tb_status rc = book_open(js, label, err);
    if (!rc)
        rc = xlsx_sheet_sink(js->book, &(xlsx_sheet_options){.name = ADVISOR_SHEET, .key = ADVISOR_SHEET_KEY}, &sheet,
                             err);
    if (!rc)
        rc = advisor_write_sheet(js->adv, sheet, js->reports, o, err);
    sink_destroy(sheet);
    return rc;
}

/* Collects the files a report must not replace (the inputs, the specs and
 * the SQL files they read) and checks the metadata file's path against them;
 * meta_path gets that path. */
/* Is report id one the run was asked for (--report; all without it)? */
static int wanted(const tb_run_options *o, const char *id)
{
    for (size_t i = 0; i < o->n_only; i++)
        if (!strcmp(o->only[i], id))
            return 1;
    return !o->only;
}

/* DIR/<base>.csv of a report, and every file in DIR a split of it would
 * take (<base>_<k>.csv, or msprof's slice names with job->msprof_slices). */
static tb_status guard_csv(job_state *js, const tb_spec_report *rep, const char *base, tb_error *err)
{
    tb_status rc = file_ids_check_out(&js->inputs, js->job->out_dir, base, "csv", err);
    if (!rc)
        rc = file_ids_check_parts(&js->inputs, js->job->out_dir, base,
                                  js->job->msprof_slices ? strlen(rep->id) + 1 : 0, err);
    return rc;
}

/* The run's workbook and page, when it writes them, under the window's label. */
static tb_status guard_books(job_state *js, const tb_run_options *o, const char *label, tb_error *err)
{
    tb_status rc = TB_OK;
    for (int html = 0; html < 2 && !rc; html++) {
        char *path = NULL;
        if (!wants_fmt(o, html ? TB_OUT_HTML : TB_OUT_XLSX))
            continue;
        if (!(rc = book_path(js, label, html, &path, err)))
            rc = file_ids_check(&js->inputs, path, err);
        free(path);
    }
    return rc;
}

/* The advisor's advisor[_<label>].csv and .json, when a rule of the run
 * writes files, and the --keep-db copy of the trace DB. */
static tb_status guard_run_files(job_state *js, const tb_run_options *o, const char *label, tb_error *err)
{
    tb_status rc = TB_OK;
    if (runs_rules(o) && rules_write_files(o)) {
        char base[64];
        snprintf(base, sizeof base, "advisor%s%s", *label ? "_" : "", label);
        rc = file_ids_check_out(&js->inputs, js->job->out_dir, base, "csv", err);
        if (!rc)
            rc = file_ids_check_out(&js->inputs, js->job->out_dir, base, "json", err);
    }
    if (!rc && js->job->keep_db) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", js->job->out_dir, TB_TRACE_DB_NAME);
        rc = file_ids_check(&js->inputs, path, err);
    }
    return rc;
}

/*
 * Each report's CSV and JSON files (in a window, with its label: the label
 * comes from the window's options alone), the parts a split CSV would
 * write, the run's workbook and page, the advisor's files and the kept
 * trace DB, checked against the inputs
 * before the first report runs, so that a run refused for one of its later
 * files has written none of its earlier ones into a folder it reads.
 * Opening each file checks it again.
 */
static tb_status guard_outputs(job_state *js, const tb_run_options *o, tb_error *err)
{
    const char *tag = js->job->file_tag ? js->job->file_tag : "";
    char label[48];
    window_label(&o->window, label, sizeof label);
    tb_status rc = TB_OK;
    for (size_t i = 0; i < o->n_specs && !rc; i++)
        for (size_t k = 0; k < o->specs[i]->n_reports && !rc; k++) {
            const tb_spec_report *rep = &o->specs[i]->reports[k];
            unsigned f = o->formats ? o->formats : tb_report_outputs(rep);
            if (!f)
                f = tb_spec_outputs(o->specs[i]) ? tb_spec_outputs(o->specs[i]) : TB_OUT_CSV;
            if (!wanted(o, rep->id))
                continue;
            /* the name open_file_sink gives: <id>[_<tag>][_<label>] */
            char *base = sqlite3_mprintf("%s%s%s%s%s", rep->id, *tag ? "_" : "", tag, *label ? "_" : "", label);
            if (!base)
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            if (f & TB_OUT_CSV)
                rc = guard_csv(js, rep, base, err);
            if ((f & TB_OUT_JSON) && !rc)
                rc = file_ids_check_out(&js->inputs, js->job->out_dir, base, "json", err);
            sqlite3_free(base);
        }
    if (!rc)
        rc = guard_books(js, o, label, err);
    return rc ? rc : guard_run_files(js, o, label, err);
}

static tb_status guard_inputs(job_state *js, const tb_run_options *o, char *meta_path, size_t n, tb_error *err)
{
    tb_status rc = check_ids(o, err);
    if (rc)
        return rc;
    if ((rc = file_ids_collect(&js->inputs, js->in, js->n_in, js->db_path, js->db, err)))
        return rc;
    /* the specs and the SQL files they read are the user's too */
    for (size_t i = 0; i < o->n_specs && !rc; i++)
        rc = file_ids_spec(&js->inputs, o->specs[i], err);
    if (rc)
        return rc;
    /* the metadata file too, before any report writes anything */
    snprintf(meta_path, n, "%s/tracebook_run.json", js->job->out_dir);
    if ((rc = file_ids_check(&js->inputs, meta_path, err)))
        return rc;
    return guard_outputs(js, o, err);
}

/* One workbook for the run, even when every report that wanted it was
 * skipped: the skips noted in it, then committed. */
static tb_status finish_book(job_state *js, const tb_run_options *o, const tb_run_result *res, tb_error *err)
{
    tb_status rc = TB_OK;
    if (!js->book && wants_xlsx(o) && (rc = book_open(js, res->window_label, err)))
        return rc;
    if (!js->book)
        return TB_OK;
    for (size_t i = 0; i < json_array_size(js->skipped_notes) && !rc; i++)
        rc = xlsx_note(js->book, json_string_value(json_array_get(js->skipped_notes, i)), err);
    if (rc || (rc = xlsx_commit(js->book, err)))
        return rc;
    if (js->job->written)
        js->job->written(js->job->run.ctx, js->book_path);
    return TB_OK;
}

/* One page for the run, as one workbook: the skips noted in it, then committed. */
static tb_status finish_page(job_state *js, const tb_run_options *o, const tb_run_result *res, tb_error *err)
{
    tb_status rc = TB_OK;
    if (!js->page && wants_fmt(o, TB_OUT_HTML) && (rc = page_open(js, res->window_label, err)))
        return rc;
    if (!js->page)
        return TB_OK;
    for (size_t i = 0; i < json_array_size(js->skipped_notes) && !rc; i++)
        rc = html_note(js->page, json_string_value(json_array_get(js->skipped_notes, i)), err);
    if (rc || (rc = html_commit(js->page, err)))
        return rc;
    if (js->job->written)
        js->job->written(js->job->run.ctx, js->page_path);
    return TB_OK;
}

/*
 * job->keep_db: a copy of the session's DB beside the reports
 * (TB_TRACE_DB_NAME), so that compare and history read the run folder with
 * its raw profiles gone: VACUUM INTO a temporary beside it, then renamed.
 */
static tb_status keep_trace_db(job_state *js, tb_error *err)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/%s", js->job->out_dir, TB_TRACE_DB_NAME);
    tb_status rc = file_ids_check(&js->inputs, path, err);
    if (rc)
        return rc;
    if (tempname_template(tmp, sizeof tmp, path) != 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot write: name too long");
    int fd = tempname_make(tmp, 0, NULL);
    if (fd < 0)
        return tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot write: %s", strerror(errno));
    /* mkstemp's 0600 becomes what the other outputs get */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask); /* when it fails the copy keeps 0600: still the user's */
    close(fd);
    sqlite3_stmt *q = NULL;
    /* VACUUM INTO attaches its target: the reports' connection allows no attachment, but for this */
    int attached = sqlite3_limit(js->db, SQLITE_LIMIT_ATTACHED, 1);
    int ok = sqlite3_prepare_v2(js->db, "VACUUM main INTO ?", -1, &q, NULL) == SQLITE_OK &&
             sqlite3_bind_text(q, 1, tmp, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(q) == SQLITE_DONE;
    if (!ok)
        rc = tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot write the trace DB: %s", sqlite3_errmsg(js->db));
    sqlite3_finalize(q);
    sqlite3_limit(js->db, SQLITE_LIMIT_ATTACHED, attached);
    if (!rc && rename(tmp, path) != 0)
        rc = tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot write: %s", strerror(errno));
    if (rc)
        unlink(tmp);
    tb_temp_unregister(tmp);
    if (!rc && js->job->written)
        js->job->written(js->job->run.ctx, path);
    return rc;
}

/* tracebook_run.json. The metadata goes with files: when every report wrote
 * only to the console there is nothing to describe; when some were skipped,
 * the file says why. */
static tb_status write_metadata(job_state *js, const tb_run_options *o, const tb_run_result *res, char *meta_path,
                                size_t n, tb_error *err)
{
    const tb_report_job *job = js->job;
    int any_file = js->book != NULL || js->page != NULL || (js->adv && advisor_wrote(js->adv)) || job->keep_db,
        any_skipped = 0;
    for (size_t i = 0; i < json_array_size(js->reports); i++) {
        json_t *r = json_array_get(js->reports, i);
        any_file |= json_array_size(json_object_get(r, "files")) > 0;
        any_skipped |= json_object_get(r, "skipped") != NULL;
    }
    if (!any_file && !any_skipped)
        return TB_OK;
    json_t *m = metadata(js, o, res, js->reports);
    if (js->book)
        json_object_set_new(m, "workbook", json_string(base_name(js->book_path)));
    if (js->adv && advisor_wrote(js->adv))
        json_object_set_new(m, "advisor", advisor_manifest(js->adv));
    if (js->page)
        json_object_set_new(m, "page", json_string(base_name(js->page_path)));
    if (job->keep_db) {
        /* named for its readers (tb_run_inputs) and, under "files", for the scanner */
        json_object_set_new(m, "trace_db", json_string(TB_TRACE_DB_NAME));
        json_object_set_new(m, "outputs", json_pack("{s:[s]}", "files", TB_TRACE_DB_NAME));
    }
    if (job->keep_listings)
        manifest_keep_earlier(m, job->out_dir);
    tb_status rc = manifest_write(job->out_dir, m, &js->inputs, meta_path, n, err);
    json_decref(m);
    if (!rc && job->written)
        job->written(job->run.ctx, meta_path);
    return rc;
}

tb_status report_job_write(tb_session *s, tb_report_job *job, const tb_window *w, tb_run_result *res, tb_error *err)
{
    job_state js = {.job = job, .reports = json_array(), .skipped_notes = json_array(), .err = err};
    memset(res, 0, sizeof *res);
    if (!(js.db = session_db(s, err))) {
        json_decref(js.reports);
        json_decref(js.skipped_notes);
        return err->code;
    }
    js.db_path = tb_session_db_path(s);
    js.window = w;
    js.in = tb_session_inputs(s, &js.n_in);
    const tb_spec **specs = NULL;
    tb_spec *summaries = NULL;
    tb_run_options o = job->run;
    o.db = js.db;
    o.db_name = js.db_path;
    o.window = *w;
    if (!js.reports || !js.skipped_notes) {
        json_decref(js.reports);
        json_decref(js.skipped_notes);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    tb_status rc = TB_OK;
    int dir_fd = -1;
    char meta_path[4200];
    /* an msprof reports file runs msprof's summaries (report/msprof_reports.c) */
    if ((rc = msprof_reports_expand(o.specs, o.n_specs, &specs, &summaries, job->run.note, job->run.ctx, err)))
        goto done;
    if (summaries) {
        o.specs = specs;
        o.n_specs++;
    }
    /* --base: both runs' rows of the baseline reports, matched before any file is written */
    if ((rc = guard_inputs(&js, &o, meta_path, sizeof meta_path, err)) ||
        (job->base && (rc = baseline_collect(job->base, job->base_name, &o, session_replay(s), &js.bl, err))) ||
        (rc = out_dir_make(job->out_dir, err)))
        goto done;
    /* two runs into one folder take turns (a lock on the folder itself, so
     * nothing is left in it): their files and tracebook_run.json never mix */
    dir_fd = out_dir_lock(job->out_dir, job->run.note, job->run.ctx);
    o.open_sink = open_sink;
    o.sink_ctx = &js;
    o.sink_done = sink_done;
    o.report_done = report_done;
    /* only a workbook's About sheet and a page's headline read them */
    if ((wants_xlsx(&o) || wants_fmt(&o, TB_OUT_HTML)) && about_facts(&js)) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (runs_rules(&o) && !(js.adv = advisor_new())) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    rc = runner_run(&o, &(run_part){.replay = session_replay(s)}, res, err);
    if (rc)
        goto done;
    if (js.adv && advisor_n_rules(js.adv) &&
        ((rc = advisor_write(js.adv, rules_write_files(&o), job->out_dir, res->window_label, js.reports, &o,
                             &js.inputs, res->findings, job->written, job->run.ctx, err)) ||
         (rc = advisor_sheet(&js, &o, res->window_label, err))))
        goto done;
    json_decref(warnings_obj(&js, &res->warnings));
    if ((rc = finish_book(&js, &o, res, err)) || (rc = finish_page(&js, &o, res, err)))
        goto done;
    if (job->keep_db && (rc = keep_trace_db(&js, err)))
        goto done;
    rc = write_metadata(&js, &o, res, meta_path, sizeof meta_path, err);
done:
    if (dir_fd >= 0)
        close(dir_fd); /* releases the lock */
    xlsx_destroy(js.book);
    advisor_free(js.adv);
    baseline_free(js.bl);
    free(js.book_path);
    html_destroy(js.page);
    free(js.page_path);
    free(js.full_file);
    free(js.conds);
    json_decref(js.skipped_notes);
    json_decref(js.reports);
    file_ids_free(&js.inputs);
    free(js.shard_in);
    about_free(&js.facts);
    free(specs);
    tb_spec_free(summaries);
    return rc;
}

tb_status tb_report_write(tb_session *s, tb_report_job *job, tb_run_result *res, tb_error *err)
{
    return report_job_write(s, job, tb_session_window(s), res, err);
}

tb_status tb_query_write(tb_session *s, const tb_query_job *job, uint64_t *rows, tb_error *err)
{
    tb_sink *sink = NULL;
    tb_status rc;
    tb_run_options run = job->run;
    if (!(run.db = session_db(s, err)))
        return err->code;
    run.db_name = tb_session_db_path(s);
    run.window = *tb_session_window(s);
    spool sp = {0};
    const char *target = job->out_path;
    if (target) {
        file_ids ids = {0};
        rc = file_ids_collect(&ids, NULL, 0, run.db_name, run.db, err);
        if (!rc)
            rc = file_ids_check(&ids, target, err);
        file_ids_free(&ids);
        if (rc)
            return rc;
        (void)dirs_make(target, 0, 0777); /* a failure is the file's, said by its writer */
    }
    if (job->format == TB_OUT_CONSOLE) {
        console_options co = {.max_rows = job->max_rows, .max_col_width = job->console_width};
        rc = console_sink_create(job->out ? job->out : stdout, &co, &sink, err);
    } else {
        /* csv/json to a stream: spooled, so that an error never leaves half a result on it */
        if (!target && (rc = spool_open(&sp, "tracebook-query", "result", err)))
            return rc;
        if (!target)
            target = sp.path;
        rc = job->format == TB_OUT_JSON ? json_sink_create(target, NULL, &sink, err)
                                        : csv_sink_create(target,
                                                          &(csv_sink_options){.rows_per_file = SIZE_MAX,
                                                                              .formula_safe = job->csv_safe},
                                                          &sink, err);
    }
    if (!rc)
        rc = tb_query_run(&run, job->sql, sink, rows, err);
    sink_destroy(sink);
    tb_status sent = spool_close(&sp, job->out ? job->out : stdout, !rc, "the query result", err);
    return rc ? rc : sent;
}
