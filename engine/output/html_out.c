/* SPDX-License-Identifier: MIT */
/*
 * html_out.c - one self-contained HTML page per run (output.h, "HTML pages").
 *
 * The page is written top to bottom into one afile: the head (an inline
 * style sheet and a Content-Security-Policy that allows no request at all,
 * so the page reads nothing from anywhere, offline or not), the headline
 * (the run's facts, the load's warnings), then a section per report in the
 * order their sinks finish (a lead section before all others: a summary
 * made last comes first), the notes, and the inline script that sorts a
 * table when its header is clicked and filters its rows as one types. A
 * section sink keeps the first max_rows rows of its table as HTML (an
 * in-memory stream) and the first categories of its chart as numbers (a
 * series_by line chart: the first HTML_SERIES_ROWS rows, each with its
 * group, drawn as a line per group over the union of their categories); at
 * finish it writes the section (its heading and description, the chart
 * (svg.c), the table and, when the table was cut, the count of rows and the
 * file that has them all) into memory, and the commit puts the sections in
 * the page in order. Cells are written as the CSV writer writes them
 * (numfmt.c), so a table's cells are its CSV twin's text; numbers are
 * right-aligned and the header carries the unit. Memory is bounded by the
 * kept rows of each section.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/svg.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

struct html_page {
    afile af;
    char *path;
    FILE *part[2];     /* the sections: lead ones (0), the others (1), each in memory until commit */
    char *buf[2];
    size_t len[2];
    size_t max_rows;
    size_t n_sections;
    int busy;          /* a section sink is open */
    int broken;        /* a section failed: the page cannot be committed */
    char **notes;
    size_t n_notes;
};

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;max-width:1400px}"
    "h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
    "p.desc{margin:4px 0 10px;color:#444}table{border-collapse:collapse;margin:6px 0}"
    "table.facts th{text-align:left;padding:2px 12px 2px 0;vertical-align:top;font-weight:600}"
    "table.facts td{padding:2px 0}table.data th,table.data td{border:1px solid #ddd;padding:3px 8px}"
    "table.data th{background:#f3f3f3;cursor:pointer;user-select:none;position:sticky;top:0}"
    "table.data th[aria-sort=ascending]::after{content:' \\25B2'}"
    "table.data th[aria-sort=descending]::after{content:' \\25BC'}"
    "table.data tbody tr:nth-child(even){background:#fafafa}.n{text-align:right;font-variant-numeric:tabular-nums}"
    "td{white-space:pre-wrap;overflow-wrap:break-word}td.n{white-space:nowrap}div.scroll{overflow-x:auto}.cut,.empty,.note{color:#555;font-style:italic}"
    ".warnings{background:#fff4e5;border-left:4px solid #f28e2b;padding:6px 12px;margin:10px 0}"
    "input.filter{margin:4px 0;padding:3px 6px;width:260px}"
    "svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}"
    "svg .grid{stroke:#e5e5e5}svg .axis-line{stroke:#555}svg text{font-size:11px;fill:#333}"
    "svg .label{font-size:12px;fill:#111}svg .verdict{fill:#999}svg .verdict.regression{fill:#e15759}"
    "svg .verdict.improvement{fill:#59a14f}svg .mark.regression{fill:#e15759}svg .mark.improvement{fill:#59a14f}h3{font-size:14px;margin:14px 0 0;overflow-wrap:anywhere}"
    "figure.each{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:0 24px;margin:0}"
    "figcaption{grid-column:1/-1}"
    "@media print{input.filter{display:none}table.data th{position:static}section{break-inside:avoid-page}}";

static const char script[] =
    "(function(){\n"
    "function val(td,num){var t=td.textContent;if(!num)return t;return t===''?NaN:Number(t);}\n"
    "function sort(tb,i,h){var num=h.classList.contains('n');var asc=h.getAttribute('aria-sort')!=='ascending';\n"
    "var hs=tb.tHead.rows[0].cells;for(var k=0;k<hs.length;k++)hs[k].setAttribute('aria-sort','none');\n"
    "h.setAttribute('aria-sort',asc?'ascending':'descending');\n"
    "var body=tb.tBodies[0];var rows=Array.prototype.slice.call(body.rows);\n"
    "rows.sort(function(a,b){var x=val(a.cells[i],num),y=val(b.cells[i],num);\n"
    "if(num){var nx=isNaN(x),ny=isNaN(y);if(nx||ny)return nx-ny;return asc?x-y:y-x;}\n"
    "var c=x<y?-1:x>y?1:0;return asc?c:-c;});\n"
    "for(var r=0;r<rows.length;r++)body.appendChild(rows[r]);}\n"
    "var tables=document.querySelectorAll('table.data');\n"
    "for(var t=0;t<tables.length;t++){(function(tb){var hs=tb.tHead.rows[0].cells;\n"
    "for(var i=0;i<hs.length;i++){(function(h,i){h.tabIndex=0;\n"
    "h.addEventListener('click',function(){sort(tb,i,h);});\n"
    "h.addEventListener('keydown',function(e){if(e.key==='Enter')sort(tb,i,h);});})(hs[i],i);}})(tables[t]);}\n"
    "var inputs=document.querySelectorAll('input.filter');\n"
    "for(var j=0;j<inputs.length;j++){(function(inp){var tb=document.getElementById(inp.getAttribute('data-table'));\n"
    "inp.addEventListener('input',function(){var q=inp.value.toLowerCase();var rows=tb.tBodies[0].rows;\n"
    "for(var r=0;r<rows.length;r++)rows[r].hidden=q!==''&&rows[r].textContent.toLowerCase().indexOf(q)<0;});})(inputs[j]);}\n"
    "})();\n";

void html_text(FILE *f, const char *s, size_t n)
{
    svg_text(f, s, n, 0);
}

static void text0(FILE *f, const char *s)
{
    if (s)
        html_text(f, s, strlen(s));
}

static tb_status nomem(const html_page *p, tb_error *err)
{
    return tb_error_at(err, TB_ERR_NOMEM, p->path, 0, 0, -1, "out of memory");
}

/* The headline's facts: rows of one key together, a long run of them folded. */
static void write_facts(FILE *f, const html_options *o)
{
    fputs("<table class=\"facts\">\n", f);
    for (size_t i = 0; i < o->n_facts;) {
        size_t j = i;
        while (j < o->n_facts && !strcmp(o->facts[j].key, o->facts[i].key))
            j++;
        fputs("<tr><th>", f);
        text0(f, o->facts[i].key);
        fputs("</th><td>", f);
        if (j - i > 8)
            fprintf(f, "<details><summary>%zu rows</summary>", j - i);
        for (size_t k = i; k < j; k++) {
            fputs(k > i ? "<br>" : "", f);
            text0(f, o->facts[k].value);
        }
        fputs(j - i > 8 ? "</details></td></tr>\n" : "</td></tr>\n", f);
        i = j;
    }
    fputs("</table>\n", f);
    if (!o->n_warnings)
        return;
    fprintf(f, "<div class=\"warnings\"><strong>Warnings of the load (%zu)</strong><ul>\n", o->n_warnings);
    for (size_t i = 0; i < o->n_warnings && i < 200; i++) {
        fputs("<li>", f);
        text0(f, o->warnings[i]);
        fputs("</li>\n", f);
    }
    if (o->n_warnings > 200)
        fprintf(f, "<li>%zu more: tracebook_run.json lists them all</li>\n", o->n_warnings - 200);
    fputs("</ul></div>\n", f);
}

tb_status html_create(const char *path, const html_options *opt, html_page **out, tb_error *err)
{
    *out = NULL;
    html_page *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path))) {
        free(p);
        return tb_error_at(err, TB_ERR_NOMEM, path, 0, 0, -1, "out of memory");
    }
    p->max_rows = opt->max_rows ? opt->max_rows : HTML_MAX_ROWS;
    tb_status st = afile_open(path, &p->af, err);
    if (!st && (!(p->part[0] = open_memstream(&p->buf[0], &p->len[0])) ||
                !(p->part[1] = open_memstream(&p->buf[1], &p->len[1]))))
        st = nomem(p, err);
    if (st) {
        html_destroy(p);
        return st;
    }
    FILE *f = p->af.f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", f);
    text0(f, opt->title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
    text0(f, opt->title);
    fputs("</h1>\n", f);
    write_facts(f, opt);
    fputs("</header>\n", f);
    *out = p;
    return TB_OK;
}

tb_status html_note(html_page *p, const char *text, tb_error *err)
{
    char **v = realloc(p->notes, (p->n_notes + 1) * sizeof *v);
    if (!v)
        return nomem(p, err);
    p->notes = v;
    if (!(v[p->n_notes] = strdup(text)))
        return nomem(p, err);
    p->n_notes++;
    return TB_OK;
}

tb_status html_commit(html_page *p, tb_error *err)
{
    if (p->busy || p->broken)
        return tb_error_at(err, TB_ERR_INTERNAL, p->path, 0, 0, -1, "a section of the page did not finish");
    FILE *f = p->af.f;
    for (int k = 0; k < 2; k++) {
        if (fflush(p->part[k]) || ferror(p->part[k]))
            return nomem(p, err);
        fwrite(p->buf[k], 1, p->len[k], f);
    }
    if (!p->n_sections)
        fputs("<p class=\"empty\">No report wrote to this page.</p>\n", f);
    for (size_t i = 0; i < p->n_notes; i++) {
        fputs("<p class=\"note\">", f);
        text0(f, p->notes[i]);
        fputs("</p>\n", f);
    }
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
    tb_status st = afile_commit(&p->af, err);
    p->broken = 1; /* committed or gone: nothing more to write */
    return st;
}

void html_destroy(html_page *p)
{
    if (!p)
        return;
    afile_abort(&p->af);
    for (int k = 0; k < 2; k++) {
        if (p->part[k])
            fclose(p->part[k]);
        free(p->buf[k]);
    }
    for (size_t i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    free(p->notes);
    free(p->path);
    free(p);
}

/* ---- a section ------------------------------------------------------------ */

typedef struct hcol {
    char *header;
    char *name;
    tb_col_type type;
    int numeric;       /* the first kept non-NULL cell is a number */
    int seen;
} hcol;

typedef struct section {
    out_sink head;
    html_page *p;
    html_section_options so;
    hcol *cols;
    size_t nc;
    char *rows;        /* the kept rows' HTML (open_memstream) */
    size_t rows_len;
    FILE *rf;
    uint64_t total;
    int cat_col;       /* the chart's category column, or -1 (row numbers) */
    int *also_col;     /* columns added to a category's name */
    int class_col;     /* the column of the marks' classes, or -1 */
    char **classes;    /* kept categories' classes (owned) */
    size_t n_also;
    int *val_col;
    size_t n_val;
    size_t chart_max;  /* categories the chart keeps */
    char **cats;       /* kept categories (owned) */
    double *vals;      /* n_val x chart_max, series-major */
    size_t n_cat;
    double other;      /* a pie: the sum of the categories past chart_max */
    int by_col;        /* the chart's series_by column, or -1 */
    chart_groups groups; /* its values, over every row */
    size_t *grp;       /* series_by: each kept row's group */
    double *xval;      /* series_by: each kept row's category as a number (NaN: not one) */
    int finished;
} section;

/* The column named name (its base name, else its header), or -1. */
static int find_col(const section *s, const char *name)
{
    for (size_t i = 0; i < s->nc; i++)
        if (!strcmp(s->cols[i].name ? s->cols[i].name : s->cols[i].header, name))
            return (int)i;
    return -1;
}

static tb_status need_col(section *s, const char *name, const char *what, int *col, tb_error *err)
{
    if ((*col = find_col(s, name)) >= 0)
        return TB_OK;
    return tb_error_at(err, TB_ERR_USAGE, s->p->path, 0, 0, -1, "report '%s': %s column '%s' is not in its rows",
                       s->so.name ? s->so.name : "?", what, name);
}

static tb_status chart_begin(section *s, tb_error *err)
{
    const xlsx_chart *ch = &s->so.chart;
    s->cat_col = -1;
    if (ch->kind == XLSX_CHART_NONE)
        return TB_OK;
    tb_status st;
    if (ch->categories && (st = need_col(s, ch->categories, "chart categories", &s->cat_col, err)))
        return st;
    if (s->so.class_col && (st = need_col(s, s->so.class_col, "chart classes", &s->class_col, err)))
        return st;
    if (s->so.n_cat_also && !(s->also_col = calloc(s->so.n_cat_also, sizeof *s->also_col)))
        return nomem(s->p, err);
    for (; s->n_also < s->so.n_cat_also; s->n_also++)
        if ((st = need_col(s, s->so.cat_also[s->n_also], "chart categories", &s->also_col[s->n_also], err)))
            return st;
    if (!ch->n_values)
        return tb_error_at(err, TB_ERR_USAGE, s->p->path, 0, 0, -1, "report '%s': a chart needs a value column",
                           s->so.name ? s->so.name : "?");
    s->n_val = ch->kind == XLSX_CHART_PIE ? 1 : ch->n_values;
    if (ch->series_by && (ch->kind != XLSX_CHART_LINE || s->cat_col < 0))
        return tb_error_at(err, TB_ERR_USAGE, s->p->path, 0, 0, -1,
                           "report '%s': a chart's series_by needs a line chart with categories",
                           s->so.name ? s->so.name : "?");
    if (ch->series_by && (s->by_col = find_col(s, ch->series_by)) < 0 && ch->series_by_rank)
        s->so.chart.series_by = NULL; /* a :rank column, left out with one rank: one line */
    else if (ch->series_by && s->by_col < 0)
        return tb_error_at(err, TB_ERR_USAGE, s->p->path, 0, 0, -1, "report '%s': chart series_by column '%s' is not "
                           "in its rows", s->so.name ? s->so.name : "?", ch->series_by);
    s->chart_max = ch->series_by ? HTML_SERIES_ROWS : ch->kind == XLSX_CHART_LINE ? HTML_LINE_POINTS : HTML_CHART_CATS;
    if (ch->series_by && (!(s->grp = calloc(s->chart_max, sizeof *s->grp)) ||
                          !(s->xval = calloc(s->chart_max, sizeof *s->xval))))
        return nomem(s->p, err);
    if (!(s->val_col = calloc(s->n_val, sizeof *s->val_col)) ||
        !(s->cats = calloc(s->chart_max + 1, sizeof *s->cats)) ||
        !(s->classes = calloc(s->chart_max + 1, sizeof *s->classes)) ||
        !(s->vals = calloc(s->n_val * (s->chart_max + 1), sizeof *s->vals)))
        return nomem(s->p, err);
    for (size_t i = 0; i < s->n_val; i++)
        if ((st = need_col(s, ch->values[i], "chart values", &s->val_col[i], err)))
            return st;
    return TB_OK;
}

static tb_status sec_begin(tb_sink *sk, const tb_sink_column *cols, size_t n, tb_error *err)
{
    section *s = (section *)sk;
    if (!(s->cols = calloc(n ? n : 1, sizeof *s->cols)))
        return nomem(s->p, err);
    s->nc = n;
    for (size_t i = 0; i < n; i++) {
        s->cols[i].type = cols[i].type;
        if (!(s->cols[i].header = strdup(cols[i].header ? cols[i].header : "")) ||
            (cols[i].name && !(s->cols[i].name = strdup(cols[i].name))))
            return nomem(s->p, err);
    }
    if (!(s->rf = open_memstream(&s->rows, &s->rows_len)))
        return nomem(s->p, err);
    return chart_begin(s, err);
}

static tb_status chart_row(section *s, const tb_cell *cells, tb_error *err)
{
    if (s->so.chart.kind == XLSX_CHART_NONE)
        return TB_OK;
    size_t g = 0;
    if (s->by_col >= 0) {
        char what[300];
        snprintf(what, sizeof what, "report '%.250s'", s->so.name ? s->so.name : "?");
        tb_status st = chart_group_row(&s->groups, &cells[s->by_col], s->total - 1,
                                       &(chart_group_where){.path = s->p->path, .what = what,
                                                            .column = s->so.chart.series_by},
                                       &g, err);
        if (st)
            return st;
        if (s->n_cat < s->chart_max) {
            s->grp[s->n_cat] = g;
            s->xval[s->n_cat] = numfmt_cell_value(&cells[s->cat_col]);
        }
    }
    if (s->n_cat == s->chart_max) {
        if (s->so.chart.kind == XLSX_CHART_PIE && isfinite(numfmt_cell_value(&cells[s->val_col[0]])) &&
            numfmt_cell_value(&cells[s->val_col[0]]) > 0)
            s->other += numfmt_cell_value(&cells[s->val_col[0]]);
        return TB_OK;
    }
    /* the category, then the cat_also columns' texts, " · " between them */
    char num[NUMFMT_MAX];
    const char *t;
    size_t len;
    FILE *f = open_memstream(&s->cats[s->n_cat], &len);
    if (!f)
        return nomem(s->p, err);
    if (s->cat_col >= 0) {
        size_t k = numfmt_cell_text(&cells[s->cat_col], num, &t);
        fwrite(t, 1, k, f);
    } else {
        fprintf(f, "%llu", (unsigned long long)s->total);
    }
    for (size_t i = 0; i < s->n_also; i++) {
        size_t k = numfmt_cell_text(&cells[s->also_col[i]], num, &t);
        fputs(" \xC2\xB7 ", f);
        fwrite(t, 1, k, f);
    }
    if (fclose(f)) {
        free(s->cats[s->n_cat]);
        s->cats[s->n_cat] = NULL;
        return nomem(s->p, err);
    }
    if (s->class_col >= 0) {
        size_t k = numfmt_cell_text(&cells[s->class_col], num, &t);
        if (!(s->classes[s->n_cat] = malloc(k + 1)))
            return nomem(s->p, err);
        memcpy(s->classes[s->n_cat], t, k);
        s->classes[s->n_cat][k] = 0;
    }
    for (size_t i = 0; i < s->n_val; i++)
        s->vals[i * (s->chart_max + 1) + s->n_cat] = numfmt_cell_value(&cells[s->val_col[i]]);
    s->n_cat++;
    return TB_OK;
}

static tb_status sec_row(tb_sink *sk, const tb_cell *cells, tb_error *err)
{
    section *s = (section *)sk;
    s->total++;
    tb_status st = chart_row(s, cells, err);
    if (st || s->total > s->p->max_rows)
        return st;
    FILE *f = s->rf;
    fputs("<tr>", f);
    for (size_t i = 0; i < s->nc; i++) {
        const tb_cell *c = &cells[i];
        int num = c->kind == TB_CELL_INT || c->kind == TB_CELL_REAL;
        if (!s->cols[i].seen && c->kind != TB_CELL_NULL) {
            s->cols[i].seen = 1;
            s->cols[i].numeric = num;
        }
        fputs(num || (c->kind == TB_CELL_NULL && s->cols[i].type != TB_COL_PLAIN) ? "<td class=\"n\">" : "<td>", f);
        char buf[NUMFMT_MAX];
        const char *t;
        size_t n = numfmt_cell_text(c, buf, &t);
        html_text(f, t, n);
        fputs("</td>", f);
    }
    fputs("</tr>\n", f);
    return ferror(f) ? nomem(s->p, err) : TB_OK;
}

/* The value axis's label: the one series' header, else the unit the series' headers share ("(us)"). */
static const char *chart_unit(const section *s, char *buf, size_t n)
{
    const char *h = s->cols[s->val_col[0]].header;
    if (s->n_val == 1)
        return h;
    const char *u = strrchr(h, '(');
    if (!u || h[strlen(h) - 1] != ')')
        return NULL;
    for (size_t i = 1; i < s->n_val; i++) {
        const char *o = s->cols[s->val_col[i]].header;
        size_t lo = strlen(o), lu = strlen(u);
        if (lo < lu || strcmp(o + lo - lu, u))
            return NULL;
    }
    snprintf(buf, n, "%s", u);
    return buf;
}

/* The kept rows in category order (by number when every category is one, else
 * as they came) and each one's category index; returns the categories' count. */
static size_t group_cats(const section *s, size_t *ord, size_t *pos, const char **cats)
{
    int all_num = 1;
    for (size_t r = 0; r < s->n_cat; r++) {
        ord[r] = r;
        all_num &= isfinite(s->xval[r]) != 0;
    }
    for (size_t i = 1; all_num && i < s->n_cat; i++) /* insertion sort, stable; rows mostly come in order */
        for (size_t j = i; j > 0 && s->xval[ord[j - 1]] > s->xval[ord[j]]; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    size_t n = 0;
    for (size_t i = 0; i < s->n_cat; i++) {
        size_t r = ord[i], k = n;
        if (all_num && n && s->xval[ord[i - 1]] == s->xval[r])
            k = n - 1;
        for (size_t j = 0; !all_num && j < n; j++)
            if (!strcmp(cats[j], s->cats[r])) {
                k = j;
                break;
            }
        if (k == n)
            cats[n++] = s->cats[r];
        pos[r] = k;
    }
    return n;
}

/* A line chart with a line per series_by group (and value column) over the
 * categories of all groups; a group's missing categories are gaps the line
 * spans. Returns 0, or -1 when out of memory. */
static int write_group_chart(section *s, FILE *f)
{
    size_t n = s->n_cat, ng = 0;
    for (size_t r = 0; r < n; r++)
        ng = s->grp[r] + 1 > ng ? s->grp[r] + 1 : ng;
    size_t want = ng * s->n_val, ns = want < HTML_CHART_SERIES ? want : HTML_CHART_SERIES;
    size_t *ord = malloc(n * sizeof *ord), *pos = malloc(n * sizeof *pos);
    const char **cats = malloc(n * sizeof *cats);
    double *v = malloc(ns * n * sizeof *v);
    svg_series *ser = calloc(ns, sizeof *ser);
    char **names = calloc(ns, sizeof *names);
    int rc = !ord || !pos || !cats || !v || !ser || !names ? -1 : 0;
    size_t nc = rc ? 0 : group_cats(s, ord, pos, cats);
    const char *by = s->cols[s->by_col].header;
    for (size_t k = 0; !rc && k < ns; k++) {
        const char *key = s->groups.g[k / s->n_val].key, *vh = s->cols[s->val_col[k % s->n_val]].header;
        size_t len;
        FILE *m = open_memstream(&names[k], &len);
        if (!m)
            rc = -1;
        else if ((fprintf(m, "%s %s%s%s", by, *key ? key : "(empty)", s->n_val > 1 ? " \xC2\xB7 " : "",
                          s->n_val > 1 ? vh : "") < 0) | fclose(m))
            rc = -1;
        ser[k] = (svg_series){.name = names[k], .v = v + k * nc};
        for (size_t c = 0; c < nc; c++)
            v[k * nc + c] = NAN;
    }
    for (size_t r = 0; !rc && r < n; r++)
        for (size_t i = 0; i < s->n_val; i++)
            if (s->grp[r] * s->n_val + i < ns)
                v[(s->grp[r] * s->n_val + i) * nc + pos[r]] = s->vals[i * (s->chart_max + 1) + r];
    if (!rc) {
        char unit[256];
        svg_chart c = {.kind = SVG_LINE, .cats = cats, .n_cat = nc, .series = ser, .n_series = ns,
                       .unit = chart_unit(s, unit, sizeof unit), .cat_label = s->cols[s->cat_col].header,
                       .label = s->so.title};
        fputs("<figure class=\"chart\">", f);
        svg_chart_write(f, &c);
        if (s->total > s->n_cat)
            fprintf(f, "<figcaption class=\"cut\">The chart shows the first %zu of %llu rows.</figcaption>", s->n_cat,
                    (unsigned long long)s->total);
        if (want > ns)
            fprintf(f, "<figcaption class=\"cut\">The chart draws the first %zu of its %zu lines.</figcaption>", ns,
                    want);
        fputs("</figure>\n", f);
    }
    for (size_t k = 0; names && k < ns; k++)
        free(names[k]);
    free(names);
    free(ser);
    free(v);
    free(cats);
    free(pos);
    free(ord);
    return rc;
}

static int write_chart(section *s, FILE *f)
{
    static const svg_kind kinds[] = {[XLSX_CHART_BAR] = SVG_BAR, [XLSX_CHART_STACKED_BAR] = SVG_STACKED_BAR,
                                     [XLSX_CHART_COLUMN] = SVG_COLUMN,
                                     [XLSX_CHART_STACKED_COLUMN] = SVG_STACKED_COLUMN,
                                     [XLSX_CHART_LINE] = SVG_LINE, [XLSX_CHART_PIE] = SVG_PIE};
    if (s->so.chart.kind == XLSX_CHART_NONE || !s->n_cat)
        return 0;
    if (s->by_col >= 0)
        return write_group_chart(s, f);
    size_t n_cat = s->n_cat;
    if (s->so.chart.kind == XLSX_CHART_PIE && s->other > 0) {
        s->cats[n_cat] = NULL; /* the "other" slice's name is static */
        s->vals[n_cat] = s->other;
        n_cat++;
    }
    const char *cats_other[HTML_CHART_CATS + 1];
    const char *const *cats = (const char *const *)s->cats;
    if (n_cat > s->n_cat) {
        for (size_t i = 0; i < s->n_cat; i++)
            cats_other[i] = s->cats[i];
        cats_other[s->n_cat] = "other";
        cats = cats_other;
    }
    svg_series ser[64];
    size_t ns = s->n_val < 64 ? s->n_val : 64;
    for (size_t i = 0; i < ns; i++)
        ser[i] = (svg_series){.name = s->cols[s->val_col[i]].header, .v = s->vals + i * (s->chart_max + 1)};
    char unit[256];
    svg_chart c = {.kind = kinds[s->so.chart.kind], .cats = cats, .n_cat = n_cat, .series = ser, .n_series = ns,
                   .unit = s->so.chart.ratio ? "x base" : chart_unit(s, unit, sizeof unit),
                   .cat_label = s->cat_col >= 0 ? s->cols[s->cat_col].header : "row", .label = s->so.title,
                   .cat_class = s->class_col >= 0 ? (const char *const *)s->classes : NULL,
                   .ratio = s->so.chart.ratio};
    fputs(s->so.chart_each ? "<figure class=\"chart each\">" : "<figure class=\"chart\">", f);
    if (!s->so.chart_each) {
        svg_chart_write(f, &c);
    } else {
        /* small multiples: a chart per series, its marks on its categories */
        for (size_t i = 0; i < ns; i++) {
            fputs("<div class=\"multiple\"><h3>", f);
            text0(f, ser[i].name);
            fputs("</h3>", f);
            c.series = &ser[i];
            c.n_series = 1;
            c.unit = s->so.value_label ? s->so.value_label : ser[i].name;
            c.label = ser[i].name;
            c.marks = s->so.marks && s->so.n_mark_rows >= n_cat ? s->so.marks + i * s->so.n_mark_rows : NULL;
            c.mark_class = c.marks && s->so.mark_class ? s->so.mark_class + i * s->so.n_mark_rows : NULL;
            svg_chart_write(f, &c);
            fputs("</div>", f);
        }
    }
    if (s->total > s->n_cat)
        fprintf(f, "<figcaption class=\"cut\">The chart shows the first %zu of %llu rows%s.</figcaption>", s->n_cat,
                (unsigned long long)s->total, n_cat > s->n_cat ? " (the rest as one slice, other)" : "");
    fputs("</figure>\n", f);
    return 0;
}

static void write_table(section *s, FILE *f)
{
    size_t id = s->p->n_sections;
    fprintf(f, "<input class=\"filter\" type=\"search\" placeholder=\"Filter rows\" data-table=\"t%zu\" "
            "aria-label=\"Filter the rows\">\n<div class=\"scroll\"><table class=\"data\" id=\"t%zu\" "
            "data-rows=\"%llu\"", id, id, (unsigned long long)s->total);
    if (s->so.full_file) {
        fputs(" data-file=\"", f);
        text0(f, s->so.full_file);
        fputs("\"", f);
    }
    fputs(">\n<thead><tr>", f);
    for (size_t i = 0; i < s->nc; i++) {
        int num = s->cols[i].seen ? s->cols[i].numeric : s->cols[i].type != TB_COL_PLAIN;
        fputs(num ? "<th class=\"n\" aria-sort=\"none\">" : "<th aria-sort=\"none\">", f);
        text0(f, s->cols[i].header);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    fwrite(s->rows, 1, s->rows_len, f);
    fputs("</tbody>\n</table></div>\n", f);
    if (!s->total)
        fputs("<p class=\"empty\">No rows.</p>\n", f);
    if (s->total > s->p->max_rows) {
        fprintf(f, "<p class=\"cut\">The table shows the first %zu of %llu rows", s->p->max_rows,
                (unsigned long long)s->total);
        if (s->so.full_file) {
            fputs("; all of them are in <code>", f);
            text0(f, s->so.full_file);
            fputs("</code>.</p>\n", f);
        } else {
            fputs("; write the report as CSV too (outputs: [csv, html]) for all of them.</p>\n", f);
        }
    }
}

static tb_status sec_finish(tb_sink *sk, tb_error *err)
{
    section *s = (section *)sk;
    if (!s->rf || fflush(s->rf))
        return nomem(s->p, err);
    FILE *f = s->p->part[s->so.lead ? 0 : 1];
    fprintf(f, "<section class=\"report\" id=\"report-%zu\">\n<h2>", s->p->n_sections);
    text0(f, s->so.title);
    fputs("</h2>\n", f);
    if (s->so.description) {
        fputs("<p class=\"desc\">", f);
        text0(f, s->so.description);
        fputs("</p>\n", f);
    }
    if (write_chart(s, f))
        return nomem(s->p, err);
    write_table(s, f);
    fputs("</section>\n", f);
    if (ferror(f))
        return nomem(s->p, err);
    s->p->n_sections++;
    s->finished = 1;
    return TB_OK;
}

static void sec_destroy(tb_sink *sk)
{
    section *s = (section *)sk;
    if (!s->finished)
        s->p->broken = 1;
    s->p->busy = 0;
    if (s->rf)
        fclose(s->rf);
    free(s->rows);
    for (size_t i = 0; i < s->nc; i++) {
        free(s->cols[i].header);
        free(s->cols[i].name);
    }
    free(s->cols);
    for (size_t i = 0; s->cats && i < s->n_cat; i++)
        free(s->cats[i]);
    for (size_t i = 0; s->classes && i < s->n_cat; i++)
        free(s->classes[i]);
    free(s->classes);
    free(s->cats);
    free(s->vals);
    free(s->val_col);
    free(s->also_col);
    free(s->grp);
    free(s->xval);
    chart_groups_free(&s->groups);
    free(s);
}

tb_status html_section_sink(html_page *p, const html_section_options *so, tb_sink **out, tb_error *err)
{
    *out = NULL;
    if (p->busy || p->broken)
        return tb_error_at(err, TB_ERR_INTERNAL, p->path, 0, 0, -1, "a section of the page is still open");
    section *s = calloc(1, sizeof *s);
    if (!s)
        return nomem(p, err);
    s->head.vt = (tb_sink){.begin = sec_begin, .row = sec_row, .finish = sec_finish, .destroy = sec_destroy};
    s->p = p;
    s->so = *so;
    s->cat_col = -1;
    s->class_col = -1;
    s->by_col = -1;
    p->busy = 1;
    *out = &s->head.vt;
    return TB_OK;
}
