/* SPDX-License-Identifier: MIT */
/*
 * options.c - the metrics options: defaults, equality, and the table the
 * spec loader checks a `metrics:` section against (see options.h).
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/options.h"

const char *const metrics_policy_names[] = {"torch_npu", "torch_npu_text", "msprof_analyze", "mindspore", NULL};
const char *const metrics_stream_rule_names[] = {"all", "any", "none", NULL};
const char *const metrics_rank_source_names[] = {"auto", "step_trace_time", "TB_STEP_TRACE_TIME",
                                                 "TB_CLUSTER_STEP_TRACE_TIME", NULL};

#define AT(field) offsetof(metrics_options, field)

static const metrics_option_def step_trace[] = {
    {"policy", METRICS_OPT_CHOICE, NULL, metrics_policy_names, AT(policy)},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def classes[] = {
    {"compute_exclude", METRICS_OPT_PATTERNS, NULL, NULL, AT(compute_exclude)},
    {"receive", METRICS_OPT_PATTERNS, NULL, NULL, AT(receive)},
    {"comm_stream_rule", METRICS_OPT_CHOICE, NULL, metrics_stream_rule_names, AT(comm_stream_rule)},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def hta_classes[] = {
    {"communication", METRICS_OPT_PATTERNS, NULL, NULL, AT(hta.communication)},
    {"memory", METRICS_OPT_PATTERNS, NULL, NULL, AT(hta.memory)},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def hta[] = {
    {"round_us", METRICS_OPT_BOOL, NULL, NULL, AT(hta.round_us)},
    {"drop_last_step", METRICS_OPT_BOOL, NULL, NULL, AT(hta.drop_last_step)},
    {"linked_only", METRICS_OPT_BOOL, NULL, NULL, AT(hta.linked_only)},
    {"kernel_wait_us", METRICS_OPT_NUMBER, NULL, NULL, AT(hta.kernel_wait_us)},
    {"stream_events", METRICS_OPT_BOOL, NULL, NULL, AT(hta.stream_events)},
    {"classes", METRICS_OPT_SECTION, hta_classes, NULL, 0},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def exposed_classes[] = {
    {"communication", METRICS_OPT_PATTERNS, NULL, NULL, AT(exposed.communication)},
    {"memory", METRICS_OPT_PATTERNS, NULL, NULL, AT(exposed.memory)},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def exposed[] = {
    {"linked_only", METRICS_OPT_BOOL, NULL, NULL, AT(exposed.linked_only)},
    {"classes", METRICS_OPT_SECTION, exposed_classes, NULL, 0},
    {NULL, 0, NULL, NULL, 0},
};

static const metrics_option_def cluster[] = {
    {"rank_source", METRICS_OPT_CHOICE, NULL, metrics_rank_source_names, AT(rank_source)},
    {NULL, 0, NULL, NULL, 0},
};

const metrics_option_def metrics_option_table[] = {
    {"step_trace", METRICS_OPT_SECTION, step_trace, NULL, 0},
    {"classes", METRICS_OPT_SECTION, classes, NULL, 0},
    {"hta", METRICS_OPT_SECTION, hta, NULL, 0},
    {"exposed", METRICS_OPT_SECTION, exposed, NULL, 0},
    {"cluster", METRICS_OPT_SECTION, cluster, NULL, 0},
    {NULL, 0, NULL, NULL, 0},
};

void metrics_option_keys(const metrics_option_def *level, const char **names, size_t cap)
{
    size_t n = 0;
    for (; level[n].key && n + 1 < cap; n++)
        names[n] = level[n].key;
    names[n] = NULL;
}

static const metrics_options defaults = {
    .policy = METRICS_TORCH_NPU,
    .comm_stream_rule = METRICS_STREAM_ALL,
    .hta = {.round_us = 1, .drop_last_step = 1, .linked_only = 1, .kernel_wait_us = 30.0},
    .exposed = {.linked_only = 1},
    .rank_source = METRICS_SOURCE_AUTO,
};

/* Where the pattern options are, for freeing and comparing. */
static const size_t pattern_at[] = {AT(compute_exclude), AT(receive), AT(hta.communication), AT(hta.memory),
                                    AT(exposed.communication), AT(exposed.memory)};
#define N_PATTERNS (sizeof pattern_at / sizeof pattern_at[0])

static const metrics_patterns *pattern(const metrics_options *o, size_t i)
{
    return (const metrics_patterns *)(const void *)((const char *)o + pattern_at[i]);
}

void metrics_options_init(metrics_options *o)
{
    *o = defaults;
}

const metrics_options *metrics_options_default(void)
{
    return &defaults;
}

void metrics_options_finish(metrics_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < N_PATTERNS; i++) {
        metrics_patterns *p = (metrics_patterns *)(void *)((char *)o + pattern_at[i]);
        for (size_t k = 0; k < p->n; k++)
            free(p->v[k]);
        free(p->v);
    }
    metrics_options_init(o);
}

static int same_patterns(const metrics_patterns *a, const metrics_patterns *b)
{
    if (a->set != b->set || a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return 0;
    return 1;
}

int metrics_options_equal(const metrics_options *a, const metrics_options *b)
{
    if (!a)
        a = metrics_options_default();
    if (!b)
        b = metrics_options_default();
    if (a->policy != b->policy || a->comm_stream_rule != b->comm_stream_rule || a->hta.round_us != b->hta.round_us ||
        a->hta.drop_last_step != b->hta.drop_last_step || a->hta.linked_only != b->hta.linked_only ||
        a->hta.kernel_wait_us != b->hta.kernel_wait_us || a->hta.stream_events != b->hta.stream_events ||
        a->exposed.linked_only != b->exposed.linked_only ||
        a->rank_source != b->rank_source)
        return 0;
    for (size_t i = 0; i < N_PATTERNS; i++)
        if (!same_patterns(pattern(a, i), pattern(b, i)))
            return 0;
    return 1;
}
