/* SPDX-License-Identifier: MIT */
/*
 * svg.h - a small SVG chart writer (private to the engine).
 *
 * The HTML pages (html_out.c) draw the charts a spec declares for the
 * workbook as inline SVG: bars, stacked bars, columns, stacked columns, a
 * line and a pie, each with its axes, ticks, the value axis's unit, a legend
 * and a <title> on every mark (the full category name, the series and the
 * value) that a browser shows as a tooltip. The writer takes plain numbers
 * and names, never cells nor a spec; every string it writes is escaped
 * (svg_text), so a kernel named "<script>" is text. The output depends only
 * on the input: the same chart gives the same bytes.
 *
 *     double v[] = {3, 1.5};
 *     const char *cats[] = {"MatMul", "Add"};
 *     svg_chart_write(f, &(svg_chart){.kind = SVG_BAR, .cats = cats, .n_cat = 2,
 *                                     .series = &(svg_series){.name = "Total Time(us)", .v = v},
 *                                     .n_series = 1, .unit = "us"});
 */
#ifndef TB_OUTPUT_SVG_H
#define TB_OUTPUT_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef enum svg_kind {
    SVG_BAR = 1,        /* horizontal bars, one group per category */
    SVG_STACKED_BAR,
    SVG_COLUMN,         /* vertical bars */
    SVG_STACKED_COLUMN,
    SVG_LINE,           /* one line per series over the categories, in order */
    SVG_PIE             /* the first series; slices in category order */
} svg_kind;

typedef struct svg_series {
    const char *name;   /* the legend's text */
    const double *v;    /* n_cat values; NaN: no value (no mark) */
} svg_series;

typedef struct svg_chart {
    svg_kind kind;
    const char *const *cats;     /* n_cat category names (borrowed) */
    size_t n_cat;
    const svg_series *series;
    size_t n_series;
    const char *unit;            /* the value axis's label, or NULL */
    const char *cat_label;       /* the category axis's label, or NULL */
    const char *const *marks;    /* SVG_LINE: per category a marker's text (a verdict), or NULL each */
    const char *const *mark_class; /* SVG_LINE: per category the marker's CSS class ("regression"), or NULL */
    const char *label;           /* the chart's aria-label, or NULL */
    const char *const *cat_class; /* bars and columns: per category a CSS class of its marks (letters, digits
                                    and '-' kept), or NULL: a page's style colours them ("regression") */
    int ratio;                   /* bars and columns of ratios new / base: the value axis spans the values
                                    and 1 with a margin (svg_ratio_axis), the marks start at 1, where a line
                                    crosses the plot */
} svg_chart;

/* The chart's colours, in series order (then again from the first). */
#define SVG_N_COLORS 10
extern const char *const svg_colors[SVG_N_COLORS];

/*
 * Writes s (n bytes) as XML text or an attribute value: & < > " ' as
 * entities, each control character but tab and newline as a space, each
 * invalid UTF-8 subpart (utf8_seq) as U+FFFD. At most max code points when
 * max > 0, then "…".
 */
void svg_text(FILE *f, const char *s, size_t n, size_t max);

/* Writes the chart as one <svg> element on f (write errors stay on f's error flag). */
void svg_chart_write(FILE *f, const svg_chart *c);

/*
 * The ticks of a value axis over lo..hi: fills *step and returns the first
 * and last tick as multiples of it (*k0, *k1), 2 to 11 ticks from a 1, 2, 5
 * series; lo == hi spans from 0 to it (0 to 1 for 0). *decimals is how many a tick's
 * label needs.
 */
void svg_ticks(double lo, double hi, double *step, long *k0, long *k1, int *decimals);

/*
 * The span of a ratio axis (values new / base from lo to hi): 1 and the
 * values, a tenth of that span more on each side (0.05 when every value is
 * 1), never below 0 when no value is. svg_ticks then rounds it out to ticks;
 * the workbook's ratio charts use the same span.
 */
void svg_ratio_axis(double lo, double hi, double *min, double *max);

#endif
