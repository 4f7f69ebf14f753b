/* SPDX-License-Identifier: MIT */
/*
 * kernel_type.c - a kernel's operator type taken from its name, for inputs
 * that give none (kernel_type.h). The rules are the ones docs/inputs.md
 * "Kernel types" states, so a user can predict every type:
 *
 *   Ascend  aclnnMm_MatMulCommon_MatMulV2   -> MatMulV2   (last `_` part)
 *           trans_Cast_7                    -> Cast       (digits skipped)
 *           Default/net/Conv2D-op239        -> Conv2D     (MindSpore scope)
 *           MatMul<float, 4>_0a1b           -> MatMul     (before `<`, `(`)
 *   GPU     void at::native::reduce_kernel<512, 1, ...>(...) -> reduce_kernel
 *           void cutlass::Kernel2<cutlass_80_tensorop_gemm_...>(...)
 *                                           -> cutlass_80_tensorop_gemm_...
 *           ampere_sgemm_128x64_tn          -> ampere_sgemm_128x64_tn
 */
#include <string.h>

#include "ingest/kernel_type.h"

static int all_digits(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

const char *kernel_type_ascend(const char *name, size_t n, size_t *len)
{
    const char *p = name, *e = name + n;
    for (const char *q = p; q < e; q++)
        if (*q == '<' || *q == '(') {
            e = q;
            break;
        }
    for (const char *q = p; q < e; q++)
        if (*q == '/')
            p = q + 1;
    for (const char *q = p; q + 3 <= e; q++)
        if (q[0] == '-' && q[1] == 'o' && q[2] == 'p') {
            e = q;
            break;
        }
    /* the last part that is not all digits */
    const char *end = e;
    while (end > p) {
        const char *start = end;
        while (start > p && start[-1] != '_')
            start--;
        if (end > start && !all_digits(start, (size_t)(end - start))) {
            *len = (size_t)(end - start);
            return start;
        }
        end = start > p ? start - 1 : p;
    }
    *len = 0;
    return name;
}

/* [p, e) without leading and trailing blanks. */
static void trim(const char **p, const char **e)
{
    while (*p < *e && (**p == ' ' || **p == '\t'))
        (*p)++;
    while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

static int starts(const char *p, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(e - p) >= n && memcmp(p, lit, n) == 0;
}

/* The unqualified name of the function or type that [p, e) starts with;
 * *args points to its '<' when template arguments follow, else NULL. */
static void base_name(const char **p, const char **e, const char **args)
{
    static const char anon[] = "(anonymous namespace)";
    const char *s = *p, *end = *e;
    *args = NULL;
    trim(&s, &end);
    if (starts(s, end, "void "))
        s += 5;
    const char *cut = end, *b = s;
    for (const char *q = s; q < end; q++) {
        if (starts(q, end, anon)) {
            q += sizeof anon - 2;
            continue;
        }
        if (*q == '<' || *q == '(') {
            cut = q;
            if (*q == '<')
                *args = q;
            break;
        }
        if (q + 1 < end && q[0] == ':' && q[1] == ':')
            b = q + 2;
    }
    trim(&b, &cut);
    *p = b;
    *e = cut;
}

static int name_in(const char *p, const char *e, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == (size_t)(e - p) && memcmp(p, names[i], (size_t)(e - p)) == 0)
            return 1;
    return 0;
}

/* Generic launchers and wrappers: the kernel is named by what they run. */
static int is_launcher(const char *p, const char *e)
{
    static const char *const names[] = {
        "Kernel", "Kernel2", "device_kernel", "kernel", "launch_kernel", "elementwise_kernel",
        "vectorized_elementwise_kernel", "unrolled_elementwise_kernel", "elementwise_kernel_with_index",
        "reduce_kernel", "gpu_kernel_impl", "gpu_kernel_impl_nocast", "BinaryFunctor", "AUnaryFunctor",
        "BUnaryFunctor", "ReduceOp", "func_wrapper_t"};
    return name_in(p, e, names, sizeof names / sizeof names[0]);
}

/* A template argument that names no operation: a number or a scalar type. */
static int is_plain(const char *p, const char *e)
{
    static const char *const names[] = {
        "float", "double", "int", "long", "bool", "char", "short", "unsigned", "unsigned int", "unsigned long",
        "long long", "unsigned char", "signed char", "half", "__half", "__nv_bfloat16", "Half", "BFloat16",
        "int8_t", "uint8_t", "int16_t", "int32_t", "int64_t", "uint32_t", "uint64_t", "array", "complex",
        "true", "false"};
    if (p == e || (*p >= '0' && *p <= '9') || *p == '-')
        return 1;
    return name_in(p, e, names, sizeof names / sizeof names[0]);
}

/* The first template argument in <args ...> (args at the '<', end the name's
 * end) that names an operation: [*p, *e), 0; -1 when none does. */
static int first_op_arg(const char *args, const char *end, const char **p, const char **e)
{
    const char *a = args + 1;
    int depth = 0;
    for (const char *q = a; q <= end; q++) {
        int stop = q == end;
        if (!stop && (*q == '<' || *q == '(' || *q == '{'))
            depth++;
        else if (!stop && (*q == '>' || *q == ')' || *q == '}'))
            stop = depth-- == 0;
        else if (!stop && *q == ',' && depth == 0)
            stop = 1;
        if (!stop)
            continue;
        const char *ap = a, *ae = q, *inner;
        base_name(&ap, &ae, &inner);
        if (!is_plain(ap, ae)) {
            *p = a;
            *e = q;
            return 0;
        }
        if (q == end || *q != ',')
            return -1;
        a = q + 1;
    }
    return -1;
}

const char *kernel_type_gpu(const char *name, size_t n, size_t *len)
{
    const char *p = name, *e = name + n, *args, *end = name + n;
    base_name(&p, &e, &args);
    /* a launcher's operation, through at most a few wrappers */
    for (int depth = 0; depth < 6 && args && is_launcher(p, e); depth++) {
        const char *ap, *ae, *inner;
        if (first_op_arg(args, end, &ap, &ae))
            break;
        end = ae;
        base_name(&ap, &ae, &inner);
        if (ae == ap)
            break;
        p = ap;
        e = ae;
        args = inner;
    }
    *len = (size_t)(e - p);
    return p;
}
