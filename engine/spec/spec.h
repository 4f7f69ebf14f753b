/* SPDX-License-Identifier: MIT */
/*
 * spec.h - a loaded spec as the report stage reads it (private to the engine).
 *
 * tracebook/spec.h keeps tb_spec and tb_spec_report opaque: callers list
 * reports through accessors. The loader (spec.c) fills these structs; the
 * runner, the report job, the timeline export and msprof's rules read them.
 */
#ifndef TB_REPORT_SPEC_H
#define TB_REPORT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/spec.h"

/* Per-column options of a report, keyed by the column's base name (no type suffix). */
typedef struct tb_spec_column {
    char *name;
    char *header;    /* replaces the written header, or NULL */
    char *format;    /* spreadsheet number format, or NULL */
    int width;       /* spreadsheet column width in characters, 0 = automatic */
    tb_spec_pos pos;
} tb_spec_column;

/* xlsx.conditional: one conditional format on a column's data cells. */
typedef enum tb_cond_type { TB_COND_THRESHOLD, TB_COND_TOP, TB_COND_DATA_BAR, TB_COND_COLOR_SCALE } tb_cond_type;
typedef enum tb_cond_op { TB_COND_GT, TB_COND_GE, TB_COND_LT, TB_COND_LE, TB_COND_EQ, TB_COND_NE } tb_cond_op;

typedef struct tb_spec_cond {
    char *column;        /* base name */
    tb_cond_type type;
    tb_cond_op op;       /* threshold */
    double value;        /* threshold: in the column's written unit (a ratio 0..100) */
    int top;             /* top: how many cells, 1..1000 */
    tb_spec_pos pos;
} tb_spec_cond;

/* One sort key: a column's base name, descending when desc. */
typedef struct tb_spec_sort {
    char *column;
    int desc;
    tb_spec_pos pos;
} tb_spec_sort;

/* compare: `normalize:` steps applied to a key's text before rows are matched. */
enum { TB_NORM_TEMPLATE_ARGS = 1u << 0, TB_NORM_HASHES = 1u << 1, TB_NORM_TRAILING_NUMBERS = 1u << 2 };

/* compare: one `regressions:` rule on a numeric column. */
/* history: a night's change must pass TB_RULE_MAD scaled MADs of the TB_RULE_NIGHTS nights before it */
#define TB_RULE_MAD 3.0
#define TB_RULE_NIGHTS 8
/* the default rules: a row counting its calls needs this many on both sides */
#define TB_RULE_MIN_COUNT 10

typedef struct tb_spec_rule {
    char *column;        /* base name */
    int worse_lower;     /* 1: a lower value is worse; 0: a higher one */
    double rel;          /* relative threshold, a fraction (0.05 for 5%); 0 = none */
    double abs;          /* absolute threshold: ns when abs_time, else in the column's written unit; 0 = none */
    int abs_time;        /* abs was given with a time unit (10us) */
    int64_t min_count;   /* the row's Count/Calls must reach this in both runs; 0 = any */
    double mad;          /* history: the change must also pass this many scaled MADs of the last nights */
    int64_t nights;      /* history: how many earlier nights the median and MAD are taken over */
    tb_spec_pos pos;
} tb_spec_rule;

/* `advice:` (docs/advisor.md): the report is an advisor rule; its rows are
 * the evidence of one finding. The threshold is the report's param
 * `threshold` (its SQL reads :threshold). */
typedef struct tb_spec_advice {
    tb_severity severity;
    char *reason;        /* why it matters */
    char *message;       /* the finding, with {Column} (the first evidence row's value) and {#} (the row count) */
    char *suggestion;    /* what to do */
    char *source;        /* where the rule comes from, or NULL */
    tb_spec_pos pos;         /* the `advice:` key */
    tb_spec_pos message_pos; /* the message's value */
} tb_spec_advice;

struct tb_spec_report {
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
    int json_document;   /* `json_shape: document`: the json output is the one cell's JSON text, not rows */
    tb_scope scope;      /* `scope:`: every rank at once, or each rank alone (tracebook/spec.h) */
    tb_spec_column *columns;
    size_t n_columns;
    char *xlsx_sheet;    /* NULL = title */
    char *chart_type;    /* xlsx chart: "bar", "stacked_bar", "column", "stacked_column", "line", "pie", or NULL */
    char *chart_categories;  /* a column's base name, or NULL */
    char **chart_values;     /* base names: one series each (a pie has one) */
    size_t n_chart_values;
    int chart_below;         /* chart.position below: under the table, sized to its categories */
    char *chart_series_by;   /* a line chart: a series per distinct value of this column (base name), or NULL */
    tb_spec_cond *conds;     /* xlsx.conditional, in file order */
    size_t n_conds;
    /* pivot: columns named by the data, after the SQL's: pivot_names lists their
     * names (one row each, in order); pivot_values, with :key bound to the row's
     * pivot_key column, gives (name, value) pairs for that row; pivot_missing
     * is written where a row has no value (NULL: an empty cell) */
    char *pivot_key, *pivot_names, *pivot_values, *pivot_missing;
    char **drop_empty;       /* base names of columns left out when empty (NULL) in every row */
    size_t n_drop_empty;
    char **key;              /* compare: the key columns' base names (NULL: the default key) */
    size_t n_key;
    unsigned normalize;      /* compare: TB_NORM_* mask */
    tb_spec_rule *rules;     /* compare: `regressions:` rules */
    size_t n_rules;
    int has_rules;           /* 1: `regressions:` given (even empty); 0: the default rules */
    int baseline;            /* `baseline: true`: with `report --base`, each row gains its figures' base
                                value, change and ratio (report/baseline.c) */
    tb_spec_advice *advice;  /* `advice:`, or NULL: a plain report */
    tb_spec_pos pos;
};

/* json_process: the timeline layers a spec selects (msprof semantics). */
typedef struct tb_json_process {
    int all;             /* 1: export every layer (no json_process, or a fallback) */
    char **layers;       /* keys set to true, in file order (when !all) */
    size_t n_layers;
    char fallback[256];  /* why msprof semantics fell back to all layers, or "" */
} tb_json_process;

struct tb_spec {
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
    char **workbook_sheets;   /* workbook.sheets: report ids whose sheets come first, in this order */
    size_t n_workbook_sheets;
    int workbook_contents;    /* workbook.contents: the About sheet lists every sheet, linked */
    unsigned outputs;         /* `outputs:` default formats; 0 = csv */
    char *html_file;          /* html.file: the page's file name, or NULL (report.html) */
    char *html_title;         /* html.title: the page's heading, or NULL */
};

#endif
