/* SPDX-License-Identifier: MIT */
/*
 * tracebook.h - the one public header of the tracebook engine.
 *
 * The engine is a library: it reads parsed accelerator profile data, loads it
 * into the unified SQLite trace DB and runs report specs over it. One header
 * per stage, in the order data flows: load.h (finding and loading inputs),
 * db.h (the unified DB), spec.h (the spec language), query.h (the runner
 * and the window), session.h (a run: inputs, DB, window), report.h (the report
 * job), export.h (timeline, summary, print), nightly.h (compare, history),
 * output.h (rows, cells and the writers' sink); error.h is shared by all,
 * and progress.h gives the text of a progress line.
 * It never prints and never exits; every call that can fail fills a
 * caller-owned tb_error. The `tracebook` command in engine/cli/ is a thin
 * shell over this header.
 */
#ifndef TRACEBOOK_H
#define TRACEBOOK_H

#include "tracebook/error.h"
#include "tracebook/progress.h"
#include "tracebook/load.h"
#include "tracebook/db.h"
#include "tracebook/spec.h"
#include "tracebook/query.h"
#include "tracebook/session.h"
#include "tracebook/report.h"
#include "tracebook/export.h"
#include "tracebook/nightly.h"
#include "tracebook/output.h"

#endif
