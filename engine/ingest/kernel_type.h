/* SPDX-License-Identifier: MIT */
/*
 * kernel_type.h - the operator type of a kernel whose input gives none
 * (private to ingest/).
 *
 * A trace_view.json alone and a Kineto trace name their kernels but give
 * no type, and op_statistic groups by type. The trace importer then takes
 * the type from the kernel's name by the rules of docs/inputs.md "Kernel
 * types", one for Ascend device tasks and one for GPU kernels, and counts
 * the kernels so typed (TB_LOAD_COUNT, tracebook_run.json).
 */
#ifndef TB_INGEST_KERNEL_TYPE_H
#define TB_INGEST_KERNEL_TYPE_H

#include <stddef.h>

/* The type of an Ascend task named name[0..n): the last `_` part that is not
 * all digits, of the name before any `<` or `(`, after the last `/` and
 * before `-op`. *len gets its length
 * (0: none). Returns a pointer into name (borrowed). */
const char *kernel_type_ascend(const char *name, size_t n, size_t *len);

/* The type of a GPU kernel named name[0..n): the function's own name, without
 * `void `, namespaces, template arguments and parameters; for a generic
 * launcher (cutlass::Kernel, device_kernel, ...) its first template
 * argument's. *len gets its length (0: none). Returns a pointer into name
 * (borrowed). */
const char *kernel_type_gpu(const char *name, size_t n, size_t *len);

#endif
