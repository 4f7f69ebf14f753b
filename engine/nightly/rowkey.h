/* SPDX-License-Identifier: MIT */
/*
 * rowkey.h - the key of a report row, and the rules on its numbers, as
 * `compare` and `history report` both read them (private to report/).
 *
 * A report's rows are told apart by its key columns: the spec's `key:`, or
 * by default every text column, the rank column and integer columns that
 * name a step, an iteration or an id. The key text of a row is its key
 * cells after the report's `normalize:` steps, joined by \x1f. Numeric
 * columns are compared under the report's `regressions:` rules, or the
 * default ones: every time column worse when higher by 5% and 1 us.
 *
 *     rk_table t = {.rep = rep};
 *     rk_columns(&t, cols, n, err);          (the sink's columns, copied)
 *     rk_decide(&t, first_row_cells, err);   (keys, numeric columns, rules)
 *     rk_key(&t, cells, 0, err);             (t.keybuf: this row's key)
 *     rk_free(&t);
 */
#ifndef TB_NIGHTLY_ROWKEY_H
#define TB_NIGHTLY_ROWKEY_H

#include <stddef.h>
#include <stdint.h>

#include "spec/spec.h"
#include "tracebook/output.h"

/* One column of a report as its sink saw it. */
typedef struct rk_col {
    char *header;
    char *name;      /* base name (header without unit when the runner gave none) */
    tb_col_type type;
    int key;         /* part of the key */
    int numeric;     /* compared as numbers */
    int rule;        /* index into the rules + 1, 0 = none */
} rk_col;

typedef struct rk_table {
    const tb_spec_report *rep; /* borrowed; set by the caller */
    rk_col *cols;
    size_t n_cols;
    int decided;               /* keys and numeric columns chosen */
    tb_spec_rule *rules;       /* the rules in force: the report's (borrowed) or the defaults (owned) */
    size_t n_rules;
    int count_col;             /* the Count/Calls column, -1 when none */
    char *keybuf;              /* the last rk_key's text */
    size_t keycap;
    size_t parts;
} rk_table;

/* Copies the columns a sink's begin got. */
tb_status rk_columns(rk_table *t, const tb_sink_column *cols, size_t n, tb_error *err);

/* Chooses the key and numeric columns from a first row (NULL: none) and the rules. */
tb_status rk_decide(rk_table *t, const tb_cell *cells, tb_error *err);

/* The key text of a row into t->keybuf; step_shift is added to step numbers. */
tb_status rk_key(rk_table *t, const tb_cell *cells, int64_t step_shift, tb_error *err);

/* Frees the columns, owned rules and key buffer; t can take columns again. */
void rk_free(rk_table *t);

/* 1 when a column of this name holds a step or iteration number. */
int rk_step_col(const char *name);

/* The threshold a rule's `absolute` is in a column written in unit. */
double rk_abs(const tb_spec_rule *r, tb_col_type type, tb_time_unit unit);

/*
 * Rule r on a change from b to n in a column of this type written in unit:
 * 1 a regression, -1 an improvement, 0 neither. Both thresholds must be
 * passed; from a base of 0 only the absolute one can be, so a rule without
 * one never fires there.
 */
int rk_judge(const tb_spec_rule *r, tb_col_type type, tb_time_unit unit, double b, double n);

/* 10^k for k >= 0. */
double rk_pow10(int k);

#endif
