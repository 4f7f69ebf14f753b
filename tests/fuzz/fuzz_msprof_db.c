/* SPDX-License-Identifier: MIT */
/*
 * fuzz_msprof_db.c - libFuzzer harness: each input is written as msprof_0.db, the name
 * under which detection hands it to the reader this target aims at, and
 * loaded with tb_load (fuzz_util.h checks what a failed load promises):
 * the msprof DB importer (msprof_db.c) on mutated SQLite files. Seeds are
 * small DBs with 512-byte pages, so that mutations reach their records.
 */
#include "fuzz_util.h"
#include "ingest/msprof_db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The importer of a DB holding one rank. */
static tb_status msprof_db_one(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                               import_result *res, tb_error *err)
{
    return msprof_db_import(path, sink, ids, opt, NULL, res, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load_as("msprof_0.db", data, size, msprof_db_one);
    return 0;
}
