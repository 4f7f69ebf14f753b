/* SPDX-License-Identifier: MIT */
/*
 * fuzz_topsprof.c - libFuzzer harness: each input is written as trace_nodes.txt, the name
 * under which detection hands it to the reader this target aims at, and
 * loaded with tb_load (fuzz_util.h checks what a failed load promises):
 * the topsprof listing reader (topsprof.c, topsprof_import.c).
 */
#include "fuzz_util.h"
#include "ingest/topsprof_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load_as("trace_nodes.txt", data, size, topsprof_import);
    return 0;
}
