/* SPDX-License-Identifier: MIT */
/*
 * gen.h - what the files of tracebook-gen share: the generator's state, its
 * random numbers, the output buffer, and the functions one file calls in
 * another. Private to tools/gen; nothing here is installed.
 *
 * tracebook-gen writes reproducible synthetic profile traces for tests and
 * benches (gen_main.c says what it writes). Its files, by what they do:
 *
 *   gen_main.c       options, their checks, and the dispatch by --kind
 *   gen_run.c        the driver: set-up, steps counted dry then written, the cut
 *   gen_util.c       output buffer, number formatting, ev(), growable arrays
 *   gen_model.c      the model's shapes and sizes, the tail ops, op costs
 *   gen_ascend.c     --kind ascend: a torch_npu trace_view.json
 *   gen_kineto.c     --kind kineto: a PyTorch profiler (Kineto) GPU trace
 *   gen_torch_npu.c  --kind torch_npu_dir: a profiling directory per rank,
 *                    the CSVs and profiler_info beside the ascend trace
 *   gen_parallel.c   --parallel: the tp, pp and dp groups of a rank, their
 *                    names, and profiler_metadata.json
 *
 * The trace is produced step by step (ProfilerStep#N) from a small model of a
 * data-parallel transformer training job: the host runs Python/aten ops that
 * launch device kernels through the CANN task queue (or the CUDA runtime),
 * kernels queue up on a compute stream after their launch, collectives run
 * on a communication stream and overlap the backward pass, and each layer of
 * the format is filled in (flows, counters, Overlap Analysis lanes, metadata
 * at the end of the event array as the real tools write it).
 *
 * Reproducibility rule for edits: at most one random draw (R, jitter, rnd)
 * or state increment per full expression. C leaves the evaluation order of
 * call arguments unspecified, and gcc and clang do differ.
 */
#ifndef TRACEBOOK_GEN_H
#define TRACEBOOK_GEN_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, listed in --help. */
enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };

#define US 1000u                    /* ns per microsecond */
#define OBUF_CAP (4u << 20)
#define U(x) ((uint64_t)(x))        /* every numeric vararg of ev() is a uint64_t */

enum { ASCEND, KINETO };

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64 (Steele, Lea, Flood 2014).                   */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rnd(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix64(*s);
}

/* Uniform in [lo, hi]; the modulo bias is irrelevant here. */
static inline uint64_t span(uint64_t *s, uint64_t lo, uint64_t hi)
{
    assert(hi >= lo);
    return lo + rnd(s) % (hi - lo + 1);
}

/* v scaled by a random factor in [100-pct, 100+pct] percent. */
static inline uint64_t jitter(uint64_t *s, uint64_t v, unsigned pct)
{
    return v / 100 * span(s, 100 - pct, 100 + pct) + v % 100;
}

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* ------------------------------------------------------------------------ */
/* Output: a private buffer flushed with fwrite.                           */

struct out {
    FILE *f;
    char *buf;
    size_t len;
    int err;
};
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
    uint64_t nrng;              /* the night's noise draws (--noise-seed), apart from rng */
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
    int device_mix;             /* --mix device: no Python layer, a task per CANN call */
    /* a night of the same profile: kernel times scaled, nothing else moved */
    uint64_t noise_seed;
    unsigned type_noise, task_noise;    /* ±percent per kernel type, per task */
    const char *slow_type;              /* --slow TYPE=PCT, or NULL */
    unsigned slow_pct;
    /* --parallel TP,PP (torch_npu_dir): tensor- and pipeline-parallel sizes of
     * a cluster of TP x PP x DP ranks (0: no groups); its ranks share the
     * model, the step numbers and the clock, drawn from model_seed (--seed),
     * and each collective runs in its group (gen_parallel.c) */
    unsigned tp, pp;
    uint64_t model_seed;
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
    void (*step_done)(struct gen *g); /* after each step written for real (the CSV rows), or NULL */
    int cut;                    /* this step ran out of units */
    uint64_t step_no, step_p0;  /* the step's number and host start */
    uint64_t bubble;            /* the step's receive time (hcom_receive) */
    struct krow *rows;
    size_t nrows, caprows;
    uint64_t kd_prev_end;       /* end of the previous kernel_details row */
    struct out kd, st;
};

/* Takes a unit (one op) from the step's allowance; 0 once the step is cut. */
static inline int unit(struct gen *g)
{
    if (g->units >= g->unit_limit) {
        g->cut = 1;
        return 0;
    }
    g->units++;
    return 1;
}

static inline uint64_t R(struct gen *g, uint64_t lo, uint64_t hi) { return span(&g->s.rng, lo, hi); }

static inline void seen(struct gen *g, uint64_t t)
{
    if (t > g->s.tend)
        g->s.tend = t;
}
/* ------------------------------------------------------------------------ */
/* Ops: what the ascend trace and the tail-op table (gen_model.c) share.    */

/* Ascend Hardware task types; their names are task_type[] (gen_ascend.c). */
enum { T_AIC, T_AIV, T_MIX, T_AICPU, T_ER, T_EW, T_MEMCPY, T_NOTIFY };

/* Cost classes: how an op's work turns into device time. */
enum { C_MM, C_BYTES, C_ATTN, C_FIX, C_CPU, C_H2D, C_D2H };

struct akern { const char *name; unsigned char type, pct; };

struct aop {
    const char *aten, *api;
    unsigned char cls, ws, nk;  /* ws: a GetWorkspaceSize call precedes the launch */
    struct akern k[3];
};

/* A tail op (gen_model.c): its ascend op and its Kineto names. */
struct ewop {
    struct aop a;               /* ascend op (names point into name storage) */
    char aten[40], api[48], kern[96];
    char katen[40], kkern[320]; /* kineto names */
};

/* No autograd sequence number (ascend writes -1, kineto leaves it out). */
#define NOSEQ ((uint64_t)-1)

/* ------------------------------------------------------------------------ */
/* gen_util.c: output, formatting, trace events, growable arrays.          */

void out_put(struct out *o, const char *s, size_t n);
void out_str(struct out *o, const char *s);
/* Digits of v (or v / 10^dec) written to p, no NUL; returns their count. */
size_t fmt_u(char *p, uint64_t v);
size_t fmt_fixed(char *p, uint64_t v, unsigned dec, int trim);
/* o->buf is allocated on the first open and kept for the next (free it at exit). */
int out_open(struct out *o, const char *path);
int out_close(struct out *o, const char *path);
_Noreturn void die_oom(void);
void iv_push(struct ivec *v, uint64_t a, uint64_t b);
void fw_push(struct gen *g, uint64_t ts, uint64_t seq);
/* Returns borrowed (valid until the next krow_push), zeroed but for ord. */
struct krow *krow_push(struct gen *g);
int ev(struct gen *g, const char *fmt, ...);

/* ------------------------------------------------------------------------ */
/* gen_model.c: shapes, sizes, tail ops and op costs.                       */

void model_init(struct gen *g);
uint64_t act(struct gen *g);
uint64_t lin_flops(struct gen *g, int l);
uint64_t lin_params(struct gen *g, int l);
uint64_t layer_params(struct gen *g);
/* The tail ops, built by ew_init (owned: free at exit). */
extern struct ewop *ewops;
void ew_init(void);
/* Returns borrowed (an element of ewops). */
const struct ewop *ew_pick(struct gen *g);
uint64_t op_time(struct gen *g, int cls, uint64_t work);
/* A kernel's duration d as tonight's noise and --slow make it (d when none is asked). */
uint64_t night_time(struct gen *g, const char *kname, int type, uint64_t d);
/* A task's duration d with tonight's per-task noise (an HCCL op's). */
uint64_t night_task(struct gen *g, uint64_t d);

/* ------------------------------------------------------------------------ */
/* gen_ascend.c, gen_kineto.c: one step, the filler, the metadata tail.     */

extern const char *const task_type[];
void a_step(struct gen *g);
void a_fill(struct gen *g, uint64_t n);
void a_tail(struct gen *g);

void k_step(struct gen *g);
void k_fill(struct gen *g, uint64_t n);
void k_tail(struct gen *g);
void k_header(struct gen *g);
void k_footer(struct gen *g);

/* ------------------------------------------------------------------------ */
/* gen_torch_npu.c, gen_run.c: directories, the driver, a whole trace.      */

int write_dir(struct gen *g, const char *dir);

/* ------------------------------------------------------------------------ */
/* gen_parallel.c: --parallel's process groups.                            */

enum { HC_ALLREDUCE, HC_ALLGATHER, HC_SEND, HC_RECV };   /* the HCCL ops of a step */
enum { PG_TP, PG_DP, PG_PP };                             /* the process groups */

/* The group kind (PG_*) an HCCL op (HC_*) runs in. */
int par_kind(int hc_kind);
/* The number of ranks in the current rank's group of kind k. */
unsigned par_size(const struct gen *g, int k);
/* The group_name of the current rank's group of kind k (a decimal hash). */
void par_group_name(const struct gen *g, int k, char *buf, size_t len);
/* Writes the current rank's profiler_metadata.json; EXIT_OK or EXIT_IO. */
int par_write_metadata(struct gen *g, const char *path);

void gen_init(struct gen *g);
void generate(struct gen *g);
int write_trace(struct gen *g, const char *path);

#endif
