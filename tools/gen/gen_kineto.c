/* SPDX-License-Identifier: MIT */
/*
 * gen_kineto.c - --kind kineto: a PyTorch profiler (Kineto) GPU trace, the
 * same training job as gen_ascend.c seen through CUDA: the JSON header
 * (k_header), one step at a time (k_step), memory instant events filling the
 * last few events (k_fill), the metadata tail (k_tail) and the footer with
 * baseTimeNanoseconds (k_footer). Per aten op: its cpu_op and, per kernel, a
 * launch on the same thread, the kernel on the compute stream and the ac2g
 * flow between them; NCCL kernels run on the communication stream.
 */
#include <string.h>

#include "gen.h"

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

void k_step(struct gen *g)
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

void k_fill(struct gen *g, uint64_t n)
{
    g->ptid = g->tid_main;
    while (n--) {
        g->s.tend += R(g, 20, 80) * US;
        g->s.addr += 4096;
        k_memory(g, g->s.tend, 4096, g->s.addr);
    }
}

void k_tail(struct gen *g)
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

void k_header(struct gen *g)
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

void k_footer(struct gen *g)
{
    char b[256];

    snprintf(b, sizeof b,
             "\n  ],\n  \"traceName\": \"/tmp/tracebook-gen/rank%u.%llu.pt.trace.json\",\n"
             "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1751410836000000000\n}\n",
             g->rank, (unsigned long long)g->seed);
    out_str(&g->o, b);
}
