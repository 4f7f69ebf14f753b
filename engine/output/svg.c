/* SPDX-License-Identifier: MIT */
/*
 * svg.c - the SVG charts of the HTML pages (svg.h).
 *
 * One function per family of chart: bars (horizontal, grouped or stacked),
 * columns (vertical, grouped or stacked), lines and pies. Each draws into a
 * fixed width (CHART_W): the plot's height grows with the categories of a
 * bar chart and is fixed for the others. A value axis runs from a tick at
 * or below the smallest value (0 at most) to one at or above the largest
 * (a chart of ratios: over the values and 1 with a margin, the bars from 1,
 * svg_ratio_axis),
 * ticks from a 1-2-5 series (svg_ticks), with grid lines and labels; every
 * mark (a bar, a point, a slice) has the class "mark" and a <title> with the
 * full category name, the series' name and the exact value, which the
 * browser shows on hover. Category labels are cut (with "…") to fit; the
 * full name is in the mark's title. Numbers are written with fixed decimals
 * so the same chart gives the same bytes.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"
#include "output/svg.h"

#define CHART_W 760
#define BAR_ROW 22      /* a category's height in a bar chart */
#define PLOT_H 300      /* the plot's height of columns and lines */
#define LEGEND_ROW 18
#define PI 3.14159265358979323846

const char *const svg_colors[SVG_N_COLORS] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                              "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

void svg_text(FILE *f, const char *s, size_t n, size_t max)
{
    size_t cps = 0;
    for (size_t i = 0; i < n;) {
        if (max && cps == max) {
            fputs("\xE2\x80\xA6", f);
            return;
        }
        unsigned char c = (unsigned char)s[i];
        size_t len = 1;
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c == '\'')
            fputs("&#39;", f);
        else if (c < 0x20 || c == 0x7f)
            putc(c == '\t' || c == '\n' ? c : ' ', f);
        else if (c < 0x80)
            putc(c, f);
        else if (utf8_seq(s + i, n - i, &len))
            fwrite(s + i, 1, len, f);
        else
            fputs("\xEF\xBF\xBD", f);
        i += len;
        cps++;
    }
}

/* x within the doubles: a sum of values near the largest one stays finite. */
static double clampd(double x)
{
    return x > DBL_MAX ? DBL_MAX : x < -DBL_MAX ? -DBL_MAX : x;
}

static void text0(FILE *f, const char *s, size_t max)
{
    if (s)
        svg_text(f, s, strlen(s), max);
}

void svg_ticks(double lo, double hi, double *step, long *k0, long *k1, int *decimals)
{
    if (!(hi > lo)) {
        /* one value: from 0 to it; nothing but 0: 0 to 1 */
        if (hi > 0)
            lo = 0;
        else if (lo < 0)
            hi = 0;
        else
            hi = 1;
    }
    double raw = (hi - lo) / 5;
    if (!isfinite(raw))
        raw = hi / 5 - lo / 5; /* values near the largest double: the span itself overflows */
    double mag = pow(10, floor(log10(raw))), s = mag;
    static const double mult[] = {1, 2, 5, 10};
    for (size_t i = 0; i < 4; i++)
        if (mag * mult[i] >= raw) {
            s = mag * mult[i];
            break;
        }
    if (!(isfinite(s) && s > 0))
        s = 1;
    *step = s;
    *k0 = (long)floor(lo / s + 1e-9);
    *k1 = (long)ceil(hi / s - 1e-9);
    if (*k1 == *k0)
        (*k1)++;
    int d = (int)-floor(log10(s) + 1e-9);
    *decimals = d > 0 ? d : 0;
}

void svg_ratio_axis(double lo, double hi, double *min, double *max)
{
    if (!(lo <= 1))
        lo = 1;
    if (!(hi >= 1))
        hi = 1;
    double m = hi > lo ? (hi - lo) / 10 : 0.05;
    *min = lo >= 0 && lo - m < 0 ? 0 : lo - m;
    *max = hi + m;
}

/* A value as the tooltips show it: exact, "no value" for NaN. */
static void value_text(FILE *f, double v)
{
    char num[NUMFMT_MAX];
    if (isnan(v))
        fputs("no value", f);
    else if (numfmt_double(v, num))
        fputs(num, f);
    else
        fputs(v > 0 ? "inf" : "-inf", f);
}

/* <title>category — series: value</title> (the series' name carries its unit) */
static void mark_title(FILE *f, const svg_chart *c, size_t cat, size_t ser, double v)
{
    fputs("<title>", f);
    text0(f, c->cats[cat], 0);
    if (c->series[ser].name) {
        fputs(" \xE2\x80\x94 ", f);
        text0(f, c->series[ser].name, 0);
    }
    fputs(": ", f);
    value_text(f, v);
    fputs("</title>", f);
}

/* The values' range: per category sums when stacked (positives and negatives apart), and the origin. */
static void value_range(const svg_chart *c, int stacked, double *lo, double *hi)
{
    *lo = c->ratio ? 1 : 0;
    *hi = *lo;
    for (size_t k = 0; k < c->n_cat; k++) {
        double pos = 0, neg = 0;
        for (size_t s = 0; s < c->n_series; s++) {
            double v = c->series[s].v[k];
            if (!isfinite(v))
                continue;
            if (stacked)
                *(v >= 0 ? &pos : &neg) += v;
            else if (v > *hi)
                *hi = v;
            else if (v < *lo)
                *lo = v;
        }
        if (stacked) {
            *hi = clampd(pos) > *hi ? clampd(pos) : *hi;
            *lo = clampd(neg) < *lo ? clampd(neg) : *lo;
        }
    }
}

typedef struct axis {
    double step;
    long k0, k1;
    int dec;
    double px0, px1;  /* the pixels of the first and the last tick */
} axis;

/* v's pixel, counted in steps so that values near the largest double do not overflow. */
static double axis_px(const axis *a, double v)
{
    return a->px0 + (v / a->step - (double)a->k0) / (double)(a->k1 - a->k0) * (a->px1 - a->px0);
}

/* The value axis: grid lines and tick labels, vertical (columns, lines) or horizontal (bars). */
static void value_axis(FILE *f, const axis *a, int horizontal, double cross0, double cross1)
{
    fputs("<g class=\"axis value\">", f);
    for (long k = a->k0; k <= a->k1; k++) {
        double v = (double)k * a->step;
        if (!isfinite(v))
            continue; /* a tick past the largest double */
        double p = a->px0 + (double)(k - a->k0) / (double)(a->k1 - a->k0) * (a->px1 - a->px0);
        /* a tick's label: fixed decimals, or 6 significant digits with an exponent past 10^12 or below 10^-6 */
        char label[64];
        if (a->step >= 1e12 || a->step < 1e-6)
            snprintf(label, sizeof label, "%.6g", k ? v : 0.0);
        else
            snprintf(label, sizeof label, "%.*f", a->dec, v);
        if (horizontal)
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                    p, cross0, p, cross1, p, cross1 + 14, label);
        else
            fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                    cross0, p, cross1, p, cross0 - 4, p + 4, label);
    }
    fputs("</g>", f);
}

static void make_axis(const svg_chart *c, int stacked, double px0, double px1, axis *a)
{
    double lo, hi;
    value_range(c, stacked, &lo, &hi);
    if (c->ratio)
        svg_ratio_axis(lo, hi, &lo, &hi);
    svg_ticks(lo, hi, &a->step, &a->k0, &a->k1, &a->dec);
    a->px0 = px0;
    a->px1 = px1;
}

/* The legend: a swatch and a name per series (per category and its share for a pie of total), rows from y. */
static void legend(FILE *f, const svg_chart *c, double x, double y, int per_cat, double total)
{
    size_t n = per_cat ? c->n_cat : c->n_series;
    if (!per_cat && n < 2 && c->kind != SVG_LINE)
        return;
    fputs("<g class=\"legend\">", f);
    for (size_t i = 0; i < n; i++, y += LEGEND_ROW) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">", x, y, svg_colors[i % SVG_N_COLORS], x + 18, y + 10);
        text0(f, per_cat ? c->cats[i] : c->series[i].name, 60);
        double v = per_cat ? c->series[0].v[i] : NAN;
        if (per_cat && total > 0 && isfinite(v) && v > 0)
            fprintf(f, " (%.1f%%)", 100 * (v / 1024) / total);
        fputs(per_cat ? "<title>" : "", f);
        if (per_cat)
            text0(f, c->cats[i], 0);
        fputs(per_cat ? "</title></text>" : "</text>", f);
    }
    fputs("</g>", f);
}

/* A mark's class: "mark", then category k's class (letters, digits and '-' kept). */
static void mark_class(FILE *f, const svg_chart *c, size_t k)
{
    fputs("class=\"mark", f);
    if (c->cat_class && c->cat_class[k] && *c->cat_class[k]) {
        putc(' ', f);
        for (const char *p = c->cat_class[k]; *p; p++)
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-')
                putc(*p, f);
    }
    putc('"', f);
}

static void svg_open(FILE *f, const svg_chart *c, double h)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" role=\"img\" aria-label=\"", CHART_W, h, CHART_W, h);
    text0(f, c->label ? c->label : "chart", 0);
    fputs("\">", f);
}

static void axis_label(FILE *f, const char *s, double x, double y, int vertical)
{
    if (!s || !*s)
        return;
    if (vertical)
        fprintf(f, "<text class=\"label\" transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">",
                x, y);
    else
        fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y);
    text0(f, s, 0);
    fputs("</text>", f);
}

/* Horizontal bars: categories down the left, the value axis below. */
static void bars(FILE *f, const svg_chart *c, int stacked)
{
    double left = 240, right = CHART_W - 20, top = 10, plot_h = (double)c->n_cat * BAR_ROW;
    size_t legend_rows = c->n_series > 1 ? c->n_series : 0;
    double h = top + plot_h + 44 + (double)legend_rows * LEGEND_ROW + 6;
    axis a;
    make_axis(c, stacked, left, right, &a);
    svg_open(f, c, h);
    value_axis(f, &a, 1, top, top + plot_h);
    double origin = c->ratio ? 1 : 0, zero = axis_px(&a, origin);
    double thick = stacked ? BAR_ROW - 6 : (double)(BAR_ROW - 6) / (double)c->n_series;
    for (size_t k = 0; k < c->n_cat; k++) {
        double y = top + (double)k * BAR_ROW + 3, pos = 0, neg = 0;
        fprintf(f, "<text class=\"cat\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6, y + 12);
        text0(f, c->cats[k], 30);
        fputs("<title>", f);
        text0(f, c->cats[k], 0);
        fputs("</title></text>", f);
        for (size_t s = 0; s < c->n_series; s++) {
            double v = c->series[s].v[k];
            if (!isfinite(v))
                continue;
            double from = stacked ? (v >= 0 ? pos : neg) : origin, to = stacked ? clampd(from + v) : v;
            if (stacked)
                *(v >= 0 ? &pos : &neg) = to;
            double x0 = axis_px(&a, from < to ? from : to), x1 = axis_px(&a, from < to ? to : from);
            double yy = stacked ? y : y + thick * (double)s;
            fputs("<rect ", f);
            mark_class(f, c, k);
            fprintf(f, " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x0, yy, x1 - x0, thick,
                    svg_colors[s % SVG_N_COLORS]);
            mark_title(f, c, k, s, v);
            fputs("</rect>", f);
        }
    }
    fprintf(f, "<line class=\"axis-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", zero, top, zero,
            top + plot_h);
    axis_label(f, c->unit, (left + right) / 2, top + plot_h + 34, 0);
    legend(f, c, left, top + plot_h + 44, 0, 0);
    fputs("</svg>", f);
}

/* The category labels under a plot, rotated; at most about 40 of them are written. */
static void cat_labels(FILE *f, const svg_chart *c, double left, double slot, double y)
{
    size_t every = c->n_cat > 40 ? (c->n_cat + 39) / 40 : 1;
    for (size_t k = 0; k < c->n_cat; k += every) {
        double x = left + slot * ((double)k + 0.5);
        fprintf(f, "<text class=\"cat\" transform=\"translate(%.1f,%.1f) rotate(-40)\" text-anchor=\"end\">", x, y);
        text0(f, c->cats[k], 16);
        fputs("<title>", f);
        text0(f, c->cats[k], 0);
        fputs("</title></text>", f);
    }
}

/* Vertical columns: categories along the bottom, the value axis on the left. */
static void columns(FILE *f, const svg_chart *c, int stacked)
{
    double left = 70, right = CHART_W - 20, top = 10, bottom = top + PLOT_H;
    double slot = (right - left) / (double)c->n_cat, h = bottom + 120 + (double)c->n_series * LEGEND_ROW;
    axis a;
    make_axis(c, stacked, bottom, top, &a);
    svg_open(f, c, h);
    value_axis(f, &a, 0, left, right);
    double thick = slot * 0.8 / (stacked ? 1 : (double)c->n_series), origin = c->ratio ? 1 : 0;
    for (size_t k = 0; k < c->n_cat; k++) {
        double x = left + slot * (double)k + slot * 0.1, pos = 0, neg = 0;
        for (size_t s = 0; s < c->n_series; s++) {
            double v = c->series[s].v[k];
            if (!isfinite(v))
                continue;
            double from = stacked ? (v >= 0 ? pos : neg) : origin, to = stacked ? clampd(from + v) : v;
            if (stacked)
                *(v >= 0 ? &pos : &neg) = to;
            double y0 = axis_px(&a, from > to ? from : to), y1 = axis_px(&a, from > to ? to : from);
            fputs("<rect ", f);
            mark_class(f, c, k);
            fprintf(f, " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">",
                    stacked ? x : x + thick * (double)s, y0, thick, y1 - y0, svg_colors[s % SVG_N_COLORS]);
            mark_title(f, c, k, s, v);
            fputs("</rect>", f);
        }
    }
    double zero = axis_px(&a, origin);
    fprintf(f, "<line class=\"axis-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", left, zero, right,
            zero);
    cat_labels(f, c, left, slot, bottom + 14);
    axis_label(f, c->unit, 16, (top + bottom) / 2, 1);
    axis_label(f, c->cat_label, (left + right) / 2, bottom + 104, 0);
    legend(f, c, left, bottom + 114, 0, 0);
    fputs("</svg>", f);
}

/* Lines: one per series over the categories in order, a point per value, markers under the plot. */
static void lines(FILE *f, const svg_chart *c)
{
    double left = 70, right = CHART_W - 20, top = 10, bottom = top + PLOT_H;
    double slot = (right - left) / (double)c->n_cat, h = bottom + 120 + (double)c->n_series * LEGEND_ROW;
    axis a;
    make_axis(c, 0, bottom, top, &a);
    svg_open(f, c, h);
    value_axis(f, &a, 0, left, right);
    for (size_t s = 0; s < c->n_series; s++) {
        const char *col = svg_colors[s % SVG_N_COLORS];
        fprintf(f, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (size_t k = 0, first = 1; k < c->n_cat; k++)
            if (isfinite(c->series[s].v[k])) {
                fprintf(f, "%s%.1f,%.1f", first ? "" : " ", left + slot * ((double)k + 0.5),
                        axis_px(&a, c->series[s].v[k]));
                first = 0;
            }
        fputs("\"/>", f);
        for (size_t k = 0; k < c->n_cat; k++) {
            double v = c->series[s].v[k];
            if (!isfinite(v))
                continue;
            fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\">",
                    left + slot * ((double)k + 0.5), axis_px(&a, v), col);
            mark_title(f, c, k, s, v);
            fputs("</circle>", f);
        }
    }
    for (size_t k = 0; c->marks && k < c->n_cat; k++) {
        if (!c->marks[k])
            continue;
        double x = left + slot * ((double)k + 0.5);
        fprintf(f, "<path class=\"verdict %s\" d=\"M%.1f %.1fl-5 8h10z\"><title>", c->mark_class && c->mark_class[k]
                ? c->mark_class[k] : "", x, top + 2);
        text0(f, c->cats[k], 0);
        fputs(": ", f);
        text0(f, c->marks[k], 0);
        fputs("</title></path>", f);
    }
    fprintf(f, "<line class=\"axis-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", left, bottom, right,
            bottom);
    cat_labels(f, c, left, slot, bottom + 14);
    axis_label(f, c->unit, 16, (top + bottom) / 2, 1);
    axis_label(f, c->cat_label, (left + right) / 2, bottom + 104, 0);
    legend(f, c, left, bottom + 114, 0, 0);
    fputs("</svg>", f);
}

/* A pie of the first series' positive values; the legend names the slices. */
static void pie(FILE *f, const svg_chart *c)
{
    double cx = 170, cy = 160, r = 140, total = 0;
    const double *v = c->series[0].v;
    /* summed as v / 1024: values near the largest double keep a finite total */
    for (size_t k = 0; k < c->n_cat; k++)
        if (isfinite(v[k]) && v[k] > 0)
            total += v[k] / 1024;
    double h = 330, lh = 20 + (double)c->n_cat * LEGEND_ROW;
    svg_open(f, c, lh > h ? lh : h);
    double angle = 0;
    for (size_t k = 0; total > 0 && k < c->n_cat; k++) {
        if (!(isfinite(v[k]) && v[k] > 0))
            continue;
        double frac = v[k] / 1024 / total, a1 = angle + frac * 2 * PI;
        const char *col = svg_colors[k % SVG_N_COLORS];
        if (frac >= 0.999999)
            fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\">", cx, cy, r, col);
        else
            fprintf(f, "<path class=\"mark\" fill=\"%s\" d=\"M%.1f %.1fL%.2f %.2fA%.1f %.1f 0 %d 1 %.2f %.2fZ\">", col,
                    cx, cy, cx + r * sin(angle), cy - r * cos(angle), r, r, a1 - angle > PI ? 1 : 0,
                    cx + r * sin(a1), cy - r * cos(a1));
        mark_title(f, c, k, 0, v[k]);
        fprintf(f, "</%s>", frac >= 0.999999 ? "circle" : "path");
        angle = a1;
    }
    legend(f, c, 340, 20, 1, total);
    fputs("</svg>", f);
}

void svg_chart_write(FILE *f, const svg_chart *c)
{
    if (!c->n_cat || !c->n_series)
        return;
    switch (c->kind) {
    case SVG_BAR:
    case SVG_STACKED_BAR:
        bars(f, c, c->kind == SVG_STACKED_BAR);
        break;
    case SVG_COLUMN:
    case SVG_STACKED_COLUMN:
        columns(f, c, c->kind == SVG_STACKED_COLUMN);
        break;
    case SVG_LINE:
        lines(f, c);
        break;
    case SVG_PIE:
        pie(f, c);
        break;
    }
}
