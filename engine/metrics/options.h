/* SPDX-License-Identifier: MIT */
/*
 * options.h - the `metrics:` section of a spec, parsed once into a typed
 * struct, and the table of every option it may hold.
 *
 * The computed tables read their options from a tb_metrics_options: no
 * table parses text at run time. The spec loader (report/spec.c) walks the
 * spec's `metrics:` mapping against metrics_option_table, so that every
 * unknown key, wrong type or value is reported when the spec loads, at its
 * file, line and column, and fills the struct through the offsets the
 * table gives. The option names, their kinds and their defaults are stated
 * here once; docs/metrics.md ("Options") lists the same.
 */
#ifndef TB_METRICS_OPTIONS_H
#define TB_METRICS_OPTIONS_H

#include <stddef.h>

/* metrics.step_trace.policy (metrics.md's table of policies). */
typedef enum metrics_policy {
    METRICS_TORCH_NPU,
    METRICS_TORCH_NPU_TEXT,
    METRICS_MSPROF_ANALYZE,
    METRICS_MINDSPORE
} metrics_policy;

/* metrics.classes.comm_stream_rule: when a stream is communication-only. */
typedef enum metrics_stream_rule { METRICS_STREAM_ALL, METRICS_STREAM_ANY, METRICS_STREAM_NONE } metrics_stream_rule;

/* metrics.cluster.rank_source: where the cluster step trace's rank rows come from. */
typedef enum metrics_rank_source {
    METRICS_SOURCE_AUTO,
    METRICS_SOURCE_COMPUTED,
    METRICS_SOURCE_STEP_CSV,
    METRICS_SOURCE_CLUSTER_CSV
} metrics_rank_source;

/* A name-pattern option (classes.h syntax). */
typedef struct metrics_patterns {
    int set;        /* 0: not given (or null): the table's default applies */
    char **v;       /* owned, n strings */
    size_t n;       /* 0 with set: `[]`, which matches nothing */
} metrics_patterns;

/* The parsed section; metrics_options_init gives the defaults. */
typedef struct tb_metrics_options {
    int policy;                        /* step_trace.policy: metrics_policy */
    metrics_patterns compute_exclude;  /* classes.compute_exclude */
    metrics_patterns receive;          /* classes.receive */
    int comm_stream_rule;              /* classes.comm_stream_rule: metrics_stream_rule */
    struct {
        int round_us, drop_last_step, linked_only;
        int stream_events;             /* hta.stream_events: HTA's rule, host events with a stream are GPU work */
        double kernel_wait_us;
        metrics_patterns communication, memory; /* hta.classes.* */
    } hta;
    struct {
        int linked_only;
        metrics_patterns communication, memory; /* exposed.classes.* */
    } exposed;
    int rank_source;                   /* cluster.rank_source: metrics_rank_source */
} tb_metrics_options;

typedef tb_metrics_options metrics_options;

/* Fills o with the defaults (owns nothing yet). */
void metrics_options_init(metrics_options *o);

/* Frees what o owns and makes it the defaults again; accepts NULL. */
void metrics_options_finish(metrics_options *o);

/* 1 when a and b select the same options (NULL stands for the defaults). */
int metrics_options_equal(const metrics_options *a, const metrics_options *b);

/* The defaults (static). */
const metrics_options *metrics_options_default(void);

/* ---- the table of options, for the spec loader ---- */

typedef enum metrics_option_kind {
    METRICS_OPT_SECTION,  /* a mapping of further options (sub) */
    METRICS_OPT_BOOL,     /* true/false into an int */
    METRICS_OPT_NUMBER,   /* a finite number >= 0 into a double */
    METRICS_OPT_CHOICE,   /* one of values (text) into an int: its index */
    METRICS_OPT_PATTERNS  /* a pattern or a list of patterns into a metrics_patterns */
} metrics_option_kind;

typedef struct metrics_option_def {
    const char *key;                         /* NULL ends a table */
    metrics_option_kind kind;
    const struct metrics_option_def *sub;    /* METRICS_OPT_SECTION */
    const char *const *values;               /* METRICS_OPT_CHOICE, NULL-terminated */
    size_t offset;                           /* into metrics_options (not for sections) */
} metrics_option_def;

/* The top-level keys of `metrics:` (static, ends with key NULL). */
extern const metrics_option_def metrics_option_table[];

/* The keys of a table level, NULL-terminated, into names (room for cap, the last NULL included). */
void metrics_option_keys(const metrics_option_def *level, const char **names, size_t cap);

/* The name of a choice value, e.g. metrics_choice_name(step_trace policies, METRICS_MINDSPORE). */
extern const char *const metrics_policy_names[];
extern const char *const metrics_stream_rule_names[];
extern const char *const metrics_rank_source_names[];

#endif
