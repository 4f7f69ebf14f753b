/* SPDX-License-Identifier: MIT */
/*
 * fuzz_csv.c - libFuzzer harness: each input is written as kernel_details.csv, the name
 * under which detection hands it to the reader this target aims at, and
 * loaded with tb_load (fuzz_util.h checks what a failed load promises):
 * the CSV reader (csv.c) under the torch_npu text importer (npu_text.c).
 */
#include "fuzz_util.h"
#include "ingest/npu_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load_as("kernel_details.csv", data, size, npu_text_import);
    return 0;
}
