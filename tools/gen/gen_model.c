/* SPDX-License-Identifier: MIT */
/*
 * gen_model.c - the model every --kind traces, fixed per seed: the sizes of
 * a small transformer (batch, sequence, hidden, feed-forward, vocabulary)
 * drawn from the seed, the input shapes of its ops in both notations (ascend
 * "Input Dims" and Kineto's lists) with the kernel_details columns, the
 * sizes behind op costs, the table of small element-wise tail ops with their
 * ascend and Kineto names, and how an op's work turns into device time.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

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

void model_init(struct gen *g)
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
    uint64_t c = mix64(g->model_seed ^ 0x7472616365626f6full);
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
uint64_t act(struct gen *g) { return g->B * g->S * g->H * 2; }

uint64_t lin_flops(struct gen *g, int l)
{
    return 2 * g->B * g->S * g->lin_in[l] * g->lin_out[l];
}

uint64_t lin_params(struct gen *g, int l) { return g->lin_in[l] * g->lin_out[l]; }

uint64_t layer_params(struct gen *g)
{
    return lin_params(g, L_QKV) + lin_params(g, L_O) + lin_params(g, L_UP) +
           lin_params(g, L_DOWN) + 2 * g->H;
}

/* ------------------------------------------------------------------------ */
/* Tail ops and op costs.                                                  */

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

struct ewop *ewops;             /* 2 * NEW: [2i] out-of-place, [2i+1] in-place */

void ew_init(void)
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
const struct ewop *ew_pick(struct gen *g)
{
    uint64_t a = R(g, 0, 2 * NEW - 1), b = R(g, 0, 2 * NEW - 1);
    return &ewops[a * b / (2 * NEW)];
}

/* Device time of an op's work, before the per-kernel split. */
uint64_t op_time(struct gen *g, int cls, uint64_t work)
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

/* FNV-1a of a kernel type's name: its per-type draw does not depend on the order types appear in. */
static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    while (n--)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

/* A factor in parts per million, uniform in [1 - pct%, 1 + pct%], from draw r. */
static uint64_t ppm(uint64_t r, unsigned pct)
{
    uint64_t w = (uint64_t)pct * 10000;

    return 1000000 - w + r % (2 * w + 1);
}

uint64_t night_task(struct gen *g, uint64_t d)
{
    if (!g->task_noise)
        return d;
    g->s.nrng += 0x9e3779b97f4a7c15ull;
    return (d * ppm(mix64(g->s.nrng), g->task_noise) + 500000) / 1000000;
}

/*
 * The kernel type is the op type that ends the kernel's name (MatMulV3 of
 * aclnnMm_MatMulV3_MatMulV3), as kernel_details.csv's Type column has it;
 * other tasks go by their task type. The per-type factor is a hash of the
 * night and the type, the per-task one a draw of the night's own generator
 * (g->s.nrng), so the model, its ops and the event count stay those of
 * --seed whatever the night.
 */
uint64_t night_time(struct gen *g, const char *kname, int type, uint64_t d)
{
    const char *u = type <= T_AICPU ? strrchr(kname, '_') : NULL;
    const char *t = u ? u + 1 : task_type[type];
    size_t n = strlen(t);

    if (g->type_noise)
        d = (d * ppm(mix64(name_hash(t, n) ^ mix64(g->noise_seed)), g->type_noise) + 500000) / 1000000;
    d = night_task(g, d);
    if (g->slow_type && !strcmp(g->slow_type, t))
        d += d / 100 * g->slow_pct;
    return d;
}
