/* SPDX-License-Identifier: MIT */
/*
 * gen_ascend.c - --kind ascend: a torch_npu trace_view.json, one training
 * step at a time (a_step), then the counter samples that fill the last few
 * events (a_fill) and the metadata at the end of the array (a_tail). Per
 * device op it writes what torch_npu records: the aten cpu_op and its aclnn
 * child on the Python thread, the task-queue hop to the dequeue thread, the
 * CANN calls, the tasks on the Ascend Hardware streams and the flows between
 * them; HCCL ops go to the Communication layer and the communication stream,
 * and each step ends with its Overlap Analysis lanes. For --kind
 * torch_npu_dir the same run also records the kernel_details rows
 * (gen_torch_npu.c). With --mix device (g->device_mix) only the CANN and
 * device layers are written: per kernel its Node@launch call, its task and
 * its HostToDevice flow, with the HCCL ops, stream waits, step markers,
 * counters and Overlap Analysis lanes; the Python cpu_ops, the task queue and
 * the torch_to_npu and fwdbwd flows are left out. The random draws are the
 * same in both mixes, only what ev() writes differs.
 */
#include <string.h>

#include "gen.h"

/* Names of the task types T_* (gen.h), as the Task Type arg and kernel_details show them. */
const char *const task_type[] = {
    "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "AI_CPU",
    "EVENT_RECORD", "EVENT_WAIT", "MEMCPY_ASYNC", "NOTIFY_WAIT",
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
 * The host side of one device op (--mix host only): the aten cpu_op and its
 * aclnn child, Enqueue on the Python thread and Dequeue on the dequeue
 * thread with their enqueue_to_dequeue flow, and the AscendCL calls
 * (GetWorkspaceSize when the op has one, then the API). t: the times a_op
 * drew, in the order t0, t1, a0, a1, e0, e1, dq0, dq1, q, w0, w1, c0, c1.
 */
static void a_queue(struct gen *g, const struct aop *op, uint64_t tid, uint64_t seq, int bwd,
                    const struct dims *d, const uint64_t *t)
{
    char nm[96], id[80];

    a_cpu(g, tid, op->api, "cpu_op", t[2], t[3], NOSEQ, 0, NULL);
    a_cpu(g, tid, op->aten, "cpu_op", t[0], t[1], seq, bwd, d);
    ev(g, "{\"ph\": \"X\", \"name\": \"Enqueue\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
          "\"dur\": %T, \"cat\": \"enqueue\", \"args\": {\"correlation_id\": %u}}",
       g->pid, tid, t[4], t[5] - t[4], t[8]);
    a_flow(g, "s", "async_task_queue", "enqueue_to_dequeue", t[8], g->pid, tid, t[4]);
    ev(g, "{\"ph\": \"X\", \"name\": \"Dequeue@%s\", \"pid\": %u, \"tid\": %u, \"ts\": \"%t\", "
          "\"dur\": %T, \"cat\": \"dequeue\", \"args\": {\"correlation_id\": %u}}",
       op->api, g->pid, g->tid_deq, t[6], t[7] - t[6], t[8]);
    a_flow(g, "f", "async_task_queue", "enqueue_to_dequeue", t[8], g->pid, g->tid_deq, t[6]);
    if (op->ws) {
        snprintf(id, sizeof id, "%sGetWorkspaceSize", op->api);
        snprintf(nm, sizeof nm, "AscendCL@%s", id);
        a_cann(g, g->tid_deq, nm, "acl", id, t[9], t[10], 0);
    }
    snprintf(nm, sizeof nm, "AscendCL@%s", op->api);
    a_cann(g, g->tid_deq, nm, "acl", op->api, t[11], t[12], 0);
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
        uint64_t kd = night_time(g, op->k[i].name, op->k[i].type, jitter(&s->rng, base * op->k[i].pct / 100, 8));

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

    if (!g->device_mix) {
        const uint64_t t[] = {t0, t1, a0, a1, e0, e1, dq0, dq1, q, w0, w1, c0, c1};
        a_queue(g, op, tid, seq, bwd, d, t);
    }
    for (i = 0; i < op->nk; i++) {
        const struct akern *k = &op->k[i];

        if (mem)
            a_cann(g, g->tid_deq, "Runtime@MemcpyAsync", "runtime", "MemcpyAsync", l0[i], l1[i], kc[i]);
        else
            a_cann(g, g->tid_deq, "Node@launch", "node", k->name, l0[i], l1[i], kc[i]);
        a_task(g, k->name, k->type, S_COMPUTE, k0[i], k1[i], kid[i], kc[i], d);
        a_h2d(g, kc[i], g->tid_deq, l0[i], S_COMPUTE, k0[i]);
        if (!g->device_mix) {
            a_flow(g, "s", "async_npu", "torch_to_npu", k0[i], g->pid, tid, a0);
            a_flow(g, "f", "async_npu", "torch_to_npu", k0[i], g->pid_hw, g->stream_id[S_COMPUTE], k0[i]);
        }
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
    if (!g->device_mix)
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
    if (!unit(g) || g->device_mix)
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
    if (seq != NOSEQ && unit(g) && !g->device_mix) {
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
    char nm[80], hn[64], grp[32];

    if (g->ranks < 2 || !unit(g))
        return;
    if (g->tp)
        r = par_size(g, par_kind(kind));
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
    dur = night_task(g, jitter(&s->rng, dur + 20 * US + 2 * US * r, 12));
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

    if (!g->device_mix) {
        a_cpu(g, g->ptid, hccl[kind], "cpu_op", q0, q1, NOSEQ, 0, NULL);
        a_cpu(g, g->ptid, c10d[kind], "cpu_op", p0, p1, NOSEQ, 0, NULL);
    }
    snprintf(nm, sizeof nm, "AscendCL@%s", api[kind]);
    a_cann(g, g->ptid, nm, "acl", api[kind], c0, c1, k);
    if (g->tp) {
        /* --parallel: the op runs in its group, named after it */
        size_t gl;
        par_group_name(g, par_kind(kind), grp, sizeof grp);
        gl = strlen(grp);
        snprintf(hn, sizeof hn, "hcom_%s__%s_%llu_1", hcom[kind], grp + (gl > 3 ? gl - 3 : 0),
                 (unsigned long long)g->hcom_idx[kind]++);
    } else {
        snprintf(hn, sizeof hn, "hcom_%s__%u_%llu_1", hcom[kind], g->hcom_group,
                 (unsigned long long)g->hcom_idx[kind]++);
    }
    if (ev(g, "{\"name\": \"%s\", \"pid\": %u, \"tid\": 0, \"ts\": \"%t\", \"dur\": %T, \"args\": "
              "{\"connection_id\": %u, \"model id\": 4294967295, \"data_type\": \"FP16\", "
              "\"alg_type\": \"%s\", \"count\": %u%s%s%s}, \"ph\": \"X\"}",
           hn, g->pid_comm, cs, ce - cs, k, kind >= HC_SEND ? "NA" : "RING", bytes / 2,
           g->tp ? ", \"group_name\": \"" : "", g->tp ? grp : "", g->tp ? "\"" : "") && g->csv) {
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

void a_step(struct gen *g)
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

void a_fill(struct gen *g, uint64_t n)
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

void a_tail(struct gen *g)
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
