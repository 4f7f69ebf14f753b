/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - the registry of computed tables and their shared helpers.
 *
 * The tables themselves live with their family: steptrace.c (step trace
 * time, overlap lanes), breakdown.c (HTA-style breakdowns, the exposed-time
 * partition), cluster.c (cluster step trace, slow rank, communication
 * matrix). This file lists them for the runner and reads options from a
 * spec's `metrics:` section.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics/metrics.h"

typedef struct family {
    const metric_table *v;
    const size_t *n;
} family;

static const family families[] = {
    {metrics_steptrace, &metrics_steptrace_n},
    {metrics_breakdown, &metrics_breakdown_n},
    {metrics_cluster, &metrics_cluster_n},
};

const metric_table *metrics_find(const char *name)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < *families[f].n; i++)
            if (strcasecmp(families[f].v[i].name, name) == 0)
                return &families[f].v[i];
    return NULL;
}

void metrics_each(void (*fn)(void *ctx, const metric_table *t), void *ctx)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t i = 0; i < *families[f].n; i++)
            fn(ctx, &families[f].v[i]);
}

/* The JSON value at a dotted path of the options, borrowed from root. */
static json_t *lookup(json_t *root, const char *path)
{
    json_t *cur = root;
    const char *p = path;
    while (cur && *p) {
        size_t n = strcspn(p, ".");
        char key[128];
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = 0;
        cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        p += n;
        if (*p == '.')
            p++;
    }
    return cur;
}

json_t *metrics_option_node(const metric_ctx *m, const char *path)
{
    if (!m || !m->options_json)
        return NULL;
    json_t *root = json_loads(m->options_json, 0, NULL);
    json_t *v = root ? json_incref(lookup(root, path)) : NULL;
    json_decref(root);
    return v;
}

char *metrics_option(const metric_ctx *m, const char *path)
{
    json_t *v = metrics_option_node(m, path);
    char *out = NULL;
    if (json_is_string(v))
        out = strdup(json_string_value(v));
    else if (json_is_true(v))
        out = strdup("true");
    else if (json_is_false(v))
        out = strdup("false");
    else if (v && !json_is_null(v))
        out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(v);
    return out;
}

long long metrics_option_int(const metric_ctx *m, const char *path, long long def)
{
    char *s = metrics_option(m, path);
    if (!s)
        return def;
    long long v = def;
    if (!strcmp(s, "true"))
        v = 1;
    else if (!strcmp(s, "false"))
        v = 0;
    else {
        char *end = NULL;
        long long x = strtoll(s, &end, 10);
        if (end != s && !*end)
            v = x;
    }
    free(s);
    return v;
}

double metrics_option_double(const metric_ctx *m, const char *path, double def)
{
    char *s = metrics_option(m, path);
    if (!s)
        return def;
    char *end = NULL;
    double x = strtod(s, &end);
    double v = end != s && !*end ? x : def;
    free(s);
    return v;
}

tb_status metrics_exec(const metric_ctx *m, const char *what, const char *sql, tb_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(m->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_error_set(err, TB_ERR_DB, "%s: %s", what, msg ? msg : sqlite3_errmsg(m->db));
        sqlite3_free(msg);
        return TB_ERR_DB;
    }
    return TB_OK;
}
