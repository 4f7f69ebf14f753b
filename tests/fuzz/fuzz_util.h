/* SPDX-License-Identifier: MIT */
/*
 * fuzz_util.h - what the fuzz harnesses share: a private temporary folder per
 * process and a load of one file through tb_load.
 *
 * The loading harnesses (trace, csv, topsprof, msprof_db) write the input
 * under a name that makes detection pick the reader they aim at, load it into
 * a DB beside it and check the load's promise: on error a message, and
 * nothing at the DB's path. Everything is removed before the next input.
 * A whole load builds a DB (schema, indexes, views): about 50 ms. So under
 * libFuzzer most inputs go to the target's importer alone, into a sink that
 * checks each row and string and keeps nothing (thousands a second), and
 * every 64th input also through tb_load; the standalone driver
 * (TB_FUZZ_DRIVER) does both for every input, and so does libFuzzer when
 * TB_FUZZ_LOAD_ALL is set in the environment (tests/fuzz/pick: the edges an
 * input reaches are then those it reaches when the corpus is replayed).
 * Header-only, static functions: each harness is one translation unit.
 */
#ifndef TB_FUZZ_UTIL_H
#define TB_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/rows.h"
#include "ingest/importer.h"
#include "tracebook/tracebook.h"

/* An importer of ingest/ (trace_import, npu_text_import, ...). */
typedef tb_status (*fuzz_importer)(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                                   import_result *res, tb_error *err);

typedef struct fuzz_sink {
    int64_t next_id;
    unsigned sum;     /* every byte given is read: ASan sees a bad pointer or length */
    tb_error none;
} fuzz_sink;

static int64_t fuzz_intern(void *ctx, const char *s, size_t n)
{
    fuzz_sink *fs = ctx;
    for (size_t i = 0; i < n; i++)
        fs->sum += (unsigned char)s[i];
    return fs->next_id++;
}

static int fuzz_row(void *ctx, int table, const tb_val *vals)
{
    fuzz_sink *fs = ctx;
    if (table < 0 || table >= R_TABLE_COUNT)
        abort();
    for (int c = 0; c < row_tables[table].ncols; c++) {
        if (vals[c].type < V_NULL || vals[c].type > V_BLOB)
            abort();
        if (vals[c].type == V_TEXT || vals[c].type == V_BLOB)
            for (size_t i = 0; i < vals[c].n; i++)
                fs->sum += (unsigned char)vals[c].s[i];
    }
    return 0;
}

static const tb_error *fuzz_sink_error(void *ctx)
{
    return &((fuzz_sink *)ctx)->none;
}

static char fuzz_dir_path[1024];

/* At exit: removes the process's folder (what the harnesses left in it is
 * theirs to remove first). */
static void fuzz_dir_remove(void)
{
    char in_dir[1100];
    snprintf(in_dir, sizeof in_dir, "%s/in", fuzz_dir_path);
    rmdir(in_dir);
    rmdir(fuzz_dir_path);
}

/* The process's own folder under $TMPDIR (static, created on first use). */
static inline const char *fuzz_dir(void)
{
    char *dir = fuzz_dir_path;
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof fuzz_dir_path, "%s/tb-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            abort();
        atexit(fuzz_dir_remove);
    }
    return dir;
}

/* Writes data to path (whole file); aborts when it cannot. */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
}

/* Runs the file at path through one importer alone. */
static inline void fuzz_import(const char *path, fuzz_importer imp)
{
    fuzz_sink fs = {.next_id = 1};
    tb_error_clear(&fs.none);
    row_sink sink = {.ctx = &fs, .intern = fuzz_intern, .row = fuzz_row, .error = fuzz_sink_error};
    import_ids ids = {0};
    import_result res;
    memset(&res, 0, sizeof res);
    res.trace_rank = -1;
    tb_error err;
    tb_error_clear(&err);
    tb_status st = imp(path, &sink, &ids, &(import_opts){.rank = 0}, &res, &err);
    if (st != TB_OK && (!err.message[0] || st == TB_ERR_INTERNAL)) {
        fprintf(stderr, "fuzz: %s\n", err.message);
        abort();
    }
}

/* Loads data written as `<fuzz_dir>/in/<name>` (through imp alone, and now
 * and then through tb_load); checks what a failed load promises and removes
 * the files again. */
static inline void fuzz_load_as(const char *name, const uint8_t *data, size_t size, fuzz_importer imp)
{
    static unsigned long calls;
    char in_dir[1100], in[1400], out[1100];
    snprintf(in_dir, sizeof in_dir, "%s/in", fuzz_dir());
    snprintf(in, sizeof in, "%s/%s", in_dir, name);
    snprintf(out, sizeof out, "%s/out.db", fuzz_dir());
    mkdir(in_dir, 0700);             /* exists after the first input */
    fuzz_write(in, data, size);
    fuzz_import(in, imp);
#ifndef TB_FUZZ_DRIVER
    static int load_all = -1;
    if (load_all < 0)
        load_all = getenv("TB_FUZZ_LOAD_ALL") != NULL;
    if (!load_all && calls++ % 64 != 0) {
        unlink(in);
        return;
    }
#else
    (void)calls;
#endif
    const char *inputs[] = {in_dir};
    tb_error err;
    tb_error_clear(&err);
    tb_load_result res;
    tb_status st = tb_load(&(tb_load_options){.inputs = inputs, .n_inputs = 1, .output = out, .jobs = 1}, &res, &err);
    if (st != TB_OK) {
        if (!err.message[0])
            abort();                 /* every error says what went wrong */
        if (access(out, F_OK) == 0)
            abort();                 /* and leaves nothing at the DB's path */
        if (st == TB_ERR_INTERNAL)
            abort();                 /* a broken invariant is a bug */
    }
    unlink(out);
    unlink(in);
    /* no temporary file of the load is left behind, failed or not */
    DIR *d = opendir(fuzz_dir());
    if (!d)
        abort();
    for (struct dirent *de; (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "in")) {
            fprintf(stderr, "fuzz: left behind: %s\n", de->d_name);
            abort();
        }
    closedir(d);
}

#endif
