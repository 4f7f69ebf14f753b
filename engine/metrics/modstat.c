/* SPDX-License-Identifier: MIT */
/*
 * modstat.c - the module statistics of each rank, as msprof-analyze's
 * module_statistic recipe makes them (docs/metrics.md, "Module
 * statistics").
 *
 * module_stats: one row per module, framework op and kernel list of a rank.
 * The build, per rank:
 *   - modules: the mstx ranges (MSTX_EVENTS eventType 2) of the domain
 *     "Module", by start;
 *   - ops: the PyTorch calls linked to device work through CONNECTION_IDS
 *     (PYTORCH_API.connectionId is a CONNECTION_IDS id whose connectionId is
 *     the task's; a timeline's from its async_npu flows, torchlink.c): the
 *     kernels of COMPUTE_TASK_INFO (times of their TASK rows), then
 *     COMMUNICATION_OP, then COMMUNICATION_SCHEDULE_TASK_INFO,
 *     each by op start then kernel start; one op per name, start and end,
 *     its kernels in that order;
 *   - backward modules: a connection id shared by two PyTorch calls links
 *     the forward call (lower CONNECTION_IDS id; names starting Enqueue or
 *     Dequeue left out) to its backward call (higher id). The forward calls
 *     are placed in the module tree; by backward start, each run of backward
 *     calls whose forward calls sit in the same module instance makes a
 *     backward module of that name spanning them, and one named by the
 *     module's parent path spanning them 1 ns wider on each side (none at
 *     the top);
 *   - the tree: modules and ops by start, longer first, each in the last
 *     open module that holds it (modules 20 deep at most); every op under a
 *     module gives a row: the parent path ("a/b"), the module ("[Backward]"
 *     before it when it or a parent is backward), the op, its kernels'
 *     names (", ") and their summed time;
 *   - aggregation (SQL below): the op's place in its module instance and the
 *     instance's op sequence identify it; instances with the same sequence
 *     add up (total, mean, count); where one module name of a parent has
 *     neighbouring rows of different sequences they become module_0,
 *     module_1, ... in the order the sequences first appear.
 * Ties the recipe leaves to pandas' sorts are broken by the order above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/torchlink.h"

#define WHAT "module_stats"
#define MAX_DEPTH 20
#define ROOT ((size_t)-1)

static tb_status db_fail(const metric_ctx *m, tb_error *err)
{
    return tb_error_set(err, TB_ERR_DB, WHAT ": %s", sqlite3_errmsg(m->db));
}

static tb_status nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, WHAT ": out of memory");
}

/* A module, or an op (a forward call in the backward tree). */
typedef struct node {
    int64_t start, end;
    char *name;
    int module, bwd;
    char *klist;          /* an op's kernel names */
    int64_t dev;          /* an op's kernels' time */
    int64_t bwd_start, bwd_end; /* a forward call's backward call */
    size_t parent, first, last, next; /* the tree (ROOT: the top) */
} node;

typedef struct nodes {
    node *v;
    size_t n, cap;
} nodes;

static void nodes_clear(nodes *ns)
{
    for (size_t i = 0; i < ns->n; i++) {
        free(ns->v[i].name);
        free(ns->v[i].klist);
    }
    ns->n = 0;
}

static node *nodes_add(nodes *ns, int64_t start, int64_t end, const char *name, int module)
{
    if (ns->n == ns->cap) {
        size_t c = ns->cap ? ns->cap * 2 : 64;
        node *p = realloc(ns->v, c * sizeof *p);
        if (!p)
            return NULL;
        ns->v = p;
        ns->cap = c;
    }
    node *d = &ns->v[ns->n];
    memset(d, 0, sizeof *d);
    if (!(d->name = strdup(name ? name : "")))
        return NULL;
    ns->n++;
    d->start = start;
    d->end = end;
    d->module = module;
    return d;
}

/* A Module range of read_modules' SQL. */
static int module_row(sqlite3_stmt *q, void *ns)
{
    return !nodes_add(ns, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                      (const char *)sqlite3_column_text(q, 2), 1);
}

/* The rank's Module ranges, by start. */
static tb_status read_modules(const metric_ctx *m, nodes *ns, int64_t rank, tb_error *err)
{
    static const char sql[] =
        "SELECT IFNULL(e.startNs, 0), IFNULL(e.endNs, 0), s.value FROM MSTX_EVENTS e "
        "LEFT JOIN STRING_IDS s ON s.id = e.message LEFT JOIN STRING_IDS d ON d.id = e.domainId "
        "WHERE e.rankId = ?1 AND e.eventType = 2 AND d.value = 'Module' ORDER BY e.startNs";
    return metrics_rows(m->db, WHAT, sql, rank, module_row, ns, err);
}

/* The op -> kernel links of the rank into tb_m_modk, in the recipe's order
 * (seq): compute kernels, communication ops, communication schedule tasks. */
static tb_status fill_kernels(const metric_ctx *m, const torch_links *tl, int64_t rank, tb_error *err)
{
    static const char *const src[] = {
        "SELECT c.name AS name, t.startNs AS startNs, t.endNs AS endNs, t.connectionId AS conn "
        "FROM COMPUTE_TASK_INFO c "
        "LEFT JOIN TASK t ON t.rankId = c.rankId AND t.globalTaskId = c.globalTaskId WHERE c.rankId = ?1",
        "SELECT opType AS name, startNs, endNs, connectionId AS conn FROM COMMUNICATION_OP WHERE rankId = ?1",
        "SELECT c.name AS name, t.startNs AS startNs, t.endNs AS endNs, t.connectionId AS conn "
        "FROM COMMUNICATION_SCHEDULE_TASK_INFO c "
        "LEFT JOIN TASK t ON t.rankId = c.rankId AND t.globalTaskId = c.globalTaskId WHERE c.rankId = ?1",
    };
    const char *ids, *calls;
    torch_links_names(tl, rank, &ids, &calls);
    tb_status rc = metrics_exec(m, WHAT, "DELETE FROM temp.tb_m_modk;", err);
    for (size_t i = 0; i < sizeof src / sizeof src[0] && !rc; i++) {
        char sql[1536];
        /* a communication op needs its name; a task's may be missing (empty) */
        snprintf(sql, sizeof sql,
                 "INSERT INTO temp.tb_m_modk (kname, kts, kend, oname, ots, oend) "
                 "SELECT IFNULL(ks.value, ''), IFNULL(k.startNs, 0), IFNULL(k.endNs, 0), a.value, "
                 "  IFNULL(p.startNs, 0), IFNULL(p.endNs, 0) "
                 "FROM (%s) AS k %s JOIN STRING_IDS ks ON ks.id = k.name "
                 "JOIN %s ci ON ci.rankId = ?1 AND ci.connectionId = k.conn "
                 "JOIN %s p ON p.rankId = ?1 AND p.connectionId = ci.id "
                 "JOIN STRING_IDS a ON a.id = p.name "
                 "ORDER BY IFNULL(p.startNs, 0), IFNULL(k.startNs, 0)",
                 src[i], i == 1 ? "" : "LEFT", ids, calls);
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(m->db, sql, -1, &q, NULL) != SQLITE_OK)
            return db_fail(m, err);
        sqlite3_bind_int64(q, 1, rank);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = db_fail(m, err);
        sqlite3_finalize(q);
    }
    return rc;
}

/* Appends ", " and s to *list (a new string). */
static int list_add(char **list, const char *s)
{
    size_t a = *list ? strlen(*list) : 0, b = strlen(s);
    char *p = realloc(*list, a + b + 3);
    if (!p)
        return -1;
    if (a)
        memcpy(p + a, ", ", 2), a += 2;
    memcpy(p + a, s, b + 1);
    *list = p;
    return 0;
}

typedef struct first_seq {
    size_t node;
    int64_t seq;
} first_seq;

static int cmp_first(const void *pa, const void *pb)
{
    const first_seq *a = pa, *b = pb;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The ops read so far: the last one, and where each first appears. */
typedef struct op_read {
    nodes *ns;
    node *op;
    first_seq *fs;
    size_t nfs, cap;
} op_read;

/* A kernel of read_ops' SQL: into its op, a new one when the name, start
 * or end differ from the last. */
static int op_row(sqlite3_stmt *q, void *ctx)
{
    op_read *r = ctx;
    const char *name = (const char *)sqlite3_column_text(q, 0);
    int64_t ts = sqlite3_column_int64(q, 1), end = sqlite3_column_int64(q, 2);
    if (!r->op || r->op->start != ts || r->op->end != end || strcmp(r->op->name, name ? name : "") != 0) {
        if (r->nfs == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 64;
            first_seq *p = realloc(r->fs, r->cap * sizeof *p);
            if (!p)
                return -1;
            r->fs = p;
        }
        if (!(r->op = nodes_add(r->ns, ts, end, name, 0)))
            return -1;
        r->fs[r->nfs++] = (first_seq){r->ns->n - 1, sqlite3_column_int64(q, 5)};
    }
    r->op->dev += sqlite3_column_int64(q, 4);
    return list_add(&r->op->klist, (const char *)sqlite3_column_text(q, 3));
}

/* The ops of tb_m_modk (one per name, start and end, in the order each first
 * appears; their kernels in order) appended to ns. */
static tb_status read_ops(const metric_ctx *m, nodes *ns, tb_error *err)
{
    size_t base = ns->n;
    op_read r = {.ns = ns};
    tb_status rc = metrics_rows(m->db, WHAT,
                                "SELECT oname, ots, oend, kname, kend - kts, seq FROM temp.tb_m_modk "
                                "ORDER BY oname, ots, oend, seq",
                                0, op_row, &r, err);
    first_seq *fs = r.fs;
    size_t nfs = r.nfs;
    if (!rc && nfs) {
        /* reorder the new ops by first appearance */
        qsort(fs, nfs, sizeof *fs, cmp_first);
        node *tmp = malloc(nfs * sizeof *tmp);
        if (!tmp)
            rc = nomem(err);
        for (size_t i = 0; !rc && i < nfs; i++)
            tmp[i] = ns->v[fs[i].node];
        if (!rc)
            memcpy(ns->v + base, tmp, nfs * sizeof *tmp);
        free(tmp);
    }
    free(fs);
    return rc;
}

/* A forward call of read_fwd_bwd's SQL with its backward call. */
static int fwd_bwd_row(sqlite3_stmt *q, void *ns)
{
    node *d = nodes_add(ns, sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
                        (const char *)sqlite3_column_text(q, 0), 0);
    if (!d)
        return -1;
    d->bwd_start = sqlite3_column_int64(q, 3);
    d->bwd_end = sqlite3_column_int64(q, 4);
    return 0;
}

/* The rank's forward calls with their backward calls (a connection id of two
 * or more CONNECTION_IDS rows: its lowest and highest id), by connection id. */
static tb_status read_fwd_bwd(const metric_ctx *m, const torch_links *tl, nodes *ns, int64_t rank, tb_error *err)
{
    const char *ids, *calls;
    torch_links_names(tl, rank, &ids, &calls);
    char *sql = sqlite3_mprintf(
        "SELECT fs.value, IFNULL(f.startNs, 0), IFNULL(f.endNs, 0), IFNULL(b.startNs, 0), IFNULL(b.endNs, 0) "
        "FROM (SELECT connectionId, MIN(id) AS lo, MAX(id) AS hi FROM %s WHERE rankId = ?1 "
        "      GROUP BY connectionId HAVING COUNT(*) > 1) c "
        "LEFT JOIN %s f ON f.rankId = ?1 AND f.connectionId = c.lo "
        "LEFT JOIN STRING_IDS fs ON fs.id = f.name "
        "LEFT JOIN %s b ON b.rankId = ?1 AND b.connectionId = c.hi "
        "WHERE fs.value NOT LIKE 'Enqueue%%' AND fs.value NOT LIKE 'Dequeue%%' ORDER BY c.connectionId",
        ids, calls, calls);
    if (!sql)
        return nomem(err);
    sqlite3_stmt *q = NULL;
    int prc = sqlite3_prepare_v2(m->db, sql, -1, &q, NULL);
    sqlite3_free(sql);
    if (prc != SQLITE_OK)
        return db_fail(m, err);
    sqlite3_bind_int64(q, 1, rank);
    return metrics_each_row(m->db, q, WHAT, fwd_bwd_row, ns, err);
}

/* Places every node in the last open module holding it (the recipe's stack
 * of modules; ROOT holds everything), children in order. */
static int build_tree(nodes *ns, size_t *top)
{
    size_t n = ns->n, *stack = malloc((n + 1) * sizeof *stack);
    span_key *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord || !stack) {
        free(ord);
        free(stack);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ord[i] = (span_key){ns->v[i].start, ns->v[i].end, i};
        ns->v[i].first = ns->v[i].last = ns->v[i].next = ROOT;
    }
    qsort(ord, n, sizeof *ord, metrics_cmp_span);
    size_t depth = 0;
    top[0] = top[1] = ROOT;
    for (size_t k = 0; k < n; k++) {
        size_t at = ord[k].idx;
        node *e = &ns->v[at];
        while (depth && (ns->v[stack[depth - 1]].start > e->start || ns->v[stack[depth - 1]].end < e->end))
            depth--;
        size_t p = depth ? stack[depth - 1] : ROOT;
        size_t *first = p == ROOT ? &top[0] : &ns->v[p].first, *last = p == ROOT ? &top[1] : &ns->v[p].last;
        e->parent = p;
        if (*last == ROOT)
            *first = at;
        else
            ns->v[*last].next = at;
        *last = at;
        if (e->module)
            stack[depth++] = at;
    }
    free(ord);
    free(stack);
    return 0;
}

/* A walk of the tree: fn is called for each op under a module (module ROOT
 * at the top), path[0..np) the modules above that module. */
typedef struct walker {
    const nodes *ns;
    size_t top, path[MAX_DEPTH + 2], np;
    int (*fn)(struct walker *w, size_t module, size_t op);
    void *ctx;
} walker;

static int walk(walker *w, size_t at, size_t depth)
{
    if (depth > MAX_DEPTH)
        return 0;
    for (size_t c = at == ROOT ? w->top : w->ns->v[at].first; c != ROOT; c = w->ns->v[c].next) {
        int rc;
        if (w->ns->v[c].module) {
            if (at != ROOT)
                w->path[w->np++] = at;
            rc = walk(w, c, depth + 1);
            if (at != ROOT)
                w->np--;
        } else {
            rc = w->fn(w, at, c);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* The parent path of the walk's module: the names above it joined by "/",
 * the top's empty name first, slashes stripped at both ends (new string). */
static char *parent_path(const walker *w)
{
    size_t len = 1;
    for (size_t i = 0; i < w->np; i++)
        len += strlen(w->ns->v[w->path[i]].name) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < w->np; i++) {
        s[k++] = '/';
        size_t n = strlen(w->ns->v[w->path[i]].name);
        memcpy(s + k, w->ns->v[w->path[i]].name, n);
        k += n;
    }
    s[k] = 0;
    size_t a = 0;
    while (s[a] == '/')
        a++;
    while (k > a && s[k - 1] == '/')
        s[--k] = 0;
    memmove(s, s + a, k - a + 1);
    return s;
}

/* One forward call placed in a module instance, then paired with its backward call. */
typedef struct fwd_row {
    char *parent;
    size_t module, fwd;
    int64_t mod_start, fwd_start; /* the sort keys of the mapping rows */
    int64_t bwd_start, bwd_end;
    size_t seq;
} fwd_row;

typedef struct fwd_rows {
    fwd_row *v;
    size_t n, cap;
} fwd_rows;

static int fwd_push(fwd_rows *r, fwd_row x)
{
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 64;
        fwd_row *p = realloc(r->v, c * sizeof *p);
        if (!p)
            return -1;
        r->v = p;
        r->cap = c;
    }
    x.seq = r->n;
    r->v[r->n++] = x;
    return 0;
}

static int on_fwd(walker *w, size_t module, size_t op)
{
    if (module == ROOT)
        return 0;
    char *parent = parent_path(w);
    if (!parent)
        return -1;
    if (!w->ns->v[module].name[0] && !parent[0]) {
        free(parent);
        return 0;
    }
    fwd_row x = {.parent = parent, .module = module, .fwd = op, .mod_start = w->ns->v[module].start,
                 .fwd_start = w->ns->v[op].start};
    if (fwd_push(w->ctx, x) == 0)
        return 0;
    free(parent);
    return -1;
}

/* Mapping rows by module start, then forward call start, then as walked. */
static int cmp_mapped(const void *pa, const void *pb)
{
    const fwd_row *a = pa, *b = pb;
    if (a->mod_start != b->mod_start)
        return a->mod_start < b->mod_start ? -1 : 1;
    if (a->fwd_start != b->fwd_start)
        return a->fwd_start < b->fwd_start ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Merged rows by backward start, then in merge order. */
static int cmp_bwd(const void *pa, const void *pb)
{
    const fwd_row *a = pa, *b = pb;
    if (a->bwd_start != b->bwd_start)
        return a->bwd_start < b->bwd_start ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static int same_key(const node *a, const node *b)
{
    return a->start == b->start && a->end == b->end && strcmp(a->name, b->name) == 0;
}

/* The merge of the mapped forward calls with every forward call of the same
 * name, start and end (their backward calls), sorted by backward start. */
static int merge_bwd(const nodes *bt, fwd_rows *map, fwd_rows *out)
{
    qsort(map->v, map->n, sizeof *map->v, cmp_mapped);
    for (size_t i = 0; i < map->n; i++)
        for (size_t j = 0; j < bt->n; j++) {
            if (bt->v[j].module || !same_key(&bt->v[map->v[i].fwd], &bt->v[j]))
                continue;
            fwd_row x = map->v[i];
            x.parent = NULL;
            x.fwd = i; /* the mapping row */
            x.bwd_start = bt->v[j].bwd_start;
            x.bwd_end = bt->v[j].bwd_end;
            if (fwd_push(out, x))
                return -1;
        }
    qsort(out->v, out->n, sizeof *out->v, cmp_bwd);
    return 0;
}

static int same_instance(const nodes *bt, const fwd_row *a, const fwd_row *b)
{
    const node *x = &bt->v[a->module], *y = &bt->v[b->module];
    return strcmp(a->parent, b->parent) == 0 && same_key(x, y);
}

/* Appends to ns the backward modules of the merged rows: for each run of
 * rows of one module instance, the parent path's module 1 ns wider (first
 * pass; not for an empty path), then the module's (second pass). */
static int add_backward(nodes *ns, const nodes *bt, const fwd_rows *map, const fwd_rows *mg)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < mg->n;) {
            const fwd_row *r = &map->v[mg->v[i].fwd];
            int64_t lo = mg->v[i].bwd_start, hi = mg->v[i].bwd_end;
            size_t j = i + 1;
            for (; j < mg->n && same_instance(bt, r, &map->v[mg->v[j].fwd]); j++) {
                lo = mg->v[j].bwd_start < lo ? mg->v[j].bwd_start : lo;
                hi = mg->v[j].bwd_end > hi ? mg->v[j].bwd_end : hi;
            }
            i = j;
            if (pass == 0 && !r->parent[0])
                continue;
            node *d = pass == 0 ? nodes_add(ns, lo - 1, hi + 1, r->parent, 1)
                                : nodes_add(ns, lo, hi, bt->v[r->module].name, 1);
            if (!d)
                return -1;
            d->bwd = 1;
        }
    return 0;
}

/* The backward modules of the rank (read_fwd_bwd, the forward calls placed
 * among the forward modules ns[0..nmod)) appended to ns. */
static tb_status backward_modules(const metric_ctx *m, const torch_links *tl, nodes *ns, int64_t rank, tb_error *err)
{
    nodes bt = {0};
    fwd_rows map = {0}, mg = {0};
    walker w = {.ns = &bt, .fn = on_fwd, .ctx = &map};
    size_t top[2];
    tb_status rc = TB_OK;
    size_t nmod = ns->n;
    for (size_t i = 0; i < nmod && !rc; i++)
        if (!nodes_add(&bt, ns->v[i].start, ns->v[i].end, ns->v[i].name, 1))
            rc = nomem(err);
    if (!rc)
        rc = read_fwd_bwd(m, tl, &bt, rank, err);
    if (rc || bt.n == nmod)
        goto out;
    if (build_tree(&bt, top) || (w.top = top[0], walk(&w, ROOT, 0)) || merge_bwd(&bt, &map, &mg) ||
        add_backward(ns, &bt, &map, &mg))
        rc = nomem(err);
out:
    for (size_t i = 0; i < map.n; i++)
        free(map.v[i].parent);
    free(map.v);
    free(mg.v);
    nodes_clear(&bt);
    free(bt.v);
    return rc;
}

/* The flat rows: one per op under a module (not the top's). */
typedef struct flat_ctx {
    sqlite3_stmt *ins;
    size_t seq;
} flat_ctx;

static int on_op(walker *w, size_t module, size_t op)
{
    if (module == ROOT)
        return 0;
    const node *md = &w->ns->v[module], *o = &w->ns->v[op];
    char *parent = parent_path(w);
    if (!parent)
        return -1;
    int bwd = md->bwd;
    for (size_t i = 0; i < w->np; i++)
        bwd |= w->ns->v[w->path[i]].bwd;
    flat_ctx *f = w->ctx;
    int rc = 0;
    if (md->name[0] || parent[0]) {
        sqlite3_stmt *q = f->ins;
        sqlite3_bind_int64(q, 2, (int64_t)f->seq++);
        sqlite3_bind_text(q, 3, parent, -1, SQLITE_TRANSIENT);
        char *name = malloc(strlen(md->name) + 11);
        if (!name) {
            free(parent);
            return -1;
        }
        snprintf(name, strlen(md->name) + 11, "%s%s", bwd ? "[Backward]" : "", md->name);
        sqlite3_bind_text(q, 4, name, -1, free);
        sqlite3_bind_int64(q, 5, md->start);
        sqlite3_bind_int64(q, 6, md->end);
        sqlite3_bind_text(q, 7, o->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 8, o->start);
        sqlite3_bind_text(q, 9, o->klist ? o->klist : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 10, o->dev);
        rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -2;
        sqlite3_reset(q);
    }
    free(parent);
    return rc;
}

/* The rank's flat rows into tb_m_modflat. */
static tb_status build_rank(const metric_ctx *m, const torch_links *tl, int64_t rank, void *ctx, tb_error *err)
{
    nodes *ns = ((nodes **)ctx)[0], *ops = ((nodes **)ctx)[1];
    tb_status rc;
    nodes_clear(ns);
    nodes_clear(ops);
    if ((rc = read_modules(m, ns, rank, err)) || !ns->n)
        return rc;
    if ((rc = fill_kernels(m, tl, rank, err)) || (rc = read_ops(m, ops, err)) || !ops->n)
        return rc;
    if ((rc = backward_modules(m, tl, ns, rank, err)))
        return rc;
    for (size_t i = 0; i < ops->n; i++) {
        node *d = nodes_add(ns, 0, 0, "", 0);
        if (!d) {
            for (size_t k = i; k < ops->n; k++) {
                free(ops->v[k].name);
                free(ops->v[k].klist);
            }
            ops->n = 0;
            return nomem(err);
        }
        free(d->name);
        *d = ops->v[i];
    }
    ops->n = 0; /* moved */
    size_t top[2];
    if (build_tree(ns, top))
        return nomem(err);
    flat_ctx f = {0};
    if (sqlite3_prepare_v2(m->db, "INSERT INTO temp.tb_m_modflat VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &f.ins,
                           NULL) != SQLITE_OK)
        return db_fail(m, err);
    sqlite3_bind_int64(f.ins, 1, rank);
    walker w = {.ns = ns, .top = top[0], .fn = on_op, .ctx = &f};
    int wr = walk(&w, ROOT, 0);
    rc = wr == -1 ? nomem(err) : wr ? db_fail(m, err) : TB_OK;
    sqlite3_finalize(f.ins);
    return rc;
}

/* The recipe's aggregation of the flat rows (see the top of the file): pos
 * orders a module instance's ops, op_seq is the instance's sequence and
 * seq_id numbers the sequences as they first appear; g adds up the
 * instances; idx orders g by first op start, run numbers the neighbouring
 * rows of one parent and module, and a run of several sequences gets the
 * suffixes. */
static const char aggregate_sql[] =
    "INSERT INTO temp.module_stats "
    "WITH f AS (SELECT *, row_number() OVER (PARTITION BY rankId ORDER BY mstart, ostart, seq) AS pos "
    "           FROM temp.tb_m_modflat), "
    "o AS (SELECT *, row_number() OVER w - 1 AS op_order, "
    "             group_concat(oname, '/') OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS op_seq "
    "      FROM f WINDOW w AS (PARTITION BY rankId, parent, module, mstart, mend ORDER BY pos)), "
    "s AS (SELECT *, min(pos) OVER (PARTITION BY rankId, op_seq) AS seq_first FROM o), "
    "t AS (SELECT *, dense_rank() OVER (PARTITION BY rankId ORDER BY seq_first) - 1 AS seq_id FROM s), "
    "g AS (SELECT rankId, parent, module, oname, op_order, klist, seq_id, sum(dev) AS total, avg(dev) AS mean, "
    "             count(*) AS cnt, min(ostart) AS ostart "
    "      FROM t GROUP BY rankId, parent, module, oname, op_order, klist, seq_id), "
    "i AS (SELECT *, row_number() OVER (PARTITION BY rankId "
    "             ORDER BY ostart, parent, module, oname, op_order, klist, seq_id) AS idx FROM g), "
    "r AS (SELECT *, idx - row_number() OVER (PARTITION BY rankId, parent, module ORDER BY idx) AS run FROM i), "
    "u AS (SELECT *, min(seq_id) OVER p <> max(seq_id) OVER p AS several, "
    "             dense_rank() OVER (p ORDER BY seq_id) - 1 AS sfx "
    "      FROM r WINDOW p AS (PARTITION BY rankId, parent, module, run)) "
    "SELECT rankId, row_number() OVER (PARTITION BY rankId ORDER BY ostart, op_order, parent, module, idx), parent, "
    "       CASE WHEN several THEN module || '_' || sfx ELSE module END, oname, klist, total, mean, cnt "
    "FROM u ORDER BY rankId, 2;";

static tb_status build_module_stats(const metric_ctx *m, tb_error *err)
{
    tb_status rc = metrics_exec(m, WHAT,
                                "DROP TABLE IF EXISTS temp.module_stats;"
                                "CREATE TEMP TABLE module_stats (rankId INTEGER, pos INTEGER, parentModule TEXT, "
                                "  module TEXT, opName TEXT, kernelList TEXT, totalKernelDuration INTEGER, "
                                "  avgKernelDuration REAL, opCount INTEGER);"
                                "DROP TABLE IF EXISTS temp.tb_m_modk; DROP TABLE IF EXISTS temp.tb_m_modflat;"
                                "CREATE TEMP TABLE tb_m_modk (seq INTEGER PRIMARY KEY, kname TEXT, kts INTEGER, "
                                "  kend INTEGER, oname TEXT, ots INTEGER, oend INTEGER);"
                                "CREATE TEMP TABLE tb_m_modflat (rankId INTEGER, seq INTEGER, parent TEXT, "
                                "  module TEXT, mstart INTEGER, mend INTEGER, oname TEXT, ostart INTEGER, "
                                "  klist TEXT, dev INTEGER);",
                                err);
    if (rc)
        return rc;
    nodes ns = {0}, ops = {0};
    nodes *both[2] = {&ns, &ops};
    rc = torch_links_each_rank(m, WHAT, "MSTX_EVENTS",
                               "SELECT DISTINCT rankId FROM MSTX_EVENTS WHERE rankId IS NOT NULL ORDER BY 1",
                               build_rank, both, err);
    nodes_clear(&ns);
    nodes_clear(&ops);
    free(ns.v);
    free(ops.v);
    if (!rc)
        rc = metrics_exec(m, WHAT, aggregate_sql, err);
    if (!rc)
        rc = metrics_exec(m, WHAT, "DROP TABLE temp.tb_m_modk; DROP TABLE temp.tb_m_modflat;", err);
    return rc;
}

const metric_table metrics_modstat[] = {
    {"module_stats", {NULL}, build_module_stats,
     "per rank, module, framework op and kernel list: total and mean kernel time (ns) and count, as "
     "msprof-analyze's module_statistic recipe gives them",
     "rankId", {NULL}},
};
const size_t metrics_modstat_n = sizeof metrics_modstat / sizeof metrics_modstat[0];
