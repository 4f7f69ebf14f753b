/* SPDX-License-Identifier: MIT */
/*
 * gen_parallel.c - --parallel TP,PP: the process groups of a generated
 * cluster, their names, and each rank's profiler_metadata.json.
 *
 * The ranks are laid out as Megatron lays them out: rank = t + TP * (d + DP
 * * p) for tensor-parallel index t, data-parallel index d and pipeline stage
 * p. A rank's tp group is the TP ranks of its t range, its dp group the DP
 * ranks of its (t, p), its pp group the PP ranks of its (t, d), in rank
 * order. The trace's collectives run in them: all-gathers in the tp group,
 * all-reduces in the dp group, sends and receives in the pp group.
 *
 * A group's id is the key of torch_npu's parallel_group_info
 * ("127.0.0.1%eth0_<port>_0_<time>"); its name, the group_name of the HCCL
 * ops in the trace, is msprof-analyze's double hash of the id in decimal, and
 * the op names carry the name's last three digits, as torch_npu names them
 * (hcom_allReduce__822_0_1 in group ...386822).
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* First rank, stride and size of the rank's group of kind k; *gi its index among the groups of k. */
static void group_of(const struct gen *g, int k, unsigned rank, unsigned *first, unsigned *stride, unsigned *n,
                     unsigned *gi)
{
    unsigned tp = g->tp, pp = g->pp, dp = g->ranks / (tp * pp);
    unsigned t = rank % tp, d = rank / tp % dp, p = rank / (tp * dp);

    if (k == PG_TP) {
        *first = rank - t, *stride = 1, *n = tp, *gi = rank / tp;
    } else if (k == PG_DP) {
        *first = t + tp * dp * p, *stride = tp, *n = dp, *gi = t + tp * p;
    } else {
        *first = t + tp * d, *stride = tp * dp, *n = pp, *gi = t + tp * d;
    }
}

/* The group id (parallel_group_info's key) of the rank's group of kind k. */
static void group_id(const struct gen *g, int k, unsigned rank, char *buf, size_t len)
{
    unsigned first, stride, n, gi;

    group_of(g, k, rank, &first, &stride, &n, &gi);
    snprintf(buf, len, "127.0.0.1%%eth0_%u_0_%llu", 55000u + (unsigned)k * 1000u + gi,
             (unsigned long long)(1738895486000000ull + g->model_seed % 100000 * 1000 + (uint64_t)k * 100 + gi));
}

/* msprof-analyze's double hash of a group id: two 32-bit polynomial hashes. */
static uint64_t double_hash(const char *s)
{
    uint32_t a = 0, b = 0;

    for (; *s; s++) {
        a = a * 29u + (unsigned char)*s;
        b = b * 131u + (unsigned char)*s;
    }
    return (uint64_t)a << 32 | b;
}

void par_group_name(const struct gen *g, int k, char *buf, size_t len)
{
    char id[96];

    group_id(g, k, g->rank, id, sizeof id);
    snprintf(buf, len, "%llu", (unsigned long long)double_hash(id));
}

int par_kind(int hc_kind)
{
    return hc_kind == HC_ALLGATHER ? PG_TP : hc_kind == HC_ALLREDUCE ? PG_DP : PG_PP;
}

unsigned par_size(const struct gen *g, int k)
{
    unsigned first, stride, n, gi;

    group_of(g, k, g->rank, &first, &stride, &n, &gi);
    return n;
}

/* One group of parallel_group_info into o. */
static void meta_group(const struct gen *g, struct out *o, int k, int last)
{
    static const char *const names[] = {"tp", "dp", "pp"};
    unsigned first, stride, n, gi, i;
    char id[96], b[128];

    group_of(g, k, g->rank, &first, &stride, &n, &gi);
    group_id(g, k, g->rank, id, sizeof id);
    out_str(o, "        \"");
    out_str(o, id);
    snprintf(b, sizeof b, "\": {\n            \"group_name\": \"%s\",\n            \"group_rank\": %u,\n", names[k],
             (g->rank - first) / stride);
    out_str(o, b);
    out_str(o, "            \"global_ranks\": [");
    for (i = 0; i < n; i++) {
        snprintf(b, sizeof b, "%s%u", i ? ", " : "", first + i * stride);
        out_str(o, b);
    }
    out_str(o, last ? "]\n        }\n" : "]\n        },\n");
}

/*
 * profiler_metadata.json of the current rank, as torch_npu writes it (indent
 * 4): the parallel sizes and the rank in distributed_args, and the rank's
 * tp, dp and pp groups in parallel_group_info.
 */
int par_write_metadata(struct gen *g, const char *path)
{
    struct out o = {0};
    char b[512];
    int rc;

    if (!out_open(&o, path))
        return EXIT_IO;
    snprintf(b, sizeof b,
             "{\n    \"distributed_args\": {\n        \"tensor_model_parallel_size\": %u,\n"
             "        \"pipeline_model_parallel_size\": %u,\n        \"data_parallel_size\": %u,\n"
             "        \"rank\": %u,\n        \"world_size\": %u\n    },\n    \"parallel_group_info\": {\n",
             g->tp, g->pp, g->ranks / (g->tp * g->pp), g->rank, g->ranks);
    out_str(&o, b);
    meta_group(g, &o, PG_TP, 0);
    meta_group(g, &o, PG_DP, 0);
    meta_group(g, &o, PG_PP, 1);
    out_str(&o, "    }\n}\n");
    rc = out_close(&o, path);
    free(o.buf);
    return rc;
}
