/* SPDX-License-Identifier: MIT */
/*
 * test_session.c - a run through the public API only: the session (where
 * its DB comes from, the cache, its window) and the verbs that take one:
 * tb_session_query/tb_session_run with a sink of the test's own, the report
 * job, export summary, compare of two sessions, the history of nights and
 * export db (a folder, a shard).
 *
 * The data is samples/ascend_small (one rank, steps 8 and 9 complete and a
 * cut step 10) and samples/torch_npu_2rank (two ranks: rank 0 with steps 8
 * and 9, rank 1 with steps 3 and 4). Traces the test changes (one kernel
 * slower, nights whose kernels jitter) are copies of ascend_small edited
 * line by line, written into the group's temporary folder; every output
 * goes there too, and the cache is $XDG_CACHE_HOME (meson's env).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "tracebook/tracebook.h"
#define TU_WITH_SQLITE
#include "testutil.h"

/* The kernel made slower (it runs 28 times in ascend_small, in every step). */
#define SLOW "aclnnMm_MatMulV3_MatMulV3"
#define SLOW_TYPE "MatMulV3" /* its type, taken from the name (docs/inputs.md "Kernel types") */
/* The built-in top kernels: 20 rows (ascend_small has 42 kernel names), and
 * the rules Total Time and Avg Time, worse when higher by 5% and 1 us. */
static const char top_spec[] = "tracebook: 1\nreports:\n  - use: top_kernels\n";
#define TOP_ROWS 20

/* ascend_small copied into the group's folder: base/trace_view.json. */
static char base_dir[PATH_MAX];
static char two_rank[PATH_MAX]; /* samples/torch_npu_2rank, copied likewise */

/* ---- files ------------------------------------------------------------- */

/* The whole file at path as a new NUL-terminated string (free with free). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap);
    assert_non_null(buf);
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* The first line of the file at path (without its line end) into out. */
static const char *first_line(const char *path, char *out, size_t n)
{
    char *text = slurp(path);
    size_t k = strcspn(text, "\r\n");
    snprintf(out, n, "%.*s", (int)k, text);
    free(text);
    return out;
}

/* Lines of the file at path (a last line without '\n' counts). */
static size_t count_lines(const char *path)
{
    char *text = slurp(path);
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    if (*text && text[strlen(text) - 1] != '\n')
        n++;
    free(text);
    return n;
}

/* Occurrences of needle in the file at path. */
static size_t count_in_file(const char *path, const char *needle)
{
    char *text = slurp(path);
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    free(text);
    return n;
}

/* Entries of folder dir ("." and ".." not counted), -1 when it is missing. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return n;
}

/* tmpdir/rel as a new folder; path gets its name. */
static void fresh_dir(const char *rel, char *path, size_t n)
{
    make_dirs(rel, path, n);
    assert_int_equal(count_entries(path), 0);
}

/*
 * A copy of ascend_small's trace into the new folder tmpdir/rel, each device
 * task's duration (a line with "Task Type") multiplied by factor(name) (a
 * factor of 1 leaves the line as it is; no factor: a plain copy). path gets
 * the folder's name.
 */
typedef double (*factor_fn)(void *ctx, const char *name);

static void edited_copy(const char *rel, factor_fn factor, void *ctx, char *path, size_t n)
{
    char src[PATH_MAX], dst[PATH_MAX + 32];
    assert_true(tu_samples_path(src, sizeof src, "ascend_small/trace_view.json"));
    fresh_dir(rel, path, n);
    snprintf(dst, sizeof dst, "%s/trace_view.json", path);
    char *text = slurp(src);
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else if (!*line)
            break;
        const char *name = strstr(line, "{\"name\": \"");
        char *dur = strstr(line, "\"dur\": ");
        if (factor && name == line && dur && strstr(line, "\"Task Type\"")) {
            char kernel[256];
            const char *q = line + strlen("{\"name\": \"");
            size_t k = strcspn(q, "\"");
            assert_true(k < sizeof kernel);
            snprintf(kernel, sizeof kernel, "%.*s", (int)k, q);
            double f = factor(ctx, kernel);
            if (f != 1.0) {
                char *end;
                errno = 0;
                double d = strtod(dur + strlen("\"dur\": "), &end);
                assert_true(errno == 0 && end > dur + strlen("\"dur\": "));
                /* the trace's durations are in us with three decimals */
                fprintf(out, "%.*s%.3f%s\n", (int)(dur + strlen("\"dur\": ") - line), line, d * f, end);
                continue;
            }
        }
        fprintf(out, "%s%s", line, next ? "\n" : "");
    }
    assert_int_equal(fclose(out), 0);
    free(text);
}

static double slower(void *ctx, const char *name)
{
    return strcmp(name, SLOW) ? 1.0 : *(const double *)ctx;
}

/* ---- a sink of the test's own: the rows as text ------------------------ */

/* The header "h1|h2" kept apart from the rows "v1|v2\n" (cells as SQLite's
 * text of integers and text, NULL as ""), as testutil's rows() writes a
 * result. */
typedef struct text_sink {
    tb_sink vt;
    char head[1024];
    char *text;
    size_t n, cap, ncols;
    int finished;
    uint64_t seen, fail_at; /* rows taken; fail_at > 0: that row fails */
} text_sink;

static void ts_add(text_sink *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->text = realloc(t->text, t->cap);
        assert_non_null(t->text);
    }
    memcpy(t->text + t->n, s, n);
    t->n += n;
    t->text[t->n] = 0;
}

static tb_status ts_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    (void)err;
    text_sink *t = (text_sink *)s;
    t->ncols = n;
    size_t o = 0;
    for (size_t i = 0; i < n && o < sizeof t->head; i++)
        o += (size_t)snprintf(t->head + o, sizeof t->head - o, "%s%s", i ? "|" : "", cols[i].header);
    assert_true(o < sizeof t->head);
    return TB_OK;
}

static tb_status ts_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    text_sink *t = (text_sink *)s;
    if (++t->seen == t->fail_at)
        return tb_error_set(err, TB_ERR_IO, "row %llu refused", (unsigned long long)t->seen);
    char buf[64];
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            ts_add(t, "|", 1);
        const tb_cell *c = &cells[i];
        switch (c->kind) {
        case TB_CELL_NULL: break;
        case TB_CELL_INT:
            assert_int_equal(c->scale, 0); /* no typed column in these queries */
            ts_add(t, buf, (size_t)snprintf(buf, sizeof buf, "%" PRId64, c->i));
            break;
        case TB_CELL_REAL: ts_add(t, buf, (size_t)snprintf(buf, sizeof buf, "%.15g", c->d)); break;
        case TB_CELL_TEXT: ts_add(t, c->s, c->n); break;
        }
    }
    ts_add(t, "\n", 1);
    return TB_OK;
}

static tb_status ts_finish(tb_sink *s, tb_error *err)
{
    (void)err;
    ((text_sink *)s)->finished = 1;
    return TB_OK;
}

static void ts_destroy(tb_sink *s)
{
    (void)s;
}

static void ts_init(text_sink *t)
{
    memset(t, 0, sizeof *t);
    t->vt = (tb_sink){ts_begin, ts_row, ts_finish, ts_destroy};
    ts_add(t, "", 0);
}

static void ts_free(text_sink *t)
{
    free(t->text);
    t->text = NULL;
}

/* ---- sessions ---------------------------------------------------------- */

static const tb_window no_window;

static tb_window step_window(int64_t step, int64_t count)
{
    return (tb_window){.set = 1, .model_id = TB_STEP_MODEL_ID, .iteration_id = step, .iteration_count = count};
}

/* Messages of a session or a verb, kept for the test to read. */
typedef struct notes {
    char text[8192];
    size_t n;
} notes;

static void on_note(void *ctx, const char *msg)
{
    notes *c = ctx;
    int k = snprintf(c->text + c->n, sizeof c->text - c->n, "%s\n", msg);
    if (k > 0 && c->n + (size_t)k < sizeof c->text)
        c->n += (size_t)k;
}

/* The sessions' input arrays: borrowed by a session while it lives, so
 * each gets a slot of its own for the whole program. */
static const char *input_slots[128][1];
static size_t n_slots;

/* A new session of the one input in (borrowed: it must outlive the session)
 * over window w, its DB found or built. */
static tb_session *open_one(const char *in, const tb_window *w, int rebuild, notes *msgs)
{
    assert_true(n_slots < sizeof input_slots / sizeof input_slots[0]);
    const char **inputs = input_slots[n_slots++];
    inputs[0] = in;
    tb_session_options o = {.inputs = inputs, .n_inputs = 1, .rebuild = rebuild, .window = *w, .unit = TB_UNIT_NS,
                            .note = msgs ? on_note : NULL, .warn = msgs ? on_note : NULL, .ctx = msgs};
    tb_session *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    tb_status st = tb_session_open(&o, &s, &err);
    if (st == TB_OK)
        st = tb_session_ready(s, &err);
    if (st != TB_OK)
        fail_msg("session of %s: %s", in, err.message);
    return s;
}

/* Closes s and removes its DB when it is a cache entry (the cache keeps
 * nothing of the group's temporary inputs). */
static void close_uncached(tb_session *s)
{
    int removed = 0;
    tb_error err;
    tb_error_clear(&err);
    tb_session_source src = tb_session_source_of(s);
    if (src == TB_SOURCE_LOADED || src == TB_SOURCE_CACHED) {
        assert_int_equal(tb_session_clear_cache(s, &removed, &err), TB_OK);
        assert_int_equal(removed, 1);
    }
    tb_session_close(s);
}

/* tb_session_query of sql into t (emptied first); returns the status. */
static tb_status query(tb_session *s, const char *sql, text_sink *t, uint64_t *nrows, tb_error *err)
{
    ts_free(t);
    ts_init(t);
    tb_run_options o = {.unit = TB_UNIT_NS};
    tb_error_clear(err);
    return tb_session_query(s, &o, sql, &t->vt, nrows, err);
}

/* The rows of sql on s as text (a new string, free with free); fails on error. */
static char *query_text(tb_session *s, const char *sql)
{
    text_sink t;
    ts_init(&t);
    tb_error err;
    uint64_t n = 0;
    tb_status st = query(s, sql, &t, &n, &err);
    if (st != TB_OK)
        fail_msg("query %s: %s", sql, err.message);
    assert_true(t.finished);
    return t.text;
}

static tb_spec *spec_of(const char *yaml)
{
    tb_spec *spec = NULL;
    tb_error err;
    tb_error_clear(&err);
    if (tb_spec_load_mem("t.yaml", yaml, strlen(yaml), &spec, NULL, NULL, &err) != TB_OK)
        fail_msg("spec: %s", err.message);
    return spec;
}

/* ---- group fixtures ---------------------------------------------------- */

/* Copies the samples' folder rel to tmpdir/name; out gets its path. */
static int copy_sample(const char *rel, const char *name, char *out, size_t n)
{
    char src[PATH_MAX], cmd[3 * PATH_MAX];
    if (!tu_samples_path(src, sizeof src, rel))
        return -1;
    int w = snprintf(out, n, "%s/%s", tmpdir, name);
    if (w < 0 || (size_t)w >= n)
        return -1;
    w = snprintf(cmd, sizeof cmd, "cp -R '%s' '%s'", src, out);
    if (w < 0 || (size_t)w >= sizeof cmd)
        return -1;
    return system(cmd) == 0 ? 0 : -1;
}

/* Removes the cache entry of the input in, when there is one (not a cmocka
 * test: no assertion). */
static void drop_cache(const char *in)
{
    const char *inputs[] = {in};
    tb_session_options o = {.inputs = inputs, .n_inputs = 1};
    tb_session *s = NULL;
    tb_error err;
    int removed;
    if (tb_session_open(&o, &s, &err) == TB_OK && tb_session_ready(s, &err) == TB_OK &&
        tb_session_source_of(s) != TB_SOURCE_OWN_DB)
        tb_session_clear_cache(s, &removed, &err);
    tb_session_close(s);
}

/* The samples copied into the group's folder: every input of the group is
 * its own (no other test's run touches their cache entries meanwhile). */
static int setup(void **state)
{
    if (tu_setup_tmpdir(state) != 0)
        return -1;
    return copy_sample("ascend_small", "base", base_dir, sizeof base_dir) == 0 &&
                   copy_sample("torch_npu_2rank", "torch_npu_2rank", two_rank, sizeof two_rank) == 0
               ? 0
               : -1;
}

static int teardown(void **state)
{
    drop_cache(base_dir);
    drop_cache(two_rank);
    return tu_teardown_tmpdir(state);
}

/* ---- 1. the session: where its DB comes from --------------------------- */

/* Loaded, then the cache reused while the inputs are unchanged, reloaded on
 * rebuild; the cache entry removed by tb_session_clear_cache. */
static void loads_then_reuses_the_cache(void **state)
{
    (void)state;
    char dir[PATH_MAX], trace[PATH_MAX + 32];
    edited_copy("basics", NULL, NULL, dir, sizeof dir);
    snprintf(trace, sizeof trace, "%s/trace_view.json", dir);

    tb_session *s = open_one(dir, &no_window, 0, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_LOADED);
    char db[PATH_MAX];
    snprintf(db, sizeof db, "%s", tb_session_db_path(s));
    assert_true(tu_exists(db));
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg) {
        char prefix[PATH_MAX];
        snprintf(prefix, sizeof prefix, "%s/tracebook/", xdg);
        assert_memory_equal(db, prefix, strlen(prefix));
    }
    /* every device task of the trace (its lines with a Task Type) is a TASK row */
    assert_i64((int64_t)count_in_file(trace, "\"Task Type\""), q1(db, "SELECT count(*) FROM TASK"));
    assert_i64(212, q1(db, "SELECT count(*) FROM TASK"));
    size_t n = 0;
    const char *const *in = tb_session_inputs(s, &n);
    assert_int_equal(n, 1);
    assert_string_equal(in[0], dir);
    tb_session_close(s);

    /* the same inputs, unchanged: the same DB, reused */
    s = open_one(dir, &no_window, 0, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_CACHED);
    assert_string_equal(tb_session_db_path(s), db);
    tb_session_close(s);

    /* rebuild: loaded again into the same entry */
    s = open_one(dir, &no_window, 1, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_LOADED);
    assert_string_equal(tb_session_db_path(s), db);
    tb_session_close(s);

    /* clear: the entry goes (and a note names it), the input stays */
    notes msgs = {0};
    s = open_one(dir, &no_window, 0, &msgs);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_CACHED);
    int removed = -1;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_session_clear_cache(s, &removed, &err), TB_OK);
    assert_int_equal(removed, 1);
    assert_false(tu_exists(db));
    assert_true(tu_exists(trace));
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "--clear: removed %s\n", db);
    assert_non_null(strstr(msgs.text, want));
    /* a verb of the same session after the removal loads the inputs again */
    char *again = query_text(s, "SELECT count(*) AS n FROM TASK");
    assert_string_equal(again, "212\n");
    free(again);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_LOADED);
    assert_true(tu_exists(db));
    removed = -1;
    assert_int_equal(tb_session_clear_cache(s, &removed, &err), TB_OK);
    assert_int_equal(removed, 1);
    tb_session_close(s);

    /* so the next session loads again */
    s = open_one(dir, &no_window, 0, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_LOADED);
    close_uncached(s);
    assert_false(tu_exists(db));
}

/* A DB that tracebook wrote, given alone, is read where it is and never
 * removed as a cache entry; a missing .db is not found. */
static void own_db_and_missing_db(void **state)
{
    (void)state;
    char db[PATH_MAX + 64];
    snprintf(db, sizeof db, "%s/own.db", tmpdir);
    const char *in[] = {base_dir};
    tb_load_options lo = {.inputs = in, .n_inputs = 1, .output = db};
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_load(&lo, NULL, &err), TB_OK);

    notes msgs = {0};
    tb_session *s = open_one(db, &no_window, 0, &msgs);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_OWN_DB);
    assert_string_equal(tb_session_db_path(s), db);
    char *got = query_text(s, "SELECT count(*) FROM TASK");
    assert_string_equal(got, "212\n");
    free(got);
    int removed = -1;
    assert_int_equal(tb_session_clear_cache(s, &removed, &err), TB_OK);
    assert_int_equal(removed, 0);
    assert_true(tu_exists(db));
    assert_non_null(strstr(msgs.text, "--clear: the input DB is kept (it is not a cache entry)"));
    /* still readable after the refused clear */
    got = query_text(s, "SELECT count(*) FROM kernel");
    assert_string_equal(got, "140\n");
    free(got);
    tb_session_close(s);

    /* rebuild does not touch a DB given as the input */
    s = open_one(db, &no_window, 1, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_OWN_DB);
    tb_session_close(s);

    /* a .db that is not there: open is lazy, ready says not found, and so does a verb */
    char missing[PATH_MAX + 64];
    snprintf(missing, sizeof missing, "%s/no-such.db", tmpdir);
    const char *mi[] = {missing};
    tb_session_options o = {.inputs = mi, .n_inputs = 1};
    s = NULL;
    assert_int_equal(tb_session_open(&o, &s, &err), TB_OK);
    assert_non_null(s);
    tb_error_clear(&err);
    assert_int_equal(tb_session_ready(s, &err), TB_ERR_NOTFOUND);
    assert_int_equal(err.code, TB_ERR_NOTFOUND);
    assert_string_equal(err.file, missing);
    text_sink t;
    ts_init(&t);
    uint64_t nrows = 0;
    assert_int_equal(query(s, "SELECT 1", &t, &nrows, &err), TB_ERR_NOTFOUND);
    assert_string_equal(t.text, "");
    ts_free(&t);
    assert_false(tu_exists(missing));
    tb_session_close(s);

    /* no input at all */
    tb_session_options none = {0};
    assert_int_equal(tb_session_open(&none, &s, &err), TB_OK);
    assert_int_equal(tb_session_ready(s, &err), TB_ERR_USAGE);
    tb_session_close(s);
    tb_session_close(NULL);
}

/* The window is the one given, kept by the session (the caller's struct may change). */
static void window_is_the_one_given(void **state)
{
    (void)state;
    tb_window w = {.set = 1, .model_id = TB_STEP_MODEL_ID, .iteration_id = 9, .iteration_count = 2,
                   .rank_set = 1, .rank = 0};
    const char *in[] = {base_dir};
    tb_session_options o = {.inputs = in, .n_inputs = 1, .window = w};
    tb_session *s = NULL;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_session_open(&o, &s, &err), TB_OK);
    o.window.iteration_id = 77;
    const tb_window *got = tb_session_window(s);
    assert_int_equal(got->set, 1);
    assert_i64(TB_STEP_MODEL_ID, got->model_id);
    assert_i64(9, got->iteration_id);
    assert_i64(2, got->iteration_count);
    assert_int_equal(got->rank_set, 1);
    assert_i64(0, got->rank);
    tb_session_close(s);

    o.window = no_window;
    assert_int_equal(tb_session_open(&o, &s, &err), TB_OK);
    assert_int_equal(tb_session_window(s)->set, 0);
    assert_int_equal(tb_session_window(s)->rank_set, 0);
    tb_session_close(s);
}

/* ---- 2. tb_session_query / tb_session_run with the test's sink --------- */

#define KERNELS_SQL                                                                         \
    "SELECT name, count(*) AS n, sum(dur) AS total, min(startNs) AS first FROM kernel "    \
    "GROUP BY name ORDER BY total DESC, name"
#define STEPS_SQL "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY id"
#define TEMP_SQL "SELECT count(*), group_concat(name) FROM (SELECT name FROM sqlite_temp_master ORDER BY name)"

/* A query's rows are those of the same SQL run by SQLite on the DB. */
static void query_equals_sqlite(void **state)
{
    (void)state;
    tb_session *s = open_one(base_dir, &no_window, 0, NULL);
    const char *db = tb_session_db_path(s);
    text_sink t;
    ts_init(&t);
    tb_error err;
    uint64_t n = 0;
    assert_int_equal(query(s, KERNELS_SQL, &t, &n, &err), TB_OK);
    assert_true(t.finished);
    assert_string_equal(t.head, "name|n|total|first");
    assert_string_equal(t.text, rows(db, KERNELS_SQL));
    assert_i64(q1(db, "SELECT count(DISTINCT name) FROM kernel"), (int64_t)n);
    assert_i64(42, (int64_t)n);

    assert_int_equal(query(s, STEPS_SQL, &t, &n, &err), TB_OK);
    assert_string_equal(t.text, rows(db, STEPS_SQL));
    assert_i64(3, (int64_t)n);

    /* the sandbox: no writes through a session */
    assert_int_equal(query(s, "DELETE FROM TASK", &t, &n, &err), TB_ERR_USAGE);
    assert_i64(212, q1(db, "SELECT count(*) FROM TASK"));
    ts_free(&t);
    tb_session_close(s);
}

/* Rows reach a sink in batches (engine/query/row_batch.c): every row, in
 * order, its text intact, past the batch's rows and its text buffer (rows of
 * up to 700 bytes of text, one of 70,000); a sink's failure ends the query
 * with its error, no row after it taken. */
static void query_in_batches(void **state)
{
    (void)state;
    static const char sql[] =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) "
        "SELECT i, CASE WHEN i = 500 THEN substr(hex(zeroblob(40000)), 1, 70000) "
        "ELSE substr(hex(zeroblob(400)), 1, i * 7 % 700) || '#' || i END AS t, "
        "CASE WHEN i % 3 = 0 THEN NULL ELSE '' END AS e FROM n";
    tb_session *s = open_one(base_dir, &no_window, 0, NULL);
    text_sink t;
    ts_init(&t);
    tb_error err;
    uint64_t n = 0;
    assert_int_equal(query(s, sql, &t, &n, &err), TB_OK);
    assert_true(t.finished);
    assert_i64(1000, (int64_t)n);
    assert_i64(1000, (int64_t)t.seen);
    /* the rows as SQLite makes them: i|0...0#i| (70,000 zeros alone in row 500) */
    size_t cap = 1 << 20, o = 0;
    char *want = malloc(cap);
    assert_non_null(want);
    for (int i = 1; i <= 1000; i++) {
        int zeros = i == 500 ? 70000 : i * 7 % 700;
        o += (size_t)snprintf(want + o, cap - o, "%d|", i);
        memset(want + o, '0', (size_t)zeros);
        o += (size_t)zeros;
        o += (size_t)(i == 500 ? snprintf(want + o, cap - o, "|\n") : snprintf(want + o, cap - o, "#%d|\n", i));
        assert_true(o < cap);
    }
    assert_string_equal(t.text, want);
    free(want);
    ts_free(&t);
    ts_init(&t);
    t.fail_at = 300;
    tb_error_clear(&err);
    tb_run_options ro = {.unit = TB_UNIT_NS};
    assert_int_equal(tb_session_query(s, &ro, sql, &t.vt, &n, &err), TB_ERR_IO);
    assert_string_equal(err.message, "row 300 refused");
    assert_i64(300, (int64_t)t.seen);
    assert_false(t.finished);
    ts_free(&t);
    tb_session_close(s);
}

/* Step mode: a window's rows are its steps' (steps 8, 9 and the cut 10
 * share the device tasks out between them). */
static void window_restricts_rows(void **state)
{
    (void)state;
    int64_t tasks[3];
    for (int k = 0; k < 3; k++) {
        tb_window w = step_window(8 + k, 1);
        tb_session *s = open_one(base_dir, &w, 0, NULL);
        char *ids = query_text(s, "SELECT group_concat(id) FROM STEP_TIME");
        char want[16];
        snprintf(want, sizeof want, "%d\n", 8 + k);
        assert_string_equal(ids, want);
        free(ids);
        char *cnt = query_text(s, "SELECT count(*) FROM TASK");
        char *end;
        tasks[k] = strtoll(cnt, &end, 10);
        assert_string_equal(end, "\n");
        free(cnt);
        tb_session_close(s);
    }
    /* the whole steps hold most of the tasks, the cut step two; each task is in one step */
    assert_i64(106, tasks[0]);
    assert_i64(104, tasks[1]);
    assert_i64(2, tasks[2]);
    assert_i64(212, tasks[0] + tasks[1] + tasks[2]);

    tb_window two = step_window(8, 2);
    tb_session *s = open_one(base_dir, &two, 0, NULL);
    char *ids = query_text(s, "SELECT group_concat(id) FROM STEP_TIME");
    assert_string_equal(ids, "8,9\n");
    free(ids);
    char *cnt = query_text(s, "SELECT count(*) FROM TASK");
    char want[32];
    snprintf(want, sizeof want, "%" PRId64 "\n", tasks[0] + tasks[1]);
    assert_string_equal(cnt, want);
    free(cnt);
    tb_session_close(s);

    /* a step the data does not have */
    tb_window far = step_window(100, 1);
    s = open_one(base_dir, &far, 0, NULL);
    text_sink t;
    ts_init(&t);
    tb_error err;
    uint64_t n = 0;
    assert_int_equal(query(s, "SELECT 1", &t, &n, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "step mode has steps 8-10"));
    ts_free(&t);
    tb_session_close(s);
}

/* The report job into out_dir with the spec yaml, CSV only; *run gets its result. */
static void report_into(tb_session *s, const char *yaml, const char *out_dir, tb_run_result *res)
{
    tb_spec *spec = spec_of(yaml);
    const tb_spec *specs[] = {spec};
    tb_report_job job = {.run = {.specs = specs, .n_specs = 1, .unit = TB_UNIT_US, .formats = TB_OUT_CSV},
                         .out_dir = out_dir, .console = stdout};
    tb_error err;
    tb_error_clear(&err);
    tb_status st = tb_report_write(s, &job, res, &err);
    if (st != TB_OK)
        fail_msg("report: %s", err.message);
    tb_spec_free(spec);
}

static const char two_reports[] = "tracebook: 1\nreports:\n  - use: top_kernels\n  - use: step_trace_time\n";

/* Fails unless dir_a/name and dir_b/name hold the same bytes. */
static void same_file(const char *dir_a, const char *dir_b, const char *name)
{
    char a[PATH_MAX + 64], b[PATH_MAX + 64];
    snprintf(a, sizeof a, "%s/%s", dir_a, name);
    snprintf(b, sizeof b, "%s/%s", dir_b, name);
    char *x = slurp(a), *y = slurp(b);
    assert_true(count_lines(a) > 1);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* Verbs one after the other on one session give what each gives on a fresh
 * session: a verb leaves nothing of its own on the connection. */
static void verbs_in_a_row(void **state)
{
    (void)state;
    for (int windowed = 0; windowed < 2; windowed++) {
        tb_window w = windowed ? step_window(9, 1) : no_window;
        char one[PATH_MAX], fresh[PATH_MAX];
        fresh_dir(windowed ? "row/w-one" : "row/one", one, sizeof one);
        fresh_dir(windowed ? "row/w-fresh" : "row/fresh", fresh, sizeof fresh);

        /* on fresh sessions, one verb each */
        tb_session *f = open_one(base_dir, &w, 0, NULL);
        char *k0 = query_text(f, KERNELS_SQL);
        tb_session_close(f);
        f = open_one(base_dir, &w, 0, NULL);
        char *s0 = query_text(f, STEPS_SQL);
        tb_session_close(f);
        f = open_one(base_dir, &w, 0, NULL);
        tb_run_result r0;
        report_into(f, two_reports, fresh, &r0);
        tb_session_close(f);
        f = open_one(base_dir, &w, 0, NULL);
        char *t0 = query_text(f, TEMP_SQL);
        tb_session_close(f);

        /* on one session, in a row */
        tb_session *s = open_one(base_dir, &w, 0, NULL);
        char *k1 = query_text(s, KERNELS_SQL);
        char *s1 = query_text(s, STEPS_SQL);
        tb_run_result r1;
        report_into(s, two_reports, one, &r1);
        char *k2 = query_text(s, KERNELS_SQL);
        char *t1 = query_text(s, TEMP_SQL);
        assert_string_equal(k1, k0);
        assert_string_equal(s1, s0);
        assert_string_equal(k2, k0);
        /* the TEMP schema as a fresh session shows it (the window's views, made
         * for this statement, and nothing at all without a window): the
         * report's computed tables are gone with the report */
        assert_string_equal(t1, t0);
        if (!windowed)
            assert_string_equal(t1, "0|\n");
        assert_int_equal(r1.reports_run, 2);
        assert_int_equal(r0.reports_run, 2);
        assert_i64((int64_t)r0.rows, (int64_t)r1.rows);
        assert_string_equal(r1.window_label, windowed ? "9" : "");
        same_file(one, fresh, windowed ? "top_kernels_9.csv" : "top_kernels.csv");
        same_file(one, fresh, windowed ? "step_trace_time_9.csv" : "step_trace_time.csv");
        /* the steps the windowed rows came from */
        assert_memory_equal(s0, windowed ? "9|" : "8|", 2);
        free(k0), free(s0), free(k1), free(s1), free(k2), free(t0), free(t1);
        tb_session_close(s);
    }
}

/* ---- 3. export summary ------------------------------------------------- */

/* The files a verb put in place, by name. */
typedef struct written_list {
    char path[32][PATH_MAX];
    size_t n;
} written_list;

static void on_written(void *ctx, const char *path)
{
    written_list *w = ctx;
    if (w->n < sizeof w->path / sizeof w->path[0])
        snprintf(w->path[w->n], sizeof w->path[0], "%s", path);
    w->n++;
}

static int was_written(const written_list *w, const char *path)
{
    for (size_t i = 0; i < w->n && i < sizeof w->path / sizeof w->path[0]; i++)
        if (!strcmp(w->path[i], path))
            return 1;
    return 0;
}

static const char *const torch_npu_files[] = {"kernel_details", "step_trace_time", "op_statistic", "api_statistic"};

/* Each rank of torch_npu_2rank gets its ASCEND_PROFILER_OUTPUT under out_dir:
 * the four summaries (its own kernel_details and step_trace_time as it held
 * them), README.txt and tracebook_run.json. */
static void summary_per_rank(void **state)
{
    (void)state;
    char out[PATH_MAX];
    fresh_dir("summary/all", out, sizeof out);
    tb_session *s = open_one(two_rank, &no_window, 0, NULL);
    written_list w = {0};
    tb_summary_options o = {.out_dir = out, .written = on_written, .ctx = &w};
    tb_summary_result res;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_summary_write(s, &o, &res, &err), TB_OK);
    assert_int_equal(res.ranks, 2);
    assert_int_equal(res.files, 12);
    assert_int_equal(w.n, 12);
    assert_string_equal(res.window_label, "");
    assert_int_equal(count_entries(out), 2);

    /* the rows of each summary: those of the rank's own files (torch_npu's
     * kernel_details has a row per device task and communication op) */
    for (int r = 0; r < 2; r++) {
        char folder[PATH_MAX + 64], f[PATH_MAX + 128], in[PATH_MAX + 128], a[1024], b[1024];
        snprintf(folder, sizeof folder, "%s/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT", out, r);
        assert_int_equal(count_entries(folder), 6);
        for (size_t i = 0; i < 4; i++) {
            snprintf(f, sizeof f, "%s/%s.csv", folder, torch_npu_files[i]);
            assert_true(was_written(&w, f));
        }
        snprintf(f, sizeof f, "%s/README.txt", folder);
        assert_true(was_written(&w, f));
        snprintf(f, sizeof f, "%s/tracebook_run.json", folder);
        assert_true(was_written(&w, f));

        /* the rank's own step_trace_time.csv and kernel_details.csv come back
         * as it held them, byte for byte (its rows, not values recomputed) */
        for (int k = 0; k < 2; k++) {
            snprintf(f, sizeof f, "%s/%s.csv", folder, torch_npu_files[k]);
            snprintf(in, sizeof in, "%s/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/%s.csv", two_rank, r,
                     torch_npu_files[k]);
            assert_string_equal(first_line(f, a, sizeof a), first_line(in, b, sizeof b));
            char *theirs = slurp(in), *ours = slurp(f);
            assert_string_equal(ours, theirs);
            free(theirs);
            free(ours);
        }
        snprintf(f, sizeof f, "%s/kernel_details.csv", folder);
        assert_int_equal(count_lines(f), r ? 1 + 131 : 1 + 129);
        snprintf(f, sizeof f, "%s/step_trace_time.csv", folder);
        assert_int_equal(count_lines(f), 2);
    }

    /* no_clobber: refused, nothing written, the files as they were */
    char kd[PATH_MAX + 128];
    snprintf(kd, sizeof kd, "%s/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", out);
    struct stat before, after;
    assert_int_equal(stat(kd, &before), 0);
    char *old = slurp(kd);
    written_list w2 = {0};
    o = (tb_summary_options){.out_dir = out, .no_clobber = 1, .written = on_written, .ctx = &w2};
    tb_error_clear(&err);
    assert_int_equal(tb_summary_write(s, &o, &res, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "exists already"));
    assert_int_equal(w2.n, 0);
    assert_int_equal(stat(kd, &after), 0);
    assert_true(before.st_ino == after.st_ino);
    char *now = slurp(kd);
    assert_string_equal(now, old);
    free(now);
    free(old);
    for (int r = 0; r < 2; r++) {
        char folder[PATH_MAX + 64];
        snprintf(folder, sizeof folder, "%s/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT", out, r);
        assert_int_equal(count_entries(folder), 6);
    }
    tb_session_close(s);
}

/* A window: only the ranks that have it, files named after it; a window
 * no rank has writes nothing. */
static void summary_windows(void **state)
{
    (void)state;
    char out[PATH_MAX];
    fresh_dir("summary/step3", out, sizeof out);
    tb_window w3 = step_window(3, 1);
    notes msgs = {0};
    tb_session *s = open_one(two_rank, &w3, 0, NULL);
    tb_summary_options o = {.out_dir = out, .note = on_note, .ctx = &msgs};
    tb_summary_result res;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_summary_write(s, &o, &res, &err), TB_OK);
    tb_session_close(s);
    /* step 3 is rank 1's */
    assert_int_equal(res.ranks, 1);
    assert_int_equal(res.files, 6);
    assert_string_equal(res.window_label, "3");
    assert_non_null(strstr(msgs.text, "rank 0: not in the window"));
    assert_int_equal(count_entries(out), 1);
    char f[PATH_MAX + 128];
    snprintf(f, sizeof f, "%s/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details_3.csv", out);
    assert_true(tu_exists(f));
    /* every row of step 3 */
    char *text = slurp(f);
    size_t n = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        assert_memory_equal(line + 1, "3,", 2);
        n++;
    }
    assert_true(n > 0);
    free(text);

    char none[PATH_MAX];
    fresh_dir("summary/none", none, sizeof none);
    tb_window far = step_window(100, 1);
    s = open_one(two_rank, &far, 0, NULL);
    written_list w = {0};
    o = (tb_summary_options){.out_dir = none, .written = on_written, .ctx = &w};
    tb_error_clear(&err);
    /* a window no rank has: nothing exported, and an error that says so */
    assert_int_equal(tb_summary_write(s, &o, &res, &err), TB_ERR_USAGE);
    assert_string_equal(err.message, "no rank has the window (model 4294967295, iteration 100): nothing exported");
    assert_int_equal(res.ranks, 0);
    assert_int_equal(res.files, 0);
    assert_int_equal(w.n, 0);
    assert_int_equal(count_entries(none), 0);
    tb_session_close(s);
}

/* ---- 4. compare -------------------------------------------------------- */

static tb_status open_text_sink(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                                const char *label, tb_sink **out, tb_error *err)
{
    (void)spec, (void)rep, (void)format, (void)label, (void)err;
    text_sink *t = ctx;
    ts_free(t);
    ts_init(t);
    *out = &t->vt;
    return TB_OK;
}

static void compare_into(tb_session *base, tb_session *new, const char *out_dir, tb_compare_result *res)
{
    tb_spec *spec = spec_of(top_spec);
    tb_compare_job job = {.spec = spec, .unit = TB_UNIT_US, .formats = TB_OUT_CSV, .out_dir = out_dir};
    tb_error err;
    tb_error_clear(&err);
    memset(res, 0xff, sizeof *res);
    tb_status st = tb_compare_write(base, new, &job, res, &err);
    if (st != TB_OK)
        fail_msg("compare: %s", err.message);
    tb_spec_free(spec);
}

/* The same inputs on both sides: every row matched, nothing flagged. */
static void compare_same_inputs(void **state)
{
    (void)state;
    tb_session *a = open_one(base_dir, &no_window, 0, NULL);
    tb_session *b = open_one(base_dir, &no_window, 0, NULL);

    /* the report's rows, through tb_session_run */
    tb_spec *spec = spec_of(top_spec);
    const tb_spec *specs[] = {spec};
    text_sink t;
    ts_init(&t);
    tb_run_options ro = {.specs = specs, .n_specs = 1, .unit = TB_UNIT_NS, .open_sink = open_text_sink,
                         .sink_ctx = &t};
    tb_run_result rr;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_session_run(a, &ro, &rr, &err), TB_OK);
    assert_int_equal(rr.reports_run, 1);
    assert_i64(TOP_ROWS, (int64_t)rr.rows);
    assert_true(t.finished);
    /* the slowest kernel first (one rank: no Rank ID column) */
    assert_string_equal(t.head, "Name|Type|Count|Total Time(ns)|Avg Time(ns)|Min Time(ns)|Max Time(ns)|Ratio(%)");
    assert_memory_equal(t.text, SLOW "|" SLOW_TYPE "|28|", strlen(SLOW "|" SLOW_TYPE "|28|"));
    ts_free(&t);
    tb_spec_free(spec);

    char out[PATH_MAX];
    fresh_dir("compare/same", out, sizeof out);
    tb_compare_result res;
    compare_into(a, b, out, &res);
    assert_int_equal(res.reports, 1);
    assert_int_equal(res.skipped, 0);
    assert_i64(TOP_ROWS, (int64_t)res.matched);
    assert_i64(0, (int64_t)res.added);
    assert_i64(0, (int64_t)res.removed);
    assert_i64(0, (int64_t)res.regressions);
    assert_i64(0, (int64_t)res.improvements);
    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s/top_kernels_compare.csv", out);
    assert_int_equal(count_lines(f), 1 + TOP_ROWS);
    assert_int_equal(count_in_file(f, ",matched,"), TOP_ROWS);
    snprintf(f, sizeof f, "%s/tracebook_run.json", out);
    assert_true(tu_exists(f));
    assert_int_equal(count_in_file(f, "\"regression_count\": 0"), 1);
    /* and the summary of the reports compared: nothing else */
    snprintf(f, sizeof f, "%s/compare_summary.csv", out);
    assert_true(tu_exists(f));
    assert_int_equal(count_entries(out), 3);

    /* one session on both sides: the same */
    fresh_dir("compare/one", out, sizeof out);
    compare_into(a, a, out, &res);
    assert_i64(TOP_ROWS, (int64_t)res.matched);
    assert_i64(0, (int64_t)res.added + (int64_t)res.removed + (int64_t)res.regressions + (int64_t)res.improvements);
    tb_session_close(a);
    tb_session_close(b);
}

/* One kernel 1.5 times slower in the new run: its Total and Avg Time are
 * the two regressions, named in the CSV and in tracebook_run.json. */
static void compare_one_kernel_slower(void **state)
{
    (void)state;
    char slow[PATH_MAX];
    double factor = 1.5;
    edited_copy("slow", slower, &factor, slow, sizeof slow);
    tb_session *a = open_one(base_dir, &no_window, 0, NULL);
    tb_session *b = open_one(slow, &no_window, 0, NULL);
    char out[PATH_MAX];
    fresh_dir("compare/slow", out, sizeof out);
    tb_compare_result res;
    compare_into(a, b, out, &res);
    assert_int_equal(res.reports, 1);
    assert_i64(TOP_ROWS, (int64_t)res.matched);
    assert_i64(0, (int64_t)res.added + (int64_t)res.removed);
    assert_i64(2, (int64_t)res.regressions);
    assert_i64(0, (int64_t)res.improvements);

    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s/top_kernels_compare.csv", out);
    char *text = slurp(f);
    /* the slow kernel's row: the last two columns Regressions and Improvements */
    const char *row = strstr(text, "\n" SLOW ",");
    assert_non_null(row);
    size_t len = strcspn(row + 1, "\n");
    const char *tail = ",\"Total Time, Avg Time\",";
    assert_true(len > strlen(tail));
    assert_memory_equal(row + 1 + len - strlen(tail), tail, strlen(tail));
    /* no other row flagged: every line but the header and the slow one ends with ",," */
    size_t plain = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        size_t k = strcspn(line + 1, "\n");
        plain += k >= 2 && line[k - 1 + 1] == ',' && line[k - 2 + 1] == ',';
    }
    assert_int_equal(plain, TOP_ROWS - 1);
    free(text);

    assert_int_equal(count_entries(out), 3);
    snprintf(f, sizeof f, "%s/tracebook_run.json", out);
    assert_int_equal(count_in_file(f, "\"regression_count\": 2"), 1);
    assert_int_equal(count_in_file(f, "\"key\": \"" SLOW " | " SLOW_TYPE "\""), 2);
    assert_int_equal(count_in_file(f, "\"report\": \"top_kernels\""), 2);
    tb_session_close(a);
    close_uncached(b);

    /* base and new swapped: the same two cells are improvements */
    a = open_one(base_dir, &no_window, 0, NULL);
    b = open_one(slow, &no_window, 0, NULL);
    fresh_dir("compare/faster", out, sizeof out);
    compare_into(b, a, out, &res);
    assert_i64(0, (int64_t)res.regressions);
    assert_i64(2, (int64_t)res.improvements);
    tb_session_close(a);
    close_uncached(b);
}

/* ---- 5. history -------------------------------------------------------- */

/* A night: each kernel's time jitters by up to 3% from night to night and
 * each task by up to 1% more (as tests/cli/history_test.py makes them); the
 * slow kernel is then multiplied by slow. A small xorshift generator seeded
 * by the night keeps every night the same from run to run. */
typedef struct night {
    uint64_t rng;
    double slow;
    char names[64][128];
    double per_kernel[64];
    size_t n;
} night;

static double uniform(night *g, double lo, double hi)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return lo + (hi - lo) * (double)(g->rng >> 11) / 9007199254740992.0;
}

static double night_factor(void *ctx, const char *name)
{
    night *g = ctx;
    size_t i = 0;
    while (i < g->n && strcmp(g->names[i], name))
        i++;
    if (i == g->n) {
        assert_true(g->n < sizeof g->names / sizeof g->names[0]);
        snprintf(g->names[g->n], sizeof g->names[0], "%s", name);
        g->per_kernel[g->n++] = 1 + uniform(g, -0.03, 0.03);
    }
    double f = g->per_kernel[i] * (1 + uniform(g, -0.01, 0.01));
    return strcmp(name, SLOW) ? f : f * g->slow;
}

static void make_night(const char *rel, uint64_t seed, double slow, char *path, size_t n)
{
    night g = {.rng = 0x9e3779b97f4a7c15ULL * (seed + 1), .slow = slow};
    edited_copy(rel, night_factor, &g, path, n);
}

static void add_night(const char *history, const char *dir, const char *label, size_t nights_now)
{
    tb_session *s = open_one(dir, &no_window, 0, NULL);
    tb_spec *spec = spec_of(top_spec);
    const char *meta[] = {"commit=c1", "team=perf"};
    tb_history_add_job job = {.history = history, .spec = spec, .label = label, .meta = meta, .n_meta = 2};
    tb_history_added res;
    tb_error err;
    tb_error_clear(&err);
    if (tb_history_add(s, &job, &res, &err) != TB_OK)
        fail_msg("history add %s: %s", label, err.message);
    assert_string_equal(res.label, label);
    assert_int_equal(res.reports, 1);
    assert_i64(TOP_ROWS, (int64_t)res.rows);
    assert_int_equal(res.nights, nights_now);
    assert_int_equal(res.removed, 0);
    tb_spec_free(spec);
    close_uncached(s);
}

static void history_report(const char *history, const char *out_dir, tb_history_result *res)
{
    tb_spec *spec = spec_of(top_spec);
    tb_history_report_job job = {.history = history, .spec = spec, .unit = TB_UNIT_US, .formats = TB_OUT_CSV,
                                 .out_dir = out_dir};
    tb_error err;
    tb_error_clear(&err);
    if (tb_history_report(&job, res, &err) != TB_OK)
        fail_msg("history report: %s", err.message);
    tb_spec_free(spec);
}

/* tb_history_list's output in format, written through a FILE* on a file of
 * the test's folder (new text: free with free). */
static char *list_text(const char *history, unsigned format, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_history_list(history, format, f, &err), TB_OK);
    assert_int_equal(fclose(f), 0);
    return slurp(path);
}

/* The first field of each line after the first of text, one a line (new). */
static char *first_fields(const char *text, const char *sep)
{
    char *out = calloc(1, strlen(text) + 1);
    assert_non_null(out);
    size_t o = 0;
    for (const char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        size_t k = strcspn(line + 1, sep);
        memcpy(out + o, line + 1, k);
        o += k;
        out[o++] = '\n';
    }
    return out;
}

/* The values of the "Label" keys of a JSON listing, in order, one a line (new). */
static char *json_labels(const char *text)
{
    char *out = calloc(1, strlen(text) + 1);
    assert_non_null(out);
    size_t o = 0;
    for (const char *p = strstr(text, "\"Label\":"); p; p = strstr(p + 1, "\"Label\":")) {
        p += strlen("\"Label\":");
        p += strspn(p, " ");
        assert_int_equal(*p, '"');
        size_t k = strcspn(p + 1, "\"");
        memcpy(out + o, p + 1, k);
        o += k;
        out[o++] = '\n';
    }
    return out;
}

/*
 * The labels tb_history_list gives, oldest first, one a line: its console
 * table, its CSV and its JSON, each written to a FILE* (a file of the
 * test's folder), must name the same nights.
 */
static char *listed_labels(const char *history)
{
    char *text = list_text(history, TB_OUT_CONSOLE, "list.txt");
    assert_memory_equal(text, "Label ", 6);
    char *rule = strstr(text, "\n-----");
    assert_non_null(rule);
    char *out = first_fields(rule + 1, " \n");
    free(text);

    text = list_text(history, TB_OUT_CSV, "list.csv");
    const char head[] = "Label,Data Time,Added,Version,Reports,Rows,Inputs,Meta\n";
    assert_memory_equal(text, head, strlen(head));
    char *csv = first_fields(text, ",\n");
    assert_string_equal(csv, out);
    free(csv);
    free(text);

    text = list_text(history, TB_OUT_JSON, "list.json");
    assert_int_equal(text[0], '[');
    char *json = json_labels(text);
    assert_string_equal(json, out);
    free(json);
    free(text);
    return out;
}

#define NIGHTS 7

/* Six nights of jitter and a seventh with the slow kernel 1.5 times slower:
 * only the seventh is flagged, on that kernel's Total and Avg Time; the
 * seventh replaced by a night of jitter alone flags nothing. */
static void history_of_nights(void **state)
{
    (void)state;
    char history[PATH_MAX + 64], dir[PATH_MAX], rel[32], label[32];
    snprintf(history, sizeof history, "%s/nights.db", tmpdir);
    for (int k = 1; k <= NIGHTS; k++) {
        snprintf(rel, sizeof rel, "nights/n%d", k);
        snprintf(label, sizeof label, "night%d", k);
        make_night(rel, (uint64_t)k, k == NIGHTS ? 1.5 : 1.0, dir, sizeof dir);
        add_night(history, dir, label, (size_t)k);
    }
    char *labels = listed_labels(history);
    assert_string_equal(labels, "night1\nnight2\nnight3\nnight4\nnight5\nnight6\nnight7\n");
    free(labels);
    assert_i64(NIGHTS * 2, q1(history, "SELECT count(*) FROM night_meta"));
    assert_i64(NIGHTS * TOP_ROWS, q1(history, "SELECT sum(rows) FROM night_report"));

    /* a label already there is refused, the history unchanged */
    tb_session *s = open_one(base_dir, &no_window, 0, NULL);
    tb_spec *spec = spec_of(top_spec);
    tb_history_add_job job = {.history = history, .spec = spec, .label = "night3"};
    tb_history_added added;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_history_add(s, &job, &added, &err), TB_ERR_USAGE);
    assert_non_null(strstr(err.message, "night3"));
    assert_i64(NIGHTS, q1(history, "SELECT count(*) FROM night"));
    tb_spec_free(spec);
    tb_session_close(s);

    char out[PATH_MAX];
    fresh_dir("trend/slow", out, sizeof out);
    tb_history_result res;
    history_report(history, out, &res);
    assert_int_equal(res.reports, 1);
    assert_int_equal(res.nights, NIGHTS);
    assert_string_equal(res.latest, "night7");
    assert_i64(2, (int64_t)res.regressions);
    assert_i64(0, (int64_t)res.improvements);
    assert_i64(2, (int64_t)res.flagged); /* nights 1-6: none */
    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s/history_verdicts.csv", out);
    assert_int_equal(count_lines(f), 3);
    assert_int_equal(count_in_file(f, "\nnight7,top_kernels," SLOW " | " SLOW_TYPE ",Total Time(us),"), 1);
    assert_int_equal(count_in_file(f, "\nnight7,top_kernels," SLOW " | " SLOW_TYPE ",Avg Time(us),"), 1);
    assert_int_equal(count_in_file(f, ",regression,"), 2);
    snprintf(f, sizeof f, "%s/top_kernels_trend.csv", out);
    char head[1024];
    assert_string_equal(first_line(f, head, sizeof head),
                        "Name,Type,Column,night1,night2,night3,night4,night5,night6,night7,"
                        "Baseline Median,Baseline MAD,Ratio,Verdict,Baseline Nights");

    /* the seventh night replaced by one of plain jitter */
    const char *gone[] = {"night7"};
    size_t removed = 0;
    tb_error_clear(&err);
    assert_int_equal(tb_history_remove(history, gone, 1, 0, &removed, &err), TB_OK);
    assert_int_equal(removed, 1);
    labels = listed_labels(history);
    assert_string_equal(labels, "night1\nnight2\nnight3\nnight4\nnight5\nnight6\n");
    free(labels);
    make_night("nights/n7j", 77, 1.0, dir, sizeof dir);
    add_night(history, dir, "night7j", NIGHTS);
    fresh_dir("trend/jitter", out, sizeof out);
    history_report(history, out, &res);
    assert_int_equal(res.nights, NIGHTS);
    assert_string_equal(res.latest, "night7j");
    assert_i64(0, (int64_t)res.regressions);
    assert_i64(0, (int64_t)res.flagged);
    snprintf(f, sizeof f, "%s/history_verdicts.csv", out);
    assert_int_equal(count_lines(f), 1);

    /* a label that is not there: an error, nothing removed */
    const char *absent[] = {"night9"};
    tb_error_clear(&err);
    assert_int_not_equal(tb_history_remove(history, absent, 1, 0, &removed, &err), TB_OK);
    assert_i64(NIGHTS, q1(history, "SELECT count(*) FROM night"));
    /* keep: the newest three nights stay */
    tb_error_clear(&err);
    assert_int_equal(tb_history_remove(history, NULL, 0, 3, &removed, &err), TB_OK);
    assert_int_equal(removed, NIGHTS - 3);
    labels = listed_labels(history);
    assert_string_equal(labels, "night5\nnight6\nnight7j\n");
    free(labels);
}

/* ---- 6. export db ------------------------------------------------------ */

/* Into a folder: msprof's default name, from the data's start (ascend_small
 * starts at 1704161547.420317 s: 2024-01-02 02:12:27 UTC). */
static void export_db_default_name(void **state)
{
    (void)state;
    char out[PATH_MAX], final[PATH_MAX + 64], want[PATH_MAX + 64];
    fresh_dir("export/db", out, sizeof out);
    tb_session *s = open_one(base_dir, &no_window, 0, NULL);
    char def[PATH_MAX];
    tb_export_default_dir(s, def, sizeof def);
    assert_string_equal(def, base_dir); /* the input folder, which can be written */
    tb_db_export_options o = {.output = out};
    tb_load_result res;
    tb_error err;
    tb_error_clear(&err);
    assert_int_equal(tb_export_db(s, &o, final, sizeof final, &res, &err), TB_OK);
    snprintf(want, sizeof want, "%s/msprof_20240102021227.db", out);
    assert_string_equal(final, want);
    assert_int_equal(count_entries(out), 1);
    assert_true(tb_db_is_own(final));
    assert_false(tb_db_is_shard(final));
    assert_i64(212, q1(final, "SELECT count(*) FROM TASK"));
    assert_int_equal(res.n_files, 1);
    tb_session_close(s);

    /* the exported DB, given alone, is read as it is */
    s = open_one(final, &no_window, 0, NULL);
    assert_int_equal(tb_session_source_of(s), TB_SOURCE_OWN_DB);
    assert_string_equal(tb_session_db_path(s), final);
    tb_session_close(s);
}

/* Two shards of torch_npu_2rank side by side, a rank each, recorded in the
 * folder's tracebook_run.json; the folder loads as the whole. */
static void export_db_shards(void **state)
{
    (void)state;
    char out[PATH_MAX], final[PATH_MAX + 64], want[PATH_MAX + 64], run[PATH_MAX + 64];
    fresh_dir("export/shards", out, sizeof out);
    snprintf(run, sizeof run, "%s/tracebook_run.json", out);
    tb_session *s = open_one(two_rank, &no_window, 0, NULL);
    int64_t whole = q1(tb_session_db_path(s), "SELECT count(*) FROM TASK");
    int64_t ranks_sum = 0;
    for (unsigned k = 0; k < 2; k++) {
        tb_db_export_options o = {.output = out, .shard_index = k, .shard_count = 2};
        tb_load_result res;
        tb_error err;
        tb_error_clear(&err);
        assert_int_equal(tb_export_db(s, &o, final, sizeof final, &res, &err), TB_OK);
        snprintf(want, sizeof want, "%s/shard_%u_of_2.db", out, k);
        assert_string_equal(final, want);
        assert_true(tb_db_is_shard(final));
        /* one rank in each */
        assert_i64(1, q1(final, "SELECT count(DISTINCT rankId) FROM TASK"));
        ranks_sum += q1(final, "SELECT min(rankId) FROM TASK");
        assert_true(tu_exists(run));
        assert_int_equal(count_in_file(run, "\"processes\": ["), 1);
        assert_int_equal(count_in_file(run, "\"shard_count\": 2"), 1);
        assert_int_equal(count_in_file(run, "\"db\": \"shard_0_of_2.db\""), 1);
        assert_int_equal(count_in_file(run, "\"db\": \"shard_1_of_2.db\""), k == 1);
    }
    assert_i64(1, ranks_sum); /* ranks 0 and 1 */
    assert_int_equal(count_entries(out), 3);
    assert_true(tb_db_shard_folder(out));
    tb_session_close(s);

    s = open_one(out, &no_window, 0, NULL);
    assert_i64(whole, q1(tb_session_db_path(s), "SELECT count(*) FROM TASK"));
    assert_i64(2, q1(tb_session_db_path(s), "SELECT count(DISTINCT rankId) FROM TASK"));
    close_uncached(s);
    /* a folder of shards records them in its tracebook_run.json: it is a run's DB, not a run's output */
    assert_int_equal(tb_run_folder(out), 0);
}

/* What an earlier run's output folder is: a folder with a regular tracebook_run.json. */
static void run_folder(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    fresh_dir("runfolder/out", dir, sizeof dir);
    assert_int_equal(tb_run_folder(dir), 0);
    write_file(path, sizeof path, "runfolder/out/tracebook_run.json", "{}", 2);
    assert_int_equal(tb_run_folder(dir), 1);
    assert_int_equal(tb_run_folder(path), 0);
    fresh_dir("runfolder/odd", dir, sizeof dir);
    make_dirs("runfolder/odd/tracebook_run.json", path, sizeof path);
    assert_int_equal(tb_run_folder(dir), 0);
    snprintf(path, sizeof path, "%s/runfolder/none", tmpdir);
    assert_int_equal(tb_run_folder(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads_then_reuses_the_cache),
        cmocka_unit_test(own_db_and_missing_db),
        cmocka_unit_test(window_is_the_one_given),
        cmocka_unit_test(query_equals_sqlite),
        cmocka_unit_test(query_in_batches),
        cmocka_unit_test(window_restricts_rows),
        cmocka_unit_test(verbs_in_a_row),
        cmocka_unit_test(summary_per_rank),
        cmocka_unit_test(summary_windows),
        cmocka_unit_test(compare_same_inputs),
        cmocka_unit_test(compare_one_kernel_slower),
        cmocka_unit_test(history_of_nights),
        cmocka_unit_test(export_db_default_name),
        cmocka_unit_test(export_db_shards),
        cmocka_unit_test(run_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
