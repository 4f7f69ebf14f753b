/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c - libFuzzer harness: each input is written as trace_view.json, the name
 * under which detection hands it to the reader this target aims at, and
 * loaded with tb_load (fuzz_util.h checks what a failed load promises):
 * the JSON tokenizer (jstream.c) and the trace importer (trace_import.c).
 */
#include "fuzz_util.h"
#include "ingest/trace_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load_as("trace_view.json", data, size, trace_import);
    return 0;
}
