/* SPDX-License-Identifier: MIT */
/*
 * load_warn.c - the warnings of a load.
 *
 * A warning is shown through the caller's callback as it comes and kept for
 * TB_WARNING (written with the bookkeeping rows, load_books.c). A rank group
 * loading on a thread of its own keeps its own log, shown and kept in the
 * load's log when the group is replayed, so warnings come in input order.
 * The importers' warn and progress callbacks land here too.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/load_int.h"

/* Keeps msg as a warning of source src. */
static void warn_keep(warn_log *wl, const char *msg, int64_t src)
{
    if (wl->n == wl->cap) {
        size_t nc = wl->cap ? wl->cap * 2 : 16;
        char **nm = realloc(wl->msgs, nc * sizeof *nm);
        int64_t *ns = nm ? realloc(wl->src_ids, nc * sizeof *ns) : NULL;
        if (nm)
            wl->msgs = nm;
        if (!nm || !ns)
            return; /* shown, not kept: out of memory */
        wl->src_ids = ns;
        wl->cap = nc;
    }
    if ((wl->msgs[wl->n] = strdup(msg)) != NULL)
        wl->src_ids[wl->n++] = src;
}

/* Shows msg (when the log is live) and keeps it as a warning of source src. */
void load_warn_src(warn_log *wl, const char *msg, int64_t src)
{
    if (wl->live && wl->opt->warn) {
        if (wl->cb_mu)
            pthread_mutex_lock(wl->cb_mu);
        wl->opt->warn(wl->opt->ctx, msg);
        if (wl->cb_mu)
            pthread_mutex_unlock(wl->cb_mu);
    }
    if (wl->res)
        wl->res->warnings++;
    warn_keep(wl, msg, src);
}

void load_warn_add(warn_log *wl, const char *msg)
{
    load_warn_src(wl, msg, wl->source);
}

void load_warnf(warn_log *wl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void load_warnf(warn_log *wl, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    load_warn_add(wl, msg);
}

/* The importers' callbacks: warnings into the log, progress to the caller. */
void load_import_warn(void *ctx, const char *msg)
{
    load_warn_add(ctx, msg);
}

void load_import_progress(void *ctx, const char *file, uint64_t done, uint64_t total, uint64_t bytes)
{
    warn_log *wl = ctx;
    if (!wl->opt->progress)
        return;
    if (wl->cb_mu)
        pthread_mutex_lock(wl->cb_mu);
    wl->opt->progress(wl->opt->ctx, file, done, total, bytes);
    if (wl->cb_mu)
        pthread_mutex_unlock(wl->cb_mu);
}

void load_warn_log_free(warn_log *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        free(wl->msgs[i]);
    free(wl->msgs);
    free(wl->src_ids);
    wl->msgs = NULL;
    wl->src_ids = NULL;
    wl->n = wl->cap = 0;
}
