/* SPDX-License-Identifier: MIT */
/*
 * test_slice_vals.c - unit tests for a slice's values as the DB stores them,
 * packed (slice_vals_pack / slice_vals_unpack, engine/db/slice_args.c).
 *
 * Each case packs a comma-separated list of numbers as the loader writes
 * it, checks the packed bytes worked out by hand where the encoding is the
 * point (integers, decimals, other numbers as text), and unpacks them,
 * which must give the very same text back: leading zeros of a fraction,
 * trailing zeros, negative numbers, negative zero, exponents, numbers of
 * more than 18 digits, the largest integers. Malformed packed bytes keep
 * the values before them. Runs with the exit-code protocol.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "db/slice_args.h"

/* Packs vals, checks the bytes against want (wn bytes; NULL: unchecked),
 * unpacks and checks the text is vals again. */
static void round_trip(const char *vals, const char *want, size_t wn)
{
    slice_buf pk = {0}, back = {0};
    assert_int_equal(slice_vals_pack(vals, strlen(vals), &pk), 0);
    if (want) {
        assert_int_equal(pk.n, wn);
        assert_memory_equal(pk.p, want, wn);
    }
    assert_int_equal(slice_vals_unpack((const unsigned char *)pk.p, pk.n, &back), 0);
    assert_int_equal(back.n, strlen(vals));
    if (back.n)
        assert_memory_equal(back.p, vals, back.n);
    slice_buf_free(&pk);
    slice_buf_free(&back);
}

static void test_integers(void **state)
{
    (void)state;
    /* 18864: zigzag 37728, times 4 = 150912 = 0x24d80 -> 80 9b 09 */
    round_trip("18864", "\x80\x9b\x09", 3);
    /* -1: zigzag 1, times 4 = 4 */
    round_trip("-1", "\x04", 1);
    round_trip("0", "\x00", 1);
    round_trip("437675,0,-99999,123456789012345678,-123456789012345678", NULL, 0);
}

static void test_decimals(void **state)
{
    (void)state;
    /* 19.727874: mantissa 19727874, zigzag * 4 + 1 = 157822993, then scale 6 */
    round_trip("19.727874", "\x91\xe0\xa0\x4b\x06", 5);
    /* 0.05: mantissa 5, scale 2 */
    round_trip("0.05", "\x29\x02", 2);
    round_trip("1.50,0.5,-0.5,10.0,-12.25,0.000001,999999999999999.999", NULL, 0);
}

static void test_kept_as_text(void **state)
{
    (void)state;
    /* negative zero, exponents and too many digits are kept as written */
    round_trip("-0", "\x0a-0", 3);
    round_trip("-0.0,1e5,1.5E-3,-2e+10,1234567890123456789,0.1234567890123456789,12345678901234567.89", NULL, 0);
}

static void test_malformed(void **state)
{
    (void)state;
    slice_buf back = {0};
    /* 7 (zigzag 14, times 4), then a text number longer than what is left */
    const unsigned char bad[] = {0x38, 0x22, '1'};
    assert_int_equal(slice_vals_unpack(bad, sizeof bad, &back), 0);
    assert_int_equal(back.n, 1);
    assert_memory_equal(back.p, "7", 1);
    /* a decimal without its scale, an unknown kind, an unfinished varint */
    const unsigned char noscale[] = {0x38, 0x05}, kind3[] = {0x03}, open[] = {0x80};
    assert_int_equal(slice_vals_unpack(noscale, sizeof noscale, &back), 0);
    assert_int_equal(back.n, 1);
    assert_int_equal(slice_vals_unpack(kind3, sizeof kind3, &back), 0);
    assert_int_equal(back.n, 0);
    assert_int_equal(slice_vals_unpack(open, sizeof open, &back), 0);
    assert_int_equal(back.n, 0);
    slice_buf_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_kept_as_text),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
