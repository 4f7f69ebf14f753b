/* SPDX-License-Identifier: MIT */
/*
 * test_util.c - the shared helpers of engine/util/: string predicates and
 * the edit distance behind "did you mean", sorting and binary search,
 * growing arrays, the id map and the hash functions, with known answers;
 * and the values the command reads as a user writes them (limits, units,
 * windows, shards) and the texts it prints from the engine (a place in a
 * statement, a regression's line).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracebook/db.h"
#include "tracebook/error.h"
#include "tracebook/export.h"
#include "tracebook/nightly.h"
#include "tracebook/progress.h"
#include "tracebook/query.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/sort.h"
#include "util/str.h"
#include "util/vec.h"

static void string_predicates(void **state)
{
    (void)state;
    assert_int_equal(1, str_starts("ProfilerStep#3", "ProfilerStep#"));
    assert_int_equal(1, str_starts("abc", ""));
    assert_int_equal(0, str_starts("ab", "abc"));
    assert_int_equal(1, str_ends("trace.json.gz", ".gz"));
    assert_int_equal(0, str_ends("gz", ".gz"));
    assert_int_equal(1, str_ends("x", ""));
    assert_int_equal(1, str_eq_ci("History", "hISTORY"));
    assert_int_equal(0, str_eq_ci("History", "Histor"));
    assert_int_equal(0, str_eq_ci("a", "b"));
    assert_int_equal(1, str_eq_ci("", ""));
}

static void suggestions(void **state)
{
    (void)state;
    static const char *const keys[] = {"round_us", "drop_last_step", "linked_only", "kernel_wait_us", "format"};
    size_t n = sizeof keys / sizeof keys[0];
    assert_string_equal("round_us", tb_suggest("rond_us", keys, n));        /* one insertion */
    assert_string_equal("round_us", tb_suggest("round_ns", keys, n));       /* one substitution */
    assert_string_equal("linked_only", tb_suggest("linked_onyl", keys, n)); /* one swap of neighbours */
    assert_string_equal("format", tb_suggest("fromat", keys, n));
    assert_string_equal("drop_last_step", tb_suggest("drop_lst_stpe", keys, n)); /* 2 edits, 13 bytes */
    assert_null(tb_suggest("kernel_wait", keys, n)); /* 3 edits of an 11-byte word: another word */
    assert_null(tb_suggest("linked", keys, n));
    assert_null(tb_suggest("classes", keys, n));
    assert_null(tb_suggest("x", keys, n));
    assert_null(tb_suggest(NULL, keys, n));
    char big[300];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_null(tb_suggest(big, keys, n)); /* too long to compare */
}

static void sorting(void **state)
{
    (void)state;
    int64_t v[] = {5, -1, 5, 3, INT64_MIN, 3, 9};
    size_t n = sort_unique_i64(v, sizeof v / sizeof v[0]);
    assert_int_equal(5, n);
    const int64_t want[] = {INT64_MIN, -1, 3, 5, 9};
    for (size_t i = 0; i < n; i++)
        assert_true(v[i] == want[i]);
    assert_int_equal(0, sort_unique_i64(NULL, 0));
    const char *s[] = {"b", "a", "c"};
    qsort(s, 3, sizeof *s, sort_cmp_str);
    assert_string_equal("a", s[0]);
    assert_string_equal("c", s[2]);
    double d[] = {2.5, -1.0, 0.0};
    qsort(d, 3, sizeof *d, sort_cmp_double);
    assert_true(d[0] == -1.0 && d[2] == 2.5);
}

typedef struct rec {
    int tag;
    int64_t key;
} rec;

static void binary_search(void **state)
{
    (void)state;
    const rec r[] = {{0, 1}, {1, 3}, {2, 3}, {3, 3}, {4, 7}};
    const size_t n = 5, at = offsetof(rec, key);
    assert_int_equal(1, sort_bound_i64(r, n, sizeof *r, at, 3, 0));
    assert_int_equal(4, sort_bound_i64(r, n, sizeof *r, at, 3, 1));
    assert_int_equal(0, sort_bound_i64(r, n, sizeof *r, at, 0, 1));
    assert_int_equal(5, sort_bound_i64(r, n, sizeof *r, at, 7, 1));
    assert_int_equal(4, sort_bound_i64(r, n, sizeof *r, at, 5, 0));
    assert_int_equal(0, sort_bound_i64(r, 0, sizeof *r, at, 5, 0));
}

static void growing_array(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    for (int64_t i = 0; i < 1000; i++)
        assert_int_equal(0, VEC_PUSH(v, n, cap, i * i));
    assert_int_equal(1000, n);
    assert_int_equal(1024, cap); /* doubling from 8 */
    assert_true(v[999] == 999 * 999);
    /* an impossible size fails and leaves the array as it was */
    assert_int_equal(-1, vec_reserve(&v, &cap, SIZE_MAX / 2, sizeof *v));
    assert_int_equal(1024, cap);
    assert_true(v[0] == 0 && v[999] == 999 * 999);
    free(v);
}

static int64_t plus_key(void *ctx, int64_t k, int64_t v)
{
    (void)ctx;
    return v + 1000 * k;
}

static int sum_pairs(void *ctx, int64_t k, int64_t v)
{
    *(int64_t *)ctx += k * v;
    return 0;
}

static void id_map(void **state)
{
    (void)state;
    /* dense: ids 10..13, id 11 twice (the least value stays) */
    idmap d = IDMAP_INIT;
    assert_true(idmap_empty(&d));
    const int64_t pairs[][2] = {{10, 5}, {11, 9}, {13, 7}, {11, 2}};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(0, idmap_add(&d, pairs[i][0], pairs[i][1]));
    idmap_build(&d);
    assert_non_null(d.dense);
    assert_false(idmap_empty(&d));
    assert_true(idmap_get(&d, 11) == 2);
    assert_true(idmap_get(&d, 12) == IDMAP_ABSENT);
    assert_true(idmap_get(&d, 9) == IDMAP_ABSENT);
    assert_true(idmap_get(&d, 14) == IDMAP_ABSENT);
    /* sparse ids: sorted pairs, same answers */
    idmap s = IDMAP_INIT;
    const int64_t sparse[][2] = {{1000000000000, 4}, {-5, 1}, {1000000000000, 3}, {7, -1}};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(0, idmap_add(&s, sparse[i][0], sparse[i][1]));
    idmap_build(&s);
    assert_null(s.dense);
    assert_int_equal(3, s.n);
    assert_true(idmap_get(&s, 1000000000000) == 3);
    assert_true(idmap_get(&s, 7) == -1);
    assert_true(idmap_get(&s, 8) == IDMAP_ABSENT);
    idmap_map(&s, plus_key, NULL);
    assert_true(idmap_get(&s, -5) == 1 - 5000);
    int64_t sum = 0;
    assert_int_equal(0, idmap_each(&d, sum_pairs, &sum));
    assert_true(sum == 10 * 5 + 11 * 2 + 13 * 7);
    idmap_free(&d);
    idmap_free(&s);
    assert_true(idmap_empty(&d));
    idmap_free(NULL);
}

static void hashes(void **state)
{
    (void)state;
    /* FNV-1a 64 test vectors */
    assert_true(hash_fnv1a(HASH_FNV_OFFSET, "", 0) == 0xcbf29ce484222325u);
    assert_true(hash_fnv1a(HASH_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cu);
    assert_true(hash_fnv1a(hash_fnv1a(HASH_FNV_OFFSET, "foo", 3), "bar", 3) ==
                hash_fnv1a(HASH_FNV_OFFSET, "foobar", 6));
    assert_true(hash_mix64(0) == 0);
    assert_true(hash_mix64(1) != hash_mix64(2));
}

static void user_texts(void **state)
{
    (void)state;
    char buf[256];
    tb_text_place("SELECT x,\n  nme AS y", 12, buf, sizeof buf);
    assert_string_equal(buf, "    nme AS y\n    ^ line 2, column 3\n");
    tb_text_place("a\u00e9b", 3, buf, sizeof buf); /* a column counts characters, not bytes */
    assert_string_equal(buf, "  a\u00e9b\n    ^ line 1, column 3\n");
    tb_text_place("abc", 4, buf, sizeof buf);
    assert_string_equal(buf, "");

    tb_limits l = {0};
    assert_int_equal(0, tb_limits_read(&l, TB_LIMIT_MEMORY, "2G"));
    assert_int_equal(2LL << 30, l.memory_bytes);
    assert_int_equal(0, tb_limits_read(&l, TB_LIMIT_TEMP, "0.5K"));
    assert_int_equal(512, l.temp_bytes);
    assert_int_equal(0, tb_limits_read(&l, TB_LIMIT_CPU_SECONDS, "1.5"));
    assert_true(l.cpu_seconds == 1.5);
    const char *bad[] = {"", "2X", "2GB", "-1", "0", "0.1", "1e30", "G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(-1, tb_limits_read(&l, TB_LIMIT_MEMORY, bad[i]));
    assert_int_equal(-1, tb_limits_read(&l, TB_LIMIT_CPU_SECONDS, "5s"));
    assert_int_equal(-1, tb_limits_read(&l, TB_LIMIT_CPU_SECONDS, "0"));
    assert_int_equal(2LL << 30, l.memory_bytes); /* unchanged by the failures */

    tb_time_unit u = TB_UNIT_NS;
    assert_int_equal(0, tb_unit_parse("ms", &u));
    assert_int_equal(TB_UNIT_MS, u);
    assert_int_equal(-1, tb_unit_parse("min", &u));

    tb_window w;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(TB_OK, tb_window_parse(NULL, NULL, NULL, &w, &err));
    assert_int_equal(0, w.set);
    assert_int_equal(TB_OK, tb_window_parse("4294967295", "3", NULL, &w, &err));
    assert_true(w.set && w.model_id == TB_STEP_MODEL_ID && w.iteration_id == 3 && w.iteration_count == 1);
    assert_int_equal(TB_ERR_USAGE, tb_window_parse(NULL, "3", NULL, &w, &err));
    assert_string_equal(err.message, "--iteration-id needs --model-id (4294967295 for step mode)");
    assert_int_equal(TB_ERR_USAGE, tb_window_parse("1", "1", "0", &w, &err));
    assert_string_equal(err.message, "--iteration-count must be at least 1");
    assert_int_equal(TB_ERR_USAGE, tb_window_parse("1", "x", NULL, &w, &err));
    assert_string_equal(err.message, "--iteration-id 'x': expected a non-negative integer");

    unsigned i = 9, n = 9;
    assert_int_equal(TB_OK, tb_shard_parse("3/4", &i, &n, &err));
    assert_true(i == 3 && n == 4);
    assert_int_equal(TB_ERR_USAGE, tb_shard_parse("4/4", &i, &n, &err));
    assert_string_equal(err.message, "'4/4': I must be below N (parts are numbered 0 to 3)");
    assert_int_equal(TB_ERR_USAGE, tb_shard_parse("1/+4", &i, &n, &err));

    tb_compare_change c = {.report = "top_kernels", .key = "MatMul", .column = "Avg Time(us)", .base = 1917.653,
                           .value = 2557.43, .ratio = 2557.43 / 1917.653, .decimals = 3};
    tb_compare_change_text(&c, buf, sizeof buf);
    assert_string_equal(buf, "top_kernels: MatMul: Avg Time(us) 1917.653 -> 2557.43 (x1.3336)");
    tb_progress *pr = tb_progress_new();
    assert_non_null(pr);
    assert_int_equal(-1, tb_progress_load(pr, NULL, 0, 0, 0, buf, sizeof buf));
    assert_int_equal(0, tb_progress_load(pr, "a.json", 50, 200, 3u << 20, buf, sizeof buf));
    assert_string_equal(buf, "loading a.json:  25% (3 MB read)");
    assert_int_equal(0, tb_progress_load(pr, "b.json", 150, 200, 1u << 20, buf, sizeof buf));
    assert_string_equal(buf, "loading 2 files:  50% (4 MB read)"); /* every file's last report summed */
    assert_int_equal(0, tb_progress_load(pr, "c.json.gz", 10, 0, 1u << 20, buf, sizeof buf));
    assert_string_equal(buf, "loading 3 files: 5 MB read"); /* a size unknown: no share */
    assert_int_equal(0, tb_progress_phase(pr, "indexing", buf, sizeof buf));
    assert_string_equal(buf, "loading 3 files: indexing");
    tb_progress_reports(pr, 2, buf, sizeof buf);
    assert_string_equal(buf, "running reports: 0/2 done");
    tb_progress_report_done(pr, "top_kernels", buf, sizeof buf);
    assert_string_equal(buf, "running reports: 1/2 done (last: top_kernels)");
    tb_progress_free(pr);

    c.ratio = NAN;
    c.base = 0;
    tb_compare_change_text(&c, buf, sizeof buf);
    assert_string_equal(buf, "top_kernels: MatMul: Avg Time(us) 0 -> 2557.43");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(string_predicates), cmocka_unit_test(suggestions), cmocka_unit_test(sorting),
        cmocka_unit_test(binary_search),     cmocka_unit_test(growing_array), cmocka_unit_test(id_map),
        cmocka_unit_test(hashes),           cmocka_unit_test(user_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
