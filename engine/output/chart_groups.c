/* SPDX-License-Identifier: MIT */
/*
 * chart_groups.c - the series of a line chart drawn per value of a column
 * (output.h, "chart groups"; a spec's `chart: series_by`).
 *
 * The workbook (xlsx_out.c) draws each series over its own range of rows,
 * so the rows of one value must be together; the page (html_out.c) follows
 * the same rule so that one spec works, or fails the same way, in both.
 * A writer hands each data row's series_by cell to chart_group_row, which
 * puts the row into the current group, opens a new one for a new value, or
 * refuses a value that came before another one with a message naming the
 * column, the value and the row. A value is its CSV text, NULL the empty
 * text; groups are kept in order of their first row.
 */
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "tracebook/error.h"

tb_status chart_group_row(chart_groups *gs, const tb_cell *c, uint64_t row, const chart_group_where *w, size_t *idx,
                          tb_error *err)
{
    char num[NUMFMT_MAX];
    const char *t;
    size_t n = numfmt_cell_text(c, num, &t);
    chart_group *last = gs->n ? &gs->g[gs->n - 1] : NULL;
    if (last && strlen(last->key) == n && !memcmp(last->key, t, n)) {
        last->last = row;
        *idx = gs->n - 1;
        return TB_OK;
    }
    for (size_t i = 0; i + 1 < gs->n; i++)
        if (strlen(gs->g[i].key) == n && !memcmp(gs->g[i].key, t, n))
            return tb_error_at(err, TB_ERR_USAGE, w->path, 0, 0, -1,
                               "%s: chart series_by column '%s': the rows are not grouped by it ('%.*s' comes back "
                               "in data row %llu, after other values); order the rows by '%s' first",
                               w->what, w->column, (int)(n > 80 ? 80 : n), t, (unsigned long long)row + 1,
                               w->column);
    chart_group *v = realloc(gs->g, (gs->n + 1) * sizeof *v);
    if (!v)
        return tb_error_at(err, TB_ERR_NOMEM, w->path, 0, 0, -1, "out of memory");
    gs->g = v;
    char *key = malloc(n + 1);
    if (!key)
        return tb_error_at(err, TB_ERR_NOMEM, w->path, 0, 0, -1, "out of memory");
    memcpy(key, t, n);
    key[n] = 0;
    v[gs->n] = (chart_group){.key = key, .first = row, .last = row};
    *idx = gs->n++;
    return TB_OK;
}

void chart_groups_free(chart_groups *gs)
{
    for (size_t i = 0; i < gs->n; i++)
        free(gs->g[i].key);
    free(gs->g);
    gs->g = NULL;
    gs->n = 0;
}
