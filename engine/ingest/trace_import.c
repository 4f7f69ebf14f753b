/* SPDX-License-Identifier: MIT */
/*
 * trace_import.c - routes Chrome-trace events into unified-DB rows.
 *
 * Ascend timelines (msprof_*.json, trace_view.json) name their layers with
 * process_name metadata, and real files often put that metadata after the
 * events it names. An event of a top-level-array file whose pid has no name
 * yet is therefore spilled to a temporary file in a compact binary form and
 * routed again once the whole file is read. Kineto traces (top-level object)
 * route by category, so they never wait. Routing rules (DESIGN.md, "Identity
 * and routing rules"):
 *   Ascend Hardware X  -> TASK (+ COMPUTE_TASK_INFO for compute task types,
 *                         + MEMCPY_INFO for MEMCPY_ASYNC)
 *   Communication X    -> COMMUNICATION_OP (hcom_* ops) or TASK +
 *                         COMMUNICATION_TASK_INFO (the small tasks)
 *   CANN X             -> CANN_API;  Python X -> PYTORCH_API (+ STEP_TIME)
 *   Overlap Analysis X -> OVERLAP_ANALYSIS;  MsprofTx X -> MSTX_EVENTS
 *   Kineto kernel, MTIA mtia_ccp_events
 *                      -> TASK + COMPUTE_TASK_INFO, or TASK + COMMUNICATION_OP
 *                         for NCCL/RCCL/HCCL kernels
 *   gpu_memcpy/memset  -> TASK + MEMCPY_INFO (+ TB_MEMCPY_BW, the trace's bandwidth)
 *   cuda_runtime/driver, mtia_runtime
 *                      -> CANN_API (types 60001/60002/60006)
 *   cpu_op, user_annotation -> PYTORCH_API (+ STEP_TIME for ProfilerStep#N)
 *   flows s/f          -> TB_FLOW (paired after loading);  counters -> TB_COUNTER
 *   anything else      -> TB_EVENT. No event is dropped silently.
 * Of a Kineto trace's top-level keys, distributedInfo gives the rank and a
 * TB_PROFILE_META row (name "distributedInfo", the object as written),
 * deviceProperties the NPU_INFO rows, and every member but traceEvents and
 * baseTimeNanoseconds (deviceProperties too) a TB_PROFILE_META row, name
 * the key, value the JSON text as written, which export timeline writes
 * back. A GPU slice that is the first element of traceEvents gives a
 * TB_PROFILE_META row "traceEvents[0].correlation"
 * (HTA leaves its launch out of the queue length: metrics/hta_counters.c),
 * and a trace whose runtime calls are all `Runtime` (Kineto's name until
 * 2022) a row "runtimeCategory", for `export timeline` to write them back so.
 *
 * This file reads the file (its top-level keys, the spill file, a look at
 * its tail for late metadata) and routes each event; trace_route.c keeps
 * the processes and threads and writes the rows (trace_int.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "ingest/trace_import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/flows.h"
#include "util/jstream.h"
#include "ingest/trace_int.h"
#include "util/hash.h"

/* ---- spill file ------------------------------------------------------------ */

#define SPILL_SPANS 8

typedef struct spill_hdr {
    int64_t ts, dur, offset;
    uint32_t len[SPILL_SPANS];
    uint8_t type[SPILL_SPANS], flags[SPILL_SPANS];
    char ph;
    uint8_t has_ts, has_dur;
} spill_hdr;

static js_span *spill_span(trace_event *ev, int i)
{
    js_span *s[SPILL_SPANS] = {&ev->name, &ev->cat, &ev->id, &ev->bp, &ev->scope, &ev->pid, &ev->tid, &ev->args};
    return s[i];
}

#define SPILL_BUF (1u << 20)

static int spill_write(imp *im, const void *p, size_t n)
{
    if (im->slen + n > SPILL_BUF) {
        if (im->slen && fwrite(im->sbuf, 1, im->slen, im->spill) != im->slen)
            return -1;
        im->slen = 0;
        if (n > SPILL_BUF)
            return fwrite(p, 1, n, im->spill) == n ? 0 : -1;
    }
    memcpy(im->sbuf + im->slen, p, n);
    im->slen += n;
    return 0;
}

static int spill_event(imp *im, trace_event *ev)
{
    if (!im->spill) {
        if (!(im->spill = tmpfile())) {
            tb_error_set(im->err, TB_ERR_IO, "cannot create a temporary file: %s", strerror(errno));
            return -1;
        }
        if (!(im->sbuf = malloc(SPILL_BUF)))
            return trace_oom(im);
    }
    spill_hdr h;
    memset(&h, 0, sizeof h);
    h.ts = ev->ts_ns;
    h.dur = ev->dur_ns;
    h.offset = ev->offset;
    h.ph = ev->ph;
    h.has_ts = (uint8_t)ev->has_ts;
    h.has_dur = (uint8_t)ev->has_dur;
    for (int i = 0; i < SPILL_SPANS; i++) {
        js_span *s = spill_span(ev, i);
        h.len[i] = (uint32_t)s->n;
        h.type[i] = (uint8_t)s->type;
        h.flags[i] = (uint8_t)s->flags;
    }
    if (spill_write(im, &h, sizeof h))
        goto fail;
    for (int i = 0; i < SPILL_SPANS; i++) {
        js_span *s = spill_span(ev, i);
        if (s->n && spill_write(im, s->p, s->n))
            goto fail;
    }
    im->spilled++;
    return 0;
fail:
    tb_error_set(im->err, TB_ERR_IO, "cannot write a temporary file: %s", strerror(errno));
    return -1;
}

/* Reads exactly n bytes of the spill file through a large buffer. */
typedef struct spill_reader {
    FILE *f;
    char *buf;
    size_t len, pos;
} spill_reader;

static int spill_read(spill_reader *r, void *out, size_t n)
{
    char *o = out;
    while (n) {
        if (r->pos == r->len) {
            r->len = fread(r->buf, 1, SPILL_BUF, r->f);
            r->pos = 0;
            if (r->len == 0)
                return -1;
        }
        size_t k = r->len - r->pos < n ? r->len - r->pos : n;
        memcpy(o, r->buf + r->pos, k);
        r->pos += k;
        o += k;
        n -= k;
    }
    return 0;
}

static int route(imp *im, trace_event *ev);

static int replay_spill(imp *im)
{
    if (!im->spill)
        return 0;
    if ((im->slen && fwrite(im->sbuf, 1, im->slen, im->spill) != im->slen) || fflush(im->spill) != 0 ||
        fseek(im->spill, 0, SEEK_SET) != 0) {
        tb_error_set(im->err, TB_ERR_IO, "cannot read back a temporary file: %s", strerror(errno));
        return -1;
    }
    im->replaying = 1;
    im->slen = 0;
    spill_reader rd = {.f = im->spill, .buf = im->sbuf};
    char *buf = NULL;
    size_t cap = 0;
    trace_event *ev = malloc(sizeof *ev);
    if (!ev)
        return trace_oom(im);
    int rc = 0;
    for (uint64_t k = 0; k < im->spilled; k++) {
        spill_hdr h;
        if (spill_read(&rd, &h, sizeof h) != 0) {
            rc = -1;
            tb_error_set(im->err, TB_ERR_IO, "cannot read back a temporary file");
            break;
        }
        size_t total = 0;
        for (int i = 0; i < SPILL_SPANS; i++)
            total += h.len[i];
        if (total + 1 > cap) {
            size_t ncap = total + 1 > 2 * cap ? total + 1 : 2 * cap;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = trace_oom(im);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        if (total && spill_read(&rd, buf, total) != 0) {
            rc = -1;
            tb_error_set(im->err, TB_ERR_IO, "cannot read back a temporary file");
            break;
        }
        memset(ev, 0, offsetof(trace_event, argv));
        ev->ts_ns = h.ts;
        ev->dur_ns = h.dur;
        ev->offset = h.offset;
        ev->ph = h.ph;
        ev->has_ts = h.has_ts;
        ev->has_dur = h.has_dur;
        ev->n_keys = 1;
        size_t off = 0;
        for (int i = 0; i < SPILL_SPANS; i++) {
            js_span *s = spill_span(ev, i);
            s->p = buf + off;
            s->n = h.len[i];
            s->type = h.type[i];
            s->flags = h.flags[i];
            off += h.len[i];
        }
        if ((rc = route(im, ev)) != 0)
            break;
    }
    free(ev);
    free(buf);
    return rc;
}

/* ---- routing entry ----------------------------------------------------------- */

static int route(imp *im, trace_event *ev)
{
    int64_t pkey;
    if (trace_pid_key(im, ev->pid, &pkey))
        return -1;
    switch (ev->ph) {
    case 'M': {
        /* tracebook's own mark of a timeline it exported (export/timeline.c):
         * metadata about the file, not of a process */
        if (ev->name.type == JS_STR && ev->name.n == 16 && memcmp(ev->name.p, "tracebook_export", 16) == 0) {
            im->res->dest[TB_DEST_METADATA]++;
            return 0;
        }
        int r = trace_on_metadata(im, ev, pkey);
        if (r <= 0) {
            if (r == 0)
                im->res->dest[TB_DEST_METADATA]++;
            return r;
        }
        im->res->dest[TB_DEST_METADATA]++;
        return trace_put_event(im, ev, pkey);
    }
    case 's':
    case 'f':
        if (ev->has_ts)
            trace_note_time(im, ev);
        return trace_put_flow_end(im, ev, pkey);
    case 'C':
        if (ev->has_ts)
            trace_note_time(im, ev);
        return trace_put_counter(im, ev, pkey);
    case 'X': {
        if (!ev->has_ts) {
            im->res->dest[TB_DEST_TB_EVENT]++;
            return trace_put_event(im, ev, pkey);
        }
        proc *p = trace_proc_get(im, pkey, 0);
        if ((!p || !p->name) && !im->replaying && !im->top_object)
            return spill_event(im, ev);
        trace_note_time(im, ev);
        return trace_route_slice(im, ev, pkey, p);
    }
    case 'B': case 'E': case 'i': case 'I': case 'b': case 'e': case 'n': case 't':
    case 'P': case 'N': case 'O': case 'D': case 'S': case 'T': case 'p': case 'F':
    case 'R': case 'c': case 'v': case 'V':
        if (ev->has_ts)
            trace_note_time(im, ev);
        im->res->dest[TB_DEST_TB_EVENT]++;
        return trace_put_event(im, ev, pkey);
    default:
        im->res->dest[TB_DEST_UNKNOWN_PHASE]++;
        return trace_put_event(im, ev, pkey);
    }
}

/* A top-level member of a Kineto trace as written (schemaVersion,
 * deviceProperties, traceName, displayTimeUnit, ...): a TB_PROFILE_META row,
 * the name its key, the value its JSON text, for export timeline to write
 * back. 0, or -1 with err set. */
static int put_top_member(imp *im, js_span key, js_span val)
{
    size_t kn, vn;
    const char *k = js_str_decode(key, &im->dbuf, &im->dcap, &kn);
    const char *v = k ? js_raw_clean(val, &im->abuf, &im->acap, &vn) : NULL;
    if (!v)
        return trace_oom(im);
    tb_val row[3] = {VINT(im->opt->rank), VTEXT(k, kn), VTEXT(v, vn)};
    return trace_row(im, R_PROFILE_META, row);
}

static int on_top_key(imp *im, js_span key, js_span val)
{
    if (key.n == 19 && memcmp(key.p, "baseTimeNanoseconds", 19) == 0) {
        int64_t v;
        if (js_span_int(val, &v) == 0) {
            im->res->has_base_time = 1;
            im->res->base_time_ns = v;
        }
        return 0;
    }
    if ((key.n == 15 && memcmp(key.p, "distributedInfo", 15) == 0) ||
        (key.n == 16 && memcmp(key.p, "deviceProperties", 16) == 0)) {
        /* small objects: parse their members with the event parser's helpers */
        trace_event *tmp = calloc(1, sizeof *tmp);
        if (!tmp)
            return trace_oom(im);
        if (key.n == 15) {
            tmp->args = val;
            int64_t r;
            if (js_span_int(js_arg(tmp, "rank"), &r) == 0)
                im->res->trace_rank = r;
            /* kept as written: HTA tells an MTIA trace by its backend (metrics/hta_window.c) */
            tb_val v[3] = {VINT(im->opt->rank), VTEXT("distributedInfo", 15), VTEXT(val.p, val.n)};
            if (val.type == JS_OBJ && trace_row(im, R_PROFILE_META, v)) {
                free(tmp);
                return -1;
            }
        } else if (val.type == JS_ARR) {
            /* walk the array of {id, name, ...} objects */
            const char *p = val.p + 1, *e = val.p + val.n - 1;
            while (p < e) {
                while (p < e && *p != '{')
                    p++;
                if (p >= e)
                    break;
                int depth = 0, in_str = 0;
                const char *q = p;
                for (; q < e; q++) {
                    if (in_str) {
                        if (*q == '\\')
                            q++;
                        else if (*q == '"')
                            in_str = 0;
                    } else if (*q == '"')
                        in_str = 1;
                    else if (*q == '{')
                        depth++;
                    else if (*q == '}' && --depth == 0)
                        break;
                }
                tmp->args = (js_span){.p = p, .n = (size_t)(q + 1 - p), .type = JS_OBJ};
                tmp->args_state = 0;
                int64_t id;
                js_span nm = js_arg(tmp, "name");
                if (js_span_int(js_arg(tmp, "id"), &id) == 0 && nm.type == JS_STR) {
                    size_t n;
                    const char *s = js_str_decode(nm, &im->dbuf, &im->dcap, &n);
                    tb_val v[3] = {VINT(id), VTEXT(s, n), VINT(im->opt->rank)};
                    if (trace_row(im, R_NPU_INFO, v)) {
                        free(tmp);
                        return -1;
                    }
                }
                p = q + 1;
            }
        }
        free(tmp);
        if (key.n == 15)
            return 0;
    }
    return put_top_member(im, key, val);
}

static int flush_processes(imp *im)
{
    for (size_t i = 0; i < im->nproc_cap; i++) {
        proc *p = &im->procs[i];
        if (!p->used)
            continue;
        int dev = p->layer >= L_PYTHON && (p->device_label >= 0 || p->bare_npu) ? trace_proc_device(p) : -1;
        const char *layer = trace_layer_label(p->layer);
        tb_val v[8] = {VINT(im->opt->rank), trace_pid_val(im, p->key), p->name ? VTEXT(p->name, strlen(p->name)) : VNULL,
                       p->labels ? VTEXT(p->labels, strlen(p->labels)) : VNULL,
                       p->has_sort ? VINT(p->sort_index) : VNULL, dev < 0 ? VNULL : VINT(dev),
                       VTEXT(layer, strlen(layer)), VINT((int64_t)p->unrouted)};
        if (trace_row(im, R_PROCESS, v))
            return -1;
    }
    for (size_t i = 0; i < im->nthr_cap; i++) {
        thread *t = &im->threads[i];
        if (!t->used)
            continue;
        for (size_t k = 0; k + 1 < t->n_seen; k++) { /* the names before the last, which is t->name */
            tb_val e[5] = {VINT(im->opt->rank), trace_pid_val(im, t->pkey),
                           t->tid_str ? VTEXT(t->tid_str, strlen(t->tid_str)) : VINT(t->tid),
                           VTEXT(t->seen[k], strlen(t->seen[k])), VNULL};
            if (trace_row(im, R_THREAD, e))
                return -1;
        }
        tb_val v[5] = {VINT(im->opt->rank), trace_pid_val(im, t->pkey),
                       t->tid_str ? VTEXT(t->tid_str, strlen(t->tid_str)) : VINT(t->tid),
                       t->name ? VTEXT(t->name, strlen(t->name)) : VNULL, t->has_sort ? VINT(t->sort_index) : VNULL};
        if (trace_row(im, R_THREAD, v))
            return -1;
    }
    return 0;
}

static void imp_free(imp *im)
{
    for (size_t i = 0; i < im->nproc_cap; i++) {
        free(im->procs[i].name);
        free(im->procs[i].labels);
    }
    free(im->procs);
    for (size_t i = 0; i < im->nthr_cap; i++) {
        free(im->threads[i].name);
        for (size_t k = 0; k < im->threads[i].n_seen; k++)
            free(im->threads[i].seen[k]);
        free(im->threads[i].seen);
        free(im->threads[i].tid_str);
    }
    free(im->threads);
    for (size_t i = 0; i < im->n_str_pids; i++)
        free(im->str_pids[i]);
    free(im->str_pids);
    if (im->spill)
        fclose(im->spill);
    free(im->sbuf);
    free(im->steps);
    fp_destroy(im->flows);
    free(im->dbuf);
    free(im->abuf);
    slice_buf_free(&im->ashape);
    slice_buf_free(&im->avals);
    slice_buf_free(&im->apack);
    for (int i = 0; i < SHAPE_KINDS; i++)
        for (int j = 0; j < SHAPE_MEMO; j++)
            slice_buf_free(&im->shapes[i][j].buf);
}

/*
 * torch_npu writes its metadata at the end of the array. For a plain file,
 * read the metadata events of its last few MiB first, so that events of named
 * processes route at once instead of waiting in the spill file. Only whole
 * events that start at a line or after "}," count; anything else in the tail
 * is left to the normal pass, which sees every event again in order.
 */
#define TAIL_BYTES (4u << 20)

static void prescan_tail(imp *im, const char *path, trace_event *ev)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    unsigned char magic[2] = {0, 0};
    if (fread(magic, 1, 2, f) != 2 || (magic[0] == 0x1f && magic[1] == 0x8b) || fseeko(f, 0, SEEK_END) != 0) {
        fclose(f);
        return;
    }
    off_t size = ftello(f);
    off_t start = size > (off_t)TAIL_BYTES ? size - (off_t)TAIL_BYTES : 0;
    char *buf = malloc(TAIL_BYTES);
    size_t n = 0;
    if (buf && fseeko(f, start, SEEK_SET) == 0)
        n = fread(buf, 1, TAIL_BYTES, f);
    fclose(f);
    if (!buf)
        return;
    const char *p = buf, *e = buf + n;
    /* the first event start: a '{' after a newline or after "}," */
    while (p < e) {
        const char *q = memchr(p, '{', (size_t)(e - p));
        if (!q)
            break;
        const char *b = q;
        while (b > buf && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
            b--;
        int boundary = b == buf ? start == 0 : (b[-1] == '\n' || b[-1] == ',' || b[-1] == '[');
        if (boundary && b > buf && b[-1] == ',') {
            const char *c = b - 1;
            while (c > buf && (c[-1] == ' ' || c[-1] == '\n' || c[-1] == '\r' || c[-1] == '\t'))
                c--;
            boundary = c > buf && c[-1] == '}';
        }
        const char *next;
        if (boundary && js_parse_event_at(q, e, ev, &next)) {
            /* from here, events follow one another */
            p = q;
            im->prescanning = 1;
            while (p < e && js_parse_event_at(p, e, ev, &next)) {
                int64_t pkey;
                if (ev->ph == 'M' && trace_pid_key(im, ev->pid, &pkey) == 0)
                    trace_on_metadata(im, ev, pkey);
                p = next;
                while (p < e && (*p == ',' || *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
                    p++;
            }
            im->prescanning = 0;
            break;
        }
        p = q + 1;
    }
    free(buf);
}

tb_status trace_import(const char *path, const row_sink *sink, import_ids *ids, const import_opts *opt,
                       import_result *res, tb_error *err)
{
    imp im;
    memset(&im, 0, sizeof im);
    memset(res, 0, sizeof *res);
    res->trace_rank = -1;
    res->stop_offset = -1;
    im.sink = sink;
    im.ids = ids;
    im.opt = opt;
    im.res = res;
    im.path = path;
    im.err = err;
    tb_status st = TB_OK;
    trace_event *ev = malloc(sizeof *ev);
    jstream *js = js_open(path, err);
    if (js)
        js_set_max_item(js, opt->max_event_bytes);
    if (!ev || !js) {
        st = ev ? err->code : tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (!(im.flows = fp_create(sink, opt->rank, &ids->next_flow_seq))) {
        st = tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        goto done;
    }
    prescan_tail(&im, path, ev);
    int64_t next_progress = 64 << 20;
    for (;;) {
        js_span key, val;
        int it = js_next(js, ev, &key, &val, err);
        if (it == JS_ITEM_EVENT) {
            im.top_object = js_top_is_object(js);
            res->events++;
            if (ev->n_keys == 0) {
                res->dest[TB_DEST_EMPTY]++;
                continue;
            }
            /* a time outside the stored range (a 5e15 us ts + dur would not even fit) */
            if (ev->has_ts && !import_time_ok(ev->ts_ns, ev->has_dur && ev->dur_ns > 0 ? ev->dur_ns : 0)) {
                if (opt->strict_rows) {
                    st = tb_error_at(err, TB_ERR_PARSE, path, 0, 0, ev->offset,
                                     "a time outside +-2^62 ns (about 146 years from 1970)");
                    goto done;
                }
                res->dest[TB_DEST_BAD_TIME]++;
                continue;
            }
            im.first = im.top_object && res->events == 1;
            if (route(&im, ev) != 0) {
                st = err->code != TB_OK ? err->code
                                        : tb_error_at(err, TB_ERR_INTERNAL, path, 0, 0, -1,
                                                      "an event failed without a reason");
                if (err->file[0] == 0)
                    snprintf(err->file, sizeof err->file, "%s", path);
                if (err->offset < 0)
                    err->offset = ev->offset;
                goto done;
            }
            /* every 64 MiB read out of the file (decompressed: a .gz shows progress too) */
            if (opt->progress && js_bytes_done(js) >= next_progress) {
                opt->progress(opt->ctx, path, (uint64_t)js_raw_bytes_done(js), opt->total_bytes,
                              (uint64_t)js_bytes_done(js));
                next_progress = js_bytes_done(js) + (64 << 20);
            }
        } else if (it == JS_ITEM_TOPKEY) {
            im.top_object = 1;
            if (on_top_key(&im, key, val)) {
                st = err->code;
                goto done;
            }
        } else if (it == JS_ITEM_END) {
            res->trailing = js_trailing(js) > 0 ? js_trailing(js) : 0;
            break;
        } else if (it == JS_ITEM_TRUNCATED) {
            res->truncated = 1;
            res->stop_offset = js_stop_offset(js);
            break;
        } else {
            st = err->code;
            goto done;
        }
    }
    int frc = 0;
    if (replay_spill(&im) != 0 || (frc = fp_flush(im.flows)) != 0 || flush_processes(&im) != 0 ||
        trace_put_categories(&im) != 0) {
        if (frc == -2)
            trace_oom(&im);
        else if (frc != 0)
            row_sink_fail(im.sink, path, err);
        /* every failure sets err (its own problem, or the sink's) */
        st = err->code != TB_OK ? err->code
                                : tb_error_at(err, TB_ERR_INTERNAL, path, 0, 0, -1, "a row failed without a reason");
        goto done;
    }
    snprintf(res->kind, sizeof res->kind, "%s", im.top_object ? "kineto" : "ascend timeline");
done:
    js_close(js);
    free(ev);
    imp_free(&im);
    return st;
}
