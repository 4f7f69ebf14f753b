/* SPDX-License-Identifier: MIT */
/*
 * output.h - the writers of report rows (private to the engine).
 *
 * The runner hands rows to a tb_sink (include/tracebook/output.h). The
 * sinks made here are the CSV, JSON and console writers and the sheets of
 * an XLSX workbook (xlsx_out.c); they share the same pieces:
 *
 *   - afile: an output file written under a temporary name in its final
 *     directory and renamed into place only when complete, so that a reader
 *     never sees half a file and an interrupted run leaves nothing behind
 *     (the temporary is registered with tb_temp_register).
 *   - numfmt: exact decimal text for numbers: scaled integers (typed time
 *     columns after --timeunit) and the shortest round-tripping double.
 *   - out_sink: the common head of every sink made here, so that the caller
 *     can list the files a sink wrote (sink_written) to tell the user.
 *
 * Typical use:
 *
 *     tb_sink *s;
 *     if (csv_sink_create("out/top.csv", &(csv_sink_options){.bom = 1}, &s, err)) ...
 *     st = s->begin(s, cols, n, err);
 *     while (... && st == TB_OK) st = s->row(s, cells, err);
 *     if (st == TB_OK) st = s->finish(s, err);
 *     const char *const *paths;
 *     size_t k = sink_written(s, &paths);   (the files now in place)
 *     sink_destroy(s);                       (removes temporaries unless finished)
 */
#ifndef TB_OUTPUT_H
#define TB_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/error.h"
#include "tracebook/output.h"

/* ---- atomic output files ------------------------------------------------- */

/* An output file being written. Fields are read-only for callers, except f for writing. */
typedef struct afile {
    FILE *f;          /* write here; NULL once closed */
    char *path;       /* the final path (owned) */
    char *tmp;        /* the temporary path beside it (owned), NULL when none is left */
    char *buf;        /* f's stdio buffer (owned) */
    int registered;   /* tmp is in the tb_temp table */
    int direct;       /* a stream or device written in place: no tmp, no rename */
} afile;

/*
 * Creates final_path.tmp-<pid>@<host>-XXXXXX in final_path's directory and opens it for
 * writing with a 256 KiB buffer; the temporary gets the permissions a new
 * final_path would get (0666 less the umask). Fills *af (caller memory):
 * finish it with afile_commit or afile_abort. On error *af is zeroed and err
 * names final_path.
 *
 * "-", /dev/stdout and /dev/stderr write to a duplicate of the standard
 * descriptor; other paths under /dev/ or /proc/ and existing non-regular
 * files (a FIFO) are opened and written in place (af->direct is 1).
 */
tb_status afile_open(const char *final_path, afile *af, tb_error *err);

/*
 * Flushes and closes the file without renaming it (to bound the number of
 * open files when a writer makes many). Any write error that stdio held back
 * (a full disk) is reported here as TB_ERR_IO naming the final path; the
 * afile is left for afile_abort then.
 */
tb_status afile_close(afile *af, tb_error *err);

/*
 * Closes the file if still open (checking every write error as above) and
 * renames it to its final path, atomically replacing a file already there.
 * On success or failure the afile is finished: on failure the temporary is
 * removed and err names the final path. Frees af's memory either way.
 */
tb_status afile_commit(afile *af, tb_error *err);

/* Changes the final path of an afile not yet committed (path is copied). */
tb_status afile_retarget(afile *af, const char *final_path, tb_error *err);

/* Closes and removes the temporary, frees af's memory. A zeroed or finished afile is fine. */
void afile_abort(afile *af);

/*
 * Copies the file at path to f, then flushes f. Returns 0, or the step that
 * failed with errno set: FILE_COPY_OPEN (path cannot be opened),
 * FILE_COPY_READ, FILE_COPY_WRITE (f).
 */
enum { FILE_COPY_OPEN = 1, FILE_COPY_READ, FILE_COPY_WRITE };
int file_copy_to(const char *path, FILE *f);

/*
 * Rows bound for a stream go to a private file first, so that an error
 * never leaves half of them on the stream: spool_open makes a private
 * folder under $TMPDIR named after stem ("tracebook-query") and sp->path,
 * the file to write in it, both registered so that an interrupted run
 * removes them. spool_close copies the file to out when ok (what: what a
 * failed write says it was writing) and removes the folder.
 */
typedef struct spool {
    char dir[4096];
    char path[4200];
} spool;

tb_status spool_open(spool *sp, const char *stem, const char *file, tb_error *err);
tb_status spool_close(spool *sp, FILE *out, int ok, const char *what, tb_error *err);

/* ---- numbers as text ----------------------------------------------------- */

/*
 * Room for any text numfmt_* writes, its NUL included: a plain decimal of
 * the smallest subnormal is "-0." then 323 zeros and 17 digits.
 */
#define NUMFMT_MAX 352

/*
 * Writes the exact decimal of v / 10^scale (scale 0..18) into buf
 * (NUMFMT_MAX bytes) with trailing fractional zeros and a bare point
 * removed: (1234, 3) -> "1.234", (1000, 3) -> "1", (-5, 3) -> "-0.005".
 * Returns the length.
 */
size_t numfmt_scaled(int64_t v, int scale, char *buf);

/* The significant digits numfmt_double writes (and the workbook keeps): DBL_DIG. */
#define NUMFMT_DIGITS 15

/*
 * Writes d to NUMFMT_DIGITS significant digits, trailing zeros dropped, into
 * buf (NUMFMT_MAX bytes), as a plain decimal, never in exponent notation:
 * 2.5000000000000047e-07 is "0.00000025", 1e21 is
 * "1000000000000000000000", 13.693200000000001 is "13.6932" (no binary
 * noise). Integral values within 2^53 are written as integers ("3", not
 * "3.0" or "3e+00"); -0.0 is "0". Returns the length, or 0 (buf "") for NaN
 * and infinities: the writer picks their spelling.
 */
size_t numfmt_double(double d, char *buf);

/* As numfmt_double, with the fewest digits (15 to 17) that read back as d
 * exactly: 0.1 + 0.2 is "0.30000000000000004" (the timeline's numbers). */
size_t numfmt_double_exact(double d, char *buf);

/* d as the double nearest its NUMFMT_DIGITS-digit decimal (what numfmt_double writes). */
double numfmt_round(double d);

/* numfmt_round(v / 10^scale) (scale 0..9), the double a workbook keeps of a
 * scaled integer: below 10^15 in magnitude that is the quotient itself (the
 * nearest double to a decimal of at most 15 digits), found without a look
 * at its digits. */
double numfmt_scaled_round(int64_t v, int scale);

/* numfmt_round(d / 100), a ratio 0..100 as the fraction a workbook keeps;
 * most values take one division, none is printed. */
double numfmt_round_pct(double d);

/*
 * Writes ns as topsprof prints a time: two decimals and a unit, "461.00ns",
 * "13.44us", "56.61ms", "1.20s" (rounded half up). unit -1 picks the first
 * of ns, us, ms, s whose rounded value stays below 1000.00 (seconds take any
 * value); 0..3 always writes ns, us, ms or s. buf holds NUMFMT_MAX bytes;
 * returns the length.
 */
size_t numfmt_unit_time(int64_t ns, int unit, char *buf);

/*
 * A cell's text as the CSV writer writes it (without CSV quoting): *text
 * points at num (NUMFMT_MAX bytes) or at the cell's own text; returns the
 * length (0 for NULL). NaN and infinities are "NaN", "inf", "-inf".
 */
size_t numfmt_cell_text(const tb_cell *c, char *num, const char **text);

/* A number cell's value (a scaled integer as the double nearest its decimal), NaN for others. */
double numfmt_cell_value(const tb_cell *c);

/* ---- chart groups: a line per value of a column (chart_groups.c) ----------- */

typedef struct chart_group {
    char *key;                 /* the value's CSV text (NULL: ""), owned */
    uint64_t first, last;      /* its data rows, counted from 0 */
} chart_group;

typedef struct chart_groups {
    chart_group *g;            /* in order of their first row */
    size_t n;
} chart_groups;

typedef struct chart_group_where {
    const char *path;          /* the output file, for the error */
    const char *what;          /* "sheet 'Steps'", "report 'steps'" */
    const char *column;        /* the series_by column */
} chart_group_where;

/*
 * Puts data row `row` (0-based, rows in order), whose series_by cell is c,
 * into its group and sets *idx: the current group when c is its value, else
 * a new one. A value of an earlier group fails (TB_ERR_USAGE: the rows are
 * not grouped by the column; the message names it, the value and the row).
 */
tb_status chart_group_row(chart_groups *gs, const tb_cell *c, uint64_t row, const chart_group_where *w, size_t *idx,
                          tb_error *err);
void chart_groups_free(chart_groups *gs);

/* ---- text ---------------------------------------------------------------- */

/*
 * Decodes the UTF-8 sequence at p (n > 0 bytes left). Returns 1 when it is
 * valid (*len its 1..4 bytes), 0 when not (*len the bytes of the maximal
 * invalid subpart, at least 1: replace them with one U+FFFD, Unicode 3.9
 * "U+FFFD substitution of maximal subparts"). Overlongs, surrogates and
 * code points past U+10FFFF are invalid. The CSV and JSON writers do so;
 * the console prints '?' instead.
 */
int utf8_seq(const char *p, size_t n, size_t *len);

/*
 * Writes s (n bytes; NULL when n is 0) as a JSON string through put (RFC
 * 8259): " and \ escaped, \n \r \t \b \f as such, other control characters
 * as \u00XX, each invalid UTF-8 subpart (utf8_seq) as U+FFFD, the rest as is.
 */
void json_string_out(const char *s, size_t n, void (*put)(void *ctx, const char *p, size_t n), void *ctx);

/* ---- sinks ----------------------------------------------------------------- */

/*
 * The head of every sink made in engine/output/: a tb_sink * from these
 * constructors points to an out_sink. written lists the final paths of the
 * files a successful finish put in place (none before).
 */
typedef struct out_sink {
    tb_sink vt;        /* first member */
    char **written;    /* owned, n_written entries */
    size_t n_written;
} out_sink;

/*
 * The files a sink made by a constructor below has put in place: *paths
 * gets a borrowed array (valid until the sink is destroyed). Returns their
 * count: 0 before a successful finish and for the console.
 */
size_t sink_written(const tb_sink *s, const char *const **paths);

/* Calls s->destroy(s); NULL is fine. */
void sink_destroy(tb_sink *s);

typedef struct csv_sink_options {
    size_t rows_per_file; /* data rows per file before a new slice starts; 0 = 1,000,000 */
    int bom;              /* 1: each file starts with a UTF-8 BOM (Excel) */
    int formula_safe;     /* 1: a text cell a spreadsheet would take for a formula gets a leading ' */
    size_t slice_insert;  /* 0: slices are path_1.csv, path_2.csv, ...; n: msprof's names, "slice_<k>_"
                             (k from 0) inserted after the first n bytes of the file name */
} csv_sink_options;

/*
 * A CSV writer (RFC 4180 quoting, "\n" line ends, a header row in every
 * file, the headers as given even when repeated). Text, headers included,
 * is written as valid UTF-8: each maximal invalid subpart (utf8_seq) and
 * each NUL byte becomes U+FFFD, other bytes are written unchanged. When the
 * rows need more than one file, the files are path with _1, _2, ... before
 * its extension (out/top_1.csv) and path itself is not written; finish()
 * renames every file into place and, after a split, removes a path left by
 * an earlier run. A stream (af->direct, e.g. /dev/stdout) is never split
 * and is not listed by sink_written. opt may be NULL. Returns new in *out
 * (free with sink_destroy); the first file is created here so that an
 * unwritable place fails early.
 */
tb_status csv_sink_create(const char *path, const csv_sink_options *opt, tb_sink **out, tb_error *err);

typedef struct json_sink_options {
    int reserved; /* no options yet: pass NULL */
} json_sink_options;

/*
 * A JSON writer: an array of objects, one per row and one per line, keys
 * the column headers made unique: a header that repeats an earlier one
 * (compared after the U+FFFD replacement) gets " (2)", " (3)", ... appended,
 * the first suffix that no header and no earlier key has. Numbers as JSON
 * numbers, NULL, NaN and infinities as null, text as strings (invalid UTF-8
 * replaced by U+FFFD). No rows: "[]". opt may be NULL. Returns new in *out
 * (free with sink_destroy).
 */
tb_status json_sink_create(const char *path, const json_sink_options *opt, tb_sink **out, tb_error *err);

/*
 * A JSON writer of a report's one value (`json_shape: document`): exactly
 * one row of one text column, a JSON value, written to path as one line
 * (", " and ": " separators, non-ASCII escaped; json_doc.c). Another shape
 * or invalid JSON is an error naming path, and nothing is written.
 */
tb_status json_doc_sink_create(const char *path, tb_sink **out, tb_error *err);

/* Writes text (NUL-terminated) as the whole file path, atomically. */
tb_status json_write_file(const char *path, const char *text, tb_error *err);

typedef struct console_options {
    const char *title;  /* a line printed before the table, or NULL (borrowed until finish) */
    int max_col_width;  /* in code points, longer texts are cut in the middle ("head...tail"); 0 = 40 */
    size_t max_rows;    /* rows printed, the rest counted as "(N more rows)"; 0 = all */
    size_t width_rows;  /* rows held to compute the column widths; 0 = 1000 */
} console_options;

/*
 * A console table on f (borrowed; not closed): columns two spaces apart,
 * numbers right-aligned, text left-aligned, the header underlined with '-'.
 * Widths come from the header and the first width_rows rows; later rows are
 * cut to them. Control characters print as spaces and invalid UTF-8 bytes
 * as '?'. opt may be NULL. Returns new in *out (free with sink_destroy).
 */
tb_status console_sink_create(FILE *f, const console_options *opt, tb_sink **out, tb_error *err);

/* ---- XLSX workbooks ------------------------------------------------------ */

/*
 * One workbook per run: an About sheet first (key/value rows the caller
 * gives as plain text), then one sheet per report, each fed through its own
 * tb_sink. The writer sees columns and cells only; what a sheet is named,
 * charts and conditional formats arrive as the plain descriptions below,
 * their columns named as tb_sink_column.name (else .header) names them.
 *
 *     xlsx_book *b;
 *     xlsx_create("out/tracebook.xlsx", &(xlsx_options){.about = kv, .n_about = n}, &b, err);
 *     xlsx_sheet_sink(b, &(xlsx_sheet_options){.name = "Top kernels"}, &s, err);
 *     ... s->begin, s->row, s->finish, sink_destroy(s) ...
 *     xlsx_commit(b, err);      (the file now in place)
 *     xlsx_destroy(b);          (removes everything unless committed)
 */
typedef struct xlsx_book xlsx_book;

typedef struct xlsx_pair {
    const char *key;    /* borrowed for the call */
    const char *value;
} xlsx_pair;

typedef struct xlsx_options {
    const xlsx_pair *about;   /* the About sheet's rows, copied by xlsx_create */
    size_t n_about;
    int64_t created;          /* the document's creation time (Unix seconds); fixed so that
                                 the same rows give the same bytes */
    const char *tmpdir;       /* the writer's temporary files; NULL = the workbook's folder */
    size_t rows_per_sheet;    /* rows per sheet, header included, before "<name> (2)"
                                 starts; 0 = Excel's 1,048,576 (a test sets a small one) */
    int contents;             /* 1: at commit the About sheet lists every other sheet, each a link to
                                 its cell A1, before the notes */
} xlsx_options;

typedef enum xlsx_chart_kind {
    XLSX_CHART_NONE = 0,
    XLSX_CHART_BAR,
    XLSX_CHART_STACKED_BAR,
    XLSX_CHART_COLUMN,
    XLSX_CHART_STACKED_COLUMN,
    XLSX_CHART_LINE,
    XLSX_CHART_PIE
} xlsx_chart_kind;

typedef struct xlsx_chart {
    xlsx_chart_kind kind;
    const char *categories;       /* a column, or NULL (1, 2, 3, ...) */
    const char *const *values;    /* one series per column (a pie takes one) */
    size_t n_values;
    int below;                    /* workbook: under the table, a page wide, bars as tall as their categories
                                     need (first at the top), value axis #,##0; else right of the table */
    const char *series_by;        /* LINE: a series per distinct value of this column, each over its own rows
                                     (the rows come grouped by it); a workbook draws it as an x-y chart over the
                                     categories' numbers; NULL: a series per value column over every row */
    int series_by_rank;           /* series_by names a :rank column of the report's SQL, which the rows lack
                                     when one rank is loaded: then one line, as without series_by */
    int ratio;                    /* bars of ratios new / base: the value axis spans the values and 1 with a
                                     margin, crosses (and the bars start) at 1, titled "x base" */
} xlsx_chart;

typedef enum xlsx_cond_kind { XLSX_COND_THRESHOLD, XLSX_COND_TOP, XLSX_COND_DATA_BAR, XLSX_COND_COLOR_SCALE } xlsx_cond_kind;
typedef enum xlsx_cond_op { XLSX_OP_GT, XLSX_OP_GE, XLSX_OP_LT, XLSX_OP_LE, XLSX_OP_EQ, XLSX_OP_NE } xlsx_cond_op;

typedef struct xlsx_cond {
    const char *column;
    xlsx_cond_kind kind;
    xlsx_cond_op op;    /* THRESHOLD */
    double value;       /* THRESHOLD: in the column's unit as the CSV writes it (a ratio 0..100) */
    int top;            /* TOP: the N largest, 1..1000 */
    int good;           /* THRESHOLD, TOP: the cells are better, not worse: green instead of red */
} xlsx_cond;

typedef struct xlsx_sheet_options {
    const char *name;          /* wanted name: made valid and unique (xlsx_sheet_name) */
    const char *key;           /* fills the sheet xlsx_sheet_reserve made for this key, or NULL */
    xlsx_chart chart;          /* kind NONE: no chart */
    const xlsx_cond *conds;
    size_t n_conds;
} xlsx_sheet_options;

/* Room for any sheet name xlsx_sheet_name writes (31 UTF-16 units, up to 4 bytes each). */
#define XLSX_SHEET_NAME_MAX 128

/*
 * Makes want a valid sheet name into out (XLSX_SHEET_NAME_MAX bytes): each of
 * []:*?/\ and each control character becomes '_', invalid UTF-8 becomes
 * '_', leading and trailing apostrophes are dropped, the name is cut to 31
 * UTF-16 units on a character boundary, an empty name is "Sheet", and
 * "History" (Excel's) becomes "History_". Then, while the name equals
 * (ASCII case-insensitively) one of the n names of used, " (2)", " (3)", ...
 * is appended, the base cut so that the whole stays within 31 units.
 */
void xlsx_sheet_name(const char *want, const char *const *used, size_t n, char *out);

/*
 * Starts the workbook at path (written under a temporary name in its folder,
 * libxlsxwriter's constant-memory mode, temporary files in opt->tmpdir) and
 * its About sheet. Returns new in *out (finish with xlsx_commit, free with
 * xlsx_destroy). Errors name path.
 */
tb_status xlsx_create(const char *path, const xlsx_options *opt, xlsx_book **out, tb_error *err);

/*
 * Adds a sheet for one report and returns the sink that fills it: new in
 * *out (free with sink_destroy; the sheet stays in the book). so's strings
 * are borrowed until the sink's finish. One sink at a time: a sheet is
 * complete when its sink finished. Charts and conditional formats whose
 * columns the report does not have fail at begin, naming the sheet.
 */
tb_status xlsx_sheet_sink(xlsx_book *b, const xlsx_sheet_options *so, tb_sink **out, tb_error *err);

/*
 * Adds a sheet now, named from name, for the sink that will come with this
 * key (xlsx_sheet_options.key): sheets appear in the order they are added,
 * so reserving them first orders them. A reserved sheet no sink fills stays
 * empty; a sheet's continuations ("<name> (2)") are added when needed.
 * key is copied.
 */
tb_status xlsx_sheet_reserve(xlsx_book *b, const char *key, const char *name, tb_error *err);

/* The name of the k-th sheet (0-based) a sheet sink has filled so far, or NULL: borrowed (valid until xlsx_destroy). */
const char *xlsx_sink_sheet(const tb_sink *s, size_t k);

/* Adds a line to the About sheet's notes (text copied). */
tb_status xlsx_note(xlsx_book *b, const char *text, tb_error *err);

/* The number of sheets so far, About included. */
size_t xlsx_sheet_count(const xlsx_book *b);

/*
 * Writes the contents list (xlsx_options.contents) and the notes into the About sheet, closes the workbook and renames it
 * into place. Fails when a sheet's sink did not finish. Afterwards only
 * xlsx_destroy may be called.
 */
tb_status xlsx_commit(xlsx_book *b, tb_error *err);

/* Frees the book; without a successful commit nothing is left on disk. NULL is fine. */
void xlsx_destroy(xlsx_book *b);

/* ---- HTML pages ------------------------------------------------------------ */

/*
 * One self-contained page per run: a headline (the run's facts as key/value
 * rows, the load's warnings), then one section per report fed through its
 * own tb_sink, in the order the sinks come: a title, a description, the
 * chart the report declares (drawn as SVG by svg.c) and its table. No byte
 * of the page comes from elsewhere: the CSS and the little script that
 * sorts and filters the tables are inline, and a Content-Security-Policy
 * forbids every request. Every string of the data is escaped. The same
 * rows give the same bytes.
 *
 * A table keeps its first max_rows rows (HTML_MAX_ROWS by default) and says
 * how many it has in all and which file holds them; a chart draws its first
 * HTML_CHART_CATS categories (HTML_LINE_POINTS for a line; a pie adds the
 * rest as one "other" slice).
 *
 *     html_page *p;
 *     html_create("out/report.html", &(html_options){.title = "tracebook report", ...}, &p, err);
 *     html_section_sink(p, &(html_section_options){.title = "Top kernels", ...}, &s, err);
 *     ... s->begin, s->row, s->finish, sink_destroy(s) ...
 *     html_commit(p, err);      (the file now in place)
 *     html_destroy(p);          (removes everything unless committed)
 */
#define HTML_MAX_ROWS 1000
#define HTML_CHART_CATS 30
#define HTML_LINE_POINTS 500
#define HTML_SERIES_ROWS 4000   /* rows a series_by line chart keeps */
#define HTML_CHART_SERIES 64    /* lines a series_by chart draws */

typedef struct html_page html_page;

typedef struct html_options {
    const char *title;          /* the page's title and first heading */
    const xlsx_pair *facts;     /* the headline's rows (copied) */
    size_t n_facts;
    const char *const *warnings; /* the load's warnings (copied) */
    size_t n_warnings;
    size_t max_rows;            /* rows a table keeps; 0 = HTML_MAX_ROWS */
} html_options;

typedef struct html_section_options {
    const char *title;          /* the section's heading */
    const char *description;    /* or NULL */
    xlsx_chart chart;           /* kind NONE: no chart */
    const char *full_file;      /* the file with every row (a CSV's name), named by a cut table, or NULL */
    const char *name;           /* what errors call the section (a report id) */
    int lead;                   /* 1: before every section without it (a summary made last) */
    const char *const *cat_also; /* columns whose texts follow the category's in a chart's names, " · " */
    size_t n_cat_also;          /* between them (a key, then its column and report) */
    int chart_each;             /* 1: a chart per value column (small multiples) instead of one for all */
    const char *const *marks;   /* chart_each lines: a marker's text per value column and row, or NULL */
    const char *const *mark_class; /* (row r of value column i at [i * n_mark_rows + r]) and its CSS */
    size_t n_mark_rows;         /* class ("regression", "improvement"); borrowed until finish */
    const char *value_label;    /* chart_each: the value axis's label, or NULL (each value column's header) */
    const char *class_col;      /* bars and columns: a column whose text is each row's marks' CSS class, or
                                   NULL; the page colours "regression" red and "improvement" green */
} html_section_options;

/* Starts the page at path (under a temporary name). Returns new in *out (free with html_destroy). */
tb_status html_create(const char *path, const html_options *opt, html_page **out, tb_error *err);

/*
 * A section for one report and the sink that fills it: new in *out (free
 * with sink_destroy). so's strings are borrowed until the sink's finish.
 * One sink at a time; a section is complete at its sink's finish and put
 * in the page, in the order sections finish (lead ones first), at
 * html_commit. Chart columns the report does not have fail at begin.
 */
tb_status html_section_sink(html_page *p, const html_section_options *so, tb_sink **out, tb_error *err);

/* Adds a line to the page's notes, written at its end (text copied). */
tb_status html_note(html_page *p, const char *text, tb_error *err);

/* Ends the page and renames it into place. Afterwards only html_destroy may be called. */
tb_status html_commit(html_page *p, tb_error *err);

/* Frees the page; without a successful commit nothing is left on disk. NULL is fine. */
void html_destroy(html_page *p);

/* Writes s (n bytes) as HTML text: the escaping of svg_text (svg.h). */
void html_text(FILE *f, const char *s, size_t n);

#endif
