/* SPDX-License-Identifier: MIT */
/*
 * numfmt.c - numbers as text for the writers.
 *
 * (numfmt_cell_text and numfmt_cell_value, at the end, give a cell's CSV
 * text and a number cell's value to the writers that need both: the page's
 * charts and the workbook's chart groups.)
 *
 * Two kinds of numbers reach a writer. Typed time columns converted by
 * --timeunit arrive as an integer and a scale (1234 ns at scale 3 is
 * 1.234 us): they are written exactly with integer arithmetic, never through
 * a double, so that no nanosecond is lost or invented. Every other real is a
 * double, written to 15 significant digits (NUMFMT_DIGITS, DBL_DIG; trailing
 * zeros dropped): every decimal of 15 digits survives a trip through a
 * double, so a value read from a file prints as it was written, while the
 * 16th and 17th digits of a computed one are binary noise and are not
 * written (0.1 + 0.2 is "0.3", an average 13.693200000000001 is "13.6932").
 * A timeline, which must give back the very double it was given, takes the
 * fewest digits that read back as the same double (numfmt_double_exact:
 * the first of %.15g, %.16g and %.17g that strtod() reads back exactly).
 * Those digits are always written as a plain decimal, never in exponent
 * notation ("0.00000025000000000000047", "100000000000000000000"): a CSV or
 * JSON file tracebook writes reads back into a spreadsheet, msprof's tools
 * and tracebook's own CSV reader (which warns about exponent forms, the mark
 * of a file a spreadsheet saved) without a second look.
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

size_t numfmt_scaled(int64_t v, int scale, char *buf)
{
    assert(scale >= 0 && scale <= 18);
    if (scale < 0)
        scale = 0;
    if (scale > 18)
        scale = 18;
    /* the magnitude as unsigned: -INT64_MIN does not fit an int64_t */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char digits[24];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (nd <= scale) /* at least one digit before the point */
        digits[nd++] = '0';
    /* digits[] is least significant first; drop fractional zeros from the end */
    int frac = scale, lo = 0;
    while (frac > 0 && digits[lo] == '0') {
        lo++;
        frac--;
    }
    size_t n = 0;
    if (v < 0)
        buf[n++] = '-';
    for (int i = nd - 1; i >= lo; i--) {
        if (i == lo + frac - 1)
            buf[n++] = '.';
        buf[n++] = digits[i];
    }
    buf[n] = 0;
    return n;
}

/*
 * The shortest text is found from the 25 significant digits of one %.24e
 * instead of up to three printf calls (one printf of a double costs about
 * four strtod calls here): rounding them to 15, 16 or 17 digits gives what
 * %.15g, %.16g and %.17g would, except when the digits past the cut are
 * exactly 5000...: then the binary value may lie on either side of the tie
 * (rounding the 17 digits of %.17g again to 16 picks the wrong side about
 * one time in twenty), and printf itself decides.
 */
#define ALL_DIGITS 25

typedef struct digits {
    char d[ALL_DIGITS];
    int n;   /* significant digits in d (after round_to: trailing zeros removed) */
    int exp; /* d[0] is in the 10^exp place */
} digits;

/* Rounds full to prec digits into out; returns 0, or -1 on a decimal tie. */
static int round_to(const digits *full, int prec, digits *out)
{
    *out = *full;
    out->n = prec;
    if (full->d[prec] >= '5') {
        int tie = full->d[prec] == '5';
        for (int i = prec + 1; i < full->n && tie; i++)
            tie = full->d[i] == '0';
        if (tie)
            return -1;
        int i = prec - 1;
        while (i >= 0 && out->d[i] == '9')
            out->d[i--] = '0';
        if (i >= 0) {
            out->d[i]++;
        } else { /* 99.9 -> 100 */
            out->d[0] = '1';
            out->exp++;
        }
    }
    while (out->n > 1 && out->d[out->n - 1] == '0')
        out->n--;
    return 0;
}

/* Reads [-]d.ddd...e[+-]XX (as printf %e writes it) into dg; returns 1 when negative. */
static int read_sci(const char *s, digits *dg)
{
    int neg = *s == '-';
    s += neg;
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.' && n < ALL_DIGITS)
            dg->d[n++] = *s;
    dg->n = n;
    dg->exp = *s ? (int)strtol(s + 1, NULL, 10) : 0;
    return neg;
}

static size_t put_exp(char *b, int e)
{
    size_t n = 0;
    b[n++] = 'e';
    b[n++] = e < 0 ? '-' : '+';
    unsigned u = (unsigned)(e < 0 ? -e : e);
    if (u >= 100)
        b[n++] = (char)('0' + u / 100);
    b[n++] = (char)('0' + u / 10 % 10); /* at least two digits, as printf */
    b[n++] = (char)('0' + u % 10);
    return n;
}

/* Writes sign and dg in %e form for strtod ("1.234e+05"). */
static size_t put_sci(char *b, int neg, const digits *dg)
{
    size_t n = 0;
    if (neg)
        b[n++] = '-';
    b[n++] = dg->d[0];
    if (dg->n > 1) {
        b[n++] = '.';
        memcpy(b + n, dg->d + 1, (size_t)dg->n - 1);
        n += (size_t)dg->n - 1;
    }
    n += put_exp(b + n, dg->exp);
    b[n] = 0;
    return n;
}

/* Writes sign and dg as a plain decimal, whatever its exponent ("0.000001", "1000"). */
static size_t put_plain(char *b, int neg, const digits *dg)
{
    size_t n = 0;
    int x = dg->exp;
    assert(x > -400 && x < 400);
    if (neg)
        b[n++] = '-';
    if (x < 0) {
        b[n++] = '0';
        b[n++] = '.';
        for (int i = 0; i < -x - 1; i++)
            b[n++] = '0';
        memcpy(b + n, dg->d, (size_t)dg->n);
        n += (size_t)dg->n;
    } else {
        for (int i = 0; i <= x; i++)
            b[n++] = i < dg->n ? dg->d[i] : '0';
        if (dg->n > x + 1) {
            b[n++] = '.';
            memcpy(b + n, dg->d + x + 1, (size_t)(dg->n - x - 1));
            n += (size_t)(dg->n - x - 1);
        }
    }
    b[n] = 0;
    return n;
}

/*
 * The digits of printf's %.{prec}g for d (trailing zeros dropped), for the
 * decimal ties round_to leaves to printf.
 */
static void printf_digits(double d, int prec, digits *dg)
{
    char t[48];
    snprintf(t, sizeof t, "%.*e", prec - 1, d);
    read_sci(t, dg);
    while (dg->n > 1 && dg->d[dg->n - 1] == '0')
        dg->n--;
}

/* numfmt_double (exact 0) or numfmt_double_exact (exact 1). */
/* ---- rounding to 15 digits without printing ------------------------------- */

/* The powers of ten a double holds exactly. */
static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * Is d the double nearest a decimal m / 10^k with |m| < 10^15 (so at most 15
 * significant digits) and k <= 22? Then *m and *k are set (m may end in
 * zeros). Such a d is within half an ulp (1.1e-16 of it) of m / 10^k, much
 * less than half a unit of the 15th digit (5e-16 of it at least), so
 * printing d to 15 digits gives m / 10^k and reading that back gives d
 * again: numfmt_round(d) is d, found by a multiplication and one division
 * instead of printing and parsing.
 *
 * Only one k needs a look: the largest with |d| 10^k < 10^15. A decimal of
 * fewer places is one of that many places too (m times a power of ten,
 * still under 10^15), and one of more places needs 16 digits. d's binary
 * exponent gives that k or one more; d * 10^k, rounded, proposes m, and
 * the check (m / 10^k == d, both operands exact, the division rounded
 * once) is the proof.
 */
static int short_decimal(double d, double *m, int *k)
{
    int e2;
    frexp(d, &e2); /* 2^(e2-1) <= |d| < 2^e2 */
    int j = 14 - (int)floor((e2 - 1) * 0.30102999566398120);
    for (int tries = 0; tries < 2; tries++, j--) {
        if (j < 0 || j > 22)
            return 0;
        double r = nearbyint(d * p10[j]);
        if (!(fabs(r) < 1e15))
            continue;
        if (r / p10[j] != d)
            return 0;
        *m = r;
        *k = j;
        return 1;
    }
    return 0;
}

static size_t fmt_double(double d, int exact, char *buf)
{
    if (isnan(d) || isinf(d)) {
        buf[0] = 0;
        return 0;
    }
    if (d == trunc(d) && fabs(d) <= 9007199254740992.0) {
        /* integral and exact: "3" and "1000000", never "3.0" or "1e+06"; -0.0 is "0" */
        return numfmt_scaled((int64_t)d, 0, buf);
    }
    double m;
    int k;
    if (short_decimal(d, &m, &k) && k <= 18) {
        /* the 15-digit form of d is m / 10^k (short_decimal) and reads back as d, so it
         * is also the exact form; numfmt_scaled drops the zeros m may end in */
        return numfmt_scaled((int64_t)m, k, buf);
    }
    char all[48];
    snprintf(all, sizeof all, "%.*e", ALL_DIGITS - 1, d);
    digits full, dg;
    int neg = read_sci(all, &full);
    for (int prec = NUMFMT_DIGITS; prec <= 17; prec++) {
        if (round_to(&full, prec, &dg) != 0)
            printf_digits(d, prec, &dg); /* a decimal tie: only the binary value can break it */
        put_sci(buf, neg, &dg);
        /* 15 digits unless exact; exact: the fewest that read back (17 always do) */
        if (!exact || prec == 17 || strtod(buf, NULL) == d)
            return put_plain(buf, neg, &dg);
    }
    return 0; /* not reached */
}

size_t numfmt_double(double d, char *buf)
{
    return fmt_double(d, 0, buf);
}

size_t numfmt_double_exact(double d, char *buf)
{
    return fmt_double(d, 1, buf);
}

static double round_printed(double d)
{
    char t[48];
    snprintf(t, sizeof t, "%.*e", NUMFMT_DIGITS - 1, d);
    return strtod(t, NULL);
}

double numfmt_round(double d)
{
    double m;
    int k;
    if (isnan(d) || isinf(d) || d == trunc(d) || short_decimal(d, &m, &k))
        return d;
    return round_printed(d);
}

/*
 * numfmt_scaled_round: v and 10^scale are exact doubles below 2^53, so the
 * division, rounded once, is the double nearest the decimal v / 10^scale;
 * with |v| < 10^15 that decimal has at most 15 significant digits, which
 * is what numfmt_round finds it to be. Integers (scale 0) numfmt_round
 * keeps as they are, at any size.
 */
double numfmt_scaled_round(int64_t v, int scale)
{
    if (scale <= 0)
        return (double)v;
    double d = (double)v / p10[scale > 22 ? 22 : scale];
    if (v > -1000000000000000LL && v < 1000000000000000LL)
        return d;
    return numfmt_round(d);
}

/*
 * numfmt_round(d / 100). When d is the double nearest a short decimal m /
 * 10^k (short_decimal), d / 100 lies within 2.3e-16 of m / 10^(k+2), a
 * decimal of the same 15 digits, so its 15-digit form is that decimal and
 * the answer is the double nearest it: m / 10^(k+2), one division of exact
 * operands.
 */
double numfmt_round_pct(double d)
{
    double m;
    int k;
    if (isfinite(d) && d != 0 && short_decimal(d, &m, &k) && k + 2 <= 22)
        return m / p10[k + 2];
    return numfmt_round(d / 100);
}

/* ---- times with their unit, as topsprof prints them ------------------------ */

static const char *const unit_text[4] = {"ns", "us", "ms", "s"};

size_t numfmt_unit_time(int64_t ns, int unit, char *buf)
{
    assert(unit >= -1 && unit <= 3);
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t p = 1, whole = 0, frac = 0;
    int k;
    /* the first unit whose rounded value stays below 1000.00; seconds take any value */
    for (k = 0; k < 4; k++, p *= 1000) {
        if (unit >= 0 && k != unit)
            continue;
        whole = u / p;
        frac = (u % p * 100 + p / 2) / p; /* 0..100: 100 carries into whole */
        if (frac == 100) {
            whole++;
            frac = 0;
        }
        if (unit >= 0 || whole < 1000 || k == 3)
            break;
    }
    int n = snprintf(buf, NUMFMT_MAX, "%s%llu.%02llu%s", ns < 0 ? "-" : "", (unsigned long long)whole,
                     (unsigned long long)frac, unit_text[k]);
    return n < 0 ? 0 : (size_t)n;
}

/* numfmt_cell_text: see output.h. */
size_t numfmt_cell_text(const tb_cell *c, char *num, const char **text)
{
    *text = num;
    switch (c->kind) {
    case TB_CELL_INT:
        return numfmt_scaled(c->i, c->scale, num);
    case TB_CELL_REAL: {
        size_t n = numfmt_double(c->d, num);
        if (!n)
            *text = isnan(c->d) ? "NaN" : c->d > 0 ? "inf" : "-inf";
        return n ? n : strlen(*text);
    }
    case TB_CELL_TEXT:
        *text = c->s;
        return c->n;
    default:
        return 0;
    }
}

double numfmt_cell_value(const tb_cell *c)
{
    if (c->kind == TB_CELL_REAL)
        return c->d;
    if (c->kind != TB_CELL_INT)
        return NAN;
    if (!c->scale)
        return (double)c->i;
    /* the double nearest the exact decimal, which the tooltips then write back the same */
    char num[NUMFMT_MAX];
    numfmt_scaled(c->i, c->scale, num);
    return strtod(num, NULL);
}
