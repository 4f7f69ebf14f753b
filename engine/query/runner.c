/* SPDX-License-Identifier: MIT */
/*
 * runner.c - runs report specs over a unified DB, in a sandbox.
 *
 * One read-only connection serves a whole run: the window's TEMP views are
 * created first (trusted), then the authorizer goes up and every report's
 * SQL runs under it. The authorizer allows reading and calling functions,
 * nothing else: no writes (not even to temp), no ATTACH, no PRAGMA but a few
 * read-only ones, no extension loading; a progress handler counts VM steps
 * and stops a runaway query (an endless recursive CTE) with an error that
 * names the report.
 *
 * A report's columns come from its SQL aliases. An alias may end in a type
 * (`"Total Time:dur_ns"`, `:ts_ns`, `:ratio_%`, `:mem_B`; one that reads
 * like a type but is none, `:ratio_pct`, is an error) and a leading '_'
 * hides a helper column. Typed time columns are converted to --timeunit
 * exactly (integer ns become a scaled integer: no float noise) and their
 * header gets the unit: "Total Time(us)". `sort` and `limit` wrap the SQL in
 * an outer SELECT, so a built-in's order can be changed without editing it.
 * Parameters are always bound, never pasted into SQL.
 *
 * A report of `scope: rank` runs once per rank: the window's views are
 * made to show one rank (report/window.c: window_for_rank), computed tables
 * that are rank by rank are built once and read through views of the rank,
 * and the rows of every rank go to the same sinks in rank order
 * (runner_ranks.c). Rows gathered from shards (scale/partial.c) are written
 * by runner_replay.c. This file is the core both use: the connection, the
 * columns, parameters and statements, the pump from a statement to the
 * sinks, computed tables, and the run of the specs; runner_int.h lists what
 * the three files share.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "query/printf_guard.h"
#include "query/sandbox.h"
#include "spec/spec.h"
#include "query/row_batch.h"
#include "query/runner_int.h"
#include "query/sqlfuncs.h"
#include "query/watchdog.h"
#include "query/window.h"
#include "db/limits.h"
#include "db/overflow.h"
#include "util/vec.h"
#include "tracebook/error.h"
#include "tracebook/query.h"
#include "tracebook/db.h"

const run_part runner_no_part;

/* --- budget ------------------------------------------------------------- */

static int progress(void *ctx)
{
    runner *r = ctx;
    /* the CPU limit stops trusted work too: a builder over a crafted DB */
    if (watchdog_fired(r->db)) {
        r->cpu_hit = 1;
        return 1;
    }
    if (r->sb.trusted)
        return 0;
    if (++r->steps > r->max_chunks) {
        r->budget_hit = 1;
        return 1;
    }
    return 0;
}

tb_status runner_open_db(runner *r, tb_error *err)
{
    const tb_run_options *o = r->opt;
    if (!o->db)
        return tb_error_set(err, TB_ERR_INTERNAL, "%s: no connection to run on", o->db_name ? o->db_name : "DB");
    r->db = o->db;
    sqlite3_extended_result_codes(r->db, 1);
    /* A DB that is not SQLite fails here, on the first read. */
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(r->db, "SELECT count(*) FROM main.sqlite_master WHERE name = 'STRING_IDS'", -1, &st,
                                NULL);
    int ok = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "%s: cannot read the DB: %s", o->db_name, sqlite3_errmsg(r->db));
    if (!ok)
        return tb_error_set(err, TB_ERR_PARSE, "%s: not a unified trace DB (no STRING_IDS table)", o->db_name);
    if (sqlfuncs_register(r->db) != SQLITE_OK || printf_guard_register(r->db) != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "registering SQL functions: %s", sqlite3_errmsg(r->db));
    r->max_chunks = (o->max_steps > 0 ? o->max_steps : TB_DEFAULT_MAX_STEPS) / STEP_CHUNK;
    if (r->max_chunks < 1)
        r->max_chunks = 1;
    /* the ranks the load recorded; a DB made another way: those its tasks name */
    r->n_ranks = 0;
    static const char *const rank_sql[] = {"SELECT count(DISTINCT rankId) FROM TB_RANK",
                                           "SELECT count(DISTINCT rankId) FROM TASK"};
    for (size_t q = 0; q < 2 && r->n_ranks == 0; q++) {
        if (sqlite3_prepare_v2(r->db, rank_sql[q], -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            r->n_ranks = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        st = NULL;
    }
    if (o->window.rank_set)
        r->n_ranks = 1; /* one rank's rows, as a DB of that rank alone */
    if (r->pt->ranks_total > r->n_ranks)
        r->n_ranks = r->pt->ranks_total; /* a part of a load: the load's */
    /* the CPU limit scales with the DB (page count times page size) */
    int64_t bytes = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                           -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        bytes = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    r->cpu_seconds = limits_cpu_seconds(bytes);
    tb_status st2 = sandbox_install(&r->sb, r->db, o->db_name, err);
    if (st2 != TB_OK)
        return st2;
    sqlite3_progress_handler(r->db, STEP_CHUNK, progress, r);
    return runner_arm(r, err);
}

tb_status runner_arm(runner *r, tb_error *err)
{
    r->cpu_hit = 0;
    limits_clear_hits();
    return watchdog_arm(r->db, r->cpu_seconds, err);
}

tb_status runner_limits_check(runner *r, const char *what, tb_status rc, tb_error *err)
{
    if (r->cpu_hit || watchdog_fired(r->db))
        return tb_error_set(err, TB_ERR_USAGE,
                            "%s: stopped after %.0f s of CPU time (the CPU limit of a report); "
                            "a query that never ends? raise the limit with --max-cpu-time",
                            what, r->cpu_seconds);
    char why[4400];
    int k = rc ? limits_explain(SQLITE_FULL, why, sizeof why) : 0;
    if (rc && !k && strstr(err->message, "out of memory"))
        k = limits_explain(SQLITE_NOMEM, why, sizeof why);
    if (k)
        return tb_error_set(err, k == LIMIT_DISK_FULL ? TB_ERR_IO : TB_ERR_USAGE, "%s: %s", what, why);
    return rc;
}

/* --- columns ------------------------------------------------------------ */

static const struct { const char *suffix; tb_col_type type; } col_types[] = {
    {"dur_ns", TB_COL_DUR_NS}, {"ts_ns", TB_COL_TS_NS}, {"ratio_%", TB_COL_RATIO_PCT}, {"mem_B", TB_COL_MEM_B},
    {"rank", TB_COL_RANK},
};

/* Does s read like a type suffix: letters and digits, '_', then letters or '%' ("ratio_pct")? */
static int looks_like_type(const char *s)
{
    size_t a = 0, b = 0;
    while (isalnum((unsigned char)s[a]))
        a++;
    if (a == 0 || s[a] != '_')
        return 0;
    s += a + 1;
    while (isalpha((unsigned char)s[b]) || s[b] == '%')
        b++;
    return b > 0 && s[b] == 0;
}

/* Splits an alias into base and type. Returns -1 when the alias ends in
 * what reads like a type suffix but is none of them (a typo such as
 * ":ratio_pct" would otherwise silently be part of the name). */
static int parse_alias(const char *alias, char **base, tb_col_type *type)
{
    const char *colon = strrchr(alias, ':');
    *type = TB_COL_PLAIN;
    size_t n = strlen(alias);
    int known = 0;
    if (colon) {
        for (size_t i = 0; i < sizeof col_types / sizeof col_types[0]; i++)
            if (strcmp(colon + 1, col_types[i].suffix) == 0) {
                *type = col_types[i].type;
                n = (size_t)(colon - alias);
                known = 1;
            }
    }
    *base = strndup(alias, n);
    return colon && colon > alias && !known && looks_like_type(colon + 1) ? -1 : 0;
}

void runner_columns_free(column *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].alias);
        free(c[i].base);
        free(c[i].header);
    }
    free(c);
}

const tb_spec_column *runner_column_opt(const tb_spec_report *rep, const char *base)
{
    for (size_t i = 0; rep && i < rep->n_columns; i++)
        if (strcmp(rep->columns[i].name, base) == 0)
            return &rep->columns[i];
    return NULL;
}

static tb_status read_columns(sqlite3_stmt *st, const tb_spec_report *rep, tb_time_unit unit, column **out,
                              size_t *n, tb_error *err)
{
    int nc = sqlite3_column_count(st);
    column *c = calloc(nc > 0 ? (size_t)nc : 1, sizeof *c);
    if (!c)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    int header_units = rep ? rep->header_units : 1;
    for (int i = 0; i < nc; i++) {
        const char *name = sqlite3_column_name(st, i);
        c[i].alias = strdup(name ? name : "");
        int bad = parse_alias(c[i].alias ? c[i].alias : "", &c[i].base, &c[i].type);
        if (!c[i].alias || !c[i].base) {
            runner_columns_free(c, (size_t)nc);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
        if (bad) {
            char what[300];
            snprintf(what, sizeof what, "%s%.200s%s", rep ? "report '" : "query", rep ? rep->id : "", rep ? "'" : "");
            tb_status code = TB_ERR_PARSE;
            if (rep && rep->sql_pos.file)
                tb_error_at(err, code, rep->sql_pos.file, rep->sql_pos.line, rep->sql_pos.column, -1,
                            "%s: column '%.200s': unknown type suffix '%.60s'; the types are :dur_ns, :ts_ns, "
                            ":ratio_%%, :mem_B, :rank", what, c[i].alias, strrchr(c[i].alias, ':'));
            else
                tb_error_set(err, code, "%s: column '%.200s': unknown type suffix '%.60s'; the types are :dur_ns, "
                             ":ts_ns, :ratio_%%, :mem_B, :rank", what, c[i].alias, strrchr(c[i].alias, ':'));
            runner_columns_free(c, (size_t)nc);
            return code;
        }
        c[i].hidden = c[i].base[0] == '_';
        c[i].opt = runner_column_opt(rep, c[i].base);
        const char *suffix = "";
        char unitbuf[8];
        if (header_units) {
            if (c[i].type == TB_COL_DUR_NS || c[i].type == TB_COL_TS_NS) {
                snprintf(unitbuf, sizeof unitbuf, "(%s)", tb_unit_name(unit));
                suffix = unitbuf;
            } else if (c[i].type == TB_COL_RATIO_PCT) {
                suffix = "(%)";
            } else if (c[i].type == TB_COL_MEM_B) {
                suffix = "(B)";
            }
        }
        if (c[i].opt && c[i].opt->header)
            c[i].header = strdup(c[i].opt->header);
        else {
            size_t len = strlen(c[i].base) + strlen(suffix) + 1;
            c[i].header = malloc(len);
            if (c[i].header)
                snprintf(c[i].header, len, "%s%s", c[i].base, suffix);
        }
        if (!c[i].header) {
            runner_columns_free(c, (size_t)nc);
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    }
    *out = c;
    *n = (size_t)nc;
    return TB_OK;
}

/* A usage error at the start of a report's SQL in its spec (no position for a query). */
static tb_status sql_error_at(const tb_spec_report *rep, tb_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- parameters --------------------------------------------------------- */

/* Converts text to a param of type t. Returns 0 or -1. */
static int param_parse(tb_param_type t, const char *text, tb_param *p)
{
    char *end = NULL;
    errno = 0;
    switch (t) {
    case TB_PARAM_INT: {
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || *end)
            return -1;
        p->i = v;
        return 0;
    }
    case TB_PARAM_REAL: {
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v))
            return -1;
        p->d = v;
        return 0;
    }
    case TB_PARAM_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes")) {
            p->i = 1;
            return 0;
        }
        if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no")) {
            p->i = 0;
            return 0;
        }
        return -1;
    default:
        p->s = (char *)text;
        return 0;
    }
}

static const char *type_name(tb_param_type t)
{
    switch (t) {
    case TB_PARAM_INT: return "int";
    case TB_PARAM_REAL: return "real";
    case TB_PARAM_BOOL: return "bool";
    default: return "text";
    }
}

static const tb_param *find_param(const tb_param *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

/* The --param override for name in report id, or NULL: "id.name=v" wins over "name=v". */
static const char *find_override(const tb_run_options *o, const char *id, const char *name)
{
    const char *plain = NULL;
    size_t nl = strlen(name), il = id ? strlen(id) : 0;
    for (size_t i = 0; i < o->n_params; i++) {
        const char *kv = o->params[i];
        if (id && !strncmp(kv, id, il) && kv[il] == '.' && !strncmp(kv + il + 1, name, nl) && kv[il + 1 + nl] == '=')
            return kv + il + 2 + nl;
        if (!strncmp(kv, name, nl) && kv[nl] == '=')
            plain = kv + nl + 1;
    }
    return plain;
}

static tb_status bind_params(runner *r, sqlite3_stmt *st, const tb_spec *spec, const tb_spec_report *rep,
                             const char *what, tb_error *err)
{
    int n = sqlite3_bind_parameter_count(st);
    for (int i = 1; i <= n; i++) {
        const char *pn = sqlite3_bind_parameter_name(st, i);
        if (!pn)
            return sql_error_at(rep, err, "%s: positional parameter '?' in SQL; use a named one (:name)", what);
        const char *name = pn + 1;
        const tb_param *p = rep ? find_param(rep->params, rep->n_params, name) : NULL;
        if (!p && spec)
            p = find_param(spec->params, spec->n_params, name);
        const char *ov = find_override(r->opt, rep ? rep->id : NULL, name);
        if (!p && !ov)
            return sql_error_at(rep, err, "%s: SQL parameter '%s' is not declared under params", what, pn);
        tb_param v = p ? *p : (tb_param){.type = TB_PARAM_TEXT};
        if (!p && ov) {
            /* an undeclared value (query --param) is typed by its text:
             * "1000" binds as an integer, "1.5" as a real, else text */
            tb_param probe;
            if (param_parse(TB_PARAM_INT, ov, &probe) == 0)
                v.type = TB_PARAM_INT;
            else if (param_parse(TB_PARAM_REAL, ov, &probe) == 0)
                v.type = TB_PARAM_REAL;
        }
        if (ov) {
            if (param_parse(v.type, ov, &v) != 0)
                return tb_error_set(err, TB_ERR_USAGE, "--param %s=%s: '%s' is not a valid %s", name, ov, ov,
                                    type_name(v.type));
            v.has_value = 1;
        }
        if (!v.has_value)
            return tb_error_set(err, TB_ERR_USAGE, "%s: parameter '%s' has no default; give it with --param %s=VALUE",
                                what, name, name);
        int rc;
        switch (v.type) {
        case TB_PARAM_INT:
        case TB_PARAM_BOOL: rc = sqlite3_bind_int64(st, i, v.i); break;
        case TB_PARAM_REAL: rc = sqlite3_bind_double(st, i, v.d); break;
        default: rc = sqlite3_bind_text(st, i, v.s ? v.s : "", -1, SQLITE_TRANSIENT); break;
        }
        if (rc != SQLITE_OK)
            return tb_error_set(err, TB_ERR_DB, "%s: binding '%s': %s", what, pn, sqlite3_errmsg(r->db));
    }
    return TB_OK;
}

/* Every --param must name a parameter some report or spec declares. */
tb_status runner_check_overrides(const tb_run_options *o, tb_error *err)
{
    for (size_t i = 0; i < o->n_params; i++) {
        const char *kv = o->params[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return tb_error_set(err, TB_ERR_USAGE, "--param '%s': expected NAME=VALUE or REPORT.NAME=VALUE", kv);
        int found = 0;
        for (size_t s = 0; s < o->n_specs && !found; s++) {
            const tb_spec *sp = o->specs[s];
            for (size_t k = 0; k < sp->n_params && !found; k++)
                found = strlen(sp->params[k].name) == (size_t)(eq - kv) && !strncmp(sp->params[k].name, kv, eq - kv);
            for (size_t rp = 0; rp < sp->n_reports && !found; rp++) {
                const tb_spec_report *rep = &sp->reports[rp];
                size_t il = strlen(rep->id);
                const char *name = kv;
                int scoped = !strncmp(kv, rep->id, il) && kv[il] == '.';
                if (scoped)
                    name = kv + il + 1;
                for (size_t k = 0; k < rep->n_params && !found; k++)
                    found = strlen(rep->params[k].name) == (size_t)(eq - name) &&
                            !strncmp(rep->params[k].name, name, eq - name);
                /* REPORT.NAME may also set a spec-wide param for that report */
                for (size_t k = 0; scoped && k < sp->n_params && !found; k++)
                    found = strlen(sp->params[k].name) == (size_t)(eq - name) &&
                            !strncmp(sp->params[k].name, name, eq - name);
            }
        }
        if (!found)
            return tb_error_set(err, TB_ERR_USAGE, "--param '%.*s': no report declares this parameter", (int)(eq - kv),
                                kv);
    }
    return TB_OK;
}

/* --- statements --------------------------------------------------------- */

/* The position of byte offset off of sql, added to the SQL's place in its spec. */
static void sql_position(const tb_spec_report *rep, const char *sql, int off, long *line, long *col)
{
    *line = rep && rep->sql_pos.line ? rep->sql_pos.line : 1;
    *col = rep && rep->sql_pos.column ? rep->sql_pos.column : 1;
    /* folded or quoted YAML and JSON strings do not map onto the file:
     * only the start of the SQL is exact */
    if (off < 0 || !rep || !rep->sql_verbatim)
        return;
    long l = 0, c = 0;
    for (int i = 0; i < off && sql[i]; i++) {
        if (sql[i] == '\n') {
            l++;
            c = 0;
        } else if (((unsigned char)sql[i] & 0xC0) != 0x80) {
            c++;   /* characters, not bytes: UTF-8 continuation bytes do not count */
        }
    }
    /* a block scalar's lines are all indented by the column its first line
     * starts at (YAML strips that indentation from the text) */
    *line += l;
    *col += c;
}

static tb_status sql_error(runner *r, const tb_spec_report *rep, const char *sql, const char *what, int rc,
                           tb_error *err)
{
    /* a refusal of the authorizer surfaces as SQLITE_AUTH, or as a plain
     * error for a refused function: its reason is the message either way */
    const char *msg = sandbox_message(&r->sb, r->db);
    /* SQL that does not compile is a broken spec (bad input), not a DB failure */
    tb_status code = r->sb.denied[0] || rc == SQLITE_AUTH ? TB_ERR_USAGE : TB_ERR_PARSE;
    if (rep && rep->sql_pos.file) {
        long line, col;
        /* an offset into the wrapper maps back into the report's SQL */
        int off = sqlite3_error_offset(r->db);
        off = off >= r->sql_shift ? off - r->sql_shift : -1;
        if (off >= 0 && (size_t)off > strlen(sql + r->sql_shift))
            off = -1;
        sql_position(rep, sql + r->sql_shift, off, &line, &col);
        return tb_error_at(err, code, rep->sql_pos.file, line, col, -1, "%s: %s", what, msg);
    }
    tb_error_set(err, code, "%s: %s", what, msg);
    /* a query's error: the byte offset in its statement, for the caller to show */
    if (!r->sb.denied[0] && rc != SQLITE_AUTH)
        err->offset = sqlite3_error_offset(r->db);
    return code;
}

/* A usage error at the start of the report's SQL (no position for a query). */
static tb_status sql_error_at(const tb_spec_report *rep, tb_error *err, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rep && rep->sql_pos.file)
        return tb_error_at(err, TB_ERR_USAGE, rep->sql_pos.file, rep->sql_pos.line, rep->sql_pos.column, -1, "%s",
                           msg);
    return tb_error_set(err, TB_ERR_USAGE, "%s", msg);
}

/* Prepares exactly one statement. */
static tb_status prepare_one(runner *r, const tb_spec_report *rep, const char *sql, const char *what,
                             sqlite3_stmt **out, tb_error *err)
{
    const char *tail = NULL;
    r->sb.denied[0] = 0;
    int rc = sqlite3_prepare_v2(r->db, sql, -1, out, &tail);
    if (rc != SQLITE_OK)
        return sql_error(r, rep, sql, what, rc, err);
    if (!*out)
        return sql_error_at(rep, err, "%s: the SQL holds no statement", what);
    if (!sqlite3_stmt_readonly(*out) || sqlite3_column_count(*out) == 0) {
        /* VACUUM and the like pass the authorizer's questions but write; a
         * statement of no column is no query either (REINDEX of a table
         * without indexes asks the authorizer nothing and counts as read-only) */
        sqlite3_finalize(*out);
        *out = NULL;
        return sql_error_at(rep, err, "%s: only a read-only statement (SELECT, WITH, VALUES) may run", what);
    }
    while (tail && *tail) {
        sqlite3_stmt *more = NULL;
        const char *t2 = NULL;
        /* only to see whether more text follows: never run */
        r->sb.trusted = 1;
        rc = sqlite3_prepare_v2(r->db, tail, -1, &more, &t2);
        r->sb.trusted = 0;
        if (rc != SQLITE_OK || more) {
            sqlite3_finalize(more);
            sqlite3_finalize(*out);
            *out = NULL;
            if (rc != SQLITE_OK) {
                tb_status e = sql_error(r, rep, sql, what, rc, err);
                if (!rep && err->offset >= 0)
                    err->offset += tail - sql;   /* the offset was in the text after the first statement */
                return e;
            }
            return sql_error_at(rep, err, "%s: the SQL holds more than one statement", what);
        }
        if (t2 == tail)
            break;
        tail = t2;
    }
    return TB_OK;
}

/* The SQL text without trailing blanks and semicolons: new (free). */
static char *trim_sql(const char *sql)
{
    size_t n = strlen(sql);
    while (n && (sql[n - 1] == ';' || sql[n - 1] == ' ' || sql[n - 1] == '\n' || sql[n - 1] == '\t' ||
                 sql[n - 1] == '\r'))
        n--;
    return strndup(sql, n);
}

/* The start of the wrapper of sort and limit; the report's SQL follows it. */
#define WRAP_HEAD "SELECT * FROM (\n"

/* Wraps the report's SQL for its sort and limit. Returns new text (free). */
static tb_status wrap_sql(const tb_spec_report *rep, const char *sql, const column *c, size_t nc, const char *what,
                          char **out, tb_error *err)
{
    char *inner = trim_sql(sql);
    if (!inner)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendf(s, WRAP_HEAD "%s\n)", inner);
    free(inner);
    for (size_t i = 0; i < rep->n_sort; i++) {
        const column *hit = NULL;
        for (size_t k = 0; k < nc && !hit; k++)
            if (!strcmp(c[k].base, rep->sort[i].column) || !strcmp(c[k].alias, rep->sort[i].column))
                hit = &c[k];
        if (!hit) {
            sqlite3_str *names = sqlite3_str_new(NULL);
            for (size_t k = 0; k < nc; k++)
                sqlite3_str_appendf(names, "%s'%s'", k ? ", " : "", c[k].base);
            char *list = sqlite3_str_finish(names);
            sqlite3_free(sqlite3_str_finish(s));
            tb_status rc = tb_error_at(err, TB_ERR_USAGE, rep->sort[i].pos.file, rep->sort[i].pos.line,
                                       rep->sort[i].pos.column, -1, "%s: sort column '%s' is not a column; columns: %s",
                                       what, rep->sort[i].column, list ? list : "");
            sqlite3_free(list);
            return rc;
        }
        sqlite3_str_appendf(s, "%s\"%w\"%s", i ? ", " : " ORDER BY ", hit->alias, rep->sort[i].desc ? " DESC" : "");
    }
    if (rep->limit >= 0)
        sqlite3_str_appendf(s, " LIMIT %lld", (long long)rep->limit);
    char *text = sqlite3_str_finish(s);
    if (!text)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    *out = strdup(text);
    sqlite3_free(text);
    return *out ? TB_OK : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
}

/* 1 when column c is written: not hidden (`_name`), and a rank column only
 * when there are ranks to tell apart. */
static int shown(const runner *r, const column *c)
{
    return !c->hidden && !(c->type == TB_COL_RANK && r->n_ranks < 2);
}

/* --- pivot: columns named by the data ------------------------------------ */

static void pivot_clear_row(runner *r)
{
    for (size_t j = 0; j < r->pv_n && r->pv_vals; j++) {
        sqlite3_value_free(r->pv_vals[j]);
        r->pv_vals[j] = NULL;
    }
}

/* Looks up the current row's pivot values (pivot.values with :key = the row's key). */
static tb_status pivot_row(runner *r, sqlite3_stmt *st, const column *c, tb_error *err)
{
    pivot_clear_row(r);
    sqlite3_reset(r->pv);
    sqlite3_bind_value(r->pv, 1, sqlite3_column_value(st, r->pv_key));
    int s;
    while ((s = sqlite3_step(r->pv)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(r->pv, 0);
        for (size_t j = 0; name && j < r->pv_n; j++)
            if (!r->pv_vals[j] && !strcmp(name, c[r->pv_first + j].base)) {
                if (!(r->pv_vals[j] = sqlite3_value_dup(sqlite3_column_value(r->pv, 1))))
                    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                break;
            }
    }
    if (s != SQLITE_DONE)
        return tb_error_set(err, TB_ERR_DB, "pivot values: %s", sandbox_message(&r->sb, r->db));
    return TB_OK;
}

/* The cell of pivot column j of the current row (the value as stored; pivot.missing when none). */
static void pivot_cell(runner *r, size_t j, tb_cell *cell)
{
    sqlite3_value *v = r->pv_vals[j];
    int t = v ? sqlite3_value_type(v) : SQLITE_NULL;
    if (t == SQLITE_INTEGER) {
        *cell = (tb_cell){.kind = TB_CELL_INT, .i = sqlite3_value_int64(v)};
    } else if (t == SQLITE_FLOAT) {
        *cell = (tb_cell){.kind = TB_CELL_REAL, .d = sqlite3_value_double(v)};
    } else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
        const char *p = (const char *)sqlite3_value_text(v);
        *cell = (tb_cell){.kind = TB_CELL_TEXT, .s = p ? p : "", .n = p ? (size_t)sqlite3_value_bytes(v) : 0};
    } else if (r->pv_missing) {
        *cell = (tb_cell){.kind = TB_CELL_TEXT, .s = r->pv_missing, .n = strlen(r->pv_missing)};
    } else {
        *cell = (tb_cell){.kind = TB_CELL_NULL};
    }
}

static void pivot_free(runner *r)
{
    pivot_clear_row(r);
    free(r->pv_vals);
    sqlite3_finalize(r->pv);
    r->pv = NULL;
    r->pv_vals = NULL;
    r->pv_n = 0;
}

/*
 * Sets up the report's pivot: its names (pivot.names, one column each, in
 * order, duplicates once) become plain columns after the SQL's in *c, and
 * pivot.values is prepared for the rows.
 */
static tb_status pivot_open(runner *r, const tb_spec_report *rep, column **c, size_t *nc, const char *what,
                            tb_error *err)
{
    char w[400];
    r->pv_key = -1;
    for (size_t i = 0; i < *nc; i++)
        if (!strcmp((*c)[i].base, rep->pivot_key) || !strcmp((*c)[i].alias, rep->pivot_key))
            r->pv_key = (int)i;
    if (r->pv_key < 0)
        return tb_error_at(err, TB_ERR_USAGE, rep->pos.file, rep->pos.line, rep->pos.column, -1,
                           "report '%s': pivot key '%s' is not a column of the report", rep->id, rep->pivot_key);
    sqlite3_stmt *names = NULL;
    snprintf(w, sizeof w, "%s: pivot names", what);
    tb_status rc = prepare_one(r, NULL, rep->pivot_names, w, &names, err);
    if (rc)
        return rc;
    r->pv_first = *nc;
    int s;
    while (!rc && (s = sqlite3_step(names)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(names, 0);
        if (!name || !*name)
            continue;
        int dup = 0;
        for (size_t i = r->pv_first; i < *nc && !dup; i++)
            dup = !strcmp((*c)[i].base, name);
        if (dup)
            continue;
        column *more = realloc(*c, (*nc + 1) * sizeof **c);
        if (!more) {
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        *c = more;
        column *x = &(*c)[*nc];
        memset(x, 0, sizeof *x);
        x->alias = strdup(name);
        x->base = strdup(name);
        x->header = strdup(name);
        (*nc)++;
        if (!x->alias || !x->base || !x->header)
            rc = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    }
    if (!rc && s != SQLITE_DONE)
        rc = runner_step_error(r, w, err);
    sqlite3_finalize(names);
    if (rc)
        return rc;
    r->pv_n = *nc - r->pv_first;
    snprintf(w, sizeof w, "%s: pivot values", what);
    if ((rc = prepare_one(r, NULL, rep->pivot_values, w, &r->pv, err)))
        return rc;
    if (sqlite3_bind_parameter_count(r->pv) != 1 || sqlite3_column_count(r->pv) < 2) {
        sqlite3_finalize(r->pv);
        r->pv = NULL;
        return tb_error_at(err, TB_ERR_USAGE, rep->pos.file, rep->pos.line, rep->pos.column, -1,
                           "report '%s': pivot values must take one parameter (:key) and give name, value", rep->id);
    }
    if (!(r->pv_vals = calloc(r->pv_n ? r->pv_n : 1, sizeof *r->pv_vals)))
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    r->pv_missing = rep->pivot_missing;
    return TB_OK;
}

tb_status runner_step_error(runner *r, const char *what, tb_error *err)
{
    const char *msg = sandbox_message(&r->sb, r->db);
    if (!r->sb.denied[0] && !strcmp(msg, "integer overflow")) {
        /* tracebook's own look at the DB: outside the sandbox and the step
         * budget (the CPU limit still holds) */
        int trusted = r->sb.trusted;
        r->sb.trusted = 1;
        tb_status rc = db_overflow_explain(r->db, NULL, what, err);
        r->sb.trusted = trusted;
        if (rc)
            return rc;
        msg = "integer overflow";
    }
    return tb_error_set(err, TB_ERR_DB, "%s: %s", what, msg);
}

/* Steps st to the end, converting each row and handing it to every sink,
 * a batch of rows at a time (row_batch.h). Which columns are shown and
 * which are times is settled once, not per row. */
tb_status runner_pump(runner *r, sqlite3_stmt *st, const column *c, size_t nc, tb_sink **sinks, size_t ns,
                      const char *what, uint64_t *rows, tb_error *err)
{
    int *from = calloc(nc ? nc : 1, sizeof *from); /* shown column k: SQL column from[k] */
    unsigned char *timed = calloc(nc ? nc : 1, 1);
    row_batch b = {0};
    tb_status rc = !from || !timed ? tb_error_set(err, TB_ERR_NOMEM, "out of memory") : TB_OK;
    size_t nv = 0;
    for (size_t i = 0; !rc && i < nc; i++)
        if (shown(r, &c[i])) {
            timed[nv] = c[i].type == TB_COL_DUR_NS || c[i].type == TB_COL_TS_NS;
            from[nv++] = (int)i;
        }
    if (!rc)
        rc = row_batch_init(&b, nv, sinks, ns, rows, err);
    int scale = (int)r->opt->unit;
    r->steps = 0;
    r->budget_hit = 0;
    r->sb.denied[0] = 0;
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->pv && (rc = pivot_row(r, st, c, err)))
            break;
        tb_cell *cells = row_batch_next(&b);
        for (size_t k = 0; k < nv; k++) {
            size_t i = (size_t)from[k];
            if (r->pv && i >= r->pv_first)
                pivot_cell(r, i - r->pv_first, &cells[k]); /* sets every field */
            else
                cell_of(st, (int)i, timed[k], scale, 1, &cells[k]);
        }
        rc = row_batch_keep(&b, err);
    }
    /* the rows before a failing step reach the sinks, as they did row by row */
    if (!rc)
        rc = row_batch_flush(&b, err);
    if (!rc && s != SQLITE_DONE) {
        if (r->budget_hit)
            rc = tb_error_set(err, TB_ERR_USAGE,
                              "%s: stopped after %" PRId64 " SQLite steps (the step budget); "
                              "a query that never ends? raise the budget with --max-steps",
                              what, r->max_chunks * STEP_CHUNK);
        else
            rc = runner_step_error(r, what, err);
    }
    row_batch_free(&b);
    free(from);
    free(timed);
    return rc;
}

/* Begins the sinks with the shown columns of c; *scp gets the column
 * array, which the sinks borrow until they finish (free it after). */
tb_status runner_begin_sinks(runner *r, const column *c, size_t nc, tb_sink **sinks, size_t ns,
                             tb_sink_column **scp, tb_error *err)
{
    tb_sink_column *sc = *scp = calloc(nc ? nc : 1, sizeof *sc);
    if (!sc)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    size_t nv = 0;
    for (size_t i = 0; i < nc; i++)
        if (shown(r, &c[i]))
            sc[nv++] = (tb_sink_column){.header = c[i].header, .name = c[i].base, .type = c[i].type,
                                          .number_format = c[i].opt ? c[i].opt->format : NULL,
                                          .width = c[i].opt ? c[i].opt->width : 0};
    tb_status rc = TB_OK;
    for (size_t j = 0; j < ns && !rc; j++)
        rc = sinks[j]->begin(sinks[j], sc, nv, err);
    return rc;
}

/* A report that ran: counted, and its sinks and the caller told. */
void runner_report_ran(const tb_run_options *o, const tb_spec_report *rep, tb_sink **sinks, size_t ns,
                       uint64_t rows, tb_run_result *res)
{
    res->reports_run++;
    res->rows += rows;
    for (size_t i = 0; i < ns && o->sink_done; i++)
        o->sink_done(o->sink_ctx, rep, sinks[i]);
    if (o->report_done)
        o->report_done(o->sink_ctx, rep, NULL, rows);
}

/* Runs st (prepared, bound) into the sinks opened for it. */
static tb_status run_statement(runner *r, sqlite3_stmt *st, const column *c, size_t nc, tb_sink **sinks, size_t ns,
                               const char *what, uint64_t *rows, int finish, tb_error *err)
{
    tb_sink_column *sc = NULL;
    tb_status rc = runner_begin_sinks(r, c, nc, sinks, ns, &sc, err);
    if (!rc)
        rc = runner_pump(r, st, c, nc, sinks, ns, what, rows, err);
    for (size_t j = 0; j < ns && !rc && finish; j++)
        rc = sinks[j]->finish(sinks[j], err);
    free(sc);
    return rc;
}

/* --- computed tables ------------------------------------------------------ */

static int word_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does text name the identifier id (case-insensitive, as a whole word)? */
int runner_names_word(const char *text, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = text; p && *p; p++) {
        if (sqlite3_strnicmp(p, id, (int)n) == 0 && (p == text || !word_char((unsigned char)p[-1])) &&
            !word_char((unsigned char)p[n]))
            return 1;
    }
    return 0;
}

/* The text of parameter name for rep of spec: the --param that sets it,
 * else its declared value (INT, BOOL and REAL written into buf); NULL when
 * neither. */
static const char *param_text(const runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *name,
                              char *buf, size_t cap)
{
    const char *ov = find_override(r->opt, rep ? rep->id : NULL, name);
    if (ov)
        return ov;
    const tb_param *p = rep ? find_param(rep->params, rep->n_params, name) : NULL;
    if (!p && spec)
        p = find_param(spec->params, spec->n_params, name);
    if (!p || !p->has_value)
        return NULL;
    switch (p->type) {
    case TB_PARAM_INT:
    case TB_PARAM_BOOL: snprintf(buf, cap, "%lld", (long long)p->i); return buf;
    case TB_PARAM_REAL: snprintf(buf, cap, "%.17g", p->d); return buf;
    default: return p->s ? p->s : "";
    }
}

/* What a build asks of the report's parameters (metric_ctx.param): each
 * name and the value given, kept to tell whether a later report may reuse
 * the table. */
typedef struct param_ask {
    const runner *r;
    const tb_spec *spec;
    const tb_spec_report *rep;
    char buf[64];
    char **asked;
    size_t n, cap;
    int oom;
} param_ask;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *ask_param(void *ctx, const char *name)
{
    param_ask *a = ctx;
    const char *v = param_text(a->r, a->spec, a->rep, name, a->buf, sizeof a->buf);
    char *n = strdup(name), *d = dup_or_null(v);
    if (!n || (v && !d) || VEC_PUSH(a->asked, a->n, a->cap, n) || VEC_PUSH(a->asked, a->n, a->cap, d)) {
        a->oom = 1;
        if (!a->n || a->asked[a->n - 1] != n)
            free(n);
        free(d);
    }
    return v;
}

static void free_asked(char **asked, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(asked[i]);
    free(asked);
}

/* 1 when every parameter a build asked for has, for rep, the value it had. */
static int same_params(const runner *r, const tb_spec *spec, const tb_spec_report *rep, const struct built *b)
{
    char buf[64];
    for (size_t i = 0; i + 1 < b->n_asked; i += 2) {
        const char *v = param_text(r, spec, rep, b->asked[i], buf, sizeof buf), *was = b->asked[i + 1];
        if (!v != !was || (v && strcmp(v, was)))
            return 0;
    }
    return 1;
}

/* t's build in one transaction of the connection: a builder that inserts
 * its rows one by one would otherwise take and drop the DB's lock, look
 * for its journal and read its header again for every row. Kept what a
 * failed build wrote, as without it. */
static tb_status build_at_once(runner *r, const metric_table *t, const metric_ctx *m, tb_error *err)
{
    int sp = sqlite3_exec(r->db, "SAVEPOINT tb_build", NULL, NULL, NULL) == SQLITE_OK;
    tb_status rc = t->build(m, err);
    /* an interrupt may have rolled the transaction back already */
    int released = !sp || sqlite3_get_autocommit(r->db) ||
                   sqlite3_exec(r->db, "RELEASE tb_build", NULL, NULL, NULL) == SQLITE_OK;
    if (!released && !rc)
        rc = tb_error_set(err, TB_ERR_DB, "computed table '%s': %s", t->name, sqlite3_errmsg(r->db));
    return rc;
}

/* Builds t (and what it depends on) unless built with the same options
 * (spec's; NULL: the defaults) and the same values of the parameters it
 * reads (rep's). */
static tb_status build_metric(runner *r, const metric_table *t, const tb_spec *spec, const tb_spec_report *rep,
                              int depth, tb_error *err)
{
    const metrics_options *options = spec ? spec->metrics : NULL;
    if (depth > 8)
        return tb_error_set(err, TB_ERR_INTERNAL, "computed table '%s': dependency loop", t->name);
    for (size_t i = 0; i < r->n_built; i++)
        if (r->built[i].t == t && metrics_options_equal(r->built[i].options, options) &&
            r->built[i].phase == r->phase && same_params(r, spec, rep, &r->built[i]))
            return TB_OK;
    for (size_t d = 0; d < 4 && t->depends[d]; d++) {
        const metric_table *dep = metrics_find(t->depends[d]);
        if (!dep)
            return tb_error_set(err, TB_ERR_INTERNAL, "computed table '%s' needs unknown '%s'", t->name, t->depends[d]);
        /* from gathered rows, a cluster table needs its parts only */
        if (r->phase == METRICS_COMBINE && !metrics_two_phase(dep))
            continue;
        tb_status rc = build_metric(r, dep, spec, rep, depth + 1, err);
        if (rc)
            return rc;
    }
    param_ask ask = {.r = r, .spec = spec, .rep = rep};
    metric_ctx m = {.db = r->db, .opt = options, .note = r->opt->note, .ctx = r->opt->ctx, .phase = r->phase,
                    .rank_ids = r->pt->rank_ids, .rank_shown = r->pt->rank_shown, .n_rank_ids = r->pt->n_rank_ids,
                    .param = ask_param, .pctx = &ask};
    r->sb.trusted = 1;
    tb_status rc = build_at_once(r, t, &m, err);
    r->sb.trusted = 0;
    if (!rc && ask.oom)
        rc = tb_error_set(err, TB_ERR_NOMEM, "computed table '%s': out of memory", t->name);
    size_t slot = r->n_built;
    for (size_t i = 0; !rc && i < r->n_built; i++)
        if (r->built[i].t == t)
            slot = i;
    if (!rc && slot == r->n_built) {
        if (r->n_built == sizeof r->built / sizeof r->built[0])
            rc = tb_error_set(err, TB_ERR_INTERNAL, "too many computed tables");
        else
            r->built[r->n_built++] = (struct built){0};
    }
    if (rc) {
        free_asked(ask.asked, ask.n);
        return rc;
    }
    free_asked(r->built[slot].asked, r->built[slot].n_asked);
    r->built[slot] = (struct built){t, options, r->phase, ask.asked, ask.n};
    return TB_OK;
}

typedef struct need_ctx {
    runner *r;
    const char *sql;
    const tb_spec *spec;
    const tb_spec_report *rep;
    tb_status rc;
    tb_error *err;
} need_ctx;

static void build_if_named(void *ctx, const metric_table *t)
{
    need_ctx *n = ctx;
    if (n->rc)
        return;
    int named = n->sql && runner_names_word(n->sql, t->name);
    for (size_t i = 0; n->rep && !named && i < n->rep->n_requires; i++)
        named = sqlite3_stricmp(n->rep->requires[i], t->name) == 0;
    if (named)
        n->rc = build_metric(n->r, t, n->spec, n->rep, 0, n->err);
}

/* Builds every computed table the SQL or the report's requires names. */
tb_status runner_build_needed(runner *r, const char *sql, const tb_spec *spec, const tb_spec_report *rep,
                              tb_error *err)
{
    need_ctx n = {.r = r, .sql = sql, .spec = spec, .rep = rep, .err = err};
    metrics_each(build_if_named, &n);
    return n.rc;
}

void runner_free_built(runner *r)
{
    for (size_t i = 0; i < r->n_built; i++)
        free_asked(r->built[i].asked, r->built[i].n_asked);
    r->n_built = 0;
}

/* Leaves the connection as the run found it: no TEMP object, authorizer or
 * step budget of the run stays (the connection is the caller's, and serves
 * its next run). */
void runner_release(runner *r, window_info *wi)
{
    runner_free_built(r);
    if (wi)
        window_info_finish(wi);
    sandbox_finish(&r->sb);
    if (r->db) {
        sqlite3_set_authorizer(r->db, NULL, NULL);
        sqlite3_progress_handler(r->db, 0, NULL, NULL);
        watchdog_disarm(r->db);
        window_reset(r->db);
    }
    r->db = NULL;
}

/* Is the table (or view) there with at least one row? */
int runner_has_rows(runner *r, const char *table, sqlite3_stmt **keep)
{
    r->sb.trusted = 1;
    /* unqualified: the window's view when there is one, a computed table
     * (in temp, built before this check) when the name is one; with keep,
     * the statement is prepared once and kept there (rank by rank) */
    sqlite3_stmt *st = keep ? *keep : NULL;
    int yes = 0;
    if (st) {
        yes = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_reset(st); /* not left reading: a table it reads may be dropped next */
    } else {
        char *q = sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 1", table);
        yes = q && sqlite3_prepare_v2(r->db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
        sqlite3_free(q);
        if (keep) {
            sqlite3_reset(st);
            *keep = st;
        } else {
            sqlite3_finalize(st);
        }
    }
    r->sb.trusted = 0;
    return yes;
}

void runner_notef(const tb_run_options *o, const char *fmt, ...)
{
    if (!o->note)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->note(o->ctx, msg);
}

int runner_wanted(const tb_run_options *o, const char *id)
{
    if (!o->only)
        return 1;
    for (size_t i = 0; i < o->n_only; i++)
        if (!strcmp(o->only[i], id))
            return 1;
    return 0;
}

/*
 * `drop_empty:` the report's rows are stepped through once first, and each
 * column the list names that holds no value (NULL) in any row is hidden:
 * msprof writes as many Reduce column pairs as the widest iteration has.
 * The statement is reset for the run proper (its bindings stay).
 */
static tb_status drop_empty(runner *r, sqlite3_stmt *st, const tb_spec_report *rep, column *c, size_t nc,
                            const char *what, tb_error *err)
{
    for (size_t k = 0; k < rep->n_drop_empty; k++) {
        int found = 0;
        for (size_t i = 0; i < nc; i++)
            found |= !strcmp(c[i].base, rep->drop_empty[k]);
        if (!found)
            return tb_error_at(err, TB_ERR_USAGE, rep->pos.file, rep->pos.line, rep->pos.column, -1,
                               "report '%s': drop_empty column '%s' is not a column of the report", rep->id,
                               rep->drop_empty[k]);
    }
    int *seen = calloc(nc ? nc : 1, sizeof *seen);
    if (!seen)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    r->steps = 0;
    r->budget_hit = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        for (size_t i = 0; i < nc; i++)
            seen[i] |= sqlite3_column_type(st, (int)i) != SQLITE_NULL;
    tb_status rc = TB_OK;
    if (s != SQLITE_DONE)
        rc = r->budget_hit ? tb_error_set(err, TB_ERR_USAGE, "%s: stopped by the step budget (--max-steps)", what)
                           : runner_step_error(r, what, err);
    sqlite3_reset(st);
    for (size_t i = 0; i < nc && !rc; i++)
        for (size_t k = 0; k < rep->n_drop_empty; k++)
            if (!seen[i] && !strcmp(c[i].base, rep->drop_empty[k]))
                c[i].hidden = 1;
    free(seen);
    return rc;
}

/* Prepares the report's statement (wrapped for sort and limit, parameters
 * bound) and reads its columns. On error nothing is left to free. */
tb_status runner_prepare_report(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *what,
                                sqlite3_stmt **stp, column **cp, size_t *ncp, tb_error *err)
{
    sqlite3_stmt *st = NULL;
    column *c = NULL;
    size_t nc = 0;
    char *wrapped = NULL;
    tb_status rc = prepare_one(r, rep, rep->sql, what, &st, err);
    if (rc)
        goto fail;
    if ((rc = read_columns(st, rep, r->opt->unit, &c, &nc, err)))
        goto fail;
    if (rep->n_sort || rep->limit >= 0) {
        /* the statement's own text: a comment after its ';' would swallow
         * the wrapper's closing parenthesis */
        if ((rc = wrap_sql(rep, sqlite3_sql(st), c, nc, what, &wrapped, err)))
            goto fail;
        sqlite3_finalize(st);
        st = NULL;
        r->sql_shift = (int)strlen(WRAP_HEAD);
        rc = prepare_one(r, rep, wrapped, what, &st, err);
        r->sql_shift = 0;
        free(wrapped);
        if (rc)
            goto fail;
    }
    if ((rc = bind_params(r, st, spec, rep, what, err)))
        goto fail;
    *stp = st;
    *cp = c;
    *ncp = nc;
    return TB_OK;
fail:
    sqlite3_finalize(st);
    runner_columns_free(c, nc);
    return rc;
}

/* The formats a report writes, in the order its sinks open. */
static unsigned report_formats(const tb_run_options *o, const tb_spec *spec, const tb_spec_report *rep)
{
    return o->formats ? o->formats : rep->outputs ? rep->outputs : spec->outputs ? spec->outputs : TB_OUT_CSV;
}

static const unsigned format_order[RUNNER_MAX_SINKS] = {TB_OUT_CSV, TB_OUT_JSON, TB_OUT_XLSX, TB_OUT_HTML,
                                                        TB_OUT_CONSOLE};

/* Opens the report's sinks (a format this build does not write opens none). */
tb_status runner_open_sinks(const tb_run_options *o, const tb_spec *spec, const tb_spec_report *rep,
                            const char *label, tb_sink **sinks, size_t *ns, tb_error *err)
{
    unsigned formats = report_formats(o, spec, rep);
    *ns = 0;
    for (size_t i = 0; i < RUNNER_MAX_SINKS; i++) {
        if (!(formats & format_order[i]))
            continue;
        tb_sink *s = NULL;
        tb_status rc = o->open_sink(o->sink_ctx, spec, rep, format_order[i], label, &s, err);
        if (rc)
            return rc;
        if (s)
            sinks[(*ns)++] = s;
    }
    return TB_OK;
}

/* `requires` of the report, on what the connection sees now: NULL when met,
 * else why not (in why). */
const char *runner_unmet(runner *r, const tb_spec_report *rep, sqlite3_stmt **keep, char *why, size_t n)
{
    for (size_t i = 0; i < rep->n_requires; i++)
        if (!runner_has_rows(r, rep->requires[i], keep ? &keep[i] : NULL)) {
            snprintf(why, n, "the data has no %s rows%s", rep->requires[i], r->opt->window.set ? " in the window" : "");
            return why;
        }
    return NULL;
}

void runner_skipped(runner *r, const tb_spec_report *rep, const char *why, tb_run_result *res)
{
    const tb_run_options *o = r->opt;
    /* a shard's run (rank_start set: its rows are gathered) skips for
     * itself only: the run over the gathered rows says whether all did */
    if (!r->pt->rank_start)
        runner_notef(o, "report '%s' skipped: %s", rep->id, why);
    if (o->report_done)
        o->report_done(o->sink_ctx, rep, why, 0);
    res->reports_skipped++;
}

/* --- scope: cluster ----------------------------------------------------------- */

void runner_add_name(name_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!sqlite3_stricmp(l->v[i], name))
            return;
    if (l->n < sizeof l->v / sizeof l->v[0])
        l->v[l->n++] = name;
}

/* Every cluster table: what a cluster-scope report may read. */
static void add_cluster_table(void *ctx, const metric_table *t)
{
    if (metrics_two_phase(t))
        runner_add_name(ctx, t->name);
}

/* The part tables of t and of what it depends on. */
static void add_parts(name_list *l, const metric_table *t, int depth)
{
    if (!t || depth > 8)
        return;
    for (size_t i = 0; i < 4 && t->parts[i]; i++)
        runner_add_name(l, t->parts[i]);
    for (size_t d = 0; d < 4 && t->depends[d]; d++)
        add_parts(l, metrics_find(t->depends[d]), depth + 1);
}

typedef struct parts_ctx {
    const tb_spec_report *rep;
    name_list *l;
} parts_ctx;

static void parts_if_named(void *ctx, const metric_table *t)
{
    parts_ctx *p = ctx;
    int named = runner_names_word(p->rep->sql, t->name);
    for (size_t i = 0; i < p->rep->n_requires && !named; i++)
        named = sqlite3_stricmp(p->rep->requires[i], t->name) == 0;
    if (named)
        add_parts(p->l, t, 0);
}

/* The part tables of the cluster tables a report names (SQL or requires). */
void runner_report_parts(const tb_spec_report *rep, name_list *l)
{
    parts_ctx p = {.rep = rep, .l = l};
    l->n = 0;
    metrics_each(parts_if_named, &p);
}

/* A shard's part of a cluster-scope report: the first phase of its cluster
 * tables on the shard's ranks (kept for the next such report: what a build
 * was made in is part of what it is), the part tables handed to cluster_rows. */
tb_status runner_cluster_collect(runner *r, const tb_spec *spec, const tb_spec_report *rep, tb_error *err)
{
    name_list parts;
    runner_report_parts(rep, &parts);
    r->phase = METRICS_COLLECT;
    tb_status rc = runner_build_needed(r, rep->sql, spec, rep, err);
    r->phase = METRICS_WHOLE;
    if (!rc) {
        r->sb.trusted = 1;
        rc = r->pt->cluster_rows(r->opt->sink_ctx, rep, r->db, parts.v, parts.n, err);
        r->sb.trusted = 0;
    }
    return rc;
}

/* --- a report over the DB as it is ---------------------------------------------- */

tb_status runner_run_report(runner *r, const tb_spec *spec, const tb_spec_report *rep, const char *label,
                            tb_run_result *res, tb_error *err)
{
    const tb_run_options *o = r->opt;
    char what[300];
    snprintf(what, sizeof what, "report '%s'", rep->id);
    tb_status brc = runner_build_needed(r, rep->sql, spec, rep, err);
    if (brc)
        return brc;
    char why[200];
    if (runner_unmet(r, rep, NULL, why, sizeof why)) {
        runner_skipped(r, rep, why, res);
        return TB_OK;
    }
    sqlite3_stmt *st = NULL;
    column *c = NULL;
    size_t nc = 0;
    tb_sink *sinks[RUNNER_MAX_SINKS] = {0};
    size_t ns = 0;
    /* a cluster-scope report reads the cluster tables only: over shards
     * nothing else is there, so on one DB nothing else is either */
    name_list tables = {.n = 0};
    if (rep->scope == TB_SCOPE_CLUSTER) {
        metrics_each(add_cluster_table, &tables);
        r->sb.reads = tables.v;
        r->sb.n_reads = tables.n;
        r->sb.reads_who = "a report of scope cluster";
    }
    tb_status rc = runner_prepare_report(r, spec, rep, what, &st, &c, &nc, err);
    if (rc)
        goto done;
    if (rep->n_drop_empty && (rc = drop_empty(r, st, rep, c, nc, what, err)))
        goto done;
    if (rep->pivot_names && (rc = pivot_open(r, rep, &c, &nc, what, err)))
        goto done;
    if ((rc = runner_open_sinks(o, spec, rep, label, sinks, &ns, err)))
        goto done;
    uint64_t rows = 0;
    rc = run_statement(r, st, c, nc, sinks, ns, what, &rows, 1, err);
    if (!rc)
        runner_report_ran(o, rep, sinks, ns, rows, res);
done:
    r->sb.reads = NULL;
    r->sb.n_reads = 0;
    r->sb.reads_who = NULL;
    for (size_t i = 0; i < ns; i++)
        sinks[i]->destroy(sinks[i]);
    pivot_free(r);
    sqlite3_finalize(st);
    runner_columns_free(c, nc);
    return rc;
}

tb_status runner_start(runner *r, const tb_run_options *opt, const run_part *pt, window_info *wi, tb_error *err)
{
    memset(r, 0, sizeof *r);
    r->opt = opt;
    r->pt = pt ? pt : &runner_no_part;
    r->wi = wi;
    tb_status rc = runner_open_db(r, err);
    if (rc)
        return rc;
    r->sb.trusted = 1;
    rc = window_apply(r->db, &opt->window, wi, err);
    r->sb.trusted = 0;
    return rc;
}

tb_status tb_query_run(const tb_run_options *opt, const char *sql, tb_sink *sink, uint64_t *rows, tb_error *err)
{
    runner r;
    window_info wi = {0};
    sqlite3_stmt *st = NULL;
    column *c = NULL;
    size_t nc = 0;
    *rows = 0;
    tb_status rc = runner_start(&r, opt, NULL, &wi, err);
    if (rc)
        goto done;
    if ((rc = runner_build_needed(&r, sql, NULL, NULL, err)))
        goto done;
    if ((rc = prepare_one(&r, NULL, sql, "query", &st, err)))
        goto done;
    if ((rc = read_columns(st, NULL, opt->unit, &c, &nc, err)))
        goto done;
    if ((rc = bind_params(&r, st, NULL, NULL, "query", err)))
        goto done;
    rc = run_statement(&r, st, c, nc, &sink, 1, "query", rows, 1, err);
done:
    if (r.db)
        rc = runner_limits_check(&r, "query", rc, err);
    sqlite3_finalize(st);
    runner_columns_free(c, nc);
    runner_release(&r, &wi);
    return rc;
}
