/* SPDX-License-Identifier: MIT */
/*
 * sqlfuncs.c - statistics and interval functions for report SQL (contracts
 * in sqlfuncs.h).
 *
 * Every aggregate keeps its state in sqlite3_aggregate_context, which SQLite
 * zeroes on first use, so "all zero" is each state's empty value. States that
 * own heap memory (the values of a percentile, the intervals of a union) free
 * it in xFinal: SQLite calls xFinal for every aggregate context it allocated,
 * also when a step failed and the statement is being reset, so nothing leaks
 * on errors. xFinal without a context (no row reached xStep) gives the empty
 * group's result.
 *
 * median and the quartiles share percentile's step and final functions; their
 * fixed p comes through the function's user data.
 */
#include "query/sqlfuncs.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/interval.h"
#include "metrics/ppchart.h"
#include "util/sort.h"
#include "util/vec.h"

/* ---- percentiles -------------------------------------------------------- */

/* Compaction of an interval set starts at this many intervals. */
#define FIRST_CAP 16

typedef struct pct_state {
    double *v;   /* owned; the group's non-NULL values */
    size_t n, cap;
    double p;    /* the group's p, 0 .. 100 */
    int have_p;  /* p was set by the first row */
} pct_state;

/* The fixed p of median, lower_quartile, upper_quartile (user data). */
static double p_median = 50, p_lower = 25, p_upper = 75;

static void pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    double p;
    if (argc == 2) {
        int t = sqlite3_value_numeric_type(argv[1]);
        p = sqlite3_value_double(argv[1]);
        if ((t != SQLITE_INTEGER && t != SQLITE_FLOAT) || !(p >= 0 && p <= 100)) {
            sqlite3_result_error(ctx, "percentile: p must be between 0 and 100", -1);
            return;
        }
    } else {
        p = *(const double *)sqlite3_user_data(ctx);
    }
    pct_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
    if (!st) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (!st->have_p) {
        st->p = p;
        st->have_p = 1;
    } else if (st->p != p) {
        sqlite3_result_error(ctx, "percentile: p must be the same for every row of a group", -1);
        return;
    }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    if (st->n == st->cap) {
        /* through SQLite's allocator: the values count against its heap limit */
        size_t cap = st->cap ? st->cap * 2 : 64;
        double *v = sqlite3_realloc64(st->v, cap * sizeof *v);
        if (!v) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n++] = sqlite3_value_double(argv[0]);
}

/*
 * numpy's 'linear' method on sorted v: position p/100 * (n-1), then a lerp
 * written as numpy writes it (from the upper neighbour when the fraction is
 * 0.5 or more), so results match it to the last bit in the usual cases.
 * p * (n - 1) is computed before dividing by 100 so integer p needs one rounding.
 */
static double pct_of_sorted(const double *v, size_t n, double p)
{
    assert(n > 0 && p >= 0 && p <= 100);
    double pos = p * (double)(n - 1) / 100.0;
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return v[n - 1];
    double t = pos - (double)lo, a = v[lo], b = v[lo + 1], d = b - a;
    return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

static void pct_final(sqlite3_context *ctx)
{
    pct_state *st = sqlite3_aggregate_context(ctx, 0);
    if (!st || st->n == 0) {
        sqlite3_result_null(ctx);
    } else {
        qsort(st->v, st->n, sizeof *st->v, sort_cmp_double);
        sqlite3_result_double(ctx, pct_of_sorted(st->v, st->n, st->p));
    }
    if (st) {
        sqlite3_free(st->v);
        st->v = NULL;
        st->n = st->cap = 0;
    }
}

/* ---- variance ----------------------------------------------------------- */

typedef struct var_state {
    int64_t n;
    /* Welford: running mean and sum of squared deviations, in long double:
     * the squares of large values (1e160) overflow a double while the
     * standard deviation still fits one */
    long double mean, m2;
} var_state;

/* What a variance aggregate returns (user data). */
enum { V_SAMPLE_VAR, V_SAMPLE_SD, V_POP_VAR, V_POP_SD };
static const int var_kind[] = {V_SAMPLE_VAR, V_SAMPLE_SD, V_POP_VAR, V_POP_SD};

/* The aggregate's state: SQLite's aggregate memory is 8-byte aligned and a
 * long double wants 16, so the state sits at the first aligned byte of a
 * slightly larger block (the same one at every call). NULL when there is
 * none yet and create is 0, or out of memory. */
static var_state *var_ctx(sqlite3_context *ctx, int create)
{
    enum { ALIGN = _Alignof(var_state) };
    unsigned char *p = sqlite3_aggregate_context(ctx, create ? (int)(sizeof(var_state) + ALIGN - 1) : 0);
    if (!p)
        return NULL;
    uintptr_t a = ((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    return (var_state *)(void *)a;
}

static void var_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    var_state *st = var_ctx(ctx, 1);
    if (!st) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    long double x = sqlite3_value_double(argv[0]);
    st->n++;
    long double d = x - st->mean;
    st->mean += d / (long double)st->n;
    st->m2 += d * (x - st->mean);
}

static void var_final(sqlite3_context *ctx)
{
    var_state *st = var_ctx(ctx, 0);
    int kind = *(const int *)sqlite3_user_data(ctx);
    int64_t n = st ? st->n : 0;
    int sample = kind == V_SAMPLE_VAR || kind == V_SAMPLE_SD;
    if (n < (sample ? 2 : 1)) {
        sqlite3_result_null(ctx);
        return;
    }
    long double var = st->m2 / (long double)(sample ? n - 1 : n);
    if (var < 0) /* cannot happen with Welford's update; keeps sqrt defined */
        var = 0;
    /* a variance beyond DBL_MAX is written as infinity (NULL in JSON): the
     * true value does not fit a double, its square root does */
    sqlite3_result_double(ctx, (double)(kind == V_SAMPLE_SD || kind == V_POP_SD ? sqrtl(var) : var));
}

/* ---- interval aggregates ------------------------------------------------ */

typedef struct union_state {
    ivec iv;      /* owned; a merged set unless unsorted */
    int unsorted; /* a row came out of start order since the last merge */
} union_state;

/* What a union aggregate returns (user data). */
enum { U_LENGTH, U_COUNT };
static const int union_kind[] = {U_LENGTH, U_COUNT};

/*
 * While rows arrive in start order the set stays merged: a row that touches
 * or overlaps the last interval extends it. Out of order rows are appended;
 * when the array is full it is merged first and only grows when that freed
 * less than half, so memory stays about twice the merged size and each row
 * costs O(log n) amortized.
 */
/* Joins [s, e) to the merged set's last interval when it starts inside or
 * touches it (returns 1); marks the set unsorted when it starts before. */
static int join_last(union_state *st, int64_t s, int64_t e)
{
    ivec *x = &st->iv;
    if (!x->n || st->unsorted)
        return 0;
    iv *last = &x->v[x->n - 1];
    if (s < last->s) {
        st->unsorted = 1;
        return 0;
    }
    if (s > last->e)
        return 0;
    if (e > last->e)
        last->e = e;
    return 1;
}

static void union_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
        return;
    union_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
    if (!st) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    int64_t s = sqlite3_value_int64(argv[0]), e = sqlite3_value_int64(argv[1]);
    if (e <= s || join_last(st, s, e))
        return;
    ivec *x = &st->iv;
    if (x->n == x->cap && st->unsorted && x->n >= FIRST_CAP) {
        ivec_merge(x);
        st->unsorted = 0;
        if (x->n > x->cap / 2 && ivec_reserve(x, x->cap * 2)) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
        /* The merged set may now take the row in order. */
        if (join_last(st, s, e))
            return;
    }
    if (ivec_push(x, s, e))
        sqlite3_result_error_nomem(ctx);
}

static void union_final(sqlite3_context *ctx)
{
    union_state *st = sqlite3_aggregate_context(ctx, 0);
    int kind = *(const int *)sqlite3_user_data(ctx);
    int64_t r = 0;
    if (st) {
        if (st->unsorted)
            ivec_merge(&st->iv);
        assert(iv_is_merged(st->iv.v, st->iv.n));
        r = kind == U_COUNT ? (int64_t)st->iv.n : iv_length(st->iv.v, st->iv.n);
        ivec_free(&st->iv);
    }
    sqlite3_result_int64(ctx, r);
}

/* ---- pyset_array: CPython's set iteration order ------------------------ */

/*
 * The order in which CPython 3 (3.4 and later: the set of
 * Objects/setobject.c with linear probing) iterates a set of ints built by
 * add() in row order, as msprof-analyze writes its sets of ranks. The table
 * is emulated exactly:
 *   - hash(n) of an int is n mod (2^61 - 1) with n's sign, and -1 becomes -2;
 *   - a set starts with 8 slots; a key goes to slot hash & mask, else to the
 *     first free one of the next LINEAR_PROBES slots (only when they do not
 *     run past the table's end), else the walk jumps to
 *     i = (5 i + 1 + perturb) & mask with perturb = hash shifted right by 5
 *     at each jump (all unsigned, size_t);
 *   - after an insert that makes fill * 5 >= mask * 3 the table grows to the
 *     smallest power of two (from 8) above 4 * used (2 * used past 50000),
 *     and the keys are inserted anew in the old table's slot order;
 *   - no key is ever removed (add only), so fill == used.
 * Iteration is slot order. tests/unit/test_sqlfuncs.c and
 * tests/cli/msprof_analyze_test.py check it against python3 itself.
 */
#define PYSET_MIN 8
#define PYSET_PROBES 9
#define PYSET_SHIFT 5
#define PYSET_MODULUS (((uint64_t)1 << 61) - 1)

typedef struct pyset_slot {
    int64_t v;
    size_t hash;
    int used;
} pyset_slot;

typedef struct pyset_state {
    pyset_slot *t; /* owned, size slots */
    size_t size, fill;
} pyset_state;

static size_t pyset_hash(int64_t n)
{
    uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    int64_t h = (int64_t)(mag % PYSET_MODULUS);
    if (n < 0)
        h = -h;
    if (h == -1)
        h = -2;
    return (size_t)h;
}

/* The slot v takes in t (mask + 1 slots, one free at least), or NULL when it is there already. */
static pyset_slot *pyset_find(pyset_slot *t, size_t mask, int64_t v, size_t hash)
{
    size_t i = hash & mask, perturb = hash;
    for (;;) {
        size_t probes = i + PYSET_PROBES <= mask ? PYSET_PROBES : 0;
        for (size_t j = i; j <= i + probes; j++) {
            if (!t[j].used)
                return &t[j];
            if (t[j].v == v)
                return NULL;
        }
        perturb >>= PYSET_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

static int pyset_grow(pyset_state *st)
{
    size_t minused = st->fill > 50000 ? st->fill * 2 : st->fill * 4, size = PYSET_MIN;
    while (size <= minused)
        size <<= 1;
    pyset_slot *t = sqlite3_malloc64((sqlite3_uint64)size * sizeof *t);
    if (!t)
        return 0;
    memset(t, 0, size * sizeof *t);
    for (size_t i = 0; i < st->size; i++) {
        if (st->t[i].used)
            *pyset_find(t, size - 1, st->t[i].v, st->t[i].hash) = st->t[i];
    }
    sqlite3_free(st->t);
    st->t = t;
    st->size = size;
    return 1;
}

static void pyset_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc; /* 1: registered so */
    int type = sqlite3_value_type(argv[0]);
    if (type == SQLITE_NULL)
        return;
    if (type != SQLITE_INTEGER) {
        sqlite3_result_error(ctx, "pyset_array: the values must be integers", -1);
        return;
    }
    pyset_state *st = sqlite3_aggregate_context(ctx, sizeof *st);
    if (st && !st->size && (st->t = sqlite3_malloc64(PYSET_MIN * sizeof *st->t)) != NULL) {
        memset(st->t, 0, PYSET_MIN * sizeof *st->t);
        st->size = PYSET_MIN;
    }
    if (!st || !st->size) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    int64_t v = sqlite3_value_int64(argv[0]);
    size_t hash = pyset_hash(v), mask = st->size - 1;
    pyset_slot *s = pyset_find(st->t, mask, v, hash);
    if (!s)
        return;
    *s = (pyset_slot){.v = v, .hash = hash, .used = 1};
    st->fill++;
    if (st->fill * 5 >= mask * 3 && !pyset_grow(st))
        sqlite3_result_error_nomem(ctx);
}

static void pyset_final(sqlite3_context *ctx)
{
    pyset_state *st = sqlite3_aggregate_context(ctx, 0);
    sqlite3_str *out = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(out, 1, '[');
    for (size_t i = 0, k = 0; st && i < st->size; i++) {
        if (st->t[i].used)
            sqlite3_str_appendf(out, "%s%lld", k++ ? "," : "", (long long)st->t[i].v);
    }
    sqlite3_str_appendchar(out, 1, ']');
    if (st) {
        sqlite3_free(st->t);
        st->t = NULL;
        st->size = st->fill = 0;
    }
    char *text = sqlite3_str_finish(out); /* NULL when an append ran out of memory */
    if (!text)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_text(ctx, text, -1, sqlite3_free);
}

/* ---- dualpipev_slot: the DualPipeV schedule ------------------------------ */

/* The stage last asked for (per connection: the function's user data). */
typedef struct dv_cache {
    int valid, has_mb;
    int64_t pp, mb, stage;
    ppchart_slots s;
} dv_cache;

static void dv_cache_free(void *p)
{
    dv_cache *c = p;
    if (c)
        ppchart_slots_free(&c->s);
    sqlite3_free(c);
}

/* An integer argument into *out: 1, 0 for NULL, -1 (error set) for another type. */
static int dv_int(sqlite3_context *ctx, sqlite3_value *v, int64_t *out)
{
    if (sqlite3_value_type(v) == SQLITE_NULL)
        return 0;
    if (sqlite3_value_type(v) != SQLITE_INTEGER) {
        sqlite3_result_error(ctx, "dualpipev_slot: the arguments must be integers", -1);
        return -1;
    }
    *out = sqlite3_value_int64(v);
    return 1;
}

static void dualpipev_slot(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    /* mb, tp, pp, dp, rank, pos, count */
    int64_t a[7] = {0};
    int have[7] = {0};
    for (int i = 0; i < argc && i < 7; i++)
        if ((have[i] = dv_int(ctx, argv[i], &a[i])) < 0)
            return;
    int64_t mb = a[0], tp = a[1], pp = a[2], dp = a[3], rank = a[4], pos = a[5], count = a[6];
    if (!have[1] || !have[2] || !have[3] || !have[4] || !have[5] || !have[6]) {
        sqlite3_result_null(ctx); /* no sizes: no schedule, no row */
        return;
    }
    if (tp < 1 || pp < 1 || dp < 1) {
        char *msg = sqlite3_mprintf("dualpipev_slot: tp, pp and dp must be 1 or more (tp %lld, pp %lld, dp %lld)",
                                    (long long)tp, (long long)pp, (long long)dp);
        sqlite3_result_error(ctx, msg ? msg : "dualpipev_slot: tp, pp and dp must be 1 or more", -1);
        sqlite3_free(msg);
        return;
    }
    if (pp > PPCHART_MAX_SIZE || tp > PPCHART_MAX_SIZE || dp > PPCHART_MAX_SIZE || tp * dp > PPCHART_MAX_SIZE ||
        mb > PPCHART_MAX_SIZE) {
        sqlite3_result_error(ctx, "dualpipev_slot: a size or the micro-batch count is over 100000", -1);
        return;
    }
    if (rank < 0 || rank >= pp * tp * dp) {
        sqlite3_result_null(ctx); /* in no stage: the recipe gives it no row */
        return;
    }
    int64_t stage = rank / (tp * dp);
    dv_cache *c = sqlite3_user_data(ctx);
    if (!c->valid || c->pp != pp || c->mb != mb || c->has_mb != have[0] || c->stage != stage) {
        ppchart_slots_free(&c->s);
        c->valid = 0;
        if (ppchart_stage(&c->s, pp, mb, have[0], stage)) {
            ppchart_slots_free(&c->s);
            sqlite3_result_error_nomem(ctx);
            return;
        }
        *c = (dv_cache){.valid = 1, .has_mb = have[0], .pp = pp, .mb = mb, .stage = stage, .s = c->s};
    }
    int named = count == c->s.expect && pos >= 0 && (uint64_t)pos < c->s.n;
    char *v = sqlite3_mprintf("[\"%s\",%d]", named ? c->s.name[pos] : "", named ? c->s.type[pos] : 0);
    if (!v)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_text(ctx, v, -1, sqlite3_free);
}

/* ---- scalars ------------------------------------------------------------ */

static void intersect_ns(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    assert(argc == 4);
    for (int i = 0; i < argc; i++) {
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
            sqlite3_result_null(ctx);
            return;
        }
    }
    int64_t s1 = sqlite3_value_int64(argv[0]), e1 = sqlite3_value_int64(argv[1]);
    int64_t s2 = sqlite3_value_int64(argv[2]), e2 = sqlite3_value_int64(argv[3]);
    int64_t lo = s1 > s2 ? s1 : s2, hi = e1 < e2 ? e1 : e2;
    sqlite3_result_int64(ctx, iv_span(lo, hi)); /* saturated: any int64 may come in */
}

/* ---- registration ------------------------------------------------------- */

int sqlfuncs_register(sqlite3 *db)
{
    static const struct {
        const char *name;
        int nargs;
        const void *data;
        void (*fn)(sqlite3_context *, int, sqlite3_value **);   /* scalar */
        void (*step)(sqlite3_context *, int, sqlite3_value **); /* aggregate */
        void (*final)(sqlite3_context *);
    } f[] = {
        {"median", 1, &p_median, NULL, pct_step, pct_final},
        {"percentile", 2, NULL, NULL, pct_step, pct_final},
        {"lower_quartile", 1, &p_lower, NULL, pct_step, pct_final},
        {"upper_quartile", 1, &p_upper, NULL, pct_step, pct_final},
        {"variance", 1, &var_kind[V_SAMPLE_VAR], NULL, var_step, var_final},
        {"stdev", 1, &var_kind[V_SAMPLE_SD], NULL, var_step, var_final},
        {"var_pop", 1, &var_kind[V_POP_VAR], NULL, var_step, var_final},
        {"stdev_pop", 1, &var_kind[V_POP_SD], NULL, var_step, var_final},
        {"union_ns", 2, &union_kind[U_LENGTH], NULL, union_step, union_final},
        {"union_count", 2, &union_kind[U_COUNT], NULL, union_step, union_final},
        {"intersect_ns", 4, NULL, intersect_ns, NULL, NULL},
        {"pyset_array", 1, NULL, NULL, pyset_step, pyset_final},
    };
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
#ifdef SQLITE_INNOCUOUS
    flags |= SQLITE_INNOCUOUS;
#endif
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        int rc = sqlite3_create_function_v2(db, f[i].name, f[i].nargs, flags, (void *)f[i].data,
                                            f[i].fn, f[i].step, f[i].final, NULL);
        if (rc != SQLITE_OK)
            return rc;
    }
    /* its cache of the last stage is the connection's own (freed with the function) */
    dv_cache *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    return sqlite3_create_function_v2(db, "dualpipev_slot", 7, flags, c, dualpipev_slot, NULL, NULL, dv_cache_free);
}
