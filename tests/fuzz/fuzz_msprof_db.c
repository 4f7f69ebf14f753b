/* SPDX-License-Identifier: MIT */
/*
 * fuzz_msprof_db.c - libFuzzer harness: each input is written as msprof_0.db, the name
 * under which detection hands it to the reader this target aims at, and
 * loaded with tb_load (fuzz_util.h checks what a failed load promises):
 * the msprof DB importer (msprof_db.c) on mutated SQLite files. Seeds are
 * small DBs with 512-byte pages, so that mutations reach their records.
 */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load_as("msprof_0.db", data, size);
    return 0;
}
