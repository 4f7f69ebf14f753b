/* SPDX-License-Identifier: MIT */
/*
 * advisor.c - the findings of a run's advisor rules, and the files that list
 * them (advisor.csv, advisor.json; docs/advisor.md).
 *
 * A rule is a report with `advice:` (spec/spec_advice.c): its SQL returns
 * the evidence rows, which go to the report's own files as any report's do.
 * The job (job.c) wraps the first sink it opens for a rule in a tee made
 * here: the rows pass through unchanged, and the tee keeps the columns, the
 * number of rows and the first ADVISOR_KEEP_ROWS rows as text (numbers in
 * the exact decimals the writers use). A rule that returned rows is a
 * finding: its severity, its message with `{Column}` replaced by the first
 * row's value of that column (a time or ratio with its unit) and `{#}` by
 * the number of rows, its suggestion, reason, source and threshold, and its
 * evidence. After the run advisor_write() lists the findings, critical
 * first, in one CSV and one JSON file, always both (no finding is an
 * answer too); advisor_manifest() is what tracebook_run.json says of them.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "query/file_ids.h"
#include "report/advisor.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

typedef struct adv_cell {
    char kind;    /* 'n' a number, 's' text, 0 NULL */
    char *text;   /* owned; NULL for NULL */
} adv_cell;

/* One rule of the run: what it gave. */
typedef struct adv_rule {
    const tb_spec_report *rep;  /* borrowed from the run's specs */
    char *skipped;              /* why it did not run, or NULL */
    int began;                  /* its evidence sink began: the columns are known */
    size_t nc;
    char **names;               /* the columns' base names */
    char **headers;             /* as written */
    char **units;               /* appended to a value in the message ("us", "%"), or "" */
    adv_cell *cells;            /* kept rows, nc cells each */
    size_t kept;
    uint64_t rows;              /* all of them */
} adv_rule;

struct advisor {
    adv_rule *v;
    size_t n, cap;
    char *files[2];             /* the base names written */
    char *sheet;                /* the workbook's findings sheet, or NULL */
    uint64_t counts[TB_N_SEVERITIES];
};

typedef struct tee {
    tb_sink vt;                 /* first member */
    tb_sink *inner;
    advisor *a;
    size_t rule;                /* index into a->v */
} tee;

advisor *advisor_new(void)
{
    return calloc(1, sizeof(advisor));
}

static void rule_free(adv_rule *r)
{
    free(r->skipped);
    for (size_t i = 0; i < r->nc; i++) {
        free(r->names[i]);
        free(r->headers[i]);
        free(r->units[i]);
    }
    for (size_t i = 0; i < r->kept * r->nc; i++)
        free(r->cells[i].text);
    free(r->names);
    free(r->headers);
    free(r->units);
    free(r->cells);
}

void advisor_free(advisor *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        rule_free(&a->v[i]);
    free(a->v);
    free(a->files[0]);
    free(a->files[1]);
    free(a->sheet);
    free(a);
}

size_t advisor_n_rules(const advisor *a)
{
    return a->n;
}

int advisor_wrote(const advisor *a)
{
    return a->files[0] != NULL;
}

/* The rule entry of rep, made on first use; NULL when out of memory. */
static adv_rule *rule_of(advisor *a, const tb_spec_report *rep, size_t *index)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].rep == rep) {
            if (index)
                *index = i;
            return &a->v[i];
        }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        adv_rule *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return NULL;
        a->v = v;
        a->cap = cap;
    }
    memset(&a->v[a->n], 0, sizeof a->v[a->n]);
    a->v[a->n].rep = rep;
    if (index)
        *index = a->n;
    return &a->v[a->n++];
}

void advisor_ran(advisor *a, const tb_spec_report *rep, const char *skipped, uint64_t rows)
{
    adv_rule *r = rule_of(a, rep, NULL);
    if (!r)
        return;
    if (skipped && !r->skipped)
        r->skipped = strdup(skipped);
    (void)rows; /* the tee counted them */
}

/* ---- the tee ----------------------------------------------------------------- */

/* The unit a message appends to a value of column c: from its header's "(us)". */
static const char *value_unit(const tb_sink_column *c)
{
    if (c->type == TB_COL_RATIO_PCT)
        return "%";
    if (c->type == TB_COL_MEM_B)
        return " B";
    if (c->type != TB_COL_DUR_NS && c->type != TB_COL_TS_NS)
        return "";
    const char *h = c->header, *open = strrchr(h, '(');
    size_t n = strlen(h);
    if (!open || n < 3 || h[n - 1] != ')')
        return "";
    static const char *const units[] = {"ns", "us", "ms", "s"};
    for (size_t i = 0; i < 4; i++)
        if ((size_t)(h + n - 1 - open - 1) == strlen(units[i]) && !strncmp(open + 1, units[i], strlen(units[i])))
            return units[i];
    return "";
}

/* The placeholder names of a message, checked against the columns: the
 * first that names none fails, at the message's place. */
static tb_status check_names(const adv_rule *r, tb_error *err)
{
    const tb_spec_advice *adv = r->rep->advice;
    const char *s = adv->message;
    for (size_t i = 0; s[i]; i++) {
        if ((s[i] == '{' && s[i + 1] == '{') || (s[i] == '}' && s[i + 1] == '}')) {
            i++;
            continue;
        }
        if (s[i] != '{')
            continue;
        const char *end = strchr(s + i, '}');
        size_t len = (size_t)(end - s) - i - 1;
        int found = len == 1 && s[i + 1] == '#';
        for (size_t k = 0; k < r->nc && !found; k++)
            found = strlen(r->names[k]) == len && !strncmp(r->names[k], s + i + 1, len);
        if (!found) {
            char cols[400];
            size_t at = 0;
            cols[0] = 0;
            for (size_t k = 0; k < r->nc && at < sizeof cols; k++) {
                int w = snprintf(cols + at, sizeof cols - at, "%s%s", k ? ", " : "", r->names[k]);
                at += w > 0 ? (size_t)w : 0;
            }
            return tb_error_at(err, TB_ERR_PARSE, adv->message_pos.file, adv->message_pos.line,
                               adv->message_pos.column, -1,
                               "report '%s': 'message' names '{%.*s}', which is no column of its SQL; its columns: "
                               "%s (or {#}, the number of rows)",
                               r->rep->id, (int)len, s + i + 1, cols);
        }
        i += len + 1;
    }
    return TB_OK;
}

static tb_status tee_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    tee *t = (tee *)s;
    adv_rule *r = &t->a->v[t->rule];
    if (!r->began) {
        r->began = 1;
        if (!(r->names = calloc(n ? n : 1, sizeof *r->names)) || !(r->headers = calloc(n ? n : 1, sizeof *r->headers)) ||
            !(r->units = calloc(n ? n : 1, sizeof *r->units)))
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            const char *name = cols[i].name ? cols[i].name : cols[i].header;
            r->nc = i + 1;
            if (!(r->names[i] = strdup(name)) || !(r->headers[i] = strdup(cols[i].header)) ||
                !(r->units[i] = strdup(value_unit(&cols[i]))))
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        tb_status rc = check_names(r, err);
        if (rc)
            return rc;
    }
    return t->inner->begin(t->inner, cols, n, err);
}

/* A cell as the writers spell it: exact decimals, never an exponent. */
static int keep_cell(const tb_cell *c, adv_cell *out)
{
    char buf[NUMFMT_MAX];
    size_t n;
    out->kind = 0;
    out->text = NULL;
    switch (c->kind) {
    case TB_CELL_NULL:
        return 0;
    case TB_CELL_INT:
        numfmt_scaled(c->i, c->scale, buf);
        out->kind = 'n';
        return (out->text = strdup(buf)) ? 0 : -1;
    case TB_CELL_REAL:
        if (!(n = numfmt_double(c->d, buf)))
            return 0; /* NaN and infinities: null, as the JSON writer has them */
        out->kind = 'n';
        return (out->text = strdup(buf)) ? 0 : -1;
    case TB_CELL_TEXT:
        out->kind = 's';
        if (!(out->text = malloc(c->n + 1)))
            return -1;
        if (c->n)
            memcpy(out->text, c->s, c->n);
        out->text[c->n] = 0;
        return 0;
    }
    return 0;
}

static tb_status tee_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    tee *t = (tee *)s;
    adv_rule *r = &t->a->v[t->rule];
    if (r->kept < ADVISOR_KEEP_ROWS) {
        adv_cell *v = realloc(r->cells, (r->kept + 1) * (r->nc ? r->nc : 1) * sizeof *v);
        if (!v)
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        r->cells = v;
        for (size_t i = 0; i < r->nc; i++)
            if (keep_cell(&cells[i], &v[r->kept * r->nc + i])) {
                for (size_t k = 0; k < i; k++)
                    free(v[r->kept * r->nc + k].text);
                return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            }
        r->kept++;
    }
    r->rows++;
    return t->inner->row(t->inner, cells, err);
}

static tb_status tee_finish(tb_sink *s, tb_error *err)
{
    tee *t = (tee *)s;
    return t->inner->finish(t->inner, err);
}

static void tee_destroy(tb_sink *s)
{
    tee *t = (tee *)s;
    sink_destroy(t->inner);
    free(t);
}

tb_status advisor_wrap(advisor *a, const tb_spec_report *rep, tb_sink *inner, tb_sink **out, tb_error *err)
{
    *out = NULL;
    size_t index;
    tee *t = calloc(1, sizeof *t);
    if (!t || !rule_of(a, rep, &index)) {
        free(t);
        sink_destroy(inner);
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    t->vt = (tb_sink){.begin = tee_begin, .row = tee_row, .finish = tee_finish, .destroy = tee_destroy};
    t->inner = inner;
    t->a = a;
    t->rule = index;
    *out = &t->vt;
    return TB_OK;
}

tb_sink *advisor_inner(tb_sink *s)
{
    return s && s->begin == tee_begin ? ((tee *)s)->inner : s;
}

/* ---- the findings -------------------------------------------------------------- */

/* The message of rule r: placeholders filled from its first row. New, or NULL. */
static char *render(const adv_rule *r)
{
    const char *s = r->rep->advice->message;
    char *out = NULL;
    size_t out_n = 0;
    FILE *b = open_memstream(&out, &out_n);
    if (!b)
        return NULL;
    for (size_t i = 0; s[i]; i++) {
        if ((s[i] == '{' && s[i + 1] == '{') || (s[i] == '}' && s[i + 1] == '}')) {
            fputc(s[i], b);
            i++;
            continue;
        }
        if (s[i] != '{') {
            fputc(s[i], b);
            continue;
        }
        size_t len = (size_t)(strchr(s + i, '}') - s) - i - 1;
        if (len == 1 && s[i + 1] == '#') {
            char n[32];
            snprintf(n, sizeof n, "%llu", (unsigned long long)r->rows);
            fputs(n, b);
        }
        for (size_t k = 0; k < r->nc && r->kept; k++)
            if (strlen(r->names[k]) == len && !strncmp(r->names[k], s + i + 1, len)) {
                const adv_cell *c = &r->cells[k];
                const char *text = c->text ? c->text : "NULL";
                fputs(text, b);
                if (c->kind == 'n')
                    fputs(r->units[k], b);
                break;
            }
        i += len + 1;
    }
    if (fclose(b)) {
        free(out);
        return NULL;
    }
    return out;
}

/* The threshold rule rep ran with, as text: its --param override (RULE.threshold= wins over
 * threshold=), else its param's value. Into buf (NUMFMT_MAX bytes). */
static const char *threshold_text(const tb_spec_report *rep, const tb_run_options *o, char *buf)
{
    const char *plain = NULL;
    size_t il = strlen(rep->id);
    for (size_t i = 0; i < o->n_params; i++) {
        const char *kv = o->params[i];
        if (!strncmp(kv, rep->id, il) && !strncmp(kv + il, ".threshold=", 11)) {
            snprintf(buf, NUMFMT_MAX, "%s", kv + il + 11);
            return buf;
        }
        if (!strncmp(kv, "threshold=", 10))
            plain = kv + 10;
    }
    if (plain) {
        snprintf(buf, NUMFMT_MAX, "%s", plain);
        return buf;
    }
    buf[0] = 0;
    for (size_t i = 0; i < rep->n_params; i++) {
        const tb_param *p = &rep->params[i];
        if (strcmp(p->name, "threshold") || !p->has_value)
            continue;
        if (p->type == TB_PARAM_REAL)
            numfmt_double(p->d, buf);
        else
            snprintf(buf, NUMFMT_MAX, "%lld", (long long)p->i);
    }
    return buf;
}

/* The files rule rep's report wrote, from the metadata's reports: "a.csv b.json". New, or NULL. */
static json_t *evidence_files(json_t *reports, const tb_spec_report *rep)
{
    for (size_t i = 0; i < json_array_size(reports); i++) {
        json_t *o = json_array_get(reports, i);
        if (!strcmp(json_string_value(json_object_get(o, "id")), rep->id))
            return json_deep_copy(json_object_get(o, "files"));
    }
    return json_array();
}

/* The fired rules, critical first, then in run order: indexes into a->v, count in *n. New. */
static size_t *fired_order(const advisor *a, size_t *n)
{
    size_t *v = malloc((a->n ? a->n : 1) * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (int sev = TB_N_SEVERITIES - 1; sev >= 0; sev--)
        for (size_t i = 0; i < a->n; i++)
            if (a->v[i].rows && (int)a->v[i].rep->advice->severity == sev)
                v[(*n)++] = i;
    return v;
}

/* One finding in words: the fields both files write, in this order. */
enum { F_SEVERITY, F_RULE, F_TITLE, F_FINDING, F_SUGGESTION, F_ROWS, F_THRESHOLD, F_REASON, F_SOURCE, F_EVIDENCE,
       F_N };
static const char *const csv_headers[F_N] = {"Severity", "Rule", "Title", "Finding", "Suggestion", "Evidence Rows",
                                             "Threshold", "Reason", "Source", "Evidence Files"};
static const char *const json_keys[F_N] = {"severity", "rule", "title", "finding", "suggestion", "evidence_rows",
                                           "threshold", "reason", "source", "evidence_files"};

typedef struct finding_text {
    const char *v[F_N];
    char *message, *files;
    char rows[32], threshold[NUMFMT_MAX];
    json_t *file_list;
} finding_text;

static int finding_make(const adv_rule *r, json_t *reports, const tb_run_options *o, finding_text *f)
{
    const tb_spec_advice *adv = r->rep->advice;
    memset(f, 0, sizeof *f);
    if (!(f->message = render(r)) || !(f->file_list = evidence_files(reports, r->rep)))
        return -1;
    size_t len = 0;
    FILE *m = open_memstream(&f->files, &len);
    if (!m)
        return -1;
    for (size_t i = 0; i < json_array_size(f->file_list); i++)
        fprintf(m, "%s%s", i ? " " : "", json_string_value(json_array_get(f->file_list, i)));
    if (fclose(m))
        return -1;
    snprintf(f->rows, sizeof f->rows, "%llu", (unsigned long long)r->rows);
    f->v[F_SEVERITY] = tb_severity_name(adv->severity);
    f->v[F_RULE] = r->rep->id;
    f->v[F_TITLE] = r->rep->title ? r->rep->title : r->rep->id;
    f->v[F_FINDING] = f->message;
    f->v[F_SUGGESTION] = adv->suggestion;
    f->v[F_ROWS] = f->rows;
    f->v[F_THRESHOLD] = threshold_text(r->rep, o, f->threshold);
    f->v[F_REASON] = adv->reason;
    f->v[F_SOURCE] = adv->source ? adv->source : "";
    f->v[F_EVIDENCE] = f->files;
    return 0;
}

static void finding_clear(finding_text *f)
{
    free(f->message);
    free(f->files);
    json_decref(f->file_list);
}

/* The findings as rows of sink s (begun, fed and finished here; not destroyed). */
static tb_status write_rows(tb_sink *s, const advisor *a, const size_t *order, size_t n, json_t *reports,
                            const tb_run_options *o, tb_error *err)
{
    tb_sink_column cols[F_N];
    for (size_t i = 0; i < F_N; i++)
        cols[i] = (tb_sink_column){.header = csv_headers[i], .name = csv_headers[i], .type = TB_COL_PLAIN,
                                   .width = i == F_FINDING || i == F_SUGGESTION || i == F_REASON ? 60 : 0};
    tb_status rc = s->begin(s, cols, F_N, err);
    for (size_t k = 0; k < n && !rc; k++) {
        finding_text f;
        if (finding_make(&a->v[order[k]], reports, o, &f)) {
            finding_clear(&f);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        tb_cell cells[F_N];
        for (size_t i = 0; i < F_N; i++) {
            cells[i] = (tb_cell){.kind = TB_CELL_TEXT, .s = f.v[i], .n = strlen(f.v[i])};
            if (i == F_ROWS)
                cells[i] = (tb_cell){.kind = TB_CELL_INT, .i = (int64_t)a->v[order[k]].rows};
        }
        rc = s->row(s, cells, err);
        finding_clear(&f);
    }
    return rc ? rc : s->finish(s, err);
}

static tb_status write_csv(const char *path, const advisor *a, const size_t *order, size_t n, json_t *reports,
                           const tb_run_options *o, tb_error *err)
{
    tb_sink *s = NULL;
    tb_status rc = csv_sink_create(path, &(csv_sink_options){.rows_per_file = SIZE_MAX}, &s, err);
    if (!rc)
        rc = write_rows(s, a, order, n, reports, o, err);
    sink_destroy(s);
    return rc;
}

tb_status advisor_write_sheet(advisor *a, tb_sink *sheet, json_t *reports, const tb_run_options *o, tb_error *err)
{
    size_t n = 0, *order = fired_order(a, &n);
    if (!order)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    tb_status rc = write_rows(sheet, a, order, n, reports, o, err);
    free(order);
    const char *name = rc ? NULL : xlsx_sink_sheet(sheet, 0);
    if (name && !(a->sheet = strdup(name)))
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    return rc;
}

static void put_file(void *ctx, const char *p, size_t n)
{
    fwrite(p, 1, n, (FILE *)ctx);
}

static void json_text(FILE *f, const char *s)
{
    json_string_out(s, strlen(s), put_file, f);
}

/* The evidence of rule r: an array of objects keyed by the columns' headers. */
static void json_evidence(FILE *f, const adv_rule *r)
{
    fputs("[", f);
    for (size_t k = 0; k < r->kept; k++) {
        fputs(k ? ",\n        {" : "\n        {", f);
        for (size_t i = 0; i < r->nc; i++) {
            const adv_cell *c = &r->cells[k * r->nc + i];
            if (i)
                fputs(", ", f);
            json_text(f, r->headers[i]);
            fputs(": ", f);
            if (!c->kind)
                fputs("null", f);
            else if (c->kind == 'n')
                fputs(c->text, f);
            else
                json_text(f, c->text);
        }
        fputs("}", f);
    }
    fputs(r->kept ? "\n      ]" : "]", f);
}

/* advisor.json's text (new), or NULL when out of memory. */
static char *json_doc(const advisor *a, const size_t *order, size_t n, json_t *reports, const tb_run_options *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int bad = 0;
    fprintf(f, "{\n  \"counts\": {\"critical\": %llu, \"warning\": %llu, \"info\": %llu},\n  \"findings\": [",
            (unsigned long long)a->counts[TB_SEVERITY_CRITICAL], (unsigned long long)a->counts[TB_SEVERITY_WARNING],
            (unsigned long long)a->counts[TB_SEVERITY_INFO]);
    for (size_t k = 0; k < n && !bad; k++) {
        const adv_rule *r = &a->v[order[k]];
        finding_text ft;
        if ((bad = finding_make(r, reports, o, &ft)) != 0) {
            finding_clear(&ft);
            break;
        }
        fputs(k ? ",\n    {" : "\n    {", f);
        for (size_t i = 0; i < F_N; i++) {
            fprintf(f, "%s\n      \"%s\": ", i ? "," : "", json_keys[i]);
            if (i == F_ROWS)
                fputs(ft.rows, f);
            else if (i == F_EVIDENCE) {
                fputs("[", f);
                for (size_t j = 0; j < json_array_size(ft.file_list); j++) {
                    fputs(j ? ", " : "", f);
                    json_text(f, json_string_value(json_array_get(ft.file_list, j)));
                }
                fputs("]", f);
            } else
                json_text(f, ft.v[i]);
        }
        fputs(",\n      \"evidence\": ", f);
        json_evidence(f, r);
        fputs("\n    }", f);
        finding_clear(&ft);
    }
    fputs(n ? "\n  ],\n  \"rules\": [" : "],\n  \"rules\": [", f);
    for (size_t i = 0; i < a->n; i++) {
        const adv_rule *r = &a->v[i];
        fputs(i ? ",\n    {\"rule\": " : "\n    {\"rule\": ", f);
        json_text(f, r->rep->id);
        fprintf(f, ", \"severity\": \"%s\", ", tb_severity_name(r->rep->advice->severity));
        if (r->skipped) {
            fputs("\"skipped\": ", f);
            json_text(f, r->skipped);
        } else
            fprintf(f, "\"evidence_rows\": %llu", (unsigned long long)r->rows);
        fputs("}", f);
    }
    fputs(a->n ? "\n  ]\n}\n" : "]\n}\n", f);
    if (fclose(f) || bad) {
        free(text);
        return NULL;
    }
    return text;
}

/* <dir>/advisor[_<label>].<ext>, new. */
static char *out_path(const char *dir, const char *label, const char *ext)
{
    size_t n = strlen(dir) + (label ? strlen(label) : 0) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/advisor%s%s.%s", dir, label && *label ? "_" : "", label ? label : "", ext);
    return p;
}

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

tb_status advisor_write(advisor *a, int files, const char *dir, const char *label, json_t *reports,
                        const tb_run_options *o, const file_ids *ids, uint64_t counts[TB_N_SEVERITIES],
                        void (*written)(void *ctx, const char *path), void *ctx, tb_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].rows)
            a->counts[a->v[i].rep->advice->severity]++;
    memcpy(counts, a->counts, sizeof a->counts);
    if (!files)
        return TB_OK;
    size_t *order = fired_order(a, &n);
    char *csv = out_path(dir, label, "csv"), *json = out_path(dir, label, "json"), *text = NULL;
    tb_status rc = TB_OK;
    if (!order || !csv || !json) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = file_ids_check(ids, csv, err)) || (rc = file_ids_check(ids, json, err)))
        goto done;
    if (!(text = json_doc(a, order, n, reports, o))) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = write_csv(csv, a, order, n, reports, o, err)) || (rc = json_write_file(json, text, err)))
        goto done;
    if (!(a->files[0] = strdup(base_of(csv))) || !(a->files[1] = strdup(base_of(json)))) {
        rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (written) {
        written(ctx, csv);
        written(ctx, json);
    }
done:
    free(order);
    free(csv);
    free(json);
    free(text);
    return rc;
}

json_t *advisor_manifest(const advisor *a)
{
    json_t *m = json_object(), *files = json_array(), *counts = json_object(), *rules = json_array();
    for (size_t i = 0; i < 2; i++)
        if (a->files[i])
            json_array_append_new(files, json_string(a->files[i]));
    for (int sev = TB_N_SEVERITIES - 1; sev >= 0; sev--)
        json_object_set_new(counts, tb_severity_name((tb_severity)sev), json_integer((json_int_t)a->counts[sev]));
    for (size_t i = 0; i < a->n; i++) {
        const adv_rule *r = &a->v[i];
        json_t *o = json_object();
        json_object_set_new(o, "rule", json_string(r->rep->id));
        json_object_set_new(o, "severity", json_string(tb_severity_name(r->rep->advice->severity)));
        if (r->skipped)
            json_object_set_new(o, "skipped", json_string(r->skipped));
        else {
            json_object_set_new(o, "fired", json_boolean(r->rows > 0));
            json_object_set_new(o, "evidence_rows", json_integer((json_int_t)r->rows));
        }
        json_array_append_new(rules, o);
    }
    json_object_set_new(m, "files", files);
    if (a->sheet)
        json_object_set_new(m, "sheet", json_string(a->sheet));
    json_object_set_new(m, "counts", counts);
    json_object_set_new(m, "rules", rules);
    return m;
}
