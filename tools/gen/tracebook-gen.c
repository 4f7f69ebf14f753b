/* SPDX-License-Identifier: MIT */
/*
 * tracebook-gen.c - reproducible synthetic profile traces for tests and benches.
 *
 * Writes a torch_npu-style trace_view.json (--kind ascend) or a PyTorch
 * profiler (Kineto) GPU trace (--kind kineto) holding exactly --events trace
 * events, metadata included, so that tests can check counts and benches can
 * scale to gigabytes. --kind torch_npu_dir writes a torch_npu profiling
 * directory per rank r: the ascend trace of seed S+r, plus kernel_details.csv
 * (a row per Ascend Hardware task and HCCL op of that trace, collected while
 * the step is written and sorted by start when it ends), step_trace_time.csv
 * (a row per complete step, from the intervals behind the Overlap Analysis
 * lanes) and profiler_info_<r>.json. The CSVs are a by-product of the real
 * (not dry) run and draw no random numbers, so the trace stays byte-identical
 * to --kind ascend --seed S+r --rank r. The bytes depend only on the arguments: one private
 * splitmix64 generator drives every random choice, all times are integer
 * nanoseconds and every number is formatted by hand (no floating point), so
 * the output is the same on every machine and libc.
 *
 * The trace is produced step by step (ProfilerStep#N) from a small model of a
 * data-parallel transformer training job: the host runs Python/aten ops that
 * launch device kernels through the CANN task queue (or the CUDA runtime),
 * kernels queue up on a compute stream after their launch, collectives run
 * on a communication stream and overlap the backward pass, and each layer of
 * the format is filled in (flows, counters, Overlap Analysis lanes, metadata
 * at the end of the event array as the real tools write it).
 *
 * Exact counts: every random draw and every state change happens outside
 * ev(), which alone differs between modes, so a step run "dry" (counting only,
 * from a saved copy of the state) emits the same number of events as the
 * same step run for real. Each step is counted dry, then written. The step
 * that does not fit is cut after the largest number of ops that fits (found
 * by bisection over dry runs) and the few events still missing are filled
 * with counter samples (ascend) or memory instant events (kineto). Memory is
 * bounded by one step: only its device intervals are kept, for the overlap
 * lanes. Output goes through a 4 MiB buffer written with fwrite.
 *
 * Reproducibility rule for edits: at most one random draw (R, jitter, rnd)
 * or state increment per full expression. C leaves the evaluation order of
 * call arguments unspecified, and gcc and clang do differ.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Exit codes, listed in --help. */
enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };

#define US 1000u                    /* ns per microsecond */
#define OBUF_CAP (4u << 20)
#define U(x) ((uint64_t)(x))        /* every numeric vararg of ev() is a uint64_t */

enum { ASCEND, KINETO };

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64 (Steele, Lea, Flood 2014).                   */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix64(*s);
}

/* Uniform in [lo, hi]; the modulo bias is irrelevant here. */
static uint64_t span(uint64_t *s, uint64_t lo, uint64_t hi)
{
    assert(hi >= lo);
    return lo + rnd(s) % (hi - lo + 1);
}

/* v scaled by a random factor in [100-pct, 100+pct] percent. */
static uint64_t jitter(uint64_t *s, uint64_t v, unsigned pct)
{
    return v / 100 * span(s, 100 - pct, 100 + pct) + v % 100;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ------------------------------------------------------------------------ */
/* Output: a private buffer flushed with fwrite.                           */

struct out {
    FILE *f;
    char *buf;
    size_t len;
    int err;
};

static void out_flush(struct out *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
        o->err = 1;
    o->len = 0;
}

static void out_put(struct out *o, const char *s, size_t n)
{
    if (n > OBUF_CAP - o->len) {
        out_flush(o);
        if (n > OBUF_CAP) {
            if (fwrite(s, 1, n, o->f) != n)
                o->err = 1;
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void out_str(struct out *o, const char *s) { out_put(o, s, strlen(s)); }

static size_t fmt_u(char *p, uint64_t v)
{
    char t[24];
    size_t n = 0, i;

    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

/* v / 10^dec with dec decimals; trim drops trailing zeros but keeps one. */
static size_t fmt_fixed(char *p, uint64_t v, unsigned dec, int trim)
{
    uint64_t div = 1;
    size_t n;
    unsigned i;

    for (i = 0; i < dec; i++)
        div *= 10;
    n = fmt_u(p, v / div);
    p[n++] = '.';
    v %= div;
    for (i = dec; i-- > 0;) {
        p[n + i] = (char)('0' + v % 10);
        v /= 10;
    }
    n += dec;
    if (trim)
        while (dec-- > 1 && p[n - 1] == '0')
            n--;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Generator state.                                                        */

enum { S_COMPUTE, S_COMM, NSTREAM };

/* Everything a step changes; a copy of it rewinds a dry run. */
struct state {
    uint64_t rng;
    uint64_t host;              /* Python thread cursor, ns */
    uint64_t deq;               /* ascend dequeue thread cursor */
    uint64_t dev[NSTREAM];      /* device stream cursors */
    uint64_t task_id[NSTREAM];
    uint64_t step;              /* number of the next ProfilerStep */
    uint64_t conn;              /* ascend connection id / kineto correlation */
    uint64_t corr;              /* ascend enqueue correlation id */
    uint64_t ext;               /* kineto External id */
    uint64_t pyid;              /* kineto Python id */
    uint64_t seq;               /* autograd sequence number */
    uint64_t evidx;             /* kineto Ev Idx */
    uint64_t nlaunch;           /* device ops so far: counter cadence */
    uint64_t mem;               /* device bytes in use */
    uint64_t addr;              /* kineto allocation address cursor */
    uint64_t tend;              /* latest time written */
};

struct ival { uint64_t a, b; };

struct ivec {
    struct ival *v;
    size_t n, cap;
};

/* A forward op remembered for its fwdbwd flow. */
struct fwrec { uint64_t ts, seq; };

/*
 * One kernel_details.csv row (torch_npu_dir): an Ascend Hardware task or an
 * HCCL op of the step being written, kept until the step ends and its rows
 * are sorted by start.
 */
struct krow {
    uint64_t t0, t1, task_id, stream_id, ord;
    const char *name;           /* NULL for an HCCL op: its name is in hcom */
    const struct dims *d;       /* the op's shapes (NULL: none) */
    int type;                   /* task type (T_*) */
    char hcom[64];
};

/* Input shapes of one op in both notations, and its kernels' columns in kernel_details.csv. */
struct dims {
    char a[96];       /* ascend "Input Dims": "4096,4096;4096" */
    char at[96];      /* ascend "Input type" */
    char k[128];      /* kineto "Input Dims": [[4096, 4096], [4096]] */
    char kt[128];     /* kineto "Input type": ["c10::BFloat16", ...] */
    char dt[64];      /* kernel_details "Input Data Types": "DT_BF16;INT64" */
    char fm[32];      /* "Input Formats": "ND;ND" */
    char o[96];       /* "Output Shapes" (ascend notation) */
    char odt[64];     /* "Output Data Types" */
    char ofm[32];     /* "Output Formats" */
};

enum {
    D_NORM, D_ATTN, D_EW, D_EW1, D_SWI, D_SWIG, D_LSM, D_LOSS, D_EMB, D_IN, D_MASK,
    D_SCALAR, D_PARAM,
    D_MM,                       /* + 3 * linear: forward, dX, dW */
    ND = D_MM + 3 * 5
};

enum { L_QKV, L_O, L_UP, L_DOWN, L_LM, NLIN };

struct gen {
    /* arguments */
    int kind;
    uint64_t events, seed;
    unsigned ranks, rank, layers;
    /* model, fixed per seed */
    uint64_t B, S, H, F, V, dev_id;
    uint64_t lin_in[NLIN], lin_out[NLIN];
    uint64_t t0;
    uint64_t pid, tid_main, tid_deq, tid_bwd;
    uint64_t pid_cann, pid_hw, pid_comm, pid_mem, pid_ovl;
    uint64_t stream_id[NSTREAM];
    unsigned hcom_group;
    struct dims dm[ND];
    char name_main[40], name_deq[40], name_bwd[40], npu_label[16];
    /* run */
    struct state s;
    int dry;
    uint64_t n;                 /* events counted (dry) or written */
    uint64_t units, unit_limit; /* ops in this step, cut point */
    uint64_t ptid;              /* Python thread running ops now */
    uint64_t step_dev0;         /* first device start of this step */
    struct ivec comp, comm;
    struct fwrec *fw;
    size_t nfw, capfw;
    uint64_t hcom_idx[4];
    struct out o;
    /* torch_npu_dir: kernel_details.csv and step_trace_time.csv beside the trace */
    int csv;
    int cut;                    /* this step ran out of units */
    uint64_t step_no, step_p0;  /* the step's number and host start */
    uint64_t bubble;            /* the step's receive time (hcom_receive) */
    struct krow *rows;
    size_t nrows, caprows;
    uint64_t kd_prev_end;       /* end of the previous kernel_details row */
    struct out kd, st;
};

static _Noreturn void die_oom(void)
{
    fputs("tracebook-gen: error: out of memory\n", stderr);
    exit(EXIT_IO);
}

static void iv_push(struct ivec *v, uint64_t a, uint64_t b)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        struct ival *p = realloc(v->v, cap * sizeof *p);
        if (!p)
            die_oom();
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n].a = a;
    v->v[v->n].b = b;
    v->n++;
}

static void fw_push(struct gen *g, uint64_t ts, uint64_t seq)
{
    if (g->nfw == g->capfw) {
        size_t cap = g->capfw ? g->capfw * 2 : 64;
        struct fwrec *p = realloc(g->fw, cap * sizeof *p);
        if (!p)
            die_oom();
        g->fw = p;
        g->capfw = cap;
    }
    g->fw[g->nfw].ts = ts;
    g->fw[g->nfw].seq = seq;
    g->nfw++;
}

/* Takes a unit (one op) from the step's allowance; 0 once the step is cut. */
static int unit(struct gen *g)
{
    if (g->units >= g->unit_limit) {
        g->cut = 1;
        return 0;
    }
    g->units++;
    return 1;
}

static uint64_t R(struct gen *g, uint64_t lo, uint64_t hi) { return span(&g->s.rng, lo, hi); }

static void seen(struct gen *g, uint64_t t)
{
    if (t > g->s.tend)
        g->s.tend = t;
}

/* A kernel_details row for a task or an HCCL op just written (torch_npu_dir). */
static struct krow *krow_push(struct gen *g)
{
    struct krow *r;

    if (g->nrows == g->caprows) {
        size_t cap = g->caprows ? g->caprows * 2 : 256;
        struct krow *p = realloc(g->rows, cap * sizeof *p);
        if (!p)
            die_oom();
        g->rows = p;
        g->caprows = cap;
    }
    r = &g->rows[g->nrows];
    memset(r, 0, sizeof *r);
    r->ord = g->nrows++;
    return r;
}

/*
 * Writes one trace event (or only counts it in a dry run). fmt is literal
 * JSON with conversions taking a uint64_t (%u; %d as int64_t; %t ns as µs
 * with exactly 3 decimals; %T ns as µs, trailing zeros trimmed; %M millionths
 * trimmed) or a const char * (%s, written unescaped); %% is a percent sign.
 * Returns 1 when the event was written, 0 when only counted or dropped.
 */
static int ev(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    const char *p, *q;
    char num[48];
    uint64_t v;

    if (g->dry) {
        g->n++;
        return 0;
    }
    if (g->n >= g->events)
        return 0;           /* only the metadata tail can run past --events */
    if (g->n++)
        out_put(&g->o, ",\n", 2);
    va_start(ap, fmt);
    for (p = fmt; *p; p = q + 2) {
        q = strchr(p, '%');
        if (!q) {
            out_str(&g->o, p);
            break;
        }
        out_put(&g->o, p, (size_t)(q - p));
        switch (q[1]) {
        case 's':
            out_str(&g->o, va_arg(ap, const char *));
            break;
        case 'u':
            out_put(&g->o, num, fmt_u(num, va_arg(ap, uint64_t)));
            break;
        case 'd':
            v = va_arg(ap, uint64_t);
            if ((int64_t)v < 0) {
                out_put(&g->o, "-", 1);
                v = (uint64_t)0 - v;
            }
            out_put(&g->o, num, fmt_u(num, v));
            break;
        case 't':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 3, 0));
            break;
        case 'T':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 3, 1));
            break;
        case 'M':
            out_put(&g->o, num, fmt_fixed(num, va_arg(ap, uint64_t), 6, 1));
            break;
        case '%':
            out_put(&g->o, "%", 1);
            break;
        default:
            assert(0 && "bad conversion");
        }
    }
    va_end(ap);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Model shapes.                                                           */

/*
 * Shapes are written with the model's symbols: B batch, S sequence, H hidden,
 * F feed-forward, V vocabulary, N = B*S, each with an optional integer factor
 * ("3H"); ',' separates dimensions and ';' inputs, and an empty input is a
 * scalar. Types are one letter per input: b bf16, l long, s Scalar.
 */
static uint64_t dim_value(const struct gen *g, const char **p)
{
    uint64_t f = 0, v = 1;
    int digits = 0;

    while (**p >= '0' && **p <= '9') {
        f = f * 10 + (uint64_t)(**p - '0');
        digits = 1;
        (*p)++;
    }
    switch (**p) {
    case 'B': v = g->B; break;
    case 'S': v = g->S; break;
    case 'H': v = g->H; break;
    case 'F': v = g->F; break;
    case 'V': v = g->V; break;
    case 'N': v = g->B * g->S; break;
    default: assert(0 && "bad shape symbol");
    }
    (*p)++;
    return digits ? f * v : v;
}

/* Device data types and formats of type letters: "DT_BF16;INT64" and "ND;ND". */
static void mktypes(char *dt, size_t ndt, char *fm, size_t nfm, const char *types)
{
    size_t ld = 0, lf = 0;
    const char *t;

    dt[0] = fm[0] = 0;
    for (t = types; *t; t++) {
        const char *ty = *t == 'l' ? "INT64" : *t == 's' ? "FLOAT" : "DT_BF16";

        ld += (size_t)snprintf(dt + ld, ld < ndt ? ndt - ld : 0, "%s%s", t > types ? ";" : "", ty);
        lf += (size_t)snprintf(fm + lf, lf < nfm ? nfm - lf : 0, "%sND", t > types ? ";" : "");
    }
    assert(ld < ndt && lf < nfm);
}

/* A symbolic shape list in ascend notation ("N,H;H" -> "8192,4096;4096"). */
static void shape_a(const struct gen *g, char *buf, size_t n, const char *shape)
{
    size_t l = 0;
    const char *p;
    int first_dim = 1;

    buf[0] = 0;
    for (p = shape; *p; p++) {
        if (*p == ';') {
            l += (size_t)snprintf(buf + l, l < n ? n - l : 0, ";");
            first_dim = 1;
            continue;
        }
        if (*p == ',')
            continue;
        {
            unsigned long long v = (unsigned long long)dim_value(g, &p);
            p--;
            l += (size_t)snprintf(buf + l, l < n ? n - l : 0, "%s%llu", first_dim ? "" : ",", v);
            first_dim = 0;
        }
    }
    assert(l < n);
}

/*
 * Fills d from a symbolic shape list and type letters (see dim_value), and
 * the output shape and types its kernels show in kernel_details.csv.
 */
static void mkdims(const struct gen *g, struct dims *d, const char *shape, const char *types,
                   const char *oshape, const char *otypes)
{
    size_t la = 0, lat = 0, lk = 0, lkt = 0;
    const char *p = shape, *t;
    int first_dim = 1;

#define APP(buf, len, ...) \
    len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0, __VA_ARGS__)
    APP(d->k, lk, "[[");
    APP(d->kt, lkt, "[");
    for (t = types; *t; t++) {
        const char *ty = *t == 'l' ? "long int" : *t == 's' ? "Scalar" : "c10::BFloat16";

        APP(d->at, lat, "%s%s", t > types ? ";" : "", ty);
        APP(d->kt, lkt, "%s\"%s\"", t > types ? ", " : "", ty);
    }
    for (; *p; p++) {
        if (*p == ';') {
            APP(d->a, la, ";");
            APP(d->k, lk, "], [");
            first_dim = 1;
            continue;
        }
        if (*p == ',')
            continue;
        {
            unsigned long long v = (unsigned long long)dim_value(g, &p);
            p--;
            APP(d->a, la, "%s%llu", first_dim ? "" : ",", v);
            APP(d->k, lk, "%s%llu", first_dim ? "" : ", ", v);
            first_dim = 0;
        }
    }
    APP(d->k, lk, "]]");
    APP(d->kt, lkt, "]");
#undef APP
    assert(la < sizeof d->a && lat < sizeof d->at && lk < sizeof d->k && lkt < sizeof d->kt);
    mktypes(d->dt, sizeof d->dt, d->fm, sizeof d->fm, types);
    mktypes(d->odt, sizeof d->odt, d->ofm, sizeof d->ofm, otypes);
    shape_a(g, d->o, sizeof d->o, oshape);
}

static void model_init(struct gen *g)
{
    static const uint64_t hs[] = {2048, 3072, 4096, 5120};
    static const uint64_t ss[] = {1024, 2048, 4096};
    static const uint64_t vs[] = {32000, 32768, 151936};
    /* inputs, their types, then the output and its types ("" a scalar) */
    static const struct { int id; const char *shape, *types, *oshape, *otypes; } shapes[] = {
        {D_NORM, "B,S,H;H", "bb", "B,S,H", "b"},
        {D_ATTN, "B,S,H;B,S,H;B,S,H", "bbb", "B,S,H", "b"},
        {D_EW, "B,S,H;B,S,H", "bb", "B,S,H", "b"},
        {D_EW1, "B,S,H", "b", "B,S,H", "b"},
        {D_SCALAR, "B,S,H;", "bs", "B,S,H", "b"},
        {D_SWI, "B,S,2F", "b", "B,S,F", "b"},
        {D_SWIG, "B,S,F;B,S,2F", "bb", "B,S,2F", "b"},
        {D_LSM, "N,V", "b", "N,V", "b"},
        {D_LOSS, "N,V;N", "bl", "", "b"},
        {D_EMB, "V,H;B,S", "bl", "B,S,H", "b"},
        {D_IN, "B,S", "l", "B,S", "l"},
        {D_MASK, "N", "l", "N", "l"},
        {D_PARAM, "3H,H;H", "bb", "3H,H;H", "bb"},
    };
    /* nn.Linear in -> out per linear kind (L_QKV ... L_LM) */
    static const char *const lin[NLIN][2] = {{"H", "3H"}, {"H", "H"}, {"H", "2F"}, {"F", "H"}, {"H", "V"}};
    uint64_t c = mix64(g->seed ^ 0x7472616365626f6full);
    size_t i;

    g->H = hs[rnd(&c) % 4];
    g->S = ss[rnd(&c) % 3];
    g->B = 1 + rnd(&c) % 2;
    g->V = vs[rnd(&c) % 3];
    g->F = (g->H * 8 / 3 + 255) / 256 * 256;
    g->hcom_group = (unsigned)(100 + rnd(&c) % 900);
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        mkdims(g, &g->dm[shapes[i].id], shapes[i].shape, shapes[i].types, shapes[i].oshape,
               shapes[i].otypes);
    for (i = 0; i < NLIN; i++) {
        const char *in = lin[i][0], *out = lin[i][1], *p;
        char s[32], o[16];

        p = in;
        g->lin_in[i] = dim_value(g, &p);
        p = out;
        g->lin_out[i] = dim_value(g, &p);
        snprintf(s, sizeof s, "N,%s;%s,%s", in, in, out);       /* forward: x @ W^T */
        snprintf(o, sizeof o, "N,%s", out);
        mkdims(g, &g->dm[D_MM + 3 * i], s, "bb", o, "b");
        snprintf(s, sizeof s, "N,%s;%s,%s", out, out, in);      /* dX = dY @ W */
        snprintf(o, sizeof o, "N,%s", in);
        mkdims(g, &g->dm[D_MM + 3 * i + 1], s, "bb", o, "b");
        snprintf(s, sizeof s, "%s,N;N,%s", out, in);            /* dW = dY^T @ X */
        snprintf(o, sizeof o, "%s,%s", out, in);
        mkdims(g, &g->dm[D_MM + 3 * i + 2], s, "bb", o, "b");
    }
}

/* Bytes of one activation tensor [B, S, H] in bf16. */
static uint64_t act(struct gen *g) { return g->B * g->S * g->H * 2; }

static uint64_t lin_flops(struct gen *g, int l)
{
    return 2 * g->B * g->S * g->lin_in[l] * g->lin_out[l];
}

static uint64_t lin_params(struct gen *g, int l) { return g->lin_in[l] * g->lin_out[l]; }

static uint64_t layer_params(struct gen *g)
{
    return lin_params(g, L_QKV) + lin_params(g, L_O) + lin_params(g, L_UP) +
           lin_params(g, L_DOWN) + 2 * g->H;
}

/* ------------------------------------------------------------------------ */
/* Ascend (torch_npu trace_view.json).                                     */

enum { T_AIC, T_AIV, T_MIX, T_AICPU, T_ER, T_EW, T_MEMCPY, T_NOTIFY };
static const char *const task_type[] = {
    "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU",
    "EVENT_RECORD", "EVENT_WAIT", "MEMCPY_ASYNC", "NOTIFY_WAIT",
};

/* Cost classes: how an op's work turns into device time. */
enum { C_MM, C_BYTES, C_ATTN, C_FIX, C_CPU, C_H2D, C_D2H };

struct akern { const char *name; unsigned char type, pct; };

struct aop {
    const char *aten, *api;
    unsigned char cls, ws, nk;  /* ws: a GetWorkspaceSize call precedes the launch */
    struct akern k[3];
};

#define K1(n, t) 1, {{n, t, 100}}
static const struct aop A_MM = {"aten::mm", "aclnnMm", C_MM, 1, K1("aclnnMm_MatMulV3_MatMulV3", T_AIC)};
static const struct aop A_MM_DW = {"aten::mm", "aclnnMm", C_MM, 1, 2,
    {{"aclnnMm_TransData_TransData", T_AIV, 6}, {"aclnnMm_MatMulV3_MatMulV3", T_AIC, 94}}};
static const struct aop A_MM_LM = {"aten::mm", "aclnnMm", C_MM, 1, 2,
    {{"aclnnMm_MatMulCommon_MemSet", T_AIV, 2}, {"aclnnMm_MatMulCommon_MatMulV2", T_AIC, 98}}};
static const struct aop A_RMS = {"npu::npu_rms_norm", "aclnnRmsNorm", C_BYTES, 0,
    K1("aclnnRmsNorm_RmsNorm_RmsNorm", T_AIV)};
static const struct aop A_RMSG = {"npu::npu_rms_norm_backward", "aclnnRmsNormGrad", C_BYTES, 1, 2,
    {{"aclnnRmsNormGrad_RmsNormGrad_RmsNormGrad", T_AIV, 75},
     {"aclnnRmsNormGrad_ReduceSumOpAiCore_ReduceSum", T_AIV, 25}}};
static const struct aop A_ROPE = {"npu::npu_rotary_mul", "aclnnRotaryPositionEmbedding", C_BYTES, 0,
    K1("aclnnRotaryPositionEmbedding_RotaryPositionEmbedding_RotaryPositionEmbedding", T_AIV)};
static const struct aop A_ROPEG = {"npu::npu_rotary_mul_backward", "aclnnRotaryPositionEmbeddingGrad",
    C_BYTES, 0, K1("aclnnRotaryPositionEmbeddingGrad_RotaryPositionEmbeddingGrad_RotaryPositionEmbeddingGrad", T_AIV)};
static const struct aop A_FA = {"npu::npu_fusion_attention", "aclnnFlashAttentionScore", C_ATTN, 1,
    K1("aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore", T_MIX)};
static const struct aop A_FAG = {"npu::npu_fusion_attention_grad", "aclnnFlashAttentionScoreGrad", C_ATTN, 1, 3,
    {{"aclnnFlashAttentionScoreGrad_ZerosLikeAiCore_ZerosLike", T_AIV, 3},
     {"aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad_FlashAttentionScoreGrad", T_MIX, 90},
     {"aclnnFlashAttentionScoreGrad_CastAiCore_Cast", T_AIV, 7}}};
static const struct aop A_SWI = {"npu::npu_swiglu", "aclnnSwiGlu", C_BYTES, 0, K1("aclnnSwiGlu_SwiGlu_SwiGlu", T_AIV)};
static const struct aop A_SWIG = {"npu::npu_swiglu_backward", "aclnnSwiGluGrad", C_BYTES, 0,
    K1("aclnnSwiGluGrad_SwiGluGrad_SwiGluGrad", T_AIV)};
static const struct aop A_ADD = {"aten::add", "aclnnAdd", C_BYTES, 0, K1("aclnnAdd_AddAiCore_Add", T_AIV)};
static const struct aop A_EMB = {"aten::embedding", "aclnnEmbedding", C_BYTES, 0,
    K1("aclnnEmbedding_GatherV2AiCore_GatherV2", T_AIV)};
static const struct aop A_EMBG = {"aten::embedding_dense_backward", "aclnnEmbeddingDenseBackward", C_BYTES, 1, 2,
    {{"aclnnEmbeddingDenseBackward_ZerosLikeAiCore_ZerosLike", T_AIV, 10},
     {"aclnnEmbeddingDenseBackward_UnsortedSegmentSum_UnsortedSegmentSum", T_AIV, 90}}};
static const struct aop A_LSM = {"aten::_log_softmax", "aclnnLogSoftmax", C_BYTES, 0,
    K1("aclnnLogSoftmax_LogSoftmaxV2AiCore_LogSoftmaxV2", T_AIV)};
static const struct aop A_LSMG = {"aten::_log_softmax_backward_data", "aclnnLogSoftmaxBackward", C_BYTES, 0,
    K1("aclnnLogSoftmaxBackward_LogSoftmaxGradAiCore_LogSoftmaxGrad", T_AIV)};
static const struct aop A_NLL = {"aten::nll_loss_forward", "aclnnNLLLoss", C_FIX, 0, K1("aclnnNLLLoss_NLLLoss_NLLLoss", T_AIV)};
static const struct aop A_NLLG = {"aten::nll_loss_backward", "aclnnNLLLossBackward", C_FIX, 0,
    K1("aclnnNLLLossBackward_NLLLossGrad_NLLLossGrad", T_AIV)};
static const struct aop A_ONES = {"aten::ones_like", "aclnnInplaceOne", C_FIX, 0,
    K1("aclnnInplaceOne_OnesLikeAiCore_OnesLike", T_AIV)};
static const struct aop A_H2D = {"aten::copy_", "aclrtMemcpyAsync", C_H2D, 0, K1("MEMCPY_ASYNC", T_MEMCPY)};
static const struct aop A_D2H = {"aten::_local_scalar_dense", "aclrtMemcpyAsync", C_D2H, 0, K1("MEMCPY_ASYNC", T_MEMCPY)};
static const struct aop A_NZ = {"aten::nonzero", "aclnnNonzero", C_CPU, 0, K1("aclnnNonzero_NonZero_NonZero", T_AICPU)};
static const struct aop A_CAST = {"aten::_to_copy", "aclnnCast", C_BYTES, 0, K1("aclnnCast_CastAiCore_Cast", T_AIV)};
static const struct aop A_ZERO = {"aten::zero_", "aclnnInplaceZero", C_BYTES, 0,
    K1("aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", T_AIV)};
static const struct aop A_FNORM = {"aten::_foreach_norm", "aclnnForeachNorm", C_BYTES, 1,
    K1("aclnnForeachNorm_ForeachNorm_ForeachNorm", T_AIV)};
static const struct aop A_VNORM = {"aten::linalg_vector_norm", "aclnnNorm", C_FIX, 0,
    K1("aclnnNorm_LpNormV2AiCore_LpNormV2", T_AIV)};
static const struct aop A_CLAMP = {"aten::clamp", "aclnnClamp", C_FIX, 0,
    K1("aclnnClamp_ClipByValueV2AiCore_ClipByValueV2", T_AIV)};
static const struct aop A_FMUL = {"aten::_foreach_mul_", "aclnnForeachMulScalarInplace", C_BYTES, 0,
    K1("aclnnForeachMulScalarInplace_ForeachMulScalarInplace_ForeachMulScalarInplace", T_AIV)};
static const struct aop A_FADD = {"aten::_foreach_add_", "aclnnForeachAddScalarInplace", C_BYTES, 0,
    K1("aclnnForeachAddScalarInplace_ForeachAddScalarInplace_ForeachAddScalarInplace", T_AIV)};
static const struct aop A_FLERP = {"aten::_foreach_lerp_", "aclnnForeachLerpScalar", C_BYTES, 0,
    K1("aclnnForeachLerpScalar_ForeachLerpScalar_ForeachLerpScalar", T_AIV)};
static const struct aop A_FADDCMUL = {"aten::_foreach_addcmul_", "aclnnForeachAddcmulScalar", C_BYTES, 0,
    K1("aclnnForeachAddcmulScalar_ForeachAddcmulScalar_ForeachAddcmulScalar", T_AIV)};
static const struct aop A_FSQRT = {"aten::_foreach_sqrt", "aclnnForeachSqrt", C_BYTES, 0,
    K1("aclnnForeachSqrt_ForeachSqrt_ForeachSqrt", T_AIV)};
static const struct aop A_FDIV = {"aten::_foreach_div_", "aclnnForeachDivScalarInplace", C_BYTES, 0,
    K1("aclnnForeachDivScalarInplace_ForeachDivScalarInplace_ForeachDivScalarInplace", T_AIV)};
static const struct aop A_FADDCDIV = {"aten::_foreach_addcdiv_", "aclnnForeachAddcdivScalar", C_BYTES, 0,
    K1("aclnnForeachAddcdivScalar_ForeachAddcdivScalar_ForeachAddcdivScalar", T_AIV)};
#undef K1

/*
 * The long tail of small element-wise ops a real model sprinkles between the
 * big ones, each in an out-of-place and an in-place form. Their aclnn and
 * kernel names (and the Kineto kernel names) are built once at start-up.
 */
struct ewdef { const char *aten, *api, *optype; };
static const struct ewdef ewdefs[] = {
    {"add", "Add", "Add"}, {"mul", "Mul", "Mul"}, {"sub", "Sub", "Sub"},
    {"div", "Div", "RealDiv"}, {"muls", "Muls", "Mul"}, {"adds", "Adds", "Add"},
    {"sqrt", "Sqrt", "Sqrt"}, {"rsqrt", "Rsqrt", "Rsqrt"}, {"exp", "Exp", "Exp"},
    {"log", "Log", "Log"}, {"neg", "Neg", "Neg"}, {"abs", "Abs", "Abs"},
    {"pow", "PowTensorScalar", "Pow"}, {"maximum", "Maximum", "Maximum"},
    {"minimum", "Minimum", "Minimum"}, {"sigmoid", "Sigmoid", "Sigmoid"},
    {"tanh", "Tanh", "Tanh"}, {"gelu", "Gelu", "Gelu"}, {"silu", "Silu", "Swish"},
    {"relu", "Relu", "Relu"}, {"fill", "FillScalar", "Fill"}, {"eq", "EqScalar", "Equal"},
    {"lt", "LtScalar", "Less"}, {"gt", "GtScalar", "Greater"}, {"where", "SWhere", "Select"},
    {"erf", "Erf", "Erf"}, {"reciprocal", "Reciprocal", "Reciprocal"},
    {"clamp_min", "ClampMin", "Maximum"}, {"masked_fill", "MaskedFillScalar", "MaskedFill"},
    {"cumsum", "Cumsum", "Cumsum"}, {"sum", "ReduceSum", "ReduceSum"},
    {"mean", "Mean", "ReduceMean"}, {"amax", "Amax", "ReduceMax"},
    {"argmax", "Argmax", "ArgMaxV2"}, {"softmax", "Softmax", "SoftmaxV2"},
    {"copy", "Copy", "ViewCopy"}, {"cat", "Cat", "ConcatD"},
    {"index_select", "IndexSelect", "GatherV2"}, {"index_put", "IndexPutImpl", "IndexPutV2"},
    {"topk", "Topk", "TopKV2"}, {"triu", "Triu", "Triu"}, {"bitwise_not", "BitwiseNot", "LogicalNot"},
    {"logical_and", "LogicalAnd", "LogicalAnd"}, {"sign", "Sign", "Sign"},
    {"floor", "Floor", "Floor"}, {"round", "Round", "Round"}, {"addcmul", "Addcmul", "Addcmul"},
    {"addcdiv", "Addcdiv", "Addcdiv"}, {"lerp", "Lerp", "Lerp"},
    {"leaky_relu", "LeakyRelu", "LeakyRelu"},
};
#define NEW (sizeof ewdefs / sizeof ewdefs[0])

struct ewop {
    struct aop a;               /* ascend op (names point into name storage) */
    char aten[40], api[48], kern[96];
    char katen[40], kkern[320]; /* kineto names */
};
static struct ewop *ewops;      /* 2 * NEW: [2i] out-of-place, [2i+1] in-place */

static void ew_init(void)
{
    size_t i;
    int inpl;

    if (ewops)
        return;
    ewops = calloc(2 * NEW, sizeof *ewops);
    if (!ewops)
        die_oom();
    for (i = 0; i < NEW; i++)
        for (inpl = 0; inpl < 2; inpl++) {
            struct ewop *e = &ewops[2 * i + (size_t)inpl];
            const struct ewdef *d = &ewdefs[i];

            snprintf(e->aten, sizeof e->aten, "aten::%s%s", d->aten, inpl ? "_" : "");
            snprintf(e->api, sizeof e->api, "aclnn%s%s", inpl ? "Inplace" : "", d->api);
            snprintf(e->kern, sizeof e->kern, "%s_%sAiCore_%s", e->api, d->optype, d->optype);
            snprintf(e->katen, sizeof e->katen, "%s", e->aten);
            snprintf(e->kkern, sizeof e->kkern,
                     "void at::native::vectorized_elementwise_kernel<4, at::native::%s_kernel_cuda("
                     "at::TensorIteratorBase&)::{lambda(c10::BFloat16)#%d}, std::array<char*, %dul> >(int, "
                     "at::native::%s_kernel_cuda(at::TensorIteratorBase&)::{lambda(c10::BFloat16)#%d}, "
                     "std::array<char*, %dul>)",
                     d->aten, 1 + inpl, 2 + !inpl, d->aten, 1 + inpl, 2 + !inpl);
            e->a.aten = e->aten;
            e->a.api = e->api;
            e->a.cls = C_BYTES;
            e->a.nk = 1;
            e->a.k[0].name = e->kern;
            e->a.k[0].type = (unsigned char)(i % 7 == 3 ? T_AIC : T_AIV);
            e->a.k[0].pct = 100;
        }
}

/* A tail op, skewed so that a few names dominate as they do in real traces. */
static const struct ewop *ew_pick(struct gen *g)
{
    uint64_t a = R(g, 0, 2 * NEW - 1), b = R(g, 0, 2 * NEW - 1);
    return &ewops[a * b / (2 * NEW)];
}

/* Device time of an op's work, before the per-kernel split. */
static uint64_t op_time(struct gen *g, int cls, uint64_t work)
{
    int gpu = g->kind == KINETO;

    switch (cls) {
    case C_MM:
        return work / (gpu ? 520000 : 250000) + 3 * US;     /* flops per ns */
    case C_ATTN:
        return work / (gpu ? 380000 : 180000) + 8 * US;
    case C_BYTES:
        return work / (gpu ? 2600 : 1300) + 2 * US;         /* bytes per ns */
    case C_FIX:
        return R(g, 2, 9) * US;
    case C_CPU:
        return R(g, 40, 160) * US;
    case C_H2D:
        return work / 22 + 4 * US;
    case C_D2H:
        return R(g, 3, 6) * US;
    }
    return US;
}

static void a_flow(struct gen *g, const char *ph, const char *cat, const char *name, uint64_t id,
                   uint64_t pid, uint64_t tid, uint64_t ts)
{
    ev(g, "{\"ph\": \"%s\", \"bp\": \"e\", \"name\": \"%s\", \"id\": %u, \"pid\": %u, \"tid\": %u, "
          "\"ts\": \"%t\", \"cat\": \"%s\"}", ph, name, id, pid, tid, ts, cat);
}

static void a_h2d(struct gen *g, uint64_t k, uint64_t cann_tid, uint64_t t_launch, int stream,
                  uint64_t t_task)
{
    ev(g, "{\"name\": \"HostToDevice%u\", \"ph\": \"s\", \"cat\": \"HostToDevice\", \"id\": \"%u\", "
          "\"pid\": %u, \"tid\": %u, \"ts\": \"%t\"}", k, k, g->pid_cann, cann_tid, t_launch);
    ev(g, "{\"name\": \"HostToDevice%u\", \"ph\": \"f\", \"id\": \"%u\", \"ts\": \"%t\", "
          "\"cat\": \"HostToDevice\", \"pid\": %u, \"tid\": %u, \"bp\": \"e\"}",
       k, k, t_task, g->pid_hw, g->stream_id[stream]);
}

static void a_cann(struct gen *g, uint64_t tid, const char *name, const char *level, const char *id,
                   uint64_t t0, uint64_t t1, uint64_t k)
{
    ev(g, "{\"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", \"dur\": %T, \"args\": "
          "{\"Thread Id\": %u, \"Mode\": \"ACL_RTS\", \"level\": \"%s\", \"id\": \"%s\", "
          "\"item_id\": \"0\", \"connection_id\": %u}, \"ph\": \"X\"}",
       name, g->pid_cann, tid, t0, t1 - t0, tid, level, id, k);
}

/* A task on the Ascend Hardware layer; d: the shapes of the op it runs (may be NULL). */
static void a_task(struct gen *g, const char *name, int type, int stream, uint64_t t0, uint64_t t1,
                   uint64_t task_id, uint64_t k, const struct dims *d)
{
    int w = ev(g, "{\"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", \"dur\": %T, \"args\": "
                  "{\"Model Id\": 4294967295, \"Task Type\": \"%s\", \"Physic Stream Id\": %u, \"Task Id\": %u, "
                  "\"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": %u}, \"ph\": \"X\"}",
               name, g->pid_hw, g->stream_id[stream], t0, t1 - t0, task_type[type],
               g->stream_id[stream], task_id, k);

    seen(g, t1);
    if (w && g->csv) {
        struct krow *r = krow_push(g);

        r->t0 = t0;
        r->t1 = t1;
        r->task_id = task_id;
        r->stream_id = g->stream_id[stream];
        r->name = name;
        r->d = d;
        r->type = type;
    }
}

static void a_cpu(struct gen *g, uint64_t tid, const char *name, const char *cat, uint64_t t0,
                  uint64_t t1, uint64_t seq, int bwd, const struct dims *d)
{
    if (d)
        ev(g, "{\"ph\": \"X\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
              "\"dur\": %T, \"cat\": \"%s\", \"args\": {\"Sequence number\": %d, "
              "\"Fwd thread id\": %u, \"Input Dims\": \"%s\", \"Input type\": \"%s\"}}",
           name, g->pid, tid, t0, t1 - t0, cat, seq, U(bwd), d->a, d->at);
    else
        ev(g, "{\"ph\": \"X\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
              "\"dur\": %T, \"cat\": \"%s\", \"args\": {\"Sequence number\": %d, "
              "\"Fwd thread id\": %u}}",
           name, g->pid, tid, t0, t1 - t0, cat, seq, U(bwd));
}

#define NOSEQ ((uint64_t)-1)

static void a_counter(struct gen *g, uint64_t ts)
{
    ev(g, "{\"name\": \"APP/HBM\", \"pid\": %u, \"tid\": 0, \"ts\": \"%t\", \"ph\": \"C\", "
          "\"args\": {\"KB\": %u}}", g->pid_mem, ts, g->s.mem >> 10);
}

static uint64_t next_task_id(struct gen *g, int stream)
{
    g->s.task_id[stream] = (g->s.task_id[stream] + 1) & 0xffff;
    return g->s.task_id[stream];
}

/*
 * One device op: the aten cpu_op and its aclnn child on the current Python
 * thread, the task-queue hop (Enqueue -> Dequeue, enqueue_to_dequeue flow),
 * the CANN calls on the dequeue thread (AscendCL@api, Node@launch per
 * kernel), the kernels on the compute stream, and per kernel a HostToDevice
 * and a torch_to_npu flow. d (may be NULL) gives the recorded input shapes.
 */
static void a_op(struct gen *g, const struct aop *op, uint64_t work, const struct dims *d,
                 uint64_t seq, int bwd)
{
    struct state *s = &g->s;
    uint64_t t0, a0, a1, e0, e1, t1, q, dq0, dq1, c0, c1, w0 = 0, w1 = 0, cur, base;
    uint64_t l0[3], l1[3], k0[3], k1[3], kc[3], kid[3];
    uint64_t tid = g->ptid;
    int i, mem = op->k[0].type == T_MEMCPY;

    if (!unit(g))
        return;
    t0 = s->host;
    a0 = t0 + R(g, 2000, 7000);
    e0 = a0 + R(g, 2500, 9000);
    e1 = e0 + R(g, 5000, 16000);
    a1 = e1 + R(g, 800, 3500);
    t1 = a1 + R(g, 600, 2800);
    s->host = t1 + R(g, 1000, 6000);
    q = ++s->corr;
    dq0 = max64(e1 + R(g, 2000, 9000), s->deq);
    c0 = dq0 + R(g, 1000, 3000);
    if (op->ws) {
        w0 = c0;
        w1 = w0 + R(g, 3000, 11000);
        c0 = w1 + R(g, 500, 2000);
    }
    cur = c0 + R(g, 1500, 4500);
    base = op_time(g, op->cls, work);
    for (i = 0; i < op->nk; i++) {
        uint64_t kd = jitter(&s->rng, base * op->k[i].pct / 100, 8);

        l0[i] = cur;
        l1[i] = cur + R(g, 4000, 13000);
        k0[i] = max64(l1[i] + R(g, 1500, 6000), s->dev[S_COMPUTE]);
        k1[i] = k0[i] + max64(kd, 900 + R(g, 0, 600));
        s->dev[S_COMPUTE] = k1[i] + R(g, 150, 1800);
        kc[i] = ++s->conn;
        kid[i] = next_task_id(g, S_COMPUTE);
        cur = l1[i] + R(g, 800, 2500);
        if (!g->step_dev0)
            g->step_dev0 = k0[i];
    }
    c1 = cur;
    dq1 = c1 + R(g, 600, 2400);
    s->deq = dq1;
    if (op->cls == C_D2H)       /* .item(): the host waits for the copy */
        s->host = max64(s->host, k1[op->nk - 1] + R(g, 3000, 8000));
    s->nlaunch++;
    if (bwd)
        s->mem = s->mem > act(g) ? s->mem - act(g) / 2 : s->mem;
    else
        s->mem += act(g) / 2;

    a_cpu(g, tid, op->api, "cpu_op", a0, a1, NOSEQ, 0, NULL);
    a_cpu(g, tid, op->aten, "cpu_op", t0, t1, seq, bwd, d);
    ev(g, "{\"ph\": \"X\", \"name\": \"Enqueue\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
          "\"dur\": %T, \"cat\": \"enqueue\", \"args\": {\"correlation_id\": %u}}",
       g->pid, tid, e0, e1 - e0, q);
    a_flow(g, "s", "async_task_queue", "enqueue_to_dequeue", q, g->pid, tid, e0);
    ev(g, "{\"ph\": \"X\", \"name\": \"Dequeue@%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
          "\"dur\": %T, \"cat\": \"dequeue\", \"args\": {\"correlation_id\": %u}}",
       op->api, g->pid, g->tid_deq, dq0, dq1 - dq0, q);
    a_flow(g, "f", "async_task_queue", "enqueue_to_dequeue", q, g->pid, g->tid_deq, dq0);
    if (op->ws) {
        char nm[96], id[80];
        snprintf(id, sizeof id, "%sGetWorkspaceSize", op->api);
        snprintf(nm, sizeof nm, "AscendCL@%s", id);
        a_cann(g, g->tid_deq, nm, "acl", id, w0, w1, 0);
    }
    {
        char nm[96];
        snprintf(nm, sizeof nm, "AscendCL@%s", op->api);
        a_cann(g, g->tid_deq, nm, "acl", op->api, c0, c1, 0);
    }
    for (i = 0; i < op->nk; i++) {
        const struct akern *k = &op->k[i];

        if (mem)
            a_cann(g, g->tid_deq, "Runtime@MemcpyAsync", "runtime", "MemcpyAsync", l0[i], l1[i], kc[i]);
        else
            a_cann(g, g->tid_deq, "Node@launch", "node", k->name, l0[i], l1[i], kc[i]);
        a_task(g, k->name, k->type, S_COMPUTE, k0[i], k1[i], kid[i], kc[i], d);
        a_h2d(g, kc[i], g->tid_deq, l0[i], S_COMPUTE, k0[i]);
        a_flow(g, "s", "async_npu", "torch_to_npu", k0[i], g->pid, tid, a0);
        a_flow(g, "f", "async_npu", "torch_to_npu", k0[i], g->pid_hw, g->stream_id[S_COMPUTE], k0[i]);
        if (k->type != T_MEMCPY)
            iv_push(&g->comp, k0[i], k1[i]);
    }
    if (s->nlaunch % 4 == 0)
        a_counter(g, k1[op->nk - 1]);
}

/* A host-only cpu_op (views, metadata ops): one event. */
static void a_host(struct gen *g, const char *name, uint64_t seq, int bwd)
{
    uint64_t t0 = g->s.host, t1;

    if (!unit(g))
        return;
    t1 = t0 + R(g, 1200, 9000);
    g->s.host = t1 + R(g, 500, 3000);
    a_cpu(g, g->ptid, name, "cpu_op", t0, t1, seq, bwd, NULL);
}

static uint64_t a_begin(struct gen *g)
{
    uint64_t t = g->s.host;
    g->s.host += R(g, 600, 2500);
    return t;
}

/* Closes a parent cpu_op opened by a_begin; written after its children. */
static void a_end(struct gen *g, const char *name, uint64_t t0, uint64_t seq, int bwd,
                  const struct dims *d)
{
    g->s.host += R(g, 400, 2000);
    if (!unit(g))
        return;
    a_cpu(g, g->ptid, name, "cpu_op", t0, g->s.host, seq, bwd, d);
}

/* nn.Linear forward: aten::linear { aten::t, aten::matmul { aten::mm } }. */
static void a_linear(struct gen *g, int l)
{
    const struct dims *d = &g->dm[D_MM + 3 * l];
    uint64_t seq = g->s.seq++, t0 = a_begin(g), m0;

    a_host(g, "aten::t", NOSEQ, 0);
    m0 = a_begin(g);
    fw_push(g, m0, seq);
    a_op(g, l == L_LM ? &A_MM_LM : &A_MM, lin_flops(g, l), d, seq, 0);
    a_end(g, "aten::matmul", m0, seq, 0, d);
    a_end(g, "aten::linear", t0, seq, 0, d);
}

/* A forward op with its own sequence number. */
static void a_fop(struct gen *g, const struct aop *op, uint64_t work, int dm)
{
    uint64_t seq = g->s.seq++;
    a_op(g, op, work, &g->dm[dm], seq, 0);
}

static void a_tail_ops(struct gen *g, int bwd, unsigned max)
{
    unsigned i, n = (unsigned)R(g, 0, max);

    for (i = 0; i < n; i++) {
        const struct ewop *e = ew_pick(g);
        a_op(g, &e->a, act(g) * 2, &g->dm[e->a.aten[strlen(e->a.aten) - 1] == '_' ? D_EW1 : D_EW],
             bwd ? NOSEQ : g->s.seq++, bwd);
    }
}

/* autograd::engine::evaluate_function: NameBackward0 { NameBackward0 { ops } } */
static uint64_t a_bw_begin(struct gen *g, uint64_t *t1)
{
    uint64_t t0 = a_begin(g);

    *t1 = a_begin(g);
    return t0;
}

static void a_bw_end(struct gen *g, const char *fn, uint64_t t0, uint64_t t1, uint64_t seq)
{
    char nm[96];

    a_end(g, fn, t1, seq, 1, NULL);
    snprintf(nm, sizeof nm, "autograd::engine::evaluate_function: %s", fn);
    a_end(g, nm, t0, seq, 1, NULL);
}

/* MmBackward0 of linear l: dX and dW matmuls, plus its fwdbwd flow. */
static void a_linear_bw(struct gen *g, int l)
{
    uint64_t t0, t1, seq = NOSEQ, fts = 0;

    if (g->nfw) {
        g->nfw--;
        seq = g->fw[g->nfw].seq;
        fts = g->fw[g->nfw].ts;
    }
    t0 = a_bw_begin(g, &t1);
    if (seq != NOSEQ && unit(g)) {
        a_flow(g, "s", "fwdbwd", "fwdbwd", seq, g->pid, g->tid_main, fts);
        a_flow(g, "f", "fwdbwd", "fwdbwd", seq, g->pid, g->tid_bwd, t0);
    }
    a_host(g, "aten::t", NOSEQ, 1);
    a_op(g, &A_MM, lin_flops(g, l), &g->dm[D_MM + 3 * l + 1], seq, 1);
    a_host(g, "aten::t", NOSEQ, 1);
    a_op(g, &A_MM_DW, lin_flops(g, l), &g->dm[D_MM + 3 * l + 2], seq, 1);
    a_bw_end(g, "MmBackward0", t0, t1, seq);
}

static void a_simple_bw(struct gen *g, const char *fn, const struct aop *op, uint64_t work, int dm)
{
    uint64_t t0, t1;

    t0 = a_bw_begin(g, &t1);
    if (op)
        a_op(g, op, work, &g->dm[dm], NOSEQ, 1);
    a_bw_end(g, fn, t0, t1, NOSEQ);
}

static void a_accumulate(struct gen *g, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        uint64_t t0, t1;

        t0 = a_bw_begin(g, &t1);
        a_host(g, "aten::detach", NOSEQ, 1);
        a_bw_end(g, "torch::autograd::AccumulateGrad", t0, t1, NOSEQ);
    }
}

/* Stream wait on the compute stream for all communication launched so far. */
static void a_wait_comm(struct gen *g)
{
    struct state *s = &g->s;
    uint64_t c0, c1, k, t0, t1, id;

    if (!unit(g))
        return;
    c0 = s->host + R(g, 1000, 3000);
    c1 = c0 + R(g, 3000, 8000);
    s->host = c1 + R(g, 1000, 3000);
    k = ++s->conn;
    t0 = max64(c1 + R(g, 1500, 5000), s->dev[S_COMPUTE]);
    t1 = max64(t0 + R(g, 800, 1500), s->dev[S_COMM]);
    s->dev[S_COMPUTE] = t1 + R(g, 200, 1000);
    id = next_task_id(g, S_COMPUTE);
    a_cann(g, g->ptid, "AscendCL@aclrtStreamWaitEvent", "acl", "aclrtStreamWaitEvent", c0, c1, k);
    a_task(g, "EVENT_WAIT", T_EW, S_COMPUTE, t0, t1, id, k, NULL);
    a_h2d(g, k, g->ptid, c0, S_COMPUTE, t0);
}

enum { HC_ALLREDUCE, HC_ALLGATHER, HC_SEND, HC_RECV };

/*
 * One HCCL collective or p2p op: c10d cpu_ops on the current thread, an
 * AscendCL call, the op on the Communication layer and its tasks on the
 * communication stream, which waits for the compute stream (the data) and
 * then overlaps whatever compute comes next.
 */
static void a_comm(struct gen *g, int kind, uint64_t bytes)
{
    static const char *const c10d[] = {"c10d::allreduce_", "c10d::_allgather_base_", "c10d::send", "c10d::recv_"};
    static const char *const hccl[] = {"HcclAllreduce", "HcclAllgather", "HcclSend", "HcclRecv"};
    static const char *const api[] = {"HcclAllReduce", "HcclAllGather", "HcclSend", "HcclRecv"};
    static const char *const hcom[] = {"allReduce", "allGather", "send", "receive"};
    struct state *s = &g->s;
    uint64_t p0, p1, q0, q1, c0, c1, k, cs, ce, dur, t, rem, ids[8], ts[8], te[8];
    unsigned r = g->ranks, i, np;
    char nm[80], hn[64];

    if (g->ranks < 2 || !unit(g))
        return;
    p0 = s->host;
    q0 = p0 + R(g, 2000, 6000);
    c0 = q0 + R(g, 2000, 5000);
    c1 = c0 + R(g, 8000, 30000);
    q1 = c1 + R(g, 1000, 3000);
    p1 = q1 + R(g, 1000, 3000);
    s->host = p1 + R(g, 1000, 5000);
    k = ++s->conn;
    if (kind == HC_SEND || kind == HC_RECV)
        dur = bytes / 25;                                   /* p2p link, bytes per ns */
    else if (kind == HC_ALLREDUCE)
        dur = bytes * 2 * (r - 1) / r / 40;
    else
        dur = bytes * (r - 1) / r / 40;
    dur = jitter(&s->rng, dur + 20 * US + 2 * US * r, 12);
    cs = max64(max64(c1 + R(g, 2000, 6000), s->dev[S_COMM]),
               kind == HC_RECV ? 0 : s->dev[S_COMPUTE]);   /* waits for its data */
    /* EVENT_WAIT, then alternating NOTIFY_WAIT / MEMCPY_ASYNC pieces, then EVENT_RECORD */
    np = (unsigned)R(g, 2, 5);
    ts[0] = cs;
    te[0] = cs + R(g, 600, 1400);
    t = te[0];
    for (i = 1; i <= np; i++) {
        ts[i] = t + R(g, 100, 600);
        rem = cs + dur > ts[i] ? cs + dur - ts[i] : 0;
        te[i] = ts[i] + max64(rem / (np - i + 1), 500);
        t = te[i];
    }
    ce = te[np];
    ts[np + 1] = ce + R(g, 100, 500);
    te[np + 1] = ts[np + 1] + R(g, 600, 1200);
    s->dev[S_COMM] = te[np + 1] + R(g, 500, 2000);
    for (i = 0; i < np + 2; i++)
        ids[i] = next_task_id(g, S_COMM);
    iv_push(&g->comm, cs, ce);
    if (kind == HC_RECV)
        g->bubble += ce - cs;
    if (!g->step_dev0)
        g->step_dev0 = cs;

    a_cpu(g, g->ptid, hccl[kind], "cpu_op", q0, q1, NOSEQ, 0, NULL);
    a_cpu(g, g->ptid, c10d[kind], "cpu_op", p0, p1, NOSEQ, 0, NULL);
    snprintf(nm, sizeof nm, "AscendCL@%s", api[kind]);
    a_cann(g, g->ptid, nm, "acl", api[kind], c0, c1, k);
    snprintf(hn, sizeof hn, "hcom_%s__%u_%llu_1", hcom[kind], g->hcom_group,
             (unsigned long long)g->hcom_idx[kind]++);
    if (ev(g, "{\"name\": \"%s\", \"pid\": %u, \"tid\": 0, \"ts\": \"%t\", \"dur\": %T, \"args\": "
              "{\"connection_id\": %u, \"model id\": 4294967295, \"data_type\": \"FP16\", "
              "\"alg_type\": \"%s\", \"count\": %u}, \"ph\": \"X\"}",
           hn, g->pid_comm, cs, ce - cs, k, kind >= HC_SEND ? "NA" : "RING", bytes / 2) && g->csv) {
        struct krow *row = krow_push(g);

        row->t0 = cs;
        row->t1 = ce;
        snprintf(row->hcom, sizeof row->hcom, "%s", hn);
    }
    for (i = 0; i < np + 2; i++) {
        const char *n = i == 0 ? "EVENT_WAIT" : i == np + 1 ? "EVENT_RECORD" : i % 2 ? "Notify_Wait" : "Memcpy";
        int type = i == 0 ? T_EW : i == np + 1 ? T_ER : i % 2 ? T_NOTIFY : T_MEMCPY;
        a_task(g, n, type, S_COMM, ts[i], te[i], ids[i], k, NULL);
    }
    a_h2d(g, k, g->ptid, c0, S_COMM, cs);
}

/*
 * Overlap Analysis lanes of one step, from its compute and comm intervals
 * (not a unit of its own: it covers whatever ops the step got, so cutting a
 * step stays fine-grained).
 */
static void a_overlap(struct gen *g)
{
    struct ival *c = g->comp.v, *m = g->comm.v;
    size_t nc = g->comp.n, nm = g->comm.n, i, j;
    uint64_t a, b, w0, w1, cur;

    if (!nc && !nm)
        return;
    /* Computing: compute tasks, touching ones merged (one stream: sorted) */
    for (i = 0; i < nc; i = j) {
        a = c[i].a;
        b = c[i].b;
        for (j = i + 1; j < nc && c[j].a <= b; j++)
            b = max64(b, c[j].b);
        ev(g, "{\"name\": \"Computing\", \"pid\": %u, \"tid\": 0, \"ts\": \"%t\", \"dur\": %T, "
              "\"ph\": \"X\"}", g->pid_ovl, a, b - a);
    }
    for (i = 0; i < nm; i++)
        ev(g, "{\"name\": \"Communication\", \"pid\": %u, \"tid\": 1, \"ts\": \"%t\", \"dur\": %T, "
              "\"ph\": \"X\"}", g->pid_ovl, m[i].a, m[i].b - m[i].a);
    /* Communication(Not Overlapped): comm minus compute */
    for (i = 0, j = 0; i < nm; i++) {
        cur = m[i].a;
        while (j < nc && c[j].b <= cur)
            j++;
        for (; j < nc && c[j].a < m[i].b; j++) {
            if (c[j].a > cur)
                ev(g, "{\"name\": \"Communication(Not Overlapped)\", \"pid\": %u, \"tid\": 2, "
                      "\"ts\": \"%t\", \"dur\": %T, \"ph\": \"X\"}", g->pid_ovl, cur, c[j].a - cur);
            cur = max64(cur, c[j].b);
            if (cur >= m[i].b)
                break;
        }
        if (cur < m[i].b)
            ev(g, "{\"name\": \"Communication(Not Overlapped)\", \"pid\": %u, \"tid\": 2, "
                  "\"ts\": \"%t\", \"dur\": %T, \"ph\": \"X\"}", g->pid_ovl, cur, m[i].b - cur);
    }
    /* Free: gaps in compute ∪ comm between the step's first and last device work */
    w0 = UINT64_MAX;
    w1 = 0;
    if (nc) {
        w0 = c[0].a;
        w1 = c[nc - 1].b;
    }
    if (nm) {
        w0 = w0 < m[0].a ? w0 : m[0].a;
        w1 = max64(w1, m[nm - 1].b);
    }
    cur = w0;
    for (i = 0, j = 0; i < nc || j < nm;) {
        struct ival *x = (j >= nm || (i < nc && c[i].a <= m[j].a)) ? &c[i++] : &m[j++];
        if (x->a > cur)
            ev(g, "{\"name\": \"Free\", \"pid\": %u, \"tid\": 3, \"ts\": \"%t\", \"dur\": %T, "
                  "\"ph\": \"X\"}", g->pid_ovl, cur, x->a - cur);
        cur = max64(cur, x->b);
    }
    assert(cur == w1);
}

static void a_layer_fwd(struct gen *g)
{
    a_fop(g, &A_RMS, act(g) * 2, D_NORM);
    a_linear(g, L_QKV);
    a_host(g, "aten::view", NOSEQ, 0);
    a_host(g, "aten::split", NOSEQ, 0);
    a_host(g, "aten::transpose", NOSEQ, 0);
    a_fop(g, &A_ROPE, act(g) * 3, D_EW);
    a_fop(g, &A_ROPE, act(g) * 3, D_EW);
    a_fop(g, &A_FA, 4 * g->B * g->S * g->S * g->H / 2, D_ATTN);
    a_host(g, "aten::transpose", NOSEQ, 0);
    a_host(g, "aten::reshape", NOSEQ, 0);
    a_linear(g, L_O);
    a_fop(g, &A_ADD, act(g) * 3, D_EW);
    a_fop(g, &A_RMS, act(g) * 2, D_NORM);
    a_linear(g, L_UP);
    a_fop(g, &A_SWI, act(g) * 3 * g->F / g->H, D_SWI);
    a_linear(g, L_DOWN);
    a_fop(g, &A_ADD, act(g) * 3, D_EW);
    a_tail_ops(g, 0, 2);
}

static void a_layer_bwd(struct gen *g)
{
    a_simple_bw(g, "AddBackward0", NULL, 0, 0);
    a_linear_bw(g, L_DOWN);
    a_simple_bw(g, "NpuSwigluBackward0", &A_SWIG, act(g) * 5 * g->F / g->H, D_SWIG);
    a_linear_bw(g, L_UP);
    a_simple_bw(g, "NpuRmsNormBackward0", &A_RMSG, act(g) * 4, D_NORM);
    a_simple_bw(g, "AddBackward0", &A_ADD, act(g) * 3, D_EW);
    a_linear_bw(g, L_O);
    a_simple_bw(g, "NpuFusionAttentionBackward0", &A_FAG, 4 * g->B * g->S * g->S * g->H, D_ATTN);
    a_simple_bw(g, "NpuRotaryMulBackward0", &A_ROPEG, act(g) * 3, D_EW);
    a_simple_bw(g, "NpuRotaryMulBackward0", &A_ROPEG, act(g) * 3, D_EW);
    a_linear_bw(g, L_QKV);
    a_simple_bw(g, "NpuRmsNormBackward0", &A_RMSG, act(g) * 4, D_NORM);
    a_tail_ops(g, 1, 2);
    a_accumulate(g, 6);
}

static void a_step(struct gen *g)
{
    struct state *s = &g->s;
    uint64_t step = s->step++, p0, t, emb = g->V * g->H, l;
    unsigned i;
    char nm[32];

    g->comp.n = g->comm.n = 0;
    g->nfw = 0;
    memset(g->hcom_idx, 0, sizeof g->hcom_idx);
    g->step_dev0 = 0;
    g->ptid = g->tid_main;
    p0 = s->host;
    g->step_no = step;
    g->step_p0 = p0;
    g->bubble = 0;
    s->host += R(g, 5000, 20000);

    /* input batch to the device, attention mask, pipeline receive */
    t = a_begin(g);
    a_host(g, "aten::empty_strided", NOSEQ, 0);
    a_op(g, &A_H2D, g->B * g->S * 8, &g->dm[D_IN], NOSEQ, 0);
    a_end(g, "aten::_to_copy", t, NOSEQ, 0, &g->dm[D_IN]);
    a_end(g, "aten::to", t, NOSEQ, 0, &g->dm[D_IN]);
    a_op(g, &A_NZ, 0, &g->dm[D_MASK], NOSEQ, 0);
    a_comm(g, HC_RECV, act(g));
    /* forward */
    a_fop(g, &A_EMB, act(g) * 2, D_EMB);
    for (l = 0; l < g->layers; l++)
        a_layer_fwd(g);
    a_fop(g, &A_RMS, act(g) * 2, D_NORM);
    a_linear(g, L_LM);
    a_fop(g, &A_CAST, g->B * g->S * g->V * 6, D_LSM);
    a_fop(g, &A_LSM, g->B * g->S * g->V * 8, D_LSM);
    a_fop(g, &A_NLL, 0, D_LOSS);
    a_comm(g, HC_SEND, act(g));
    /* backward: autograd thread, a gradient bucket all-reduced per layer */
    a_op(g, &A_ONES, 0, &g->dm[D_SCALAR], NOSEQ, 0);
    g->ptid = g->tid_bwd;
    a_simple_bw(g, "NllLossBackward0", &A_NLLG, 0, D_LOSS);
    a_simple_bw(g, "LogSoftmaxBackward0", &A_LSMG, g->B * g->S * g->V * 8, D_LSM);
    a_simple_bw(g, "ToCopyBackward0", &A_CAST, g->B * g->S * g->V * 6, D_LSM);
    a_linear_bw(g, L_LM);
    a_simple_bw(g, "NpuRmsNormBackward0", &A_RMSG, act(g) * 4, D_NORM);
    for (l = 0; l < g->layers; l++) {
        a_layer_bwd(g);
        a_comm(g, HC_ALLREDUCE, layer_params(g) * 2);
    }
    a_simple_bw(g, "EmbeddingBackward0", &A_EMBG, emb * 2, D_EMB);
    a_comm(g, HC_ALLREDUCE, (emb + lin_params(g, L_LM)) * 2);
    a_comm(g, HC_SEND, act(g));
    /* optimizer: wait for the gradients, clip, AdamW (foreach), gather params */
    g->ptid = g->tid_main;
    a_wait_comm(g);
    t = a_begin(g);
    {
        uint64_t pb = (g->layers * layer_params(g) + emb + lin_params(g, L_LM)) * 4;
        static const struct aop *const adam[] = {&A_FADD, &A_FLERP, &A_FMUL, &A_FADDCMUL,
                                                 &A_FSQRT, &A_FDIV, &A_FADD, &A_FADDCDIV};
        a_op(g, &A_FNORM, pb, &g->dm[D_PARAM], NOSEQ, 0);
        a_host(g, "aten::stack", NOSEQ, 0);
        a_op(g, &A_VNORM, 0, &g->dm[D_EW1], NOSEQ, 0);
        a_op(g, &A_CLAMP, 0, &g->dm[D_SCALAR], NOSEQ, 0);
        a_op(g, &A_FMUL, pb, &g->dm[D_PARAM], NOSEQ, 0);
        for (i = 0; i < sizeof adam / sizeof adam[0]; i++)
            a_op(g, adam[i], pb * (i == 3 || i == 7 ? 3 : 2), &g->dm[D_PARAM], NOSEQ, 0);
    }
    a_end(g, "Optimizer.step#AdamW.step", t, NOSEQ, 0, NULL);
    a_comm(g, HC_ALLGATHER, (g->layers * layer_params(g)) * 2);
    t = a_begin(g);
    a_op(g, &A_ZERO, g->layers * layer_params(g) * 2, &g->dm[D_PARAM], NOSEQ, 0);
    a_end(g, "Optimizer.zero_grad#AdamW.zero_grad", t, NOSEQ, 0, NULL);
    /* loss.item(): a synchronizing copy back */
    t = a_begin(g);
    a_op(g, &A_D2H, 4, &g->dm[D_SCALAR], NOSEQ, 0);
    a_end(g, "aten::item", t, NOSEQ, 0, &g->dm[D_SCALAR]);

    /* step end: synchronize, close the step, overlap lanes, a memory sample */
    {
        uint64_t c0 = s->host + R(g, 1000, 4000);
        uint64_t c1 = c0 + R(g, 3000, 9000);
        uint64_t de = max64(s->dev[S_COMPUTE], s->dev[S_COMM]) + R(g, 2000, 6000);

        c1 = max64(c1, de);
        a_cann(g, g->tid_main, "AscendCL@aclrtSynchronizeStream", "acl", "aclrtSynchronizeStream",
               c0, c1, 0);
        s->host = c1 + R(g, 2000, 8000);
    }
    snprintf(nm, sizeof nm, "ProfilerStep#%llu", (unsigned long long)step);
    a_cpu(g, g->tid_main, nm, "cpu_op", p0, s->host, NOSEQ, 0, NULL);
    a_overlap(g);
    s->mem = g->layers * layer_params(g) * 16;    /* weights, grads, AdamW states */
    a_counter(g, s->host);
    seen(g, s->host);
    s->host += R(g, 20000, 200000);               /* dataloader between steps */
    s->deq = max64(s->deq, s->host);
    s->dev[S_COMPUTE] = max64(s->dev[S_COMPUTE], s->host);
    s->dev[S_COMM] = max64(s->dev[S_COMM], s->host);
}

static void a_fill(struct gen *g, uint64_t n)
{
    while (n--) {
        g->s.tend += R(g, 20, 80) * US;
        a_counter(g, g->s.tend);
    }
}

static void a_meta_proc(struct gen *g, uint64_t pid, const char *name, const char *labels, unsigned sort)
{
    ev(g, "{\"name\": \"process_name\", \"pid\": %u, \"tid\": 0, \"args\": {\"name\": \"%s\"}, \"ph\": \"M\"}",
       pid, name);
    ev(g, "{\"name\": \"process_labels\", \"pid\": %u, \"tid\": 0, \"args\": {\"labels\": \"%s\"}, \"ph\": \"M\"}",
       pid, labels);
    ev(g, "{\"name\": \"process_sort_index\", \"pid\": %u, \"tid\": 0, \"args\": {\"sort_index\": %u}, "
          "\"ph\": \"M\"}", pid, U(sort));
}

static void a_meta_thread(struct gen *g, uint64_t pid, uint64_t tid, const char *name, uint64_t sort)
{
    ev(g, "{\"name\": \"thread_name\", \"pid\": %u, \"tid\": %u, \"args\": {\"name\": \"%s\"}, \"ph\": \"M\"}",
       pid, tid, name);
    ev(g, "{\"name\": \"thread_sort_index\", \"pid\": %u, \"tid\": %u, \"args\": {\"sort_index\": %u}, "
          "\"ph\": \"M\"}", pid, tid, sort);
}

static void a_tail(struct gen *g)
{
    static const char *const lanes[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
    char sn[24];
    unsigned i;

    a_meta_proc(g, g->pid, "Python", "CPU", 0);
    a_meta_thread(g, g->pid, g->tid_main, g->name_main, g->tid_main);
    a_meta_thread(g, g->pid, g->tid_deq, g->name_deq, g->tid_deq);
    a_meta_thread(g, g->pid, g->tid_bwd, g->name_bwd, g->tid_bwd);
    a_meta_proc(g, g->pid_cann, "CANN", "CPU", 7);
    a_meta_thread(g, g->pid_cann, g->tid_main, g->name_main, g->tid_main);
    a_meta_thread(g, g->pid_cann, g->tid_deq, g->name_deq, g->tid_deq);
    a_meta_thread(g, g->pid_cann, g->tid_bwd, g->name_bwd, g->tid_bwd);
    a_meta_proc(g, g->pid_hw, "Ascend Hardware", g->npu_label, 14);
    for (i = 0; i < NSTREAM; i++) {
        snprintf(sn, sizeof sn, "Stream %llu", (unsigned long long)g->stream_id[i]);
        a_meta_thread(g, g->pid_hw, g->stream_id[i], sn, g->stream_id[i]);
    }
    a_meta_proc(g, g->pid_comm, "Communication", g->npu_label, 16);
    a_meta_thread(g, g->pid_comm, 0, "Group 0 Communication", 0);
    a_meta_proc(g, g->pid_mem, "NPU MEM", g->npu_label, 17);
    a_meta_proc(g, g->pid_ovl, "Overlap Analysis", g->npu_label, 31);
    for (i = 0; i < 4; i++)
        a_meta_thread(g, g->pid_ovl, i, lanes[i], i);
}

/* ------------------------------------------------------------------------ */
/* torch_npu_dir: kernel_details.csv and step_trace_time.csv.               */

static const char kd_header[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID\n";
static const char st_header[] =
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,"
    "Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n";

static void put_u(struct out *o, uint64_t v)
{
    char b[24];
    out_put(o, b, fmt_u(b, v));
}

/* ns as µs: exactly 3 decimals, or trailing zeros trimmed (one kept). */
static void put_us(struct out *o, uint64_t ns, int trim)
{
    char b[48];
    out_put(o, b, fmt_fixed(b, ns, 3, trim));
}

/* A shape list in torch_npu's CSV style: the field holds it in quotes, doubled. */
static void put_shapes(struct out *o, const char *shapes)
{
    out_str(o, "\"\"\"");
    out_str(o, shapes);
    out_str(o, "\"\"\"");
}

/* Rows by start; rows starting together keep the order they were written in. */
static int krow_cmp(const void *a, const void *b)
{
    const struct krow *x = a, *y = b;

    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/*
 * One kernel_details.csv row. Kernels (AI_CORE, AI_VECTOR_CORE, MIX_AIC,
 * AI_CPU) carry their op's shapes and the op type that ends their name
 * (aclnnMm_MatMulV3_MatMulV3 -> MatMulV3); other tasks (memcpy, event and
 * notify tasks) and HCCL ops have N/A there, as in real files. Wait Time is
 * the gap after the previous row's end, 0 when they overlap.
 */
static void kd_row(struct gen *g, const struct krow *r)
{
    static const unsigned block_dim[] = {20, 40, 24, 1};   /* T_AIC, T_AIV, T_MIX, T_AICPU */
    struct out *o = &g->kd;
    uint64_t wait = g->kd_prev_end && r->t0 > g->kd_prev_end ? r->t0 - g->kd_prev_end : 0;
    int kernel = r->name && r->d && r->type <= T_AICPU;

    g->kd_prev_end = r->t1;
    put_u(o, g->step_no);
    out_str(o, ",4294967295,");
    if (r->name) {
        const char *u = strrchr(r->name, '_');

        put_u(o, r->task_id);
        out_put(o, ",", 1);
        put_u(o, r->stream_id);
        out_put(o, ",", 1);
        out_str(o, r->name);
        out_put(o, ",", 1);
        out_str(o, kernel && u ? u + 1 : task_type[r->type]);
        out_put(o, ",", 1);
        out_str(o, task_type[r->type]);
    } else {
        const char *u = strstr(r->hcom, "__");      /* hcom_allReduce__506_0_1 -> hcom_allReduce_ */

        out_str(o, "N/A,N/A,");
        out_str(o, r->hcom);
        out_put(o, ",", 1);
        out_put(o, r->hcom, u ? (size_t)(u - r->hcom) + 1 : strlen(r->hcom));
        out_str(o, ",HCCL");
    }
    out_str(o, ",\"");
    put_us(o, r->t0, 0);
    out_str(o, "\t\",");
    put_us(o, r->t1 - r->t0, 1);
    out_put(o, ",", 1);
    put_us(o, wait, 1);
    if (kernel) {
        out_put(o, ",", 1);
        put_u(o, block_dim[r->type]);
        out_str(o, r->type == T_MIX ? ",48,NO," : ",0,NO,");
        put_shapes(o, r->d->a);
        out_put(o, ",", 1);
        out_str(o, r->d->dt);
        out_put(o, ",", 1);
        out_str(o, r->d->fm);
        out_put(o, ",", 1);
        put_shapes(o, r->d->o);
        out_put(o, ",", 1);
        out_str(o, r->d->odt);
        out_put(o, ",", 1);
        out_str(o, r->d->ofm);
        out_str(o, r->type == T_MIX ? ",0\n" : ",N/A\n");
    } else {
        out_str(o, ",0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n");
    }
}

/* |union| of intervals sorted by start (touching ones merge). */
static uint64_t iv_union(const struct ival *v, size_t n)
{
    uint64_t sum = 0, a, b;
    size_t i = 0;

    while (i < n) {
        a = v[i].a;
        b = v[i].b;
        for (i++; i < n && v[i].a <= b; i++)
            b = max64(b, v[i].b);
        sum += b - a;
    }
    return sum;
}

/* |union| of two start-sorted lists, with the first start and the last end. */
static uint64_t iv_union2(const struct ivec *x, const struct ivec *y, uint64_t *first, uint64_t *last)
{
    size_t i = 0, j = 0;
    uint64_t sum = 0, a = 0, b = 0;
    int open = 0;

    *first = *last = 0;
    while (i < x->n || j < y->n) {
        const struct ival *v = (j >= y->n || (i < x->n && x->v[i].a <= y->v[j].a)) ? &x->v[i++] : &y->v[j++];

        if (open && v->a <= b) {
            b = max64(b, v->b);
            continue;
        }
        if (open)
            sum += b - a;
        else
            *first = v->a;
        a = v->a;
        b = v->b;
        open = 1;
    }
    if (open) {
        sum += b - a;
        *last = b;
    }
    return sum;
}

/*
 * The step_trace_time.csv row of a complete step, from the same compute and
 * communication intervals as its Overlap Analysis lanes (metrics.md, policy
 * torch_npu): Computing |U(compute)|, Communication |U(comm)|, Not Overlapped
 * |U(comm) \ U(compute)|, Free the gaps between busy intervals, Stage the
 * busy span less Bubble (the receive ops), Preparing the first device work
 * after the step's host start.
 */
static void st_row(struct gen *g)
{
    struct out *o = &g->st;
    uint64_t comp = iv_union(g->comp.v, g->comp.n), comm = iv_union(g->comm.v, g->comm.n);
    uint64_t w0, w1, busy = iv_union2(&g->comp, &g->comm, &w0, &w1);
    uint64_t cno = busy - comp, span = w1 - w0;
    uint64_t v[9];
    unsigned i;

    v[0] = comp;
    v[1] = cno;
    v[2] = comm - cno;
    v[3] = comm;
    v[4] = span - busy;
    v[5] = span > g->bubble ? span - g->bubble : 0;
    v[6] = g->bubble;
    v[7] = cno > g->bubble ? cno - g->bubble : 0;
    v[8] = busy && w0 > g->step_p0 ? w0 - g->step_p0 : 0;
    put_u(o, g->dev_id);
    out_put(o, ",", 1);
    put_u(o, g->step_no);
    for (i = 0; i < 9; i++) {
        out_put(o, ",", 1);
        put_us(o, v[i], 1);
    }
    out_put(o, "\n", 1);
}

/* After a step is written: its kernel_details rows, and its step trace if complete. */
static void csv_step(struct gen *g)
{
    size_t i;

    if (g->nrows)
        qsort(g->rows, g->nrows, sizeof *g->rows, krow_cmp);
    for (i = 0; i < g->nrows; i++)
        kd_row(g, &g->rows[i]);
    g->nrows = 0;
    if (!g->cut)
        st_row(g);
}

/* ------------------------------------------------------------------------ */
/* Kineto (PyTorch profiler on GPU).                                       */

struct kkern { const char *name; unsigned char drv, pct; unsigned short regs; };

struct kop {
    const char *aten;
    unsigned char cls, nk;
    struct kkern k[3];
};

#define GEMM_TN "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define GEMM_NN "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
#define GEMM_NT "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define FLASH_TR "pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >"

static const struct kop K_MM = {"aten::mm", C_MM, 1, {{GEMM_TN, 0, 100, 168}}};
static const struct kop K_MM_DX = {"aten::mm", C_MM, 1, {{GEMM_NN, 0, 100, 168}}};
static const struct kop K_MM_DW = {"aten::mm", C_MM, 1, {{GEMM_NT, 0, 100, 168}}};
static const struct kop K_RMS = {"aten::mul", C_BYTES, 1, {{"triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", 1, 100, 32}}};
static const struct kop K_RMSG = {"aten::mul", C_BYTES, 2, {
    {"triton_red_fused__to_copy_add_div_mul_pow_sum_1", 1, 70, 40},
    {"triton_per_fused__to_copy_mul_sum_2", 1, 30, 24}}};
static const struct kop K_ROPE = {"aten::add", C_BYTES, 1, {{"triton_poi_fused_add_cat_mul_neg_slice_3", 1, 100, 20}}};
static const struct kop K_ROPEG = {"aten::add", C_BYTES, 1, {{"triton_poi_fused_add_cat_mul_neg_slice_4", 1, 100, 20}}};
static const struct kop K_FA = {"aten::_flash_attention_forward", C_ATTN, 1, {
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, "
     "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", 0, 100, 255}}};
static const struct kop K_FAG = {"aten::_flash_attention_backward", C_ATTN, 3, {
    {"void pytorch_flash::flash_bwd_dot_do_o_kernel<true, " FLASH_TR ">(pytorch_flash::Flash_bwd_params)", 0, 4, 32},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<" FLASH_TR ", true, true, false, false, "
     "false, true, false, false>(pytorch_flash::Flash_bwd_params)", 0, 90, 255},
    {"void pytorch_flash::flash_bwd_convert_dq_kernel<" FLASH_TR ">(pytorch_flash::Flash_bwd_params, int)", 0, 6, 40}}};
static const struct kop K_SWI = {"aten::mul", C_BYTES, 1, {{"triton_poi_fused_mul_silu_5", 1, 100, 18}}};
static const struct kop K_SWIG = {"aten::mul", C_BYTES, 1, {{"triton_poi_fused_mul_sigmoid_silu_backward_6", 1, 100, 22}}};
static const struct kop K_ADD = {"aten::add", C_BYTES, 1, {
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", 0, 100, 28}}};
static const struct kop K_EMB = {"aten::embedding", C_BYTES, 1, {
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
     "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, "
     "unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, unsigned int, long)",
     0, 100, 30}}};
static const struct kop K_EMBG = {"aten::embedding_dense_backward", C_BYTES, 2, {
    {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long "
     "const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int)", 0, 85, 40},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, std::array<char*, "
     "1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)", 0, 15, 16}}};
static const struct kop K_LSM = {"aten::_log_softmax", C_BYTES, 1, {
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
     "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
     0, 100, 38}}};
static const struct kop K_LSMG = {"aten::_log_softmax_backward_data", C_BYTES, 1, {
    {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, c10::BFloat16, "
     "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, "
     "c10::BFloat16 const*, int)", 0, 100, 40}}};
static const struct kop K_NLL = {"aten::nll_loss_forward", C_FIX, 1, {
    {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, "
     "long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, "
     "long, long, long)", 0, 100, 32}}};
static const struct kop K_NLLG = {"aten::nll_loss_backward", C_FIX, 1, {
    {"void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, "
     "long>(c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, "
     "int, int, long, long)", 0, 100, 26}}};
static const struct kop K_ONES = {"aten::fill_", C_FIX, 1, {
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, std::array<char*, "
     "1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)", 0, 100, 16}}};
#define MTA "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
static const struct kop K_NORM = {"aten::_foreach_norm", C_BYTES, 2, {
    {MTA "TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float, float>, float*, "
     "int>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
     "LpNormFunctor<float, 2, float, float>, float*, int)", 0, 95, 32},
    {"void at::native::(anonymous namespace)::lpnorm_cleanup<float, 2, float, float>(float const*, "
     "at::native::(anonymous namespace)::TensorListAddresses, int)", 0, 5, 16}}};
static const struct kop K_FMUL = {"aten::_foreach_mul_", C_BYTES, 1, {
    {MTA "TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<c10::BFloat16, 1, 1, "
     "0>, std::multiplies<float>, float*>(at::native::(anonymous namespace)::TensorListMetadata<1>, "
     "at::native::(anonymous namespace)::BinaryOpScalarTensorFunctor<c10::BFloat16, 1, 1, 0>, "
     "std::multiplies<float>, float*)", 0, 100, 30}}};
static const struct kop K_ADAM = {"aten::_fused_adamw_", C_BYTES, 1, {
    {MTA "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
     "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, "
     "double*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous "
     "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, "
     "double, double, bool, double*, double*)", 0, 100, 72}}};
#undef MTA

static void k_flow(struct gen *g, const char *ph, const char *cat, uint64_t id, uint64_t pid,
                   uint64_t tid, uint64_t ts)
{
    if (ph[0] == 'f')
        ev(g, "{\"ph\": \"f\", \"id\": %u, \"pid\": %u, \"tid\": %u, \"ts\": %T, \"cat\": \"%s\", "
              "\"name\": \"%s\", \"bp\": \"e\"}", id, pid, tid, ts, cat, cat);
    else
        ev(g, "{\"ph\": \"s\", \"id\": %u, \"pid\": %u, \"tid\": %u, \"ts\": %T, \"cat\": \"%s\", "
              "\"name\": \"%s\"}", id, pid, tid, ts, cat, cat);
}

/* Kineto ts: µs relative to the profiler clock (baseTimeNanoseconds is its Unix time). */
static void k_cpu(struct gen *g, uint64_t tid, const char *cat, const char *name, uint64_t t0,
                  uint64_t t1, uint64_t ext, uint64_t seq, int bwd, const struct dims *d, uint64_t evidx)
{
    char sq[64] = "";

    if (seq != NOSEQ)
        snprintf(sq, sizeof sq, ", \"Sequence number\": %llu, \"Fwd thread id\": %d",
                 (unsigned long long)seq, bwd ? 1 : 0);
    if (d)
        ev(g, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %T, "
              "\"dur\": %T, \"args\": {\"External id\": %u, \"Record function id\": 0%s, \"Input Dims\": %s, "
              "\"Input type\": %s, \"Ev Idx\": %u}}",
           cat, name, g->pid, tid, t0, t1 - t0, ext, sq, d->k, d->kt, evidx);
    else
        ev(g, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %T, "
              "\"dur\": %T, \"args\": {\"External id\": %u, \"Record function id\": 0%s, \"Ev Idx\": %u}}",
           cat, name, g->pid, tid, t0, t1 - t0, ext, sq, evidx);
}

static void k_runtime(struct gen *g, const char *name, int drv, uint64_t cbid, uint64_t t0, uint64_t t1,
                      uint64_t ext, uint64_t corr)
{
    ev(g, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %T, "
          "\"dur\": %T, \"args\": {\"External id\": %u, \"cbid\": %u, \"correlation\": %u}}",
       drv ? "cuda_driver" : "cuda_runtime", name, g->pid, g->ptid, t0, t1 - t0, ext, cbid, corr);
}

static void k_memory(struct gen *g, uint64_t ts, uint64_t bytes, uint64_t addr)
{
    ev(g, "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
          "\"pid\": %u, \"tid\": %u, \"ts\": %T, \"args\": {\"Total Reserved\": %u, \"Total Allocated\": %u, "
          "\"Bytes\": %u, \"Addr\": %u, \"Device Id\": %u, \"Device Type\": 1, \"Ev Idx\": %u}}",
       g->pid, g->ptid, ts, (g->s.mem + (2u << 30)) >> 21 << 21, g->s.mem, bytes, addr, g->dev_id,
       g->s.evidx++);
}

/* Grid and block of a kernel, from its duration so that big kernels look big. */
static void k_kernel(struct gen *g, const char *name, int stream, uint64_t t0, uint64_t t1,
                     uint64_t ext, uint64_t corr, unsigned regs, uint64_t gx, uint64_t bx)
{
    uint64_t warps = gx * (bx / 32);

    ev(g, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %T, "
          "\"dur\": %T, \"args\": {\"External id\": %u, \"queued\": 0, \"device\": %u, \"context\": 1, "
          "\"stream\": %u, \"correlation\": %u, \"registers per thread\": %u, \"shared memory\": %u, "
          "\"blocks per SM\": %M, \"warps per SM\": %M, \"grid\": [%u, 1, 1], \"block\": [%u, 1, 1], "
          "\"est. achieved occupancy %%\": %u}}",
       name, g->dev_id, g->stream_id[stream], t0, t1 - t0, ext, g->dev_id, g->stream_id[stream], corr,
       U(regs), U(regs > 128 ? 49152 : 0), gx * 1000000 / 132, warps * 1000000 / 132, gx, bx,
       U(regs > 128 ? 12 : regs > 48 ? 50 : 100));
    seen(g, t1);
}

/*
 * One aten op: its cpu_op (External id e) and, per kernel, a
 * cudaLaunchKernel / cuLaunchKernel on the same thread, the kernel on the
 * compute stream and the ac2g flow pairing them by correlation id.
 */
static void k_op(struct gen *g, const struct kop *op, uint64_t work, const struct dims *d,
                 uint64_t seq, int bwd)
{
    struct state *s = &g->s;
    uint64_t t0, t1, e, r0[3], r1[3], k0[3], k1[3], c[3], gx[3], bx[3], base, cur, ei;
    int i, memev;

    if (!unit(g))
        return;
    t0 = s->host;
    e = ++s->ext;
    ei = s->evidx++;
    cur = t0 + R(g, 3000, 9000);
    base = op_time(g, op->cls, work);
    for (i = 0; i < op->nk; i++) {
        uint64_t kd = jitter(&s->rng, base * op->k[i].pct / 100, 6);

        kd = max64(kd, 1400 + R(g, 0, 900));

        r0[i] = cur;
        r1[i] = cur + R(g, 3500, 11000);
        k0[i] = max64(r0[i] + R(g, 4000, 9000), s->dev[S_COMPUTE]);
        k1[i] = k0[i] + kd;
        s->dev[S_COMPUTE] = k1[i] + R(g, 700, 3000);
        c[i] = ++s->conn;
        bx[i] = op->k[i].regs > 128 ? 128 : 256;
        gx[i] = 132 * R(g, 1, 8) + kd / 1000;
        cur = r1[i] + R(g, 1000, 4000);
        if (!g->step_dev0)
            g->step_dev0 = k0[i];
    }
    t1 = cur + R(g, 500, 2500);
    s->host = t1 + R(g, 800, 4000);
    memev = !bwd && s->nlaunch % 3 == 0;
    if (memev) {
        s->mem += act(g) / 2;
        s->addr += (act(g) / 2 + 511) / 512 * 512;
    }
    s->nlaunch++;
    for (i = 0; i < op->nk; i++)
        iv_push(&g->comp, k0[i], k1[i]);

    k_cpu(g, g->ptid, "cpu_op", op->aten, t0, t1, e, seq, bwd, d, ei);
    if (memev)
        k_memory(g, t0 + (t1 - t0) / 3, act(g) / 2, s->addr);
    for (i = 0; i < op->nk; i++) {
        const struct kkern *k = &op->k[i];

        if (k->drv)
            k_runtime(g, "cuLaunchKernel", 1, 307, r0[i], r1[i], e, c[i]);
        else
            k_runtime(g, "cudaLaunchKernel", 0, 211, r0[i], r1[i], e, c[i]);
        k_flow(g, "s", "ac2g", c[i], g->pid, g->ptid, r0[i]);
        k_kernel(g, k->name, S_COMPUTE, k0[i], k1[i], e, c[i], k->regs, gx[i], bx[i]);
        k_flow(g, "f", "ac2g", c[i], g->dev_id, g->stream_id[S_COMPUTE], k0[i]);
    }
}

/* A memory op: aten::copy_ / aten::fill_ with cudaMemcpyAsync / cudaMemsetAsync. */
static void k_memop(struct gen *g, int set, int d2h, uint64_t bytes, const struct dims *d)
{
    struct state *s = &g->s;
    uint64_t t0, t1, e, r0, r1, k0, k1, c, ei, bw, y0 = 0, y1 = 0, yc = 0;
    const char *name = set ? "Memset (Device)" : d2h ? "Memcpy DtoH (Device -> Pageable)"
                                                     : "Memcpy HtoD (Pageable -> Device)";

    if (!unit(g))
        return;
    t0 = s->host;
    e = ++s->ext;
    ei = s->evidx++;
    r0 = t0 + R(g, 3000, 8000);
    r1 = r0 + R(g, 4000, 14000);
    k0 = max64(r0 + R(g, 3000, 8000), s->dev[S_COMPUTE]);
    k1 = k0 + max64(bytes / (set ? 2000 : 20), 1200) + R(g, 0, 800);
    s->dev[S_COMPUTE] = k1 + R(g, 700, 3000);
    c = ++s->conn;
    t1 = r1 + R(g, 1000, 3000);
    if (d2h) {              /* .item(): cudaStreamSynchronize waits for the copy */
        y0 = r1 + R(g, 500, 1500);
        y1 = y0 + R(g, 2000, 5000);
        y1 = max64(y1, k1 + R(g, 1000, 3000));
        t1 = y1 + R(g, 1000, 3000);
        yc = ++s->conn;
    }
    s->host = t1 + R(g, 800, 4000);
    bw = bytes * 1000000 / (k1 - k0);       /* millionths of a GB/s (bytes per ns) */
    if (!g->step_dev0)
        g->step_dev0 = k0;

    k_cpu(g, g->ptid, "cpu_op", set ? "aten::fill_" : "aten::copy_", t0, t1, e, NOSEQ, 0, d, ei);
    k_runtime(g, set ? "cudaMemsetAsync" : "cudaMemcpyAsync", 0, set ? 51 : 41, r0, r1, e, c);
    k_flow(g, "s", "ac2g", c, g->pid, g->ptid, r0);
    ev(g, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %T, "
          "\"dur\": %T, \"args\": {\"External id\": %u, \"device\": %u, \"context\": 1, \"stream\": %u, "
          "\"correlation\": %u, \"bytes\": %u, \"memory bandwidth (GB/s)\": %M}}",
       set ? "gpu_memset" : "gpu_memcpy", name, g->dev_id, g->stream_id[S_COMPUTE], k0, k1 - k0, e,
       g->dev_id, g->stream_id[S_COMPUTE], c, bytes, bw);
    k_flow(g, "f", "ac2g", c, g->dev_id, g->stream_id[S_COMPUTE], k0);
    seen(g, k1);
    if (d2h)
        k_runtime(g, "cudaStreamSynchronize", 0, 131, y0, y1, e, yc);
}

static uint64_t k_begin(struct gen *g)
{
    uint64_t t = g->s.host;
    g->s.host += R(g, 800, 3000);
    return t;
}

/* Closes a parent cpu_op / user_annotation; takes its External id and Ev Idx now. */
static void k_end(struct gen *g, const char *cat, const char *name, uint64_t t0, uint64_t seq, int bwd,
                  const struct dims *d)
{
    uint64_t e, ei;

    g->s.host += R(g, 500, 2500);
    if (!unit(g))
        return;
    e = ++g->s.ext;
    ei = g->s.evidx++;
    k_cpu(g, g->ptid, cat, name, t0, g->s.host, e, seq, bwd, d, ei);
}

static void k_host(struct gen *g, const char *name)
{
    uint64_t t0 = g->s.host, t1, e, ei;

    if (!unit(g))
        return;
    t1 = t0 + R(g, 1000, 6000);
    g->s.host = t1 + R(g, 400, 2500);
    e = ++g->s.ext;
    ei = g->s.evidx++;
    k_cpu(g, g->ptid, "cpu_op", name, t0, t1, e, NOSEQ, 0, NULL, ei);
}

/* Python frames: opened before their children, written after them. */
struct pyf { uint64_t t0, id, parent; };

static struct pyf k_py_begin(struct gen *g, uint64_t parent)
{
    struct pyf f;

    f.t0 = g->s.host;
    f.id = ++g->s.pyid;
    f.parent = parent;
    g->s.host += R(g, 1000, 4000);
    return f;
}

static void k_py_end(struct gen *g, const struct pyf *f, const char *name)
{
    uint64_t ei;

    g->s.host += R(g, 800, 3000);
    if (!unit(g))
        return;
    ei = g->s.evidx++;
    if (f->parent)
        ev(g, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
              "\"ts\": %T, \"dur\": %T, \"args\": {\"Python parent id\": %u, \"Python id\": %u, \"Ev Idx\": %u}}",
           name, g->pid, g->ptid, f->t0, g->s.host - f->t0, f->parent, f->id, ei);
    else
        ev(g, "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
              "\"ts\": %T, \"dur\": %T, \"args\": {\"Python parent id\": null, \"Python id\": %u, \"Ev Idx\": %u}}",
           name, g->pid, g->ptid, f->t0, g->s.host - f->t0, f->id, ei);
}

static void k_linear(struct gen *g, int l, uint64_t parent, unsigned modidx)
{
    const struct dims *d = &g->dm[D_MM + 3 * l];
    struct pyf m = k_py_begin(g, parent), fw = k_py_begin(g, m.id), bi = k_py_begin(g, fw.id);
    uint64_t seq = g->s.seq++, t0 = k_begin(g), m0;
    char nm[48];

    k_host(g, "aten::t");
    m0 = k_begin(g);
    fw_push(g, m0, seq);
    k_op(g, &K_MM, lin_flops(g, l), d, seq, 0);
    k_end(g, "cpu_op", "aten::matmul", m0, seq, 0, d);
    k_end(g, "cpu_op", "aten::linear", t0, seq, 0, d);
    k_py_end(g, &bi, "<built-in function linear>");
    k_py_end(g, &fw, "torch/nn/modules/linear.py(125): forward");
    snprintf(nm, sizeof nm, "nn.Module: Linear_%u", modidx);
    k_py_end(g, &m, nm);
}

static void k_module_op(struct gen *g, const struct kop *op, uint64_t work, int dm, uint64_t parent,
                        const char *module, const char *fwd)
{
    struct pyf m = k_py_begin(g, parent), f = k_py_begin(g, m.id);

    k_op(g, op, work, &g->dm[dm], g->s.seq++, 0);
    k_py_end(g, &f, fwd);
    k_py_end(g, &m, module);
}

static void k_tail_ops(struct gen *g, int bwd, unsigned max)
{
    unsigned i, n = (unsigned)R(g, 0, max);

    for (i = 0; i < n; i++) {
        const struct ewop *e = ew_pick(g);
        struct kop op = {e->katen, C_BYTES, 1, {{e->kkern, 0, 100, 24}}};
        k_op(g, &op, act(g) * 2, &g->dm[D_EW], bwd ? NOSEQ : g->s.seq++, bwd);
    }
}

static void k_bw(struct gen *g, const char *fn, const struct kop *op, uint64_t work, int dm)
{
    uint64_t t0 = k_begin(g), t1 = k_begin(g);
    char nm[96];

    if (op)
        k_op(g, op, work, &g->dm[dm], NOSEQ, 1);
    k_end(g, "cpu_op", fn, t1, NOSEQ, 1, NULL);
    snprintf(nm, sizeof nm, "autograd::engine::evaluate_function: %s", fn);
    k_end(g, "cpu_op", nm, t0, NOSEQ, 1, NULL);
}

static void k_linear_bw(struct gen *g, int l)
{
    uint64_t t0, t1, seq = NOSEQ, fts = 0;

    if (g->nfw) {
        g->nfw--;
        seq = g->fw[g->nfw].seq;
        fts = g->fw[g->nfw].ts;
    }
    t0 = k_begin(g);
    t1 = k_begin(g);
    if (seq != NOSEQ && unit(g)) {
        k_flow(g, "s", "fwdbwd", seq, g->pid, g->tid_main, fts);
        k_flow(g, "f", "fwdbwd", seq, g->pid, g->tid_bwd, t0);
    }
    k_host(g, "aten::t");
    k_op(g, &K_MM_DX, lin_flops(g, l), &g->dm[D_MM + 3 * l + 1], seq, 1);
    k_host(g, "aten::t");
    k_op(g, &K_MM_DW, lin_flops(g, l), &g->dm[D_MM + 3 * l + 2], seq, 1);
    k_end(g, "cpu_op", "MmBackward0", t1, seq, 1, NULL);
    k_end(g, "cpu_op", "autograd::engine::evaluate_function: MmBackward0", t0, seq, 1, NULL);
}

/* An NCCL collective on the communication stream, launched from the current thread. */
static void k_nccl(struct gen *g, int allgather, uint64_t bytes)
{
    struct state *s = &g->s;
    unsigned r = g->ranks;
    uint64_t a0, a1, p0, p1, r0, r1, k0, k1, c, e, ea, ei, eia, dur;
    const char *kn = allgather ? "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                               : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

    if (r < 2 || !unit(g))
        return;
    a0 = s->host;
    p0 = a0 + R(g, 2000, 5000);
    r0 = p0 + R(g, 5000, 15000);
    r1 = r0 + R(g, 4000, 12000);
    p1 = r1 + R(g, 1000, 3000);
    a1 = p1 + R(g, 1000, 3000);
    s->host = a1 + R(g, 1000, 5000);
    dur = allgather ? bytes * (r - 1) / r / 160 : bytes * 2 * (r - 1) / r / 160;   /* NVLink bytes per ns */
    dur = jitter(&s->rng, dur + 12 * US + US * r, 10);
    k0 = max64(max64(r0 + R(g, 4000, 9000), s->dev[S_COMM]), s->dev[S_COMPUTE]);
    k1 = k0 + dur;
    s->dev[S_COMM] = k1 + R(g, 1000, 4000);
    c = ++s->conn;
    ea = ++s->ext;
    e = ++s->ext;
    eia = s->evidx++;
    ei = s->evidx++;
    iv_push(&g->comm, k0, k1);
    if (!g->step_dev0)
        g->step_dev0 = k0;

    ev(g, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": %u, \"tid\": %u, "
          "\"ts\": %T, \"dur\": %T, \"args\": {\"External id\": %u, \"Record function id\": 0, "
          "\"Collective name\": \"%s\", \"dtype\": \"BFloat16\", \"In msg nelems\": %u, \"Out msg nelems\": %u, "
          "\"In split size\": \"[]\", \"Out split size\": \"[]\", \"Global rank start\": 0, "
          "\"Global rank stride\": 1, \"Group size\": %u, \"Process Group Name\": \"0\", "
          "\"Process Group Description\": \"default_pg\", \"Ev Idx\": %u}}",
       g->pid, g->ptid, p0, p1 - p0, e, allgather ? "_allgather_base" : "allreduce",
       bytes / 2 / (allgather ? r : 1), bytes / 2, U(r), ei);
    k_runtime(g, "cudaLaunchKernel", 0, 211, r0, r1, e, c);
    k_flow(g, "s", "ac2g", c, g->pid, g->ptid, r0);
    k_kernel(g, kn, S_COMM, k0, k1, e, c, 96, 32, 640);
    k_flow(g, "f", "ac2g", c, g->dev_id, g->stream_id[S_COMM], k0);
    k_cpu(g, g->ptid, "user_annotation", allgather ? "nccl:_all_gather_base" : "nccl:all_reduce",
          a0, a1, ea, NOSEQ, 0, NULL, eia);
}

/* The compute stream waits for the gradient all-reduces (cudaStreamWaitEvent). */
static void k_wait_comm(struct gen *g)
{
    struct state *s = &g->s;
    uint64_t r0, r1, c;

    if (!unit(g))
        return;
    r0 = s->host + R(g, 1000, 3000);
    r1 = r0 + R(g, 2000, 6000);
    s->host = r1 + R(g, 800, 3000);
    c = ++s->conn;
    s->dev[S_COMPUTE] = max64(s->dev[S_COMPUTE], s->dev[S_COMM]);
    k_runtime(g, "cudaStreamWaitEvent", 0, 146, r0, r1, s->ext, c);
}

static void k_layer_fwd(struct gen *g, uint64_t parent, unsigned l)
{
    static const char *const dl = "transformers/models/llama/modeling_llama.py(";
    struct pyf m = k_py_begin(g, parent), f = k_py_begin(g, m.id), at;
    char mod[64], fwd[96];
    uint64_t seq;

    snprintf(mod, sizeof mod, "nn.Module: LlamaDecoderLayer_%u", l);
    snprintf(fwd, sizeof fwd, "%s331): forward", dl);
    k_module_op(g, &K_RMS, act(g) * 2, D_NORM, f.id, "nn.Module: LlamaRMSNorm_0",
                "transformers/models/llama/modeling_llama.py(72): forward");
    at = k_py_begin(g, f.id);
    k_linear(g, L_QKV, at.id, 4 * l);
    k_host(g, "aten::view");
    k_host(g, "aten::split");
    k_host(g, "aten::transpose");
    k_op(g, &K_ROPE, act(g) * 3, &g->dm[D_EW], g->s.seq++, 0);
    k_op(g, &K_ROPE, act(g) * 3, &g->dm[D_EW], g->s.seq++, 0);
    seq = g->s.seq++;
    {
        uint64_t t0 = k_begin(g), t1 = k_begin(g);
        k_op(g, &K_FA, 4 * g->B * g->S * g->S * g->H / 2, &g->dm[D_ATTN], seq, 0);
        k_end(g, "cpu_op", "aten::_scaled_dot_product_flash_attention", t1, seq, 0, &g->dm[D_ATTN]);
        k_end(g, "cpu_op", "aten::scaled_dot_product_attention", t0, seq, 0, &g->dm[D_ATTN]);
    }
    k_host(g, "aten::transpose");
    k_host(g, "aten::reshape");
    k_linear(g, L_O, at.id, 4 * l + 1);
    k_py_end(g, &at, "transformers/models/llama/modeling_llama.py(262): forward");
    k_op(g, &K_ADD, act(g) * 3, &g->dm[D_EW], g->s.seq++, 0);
    k_module_op(g, &K_RMS, act(g) * 2, D_NORM, f.id, "nn.Module: LlamaRMSNorm_1",
                "transformers/models/llama/modeling_llama.py(72): forward");
    at = k_py_begin(g, f.id);
    k_linear(g, L_UP, at.id, 4 * l + 2);
    k_op(g, &K_SWI, act(g) * 3 * g->F / g->H, &g->dm[D_SWI], g->s.seq++, 0);
    k_linear(g, L_DOWN, at.id, 4 * l + 3);
    k_py_end(g, &at, "transformers/models/llama/modeling_llama.py(180): forward");
    k_op(g, &K_ADD, act(g) * 3, &g->dm[D_EW], g->s.seq++, 0);
    k_tail_ops(g, 0, 2);
    k_py_end(g, &f, fwd);
    k_py_end(g, &m, mod);
}

static void k_layer_bwd(struct gen *g)
{
    k_bw(g, "AddBackward0", NULL, 0, 0);
    k_linear_bw(g, L_DOWN);
    k_bw(g, "MulBackward0", &K_SWIG, act(g) * 5 * g->F / g->H, D_SWIG);
    k_linear_bw(g, L_UP);
    k_bw(g, "MulBackward0", &K_RMSG, act(g) * 4, D_NORM);
    k_bw(g, "AddBackward0", &K_ADD, act(g) * 3, D_EW);
    k_linear_bw(g, L_O);
    k_bw(g, "ScaledDotProductFlashAttentionBackward0", &K_FAG, 4 * g->B * g->S * g->S * g->H, D_ATTN);
    k_bw(g, "AddBackward0", &K_ROPEG, act(g) * 3, D_EW);
    k_bw(g, "AddBackward0", &K_ROPEG, act(g) * 3, D_EW);
    k_linear_bw(g, L_QKV);
    k_bw(g, "MulBackward0", &K_RMSG, act(g) * 4, D_NORM);
    k_tail_ops(g, 1, 2);
    {
        unsigned i;
        for (i = 0; i < 6; i++) {
            uint64_t t0 = k_begin(g), t1 = k_begin(g);
            k_host(g, "aten::detach");
            k_end(g, "cpu_op", "torch::autograd::AccumulateGrad", t1, NOSEQ, 1, NULL);
            k_end(g, "cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                  t0, NOSEQ, 1, NULL);
        }
    }
}

static void k_step(struct gen *g)
{
    struct state *s = &g->s;
    uint64_t step = s->step++, p0, pe, pei, t, emb = g->V * g->H, l, pb;
    struct pyf ts, m, f, bw, bw2, bw3, opt, opt2, opt3;
    char nm[32];

    g->comp.n = g->comm.n = 0;
    g->nfw = 0;
    g->step_dev0 = 0;
    g->ptid = g->tid_main;
    p0 = s->host;
    pe = ++s->ext;
    pei = s->evidx++;
    s->host += R(g, 5000, 20000);
    ts = k_py_begin(g, 0);

    /* batch to the GPU */
    t = k_begin(g);
    k_host(g, "aten::empty_strided");
    k_memop(g, 0, 0, g->B * g->S * 8, &g->dm[D_IN]);
    k_end(g, "cpu_op", "aten::_to_copy", t, NOSEQ, 0, &g->dm[D_IN]);
    k_end(g, "cpu_op", "aten::to", t, NOSEQ, 0, &g->dm[D_IN]);
    /* forward */
    m = k_py_begin(g, ts.id);
    f = k_py_begin(g, m.id);
    k_module_op(g, &K_EMB, act(g) * 2, D_EMB, f.id, "nn.Module: Embedding_0",
                "torch/nn/modules/sparse.py(190): forward");
    for (l = 0; l < g->layers; l++)
        k_layer_fwd(g, f.id, (unsigned)l);
    k_module_op(g, &K_RMS, act(g) * 2, D_NORM, f.id, "nn.Module: LlamaRMSNorm_2",
                "transformers/models/llama/modeling_llama.py(72): forward");
    k_py_end(g, &f, "transformers/models/llama/modeling_llama.py(571): forward");
    k_py_end(g, &m, "nn.Module: LlamaModel_0");
    k_linear(g, L_LM, ts.id, 4 * g->layers);
    f = k_py_begin(g, ts.id);
    k_op(g, &K_LSM, g->B * g->S * g->V * 8, &g->dm[D_LSM], s->seq++, 0);
    k_op(g, &K_NLL, 0, &g->dm[D_LOSS], s->seq++, 0);
    k_py_end(g, &f, "torch/nn/functional.py(3479): cross_entropy");
    /* backward: main thread waits in run_backward, the autograd thread works */
    bw = k_py_begin(g, ts.id);
    bw2 = k_py_begin(g, bw.id);
    bw3 = k_py_begin(g, bw2.id);
    k_op(g, &K_ONES, 0, &g->dm[D_SCALAR], NOSEQ, 0);
    g->ptid = g->tid_bwd;
    k_bw(g, "NllLossBackward0", &K_NLLG, 0, D_LOSS);
    k_bw(g, "LogSoftmaxBackward0", &K_LSMG, g->B * g->S * g->V * 8, D_LSM);
    k_linear_bw(g, L_LM);
    k_bw(g, "MulBackward0", &K_RMSG, act(g) * 4, D_NORM);
    for (l = 0; l < g->layers; l++) {
        k_layer_bwd(g);
        k_nccl(g, 0, layer_params(g) * 2);
    }
    k_bw(g, "EmbeddingBackward0", &K_EMBG, emb * 2, D_EMB);
    k_nccl(g, 0, (emb + lin_params(g, L_LM)) * 2);
    g->ptid = g->tid_main;
    k_py_end(g, &bw3, "<built-in method run_backward of torch._C._EngineBase object at 0x7f3a5c2d9a40>");
    k_py_end(g, &bw2, "torch/autograd/__init__.py(347): backward");
    k_py_end(g, &bw, "torch/_tensor.py(626): backward");
    /* optimizer, once the gradients are reduced */
    k_wait_comm(g);
    pb = (g->layers * layer_params(g) + emb + lin_params(g, L_LM)) * 4;
    opt = k_py_begin(g, ts.id);
    opt2 = k_py_begin(g, opt.id);
    opt3 = k_py_begin(g, opt2.id);
    t = k_begin(g);
    k_op(g, &K_NORM, pb, &g->dm[D_PARAM], NOSEQ, 0);
    k_host(g, "aten::stack");
    k_tail_ops(g, 0, 1);
    k_op(g, &K_FMUL, pb * 2, &g->dm[D_PARAM], NOSEQ, 0);
    k_op(g, &K_ADAM, pb * 4, &g->dm[D_PARAM], NOSEQ, 0);
    k_end(g, "user_annotation", "Optimizer.step#AdamW.step", t, NOSEQ, 0, NULL);
    k_py_end(g, &opt3, "torch/optim/adamw.py(577): _fused_adamw");
    k_py_end(g, &opt2, "torch/optim/adamw.py(209): step");
    k_py_end(g, &opt, "torch/optim/optimizer.py(487): wrapper");
    k_nccl(g, 1, g->layers * layer_params(g) * 2);
    t = k_begin(g);
    k_memop(g, 1, 0, g->layers * layer_params(g) * 2, &g->dm[D_PARAM]);
    k_end(g, "user_annotation", "Optimizer.zero_grad#AdamW.zero_grad", t, NOSEQ, 0, NULL);
    /* loss.item() */
    t = k_begin(g);
    k_memop(g, 0, 1, 4, &g->dm[D_SCALAR]);
    k_end(g, "cpu_op", "aten::item", t, NOSEQ, 0, &g->dm[D_SCALAR]);
    k_py_end(g, &ts, "train.py(88): train_step");

    s->host += R(g, 2000, 6000);
    snprintf(nm, sizeof nm, "ProfilerStep#%llu", (unsigned long long)step);
    k_cpu(g, g->tid_main, "user_annotation", nm, p0, s->host, pe, NOSEQ, 0, NULL, pei);
    if (g->step_dev0 && g->units) {
        uint64_t ge = max64(s->dev[S_COMPUTE], s->dev[S_COMM]);
        ev(g, "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"%s\", \"pid\": %u, "
              "\"tid\": %u, \"ts\": %T, \"dur\": %T, \"args\": {\"External id\": %u}}",
           nm, g->dev_id, g->stream_id[S_COMPUTE], g->step_dev0, ge - g->step_dev0, pe);
    }
    s->mem = g->layers * layer_params(g) * 16;
    seen(g, s->host);
    s->host += R(g, 20000, 200000);
    s->dev[S_COMPUTE] = max64(s->dev[S_COMPUTE], s->host);
    s->dev[S_COMM] = max64(s->dev[S_COMM], s->host);
}

static void k_fill(struct gen *g, uint64_t n)
{
    g->ptid = g->tid_main;
    while (n--) {
        g->s.tend += R(g, 20, 80) * US;
        g->s.addr += 4096;
        k_memory(g, g->s.tend, 4096, g->s.addr);
    }
}

static void k_tail(struct gen *g)
{
    uint64_t mt = g->t0;
    char lab[16];

    ev(g, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"name\": \"python3\"}}", mt, g->pid);
    ev(g, "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"labels\": \"CPU\"}}", mt, g->pid);
    ev(g, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"sort_index\": %u}}", mt, g->pid, g->pid);
    snprintf(lab, sizeof lab, "GPU %llu", (unsigned long long)g->dev_id);
    ev(g, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"name\": \"python3\"}}", mt, g->dev_id);
    ev(g, "{\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"labels\": \"%s\"}}", mt, g->dev_id, lab);
    ev(g, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": 0, "
          "\"args\": {\"sort_index\": %u}}", mt, g->dev_id, 5000000 + g->dev_id);
    ev(g, "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"name\": \"%s\"}}", mt, g->pid, g->tid_main, g->name_main);
    ev(g, "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"sort_index\": %u}}", mt, g->pid, g->tid_main, g->tid_main);
    ev(g, "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"name\": \"%s\"}}", mt, g->pid, g->tid_bwd, g->name_bwd);
    ev(g, "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"sort_index\": %u}}", mt, g->pid, g->tid_bwd, g->tid_bwd);
    ev(g, "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"name\": \"stream %u \"}}", mt, g->dev_id, g->stream_id[S_COMPUTE], g->stream_id[S_COMPUTE]);
    ev(g, "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"sort_index\": %u}}", mt, g->dev_id, g->stream_id[S_COMPUTE], g->stream_id[S_COMPUTE]);
    ev(g, "{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"name\": \"stream %u \"}}", mt, g->dev_id, g->stream_id[S_COMM], g->stream_id[S_COMM]);
    ev(g, "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": %u, \"tid\": %u, "
          "\"args\": {\"sort_index\": %u}}", mt, g->dev_id, g->stream_id[S_COMM], g->stream_id[S_COMM]);
    ev(g, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": %T, \"pid\": \"Spans\", \"tid\": 0, "
          "\"args\": {\"sort_index\": 536870912}}", mt);
    ev(g, "{\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": %T, \"dur\": %T, \"pid\": \"Spans\", "
          "\"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}}",
       mt, g->s.tend > mt ? g->s.tend - mt : 0);
    ev(g, "{\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"Traces\", "
          "\"tid\": \"Trace PyTorch Profiler\", \"ts\": %T}", mt);
}

static void k_header(struct gen *g)
{
    char b[512];
    unsigned i;

    out_str(&g->o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (i = 0; i < 8; i++) {
        snprintf(b, sizeof b,
                 "    {\"id\": %u, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85018279936, "
                 "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
                 "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"warpSize\": 32, "
                 "\"sharedMemPerBlock\": 49152, \"numSms\": 132, \"regsPerMultiprocessor\": 65536, "
                 "\"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472}%s\n",
                 i, i < 7 ? "," : "");
        out_str(&g->o, b);
    }
    snprintf(b, sizeof b,
             "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %u, \"world_size\": %u, "
             "\"pg_count\": 1, \"nccl_version\": \"2.21.5\"},\n"
             "  \"cuda_runtime_version\": 12040,\n  \"cuda_driver_version\": 12090,\n"
             "  \"trace_id\": \"%016llX%016llX\",\n  \"traceEvents\": [\n",
             g->rank, g->ranks, (unsigned long long)mix64(g->seed), (unsigned long long)mix64(g->seed + 1));
    out_str(&g->o, b);
}

static void k_footer(struct gen *g)
{
    char b[256];

    snprintf(b, sizeof b,
             "\n  ],\n  \"traceName\": \"/tmp/tracebook-gen/rank%u.%llu.pt.trace.json\",\n"
             "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1751410836000000000\n}\n",
             g->rank, (unsigned long long)g->seed);
    out_str(&g->o, b);
}

/* ------------------------------------------------------------------------ */
/* Driver.                                                                 */

static void gen_init(struct gen *g)
{
    uint64_t real;

    model_init(g);
    ew_init();
    g->s.rng = mix64(g->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)g->kind << 56) ^ g->rank);
    g->dev_id = g->rank % 8;
    if (g->kind == ASCEND) {
        real = 437675 + g->rank;
        g->pid = real;
        g->tid_main = real;
        g->tid_deq = real + 1409;
        g->tid_bwd = real + 1553;
        /* current msprof: pid = (real pid << 10) | (sort index << 5) | device */
        g->pid_cann = real << 10 | 7u << 5 | 31;
        g->pid_hw = real << 10 | 14u << 5 | g->dev_id;
        g->pid_comm = real << 10 | 16u << 5 | g->dev_id;
        g->pid_mem = real << 10 | 17u << 5 | g->dev_id;
        g->pid_ovl = real << 10 | 31u << 5 | g->dev_id;
        g->stream_id[S_COMPUTE] = 2;
        g->stream_id[S_COMM] = 55;
        snprintf(g->name_main, sizeof g->name_main, "Thread %llu", (unsigned long long)g->tid_main);
        snprintf(g->name_deq, sizeof g->name_deq, "Thread %llu", (unsigned long long)g->tid_deq);
        snprintf(g->name_bwd, sizeof g->name_bwd, "Thread %llu", (unsigned long long)g->tid_bwd);
        snprintf(g->npu_label, sizeof g->npu_label, "NPU %llu", (unsigned long long)g->dev_id);
        /* a Unix time in µs, as torch_npu writes */
        g->t0 = 1704161511000000000ull + (g->seed % 100000) * 3600000000000ull / 100 + 420306491;
        g->s.mem = g->layers * layer_params(g) * 16;
        g->s.task_id[S_COMPUTE] = rnd(&g->s.rng) % 60000;
        g->s.task_id[S_COMM] = rnd(&g->s.rng) % 60000;
    } else {
        real = 25286 + g->rank;
        g->pid = real;
        g->tid_main = real;
        g->tid_bwd = real + 164;
        g->stream_id[S_COMPUTE] = 7;
        g->stream_id[S_COMM] = 20;
        snprintf(g->name_main, sizeof g->name_main, "thread %llu (python3)", (unsigned long long)g->tid_main);
        snprintf(g->name_bwd, sizeof g->name_bwd, "thread %llu (python3)", (unsigned long long)g->tid_bwd);
        /* profiler clock (~16.5 days of uptime in µs, ns digits exact in a double);
         * baseTimeNanoseconds gives its Unix time */
        g->t0 = 1428625731456483ull + (g->seed % 100000) * 1000000000ull;
        g->s.mem = g->layers * layer_params(g) * 16;
        g->s.addr = 137877174353920ull;
        g->s.conn = 675000 + rnd(&g->s.rng) % 100000;
        g->s.ext = 18000 + rnd(&g->s.rng) % 1000;
        g->s.pyid = 5;
    }
    g->s.host = g->s.deq = g->t0;
    g->s.dev[S_COMPUTE] = g->s.dev[S_COMM] = g->t0;
    g->s.tend = g->t0;
    g->s.step = 1 + rnd(&g->s.rng) % 8;
    g->s.seq = 1000 + rnd(&g->s.rng) % 20000;
    g->unit_limit = UINT64_MAX;
}

/* Runs one step dry or for real with at most limit units; returns its event count. */
static uint64_t run_step(struct gen *g, uint64_t limit, int dry)
{
    uint64_t n0 = g->n;

    g->dry = dry;
    g->units = 0;
    g->unit_limit = limit;
    g->cut = 0;
    if (g->kind == ASCEND)
        a_step(g);
    else
        k_step(g);
    g->dry = 0;
    if (!dry && g->csv)
        csv_step(g);
    return g->n - n0;
}

/* Counts a step with a cut at limit units, leaving the state untouched. */
static uint64_t dry_count(struct gen *g, uint64_t limit, uint64_t *units)
{
    struct state save = g->s;
    uint64_t n0 = g->n, c = run_step(g, limit, 1);

    if (units)
        *units = g->units;
    g->s = save;
    g->n = n0;
    return c;
}

static void generate(struct gen *g)
{
    uint64_t tail, left, c, units, lo, hi, mid;

    /* the metadata tail is counted first so that the steps can use the rest */
    g->dry = 1;
    if (g->kind == ASCEND)
        a_tail(g);
    else
        k_tail(g);
    tail = g->n;
    g->n = 0;
    g->dry = 0;
    left = g->events > tail ? g->events - tail : 0;

    while (left > 0) {
        c = dry_count(g, UINT64_MAX, &units);
        if (c <= left) {
            uint64_t w = run_step(g, UINT64_MAX, 0);
            (void)w;
            assert(w == c);
            left -= c;
            continue;
        }
        /* the last step: the most units that fit (counts grow with units) */
        if (dry_count(g, 0, NULL) <= left) {
            lo = 0;
            hi = units;
            while (hi - lo > 1) {
                mid = lo + (hi - lo) / 2;
                if (dry_count(g, mid, NULL) <= left)
                    lo = mid;
                else
                    hi = mid;
            }
            c = run_step(g, lo, 0);
            assert(c <= left);
            left -= c;
        }
        break;
    }
    if (g->kind == ASCEND) {
        a_fill(g, left);
        a_tail(g);
    } else {
        k_fill(g, left);
        k_tail(g);
    }
}

static void usage(FILE *f)
{
    fputs("usage: tracebook-gen --kind ascend|kineto --events N [--seed S] [--ranks R] [--rank R]\n"
          "                     [--layers L] -o FILE\n"
          "       tracebook-gen --kind torch_npu_dir --events N [--seed S] [--ranks R]\n"
          "                     [--layers L] -o DIR\n"
          "\n"
          "Writes a synthetic, reproducible profile trace with exactly N trace events\n"
          "(metadata included). The bytes depend only on the arguments.\n"
          "\n"
          "  --kind ascend   torch_npu trace_view.json: top-level array, ts as strings,\n"
          "                  Python/CANN/Ascend Hardware/Communication/NPU MEM/Overlap\n"
          "                  Analysis layers, flows; metadata at the end\n"
          "  --kind kineto   PyTorch profiler GPU trace: {\"traceEvents\": [...], ...} with\n"
          "                  baseTimeNanoseconds after the events\n"
          "  --kind torch_npu_dir  a torch_npu profiling directory for ranks 0..R-1:\n"
          "                  DIR/rank<r>_ascend_pt/profiler_info_<r>.json and\n"
          "                  ASCEND_PROFILER_OUTPUT/ with trace_view.json (the ascend\n"
          "                  trace of --seed S+r --rank r), kernel_details.csv (one row\n"
          "                  per Ascend Hardware task and HCCL op of that trace) and\n"
          "                  step_trace_time.csv (one row per complete step)\n"
          "  --events N      number of trace events to write (0 or more; per rank)\n"
          "  --seed S        random seed (default 1)\n"
          "  --ranks R       size of the communication group / world_size (default 8;\n"
          "                  1 means no communication)\n"
          "  --rank R        this rank: distributedInfo.rank, device id R % 8 (default 0;\n"
          "                  not with torch_npu_dir, which writes every rank)\n"
          "  --layers L      transformer layers per step (default 2)\n"
          "  -o, --output FILE  where to write ('-' for standard output); for\n"
          "                  torch_npu_dir a directory, created if missing (not its parents)\n"
          "  -h, --help      show this help\n"
          "\n"
          "exit status: 0 success, 1 I/O error, 2 usage error\n", f);
}

static int parse_u64(const char *opt, const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    unsigned long long x;

    if (!s || !*s || *s == '-' || *s == '+') {
        fprintf(stderr, "tracebook-gen: error: %s needs a non-negative integer, got '%s'\n", opt, s ? s : "");
        return 0;
    }
    errno = 0;
    x = strtoull(s, &end, 10);
    if (errno || *end || x > max) {
        fprintf(stderr, "tracebook-gen: error: bad value for %s '%s'\n", opt, s);
        return 0;
    }
    *v = x;
    return 1;
}

/* Opens path for writing ('-': standard output) behind o's buffer. */
static int out_open(struct out *o, const char *path)
{
    o->f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!o->f) {
        fprintf(stderr, "tracebook-gen: error: cannot open '%s': %s\n", path, strerror(errno));
        return 0;
    }
    if (!o->buf) {
        o->buf = malloc(OBUF_CAP);
        if (!o->buf)
            die_oom();
    }
    o->len = 0;
    o->err = 0;
    return 1;
}

/* Flushes and closes o; EXIT_OK, or EXIT_IO with a message. */
static int out_close(struct out *o, const char *path)
{
    int bad;

    out_flush(o);
    bad = o->err || ferror(o->f);
    if (o->f != stdout)
        bad |= fclose(o->f) != 0;
    else
        bad |= fflush(o->f) != 0;
    o->f = NULL;
    if (bad) {
        fprintf(stderr, "tracebook-gen: error: cannot write '%s': %s\n", path, strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* One trace of --kind ascend or kineto to path. */
static int write_trace(struct gen *g, const char *path)
{
    if (!out_open(&g->o, path))
        return EXIT_IO;
    gen_init(g);
    if (g->kind == ASCEND)
        out_str(&g->o, "[\n");
    else
        k_header(g);
    generate(g);
    assert(g->n == g->events);
    if (g->kind == ASCEND)
        out_str(&g->o, "\n]\n");
    else
        k_footer(g);
    return out_close(&g->o, path);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return 1;
    fprintf(stderr, "tracebook-gen: error: cannot create directory '%s': %s\n", path, strerror(errno));
    return 0;
}

/* dir + "/" + name into buf; 0 (with a message) when it does not fit. */
static int join(char *buf, size_t n, const char *dir, const char *name)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n) {
        fprintf(stderr, "tracebook-gen: error: path too long '%s/%s'\n", dir, name);
        return 0;
    }
    return 1;
}

/*
 * profiler_info_<r>.json as torch_npu writes it (json.dump, indent 4): the
 * profiler's config, start_info (the monotonic clock at the start) and
 * end_info (Unix and monotonic time at the end, whose difference maps the
 * monotonic clock onto the trace's Unix times), and the rank. The schedule
 * matches the steps in the trace; the host booted at a fixed synthetic time.
 */
static int write_profiler_info(struct gen *g, const char *path, uint64_t first_step, uint64_t nsteps)
{
    const uint64_t boot = 1704161511000000000ull - 23502000000000ull;  /* Unix ns at monotonic 0 */
    uint64_t start = g->t0 - 1500000, end = g->s.tend + 2000000;
    char b[2048];
    int n;

    n = snprintf(b, sizeof b,
                 "{\n"
                 "    \"config\": {\n"
                 "        \"common_config\": {\n"
                 "            \"activities\": [\n"
                 "                \"ProfilerActivity.CPU\",\n"
                 "                \"ProfilerActivity.NPU\"\n"
                 "            ],\n"
                 "            \"schedule\": {\n"
                 "                \"_wait\": 0,\n"
                 "                \"_warmup\": 1,\n"
                 "                \"_active\": %llu,\n"
                 "                \"_repeat\": 1,\n"
                 "                \"_skip_first\": %llu\n"
                 "            },\n"
                 "            \"on_trace_ready\": {\n"
                 "                \"_worker_name\": \"tracebook-gen_%llu\",\n"
                 "                \"_dir_name\": \"/tmp/tracebook-gen/torch_npu_dir\"\n"
                 "            },\n"
                 "            \"record_shapes\": true,\n"
                 "            \"profile_memory\": true,\n"
                 "            \"with_stack\": false,\n"
                 "            \"with_flops\": false,\n"
                 "            \"with_modules\": false\n"
                 "        },\n"
                 "        \"experimental_config\": {\n"
                 "            \"_profiler_level\": \"Level1\",\n"
                 "            \"_aic_metrics\": \"ACL_AICORE_NONE\",\n"
                 "            \"_l2_cache\": false,\n"
                 "            \"_msprof_tx\": false,\n"
                 "            \"_op_attr\": false,\n"
                 "            \"_data_simplification\": true,\n"
                 "            \"record_op_args\": false,\n"
                 "            \"_export_type\": [\n"
                 "                \"text\"\n"
                 "            ]\n"
                 "        }\n"
                 "    },\n"
                 "    \"start_info\": {\n"
                 "        \"syscnt_enable\": false,\n"
                 "        \"freq\": 100.0,\n"
                 "        \"start_cnt\": 0,\n"
                 "        \"start_monotonic\": %llu\n"
                 "    },\n"
                 "    \"end_info\": {\n"
                 "        \"collectionTimeEnd\": %llu,\n"
                 "        \"MonotonicTimeEnd\": %llu\n"
                 "    },\n"
                 "    \"rank_id\": %u\n"
                 "}\n",
                 (unsigned long long)(nsteps ? nsteps : 1), (unsigned long long)(first_step - 1),
                 (unsigned long long)g->pid, (unsigned long long)(start - boot),
                 (unsigned long long)end, (unsigned long long)(end - boot), g->rank);
    assert(n > 0 && (size_t)n < sizeof b);
    if (!out_open(&g->o, path))
        return EXIT_IO;
    out_put(&g->o, b, (size_t)n);
    return out_close(&g->o, path);
}

/*
 * --kind torch_npu_dir: per rank r, the ascend trace of seed S+r (exactly the
 * bytes of --kind ascend --seed S+r --rank r --ranks R), the CSVs made from
 * the same run, and profiler_info_<r>.json.
 */
static int write_dir(struct gen *g, const char *dir)
{
    uint64_t seed0 = g->seed, first;
    unsigned r;
    int rc = EXIT_OK;

    if (!make_dir(dir))
        return EXIT_IO;
    g->kind = ASCEND;
    g->csv = 1;
    for (r = 0; r < g->ranks && rc == EXIT_OK; r++) {
        char name[64], base[4096], out[4096], trace[4096], kd[4096], st[4096], info[4096];
        int rc2;

        snprintf(name, sizeof name, "rank%u_ascend_pt", r);
        if (!join(base, sizeof base, dir, name) || !join(out, sizeof out, base, "ASCEND_PROFILER_OUTPUT") ||
            !join(trace, sizeof trace, out, "trace_view.json") ||
            !join(kd, sizeof kd, out, "kernel_details.csv") ||
            !join(st, sizeof st, out, "step_trace_time.csv"))
            return EXIT_USAGE;
        snprintf(name, sizeof name, "profiler_info_%u.json", r);
        if (!join(info, sizeof info, base, name))
            return EXIT_USAGE;
        if (!make_dir(base) || !make_dir(out))
            return EXIT_IO;

        memset(&g->s, 0, sizeof g->s);
        g->n = 0;
        g->dry = 0;
        g->nrows = 0;
        g->kd_prev_end = 0;
        g->seed = seed0 + r;
        g->rank = r;
        if (!out_open(&g->o, trace))
            return EXIT_IO;
        if (!out_open(&g->kd, kd)) {
            out_close(&g->o, trace);
            return EXIT_IO;
        }
        if (!out_open(&g->st, st)) {
            out_close(&g->o, trace);
            out_close(&g->kd, kd);
            return EXIT_IO;
        }
        gen_init(g);
        first = g->s.step;
        out_str(&g->kd, kd_header);
        out_str(&g->st, st_header);
        out_str(&g->o, "[\n");
        generate(g);
        assert(g->n == g->events);
        out_str(&g->o, "\n]\n");
        rc = out_close(&g->o, trace);
        rc2 = out_close(&g->kd, kd);
        rc = rc ? rc : rc2;
        rc2 = out_close(&g->st, st);
        rc = rc ? rc : rc2;
        if (rc == EXIT_OK)
            rc = write_profiler_info(g, info, first, g->s.step - first);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static struct gen g;
    const char *out = NULL, *kind = NULL;
    uint64_t v, ranks = 0;
    int i, have_events = 0, have_rank = 0, dir, rc;

    g.seed = 1;
    g.layers = 2;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq;
        char name[32];

        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return EXIT_OK;
        }
        eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
        if (eq) {
            size_t n = (size_t)(eq - a);
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, a, n);
            name[n] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            if (i + 1 < argc)
                val = argv[i + 1];
        }
        if (strcmp(name, "--kind") && strcmp(name, "--events") && strcmp(name, "--seed") &&
            strcmp(name, "--ranks") && strcmp(name, "--rank") && strcmp(name, "--layers") &&
            strcmp(name, "-o") && strcmp(name, "--output")) {
            fprintf(stderr, "tracebook-gen: error: unknown option '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
        if (!val) {
            fprintf(stderr, "tracebook-gen: error: option needs a value '%s'\n", name);
            return EXIT_USAGE;
        }
        if (!eq)
            i++;
        if (!strcmp(name, "--kind")) {
            kind = val;
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
            out = val;
        } else if (!strcmp(name, "--events")) {
            if (!parse_u64(name, val, UINT64_C(1) << 40, &g.events))
                return EXIT_USAGE;
            have_events = 1;
        } else if (!strcmp(name, "--seed")) {
            if (!parse_u64(name, val, UINT64_MAX, &g.seed))
                return EXIT_USAGE;
        } else if (!strcmp(name, "--ranks")) {
            if (!parse_u64(name, val, 65536, &ranks) || ranks < 1) {
                fprintf(stderr, "tracebook-gen: error: --ranks must be 1..65536 '%s'\n", val);
                return EXIT_USAGE;
            }
        } else if (!strcmp(name, "--rank")) {
            if (!parse_u64(name, val, 65535, &v))
                return EXIT_USAGE;
            g.rank = (unsigned)v;
            have_rank = 1;
        } else {
            if (!parse_u64(name, val, 64, &v) || v < 1) {
                fprintf(stderr, "tracebook-gen: error: --layers must be 1..64 '%s'\n", val);
                return EXIT_USAGE;
            }
            g.layers = (unsigned)v;
        }
    }
    if (!kind || (strcmp(kind, "ascend") && strcmp(kind, "kineto") && strcmp(kind, "torch_npu_dir"))) {
        fprintf(stderr, "tracebook-gen: error: --kind must be ascend, kineto or torch_npu_dir '%s'\n",
                kind ? kind : "");
        return EXIT_USAGE;
    }
    if (!have_events || !out) {
        fprintf(stderr, "tracebook-gen: error: %s is required\n", !have_events ? "--events" : "-o");
        usage(stderr);
        return EXIT_USAGE;
    }
    dir = !strcmp(kind, "torch_npu_dir");
    if (dir && have_rank) {
        fprintf(stderr, "tracebook-gen: error: --rank does not apply to --kind torch_npu_dir, "
                "which writes ranks 0..R-1 (use --ranks)\n");
        return EXIT_USAGE;
    }
    if (dir && (!*out || !strcmp(out, "-"))) {
        fprintf(stderr, "tracebook-gen: error: --kind torch_npu_dir needs a directory for -o '%s'\n", out);
        return EXIT_USAGE;
    }
    if (!ranks)
        ranks = g.rank + 1 > 8 ? g.rank + 1 : 8;
    if (g.rank >= ranks) {
        fprintf(stderr, "tracebook-gen: error: --rank must be below --ranks '%u'\n", g.rank);
        return EXIT_USAGE;
    }
    g.ranks = (unsigned)ranks;
    g.kind = strcmp(kind, "kineto") ? ASCEND : KINETO;

    rc = dir ? write_dir(&g, out) : write_trace(&g, out);
    free(g.o.buf);
    free(g.kd.buf);
    free(g.st.buf);
    free(g.rows);
    free(g.comp.v);
    free(g.comm.v);
    free(g.fw);
    free(ewops);
    return rc;
}
