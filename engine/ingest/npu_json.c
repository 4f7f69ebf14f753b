/* SPDX-License-Identifier: MIT */
/*
 * npu_json.c - the communication analysis JSON of torch_npu and
 * msprof-analyze, and torch_npu's profiler_metadata.json, into TB_COMM_* rows.
 *
 * Which file is which comes from its name (formats.md §4); each maps so:
 *
 *   communication.json (one per rank, ASCEND_PROFILER_OUTPUT/)
 *     {"step<N>": {"p2p"|"collective": {"<op>@<group>": {
 *         "Communication Time Info": {...},
 *         "Communication Bandwidth Info": {"<transport>": {...}, ...}}}}}
 *     -> TB_COMM_OP_STAT, one row per op: rankId the file's rank, step the key
 *        as written, opKind the p2p/collective key, opName and groupName the
 *        op key split at its last '@'; Start Timestamp(us) and the (ms) times
 *        as exact ns, the ratios as written.
 *     -> TB_COMM_BANDWIDTH, one row per op and transport (RDMA, HCCS, PCIE,
 *        SDMA, SIO, ...): size (MB), time (ms), bandwidth (GB/s) and large
 *        packet ratio as written; its Size Distribution -> TB_COMM_SIZE_DIST
 *        (size key as written, packets, transit ms).
 *   communication_matrix.json (one per rank)
 *     {"step<N>": {"p2p"|"collective": {"<op>@<group>": {"<src>-<dst>": {
 *         "Transport Type", "Transit Size(MB)", "Transit Time(ms)",
 *         "Bandwidth(GB/s)"}}}}}
 *     -> TB_COMM_MATRIX, one row per op and link, values as written.
 *   cluster_communication.json (msprof-analyze, cluster_analysis_output/)
 *     {"<group>": {"step<N>": {"<op>@<group id>": {"<rank>": {<an op of
 *         communication.json>}}}}}
 *     where <group> is "p2p" or the rank set of a collective group written as
 *     a tuple, "(0, 1, 2, 3)". The same tables, one row per op and rank:
 *     rankId the <rank> key, opKind 'p2p' for the "p2p" key and 'collective'
 *     for any other, groupRanks the rank set as "0,1,2,3" (NULL for p2p),
 *     cluster = 1.
 *   cluster_communication_matrix.json
 *     {"<group>": {"step<N>": {"<op>@<group id>": {"<src>-<dst>": {...}}}}}
 *     -> TB_COMM_MATRIX as above; the file names no rank for a link (only its
 *        two ends), so rankId is NULL.
 *   In these four files "Total Op Info" (the sum over a step's ops, per rank
 *   or per link) is not an op and gives no rows.
 *   communication_group.json (msprof-analyze; torch_npu writes one too)
 *     {"collective": [[ranks], ...], "p2p": [[ranks], ...],
 *      "comm_group_parallel_info": [{"type", "rank_set", "group_name",
 *      "group_id", "pg_name"}, ...]}   (the last only in newer files)
 *     -> TB_COMM_GROUP, one row per listed group: kind the list's key,
 *        groupIndex its place in the list, ranks as written ("0,1,2,3"). An
 *        entry of comm_group_parallel_info names the first unnamed group of
 *        its type with the same ranks (groupName, groupId, pgName); an entry
 *        that matches none is a row of its own. rankId is NULL: the file is
 *        cluster-wide.
 *   profiler_metadata.json (torch_npu, one per rank)
 *     {"parallel_group_info": {"<group id>": {"group_name": "tp",
 *      "group_rank": 0, "global_ranks": [0, 1]}, ...},
 *      "distributed_args": {"rank": 0, ...}, "ENV_VARIABLES": {...}}
 *     -> TB_COMM_GROUP, one row per group: kind and pgName the group_name,
 *        groupIndex its place among the file's groups of that name, groupId
 *        the key, groupRank the group_rank, rankId the file's rank.
 *        distributed_args.rank names the rank, as distributedInfo.rank does
 *        in a Kineto trace.
 *     -> TB_PROFILE_META, one row per top-level member (all of them:
 *        distributed_args, pp_info, parallel_group_info, ENV_VARIABLES, ...),
 *        as torch_npu's DB keeps them in META_DATA: the name, a string's text
 *        or another value's JSON text as written; unless the rank's DB gave
 *        its META_DATA (the better source). Not counted among the rows read.
 *
 * The files hold one entry per op and step, so each is read whole and parsed
 * with jansson. Numbers are taken from their text, never through a double: a
 * copy of the input with every number token put in quotes is what jansson
 * parses, so "Start Timestamp(us)": 1695115378810042.5 is exactly
 * 1695115378810042500 ns and "Wait Time(ms)": 2e-05 exactly 20 ns. Python's
 * json module writes NaN and Infinity for non-finite floats: those tokens are
 * quoted too, and load as NULL. Malformed JSON is an error at the
 * FILE:LINE:COL that jansson gives for the original text. Members are found
 * by name with aliases (then ignoring case); a missing one is NULL; an entry
 * of an unexpected shape is skipped, and one warning per file counts them.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/npu_json.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/bytesrc.h"

enum json_kind { J_COMM, J_MATRIX, J_CLUSTER_COMM, J_CLUSTER_MATRIX, J_GROUP, J_METADATA, J_UNKNOWN };

static const struct {
    const char *name;
    int kind;
} known[] = {
    {"communication.json", J_COMM},
    {"communication_matrix.json", J_MATRIX},
    {"cluster_communication.json", J_CLUSTER_COMM},
    {"cluster_communication_matrix.json", J_CLUSTER_MATRIX},
    {"communication_group.json", J_GROUP},
    {"profiler_metadata.json", J_METADATA},
};

static int json_kind(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 3 && !strcmp(base + n - 3, ".gz"))
        n -= 3;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].name) == n && !strncmp(base, known[i].name, n))
            return known[i].kind;
    return J_UNKNOWN;
}

int npu_json_is_known(const char *name)
{
    return json_kind(name) != J_UNKNOWN;
}

/* ---- reading and parsing --------------------------------------------------- */

/* Reads path (plain or gzip) whole into *buf (new: free it), NUL-terminated. Returns 0, or -1 with err set. */
static int read_all(const char *path, char **buf, size_t *len, tb_error *err)
{
    *buf = NULL;
    *len = 0;
    bytesrc_win w;
    if (bytesrc_win_init(&w, 1 << 16, err))
        return -1;
    bytesrc *src = bytesrc_open(path, err);
    int rc = -1;
    if (src)
        while ((rc = bytesrc_fill(src, &w, 0, 0, err)) == 1)
            ;
    bytesrc_close(src);
    if (rc < 0) {
        bytesrc_win_finish(&w);
        return -1;
    }
    w.buf[w.len] = 0; /* the window always keeps a byte after its bytes */
    *buf = w.buf;     /* the window's buffer is the caller's now */
    *len = w.len;
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of the JSON number that starts at p (before e), or 0. */
static size_t number_len(const char *p, const char *e)
{
    const char *s = p;
    if (p < e && *p == '-')
        p++;
    if (p < e && *p == '0') {
        p++;
    } else if (p < e && *p >= '1' && *p <= '9') {
        while (p < e && is_digit(*p))
            p++;
    } else {
        return 0;
    }
    if (p < e && *p == '.') {
        if (++p >= e || !is_digit(*p))
            return 0;
        while (p < e && is_digit(*p))
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || !is_digit(*p))
            return 0;
        while (p < e && is_digit(*p))
            p++;
    }
    return (size_t)(p - s);
}

/* Length of NaN, Infinity or -Infinity at p (Python's json writes them), or 0. */
static size_t nonfinite_len(const char *p, const char *e)
{
    static const char *const words[] = {"NaN", "Infinity", "-Infinity"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(e - p) >= n && !memcmp(p, words[i], n))
            return n;
    }
    return 0;
}

/*
 * A copy of the JSON text in[0..n) with every number token outside strings
 * put in quotes, so that the parser keeps its text. Returns new (free) or NULL.
 * A token that is not a valid number is left alone, so the parse still fails
 * where the original does.
 */
static char *quote_numbers(const char *in, size_t n, size_t *outlen)
{
    if (n > SIZE_MAX / 2 - 4)
        return NULL;
    char *out = malloc(2 * n + 4); /* each token of L >= 1 bytes grows by 2: at most 2n + 2 */
    if (!out)
        return NULL;
    const char *p = in, *e = in + n;
    char *o = out;
    while (p < e) {
        if (*p == '"') {
            *o++ = *p++;
            while (p < e && *p != '"') {
                if (*p == '\\' && p + 1 < e)
                    *o++ = *p++;
                *o++ = *p++;
            }
            if (p < e)
                *o++ = *p++;
            continue;
        }
        size_t k = (*p == '-' || is_digit(*p)) ? number_len(p, e) : 0;
        if (!k && (*p == 'N' || *p == 'I' || *p == '-'))
            k = nonfinite_len(p, e);
        if (k) {
            *o++ = '"';
            memcpy(o, p, k);
            o += k;
            *o++ = '"';
            p += k;
            continue;
        }
        *o++ = *p++;
    }
    *o = 0;
    *outlen = (size_t)(o - out);
    return out;
}

/* Parses buf[0..n) with its numbers kept as text. Returns new (json_decref) or NULL with err set. */
static json_t *parse(const char *path, const char *buf, size_t n, tb_error *err)
{
    if (n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) {
        buf += 3;
        n -= 3;
    }
    size_t blank = 0;
    while (blank < n && (buf[blank] == ' ' || buf[blank] == '\t' || buf[blank] == '\r' || buf[blank] == '\n'))
        blank++;
    if (blank == n) {
        tb_error_at(err, TB_ERR_PARSE, path, 1, 1, 0, "empty input, expected a JSON object");
        return NULL;
    }
    size_t qn;
    char *q = quote_numbers(buf, n, &qn);
    if (!q) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    json_error_t qe, oe;
    json_t *root = json_loadb(q, qn, 0, &qe);
    free(q);
    if (root)
        return root;
    /* the position in the original text: parse it again for the error */
    json_t *orig = json_loadb(buf, n, 0, &oe);
    if (orig) {
        json_decref(orig);
        oe = qe;
    }
    tb_error_at(err, TB_ERR_PARSE, path, oe.line, oe.column, oe.position, "malformed JSON: %s", oe.text);
    return NULL;
}

/* ---- values ------------------------------------------------------------------ */

/*
 * The decimal number text s times 10^pow10 as an integer, exactly: rounded
 * half away from zero at the first dropped digit, never through a double.
 * Accepts JSON number syntax (and a leading '+'). Returns 0, -1 for other
 * text, or 1 for a number whose result lies outside int64.
 */
static int dec_scale(const char *s, int pow10, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    unsigned char dig[40];
    int nd = 0, any = 0, huge = 0;
    long frac = 0;
    for (; is_digit(*p); p++) {
        any = 1;
        if (nd == 0 && *p == '0')
            continue;
        if (nd == (int)sizeof dig)
            huge = 1; /* more than 40 integer digits: out of range anyway */
        else
            dig[nd++] = (unsigned char)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p))
            return -1;
        for (; is_digit(*p); p++) {
            any = 1;
            if (nd == 0 && *p == '0') {
                frac++;
                continue;
            }
            if (nd < (int)sizeof dig) {
                dig[nd++] = (unsigned char)(*p - '0');
                frac++;
            } /* digits past 40 lie far below any rounding point */
        }
    }
    if (!any)
        return -1;
    long ex = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        if (!is_digit(*p))
            return -1;
        for (; is_digit(*p); p++)
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
        if (eneg)
            ex = -ex;
    }
    if (*p)
        return -1;
    if (huge)
        return 1;
    if (nd == 0) {
        *out = 0;
        return 0;
    }
    long k = ex - frac + pow10; /* the value is dig[] * 10^k */
    int keep = nd, up = 0;
    if (k < 0) {
        if (-k > nd) {
            *out = 0;
            return 0;
        }
        keep = nd + (int)k;
        up = dig[keep] >= 5;
    }
    uint64_t u = 0;
    for (int i = 0; i < keep; i++) {
        if (u > (UINT64_MAX - 9) / 10)
            return 1;
        u = u * 10 + dig[i];
    }
    for (long i = 0; i < k; i++) {
        if (u > UINT64_MAX / 10)
            return 1;
        u *= 10;
    }
    u += (uint64_t)up;
    if (u > (uint64_t)INT64_MAX)
        return 1;
    *out = neg ? -(int64_t)u : (int64_t)u;
    return 0;
}

/* The member named by one of names (exactly, then ignoring case), or NULL. Borrowed. */
static json_t *member(json_t *obj, const char *const *names)
{
    if (!json_is_object(obj))
        return NULL;
    for (const char *const *n = names; *n; n++) {
        json_t *v = json_object_get(obj, *n);
        if (v)
            return v;
    }
    for (const char *const *n = names; *n; n++) {
        const char *k;
        json_t *v;
        json_object_foreach(obj, k, v) {
            if (!strcasecmp(k, *n))
                return v;
        }
    }
    return NULL;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static tb_val real(json_t *v)
{
    if (!json_is_string(v))
        return VNULL;
    const char *t = json_string_value(v);
    size_t n = json_string_length(v);
    /* JSON number syntax only: strtod alone would take hex, inf, nan and blanks */
    if (n == 0 || number_len(t, t + n) != n)
        return VNULL;
    char *end;
    errno = 0;
    double d = strtod(t, &end);
    return *end == 0 && isfinite(d) ? VREAL(d) : VNULL;
}

/* A whole number, or -1 when v is not one. */
static int whole(json_t *v, int64_t *out)
{
    if (!json_is_string(v))
        return -1;
    const char *t = json_string_value(v);
    char *end;
    errno = 0;
    long long x = strtoll(t, &end, 10);
    if (end == t || *end || errno)
        return -1;
    *out = x;
    return 0;
}

static tb_val integer(json_t *v)
{
    int64_t x;
    return whole(v, &x) == 0 ? VINT(x) : VNULL;
}

/* A string member as text; empty strings are NULL. */
static tb_val text(json_t *v)
{
    if (!json_is_string(v) || json_string_length(v) == 0)
        return VNULL;
    return VTEXT(json_string_value(v), json_string_length(v));
}

static tb_val idv(int64_t id)
{
    return id < 0 ? VNULL : VINT(id);
}

static tb_val str(const char *s)
{
    return s ? VTEXT(s, strlen(s)) : VNULL;
}

/* A JSON array of whole numbers as "0,1,2" (new: free), or NULL when it is not one. */
static char *rank_list(json_t *arr)
{
    if (!json_is_array(arr))
        return NULL;
    size_t n = json_array_size(arr), cap = 1, o = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t r;
        if (whole(json_array_get(arr, i), &r) != 0)
            return NULL;
        cap += strlen(json_string_value(json_array_get(arr, i))) + 1;
    }
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t r = 0;
        whole(json_array_get(arr, i), &r); /* checked above: the printed form is never longer */
        o += (size_t)snprintf(s + o, cap - o, "%s%lld", i ? "," : "", (long long)r);
    }
    return s;
}

/* A rank set key such as "(0, 1, 2, 3)" or "[0,1]" as "0,1,2,3" into out (cap >= strlen(key) + 1); 0 or -1. */
static int rank_set_key(const char *key, char *out)
{
    const char *p = key;
    size_t o = 0;
    while (*p == ' ')
        p++;
    char close = *p == '(' ? ')' : *p == '[' ? ']' : 0;
    if (!close)
        return -1;
    p++;
    int first = 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == close && first)
            break;
        if (!is_digit(*p))
            return -1;
        if (!first)
            out[o++] = ',';
        while (is_digit(*p))
            out[o++] = *p++;
        first = 0;
        while (*p == ' ')
            p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == close)
            break;
        return -1;
    }
    p++;
    while (*p == ' ')
        p++;
    if (*p)
        return -1;
    out[o] = 0;
    return 0;
}

/* ---- rows --------------------------------------------------------------------- */

typedef struct ctx {
    const row_sink *sink;
    const import_opts *opt;
    import_result *res;
    tb_error *err;
    const char *path;
    int cluster;
    uint64_t n_bad;    /* entries of an unexpected shape, skipped */
    char first_bad[256];
} ctx;

/* Notes an entry of an unexpected shape (where: its keys, joined by '/'). */
static void bad(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bad(ctx *c, const char *fmt, ...)
{
    if (c->n_bad++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->first_bad, sizeof c->first_bad, fmt, ap);
        va_end(ap);
    }
}

static void warn(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(ctx *c, const char *fmt, ...)
{
    if (!c->opt->warn)
        return;
    char msg[2048];
    int n = snprintf(msg, sizeof msg, "%s: ", c->path);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    c->opt->warn(c->opt->ctx, msg);
}

static int put(ctx *c, int table, const tb_val *v)
{
    c->res->events++;
    if (row_set_has(&c->opt->skip_rows, table)) {
        c->res->dest[TB_DEST_BETTER_SOURCE]++;
        return 0;
    }
    c->res->dest[TB_DEST_OTHER_TABLES]++;
    if (c->sink->row(c->sink->ctx, table, v) == 0)
        return 0;
    row_sink_fail(c->sink, c->path, c->err);
    return -1;
}

/* Interns s[0..n); -1 on failure, with c->err set. */
static int64_t intern(ctx *c, const char *s, size_t n)
{
    int64_t id = c->sink->intern(c->sink->ctx, s, n);
    if (id < 0)
        row_sink_fail(c->sink, c->path, c->err);
    return id;
}

/* Where an op sits: the keys around it and what they say. */
typedef struct op_at {
    tb_val rank;        /* rankId */
    const char *step;   /* step key as written */
    const char *kind;   /* 'p2p' / 'collective' */
    const char *key;    /* "<op>@<group>" */
    const char *ranks;  /* group rank set "0,1,2" or NULL */
    int64_t name, group;
} op_at;

/* Interns the op key's halves into at->name and at->group (-2: none). */
static int op_names(ctx *c, op_at *at)
{
    const char *sep = strrchr(at->key, '@');
    size_t n = sep ? (size_t)(sep - at->key) : strlen(at->key);
    at->name = intern(c, at->key, n);
    at->group = sep && sep[1] ? intern(c, sep + 1, strlen(sep + 1)) : -2;
    return at->name == -1 || at->group == -1 ? -1 : 0;
}

/* The op's start and durations in ns into v[0..6) (NULL where missing or no
 * number): 0; 1 when one lies outside +-2^62 ns (or beyond int64 ns): the op
 * is skipped and counted, as a row of any input; -1 with --strict (err set). */
static int op_times(ctx *c, const op_at *at, json_t *t, tb_val *v)
{
    const char *const *names[6] = {NAMES("Start Timestamp(us)", "Start Time(us)"),
                                   NAMES("Elapse Time(ms)", "Elapsed Time(ms)"), NAMES("Transit Time(ms)"),
                                   NAMES("Wait Time(ms)"), NAMES("Synchronization Time(ms)"), NAMES("Idle Time(ms)")};
    int outside = 0;
    for (int i = 0; i < 6; i++) {
        json_t *m = member(t, names[i]);
        int64_t x;
        int rc = json_is_string(m) ? dec_scale(json_string_value(m), i ? 6 : 3, &x) : -1;
        v[i] = rc == 0 ? VINT(x) : VNULL;
        outside |= rc == 1 || (rc == 0 && !import_time_ok(x, 0));
    }
    if (!outside)
        return 0;
    if (c->opt->strict_rows) {
        tb_error_at(c->err, TB_ERR_PARSE, c->path, 0, 0, -1,
                    "%s/%s: a time outside +-2^62 ns (about 146 years from 1970)", at->step, at->key);
        return -1;
    }
    c->res->dest[TB_DEST_BAD_TIME]++;
    return 1;
}

/* One op of communication.json (or one rank of it in the cluster file). */
static int op_stat(ctx *c, op_at *at, json_t *info)
{
    json_t *t = member(info, NAMES("Communication Time Info"));
    json_t *b = member(info, NAMES("Communication Bandwidth Info"));
    if (!json_is_object(t) && !json_is_object(b)) {
        bad(c, "%s/%s", at->step, at->key);
        return 0;
    }
    tb_val tv6[6];
    int rt = op_times(c, at, t, tv6);
    if (rt)
        return rt < 0 ? -1 : 0;
    if (op_names(c, at))
        return -1;
    tb_val v[15] = {at->rank, str(at->step), str(at->kind), idv(at->name), idv(at->group),
                    tv6[0], tv6[1], tv6[2], tv6[3], tv6[4], tv6[5],
                    real(member(t, NAMES("Wait Time Ratio"))),
                    real(member(t, NAMES("Synchronization Time Ratio"))),
                    str(at->ranks), VINT(c->cluster)};
    if (put(c, R_COMM_OP_STAT, v))
        return -1;
    if (!json_is_object(b))
        return 0;
    const char *tk;
    json_t *tv;
    json_object_foreach(b, tk, tv) {
        if (!json_is_object(tv)) {
            bad(c, "%s/%s/Communication Bandwidth Info/%s", at->step, at->key, tk);
            continue;
        }
        tb_val w[12] = {at->rank, str(at->step), idv(at->name), str(tk),
                        real(member(tv, NAMES("Transit Size(MB)"))),
                        real(member(tv, NAMES("Transit Time(ms)"))),
                        real(member(tv, NAMES("Bandwidth(GB/s)"))),
                        real(member(tv, NAMES("Large Packet Ratio"))),
                        str(at->kind), idv(at->group), str(at->ranks), VINT(c->cluster)};
        if (put(c, R_COMM_BANDWIDTH, w))
            return -1;
        /* {"<size MB>": [packets, transit ms], ...} */
        json_t *dist = member(tv, NAMES("Size Distribution"));
        const char *sk;
        json_t *sv;
        json_object_foreach(dist, sk, sv) {
            if (!json_is_array(sv) || json_array_size(sv) != 2) {
                bad(c, "%s/%s/Communication Bandwidth Info/%s/Size Distribution/%s", at->step, at->key, tk, sk);
                continue;
            }
            tb_val d[11] = {at->rank, str(at->step), str(at->kind), idv(at->name), idv(at->group), str(tk), str(sk),
                            integer(json_array_get(sv, 0)), real(json_array_get(sv, 1)), str(at->ranks),
                            VINT(c->cluster)};
            if (put(c, R_COMM_SIZE_DIST, d))
                return -1;
        }
    }
    return 0;
}

/* The links of one op of a communication matrix. */
static int matrix_op(ctx *c, op_at *at, json_t *links)
{
    if (op_names(c, at))
        return -1;
    const char *lk;
    json_t *link;
    json_object_foreach(links, lk, link) {
        if (!json_is_object(link)) {
            bad(c, "%s/%s/%s", at->step, at->key, lk);
            continue;
        }
        /* "<src>-<dst>"; ranks stay NULL when the key is not that */
        tb_val src = VNULL, dst = VNULL;
        char *end;
        errno = 0;
        long long s = strtoll(lk, &end, 10);
        if (end != lk && *end == '-' && errno == 0) {
            const char *d0 = end + 1;
            long long d = strtoll(d0, &end, 10);
            if (end != d0 && *end == 0 && errno == 0) {
                src = VINT(s);
                dst = VINT(d);
            }
        }
        tb_val v[13] = {at->rank, str(at->step), str(at->kind), idv(at->name), idv(at->group), src, dst,
                        text(member(link, NAMES("Transport Type"))),
                        real(member(link, NAMES("Transit Size(MB)"))),
                        real(member(link, NAMES("Transit Time(ms)"))),
                        real(member(link, NAMES("Bandwidth(GB/s)"))),
                        str(at->ranks), VINT(c->cluster)};
        if (put(c, R_COMM_MATRIX, v))
            return -1;
    }
    return 0;
}

/*
 * communication.json / communication_matrix.json: {step: {kind: {op: X}}};
 * their cluster forms: {group: {step: {op: X}}}, where X holds one entry per
 * rank (cluster_communication.json) or the links (either matrix).
 */
static int comm_file(ctx *c, json_t *root, int matrix)
{
    const char *k1, *k2, *k3;
    json_t *v1, *v2, *v3;
    char *ranks = NULL;
    int rc = 0;
    json_object_foreach(root, k1, v1) {
        if (!json_is_object(v1)) {
            bad(c, "%s", k1);
            continue;
        }
        free(ranks);
        ranks = NULL;
        if (c->cluster && strcmp(k1, "p2p") != 0 && strcmp(k1, "collective") != 0) {
            if (!(ranks = malloc(strlen(k1) + 1))) {
                tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
                rc = -1;
                break;
            }
            if (rank_set_key(k1, ranks) != 0) {
                free(ranks);
                ranks = NULL;
            }
        }
        json_object_foreach(v1, k2, v2) {
            if (!json_is_object(v2)) {
                bad(c, "%s/%s", k1, k2);
                continue;
            }
            op_at at = {.rank = VNULL, .ranks = ranks};
            if (c->cluster) {
                at.step = k2;
                at.kind = strcmp(k1, "p2p") ? "collective" : "p2p";
            } else {
                at.step = k1;
                at.kind = k2;
                at.rank = VINT(c->opt->rank);
            }
            json_object_foreach(v2, k3, v3) {
                if (!strcmp(k3, "Total Op Info"))
                    continue;
                if (!json_is_object(v3)) {
                    bad(c, "%s/%s/%s", k1, k2, k3);
                    continue;
                }
                at.key = k3;
                if (matrix) {
                    rc = matrix_op(c, &at, v3);
                } else if (!c->cluster) {
                    rc = op_stat(c, &at, v3);
                } else {
                    const char *rk;
                    json_t *rv;
                    json_object_foreach(v3, rk, rv) {
                        int64_t r;
                        errno = 0;
                        char *end;
                        long long x = strtoll(rk, &end, 10);
                        if (end == rk || *end || errno || !json_is_object(rv)) {
                            bad(c, "%s/%s/%s/%s", k1, k2, k3, rk);
                            continue;
                        }
                        r = x;
                        at.rank = VINT(r);
                        if ((rc = op_stat(c, &at, rv)) != 0)
                            break;
                    }
                }
                if (rc)
                    goto done;
            }
        }
    }
done:
    free(ranks);
    return rc;
}

/* One row of TB_COMM_GROUP, gathered before it is written. */
typedef struct group_row {
    const char *kind;  /* borrowed from the JSON */
    int64_t index;
    char *ranks;       /* owned */
    json_t *name, *id, *pg; /* borrowed strings, or NULL */
    int named;
} group_row;

typedef struct group_rows {
    group_row *v;
    size_t n, cap;
} group_rows;

static group_row *add_group(group_rows *g)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 32;
        group_row *nv = realloc(g->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        g->v = nv;
        g->cap = nc;
    }
    group_row *r = &g->v[g->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static int64_t count_kind(const group_rows *g, const char *kind)
{
    int64_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        if (kind && g->v[i].kind && !strcmp(g->v[i].kind, kind))
            k++;
    return k;
}

/* communication_group.json */
static int group_file(ctx *c, json_t *root)
{
    group_rows g = {0};
    int rc = 0;
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        if (!json_is_array(v) || !strcmp(k, "comm_group_parallel_info"))
            continue;
        for (size_t i = 0; i < json_array_size(v); i++) {
            char *ranks = rank_list(json_array_get(v, i));
            if (!ranks) {
                bad(c, "%s/%zu", k, i);
                continue;
            }
            group_row *r = add_group(&g);
            if (!r) {
                free(ranks);
                goto nomem;
            }
            r->kind = k;
            r->index = (int64_t)i;
            r->ranks = ranks;
        }
    }
    json_t *info = json_object_get(root, "comm_group_parallel_info");
    for (size_t i = 0; json_is_array(info) && i < json_array_size(info); i++) {
        json_t *e = json_array_get(info, i);
        json_t *type = member(e, NAMES("type"));
        char *ranks = rank_list(member(e, NAMES("rank_set")));
        if (!json_is_object(e) || !ranks) {
            free(ranks);
            bad(c, "comm_group_parallel_info/%zu", i);
            continue;
        }
        const char *kind = json_is_string(type) ? json_string_value(type) : NULL;
        group_row *r = NULL;
        for (size_t j = 0; j < g.n && !r; j++)
            if (!g.v[j].named && kind && g.v[j].kind && !strcmp(g.v[j].kind, kind) && !strcmp(g.v[j].ranks, ranks))
                r = &g.v[j];
        if (r) {
            free(ranks);
        } else {
            int64_t index = count_kind(&g, kind);
            if (!(r = add_group(&g))) {
                free(ranks);
                goto nomem;
            }
            r->kind = kind;
            r->index = index;
            r->ranks = ranks;
        }
        r->named = 1;
        r->name = member(e, NAMES("group_name"));
        r->id = member(e, NAMES("group_id"));
        r->pg = member(e, NAMES("pg_name"));
    }
    for (size_t i = 0; i < g.n && rc == 0; i++) {
        group_row *r = &g.v[i];
        int64_t name = -2;
        tb_val nv = text(r->name);
        if (nv.type == V_TEXT && (name = intern(c, nv.s, nv.n)) == -1) {
            rc = -1;
            break;
        }
        tb_val row[8] = {str(r->kind), VINT(r->index), str(r->ranks), idv(name), text(r->id), text(r->pg),
                         VNULL, VNULL};
        rc = put(c, R_COMM_GROUP, row);
    }
    goto done;
nomem:
    rc = -1;
    tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
done:
    for (size_t i = 0; i < g.n; i++)
        free(g.v[i].ranks);
    free(g.v);
    return rc;
}

/* ---- profiler_metadata.json ------------------------------------------------- */

static const char *skip_blank(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* Past the string whose opening quote is at p, or NULL. */
static const char *string_end(const char *p, const char *e)
{
    for (p++; p < e; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Past the JSON value starting at p (the text parsed: it is valid), or NULL. */
static const char *value_end(const char *p, const char *e)
{
    if (p < e && *p == '"')
        return string_end(p, e);
    if (p < e && (*p == '{' || *p == '[')) {
        int depth = 0;
        while (p < e) {
            if (*p == '"') {
                if (!(p = string_end(p, e)))
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return NULL;
    }
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
        p++;
    return p;
}

/* The text of the JSON string literal s[0..n) (new: free), or NULL when it is none. */
static char *string_text(const char *s, size_t n, size_t *len)
{
    json_t *v = json_loadb(s, n, JSON_DECODE_ANY, NULL);
    char *out = NULL;
    if (json_is_string(v)) {
        *len = json_string_length(v);
        out = malloc(*len + 1);
        if (out)
            memcpy(out, json_string_value(v), *len + 1);
    }
    json_decref(v);
    return out;
}

/* One TB_PROFILE_META row, unless a better source (the rank's DB) filled the table; not counted as read. */
static int put_meta(ctx *c, const char *name, size_t nn, const char *value, size_t vn)
{
    if (row_set_has(&c->opt->skip_rows, R_PROFILE_META))
        return 0;
    tb_val v[3] = {VINT(c->opt->rank), VTEXT(name, nn), VTEXT(value, vn)};
    if (c->sink->row(c->sink->ctx, R_PROFILE_META, v) == 0)
        return 0;
    row_sink_fail(c->sink, c->path, c->err);
    return -1;
}

/*
 * Every top-level member of the file buf[0..n) (parsed: valid JSON, an
 * object) as a TB_PROFILE_META row, as torch_npu's DB keeps the same
 * metadata in META_DATA: the name, and a string's text or another value's
 * JSON text as written (pp_info, distributed_args, parallel_group_info, ...).
 * Read from the text, not the parse, so numbers keep their JSON types.
 */
static int metadata_rows(ctx *c, const char *buf, size_t n)
{
    const char *e = buf + n, *p = buf;
    if (n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        p += 3;
    p = skip_blank(p, e);
    if (p >= e || *p != '{')
        return 0;
    for (p++;;) {
        p = skip_blank(p, e);
        if (p < e && *p == ',')
            p = skip_blank(p + 1, e);
        if (p >= e || *p != '"')
            return 0;
        const char *k = p, *ke = string_end(p, e);
        p = ke ? skip_blank(ke, e) : e;
        if (p >= e || *p != ':')
            return 0;
        const char *v = skip_blank(p + 1, e), *ve = value_end(v, e);
        if (!ve)
            return 0;
        p = ve;
        size_t kn = 0, vn = (size_t)(ve - v);
        char *key = string_text(k, (size_t)(ke - k), &kn), *text = *v == '"' ? string_text(v, vn, &vn) : NULL;
        int rc = -1;
        if (!key || (*v == '"' && !text))
            tb_error_set(c->err, TB_ERR_NOMEM, "out of memory"); /* both parsed before: no other failure */
        else
            rc = put_meta(c, key, kn, text ? text : v, vn);
        free(key);
        free(text);
        if (rc)
            return -1;
    }
}

static int metadata_file(ctx *c, json_t *root, const char *buf, size_t n)
{
    if (metadata_rows(c, buf, n))
        return -1;
    int64_t rank;
    if (whole(member(member(root, NAMES("distributed_args")), NAMES("rank")), &rank) == 0 && rank >= 0)
        c->res->trace_rank = rank;
    json_t *groups = member(root, NAMES("parallel_group_info"));
    if (!json_is_object(groups))
        return 0;
    group_rows seen = {0}; /* kinds met so far, for groupIndex */
    int rc = 0;
    const char *id;
    json_t *g;
    json_object_foreach(groups, id, g) {
        json_t *name = member(g, NAMES("group_name"));
        char *ranks = rank_list(member(g, NAMES("global_ranks")));
        if (!json_is_object(g) || !ranks) {
            free(ranks);
            bad(c, "parallel_group_info/%s", id);
            continue;
        }
        const char *kind = json_is_string(name) && json_string_length(name) ? json_string_value(name) : NULL;
        int64_t index = count_kind(&seen, kind);
        group_row *r = add_group(&seen);
        if (!r) {
            free(ranks);
            rc = -1;
            tb_error_set(c->err, TB_ERR_NOMEM, "out of memory");
            break;
        }
        r->kind = kind;
        tb_val row[8] = {str(kind), VINT(index), str(ranks), VNULL, str(id), str(kind),
                         integer(member(g, NAMES("group_rank"))), VINT(c->opt->rank)};
        rc = put(c, R_COMM_GROUP, row);
        free(ranks);
        if (rc)
            break;
    }
    free(seen.v);
    return rc;
}

tb_status npu_json_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                          import_result *res, tb_error *err)
{
    (void)ids; /* these tables carry no global ids */
    memset(res, 0, sizeof *res);
    res->trace_rank = -1;
    res->stop_offset = -1;
    int kind = json_kind(path);
    snprintf(res->kind, sizeof res->kind, "%s",
             kind == J_METADATA ? "profiler metadata" : kind == J_GROUP ? "comm group json" : "comm json");
    if (kind == J_UNKNOWN)
        return tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "not a JSON file tracebook reads");
    char *buf;
    size_t n;
    if (read_all(path, &buf, &n, err) != 0)
        return err->code;
    json_t *root = parse(path, buf, n, err);
    if (!root) {
        free(buf);
        return err->code;
    }
    tb_status st = TB_OK;
    if (!json_is_object(root)) {
        st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, -1, "expected a JSON object at the top, found %s",
                         json_is_array(root) ? "an array" : "a value");
        goto done;
    }
    ctx c = {.sink = sink, .opt = opt, .res = res, .err = err, .path = path,
             .cluster = kind == J_CLUSTER_COMM || kind == J_CLUSTER_MATRIX};
    int rc;
    switch (kind) {
    case J_COMM:
    case J_CLUSTER_COMM: rc = comm_file(&c, root, 0); break;
    case J_MATRIX:
    case J_CLUSTER_MATRIX: rc = comm_file(&c, root, 1); break;
    case J_GROUP: rc = group_file(&c, root); break;
    default: rc = metadata_file(&c, root, buf, n); break;
    }
    if (rc) {
        /* every failure sets err (its own problem, or the sink's) */
        st = err->code != TB_OK ? err->code
                                : tb_error_at(err, TB_ERR_INTERNAL, path, 0, 0, -1, "a row failed without a reason");
        goto done;
    }
    if (c.n_bad)
        warn(&c, "%llu %s of an unexpected shape skipped, the first at '%s'", (unsigned long long)c.n_bad,
             c.n_bad == 1 ? "entry" : "entries", c.first_bad);
done:
    json_decref(root);
    free(buf);
    return st;
}
