/* SPDX-License-Identifier: MIT */
/*
 * gen_run.c - tracebook-gen's driver: sets up the state of one trace
 * (gen_init), writes exactly --events events (generate) and one whole trace
 * file of --kind ascend or kineto (write_trace).
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
 */
#include "gen.h"

void gen_init(struct gen *g)
{
    uint64_t real;

    if (!g->tp)
        g->model_seed = g->seed;     /* --parallel: write_dir set the cluster's */
    model_init(g);
    ew_init();
    g->s.rng = mix64(g->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)g->kind << 56) ^ g->rank);
    g->s.nrng = mix64(g->noise_seed * 0xbf58476d1ce4e5b9ull ^ g->rank);
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
        g->t0 = 1704161511000000000ull + (g->model_seed % 100000) * 3600000000000ull / 100 + 420306491;
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
    if (g->tp)                       /* the cluster's ranks count their steps alike */
        g->s.step = 1 + mix64(g->model_seed) % 8;
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
    if (!dry && g->step_done)
        g->step_done(g);
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

void generate(struct gen *g)
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

/* One trace of --kind ascend or kineto to path. */
int write_trace(struct gen *g, const char *path)
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
