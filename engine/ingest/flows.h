/* SPDX-License-Identifier: MIT */
/*
 * flows.h - pairs flow starts (ph "s") with their finishes (ph "f") while a
 * trace streams (private to ingest/).
 *
 * Flow ends pair by (category, id): the first pending end of the other kind
 * with the same key is the partner. Pairs become TB_FLOW rows at once; ends
 * still waiting at the end of a file, or when too many wait, go to the
 * TB_FLOW_END staging table, which the DB stage pairs with SQL after loading
 * (a partner may arrive in a later flush). Memory stays bounded either way.
 */
#ifndef TB_INGEST_FLOWS_H
#define TB_INGEST_FLOWS_H

#include <stdint.h>

#include "db/rows.h"

typedef struct flow_pairer flow_pairer;

typedef struct flow_end {
    char ph;            /* 's' or 'f' */
    int64_t cat, name;  /* string ids, -2 when absent */
    const char *id;     /* flow id text (borrowed for the call) */
    size_t idn;
    tb_val pid, tid;    /* borrowed for the call */
    int has_ts;
    int64_t ts;
    int conn;           /* the id is a connection id (HostToDevice, ac2g) */
    int written;        /* FLOW_* bits: how the trace wrote this end */
} flow_end;

/* TB_FLOW.written: how the trace wrote the flow (docs/schema.md) */
enum { FLOW_ID_NUMBER = 1, FLOW_START_BP = 2, FLOW_FINISH_BP = 4 };

/* Returns new (free with fp_destroy) or NULL when out of memory. */
flow_pairer *fp_create(const row_sink *sink, int rank, int64_t *seq);
/* Adds one end; returns 0, -1 when the sink failed, -2 when out of memory. */
int fp_add(flow_pairer *fp, const flow_end *e);
/* Moves every waiting end to the staging table. Returns 0, -1 or -2 as fp_add. */
int fp_flush(flow_pairer *fp);
void fp_destroy(flow_pairer *fp);

#endif
