/* SPDX-License-Identifier: MIT */
/*
 * report.h - report specs and the runner that executes them over a unified DB.
 *
 * A spec (YAML or JSON, one language; docs/spec.md) names reports: SQL over
 * the unified DB's tables and views plus typed parameters and output choices.
 * tb_spec_load() parses and validates a spec file into a tb_spec; every
 * problem is reported with the spec's file, line and column. tb_report_run()
 * opens the DB read-only, applies the iteration window, runs each report in
 * a sandbox and hands the rows to the writers (engine/output/).
 */
#ifndef TRACEBOOK_REPORT_H
#define TRACEBOOK_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

/* Column types carried by an alias suffix ("Total Time:dur_ns"). */
typedef enum tb_col_type {
    TB_COL_PLAIN = 0,
    TB_COL_DUR_NS,    /* a duration in ns: converted by --timeunit, "(us)" in the header */
    TB_COL_TS_NS,     /* a timestamp in ns: converted by --timeunit */
    TB_COL_RATIO_PCT, /* a percentage 0..100: header gets "(%)" */
    TB_COL_MEM_B      /* a size in bytes: header gets "(B)" */
} tb_col_type;

/* Output formats (a bit mask). */
enum tb_out_format {
    TB_OUT_CSV = 1u << 0,
    TB_OUT_JSON = 1u << 1,
    TB_OUT_XLSX = 1u << 2,
    TB_OUT_CONSOLE = 1u << 3
};

/* --timeunit: the unit typed time columns are written in. */
typedef enum tb_time_unit { TB_UNIT_NS = 0, TB_UNIT_US = 3, TB_UNIT_MS = 6, TB_UNIT_S = 9 } tb_time_unit;

/* The name of a time unit ("ns", "us", "ms", "s"); static. */
const char *tb_unit_name(tb_time_unit unit);

typedef enum tb_param_type { TB_PARAM_INT, TB_PARAM_REAL, TB_PARAM_TEXT, TB_PARAM_BOOL } tb_param_type;

/* A place in a spec file: file is borrowed from the owning tb_spec (its path). */
typedef struct tb_spec_pos {
    const char *file;
    long line;   /* 1-based, 0 when unknown */
    long column; /* 1-based, 0 when unknown */
} tb_spec_pos;

/* A typed parameter with its current value (the default, or an override). */
typedef struct tb_param {
    char *name;
    tb_param_type type;
    int has_value;   /* 0: no default and not given (an error when a report needs it) */
    int64_t i;       /* INT and BOOL (0/1) */
    double d;        /* REAL */
    char *s;         /* TEXT */
    char *help;      /* may be NULL */
    tb_spec_pos pos;
} tb_param;

/* Per-column options of a report, keyed by the column's base name (no type suffix). */
typedef struct tb_spec_column {
    char *name;
    char *header;    /* replaces the written header, or NULL */
    char *format;    /* spreadsheet number format, or NULL */
    int width;       /* spreadsheet column width in characters, 0 = automatic */
    tb_spec_pos pos;
} tb_spec_column;

/* One sort key: a column's base name, descending when desc. */
typedef struct tb_spec_sort {
    char *column;
    int desc;
    tb_spec_pos pos;
} tb_spec_sort;

typedef struct tb_spec_report {
    char *id;            /* file-name safe: [A-Za-z0-9_.-]+ */
    char *title;         /* defaults to id */
    char *description;   /* may be NULL */
    char *use;           /* `use: NAME`: the built-in report this one came from, or NULL */
    char *origin;        /* with use: the built-in file, "builtin:NAME.yaml"; positions taken from it point here */
    char **requires;     /* table names that must hold rows */
    size_t n_requires;
    char *sql;           /* the SQL text (from sql or sql_file) */
    tb_spec_pos sql_pos; /* where the SQL starts (line of sql:, or sql_file's line 1) */
    /* 1 when byte offsets in sql map onto the file: line k (0-based) of sql is
     * file line sql_pos.line + k, and its characters start at column
     * sql_pos.column on every line (a literal `|` block scalar, a plain scalar
     * on one line, sql_file). 0 otherwise (folded `>` blocks, quoted scalars,
     * multi-line plain scalars, JSON strings: escapes or line folding changed
     * the text, and only sql_pos itself is exact). */
    int sql_verbatim;
    char *sql_file;      /* resolved path, or NULL when inline */
    tb_param *params;    /* the report's own params (override the spec's) */
    size_t n_params;
    unsigned outputs;    /* tb_out_format mask; 0 = the spec's default outputs */
    tb_spec_sort *sort;
    size_t n_sort;
    int64_t limit;       /* -1 = no limit */
    int header_units;    /* 1: typed headers get their unit appended, 0: headers exactly as written */
    tb_spec_column *columns;
    size_t n_columns;
    char *xlsx_sheet;    /* NULL = title */
    char *chart_type;    /* xlsx chart: "bar", "column", "line", "pie", or NULL */
    char *chart_categories, *chart_values;
    tb_spec_pos pos;
} tb_spec_report;

/* json_process: the timeline layers a spec selects (msprof semantics). */
typedef struct tb_json_process {
    int all;             /* 1: export every layer (no json_process, or a fallback) */
    char **layers;       /* keys set to true, in file order (when !all) */
    size_t n_layers;
    char fallback[256];  /* why msprof semantics fell back to all layers, or "" */
} tb_json_process;

typedef struct tb_spec {
    char *path;               /* the spec file as given */
    int version;              /* `tracebook: N`; 0 for an msprof reports file */
    int msprof_reports;       /* 1: an msprof reports_sample_config.json (no tracebook key) */
    tb_json_process json_process;
    tb_param *params;         /* spec-wide params */
    size_t n_params;
    char *step_trace_policy;  /* metrics.step_trace.policy, NULL = default */
    char *metrics_json;       /* the `metrics` section as written, compact JSON, for display; or NULL */
    /* The `metrics` section, checked and parsed when the spec loaded (the
     * engine's own type, engine/metrics/options.h), or NULL: the defaults. */
    struct tb_metrics_options *metrics;
    tb_spec_report *reports;
    size_t n_reports;
    char *workbook_file;      /* workbook.file, or NULL */
    unsigned outputs;         /* `outputs:` default formats; 0 = csv */
} tb_spec;

/*
 * An iteration window: iterations [iteration_id, iteration_id + count - 1]
 * of model model_id; model 4294967295 is step mode (STEP_TIME). set = 0: the
 * whole run.
 */
typedef struct tb_window {
    int set;
    int64_t model_id;
    int64_t iteration_id;
    int64_t iteration_count;   /* >= 1 */
} tb_window;

/*
 * Rows leave the runner through a sink; the writers in engine/output/ are
 * sinks. A cell is one value of a row. Typed time columns converted by
 * --timeunit arrive as TB_CELL_INT with scale > 0: the value is i / 10^scale
 * and must be written exactly ("1234" ns at scale 3 is 1.234); every other
 * number has scale 0.
 */
typedef enum tb_cell_kind { TB_CELL_NULL, TB_CELL_INT, TB_CELL_REAL, TB_CELL_TEXT } tb_cell_kind;

typedef struct tb_cell {
    tb_cell_kind kind;
    int scale;        /* TB_CELL_INT only: decimal places, 0..9 */
    int64_t i;
    double d;
    const char *s;    /* TB_CELL_TEXT: borrowed, valid during the row call; not NUL-safe, use n */
    size_t n;
} tb_cell;

typedef struct tb_sink_column {
    const char *header;           /* the header to write (unit already applied) */
    tb_col_type type;
    const tb_spec_column *opt;    /* per-column options, or NULL (borrowed) */
} tb_sink_column;

typedef struct tb_sink tb_sink;
struct tb_sink {
    /* Called once before any row; cols are borrowed for the sink's life. */
    tb_status (*begin)(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err);
    /* One row of n cells (n as given to begin). */
    tb_status (*row)(tb_sink *s, const tb_cell *cells, tb_error *err);
    /* Completes the output: files are renamed into place only here. */
    tb_status (*finish)(tb_sink *s, tb_error *err);
    /* Frees the sink; when finish did not succeed, removes every temporary file. */
    void (*destroy)(tb_sink *s);
};

/*
 * Loads and validates a spec (YAML, or JSON when the file starts with '{' or
 * '[' after blanks). `use:` entries are expanded from the built-in reports.
 * Returns new (free with tb_spec_free) in *out. Errors carry the spec's
 * file, line and column and say what was expected. warn (may be NULL) gets
 * notes such as an msprof fallback reason.
 */
tb_status tb_spec_load(const char *path, tb_spec **out,
                       void (*warn)(void *ctx, const char *msg), void *ctx, tb_error *err);

/* Same from memory; name is used in messages and to resolve sql_file (its directory). */
tb_status tb_spec_load_mem(const char *name, const char *text, size_t len, tb_spec **out,
                           void (*warn)(void *ctx, const char *msg), void *ctx, tb_error *err);

/* Frees a spec (NULL is fine). */
void tb_spec_free(tb_spec *spec);

/* Built-in reports (the YAML files of reports/, embedded in the binary). */
typedef struct tb_builtin {
    const char *name;   /* file stem, e.g. "top_kernels" */
    const char *text;   /* the YAML text (static) */
} tb_builtin;

/* Returns the built-in report files (static array), *n set to their count. */
const tb_builtin *tb_builtins(size_t *n);

/* Returns the built-in report file named name, or NULL. */
const tb_builtin *tb_builtin_find(const char *name);

/*
 * Opens the sink for one output of one report. format is one tb_out_format
 * bit; label is the window's iteration label ("" without a window). Returns
 * the new sink in *out (the runner destroys it), or *out = NULL to skip the
 * format (a format this build does not write: say why through note).
 */
typedef tb_status (*tb_sink_open_fn)(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                     const char *label, tb_sink **out, tb_error *err);

typedef struct tb_run_options {
    const char *db_path;             /* a unified DB (opened read-only) */
    const tb_spec *const *specs;     /* borrowed */
    size_t n_specs;
    tb_window window;
    tb_time_unit unit;               /* typed time columns; TB_UNIT_US is msprof's */
    const char *const *params;       /* --param overrides: "name=value" or "report.name=value" */
    size_t n_params;
    unsigned formats;                /* --format: replaces every report's outputs; 0 = the spec's */
    int64_t max_steps;               /* SQLite VM step budget per report; 0 = default */
    const char *const *only;         /* run only the reports with these ids (NULL = all) */
    size_t n_only;
    tb_sink_open_fn open_sink;
    void *sink_ctx;
    void (*note)(void *ctx, const char *msg); /* skipped reports, fallbacks (may be NULL) */
    void *ctx;
    /* Optional, called with sink_ctx: after a sink finished (before it is
     * destroyed), and after each report, run or skipped (skipped: the
     * reason, else NULL). */
    void (*sink_done)(void *ctx, const tb_spec_report *rep, tb_sink *sink);
    void (*report_done)(void *ctx, const tb_spec_report *rep, const char *skipped, uint64_t rows);
} tb_run_options;

typedef struct tb_run_result {
    size_t reports_run;
    size_t reports_skipped;          /* `requires` not met */
    uint64_t rows;                   /* rows written, all reports */
    char window_label[48];           /* "" without a window */
} tb_run_result;

/* The default VM step budget of one report (about two minutes of SQLite work). */
#define TB_DEFAULT_MAX_STEPS 5000000000LL

/* The largest string or blob report SQL may make (bytes). */
#define TB_MAX_VALUE_BYTES (256 * 1024 * 1024)

/*
 * Runs every report of every spec, in order, over opt->db_path. Report SQL
 * runs on a read-only connection under an authorizer (SELECT only: no
 * writes, ATTACH, PRAGMA changes or extension loading) and a step budget.
 * Stops at the first failing report; outputs of earlier reports stay.
 */
tb_status tb_report_run(const tb_run_options *opt, tb_run_result *res, tb_error *err);

/*
 * Runs one ad-hoc SQL statement in the same sandbox, window and unit rules
 * as a report, writing to sink (borrowed; finish is called, destroy is not).
 */
tb_status tb_query_run(const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows, tb_error *err);

#endif
