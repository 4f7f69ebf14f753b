/* SPDX-License-Identifier: MIT */
/*
 * gen_torch_npu.c - --kind torch_npu_dir: a torch_npu profiling directory
 * per rank r. The trace is the ascend one of seed S+r (gen_ascend.c, exactly
 * the bytes of --kind ascend --seed S+r --rank r); beside it go
 * kernel_details.csv (a row per Ascend Hardware task and HCCL op of that
 * trace, collected while the step is written and sorted by start when it
 * ends), step_trace_time.csv (a row per complete step, from the intervals
 * behind the Overlap Analysis lanes) and profiler_info_<r>.json. The CSVs are
 * a by-product of the real (not dry) run and draw no random numbers, so the
 * trace stays byte-identical to --kind ascend.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"

/* ------------------------------------------------------------------------ */
/* kernel_details.csv and step_trace_time.csv.                             */

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
/* The directory and profiler_info_<r>.json.                               */

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
int write_dir(struct gen *g, const char *dir)
{
    uint64_t seed0 = g->seed, first;
    unsigned r;
    int rc = EXIT_OK;

    if (!make_dir(dir))
        return EXIT_IO;
    g->kind = ASCEND;
    g->csv = 1;
    g->step_done = csv_step;
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
        g->model_seed = seed0;
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
        if (rc == EXIT_OK && g->tp) {
            if (!join(info, sizeof info, base, "profiler_metadata.json"))
                return EXIT_USAGE;
            rc = par_write_metadata(g, info);
        }
    }
    return rc;
}
