/* SPDX-License-Identifier: MIT */
/*
 * trace_int.h - what the Chrome-trace importer's two files share (private to
 * ingest/).
 *
 * trace_import.c reads a trace file (its top-level keys, the spill file of
 * events that wait for their process_name, the import driver) and hands
 * each event to route(); trace_route.c keeps the processes and threads the
 * metadata names and turns each event into the rows of its layer or
 * category. Both work on one imp.
 */
#ifndef TB_INGEST_TRACE_INT_H
#define TB_INGEST_TRACE_INT_H

#include <stdint.h>
#include <stdio.h>

#include "db/slice_args.h"
#include "ingest/flows.h"
#include "ingest/importer.h"
#include "util/jstream.h"

#define INVALID_ID 4294967295LL

enum layer {
    L_UNKNOWN = 0, /* no process_name seen (yet) */
    L_OTHER,       /* named, not an Ascend layer: route by category */
    L_PYTHON, L_PYTHON_GC, L_CANN, L_HW, L_COMM, L_OVERLAP, L_MSTX, L_ASCEND_OTHER
};

enum api_type {
    API_ACL = 20000, API_MODEL = 15000, API_NODE = 10000, API_HCCL = 5500, API_RUNTIME = 5000,
    API_OP = 50001, API_QUEUE = 50002, API_TRACE = 50003, API_MSTX = 50004,
    API_CUDA_RUNTIME = 60001, API_CUDA_DRIVER = 60002, API_USER_ANNOTATION = 60003, API_MTIA_RUNTIME = 60006
};

typedef struct proc {
    int64_t key;
    int used;
    int layer;
    char *name, *labels;
    int64_t sort_index;
    int has_sort;
    int device_label;  /* device from "NPU <n>", -1 none */
    int bare_npu;      /* labels say "NPU" without a number */
    uint64_t unrouted; /* its events kept only in TB_EVENT or TB_COUNTER */
} proc;

typedef struct thread {
    int64_t pkey, tid;
    int used;
    char *name;  /* the last thread_name */
    char **seen; /* the names of every thread_name event of the thread, in order (the tail's prescan aside) */
    size_t n_seen;
    int64_t sort_index;
    int has_sort;
    char *tid_str;
} thread;

/* The kinds of routed slices, each with the last args shapes it met. */
enum { SHAPE_PYTORCH, SHAPE_CANN, SHAPE_HW_TASK, SHAPE_HCCL_TASK, SHAPE_GPU_TASK, SHAPE_COMM_OP, SHAPE_MSTX,
       SHAPE_KINDS };

#define SHAPE_MEMO 32 /* shapes remembered per kind (a power of 2) */

typedef struct shape_memo {
    slice_buf buf;
    int64_t id;
} shape_memo;

/*
 * The ids of the names met last (a task's name and type, a call's name), by
 * a hash of their length and first and last bytes: a name met again is
 * compared here, in a few KiB that stay in the cache, instead of hashed and
 * looked up in the sink's table of every string. NAME_MEMO_MAX bytes at most.
 */
#define NAME_MEMO 256 /* a power of 2 */
#define NAME_MEMO_MAX 52

typedef struct name_memo {
    int64_t id;
    uint32_t n1; /* the name's length + 1; 0: empty */
    char s[NAME_MEMO_MAX];
} name_memo;

typedef struct imp {
    const row_sink *sink;
    import_ids *ids;
    const import_opts *opt;
    import_result *res;
    const char *path;
    int top_object;
    proc *procs;
    size_t nproc_cap, nproc;
    thread *threads;
    size_t nthr_cap, nthr;
    char **str_pids;
    size_t n_str_pids;
    FILE *spill;
    char *sbuf; /* spill write buffer */
    size_t slen;
    flow_pairer *flows;
    int64_t *steps; /* ProfilerStep ids stored */
    size_t nsteps;
    uint64_t spilled;
    int replaying;
    int prescanning; /* metadata of the file's tail read ahead: seen again in order later */
    int first;       /* the event being routed is the first of a Kineto trace's traceEvents */
    int runtime_cats; /* the runtime call categories met: 1 cuda_runtime, 2 Runtime (Kineto's name until 2022) */
    char *dbuf;
    size_t dcap;
    char *abuf;
    size_t acap;
    slice_buf ashape, avals, apack; /* the args of the slice being routed, its values packed (db/slice_args.h) */
    shape_memo shapes[SHAPE_KINDS][SHAPE_MEMO];
    name_memo names[NAME_MEMO];
    tb_error *err;
} imp;

/* ---- trace_route.c ---- */

/* The process of key (a pid key), made when create and not there yet;
 * NULL when absent or out of memory. Borrowed (valid until the next call
 * that creates one). */
proc *trace_proc_get(imp *im, int64_t key, int create);
/* Fills im->err with "out of memory". Returns -1. */
int trace_oom(imp *im);
/* Key of a pid value: the number itself, or a slot for string pids. */
int trace_pid_key(imp *im, js_span pid, int64_t *key);
/* The pid of a key as a row value: the number, or the string it was written as. */
tb_val trace_pid_val(imp *im, int64_t key);
/* One row into the sink, unless a better source of this rank filled the table. 0, or -1 with err set. */
int trace_row(imp *im, int table, const tb_val *v);
/* Widens the file's time span to the event's. */
void trace_note_time(imp *im, const trace_event *ev);
/* The layer's name as written in process_name ("CANN", "Ascend Hardware", ...). */
const char *trace_layer_label(int layer);
/* Device id of an Ascend process (DESIGN.md: labels, else the pid's low bits). */
int trace_proc_device(const proc *p);
/* A metadata event (ph M): names and labels of processes and threads. 0, or -1 with err set. */
int trace_on_metadata(imp *im, trace_event *ev, int64_t pkey);
/* Any event as it was written, to TB_EVENT. 0, or -1 with err set. */
int trace_put_event(imp *im, trace_event *ev, int64_t pkey);
/* A complete slice (ph X) into the rows of its process's layer, or by its category. 0, or -1 with err set. */
int trace_route_slice(imp *im, trace_event *ev, int64_t pkey, proc *p);
/* A flow start or end (ph s/f), to be paired after loading. 0, or -1 with err set. */
int trace_put_flow_end(imp *im, trace_event *ev, int64_t pkey);
/* A counter event (ph C): one TB_COUNTER row per numeric arg. 0, or -1 with err set. */
int trace_put_counter(imp *im, trace_event *ev, int64_t pkey);
/* After the file: the TB_PROFILE_META row "runtimeCategory" of a trace whose
 * runtime calls are all Kineto's older `Runtime`. 0, or -1 with err set. */
int trace_put_categories(imp *im);

#endif
