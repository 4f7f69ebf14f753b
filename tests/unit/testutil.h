/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - helpers shared by the cmocka tests: exact-value assertions,
 * a private temporary directory per test group, files written into it, and
 * one-value SQL queries against a DB a test loaded. Include after cmocka.h;
 * define TU_WITH_SQLITE first for the query helpers, TU_WITH_DB_FIXTURE for
 * the computed-table tests' fixture (a DB made from the engine's schema and
 * given rows, queries over it checked as text: capture.h).
 */
#ifndef TB_TESTUTIL_H
#define TB_TESTUTIL_H

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* The group's temporary directory (made by tu_make_tmpdir). */
static char tmpdir[PATH_MAX];

/* Fails (at the caller's line) unless two int64 values are equal; prints them signed. */
#define assert_i64(want, got)                                                             \
    do {                                                                                  \
        int64_t w_ = (want), g_ = (got);                                                  \
        if (w_ != g_) {                                                                   \
            print_error("%s: expected %" PRId64 ", got %" PRId64 "\n", #got, w_, g_);     \
            fail();                                                                       \
        }                                                                                 \
    } while (0)

/* Fails unless the n bytes at p are exactly the string literal lit (which may hold NULs). */
#define assert_bytes(p, n, lit)                                                           \
    do {                                                                                  \
        const char *p_ = (p);                                                             \
        size_t n_ = (n);                                                                  \
        if (n_ != sizeof(lit) - 1 || (n_ && memcmp(p_, lit, n_) != 0)) {                  \
            print_error("%s: expected \"%s\", got \"%.*s\"\n", #p, lit, (int)n_, p_);     \
            fail();                                                                       \
        }                                                                                 \
    } while (0)

/* Makes tmpdir under $TMPDIR (else /tmp), named after tag. Returns 0 or -1. */
static inline int tu_make_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/%s-XXXXXX", base && *base ? base : "/tmp", tag);
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Removes tmpdir and everything in it. Returns 0 or -1. */
static inline int tu_remove_tmpdir(void)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* cmocka group fixtures: tmpdir made before the group's tests (named after
 * this executable) and removed, with everything in it, after them. */
static inline int tu_setup_tmpdir(void **state)
{
    (void)state;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *slash = strrchr(exe, '/');
    char tag[64];
    snprintf(tag, sizeof tag, "%.63s", slash ? slash + 1 : n > 0 ? exe : "unit");
    return tu_make_tmpdir(tag);
}

static inline int tu_teardown_tmpdir(void **state)
{
    (void)state;
    return tu_remove_tmpdir();
}

/* The size of the file at path, or -1 when it cannot be stat'ed. */
static inline long tu_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* 1 when something (a file, a folder) is at path. */
static inline int tu_exists(const char *path)
{
    return tu_file_size(path) >= 0;
}

/* Fills path with samples/rel of the source tree, found above the working
 * directory or above this executable. Returns 1, or 0 when there is none. */
static inline int tu_samples_path(char *path, size_t cap, const char *rel)
{
    char dir[PATH_MAX];
    for (int from = 0; from < 2; from++) {
        if (from == 0 && !getcwd(dir, sizeof dir))
            continue;
        if (from == 1) {
            ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
            if (n <= 0)
                continue;
            dir[n] = 0;
        }
        for (;;) {
            int w = snprintf(path, cap, "%s/samples/%s", dir, rel);
            if (w > 0 && (size_t)w < cap && access(path, R_OK) == 0)
                return 1;
            char *slash = strrchr(dir, '/');
            if (!slash || slash == dir)
                break;
            *slash = 0;
        }
    }
    return 0;
}

/* Makes tmpdir/rel and its parents (fails the test when the name does not
 * fit); path gets the full name. */
static inline void make_dirs(const char *rel, char *path, size_t n)
{
    int w = snprintf(path, n, "%s/%s", tmpdir, rel);
    assert_true(w > 0 && (size_t)w < n);
    for (char *p = path + strlen(tmpdir) + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
}

/* Writes n bytes to tmpdir/name; path (cap bytes) gets the full name. */
static inline void write_file(char *path, size_t cap, const char *name, const void *data, size_t n)
{
    int w = snprintf(path, cap, "%s/%s", tmpdir, name);
    assert_true(w > 0 && (size_t)w < cap);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n)
        assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Writes n bytes gzip-compressed to tmpdir/name. */
static inline void write_gz(char *path, size_t cap, const char *name, const void *data, size_t n)
{
    int w = snprintf(path, cap, "%s/%s", tmpdir, name);
    assert_true(w > 0 && (size_t)w < cap);
    gzFile g = gzopen(path, "wb");
    assert_non_null(g);
    const char *p = data;
    while (n > 0) {
        unsigned chunk = n > (1u << 20) ? (1u << 20) : (unsigned)n;
        assert_int_equal(gzwrite(g, p, chunk), (int)chunk);
        p += chunk;
        n -= chunk;
    }
    assert_int_equal(gzclose(g), Z_OK);
}

/* Writes text to tmpdir/name (its directory must exist); path gets the full name. */
static inline void write_text(const char *name, const char *text, char *path, size_t n)
{
    write_file(path, n, name, text, strlen(text));
}

/* 1 when dir holds the shared public samples (their ascend/ folder). */
static inline int tu_has_samples(const char *dir)
{
    char p[PATH_MAX];
    int w = snprintf(p, sizeof p, "%s/ascend", dir);
    return w > 0 && (size_t)w < sizeof p && access(p, R_OK) == 0;
}

/* Looks for shared/data/public in dir and its ancestors; fills out. Returns 1 when found. */
static inline int tu_find_up(const char *dir, char *out, size_t cap)
{
    char d[PATH_MAX];
    int w = snprintf(d, sizeof d, "%s", dir);
    if (w <= 0 || (size_t)w >= sizeof d)
        return 0;
    for (;;) {
        w = snprintf(out, cap, "%s/shared/data/public", d);
        if (w > 0 && (size_t)w < cap && tu_has_samples(out))
            return 1;
        char *slash = strrchr(d, '/');
        if (!slash || slash == d)
            return 0;
        *slash = 0;
    }
}

/*
 * The shared samples' data/public directory, or NULL: $TB_SHARED_DATA when
 * set (only there), else shared/data/public above the working directory or
 * above this executable (meson runs tests from the build tree, which sits in
 * the project, next to ../shared).
 */
static inline const char *shared_dir(void)
{
    static char found[PATH_MAX];
    static int state; /* 0 not looked, 1 found, -1 absent */
    if (state)
        return state > 0 ? found : NULL;
    state = -1;
    const char *env = getenv("TB_SHARED_DATA");
    if (env && *env) {
        int w = snprintf(found, sizeof found, "%s", env);
        if (w > 0 && (size_t)w < sizeof found && tu_has_samples(found))
            state = 1;
        return state > 0 ? found : NULL;
    }
    char dir[PATH_MAX];
    if (getcwd(dir, sizeof dir) && tu_find_up(dir, found, sizeof found)) {
        state = 1;
        return found;
    }
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n > 0) {
        dir[n] = 0;
        if (tu_find_up(dir, found, sizeof found))
            state = 1;
    }
    return state > 0 ? found : NULL;
}

/* Fills path with the shared sample ascend/rel, or skips the test when the samples are absent. */
static inline void shared_path(char *path, size_t cap, const char *rel)
{
    const char *dir = shared_dir();
    if (!dir) {
        print_message("shared samples not found: skipping\n");
        skip();
    }
    int w = snprintf(path, cap, "%s/ascend/%s", dir, rel);
    assert_true(w > 0 && (size_t)w < cap);
}

/* A fixed pseudo-random sequence (xorshift64): the same values every run,
 * so a failing case can be found again. */
static inline uint64_t tu_rnd(void)
{
    static uint64_t state = 88172645463325252ull;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

#ifdef TU_WITH_SQLITE
#include <sqlite3.h>

/* Runs a query returning one integer (-1 for NULL) on db, read-only. */
static inline int64_t q1(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline int64_t q1(const char *db, const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad SQL %s: %s", sql, sqlite3_errmsg(h));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}
/* Every row of a query as text: columns joined by '|', rows ended by '\n',
 * NULL as "". Returns a static buffer (valid until the next call). */
static inline const char *rows(const char *db, const char *sql)
{
    static char out[65536];
    size_t o = 0;
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad SQL %s: %s", sql, sqlite3_errmsg(h));
    out[0] = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(st); i++) {
            const unsigned char *t = sqlite3_column_text(st, i);
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? "|" : "", t ? (const char *)t : "");
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "\n");
        assert_true(o < sizeof out);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}
#endif

#ifdef TU_WITH_DB_FIXTURE
#include "capture.h"

/* The DB of the running test (tu_make_db) and the notes of its last query
 * (tu_run_sql), one per line. */
static char tu_dbpath[PATH_MAX + 16];
static char tu_notes[2048];

/* Makes tmpdir/<name>.db from the engine's schema, its views and rows_sql;
 * tu_dbpath names it. */
static inline void tu_make_db(const char *name, const char *rows_sql)
{
    int w = snprintf(tu_dbpath, sizeof tu_dbpath, "%s/%s.db", tmpdir, name);
    assert_true(w > 0 && (size_t)w < sizeof tu_dbpath);
    remove(tu_dbpath);
    assert_int_equal(tu_unified_db(tu_dbpath, rows_sql), 0);
}

/* The captured style of the expected strings (capture.h): no type tags, text quoted. */
static inline void tu_cap_init(capture *c)
{
    c->int_tag = 0;
    c->quote_text = 1;
    cap_reset(c);
}

static inline void tu_keep_note(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(tu_notes);
    snprintf(tu_notes + n, sizeof tu_notes - n, "%s\n", msg);
}

/* Runs sql over tu_dbpath (times in ns): its status, its rows as text in c,
 * its error in err, its notes in tu_notes. */
static inline tb_status tu_run_sql(const char *sql, capture *c, tb_error *err)
{
    tb_run_options o = {.db = cap_db(tu_dbpath), .db_name = tu_dbpath, .unit = TB_UNIT_NS, .note = tu_keep_note};
    tu_cap_init(c);
    tu_notes[0] = 0;
    tb_error_clear(err);
    uint64_t rows = 0;
    return tb_query_run(&o, sql, &c->vt, &rows, err);
}

/* Fails unless sql runs over tu_dbpath and gives exactly want. */
static inline void tu_assert_rows(const char *sql, const char *want)
{
    capture c;
    tb_error err;
    tb_status st = tu_run_sql(sql, &c, &err);
    if (st != TB_OK)
        print_error("query failed: %s\n", err.message);
    assert_int_equal(st, TB_OK);
    if (strcmp(c.text, want) != 0)
        print_error("got:\n%swant:\n%s", c.text, want);
    assert_string_equal(c.text, want);
}
#endif

#endif
