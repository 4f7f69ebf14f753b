/* SPDX-License-Identifier: MIT */
/*
 * timeline_int.h - what the files of `export timeline` share (private to
 * engine/export/). timeline_procs.c holds the processes and threads of a
 * rank; timeline_events.c writes the events of every layer of a rank
 * through them; timeline.c writes their metadata events and runs over the
 * ranks and files, calling both (calls go one way).
 */
#ifndef TB_EXPORT_TIMELINE_INT_H
#define TB_EXPORT_TIMELINE_INT_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "db/slice_args.h"
#include "output/timeline_out.h"
#include "spec/spec.h"
#include "tracebook/error.h"
#include "tracebook/export.h"

/* msprof's id of none (a task of no model); the device id of the host's processes */
#define INVALID_ID 4294967295LL
#define HOST_DEVICE 31

/* A pid or tid as the input had it: a number, or text (Kineto's "Spans"). */
typedef struct jv {
    int text;
    int64_t i;
    char *s; /* owned when text */
} jv;

/* A process of the rank's timeline: the input's own, or one made here. */
typedef struct proc {
    jv pid;
    char *name, *labels;
    int64_t sort;
    int has_sort;
    int64_t device;     /* -1: none */
    int keep;
    int written;        /* metadata written in the current slice */
    int made;           /* made here (the input had no such process) */
} proc;

/* A thread of a process, named by the input (or "Stream <id>" when made). */
typedef struct thr {
    jv pid, tid;
    char *name;
    int64_t sort;
    int has_sort;
    int written;
} thr;

/* An export: the session's DB and window, the rank being written, its
 * processes and threads, and the writer of its files. */
typedef struct tl {
    sqlite3 *db;              /* the session's connection */
    const char *db_path;
    const tb_window *window;  /* the session's */
    char out_dir[4096];       /* the folder written */
    const tb_timeline_options *opt;
    tb_timeline_result *res;
    const tb_json_process *jp;
    int64_t rank;
    int kineto;
    char runtime_cat[32]; /* a Kineto rank's cat of runtime calls (TB_PROFILE_META runtimeCategory); "": cuda_runtime */
    int64_t base_pid;
    proc *procs;
    size_t np, capp;
    thr *thrs;
    size_t nt, capt;
    size_t last;        /* the last proc found: events come in runs */
    tlw *w;
    int lanes_built;
    int shaped;         /* the DB keeps the args of timeline slices (argsShape) */
    int flow_written;   /* the DB keeps how each flow was written (TB_FLOW.written) */
    slice_buf abuf;     /* one slice's args, expanded */
    slice_buf vbuf;     /* its values unpacked */
    struct fid { dev_t dev; ino_t ino; } *inputs; /* files an output must not replace */
    size_t n_inputs;
} tl;

/* 1 when two pids or tids are the same. */
static inline int jv_eq(const jv *a, const jv *b)
{
    return a->text == b->text && (a->text ? strcmp(a->s, b->s) == 0 : a->i == b->i);
}

/* The json_process key of a process name (formats.md); NULL: no key, always kept. */
const char *timeline_layer_key(const char *name);

/* Sets err to the export's out-of-memory error and returns it. */
tb_status timeline_nomem(tb_error *err);

/* Column c of q as a new string (NULL when NULL or out of memory: free with free). */
char *timeline_dup_col(sqlite3_stmt *q, int c);

/* Reads a pid/tid column into *v (text copied: free with timeline_jv_free). Returns -1 on OOM. */
int timeline_jv_col(sqlite3_stmt *q, int c, jv *v);

/* Frees v's text. */
void timeline_jv_free(jv *v);

/* Writes v as member k: a number or a string. */
void timeline_put_jv(tlw *w, const char *k, const jv *v);

/* The index of the process of pid, or -1. */
long timeline_find_proc(tl *t, const jv *pid);

/* The index of the process of a numeric pid, or -1. */
long timeline_find_int_proc(tl *t, int64_t pid);

/* Adds a process (takes ownership of pid's text, name and labels). Returns its index or -1. */
long timeline_add_proc(tl *t, jv pid, char *name, char *labels, int64_t sort, int has_sort, int64_t device);

/* Adds a thread of pid unless there. Returns 0, or -1 on OOM. */
int timeline_add_thread(tl *t, const jv *pid, int64_t tid, const char *name, int64_t sort);

/* The process of a layer on a device (device < 0: the host). Returns its index, or -1 on OOM. */
long timeline_layer_proc(tl *t, const char *name, int64_t device, int sort);

/* The process of a pid met in column col of a row: known, or added unnamed. -1 on OOM. */
long timeline_row_proc(tl *t, sqlite3_stmt *q, int col);

/* timeline_events.c: column c of q's row as text (borrowed until the next step). */
const char *timeline_col_text(sqlite3_stmt *q, int c);

/* timeline_events.c: the processes of the layers the rank's rows need, for a
 * rank whose input had no processes of its own. */
tb_status timeline_make_layers(tl *t, tb_error *err);

/* timeline_events.c: every layer's events of the rank into t->w. */
tb_status timeline_write_layers(tl *t, tb_error *err);

#endif
