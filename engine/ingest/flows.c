/* SPDX-License-Identifier: MIT */
/*
 * flows.c - streaming flow pairing (see flows.h).
 *
 * An open-addressing table holds the ends waiting for a partner. Probing
 * visits same-key entries in insertion order, so the oldest waiting end
 * pairs first. Deleted slots become tombstones; the table is rebuilt when
 * they pile up. When more than FP_MAX_PENDING ends wait (traces whose flows
 * mostly have one end), all are staged and the table starts empty.
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/flows.h"
#include "util/hash.h"

#include <stdlib.h>
#include <string.h>

#define FP_MAX_PENDING (1u << 20)

enum { SLOT_EMPTY = 0, SLOT_USED, SLOT_DEAD };

typedef struct slot {
    uint64_t hash;
    int state;
    char ph;
    int conn, has_ts, written;
    int64_t cat, name, ts, seq;
    char *id;       /* owned: id text, then pid/tid texts when they are strings */
    size_t idn;
    tb_val pid, tid;
} slot;

struct flow_pairer {
    const row_sink *sink;
    int rank;
    int64_t *seq;
    slot *tab;
    size_t cap, used, dead;
};

static uint64_t key_hash(int64_t cat, const char *id, size_t n)
{
    uint64_t h = hash_fnv1a(1469598103934665603ULL ^ (uint64_t)cat * 0x9E3779B97F4A7C15ULL, id, n);
    h ^= h >> 31;
    return h ? h : 1;
}

flow_pairer *fp_create(const row_sink *sink, int rank, int64_t *seq)
{
    flow_pairer *fp = calloc(1, sizeof *fp);
    if (!fp)
        return NULL;
    fp->sink = sink;
    fp->rank = rank;
    fp->seq = seq;
    fp->cap = 1024;
    fp->tab = calloc(fp->cap, sizeof *fp->tab);
    if (!fp->tab) {
        free(fp);
        return NULL;
    }
    return fp;
}

static void slot_free(slot *s)
{
    free(s->id);
    s->id = NULL;
}

/* Copies a tb_val's text into owned memory appended after the id. */
static int own_val(tb_val *v, char **buf)
{
    if (v->type != V_TEXT)
        return 0;
    char *p = malloc(v->n + 1);
    if (!p)
        return -1;
    memcpy(p, v->s, v->n);
    p[v->n] = 0;
    v->s = p;
    *buf = p;
    return 0;
}

static tb_val conn_val(int conn, const char *id, size_t n)
{
    if (!conn || n == 0 || n > 19)
        return VNULL;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (id[i] < '0' || id[i] > '9')
            return VNULL;
        v = v * 10 + (id[i] - '0');
    }
    return VINT(v);
}

static int emit_pair(flow_pairer *fp, const slot *s, const flow_end *f)
{
    tb_val v[12] = {VINT(fp->rank), s->cat < 0 ? VNULL : VINT(s->cat), s->name < 0 ? VNULL : VINT(s->name),
                    VTEXT(s->id, s->idn), s->pid, s->tid, s->has_ts ? VINT(s->ts) : VNULL,
                    f->pid, f->tid, f->has_ts ? VINT(f->ts) : VNULL, conn_val(s->conn, s->id, s->idn),
                    VINT(s->written | f->written)};
    return fp->sink->row(fp->sink->ctx, R_FLOW, v);
}

/* A pair where the start was the one waiting; or the finish was waiting. */
static int emit(flow_pairer *fp, const slot *waiting, const flow_end *e)
{
    if (waiting->ph == 's')
        return emit_pair(fp, waiting, e);
    /* the finish waited: build a start view of e and a finish view of the slot */
    slot s = {.cat = e->cat, .name = e->name, .id = (char *)e->id, .idn = e->idn, .pid = e->pid, .tid = e->tid,
              .has_ts = e->has_ts, .ts = e->ts, .conn = e->conn, .written = e->written};
    flow_end f = {.pid = waiting->pid, .tid = waiting->tid, .has_ts = waiting->has_ts, .ts = waiting->ts,
                  .written = waiting->written};
    return emit_pair(fp, &s, &f);
}

static int stage(flow_pairer *fp, const slot *s)
{
    char ph[2] = {s->ph, 0};
    tb_val v[10] = {VINT(fp->rank), VTEXT(ph, 1), s->cat < 0 ? VNULL : VINT(s->cat),
                    s->name < 0 ? VNULL : VINT(s->name), VTEXT(s->id, s->idn), s->pid, s->tid,
                    s->has_ts ? VINT(s->ts) : VNULL, VINT(s->seq), VINT(s->written)};
    return fp->sink->row(fp->sink->ctx, R_FLOW_END, v);
}

static void free_slot_vals(slot *s)
{
    if (s->pid.type == V_TEXT)
        free((char *)s->pid.s);
    if (s->tid.type == V_TEXT)
        free((char *)s->tid.s);
    slot_free(s);
}

static int by_seq(const void *a, const void *b)
{
    int64_t x = (*(slot *const *)a)->seq, y = (*(slot *const *)b)->seq;
    return (x > y) - (x < y);
}

static int rebuild(flow_pairer *fp, size_t ncap)
{
    slot *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return -2;
    /* reinserting in seq order keeps the oldest-first probing order */
    size_t n = 0;
    slot **order = malloc((fp->used ? fp->used : 1) * sizeof *order);
    if (!order) {
        free(nt);
        return -2;
    }
    for (size_t i = 0; i < fp->cap; i++)
        if (fp->tab[i].state == SLOT_USED)
            order[n++] = &fp->tab[i];
    qsort(order, n, sizeof *order, by_seq);
    for (size_t i = 0; i < n; i++) {
        size_t k = order[i]->hash & (ncap - 1);
        while (nt[k].state != SLOT_EMPTY)
            k = (k + 1) & (ncap - 1);
        nt[k] = *order[i];
    }
    free(order);
    free(fp->tab);
    fp->tab = nt;
    fp->cap = ncap;
    fp->dead = 0;
    return 0;
}

int fp_add(flow_pairer *fp, const flow_end *e)
{
    uint64_t h = key_hash(e->cat, e->id, e->idn);
    size_t mask = fp->cap - 1, i = h & mask;
    size_t free_at = (size_t)-1;
    for (; fp->tab[i].state != SLOT_EMPTY; i = (i + 1) & mask) {
        slot *s = &fp->tab[i];
        if (s->state == SLOT_DEAD) {
            if (free_at == (size_t)-1)
                free_at = i;
            continue;
        }
        if (s->hash == h && s->ph != e->ph && s->cat == e->cat && s->idn == e->idn &&
            memcmp(s->id, e->id, e->idn) == 0) {
            int rc = emit(fp, s, e);
            free_slot_vals(s);
            s->state = SLOT_DEAD;
            fp->used--;
            fp->dead++;
            return rc;
        }
    }
    (void)free_at; /* new ends go to the end of the probe run: keeps insertion order */
    slot *s = &fp->tab[i];
    memset(s, 0, sizeof *s);
    s->hash = h;
    s->state = SLOT_USED;
    s->ph = e->ph;
    s->conn = e->conn;
    s->written = e->written;
    s->cat = e->cat;
    s->name = e->name;
    s->has_ts = e->has_ts;
    s->ts = e->ts;
    s->seq = (*fp->seq)++;
    s->idn = e->idn;
    s->id = malloc(e->idn + 1);
    s->pid = e->pid;
    s->tid = e->tid;
    char *pb = NULL, *tb = NULL;
    if (!s->id || own_val(&s->pid, &pb) || own_val(&s->tid, &tb)) {
        free(pb);
        slot_free(s);
        s->state = SLOT_EMPTY;
        return -2;
    }
    memcpy(s->id, e->id, e->idn);
    s->id[e->idn] = 0;
    fp->used++;
    if (fp->used >= FP_MAX_PENDING)
        return fp_flush(fp);
    if ((fp->used + fp->dead) * 2 > fp->cap)
        return rebuild(fp, fp->used * 4 > fp->cap ? fp->cap * 2 : fp->cap);
    return 0;
}

int fp_flush(flow_pairer *fp)
{
    int rc = 0;
    /* stage in arrival order, so the SQL pairing sees the same order */
    slot **order = malloc((fp->used ? fp->used : 1) * sizeof *order);
    if (!order)
        return -2;
    size_t n = 0;
    for (size_t i = 0; i < fp->cap; i++)
        if (fp->tab[i].state == SLOT_USED)
            order[n++] = &fp->tab[i];
    qsort(order, n, sizeof *order, by_seq);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = stage(fp, order[i]);
    free(order);
    for (size_t i = 0; i < fp->cap; i++) {
        if (fp->tab[i].state == SLOT_USED)
            free_slot_vals(&fp->tab[i]);
        fp->tab[i].state = SLOT_EMPTY;
    }
    fp->used = 0;
    fp->dead = 0;
    return rc;
}

void fp_destroy(flow_pairer *fp)
{
    if (!fp)
        return;
    for (size_t i = 0; i < fp->cap; i++)
        if (fp->tab[i].state == SLOT_USED)
            free_slot_vals(&fp->tab[i]);
    free(fp->tab);
    free(fp);
}
