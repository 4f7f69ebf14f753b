/* SPDX-License-Identifier: MIT */
/*
 * mpi.c - `mpirun -n P tracebook ...`: the processes' transport, handed to
 * the engine as its distribution hook (tb_dist, tracebook/session.h;
 * docs/scale-out.md).
 *
 * The same command line runs on every process. The session does the rest
 * (engine/session/dist.c): process 0 starts rounds in which every process
 * loads its part of the ranks, the others serve them until process 0 ends
 * the run. This file only moves bytes: a broadcast from process 0 and a
 * gather to it, each waited for without spinning, and the test hooks that
 * stop a process at a checkpoint.
 *
 * The library knows nothing of MPI: this file is the only one that calls
 * it, and a build without MPI (TB_HAVE_MPI unset) or a run without mpirun
 * gets the stubs at the end, which keep everything as it is.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#ifdef TB_HAVE_MPI
#include <mpi.h>

static tb_dist dist;   /* size 0: not started */
static int served;     /* this process served process 0's rounds */

/*
 * Waits for a collective without spinning. Open MPI polls while a blocking
 * call waits, a core per process: the processes waiting for process 0 to
 * merge and write would take the cores it needs (a 2-core machine ran a
 * 2-process report 4x slower). Testing with growing sleeps between costs
 * at most 20 ms at the end of a wait of seconds.
 */
static void settle(MPI_Request *r)
{
    long ns = 100000;
    for (;;) {
        int done = 0;
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 20000000)
            ns *= 2;
    }
}

static void bcast(void *ctx, void *buf, size_t n)
{
    (void)ctx;
    MPI_Request r;
    MPI_Ibcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    settle(&r);
}

static void gather(void *ctx, const void *mine, void *all, size_t n)
{
    (void)ctx;
    MPI_Request r;
    MPI_Igather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    settle(&r);
}

static void abort_all(void *ctx, int code)
{
    (void)ctx;
    MPI_Abort(MPI_COMM_WORLD, code);
}

/* 1 when the environment variable names this process (a decimal number). */
static int names_me(const char *var)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long k = strtol(v, &end, 10);
    return errno == 0 && *end == 0 && k == dist.rank;
}

/* Test hooks (tests/cli/scale_test.py): this process dies with its part
 * loaded, or with its partial rows written. */
static void checkpoint(void *ctx, const char *what)
{
    (void)ctx;
    if ((!strcmp(what, "loaded") && names_me("TRACEBOOK_TEST_MPI_KILL")) ||
        (!strcmp(what, "partial") && names_me("TRACEBOOK_TEST_MPI_KILL_PARTIAL")))
        raise(SIGKILL);
}

/* Launched by an MPI launcher: Open MPI's mpirun, or a PMI/PMIx one (srun). */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

void cli_mpi_start(const cli_command *cmd)
{
    static const char *const loading[] = {"report", "export db", "export summary", "export timeline", "info",
                                          "compare"};
    int loads = 0;
    for (size_t i = 0; i < sizeof loading / sizeof loading[0]; i++)
        loads |= !strcmp(cmd->name, loading[i]);
    if (!loads || !launched() || MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return;
    int size = 1, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    dist = (tb_dist){.size = size, .rank = me, .bcast = bcast, .gather = gather, .abort = abort_all,
                     .checkpoint = checkpoint};
}

const tb_dist *cli_mpi_dist(void)
{
    return dist.size > 1 ? &dist : NULL;
}

void cli_mpi_served(void)
{
    served = 1;
}

int cli_mpi_finish(int rc)
{
    if (!dist.size)
        return rc;
    /* process 0 ends every process with its code; a process that served
     * has its code already, one that failed before its session answers
     * process 0's rounds until then */
    if (dist.size > 1 && (dist.rank == 0 || !served))
        rc = tb_dist_end(&dist, rc);
    fflush(NULL);
    MPI_Finalize();
    return rc;
}

#else /* no MPI in this build: one process, as always */

void cli_mpi_start(const cli_command *cmd)
{
    (void)cmd;
}

const tb_dist *cli_mpi_dist(void)
{
    return NULL;
}

void cli_mpi_served(void)
{
}

int cli_mpi_finish(int rc)
{
    return rc;
}

#endif
