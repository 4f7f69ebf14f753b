/* SPDX-License-Identifier: MIT */
/*
 * dbw.c - bulk writer of the unified DB.
 *
 * Loading speed is bound by SQLite inserts, so the writer keeps every
 * statement prepared, keeps one transaction with the journal off, interns
 * strings in an in-memory hash table (one STRING_IDS row per distinct
 * string) and builds indexes at the end, but for those whose keys arrive in
 * increasing order (string ids, globalTaskId), kept up as the rows go in. Inserts run on a writer thread:
 * the importer serializes rows into 1 MiB chunks, at most DBW_MAX_QUEUED of
 * them in flight (bounded memory), and the writer binds and steps them while
 * the importer parses on. Only the writer touches the connection until
 * dbw_drain() has waited for it to go idle.
 *
 * A recorder (dbw_record_create) is the same sink without a DB: strings are
 * interned into ids of its own and the chunks are written, in order, to an
 * unnamed temporary file. dbw_replay() reads them back into a real writer,
 * re-interning the strings and shifting the ids drawn from the load's
 * counters, so the rows land exactly as if the importer had written them
 * there directly. The replay can start while the recording still goes on:
 * it follows the file, and once it has caught up it hands the writer over,
 * so that the recording thread maps each further chunk itself and passes it
 * straight on. That is how ranks load in parallel (ingest/load_pool.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "db/open.h"
#include "db/dbw.h"
#include "db/limits.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef struct istr {
    uint64_t hash;
    int64_t id;    /* 0 = empty slot */
    size_t off;
    size_t len;
} istr;

#define DBW_CHUNK (1u << 20)
#define DBW_MAX_QUEUED 8
#define ROW_STRING 255 /* chunk tag of a STRING_IDS row */
#define ROW_MARK 254   /* chunk tag of a recorder's mark (dbw_record_mark) */
#define DBW_BATCH 32   /* rows per multi-row INSERT */

#define DBW_SEEN_PAIRS 64 /* distinct (rankId, deviceId) of TASK kept; more: unknown */

/* What the inserted rows held, as far as the post-processing asks (writer
 * thread; read by the caller after a drain): a scan of a whole table whose
 * answer this already gives is skipped (load_books.c). */
typedef struct seen {
    int flow_unbound; /* a TB_FLOW row with toNs and a connectionId NULL or >= 2^32, or a staged flow end */
    int cann_no_conn; /* a CANN_API row with a connectionId that is no integer */
    int pairs_unknown; /* a TASK rankId or deviceId neither NULL nor an integer, or too many pairs */
    size_t npairs, last;
    int64_t pairs[DBW_SEEN_PAIRS][2];
} seen;

/* Where the values seen are in their tables' rows (rows.c column lists). */
typedef struct seen_cols {
    int flow_to, flow_conn, cann_conn, task_rank, task_dev;
} seen_cols;

typedef struct chunk {
    struct chunk *next;
    size_t len, cap;
    unsigned char *data;
} chunk;

struct dbw {
    sqlite3 *db;
    /* writer thread and its queue (guarded by mu) */
    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_space, cv_idle;
    chunk *head, *tail, *spare;
    int queued, busy, stop, sync_ready;
    /* secure_delete is off while the writer thread inserts (writer_main) and
     * back to the connection's own setting once a drain has found it idle */
    int secure_default, secure_off;
    atomic_int failed; /* also read by the writer between rows, without the lock */
    chunk *cur; /* being filled by the importer */
    sqlite3_stmt *ins[R_TABLE_COUNT];
    sqlite3_stmt *ins_string;
    sqlite3_stmt *batch[R_TABLE_COUNT + 1]; /* DBW_BATCH-row INSERTs; the last is STRING_IDS */
    const unsigned char *pend[R_TABLE_COUNT + 1][DBW_BATCH];
    struct held *held[R_TABLE_COUNT + 1]; /* per slot: the batch's parameters, then the one-row statement's */
    int npend[R_TABLE_COUNT + 1];
    row_sink sink;
    seen seen;
    seen_cols cols;
    tb_error err;
    char shown[4096];  /* the DB as errors name it: its final path (a temporary name's suffix dropped) */
    int in_txn;
    /* intern table */
    istr *tab;
    size_t tab_cap, tab_n;
    char *arena;
    size_t arena_len, arena_cap;
    int64_t next_string_id;
    /* a recorder: its file of chunks ([uint32 length][bytes], in order), -1 for a writer;
     * the fields after it are guarded by mu (cv_idle signals a change) */
    int rec_fd;
    int64_t rec_written;   /* bytes of whole chunks in the file */
    int rec_writing;       /* a chunk is being written */
    int rec_ended;         /* dbw_record_end: nothing more comes */
    struct replay *live;   /* set when the replay has caught up: chunks go through it, not the file */
};

/* The state of a replay into w: the recording's string ids mapped to w's,
 * what its counter ids are shifted by, the roles of each table's columns. */
typedef struct replay {
    dbw *w;
    dbw_shift shift;
    int64_t *map;          /* the recorder's string id -> w's (0: not seen) */
    size_t map_cap;
    int keep_overlap;      /* the rows now replayed keep their OVERLAP_ANALYSIS ids */
    unsigned char roles[R_TABLE_COUNT][ROW_MAX_COLS];
} replay;

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, p, 8);
        h = (h ^ (k * 0x87c37b91114253d5ULL)) * 0x4cf5ad432745937fULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    /* the last 0..7 bytes in at most two loads (they may overlap): copying
     * them one by one into a word stalled the load that read the word back */
    uint64_t k = 0;
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        k = a | (uint64_t)b << 32;
    } else if (n) {
        k = (uint64_t)(unsigned char)p[0] | (uint64_t)(unsigned char)p[n / 2] << 8 |
            (uint64_t)(unsigned char)p[n - 1] << 16;
    }
    h = (h ^ (k * 0x87c37b91114253d5ULL)) * 0x4cf5ad432745937fULL;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

/* A full disk or an I/O error is TB_ERR_IO (exit 4: a file could not be written); the rest TB_ERR_DB. */
static tb_status sql_status(const dbw *w)
{
    int rc = sqlite3_errcode(w->db) & 0xff;
    return rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN ? TB_ERR_IO : TB_ERR_DB;
}

static int db_fail(dbw *w, tb_error *err, const char *what)
{
    char why[4400];
    if (limits_explain(sqlite3_errcode(w->db), why, sizeof why) == LIMIT_DISK_FULL)
        tb_error_set(err, TB_ERR_IO, "%s", why); /* the full place is the temporary folder, not the DB */
    else
        tb_error_at(err, sql_status(w), w->shown[0] ? w->shown : NULL, 0, 0, -1, "%s: %s", what,
                    sqlite3_errmsg(w->db));
    return -1;
}

/* ---- the writer thread ------------------------------------------------------ */

static chunk *chunk_new(size_t cap)
{
    chunk *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->data = malloc(cap);
    if (!c->data) {
        free(c);
        return NULL;
    }
    c->next = NULL;
    c->len = 0;
    c->cap = cap;
    return c;
}

static void chunk_free(chunk *c)
{
    if (c) {
        free(c->data);
        free(c);
    }
}

/* What a statement's parameter holds since it was last bound: a value bound
 * again as it is needs no call (SQLite keeps bindings across a reset). A new
 * statement's parameters are NULL, as calloc's zeros say. */
typedef struct held {
    int64_t v;   /* the integer, or the double's bits */
    int type;    /* V_NULL, V_INT or V_REAL; HELD_OTHER: rebind whatever comes */
} held;
#define HELD_OTHER (-1)

/* Binds one serialized row at parameters base+1..base+n, skipping the values
 * the parameters already hold (h[0..n), updated); returns the byte after it.
 * Text and BLOBs are always bound: they point into the chunk being written. */
static const unsigned char *bind_row(sqlite3_stmt *st, int base, int n, const unsigned char *p, held *h)
{
    for (int i = 0; i < n; i++) {
        int type = *p++;
        if (type == V_INT || type == V_REAL) {
            int64_t x;
            memcpy(&x, p, 8);
            p += 8;
            if (h[i].type == type && h[i].v == x)
                continue;
            if (type == V_INT) {
                sqlite3_bind_int64(st, base + i + 1, x);
            } else {
                double d;
                memcpy(&d, &x, 8);
                sqlite3_bind_double(st, base + i + 1, d);
            }
            h[i] = (held){x, type};
        } else if (type == V_TEXT || type == V_BLOB) {
            uint32_t len;
            memcpy(&len, p, 4);
            p += 4;
            if (type == V_TEXT)
                sqlite3_bind_text(st, base + i + 1, (const char *)p, (int)len, SQLITE_STATIC);
            else
                sqlite3_bind_blob(st, base + i + 1, p, (int)len, SQLITE_STATIC);
            p += len;
            h[i].type = HELD_OTHER;
        } else if (h[i].type != V_NULL) {
            sqlite3_bind_null(st, base + i + 1);
            h[i].type = V_NULL;
        }
    }
    return p;
}

/* Skips one serialized row of n values. */
static const unsigned char *skip_row(int n, const unsigned char *p)
{
    for (int i = 0; i < n; i++) {
        int type = *p++;
        if (type == V_INT || type == V_REAL) {
            p += 8;
        } else if (type == V_TEXT || type == V_BLOB) {
            uint32_t len;
            memcpy(&len, p, 4);
            p += 4 + len;
        }
    }
    return p;
}

static int slot_cols(int slot)
{
    return slot == R_TABLE_COUNT ? 2 : row_tables[slot].ncols;
}

static const char *slot_name(int slot)
{
    return slot == R_TABLE_COUNT ? "STRING_IDS" : row_tables[slot].table;
}

static void step_or_fail(dbw *w, sqlite3_stmt *st, int slot)
{
    if (sqlite3_step(st) != SQLITE_DONE && !w->failed) {
        pthread_mutex_lock(&w->mu);
        tb_error_at(&w->err, sql_status(w), w->shown[0] ? w->shown : NULL, 0, 0, -1, "cannot insert into %s: %s",
                    slot_name(slot), sqlite3_errmsg(w->db));
        w->failed = 1;
        pthread_mutex_unlock(&w->mu);
    }
    sqlite3_reset(st);
}

/* Inserts the waiting rows of a table: whole batches with the multi-row
 * statement, the rest one by one. */
static void flush_pending(dbw *w, int slot, int all)
{
    int n = slot_cols(slot);
    if (!w->held[slot] && !(w->held[slot] = calloc((size_t)(DBW_BATCH + 1) * (size_t)n, sizeof(held)))) {
        pthread_mutex_lock(&w->mu);
        tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
        w->failed = 1;
        pthread_mutex_unlock(&w->mu);
        return;
    }
    held *h = w->held[slot];
    int k = 0;
    for (; k + DBW_BATCH <= w->npend[slot]; k += DBW_BATCH) {
        for (int r = 0; r < DBW_BATCH; r++)
            bind_row(w->batch[slot], r * n, n, w->pend[slot][k + r], h + r * n);
        step_or_fail(w, w->batch[slot], slot);
    }
    if (all) {
        sqlite3_stmt *one = slot == R_TABLE_COUNT ? w->ins_string : w->ins[slot];
        for (; k < w->npend[slot]; k++) {
            bind_row(one, 0, n, w->pend[slot][k], h + DBW_BATCH * n);
            step_or_fail(w, one, slot);
        }
    }
    w->npend[slot] -= k;
}

/* The type of value k of the serialized row at p, and its integer in *x. */
static int row_int(const unsigned char *p, int k, int64_t *x)
{
    p = skip_row(k, p);
    if (*p == V_INT)
        memcpy(x, p + 1, 8);
    return *p;
}

/* Adds a TASK row's (rankId, deviceId) to the pairs seen. */
static void note_task(seen *sn, const seen_cols *c, const unsigned char *p)
{
    int64_t r = 0, d = 0;
    int tr = row_int(p, c->task_rank, &r), td = row_int(p, c->task_dev, &d);
    if (tr == V_NULL || td == V_NULL || sn->pairs_unknown)
        return;
    if (tr != V_INT || td != V_INT) {
        sn->pairs_unknown = 1;
        return;
    }
    if (sn->npairs && sn->pairs[sn->last][0] == r && sn->pairs[sn->last][1] == d)
        return;
    for (size_t i = 0; i < sn->npairs; i++)
        if (sn->pairs[i][0] == r && sn->pairs[i][1] == d) {
            sn->last = i;
            return;
        }
    if (sn->npairs == DBW_SEEN_PAIRS) {
        sn->pairs_unknown = 1;
        return;
    }
    sn->last = sn->npairs++;
    sn->pairs[sn->last][0] = r;
    sn->pairs[sn->last][1] = d;
}

/* Notes what the post-processing asks of a row of slot (see seen). */
static void note_row(dbw *w, int slot, const unsigned char *p)
{
    int64_t x = 0;
    if (slot == R_TASK)
        note_task(&w->seen, &w->cols, p);
    else if (slot == R_FLOW_END)
        w->seen.flow_unbound = 1;
    else if (slot == R_FLOW && row_int(p, w->cols.flow_to, &x) != V_NULL &&
             (row_int(p, w->cols.flow_conn, &x) != V_INT || x >= INT64_C(4294967296)))
        w->seen.flow_unbound = 1;
    else if (slot == R_CANN_API && row_int(p, w->cols.cann_conn, &x) != V_INT)
        w->seen.cann_no_conn = 1;
}

/* The index of column name in the rows of table t (rows.c), or -1. */
static int col_of(int t, const char *name)
{
    const char *c = row_tables[t].columns;
    size_t n = strlen(name);
    for (int i = 0;; i++) {
        const char *e = strchr(c, ',');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == n && memcmp(c, name, n) == 0)
            return i;
        if (!e)
            return -1;
        c = e + 1;
    }
}

/* Binds and steps the rows of one chunk (writer thread). Rows of a table
 * are inserted in their order, DBW_BATCH rows per statement. */
static void write_chunk(dbw *w, chunk *c)
{
    const unsigned char *p = c->data, *e = c->data + c->len;
    while (p < e && !w->failed) {
        int table = *p++;
        int slot = table == ROW_STRING ? R_TABLE_COUNT : table;
        if (slot == R_TASK || slot == R_FLOW || slot == R_FLOW_END || slot == R_CANN_API)
            note_row(w, slot, p);
        w->pend[slot][w->npend[slot]++] = p;
        p = skip_row(slot_cols(slot), p);
        if (w->npend[slot] == DBW_BATCH)
            flush_pending(w, slot, 0);
    }
    /* the rows point into this chunk: insert what waits before it is reused */
    for (int t = 0; t <= R_TABLE_COUNT; t++)
        if (w->npend[t])
            flush_pending(w, t, 1);
}

/* Sets the connection's secure_delete (0 off, 1 on). With it on, as
 * Debian's SQLite has it by default, SQLite zeroes every page a B-tree
 * starts (already zero when it is new) and the room cells leave when they
 * move to a new page; the rows' inserts need neither, and the post-process
 * and the DB's deletes run with the setting as it was (drain). Only the
 * unused bytes of the pages the writer fills differ: copies of cells that
 * moved, instead of zeros. A failure fails the writer. */
static void secure_delete(dbw *w, int on)
{
    if (sqlite3_exec(w->db, on ? "PRAGMA secure_delete=1" : "PRAGMA secure_delete=0", NULL, NULL, NULL) !=
            SQLITE_OK &&
        !w->failed) {
        pthread_mutex_lock(&w->mu);
        tb_error_at(&w->err, sql_status(w), w->shown[0] ? w->shown : NULL, 0, 0, -1, "cannot set secure_delete: %s",
                    sqlite3_errmsg(w->db));
        w->failed = 1;
        pthread_mutex_unlock(&w->mu);
    }
    w->secure_off = !on;
}

static void *writer_main(void *arg)
{
    dbw *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv_work, &w->mu);
        if (!w->head && w->stop)
            break;
        chunk *c = w->head;
        w->head = c->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
        w->busy = 1;
        pthread_mutex_unlock(&w->mu);
        if (!w->secure_off && !w->failed)
            secure_delete(w, 0);
        write_chunk(w, c);
        pthread_mutex_lock(&w->mu);
        w->busy = 0;
        c->len = 0;
        if (!w->spare && c->cap == DBW_CHUNK)
            w->spare = c;
        else
            chunk_free(c);
        pthread_cond_signal(&w->cv_space);
        if (!w->head)
            pthread_cond_broadcast(&w->cv_idle);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static tb_status replay_chunk(replay *rs, unsigned char *buf, size_t n, tb_error *err);
static int rec_write(dbw *w, const chunk *c);

/* Hands the current chunk to the writer (waits while too many are queued). */
static int submit(dbw *w)
{
    chunk *c = w->cur;
    w->cur = NULL;
    if (!c)
        return 0;
    if (c->len == 0) {
        chunk_free(c);
        return 0;
    }
    if (w->rec_fd >= 0) {
        /* a recorder: the chunk goes to its file, or through the replay that
         * caught up with it; then it is kept for reuse */
        pthread_mutex_lock(&w->mu);
        replay *live = w->live;
        if (!live)
            w->rec_writing = 1;
        pthread_mutex_unlock(&w->mu);
        int rc = 0;
        if (live) {
            if (replay_chunk(live, c->data, c->len, &w->err) != TB_OK)
                rc = -1;
        } else {
            rc = rec_write(w, c);
            pthread_mutex_lock(&w->mu);
            if (rc == 0)
                w->rec_written += (int64_t)(sizeof(uint32_t) + c->len);
            w->rec_writing = 0;
            pthread_cond_broadcast(&w->cv_idle);
            pthread_mutex_unlock(&w->mu);
        }
        c->len = 0;
        if (!w->spare && c->cap == DBW_CHUNK)
            w->spare = c;
        else
            chunk_free(c);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    while (w->queued >= DBW_MAX_QUEUED && !w->failed)
        pthread_cond_wait(&w->cv_space, &w->mu);
    int failed = w->failed;
    if (!failed) {
        c->next = NULL; /* a reused chunk still points at its old neighbour */
        if (w->tail)
            w->tail->next = c;
        else
            w->head = c;
        w->tail = c;
        w->queued++;
        pthread_cond_signal(&w->cv_work);
    }
    pthread_mutex_unlock(&w->mu);
    if (failed) {
        chunk_free(c);
        return -1;
    }
    return 0;
}

/* Room for need bytes in the current chunk. */
static int reserve(dbw *w, size_t need)
{
    if (w->cur && w->cur->len + need <= w->cur->cap)
        return 0;
    if (submit(w))
        return -1;
    size_t cap = need > DBW_CHUNK ? need : DBW_CHUNK;
    if (cap == DBW_CHUNK) {
        pthread_mutex_lock(&w->mu);
        w->cur = w->spare;
        w->spare = NULL;
        pthread_mutex_unlock(&w->mu);
    }
    if (!w->cur && !(w->cur = chunk_new(cap))) {
        tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
        return -1;
    }
    return 0;
}

static int enqueue(dbw *w, int table, const tb_val *v, int n)
{
    size_t need = 1 + (size_t)n * 9;
    for (int i = 0; i < n; i++)
        if (v[i].type == V_TEXT || v[i].type == V_BLOB)
            need += 4 + v[i].n;
    if (reserve(w, need))
        return -1;
    unsigned char *p = w->cur->data + w->cur->len;
    *p++ = (unsigned char)table;
    for (int i = 0; i < n; i++) {
        *p++ = (unsigned char)v[i].type;
        if (v[i].type == V_INT) {
            memcpy(p, &v[i].i, 8);
            p += 8;
        } else if (v[i].type == V_REAL) {
            memcpy(p, &v[i].d, 8);
            p += 8;
        } else if (v[i].type == V_TEXT || v[i].type == V_BLOB) {
            uint32_t len = (uint32_t)v[i].n;
            memcpy(p, &len, 4);
            p += 4;
            if (v[i].n) /* an empty value may come without bytes (NULL): memcpy of NULL is undefined */
                memcpy(p, v[i].s, v[i].n);
            p += v[i].n;
        }
    }
    w->cur->len = (size_t)(p - w->cur->data);
    return 0;
}

/* Waits until the writer has stored every row handed so far. Returns 0 or -1. */
static int drain(dbw *w)
{
    if (!w->thread_started)
        return 0;
    int rc = submit(w);
    pthread_mutex_lock(&w->mu);
    while ((w->head || w->busy) && !w->failed)
        pthread_cond_wait(&w->cv_idle, &w->mu);
    pthread_mutex_unlock(&w->mu);
    /* the writer is idle: the connection is this thread's until the next row */
    if (w->secure_off && w->secure_default && !w->failed)
        secure_delete(w, 1);
    if (w->failed)
        rc = -1;
    return rc;
}

static void stop_writer(dbw *w)
{
    if (!w->thread_started)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv_work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    w->thread_started = 0;
    while (w->head) {
        chunk *c = w->head;
        w->head = c->next;
        chunk_free(c);
    }
    chunk_free(w->spare);
    chunk_free(w->cur);
    w->spare = w->cur = NULL;
}

static int64_t intern(void *ctx, const char *s, size_t n)
{
    dbw *w = ctx;
    uint64_t h = hash_bytes(s, n);
    size_t mask = w->tab_cap - 1, i = h & mask;
    while (w->tab[i].id) {
        if (w->tab[i].hash == h && w->tab[i].len == n && memcmp(w->arena + w->tab[i].off, s, n) == 0)
            return w->tab[i].id;
        i = (i + 1) & mask;
    }
    /* new string: store, insert, maybe grow */
    if (w->arena_len + n > w->arena_cap) {
        size_t ncap = w->arena_cap * 2;
        while (ncap < w->arena_len + n)
            ncap *= 2;
        char *na = realloc(w->arena, ncap);
        if (!na) {
            tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
            return -1;
        }
        w->arena = na;
        w->arena_cap = ncap;
    }
    memcpy(w->arena + w->arena_len, s, n);
    int64_t id = w->next_string_id++;
    w->tab[i] = (istr){.hash = h, .id = id, .off = w->arena_len, .len = n};
    w->arena_len += n;
    w->tab_n++;
    tb_val v[2] = {VINT(id), VTEXT(s, n)};
    if (enqueue(w, ROW_STRING, v, 2))
        return -1;
    if (w->tab_n * 2 > w->tab_cap) {
        size_t ncap = w->tab_cap * 2;
        istr *nt = calloc(ncap, sizeof *nt);
        if (!nt) {
            tb_error_set(&w->err, TB_ERR_NOMEM, "out of memory");
            return -1;
        }
        for (size_t j = 0; j < w->tab_cap; j++) {
            if (!w->tab[j].id)
                continue;
            size_t k = w->tab[j].hash & (ncap - 1);
            while (nt[k].id)
                k = (k + 1) & (ncap - 1);
            nt[k] = w->tab[j];
        }
        free(w->tab);
        w->tab = nt;
        w->tab_cap = ncap;
    }
    return id;
}

static int put_row(void *ctx, int table, const tb_val *v)
{
    dbw *w = ctx;
    return enqueue(w, table, v, row_tables[table].ncols);
}

tb_status dbw_exec(dbw *w, const char *sql, tb_error *err)
{
    if (drain(w)) {
        *err = w->err;
        return err->code;
    }
    char *msg = NULL;
    char why[4400];
    if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tb_status st = limits_explain(sqlite3_errcode(w->db), why, sizeof why) == LIMIT_DISK_FULL
                           ? tb_error_set(err, TB_ERR_IO, "%s", why)
                           : tb_error_at(err, sql_status(w), w->shown[0] ? w->shown : NULL, 0, 0, -1, "SQLite: %s",
                                         msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        return st;
    }
    return TB_OK;
}

/* A dbw with its intern table and locks, no DB yet. Returns new, or NULL with err set. */
static const tb_error *sink_error(void *ctx)
{
    return &((dbw *)ctx)->err;
}

static dbw *dbw_alloc(tb_error *err)
{
    dbw *w = calloc(1, sizeof *w);
    if (!w) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    tb_error_clear(&w->err);
    w->tab_cap = 1 << 10;
    w->tab = calloc(w->tab_cap, sizeof *w->tab);
    w->arena_cap = 1 << 20;
    w->arena = malloc(w->arena_cap);
    w->next_string_id = 1;
    w->rec_fd = -1;
    if (!w->tab || !w->arena) {
        tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        dbw_destroy(w);
        return NULL;
    }
    w->sink = (row_sink){.ctx = w, .intern = intern, .row = put_row, .error = sink_error};
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv_work, NULL);
    pthread_cond_init(&w->cv_space, NULL);
    pthread_cond_init(&w->cv_idle, NULL);
    w->sync_ready = 1;
    return w;
}

dbw *dbw_record_create(const char *dir, tb_error *err)
{
    dbw *w = dbw_alloc(err);
    if (!w)
        return NULL;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/.tracebook-rank-XXXXXX", dir);
    if ((w->rec_fd = mkstemp(path)) < 0) {
        tb_error_at(err, TB_ERR_IO, dir, 0, 0, -1, "cannot write a temporary file: %s", strerror(errno));
        dbw_destroy(w);
        return NULL;
    }
    /* no name from here on: nothing to remove when the run is interrupted */
    unlink(path);
    return w;
}

int dbw_record_mark(dbw *rec, int64_t flags)
{
    tb_val v = VINT(flags);
    return enqueue(rec, ROW_MARK, &v, 1);
}

int dbw_record_end(dbw *rec)
{
    int rc = submit(rec);
    pthread_mutex_lock(&rec->mu);
    rec->rec_ended = 1;
    pthread_cond_broadcast(&rec->cv_idle);
    pthread_mutex_unlock(&rec->mu);
    return rc;
}

/* Appends one chunk to the recorder's file. Returns 0, or -1 with the error kept. */
static int rec_write(dbw *w, const chunk *c)
{
    uint32_t n = (uint32_t)c->len;
    const unsigned char *parts[2] = {(const unsigned char *)&n, c->data};
    size_t lens[2] = {sizeof n, c->len};
    for (int i = 0; i < 2; i++) {
        size_t done = 0;
        while (done < lens[i]) {
            ssize_t k = write(w->rec_fd, parts[i] + done, lens[i] - done);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                tb_error_set(&w->err, TB_ERR_IO, "cannot write a temporary file: %s",
                             k < 0 ? strerror(errno) : "no space");
                return -1;
            }
            done += (size_t)k;
        }
    }
    return 0;
}

/* Reads n bytes at off of the recorder's file. Returns 0 or -1. */
static int rec_read(int fd, void *buf, size_t n, int64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(fd, (char *)buf + done, n - done, (off_t)(off + (int64_t)done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

/* Fails a replay: the writer's error when it has one, else msg. */
static tb_status replay_fail(dbw *w, tb_error *err, tb_status code, const char *msg)
{
    if (w->err.code != TB_OK)
        *err = w->err;
    else
        tb_error_set(err, code, "%s", msg);
    return err->code;
}

/* Replays one recorded chunk into rs->w: string entries interned, string-id
 * and counter-id columns rewritten in place, each row then copied as it is. */
static tb_status replay_chunk(replay *rs, unsigned char *buf, size_t n, tb_error *err)
{
    dbw *w = rs->w;
    unsigned char *p = buf, *e = buf + n;
    while (p < e) {
        int tag = *p;
        if (tag == ROW_STRING) {
            /* [tag][V_INT][id: 8][V_TEXT][length: 4][bytes]: the recorder's id -> ours */
            int64_t id;
            uint32_t len;
            memcpy(&id, p + 2, 8);
            memcpy(&len, p + 11, 4);
            if (id <= 0)
                return tb_error_set(err, TB_ERR_INTERNAL, "recorded string id %lld out of range", (long long)id);
            if ((size_t)id >= rs->map_cap) {
                size_t cap = rs->map_cap ? rs->map_cap : 1024;
                while (cap <= (size_t)id)
                    cap *= 2;
                int64_t *nm = realloc(rs->map, cap * sizeof *nm);
                if (!nm)
                    return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                memset(nm + rs->map_cap, 0, (cap - rs->map_cap) * sizeof *nm);
                rs->map = nm;
                rs->map_cap = cap;
            }
            int64_t ours = intern(w, (const char *)p + 15, len);
            if (ours < 0)
                return replay_fail(w, err, TB_ERR_DB, "cannot intern a string");
            rs->map[id] = ours;
            p += 15 + len;
            continue;
        }
        if (tag == ROW_MARK) {
            int64_t flags;
            memcpy(&flags, p + 2, 8);
            rs->keep_overlap = (flags & DBW_MARK_KEEP_OVERLAP_IDS) != 0;
            p += 10;
            continue;
        }
        /* a row: ids rewritten in place, then the bytes copied as they are */
        unsigned char *q = p + 1;
        const unsigned char *role = rs->roles[tag];
        for (int i = 0; i < row_tables[tag].ncols; i++) {
            int type = *q++;
            if (type == V_INT) {
                if (role[i] != COL_PLAIN) {
                    int64_t x;
                    memcpy(&x, q, 8);
                    switch (role[i]) {
                    case COL_STRING:
                        if (x <= 0 || (size_t)x >= rs->map_cap || !rs->map[x])
                            return tb_error_set(err, TB_ERR_INTERNAL, "%s: string id %lld out of range",
                                                row_tables[tag].table, (long long)x);
                        x = rs->map[x];
                        break;
                    case COL_TASK_ID: x += rs->shift.task; break;
                    case COL_OP_ID: x += rs->shift.op; break;
                    case COL_OVERLAP_ID: x += rs->keep_overlap ? 0 : rs->shift.overlap; break;
                    case COL_FLOW_SEQ: x += rs->shift.flow_seq; break;
                    default: break;
                    }
                    memcpy(q, &x, 8);
                }
                q += 8;
            } else if (type == V_REAL) {
                q += 8;
            } else if (type == V_TEXT || type == V_BLOB) {
                uint32_t len;
                memcpy(&len, q, 4);
                q += 4 + len;
            }
        }
        size_t rn = (size_t)(q - p);
        if (reserve(w, rn))
            return replay_fail(w, err, TB_ERR_DB, "cannot queue a row");
        memcpy(w->cur->data + w->cur->len, p, rn);
        w->cur->len += rn;
        p = q;
    }
    return TB_OK;
}

tb_status dbw_replay(dbw *w, dbw *rec, const dbw_shift *shift, int *handed, tb_error *err)
{
    *handed = 0;
    replay *rs = calloc(1, sizeof *rs);
    if (!rs)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    rs->w = w;
    rs->shift = *shift;
    for (int t = 0; t < R_TABLE_COUNT; t++)
        row_roles(t, rs->roles[t]);
    unsigned char *buf = NULL;
    size_t cap = 0;
    int64_t off = 0;
    tb_status st = TB_OK;
    pthread_mutex_lock(&rec->mu);
    for (;;) {
        while (off == rec->rec_written && rec->rec_writing && !rec->rec_ended)
            pthread_cond_wait(&rec->cv_idle, &rec->mu);
        if (off == rec->rec_written) {
            if (!rec->rec_ended) {
                /* caught up while the recording goes on: it continues through rs, into w */
                rec->live = rs;
                rs = NULL;
                *handed = 1;
            }
            break;
        }
        int64_t end = rec->rec_written;
        pthread_mutex_unlock(&rec->mu);
        while (off < end && st == TB_OK) {
            uint32_t n;
            if (rec_read(rec->rec_fd, &n, sizeof n, off) != 0) {
                st = tb_error_set(err, TB_ERR_IO, "cannot read back a temporary file: %s", strerror(errno));
                break;
            }
            if (n > cap) {
                unsigned char *nb = realloc(buf, n);
                if (!nb) {
                    st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                    break;
                }
                buf = nb;
                cap = n;
            }
            if (rec_read(rec->rec_fd, buf, n, off + (int64_t)sizeof n) != 0) {
                st = tb_error_set(err, TB_ERR_IO, "cannot read back a temporary file: %s", strerror(errno));
                break;
            }
            off += (int64_t)sizeof n + n;
            st = replay_chunk(rs, buf, n, err);
        }
        pthread_mutex_lock(&rec->mu);
        if (st != TB_OK)
            break;
    }
    pthread_mutex_unlock(&rec->mu);
    free(buf);
    if (rs) {
        free(rs->map);
        free(rs);
    }
    return st;
}

/* sqlite3_exec's callback of PRAGMA secure_delete: *ctx = its value. */
static int secure_on(void *ctx, int n, char **vals, char **names)
{
    (void)names;
    *(int *)ctx = n == 1 && vals[0] && vals[0][0] == '1';
    return 0;
}

dbw *dbw_create(const char *path, tb_error *err)
{
    dbw *w = dbw_alloc(err);
    if (!w)
        return NULL;
    /* errors name the DB being made, not its temporary name */
    snprintf(w->shown, sizeof w->shown, "%s", path);
    char *tmp = strstr(w->shown, ".tmp-");
    if (tmp)
        *tmp = 0;
    if (db_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, &w->db) !=
        SQLITE_OK) {
        tb_error_at(err, TB_ERR_IO, path, 0, 0, -1, "cannot create the DB: %s",
                    w->db ? sqlite3_errmsg(w->db) : "out of memory");
        goto fail;
    }
    /* an 8 MiB page cache: rows are appended, so the pages being filled and the
     * paths to them are what the inserts touch; a larger cache was most of a
     * load's memory and saved no time (architecture.md#memory) */
    if (dbw_exec(w, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-8192; PRAGMA temp_store=FILE;",
                 err) ||
        dbw_exec(w, "BEGIN", err))
        goto fail;
    w->in_txn = 1;
    if (sqlite3_exec(w->db, "PRAGMA secure_delete", secure_on, &w->secure_default, NULL) != SQLITE_OK)
        w->secure_default = 1; /* not known: put it back on after the inserts */
    /* the indexes whose keys arrive in order are kept up from the first row,
     * on the writer thread (schemas/indexes_live.sql) */
    if (dbw_exec(w, tb_sql_unified, err) || dbw_exec(w, tb_sql_indexes_live, err) ||
        dbw_exec(w, "CREATE TABLE TB_FLOW_END (rankId INTEGER, ph TEXT, cat INTEGER, name INTEGER, flowId TEXT,"
                    " pid, tid, ts INTEGER, seq INTEGER, written INTEGER)",
                 err))
        goto fail;
    for (int t = 0; t <= R_TABLE_COUNT; t++) {
        const char *table = t == R_TABLE_COUNT ? "STRING_IDS" : row_tables[t].table;
        const char *cols = t == R_TABLE_COUNT ? "id,value" : row_tables[t].columns;
        int ncols = slot_cols(t);
        for (int rows = 1; rows <= DBW_BATCH; rows += DBW_BATCH - 1) {
            size_t cap = 64 + strlen(table) + strlen(cols) + (size_t)rows * ((size_t)ncols * 2 + 3);
            char *sql = malloc(cap);
            if (!sql) {
                tb_error_set(err, TB_ERR_NOMEM, "out of memory");
                goto fail;
            }
            size_t n = (size_t)snprintf(sql, cap, "INSERT INTO %s(%s) VALUES", table, cols);
            for (int r = 0; r < rows; r++) {
                n += (size_t)snprintf(sql + n, cap - n, r ? ",(" : "(");
                for (int i = 0; i < ncols; i++)
                    n += (size_t)snprintf(sql + n, cap - n, i ? ",?" : "?");
                n += (size_t)snprintf(sql + n, cap - n, ")");
            }
            sqlite3_stmt **dst = rows == 1 ? (t == R_TABLE_COUNT ? &w->ins_string : &w->ins[t]) : &w->batch[t];
            int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, dst, NULL);
            free(sql);
            if (rc != SQLITE_OK) {
                db_fail(w, err, "cannot prepare an insert");
                goto fail;
            }
        }
    }
    w->cols = (seen_cols){col_of(R_FLOW, "toNs"), col_of(R_FLOW, "connectionId"), col_of(R_CANN_API, "connectionId"),
                          col_of(R_TASK, "rankId"), col_of(R_TASK, "deviceId")};
    if (w->cols.flow_to < 0 || w->cols.flow_conn < 0 || w->cols.cann_conn < 0 || w->cols.task_rank < 0 ||
        w->cols.task_dev < 0) {
        tb_error_set(err, TB_ERR_INTERNAL, "a column the writer notes is missing from rows.c");
        goto fail;
    }
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        tb_error_set(err, TB_ERR_INTERNAL, "cannot start the writer thread");
        goto fail;
    }
    w->thread_started = 1;
    return w;
fail:
    dbw_destroy(w);
    return NULL;
}

const row_sink *dbw_sink(dbw *w)
{
    return &w->sink;
}

sqlite3 *dbw_db(dbw *w)
{
    drain(w);
    return w->db;
}

const tb_error *dbw_error(const dbw *w)
{
    return &w->err;
}

/* Pairs flow ends: the n-th start of (rank, cat, id) with its n-th finish;
 * unpaired ends are kept as half flows. Indexed temp tables keep it O(n log n). */
static const char pair_flows_sql[] =
    "CREATE TEMP TABLE fs AS SELECT rankId, cat, name, flowId, pid, tid, ts, written,"
    " row_number() OVER (PARTITION BY rankId, cat, flowId ORDER BY seq) AS k"
    " FROM TB_FLOW_END WHERE ph = 's';"
    "CREATE TEMP TABLE ff AS SELECT rankId, cat, name, flowId, pid, tid, ts, written,"
    " row_number() OVER (PARTITION BY rankId, cat, flowId ORDER BY seq) AS k"
    " FROM TB_FLOW_END WHERE ph <> 's';"
    "CREATE INDEX temp.fs_key ON fs(rankId, cat, flowId, k);"
    "CREATE INDEX temp.ff_key ON ff(rankId, cat, flowId, k);"
    "CREATE TEMP TABLE conn_cats AS SELECT id FROM STRING_IDS WHERE value IN ('HostToDevice', 'ac2g');"
    "INSERT INTO TB_FLOW(rankId, cat, name, flowId, fromPid, fromTid, fromNs, toPid, toTid, toNs, connectionId,"
    " written)"
    " SELECT s.rankId, s.cat, s.name, s.flowId, s.pid, s.tid, s.ts, f.pid, f.tid, f.ts,"
    "  CASE WHEN s.cat IN (SELECT id FROM conn_cats) AND s.flowId GLOB '[0-9]*'"
    "   THEN CAST(s.flowId AS INTEGER) END, s.written | coalesce(f.written, 0)"
    " FROM fs s LEFT JOIN ff f ON f.rankId = s.rankId AND f.cat IS s.cat AND f.flowId IS s.flowId AND f.k = s.k;"
    "INSERT INTO TB_FLOW(rankId, cat, name, flowId, fromPid, fromTid, fromNs, toPid, toTid, toNs, connectionId,"
    " written)"
    " SELECT f.rankId, f.cat, f.name, f.flowId, NULL, NULL, NULL, f.pid, f.tid, f.ts,"
    "  CASE WHEN f.cat IN (SELECT id FROM conn_cats) AND f.flowId GLOB '[0-9]*'"
    "   THEN CAST(f.flowId AS INTEGER) END, f.written"
    " FROM ff f WHERE NOT EXISTS (SELECT 1 FROM fs s WHERE s.rankId = f.rankId AND s.cat IS f.cat"
    "  AND s.flowId IS f.flowId AND s.k = f.k);"
    "DROP TABLE fs; DROP TABLE ff; DROP TABLE conn_cats; DROP TABLE TB_FLOW_END;";

int dbw_seen_flow_unbound(dbw *w)
{
    return drain(w) || w->seen.flow_unbound;
}

int dbw_seen_cann_no_conn(dbw *w)
{
    return drain(w) || w->seen.cann_no_conn;
}

int dbw_seen_task_devices(dbw *w, const int64_t (**pairs)[2], size_t *n)
{
    if (drain(w) || w->seen.pairs_unknown)
        return -1;
    *pairs = (const int64_t (*)[2])w->seen.pairs;
    *n = w->seen.npairs;
    return 0;
}

int64_t dbw_strings_end(const dbw *w)
{
    return w->next_string_id;
}

double dbw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

tb_status dbw_pair_staged_flows(dbw *w, tb_error *err)
{
    return dbw_exec(w, pair_flows_sql, err);
}

tb_status dbw_finish(dbw *w, double *seconds_index, tb_error *err)
{
    double t0 = dbw_now();
    int drained = drain(w);
    stop_writer(w);
    if (drained) {
        *err = w->err;
        return err->code;
    }
    for (int t = 0; t < R_TABLE_COUNT; t++) {
        sqlite3_finalize(w->ins[t]);
        w->ins[t] = NULL;
    }
    sqlite3_finalize(w->ins_string);
    w->ins_string = NULL;
    for (int t = 0; t <= R_TABLE_COUNT; t++) {
        sqlite3_finalize(w->batch[t]);
        w->batch[t] = NULL;
    }
    if (dbw_exec(w, tb_sql_indexes, err) || dbw_exec(w, tb_sql_views, err) || dbw_exec(w, "COMMIT", err))
        return err->code;
    *seconds_index = dbw_now() - t0;
    w->in_txn = 0;
    if (sqlite3_close(w->db) != SQLITE_OK) {
        return tb_error_at(err, sql_status(w), w->shown[0] ? w->shown : NULL, 0, 0, -1, "cannot close the DB: %s",
                           sqlite3_errmsg(w->db));
    }
    w->db = NULL;
    return TB_OK;
}

void dbw_destroy(dbw *w)
{
    if (!w)
        return;
    if (w->thread_started) {
        pthread_mutex_lock(&w->mu);
        w->failed = 1; /* discard what is queued */
        pthread_mutex_unlock(&w->mu);
        stop_writer(w);
    }
    if (w->sync_ready) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv_work);
        pthread_cond_destroy(&w->cv_space);
        pthread_cond_destroy(&w->cv_idle);
    }
    for (int t = 0; t < R_TABLE_COUNT; t++)
        sqlite3_finalize(w->ins[t]);
    sqlite3_finalize(w->ins_string);
    for (int t = 0; t <= R_TABLE_COUNT; t++)
        sqlite3_finalize(w->batch[t]);
    if (w->db) {
        if (w->in_txn)
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    chunk_free(w->cur);
    chunk_free(w->spare);
    if (w->rec_fd >= 0)
        close(w->rec_fd);
    if (w->live) {
        free(w->live->map);
        free(w->live);
    }
    for (int t = 0; t <= R_TABLE_COUNT; t++)
        free(w->held[t]);
    free(w->tab);
    free(w->arena);
    free(w);
}
