/* SPDX-License-Identifier: MIT */
/*
 * mpi.c - `mpirun -n P tracebook ...`: the load spread over P processes
 * (docs/scale-out.md).
 *
 * The same command line runs on every process. Where a command loads its
 * inputs (cli_obtain_db, export db), process 0 makes a private folder and
 * tells every process its name and the inputs; process p loads part p of P
 * of the ranks (the same assignment as `export db --shard p/P`) into
 * FOLDER/shard_p_of_P.db; every process's outcome (a tb_error) is gathered
 * at process 0, which decides for all: a failed part fails the run with its
 * process and file named, before any output is written, unless
 * --keep-going leaves it out. Process 0 then merges the shards (the load of
 * shard DBs, load_shards.c) and runs the command as a single process would,
 * so the outputs are the same files. The other processes only ever load:
 * they wait for the next round (compare loads two sides) or for the end,
 * and exit with the code process 0 ends with.
 *
 * The folder must be seen under the same path by every process: the shard
 * files are not sent over MPI. It is TRACEBOOK_MPI_DIR when set, else the
 * cache folder ($XDG_CACHE_HOME/tracebook, usually in a home directory
 * shared by the nodes). Process 0 checks that it sees every shard.
 *
 * The library knows nothing of MPI: this file is the only one that calls
 * it, and a build without MPI (TB_HAVE_MPI unset) or a run without mpirun
 * gets the stubs at the end, which keep everything as it is.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#ifdef TB_HAVE_MPI
#include <mpi.h>

static int active;       /* MPI_Init called */
static int size = 1, me; /* processes, this one */
static int serving;      /* a process other than 0 in its loop */
static const cli_args *args; /* the command line, the same on every process */
/* process 0: the rounds' folders (compare loads two sides), until the end */
#define MAX_ROUNDS 4
static char folders[MAX_ROUNDS][PATH_MAX];
static int rounds;

/* What process 0 sends at the start of each round. */
typedef struct round_msg {
    int stop;            /* 1: no more rounds; exit with rc */
    int partials;        /* 1: run the rank-scope reports on this round's shards (books: the books DB) */
    int rc;
    int keep_going;
    char dir[PATH_MAX];  /* the folder of this round's shards */
    char books[PATH_MAX];
    int inputs_len;      /* then this many bytes: the inputs, each ended by '\0' */
} round_msg;

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

static void bcast(void *buf, int n)
{
    MPI_Request r;
    MPI_Ibcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    settle(&r);
}

/* Launched by an MPI launcher: Open MPI's mpirun, or a PMI/PMIx one (srun). */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int cli_mpi_start(const cli_command *cmd, const cli_args *a)
{
    args = a;
    static const char *const loading[] = {"report", "export db", "export summary", "export timeline", "info",
                                          "compare"};
    int loads = 0;
    for (size_t i = 0; i < sizeof loading / sizeof loading[0]; i++)
        loads |= !strcmp(cmd->name, loading[i]);
    if (!loads || !launched())
        return 1;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return 1;
    active = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return size;
}

int cli_mpi_size(void)
{
    return active ? size : 1;
}

int cli_mpi_rank(void)
{
    return active ? me : 0;
}

/* Removes a round's folder: its shards, the merged or books DB, the partials. */
static void drop_folder(char *folder)
{
    if (!folder[0])
        return;
    char p[PATH_MAX * 2];
    for (int k = 0; k < size; k++) {
        snprintf(p, sizeof p, "%.4000s/shard_%d_of_%d.db", folder, k, size);
        tb_temp_unregister(p);
    }
    cli_remove_folder(folder);
    folder[0] = 0;
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
    return errno == 0 && *end == 0 && k == me;
}

/* Loads this process's part of the inputs into dir. */
static tb_status load_part(const cli_args *a, const char *const *inputs, size_t n, const char *dir, cli_run *run,
                           tb_error *err)
{
    char out[PATH_MAX + 64];
    snprintf(out, sizeof out, "%s/shard_%d_of_%d.db", dir, me, size);
    if (!a)
        return tb_error_set(err, TB_ERR_USAGE, "this process's command ended before it loaded (see its messages)");
    tb_load_options o = {.inputs = inputs, .n_inputs = n, .output = out, .strict = a->n[OPT_STRICT] > 0,
                         .keep_python_functions = a->n[OPT_KEEP_PYTHON] > 0, .warn = cli_on_warn,
                         .note = me == 0 ? cli_on_note : NULL, .ctx = run,
                         .shard_index = (unsigned)me, .shard_count = (unsigned)size};
    tb_status st = tb_load(&o, NULL, err);
    /* until process 0 has it: a run stopped by a signal (mpirun ends every
     * process when one dies) removes it */
    if (st == TB_OK)
        tb_temp_register(out);
    /* a test hook (tests/cli/scale_test.py): this process dies here, its part loaded */
    if (names_me("TRACEBOOK_TEST_MPI_KILL"))
        raise(SIGKILL);
    return st;
}

/* Every process's outcome of the round, at process 0 (others: NULL). */
static tb_error *gather(const tb_error *mine)
{
    tb_error *all = me == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    if (me == 0 && !all) {
        /* nothing to gather into: this round fails, as out of memory does */
        MPI_Abort(MPI_COMM_WORLD, TB_EXIT_FAILURE);
    }
    MPI_Request r;
    MPI_Igather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    settle(&r);
    return all;
}

/* This process's partial of a round: the rank-scope reports on its shard,
 * when it has one (a part left out by --keep-going has none). */
static tb_status run_partial(const cli_args *a, tb_spec *const *specs, size_t n_specs, const char *dir,
                             const char *books, cli_run *run, tb_error *err)
{
    char shard[PATH_MAX + 64], out[PATH_MAX + 64];
    snprintf(shard, sizeof shard, "%s/shard_%d_of_%d.db", dir, me, size);
    snprintf(out, sizeof out, "%s/part_%d_of_%d.db", dir, me, size);
    if (!a)
        return tb_error_set(err, TB_ERR_USAGE, "this process's command ended before it ran (see its messages)");
    if (access(shard, R_OK) != 0)
        return TB_OK;
    tb_temp_register(out);
    tb_status st = cli_report_partial(a, specs, n_specs, shard, books, out, run, err);
    if (st == TB_OK && names_me("TRACEBOOK_TEST_MPI_KILL_PARTIAL"))
        raise(SIGKILL);
    return st;
}

/* Processes other than 0: load a part in every round process 0 starts, until it says stop. */
static void serve(const cli_args *a, cli_run *run)
{
    cli_run quiet = {.quiet = 1};
    if (!run)
        run = &quiet;
    serving = 1;
    for (;;) {
        round_msg m;
        bcast(&m, (int)sizeof m);
        if (m.stop) {
            MPI_Finalize();
            fflush(NULL);
            _exit(m.rc);
        }
        if (m.partials) {
            tb_error err;
            tb_error_clear(&err);
            run_partial(a, NULL, 0, m.dir, m.books, run, &err);
            tb_error *none = gather(&err);
            (void)none;
            char out[PATH_MAX + 64];
            snprintf(out, sizeof out, "%s/part_%d_of_%d.db", m.dir, me, size);
            tb_temp_unregister(out);
            continue;
        }
        char *buf = malloc((size_t)m.inputs_len + 1);
        if (!buf) /* the broadcast needs room on every process */
            MPI_Abort(MPI_COMM_WORLD, TB_EXIT_FAILURE);
        bcast(buf, m.inputs_len);
        tb_error err;
        tb_error_clear(&err);
        const char **in = NULL;
        size_t n = 0;
        {
            for (int i = 0; i < m.inputs_len; i += (int)strlen(buf + i) + 1)
                n++;
            in = calloc(n ? n : 1, sizeof *in);
            if (!in) {
                tb_error_set(&err, TB_ERR_NOMEM, "out of memory");
            } else {
                size_t k = 0;
                for (int i = 0; i < m.inputs_len; i += (int)strlen(buf + i) + 1)
                    in[k++] = buf + i;
                load_part(a, in, n, m.dir, run, &err);
            }
        }
        tb_error *none = gather(&err);
        (void)none;
        /* the round's folder is process 0's from here */
        char out[PATH_MAX + 64];
        snprintf(out, sizeof out, "%s/shard_%d_of_%d.db", m.dir, me, size);
        tb_temp_unregister(out);
        free(in);
        free(buf);
    }
}

tb_status cli_mpi_shards(const cli_args *a, const char *const *inputs, size_t n, cli_run *run, char *dir,
                         size_t cap, tb_error *err)
{
    if (me != 0)
        serve(a, run); /* does not return */
    if (rounds == MAX_ROUNDS)
        return tb_error_set(err, TB_ERR_INTERNAL, "more than %d loads in one MPI run", MAX_ROUNDS);
    char *folder = folders[rounds];
    round_msg m;
    memset(&m, 0, sizeof m);
    m.keep_going = a->n[OPT_KEEP_GOING] > 0;
    /* the round's folder: private, where every process sees it */
    tb_status st = TB_OK;
    char base[PATH_MAX - 64];
    const char *env = getenv("TRACEBOOK_MPI_DIR");
    if (env && *env)
        snprintf(base, sizeof base, "%s", env);
    else
        st = tb_cache_dir(base, sizeof base, err);
    if (st == TB_OK) {
        char at[PATH_MAX];
        snprintf(at, sizeof at, "%.3800s/mpi", base);
        if (tb_temp_folder(at, m.dir, sizeof m.dir) != 0)
            st = tb_error_at(err, TB_ERR_IO, base, 0, 0, -1, "cannot make the processes' folder: %s",
                             strerror(errno));
    }
    if (st != TB_OK)
        return st; /* the others wait for the stop cli_mpi_finish sends */
    snprintf(folder, PATH_MAX, "%s", m.dir);
    /* every shard of the round goes with it when a signal stops the run (as
     * many as the table of temporary files holds; the folder names the run) */
    for (int k = 1; k < size && k <= 128; k++) {
        char shard[PATH_MAX * 2];
        snprintf(shard, sizeof shard, "%.4000s/shard_%d_of_%d.db", folder, k, size);
        tb_temp_register(shard);
    }
    rounds++;
    for (size_t i = 0; i < n; i++)
        m.inputs_len += (int)strlen(inputs[i]) + 1;
    char *buf = malloc((size_t)m.inputs_len + 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, TB_EXIT_FAILURE);
    for (size_t i = 0, o = 0; i < n; i++) {
        memcpy(buf + o, inputs[i], strlen(inputs[i]) + 1);
        o += strlen(inputs[i]) + 1;
    }
    bcast(&m, (int)sizeof m);
    bcast(buf, m.inputs_len);
    free(buf);
    tb_error mine;
    tb_error_clear(&mine);
    load_part(a, inputs, n, m.dir, run, &mine);
    tb_error *all = gather(&mine);
    /* the first part that failed fails the run (all processes end with its
     * code); with --keep-going, each failed part is left out with a warning */
    int failed = -1;
    for (int k = 0; k < size; k++) {
        char shard[PATH_MAX + 64];
        snprintf(shard, sizeof shard, "%s/shard_%d_of_%d.db", m.dir, k, size);
        if (all[k].code == TB_OK && access(shard, R_OK) != 0)
            tb_error_at(&all[k], TB_ERR_IO, shard, 0, 0, -1,
                        "the shard of process %d is not visible to process 0: TRACEBOOK_MPI_DIR must be a folder"
                        " that every process sees under the same path",
                        k);
        if (all[k].code == TB_OK)
            continue;
        char msg[sizeof all[k].message];
        snprintf(msg, sizeof msg, "process %d of %d: %.470s", k, size, all[k].message);
        if (m.keep_going) {
            /* as the error would have named it: FILE:LINE:COL */
            char where[sizeof all[k].file + 48] = "";
            if (all[k].file[0] && all[k].line > 0)
                snprintf(where, sizeof where, "%s:%ld:%ld: ", all[k].file, all[k].line,
                         all[k].column > 0 ? all[k].column : 1L);
            else if (all[k].file[0])
                snprintf(where, sizeof where, "%s: ", all[k].file);
            char w[sizeof where + sizeof msg + 64];
            snprintf(w, sizeof w, "%s%s: its part is left out (--keep-going)", where, msg);
            cli_on_warn(run, w);
        } else if (failed < 0) {
            failed = k;
            *err = all[k];
            snprintf(err->message, sizeof err->message, "%s", msg);
        }
    }
    free(all);
    if (failed >= 0) {
        drop_folder(folder);
        return err->code;
    }
    snprintf(dir, cap, "%s", m.dir);
    return TB_OK;
}

tb_status cli_mpi_partials(const cli_args *a, tb_spec *const *specs, size_t n_specs, const char *books,
                           cli_run *run, char ***parts, size_t *n, tb_error *err)
{
    *parts = NULL;
    *n = 0;
    if (!rounds)
        return tb_error_set(err, TB_ERR_INTERNAL, "rank-scope reports before any MPI load");
    const char *dir = folders[rounds - 1];
    round_msg m;
    memset(&m, 0, sizeof m);
    m.partials = 1;
    snprintf(m.dir, sizeof m.dir, "%s", dir);
    snprintf(m.books, sizeof m.books, "%s", books);
    bcast(&m, (int)sizeof m);
    tb_error mine;
    tb_error_clear(&mine);
    run_partial(a, specs, n_specs, dir, books, run, &mine);
    tb_error *all = gather(&mine);
    for (int k = 0; k < size; k++) {
        if (all[k].code == TB_OK)
            continue;
        /* a process that failed fails the run: its shard loaded, its reports did not run */
        *err = all[k];
        snprintf(err->message, sizeof err->message, "process %d of %d: %.470s", k, size, all[k].message);
        free(all);
        return err->code;
    }
    free(all);
    char **v = calloc((size_t)size, sizeof *v);
    if (!v)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < size; k++) {
        char shard[PATH_MAX + 64], out[PATH_MAX + 64];
        snprintf(shard, sizeof shard, "%s/shard_%d_of_%d.db", dir, k, size);
        snprintf(out, sizeof out, "%s/part_%d_of_%d.db", dir, k, size);
        if (access(shard, R_OK) != 0)
            continue; /* left out by --keep-going */
        if (access(out, R_OK) != 0) {
            for (size_t i = 0; i < *n; i++)
                free(v[i]);
            free(v);
            return tb_error_at(err, TB_ERR_IO, out, 0, 0, -1,
                               "the partial rows of process %d are not visible to process 0: TRACEBOOK_MPI_DIR must"
                               " be a folder that every process sees under the same path", k);
        }
        if (!(v[(*n)++] = strdup(out))) {
            for (size_t i = 0; i < *n; i++)
                free(v[i]);
            free(v);
            *n = 0;
            return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
        }
    }
    *parts = v;
    return TB_OK;
}

void cli_mpi_merged_path(char *out, size_t cap)
{
    snprintf(out, cap, "%s/merged.db", rounds ? folders[rounds - 1] : ".");
    tb_temp_register(out);
}

int cli_mpi_finish(int rc)
{
    if (!active)
        return rc;
    if (me == 0) {
        for (int r = 0; r < rounds; r++)
            drop_folder(folders[r]);
        round_msg m;
        memset(&m, 0, sizeof m);
        m.stop = 1;
        m.rc = rc;
        bcast(&m, (int)sizeof m);
        MPI_Finalize();
        return rc;
    }
    /* a process whose command ended before its first round (it failed
     * before loading): process 0 failed the same way and says stop, or
     * starts a round, in which this process reports that it cannot load */
    serve(rc == TB_EXIT_OK ? args : NULL, NULL);
    return rc;
}

#else /* no MPI in this build: one process, as always */

int cli_mpi_start(const cli_command *cmd, const cli_args *a)
{
    (void)cmd;
    (void)a;
    return 1;
}

int cli_mpi_size(void)
{
    return 1;
}

int cli_mpi_rank(void)
{
    return 0;
}

tb_status cli_mpi_shards(const cli_args *a, const char *const *inputs, size_t n, cli_run *run, char *dir,
                         size_t cap, tb_error *err)
{
    (void)a;
    (void)inputs;
    (void)n;
    (void)run;
    (void)dir;
    (void)cap;
    return tb_error_set(err, TB_ERR_INTERNAL, "this build has no MPI");
}

tb_status cli_mpi_partials(const cli_args *a, tb_spec *const *specs, size_t n_specs, const char *books,
                           cli_run *run, char ***parts, size_t *n, tb_error *err)
{
    (void)a;
    (void)specs;
    (void)n_specs;
    (void)books;
    (void)run;
    *parts = NULL;
    *n = 0;
    return tb_error_set(err, TB_ERR_INTERNAL, "this build has no MPI");
}

void cli_mpi_merged_path(char *out, size_t cap)
{
    snprintf(out, cap, "merged.db");
}

int cli_mpi_finish(int rc)
{
    return rc;
}

#endif
