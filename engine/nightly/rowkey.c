/* SPDX-License-Identifier: MIT */
/*
 * rowkey.c - the key of a report row and the rules on its numbers
 * (rowkey.h), shared by compare and history.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metrics/interval.h"
#include "nightly/rowkey.h"

double rk_pow10(int k)
{
    double x = 1;
    while (k-- > 0)
        x *= 10;
    return x;
}

static int ci_contains(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (!strncasecmp(s, w, n))
            return 1;
    return 0;
}

static int ends_with_id(const char *s)
{
    size_t n = strlen(s);
    return n >= 2 && !strcasecmp(s + n - 2, "id");
}

int rk_step_col(const char *name)
{
    return ci_contains(name, "step") || ci_contains(name, "iteration");
}

static int is_count(const char *name)
{
    return !strcasecmp(name, "count") || !strcasecmp(name, "calls");
}

tb_status rk_columns(rk_table *t, const tb_sink_column *cols, size_t n, tb_error *err)
{
    if (!(t->cols = calloc(n ? n : 1, sizeof *t->cols)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    t->n_cols = n;
    for (size_t i = 0; i < n; i++) {
        t->cols[i].type = cols[i].type;
        t->cols[i].header = strdup(cols[i].header);
        t->cols[i].name = strdup(cols[i].name ? cols[i].name : cols[i].header);
        if (!t->cols[i].header || !t->cols[i].name)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    return TB_OK;
}

void rk_free(rk_table *t)
{
    for (size_t i = 0; i < t->n_cols; i++) {
        free(t->cols[i].header);
        free(t->cols[i].name);
    }
    free(t->cols);
    if (t->decided && t->rep && !t->rep->has_rules)
        free(t->rules);
    free(t->keybuf);
    const tb_spec_report *rep = t->rep;
    *t = (rk_table){.rep = rep, .count_col = -1};
}

/* The default rules: every time column is worse when higher, by 5% and 1 us,
 * over TB_RULE_MIN_COUNT calls at least where the report counts them (compare
 * adds a noise floor, compare.c). */
static tb_status default_rules(rk_table *t, tb_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_cols; i++)
        n += t->cols[i].type == TB_COL_DUR_NS;
    t->rules = calloc(n ? n : 1, sizeof *t->rules);
    if (!t->rules)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < t->n_cols; i++)
        if (t->cols[i].type == TB_COL_DUR_NS)
            t->rules[t->n_rules++] = (tb_spec_rule){.column = t->cols[i].name, .rel = 0.05, .abs = 1000, .abs_time = 1,
                                                    .min_count = TB_RULE_MIN_COUNT, .mad = TB_RULE_MAD,
                                                    .nights = TB_RULE_NIGHTS};
    return TB_OK;
}

tb_status rk_decide(rk_table *t, const tb_cell *cells, tb_error *err)
{
    const tb_spec_report *r = t->rep;
    for (size_t i = 0; i < t->n_cols; i++) {
        rk_col *k = &t->cols[i];
        tb_cell_kind kind = cells ? cells[i].kind : TB_CELL_NULL;
        k->key = 0;
        if (r->n_key) {
            for (size_t j = 0; j < r->n_key; j++)
                k->key |= !strcmp(r->key[j], k->name) || !strcmp(r->key[j], k->header);
        } else {
            k->key = k->type == TB_COL_RANK || kind == TB_CELL_TEXT ||
                     (k->type == TB_COL_PLAIN && kind == TB_CELL_INT && (ends_with_id(k->name) || rk_step_col(k->name)));
        }
        k->numeric = !k->key && (kind == TB_CELL_INT || kind == TB_CELL_REAL || k->type != TB_COL_PLAIN);
    }
    /* a key column the report does not write (the rank column of a one-rank
     * run) is left out; a key with none of its columns is an error */
    int any = 0;
    for (size_t i = 0; i < t->n_cols; i++)
        any |= t->cols[i].key;
    if (r->n_key && !any)
        return tb_error_at(err, TB_ERR_USAGE, r->pos.file, r->pos.line, r->pos.column, -1,
                           "report '%s': no column of its key '%s'%s is a column of the report", r->id, r->key[0],
                           r->n_key > 1 ? ", ..." : "");
    if (r->has_rules) {
        t->rules = r->n_rules ? r->rules : NULL;
        t->n_rules = r->n_rules;
    } else {
        tb_status st = default_rules(t, err);
        if (st)
            return st;
    }
    t->decided = 1;
    for (size_t j = 0; j < t->n_rules; j++) {
        int found = 0;
        for (size_t i = 0; i < t->n_cols; i++)
            if (!strcmp(t->rules[j].column, t->cols[i].name) && t->cols[i].numeric) {
                t->cols[i].rule = (int)j + 1;
                found = 1;
            }
        if (!found && r->has_rules)
            return tb_error_set(err, TB_ERR_USAGE, "report '%s': regressions rule column '%s' is not a numeric column",
                                r->id, t->rules[j].column);
    }
    t->count_col = -1;
    for (size_t i = 0; i < t->n_cols && t->count_col < 0; i++)
        if (is_count(t->cols[i].name) && t->cols[i].numeric)
            t->count_col = (int)i;
    return TB_OK;
}

/* Appends the normalised form of s[0..n) to t->keybuf, after a \x1f when it holds a part already. */
static int keytext(rk_table *t, const char *s, size_t n, unsigned norm)
{
    char *x = malloc(n + 1);
    if (!x)
        return -1;
    size_t k = 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (norm & TB_NORM_TEMPLATE_ARGS) {
            if (ch == '<') {
                depth++;
                continue;
            }
            if (ch == '>' && depth > 0) {
                depth--;
                continue;
            }
            if (depth > 0)
                continue;
        }
        x[k++] = ch;
    }
    if (norm & TB_NORM_HASHES) {
        /* a run of 8+ hex digits holding a digit, between non-alphanumerics, goes
         * (with one _, - or . before it) */
        size_t w = 0;
        for (size_t i = 0; i < k;) {
            size_t j = i;
            int digit = 0;
            if (i == 0 || !isalnum((unsigned char)x[i - 1])) {
                while (j < k && isxdigit((unsigned char)x[j])) {
                    digit |= isdigit((unsigned char)x[j]) != 0;
                    j++;
                }
                if (j - i >= 8 && digit && (j == k || !isalnum((unsigned char)x[j]))) {
                    /* with the separator before it: "conv_3f9a2c1b7e_x" is "conv_x" */
                    if (w > 0 && (x[w - 1] == '_' || x[w - 1] == '-' || x[w - 1] == '.'))
                        w--;
                    i = j;
                    continue;
                }
            }
            x[w++] = x[i++];
        }
        k = w;
    }
    if (norm & TB_NORM_TRAILING_NUMBERS) {
        while (k > 0 && isdigit((unsigned char)x[k - 1]))
            k--;
        while (k > 0 && (x[k - 1] == '_' || x[k - 1] == '-' || x[k - 1] == '.'))
            k--;
    }
    size_t have = t->keybuf ? strlen(t->keybuf) : 0;
    if (have + k + 2 > t->keycap) {
        size_t cap = (have + k + 2) * 2;
        char *more = realloc(t->keybuf, cap);
        if (!more) {
            free(x);
            return -1;
        }
        if (!t->keybuf)
            more[0] = 0;
        t->keybuf = more;
        t->keycap = cap;
    }
    if (t->parts++)
        t->keybuf[have++] = '\x1f';
    memcpy(t->keybuf + have, x, k);
    t->keybuf[have + k] = 0;
    free(x);
    return 0;
}

tb_status rk_key(rk_table *t, const tb_cell *cells, int64_t step_shift, tb_error *err)
{
    if (t->keybuf)
        t->keybuf[0] = 0;
    t->parts = 0;
    for (size_t i = 0; i < t->n_cols; i++) {
        if (!t->cols[i].key)
            continue;
        const tb_cell *x = &cells[i];
        char num[64];
        int rc;
        if (x->kind == TB_CELL_TEXT) {
            rc = keytext(t, x->s, x->n, t->rep->normalize);
        } else if (x->kind == TB_CELL_INT) {
            long long v = (long long)x->i;
            if (step_shift && rk_step_col(t->cols[i].name))
                v = (long long)iv_add(x->i, step_shift);
            rc = keytext(t, num, (size_t)snprintf(num, sizeof num, "%lld", v), 0);
        } else if (x->kind == TB_CELL_REAL) {
            rc = keytext(t, num, (size_t)snprintf(num, sizeof num, "%.17g", x->d), 0);
        } else {
            rc = keytext(t, "", 0, 0);
        }
        if (rc)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    if (!t->keybuf && keytext(t, "", 0, 0))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return TB_OK;
}

double rk_abs(const tb_spec_rule *r, tb_col_type type, tb_time_unit unit)
{
    return r->abs_time && type == TB_COL_DUR_NS ? r->abs / rk_pow10((int)unit) : r->abs;
}

int rk_judge(const tb_spec_rule *r, tb_col_type type, tb_time_unit unit, double b, double n)
{
    double d = n - b;
    double abs = rk_abs(r, type, unit);
    if (d == 0 || fabs(d) < abs)
        return 0;
    if (r->rel > 0 && (b == 0 ? abs <= 0 : fabs(d) / fabs(b) < r->rel))
        return 0;
    return (d > 0) == !r->worse_lower ? 1 : -1;
}
