/* SPDX-License-Identifier: MIT */
/*
 * spec.h - report specs: the spec language, its reports and parameters, and
 * the built-in reports.
 *
 * A spec (YAML or JSON, one language; docs/spec.md) names reports: SQL over
 * the unified DB's tables and views plus typed parameters and output choices.
 * tb_spec_load() parses and validates a spec file into a tb_spec; every
 * problem is reported with the spec's file, line and column. The language
 * knows nothing of running a spec: that is the query runtime's
 * (tracebook/query.h).
 */
#ifndef TRACEBOOK_SPEC_H
#define TRACEBOOK_SPEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/columns.h"
#include "tracebook/error.h"

/* --timeunit: the unit typed time columns are written in. */
typedef enum tb_time_unit { TB_UNIT_NS = 0, TB_UNIT_US = 3, TB_UNIT_MS = 6, TB_UNIT_S = 9 } tb_time_unit;

/* The name of a time unit ("ns", "us", "ms", "s"); static. */
const char *tb_unit_name(tb_time_unit unit);
/* The unit a name ("ns", "us", "ms", "s") stands for into *out: 0, or -1 for another name. */
int tb_unit_parse(const char *name, tb_time_unit *out);

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

/*
 * A loaded spec and its reports are opaque: the runner and the report job
 * read them; a caller lists them through the accessors below.
 */
typedef struct tb_spec tb_spec;
typedef struct tb_spec_report tb_spec_report;

/* The spec file as given (borrowed from spec). */
const char *tb_spec_path(const tb_spec *spec);
/* 1 when spec is an msprof reports_sample_config.json (it runs msprof's summaries). */
int tb_spec_is_msprof_reports(const tb_spec *spec);
/* The spec's default formats (`outputs:`; a tb_out_format mask, 0 = csv). */
unsigned tb_spec_outputs(const tb_spec *spec);
/* The number of reports of spec, and report i (0-based, borrowed; NULL past the end). */
size_t tb_spec_n_reports(const tb_spec *spec);
const tb_spec_report *tb_spec_report_at(const tb_spec *spec, size_t i);

/* A report's id, title (its id when it has none) and description (NULL when none); borrowed. */
const char *tb_report_id(const tb_spec_report *rep);
const char *tb_report_title(const tb_spec_report *rep);
const char *tb_report_description(const tb_spec_report *rep);
/* The tables that must hold rows for the report to run: count, and name i (borrowed). */
size_t tb_report_n_requires(const tb_spec_report *rep);
const char *tb_report_require(const tb_spec_report *rep, size_t i);
/* The report's own parameters: count, and parameter i (borrowed). */
size_t tb_report_n_params(const tb_spec_report *rep);
const tb_param *tb_report_param(const tb_spec_report *rep, size_t i);
/* The formats the report asks for itself (tb_out_format mask; 0: the spec's default outputs). */
unsigned tb_report_outputs(const tb_spec_report *rep);

/*
 * A report's scope (`scope:`, docs/spec.md#scope). TB_SCOPE_ALL: its SQL
 * sees every rank at once. TB_SCOPE_RANK: it runs on each rank alone (the
 * rank's rows only, its own computed tables, `sort` and `limit` per rank)
 * and the ranks' rows follow each other in rank order; so it can also run
 * where the ranks are: on each shard, or each MPI process (docs/scale-out.md).
 * TB_SCOPE_CLUSTER: its SQL reads only the cluster tables (cluster_step_
 * trace_time, slow_rank, ...), which are made from per-rank rows: over
 * shards, each shard makes its ranks' rows and the tables are made from
 * those gathered, never from every event at once.
 */
typedef enum tb_scope { TB_SCOPE_ALL = 0, TB_SCOPE_RANK = 1, TB_SCOPE_CLUSTER = 2 } tb_scope;
tb_scope tb_report_scope(const tb_spec_report *rep);

/*
 * The severity of an advisor rule's finding (`advice.severity`,
 * docs/advisor.md), in rising order.
 */
typedef enum tb_severity { TB_SEVERITY_INFO = 0, TB_SEVERITY_WARNING = 1, TB_SEVERITY_CRITICAL = 2 } tb_severity;
#define TB_N_SEVERITIES 3
/* "info", "warning", "critical" (static). */
const char *tb_severity_name(tb_severity s);
/* The severity named text, or -1 when none is. */
int tb_severity_parse(const char *text);
/* 1 when rep is an advisor rule (it has `advice:`); its severity in *sev when not NULL. */
int tb_report_advice(const tb_spec_report *rep, tb_severity *sev);

/*
 * Loads and validates a spec (YAML, or JSON when the file starts with '{' or
 * '[' after blanks). `use:` entries are expanded from the built-in reports;
 * a path `builtin:NAME` is the spec of one built-in report, else of every
 * report of a built-in file (`builtin:advisor`), as --spec takes it and as
 * tracebook_run.json records it.
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

/* TB_OK when a built-in report has the id; else TB_ERR_USAGE saying so and
 * naming the nearest id ("no built-in report 'x' (did you mean 'y'?); ..."). */
tb_status tb_builtin_report_check(const char *id, tb_error *err);

/* Writes the built-in reports to f (`tracebook reports`): with id NULL one
 * line each (id, title); else that report in full (description, file,
 * scope, requires, params, how to run it), or the error of
 * tb_builtin_report_check when no built-in has that id. */
tb_status tb_builtins_write(FILE *f, const char *id, tb_error *err);


/* A run's specs and the report ids it runs (only; NULL: all): */
/* 1 when every report of the specs that runs (all, or those named in only) is
 * rank- or cluster-scope: such a run needs no DB of every rank. */
int tb_specs_scoped(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only);
/* TB_OK when some spec has each id of only (an msprof reports file runs
 * summaries it does not list: any id passes with one); else TB_ERR_USAGE
 * naming the first missing id and the nearest id the specs have. */
tb_status tb_specs_check_only(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only,
                              tb_error *err);
/* How many reports of the specs run (for a progress count). */
size_t tb_specs_count(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only);
/* How many of those are advisor rules (reports with `advice:`). */
size_t tb_specs_rules(const tb_spec *const *specs, size_t n, const char *const *only, size_t n_only);
/* The outputs (TB_OUT_*) any of the specs or their reports declares. */
unsigned tb_specs_outputs(const tb_spec *const *specs, size_t n);

#endif
