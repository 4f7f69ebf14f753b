/* SPDX-License-Identifier: MIT */
/*
 * gen_main.c - tracebook-gen, reproducible synthetic profile traces for
 * tests and benches: its options, their checks, and the dispatch by --kind.
 *
 * Writes a torch_npu-style trace_view.json (--kind ascend) or a PyTorch
 * profiler (Kineto) GPU trace (--kind kineto) holding exactly --events trace
 * events, metadata included, so that tests can check counts and benches can
 * scale to gigabytes. --kind torch_npu_dir writes a torch_npu profiling
 * directory per rank r: the ascend trace of seed S+r with kernel_details.csv,
 * step_trace_time.csv and profiler_info_<r>.json beside it
 * (gen_torch_npu.c). --mix device leaves the Python layer out of an ascend
 * trace: a device-heavy trace, one device task per CANN call. The bytes depend only on the arguments: one private
 * splitmix64 generator drives every random choice, all times are integer
 * nanoseconds and every number is formatted by hand (no floating point), so
 * the output is the same on every machine and libc. gen.h lists the files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static void usage(FILE *f)
{
    fputs("usage: tracebook-gen --kind ascend|kineto --events N [--seed S] [--ranks R] [--rank R]\n"
          "                     [--layers L] [--mix host|device] [NIGHT] -o FILE\n"
          "       tracebook-gen --kind torch_npu_dir --events N [--seed S] [--ranks R]\n"
          "                     [--layers L] [--mix host|device] [--parallel TP,PP] [NIGHT] -o DIR\n"
          "  NIGHT: [--noise-seed N] [--type-noise PCT] [--task-noise PCT] [--slow TYPE=PCT]\n"
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
          "  --mix host      (default) every layer of the trace: Python ops, the task\n"
          "                  queue, CANN calls, device tasks and their flows\n"
          "  --mix device    not for kineto: a device-heavy trace, as many device tasks as\n"
          "                  CANN calls: per kernel its Node@launch call, its task and\n"
          "                  its HostToDevice flow; HCCL ops, steps, counters and\n"
          "                  Overlap Analysis lanes as with host, no Python ops\n"
          "\n"
          "Nights of one profile (ascend and torch_npu_dir): the same --seed with other\n"
          "kernel times, the ops, their order and the event count unchanged. A kernel's\n"
          "type is the op type ending its name (MatMulV3 of aclnnMm_MatMulV3_MatMulV3),\n"
          "other tasks go by their task type (MEMCPY_ASYNC).\n"
          "  --noise-seed N  the night: seed of the noise draws below (default 1)\n"
          "  --type-noise PCT  each kernel type's times scaled by one factor drawn in\n"
          "                  [1 - PCT%, 1 + PCT%] for the night (0..50, default 0)\n"
          "  --task-noise PCT  each kernel's time scaled by its own factor drawn in\n"
          "                  [1 - PCT%, 1 + PCT%] (0..50, default 0)\n"
          "  --slow TYPE=PCT  kernels of type TYPE take PCT% longer (1..1000)\n"
          "\n"
          "  --parallel TP,PP  torch_npu_dir only: a cluster of R = TP x PP x DP ranks in\n"
          "                  Megatron's layout (rank = t + TP * (d + DP * p)) sharing the\n"
          "                  model, the step numbers and the clock of --seed S (the times\n"
          "                  still drawn per rank); all-gathers run in the rank's tp group,\n"
          "                  all-reduces in its dp group, sends and receives in its pp\n"
          "                  group, each op with its group_name, and each rank gets a\n"
          "                  profiler_metadata.json naming its tp, dp and pp groups\n"
          "\n"
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

/* What the command line asked for, beside what goes straight into struct gen. */
struct opts {
    const char *out, *kind, *mix;
    uint64_t ranks;             /* 0: not given */
    int have_events, have_rank;
    int dir;                    /* --kind torch_npu_dir */
    int help;                   /* --help was shown: nothing more to do */
    int night;                  /* --type-noise, --task-noise or --slow given */
    char *slow;                 /* --slow's TYPE (owned) */
};

/* --slow TYPE=PCT into g. */
static int set_slow(struct gen *g, struct opts *o, const char *val)
{
    const char *eq = strrchr(val, '=');
    uint64_t v;

    if (!eq || eq == val || !parse_u64("--slow", eq + 1, 1000, &v) || v < 1) {
        fprintf(stderr, "tracebook-gen: error: --slow needs TYPE=PCT, PCT 1..1000 '%s'\n", val);
        return EXIT_USAGE;
    }
    o->slow = strndup(val, (size_t)(eq - val));
    if (!o->slow)
        die_oom();
    g->slow_type = o->slow;
    g->slow_pct = (unsigned)v;
    o->night = 1;
    return EXIT_OK;
}

/* --parallel TP,PP into g. */
static int set_parallel(struct gen *g, const char *val)
{
    const char *comma = strchr(val, ',');
    char tp[24];
    uint64_t t, p;

    if (!comma || (size_t)(comma - val) >= sizeof tp) {
        fprintf(stderr, "tracebook-gen: error: --parallel needs TP,PP '%s'\n", val);
        return EXIT_USAGE;
    }
    memcpy(tp, val, (size_t)(comma - val));
    tp[comma - val] = 0;
    if (!parse_u64("--parallel", tp, 65536, &t) || !parse_u64("--parallel", comma + 1, 65536, &p) || !t || !p) {
        fprintf(stderr, "tracebook-gen: error: --parallel needs TP,PP, each 1 or more '%s'\n", val);
        return EXIT_USAGE;
    }
    g->tp = (unsigned)t;
    g->pp = (unsigned)p;
    return EXIT_OK;
}

/* One option's value into g or o; EXIT_OK, or EXIT_USAGE with a message. */
static int set_option(struct gen *g, struct opts *o, const char *name, const char *val)
{
    uint64_t v;

    if (!strcmp(name, "--kind")) {
        o->kind = val;
    } else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
        o->out = val;
    } else if (!strcmp(name, "--mix")) {
        o->mix = val;
    } else if (!strcmp(name, "--events")) {
        if (!parse_u64(name, val, UINT64_C(1) << 40, &g->events))
            return EXIT_USAGE;
        o->have_events = 1;
    } else if (!strcmp(name, "--seed")) {
        if (!parse_u64(name, val, UINT64_MAX, &g->seed))
            return EXIT_USAGE;
    } else if (!strcmp(name, "--ranks")) {
        if (!parse_u64(name, val, 65536, &o->ranks) || o->ranks < 1) {
            fprintf(stderr, "tracebook-gen: error: --ranks must be 1..65536 '%s'\n", val);
            return EXIT_USAGE;
        }
    } else if (!strcmp(name, "--rank")) {
        if (!parse_u64(name, val, 65535, &v))
            return EXIT_USAGE;
        g->rank = (unsigned)v;
        o->have_rank = 1;
    } else if (!strcmp(name, "--noise-seed")) {
        if (!parse_u64(name, val, UINT64_MAX, &g->noise_seed))
            return EXIT_USAGE;
    } else if (!strcmp(name, "--type-noise") || !strcmp(name, "--task-noise")) {
        if (!parse_u64(name, val, 50, &v)) {
            fprintf(stderr, "tracebook-gen: error: %s must be a percentage 0..50 '%s'\n", name, val);
            return EXIT_USAGE;
        }
        *(name[2] == 't' && name[3] == 'y' ? &g->type_noise : &g->task_noise) = (unsigned)v;
        o->night = 1;
    } else if (!strcmp(name, "--slow")) {
        return set_slow(g, o, val);
    } else if (!strcmp(name, "--parallel")) {
        return set_parallel(g, val);
    } else {
        if (!parse_u64(name, val, 64, &v) || v < 1) {
            fprintf(stderr, "tracebook-gen: error: --layers must be 1..64 '%s'\n", val);
            return EXIT_USAGE;
        }
        g->layers = (unsigned)v;
    }
    return EXIT_OK;
}

/*
 * The options of argv, one by one ("--name value" or "--name=value"), into g
 * and o. EXIT_OK to go on (o->help set when --help was shown), or
 * EXIT_USAGE with a message.
 */
static int parse_args(struct gen *g, struct opts *o, int argc, char **argv)
{
    int i, rc;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL, *eq;
        char name[32];

        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            o->help = 1;
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
            strcmp(name, "-o") && strcmp(name, "--output") && strcmp(name, "--mix") && strcmp(name, "--noise-seed") &&
            strcmp(name, "--type-noise") && strcmp(name, "--task-noise") && strcmp(name, "--slow") &&
            strcmp(name, "--parallel")) {
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
        rc = set_option(g, o, name, val);
        if (rc != EXIT_OK)
            return rc;
    }
    return EXIT_OK;
}

/*
 * The options taken together, once all are read: the kind, the required
 * ones, what torch_npu_dir rules out, the rank against the ranks. Sets
 * o->dir, g->ranks and g->kind; EXIT_OK, or EXIT_USAGE with a message.
 */
static int check_args(struct gen *g, struct opts *o)
{
    uint64_t ranks = o->ranks;

    if (!o->kind ||
        (strcmp(o->kind, "ascend") && strcmp(o->kind, "kineto") && strcmp(o->kind, "torch_npu_dir"))) {
        fprintf(stderr, "tracebook-gen: error: --kind must be ascend, kineto or torch_npu_dir '%s'\n",
                o->kind ? o->kind : "");
        return EXIT_USAGE;
    }
    if (!o->have_events || !o->out) {
        fprintf(stderr, "tracebook-gen: error: %s is required\n", !o->have_events ? "--events" : "-o");
        usage(stderr);
        return EXIT_USAGE;
    }
    o->dir = !strcmp(o->kind, "torch_npu_dir");
    if (o->mix && strcmp(o->mix, "host") && strcmp(o->mix, "device")) {
        fprintf(stderr, "tracebook-gen: error: --mix must be host or device '%s'\n", o->mix);
        return EXIT_USAGE;
    }
    g->device_mix = o->mix && !strcmp(o->mix, "device");
    if (g->device_mix && !strcmp(o->kind, "kineto")) {
        fprintf(stderr, "tracebook-gen: error: --mix device applies to --kind ascend and "
                "torch_npu_dir, not kineto\n");
        return EXIT_USAGE;
    }
    if (o->dir && o->have_rank) {
        fprintf(stderr, "tracebook-gen: error: --rank does not apply to --kind torch_npu_dir, "
                "which writes ranks 0..R-1 (use --ranks)\n");
        return EXIT_USAGE;
    }
    if (o->dir && (!*o->out || !strcmp(o->out, "-"))) {
        fprintf(stderr, "tracebook-gen: error: --kind torch_npu_dir needs a directory for -o '%s'\n", o->out);
        return EXIT_USAGE;
    }
    if (!ranks)
        ranks = g->rank + 1 > 8 ? g->rank + 1 : 8;
    if (g->rank >= ranks) {
        fprintf(stderr, "tracebook-gen: error: --rank must be below --ranks '%u'\n", g->rank);
        return EXIT_USAGE;
    }
    g->ranks = (unsigned)ranks;
    if (g->tp && (!o->dir || ranks < 2 || ranks % ((uint64_t)g->tp * g->pp))) {
        fprintf(stderr, "tracebook-gen: error: --parallel applies to --kind torch_npu_dir with --ranks a "
                "multiple of TP x PP, 2 or more\n");
        return EXIT_USAGE;
    }
    g->kind = strcmp(o->kind, "kineto") ? ASCEND : KINETO;
    if (o->night && g->kind == KINETO) {
        fprintf(stderr, "tracebook-gen: error: --type-noise, --task-noise and --slow apply to --kind ascend "
                "and torch_npu_dir only\n");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    static struct gen g;
    struct opts o = {0};
    int rc;

    g.seed = 1;
    g.noise_seed = 1;
    g.layers = 2;
    rc = parse_args(&g, &o, argc, argv);
    if (rc == EXIT_OK && !o.help)
        rc = check_args(&g, &o);
    if (rc != EXIT_OK || o.help) {
        free(o.slow);
        return rc;
    }

    rc = o.dir ? write_dir(&g, o.out) : write_trace(&g, o.out);
    free(g.o.buf);
    free(g.kd.buf);
    free(g.st.buf);
    free(g.rows);
    free(g.comp.v);
    free(g.comm.v);
    free(g.fw);
    free(ewops);
    free(o.slow);
    return rc;
}
