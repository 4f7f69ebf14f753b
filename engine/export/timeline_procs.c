/* SPDX-License-Identifier: MIT */
/*
 * timeline_procs.c - the processes and threads of an exported timeline
 * (timeline_int.h): each row's process (the input's own, or one made with
 * msprof's pid layout for its layer), their threads, and the values of
 * their ids as the input wrote them. timeline.c (the export of a rank) and
 * timeline_events.c (the event writers) both use these; these use neither.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "metrics/metrics.h"
#include "output/timeline_out.h"
#include "spec/spec.h"
#include "query/window.h"
#include "session/session.h"
#include "tracebook/db.h"
#include "tracebook/export.h"
#include "export/timeline_int.h"

/* process name -> json_process key (formats.md); NULL: no key, always kept */
const char *timeline_layer_key(const char *name)
{
    static const char *const map[][2] = {
        {"Ascend Hardware", "ascend"}, {"Task Scheduler", "ascend"}, {"CANN", "cann"},
        {"Communication", "communication"}, {"HCCL", "communication"}, {"Overlap Analysis", "overlap_analyse"}, {"NPU MEM", "npu_mem"},
        {"Step Trace", "step_trace"}, {"MsprofTx", "msproftx"}, {"OS Runtime API", "os_runtime_api"},
        {"CPU Usage", "cpu_usage"}, {"Memory Usage", "memory_usage"}, {"Disk Usage", "disk_usage"},
        {"Network Usage", "network_usage"}, {"AI Core Freq", "freq"}, {"Low Power", "freq"}, {"HBM", "hbm"},
        {"DDR", "ddr"}, {"LLC", "llc"}, {"PCIe", "pcie"}, {"HCCS", "hccs"}, {"NIC", "nic"}, {"RoCE", "roce"},
        {"SIO", "sio"}, {"QoS", "qos"}, {"Acc PMU", "acc_pmu"}, {"Stars Soc Info", "stars_soc"},
        {"Stars Chip Trans", "stars_chip_trans"}, {"CCU", "ccu"}, {"Biu Perf", "biu_perf"}, {"Ub", "ub"},
        {"Block Detail", "block_detail"}, {"DPU", "dpu"}, {"Fusion Task", "fusion_task"},
    };
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static int layer_kept(const tl *t, const char *name)
{
    const char *k = timeline_layer_key(name);
    if (!k || !t->jp || t->jp->all)
        return 1;
    for (size_t i = 0; i < t->jp->n_layers; i++)
        if (strcmp(t->jp->layers[i], k) == 0)
            return 1;
    return 0;
}

/* ---- processes and threads ---------------------------------------------------- */

tb_status timeline_nomem(tb_error *err)
{
    return tb_error_set(err, TB_ERR_NOMEM, "timeline: out of memory");
}

char *timeline_dup_col(sqlite3_stmt *q, int c)
{
    const unsigned char *s = sqlite3_column_text(q, c);
    return s ? strdup((const char *)s) : NULL;
}

/* Reads a pid/tid column into *v (text copied). Returns -1 on OOM. */
int timeline_jv_col(sqlite3_stmt *q, int c, jv *v)
{
    memset(v, 0, sizeof *v);
    int ty = sqlite3_column_type(q, c);
    if (ty == SQLITE_TEXT) {
        v->text = 1;
        return (v->s = timeline_dup_col(q, c)) ? 0 : -1;
    }
    v->i = ty == SQLITE_FLOAT ? (int64_t)sqlite3_column_double(q, c) : sqlite3_column_int64(q, c);
    return 0;
}

void timeline_jv_free(jv *v)
{
    if (v->text)
        free(v->s);
    v->s = NULL;
}

void timeline_put_jv(tlw *w, const char *k, const jv *v)
{
    if (v->text)
        tlw_cstr(w, k, v->s);
    else
        tlw_int(w, k, v->i);
}

long timeline_find_proc(tl *t, const jv *pid)
{
    if (t->last < t->np && jv_eq(&t->procs[t->last].pid, pid))
        return (long)t->last;
    for (size_t i = 0; i < t->np; i++)
        if (jv_eq(&t->procs[i].pid, pid)) {
            t->last = i;
            return (long)i;
        }
    return -1;
}

long timeline_find_int_proc(tl *t, int64_t pid)
{
    jv v = {.i = pid};
    return timeline_find_proc(t, &v);
}

/* Adds a process (takes ownership of pid's text, name and labels). Returns its index or -1. */
long timeline_add_proc(tl *t, jv pid, char *name, char *labels, int64_t sort, int has_sort, int64_t device)
{
    if (t->np == t->capp) {
        size_t cap = t->capp ? t->capp * 2 : 16;
        proc *p = realloc(t->procs, cap * sizeof *p);
        if (!p) {
            timeline_jv_free(&pid);
            free(name);
            free(labels);
            return -1;
        }
        t->procs = p;
        t->capp = cap;
    }
    proc *p = &t->procs[t->np];
    *p = (proc){.pid = pid, .name = name, .labels = labels, .sort = sort, .has_sort = has_sort,
                .device = device, .keep = layer_kept(t, name)};
    return (long)t->np++;
}

int timeline_add_thread(tl *t, const jv *pid, int64_t tid, const char *name, int64_t sort)
{
    if (t->nt == t->capt) {
        size_t cap = t->capt ? t->capt * 2 : 64;
        thr *p = realloc(t->thrs, cap * sizeof *p);
        if (!p)
            return -1;
        t->thrs = p;
        t->capt = cap;
    }
    thr *h = &t->thrs[t->nt];
    memset(h, 0, sizeof *h);
    h->pid = *pid;
    if (pid->text && !(h->pid.s = strdup(pid->s)))
        return -1;
    h->tid.i = tid;
    if (!(h->name = strdup(name))) {
        timeline_jv_free(&h->pid);
        return -1;
    }
    h->sort = sort;
    h->has_sort = 1;
    t->nt++;
    return 0;
}

/*
 * The process of a layer (on a device, or the host when device < 0): the
 * input's own when the rank has one of that name and device, else one made
 * with msprof's pid layout. Returns its index, or -1 on OOM.
 */
long timeline_layer_proc(tl *t, const char *name, int64_t device, int sort)
{
    for (size_t i = 0; i < t->np; i++) {
        proc *p = &t->procs[i];
        if (p->name && strcmp(p->name, name) == 0 && (device < 0 || p->device < 0 || p->device == device))
            return (long)i;
    }
    int64_t dev = device < 0 ? HOST_DEVICE : (device & 31);
    int64_t pid = (t->base_pid << 10) | ((int64_t)sort << 5) | dev;
    while (timeline_find_int_proc(t, pid) >= 0)
        pid += (int64_t)1 << 10;
    char labels[32];
    if (device < 0)
        snprintf(labels, sizeof labels, "CPU");
    else
        snprintf(labels, sizeof labels, "NPU %" PRId64, device);
    char *n = strdup(name), *l = strdup(labels);
    if (!n || !l) {
        free(n);
        free(l);
        return -1;
    }
    long k = timeline_add_proc(t, (jv){.i = pid}, n, l, sort, 1, device);
    if (k >= 0)
        t->procs[k].made = 1;
    if (k >= 0 && strcmp(name, "Overlap Analysis") == 0) {
        static const char *const lanes[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free"};
        for (int i = 0; i < 4; i++)
            if (timeline_add_thread(t, &t->procs[k].pid, i, lanes[i], i))
                return -1;
    }
    return k;
}

/* The process of a pid met in a row: known, or added unnamed. -1 on OOM. */
long timeline_row_proc(tl *t, sqlite3_stmt *q, int col)
{
    jv v;
    if (timeline_jv_col(q, col, &v))
        return -1;
    long k = timeline_find_proc(t, &v);
    if (k >= 0) {
        timeline_jv_free(&v);
        return k;
    }
    return timeline_add_proc(t, v, NULL, NULL, 0, 0, -1);
}
