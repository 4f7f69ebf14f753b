/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the pieces of the `tracebook` command shared by its files.
 *
 * One table (commands.c) lists every command with its synopsis, text and
 * options. Everything the user sees about the command line is made from it:
 * dispatch (main.c), help and messages (help.c), the option parser (parse.c) and the man
 * page and bash completion (tools/cligen, which links this table). So none of them can disagree with the
 * others. The handlers (load.c, report.c) receive parsed arguments and call
 * the engine through tracebook.h only (print.c: `print summary|trace`);
 * progress_line.c draws the progress line.
 */
#ifndef TRACEBOOK_CLI_H
#define TRACEBOOK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebook/tracebook.h"

/* Every option any command has; a command lists the ones it takes. */
typedef enum cli_opt_id {
    OPT_HELP,
    OPT_DIR,
    OPT_OUTPUT,
    OPT_SPEC,
    OPT_FORMAT,
    OPT_TIMEUNIT,
    OPT_PARAM,
    OPT_REPORT,
    OPT_MODEL_ID,
    OPT_ITERATION_ID,
    OPT_ITERATION_COUNT,
    OPT_MAX_STEPS,
    OPT_MAX_CPU_TIME,
    OPT_MAX_MEMORY,
    OPT_MAX_TEMP,
    OPT_MAX_ROWS,
    OPT_REBUILD,
    OPT_STRICT,
    OPT_KEEP_PYTHON,
    OPT_TIMING,
    OPT_QUIET,
    OPT_CSV_SAFE,
    OPT_SLICE_MB,
    OPT_SLICE_CONFIG,
    OPT_PER_DEVICE,
    OPT_LOG_FILE,
    OPT_WIDTH,
    OPT_FAIL_ON_WARNING,
    OPT_NO_CLOBBER,
    OPT_CLEAR,
    OPT_MERGE,
    OPT_BASE,
    OPT_NEW,
    OPT_FAIL_ON_REGRESSION,
    OPT_KEEP_DB,
    OPT_BASE_ITERATION_ID,
    OPT_NEW_ITERATION_ID,
    OPT_HISTORY,
    OPT_LABEL,
    OPT_META,
    OPT_KEEP,
    OPT_LAST,
    OPT_SHARD,
    OPT_KEEP_GOING,
    OPT_FAIL_ON_FINDING,
    OPT_PYTORCH_LINKS,
    OPT_COUNT
} cli_opt_id;

/* What an option's value is, for completion. */
typedef enum cli_complete {
    COMPLETE_NONE,   /* a value with no suggestions (a number, NAME=VALUE) */
    COMPLETE_FILE,   /* a file or directory */
    COMPLETE_DIR,    /* a directory */
    COMPLETE_WORDS,  /* one of the words in values */
    COMPLETE_SPEC,   /* a spec file or builtin:NAME */
    COMPLETE_REPORT  /* a built-in report name */
} cli_complete;

/* An option as a command takes it. */
typedef struct cli_option {
    cli_opt_id id;
    const char *alias;     /* a short spelling ("-o", "-q", "-dir"), or NULL */
    const char *name;      /* the long name without dashes ("output") */
    const char *arg;       /* the value's name in help ("FILE|DIR"), NULL for a flag */
    int repeat;            /* 1: may be given several times, each value kept */
    cli_complete complete;
    const char *values;    /* COMPLETE_WORDS: the words, space-separated */
    const char *help;      /* help text; '\n' where the help output breaks the line */
} cli_option;

typedef struct cli_args cli_args;

typedef struct cli_command {
    const char *name;      /* "export db", "info", ...: the words that select it */
    const char *label;     /* the name in the main command list when not name ("help CMD") */
    const char *synopsis;  /* after `tracebook NAME` in the usage line */
    const char *summary;   /* the main command list; '\n' breaks the line */
    const char *text;      /* the paragraph of `help CMD`; '\n' breaks the line */
    const cli_option *options;
    size_t n_options;
    int min_pos, max_pos;  /* positional arguments taken */
    const char *pos_name;  /* their name in messages ("SQL statement") */
    cli_complete pos_complete;
    int (*run)(cli_args *a);
} cli_command;

/* The parsed command line of one command. */
struct cli_args {
    const cli_command *cmd;
    const char **v[OPT_COUNT];      /* the values of each option, in order */
    size_t n[OPT_COUNT];            /* how many times each option was given */
    const char *as_written[OPT_COUNT]; /* the spelling last used, for messages */
    const char **pos;
    size_t n_pos;
    const char **store;             /* one allocation behind v and pos */
};

/* An exit code with its meaning, for --help, the man page and docs. */
typedef struct cli_exit {
    int code;
    const char *meaning;
} cli_exit;

/* An environment variable the command reads, for the man page. */
typedef struct cli_env {
    const char *name;
    const char *meaning;
} cli_env;

/* commands.c: the table. */
extern const cli_command cli_commands[];
extern const size_t cli_n_commands;
extern const cli_exit cli_exits[];
extern const size_t cli_n_exits;
extern const cli_env cli_envs[];
extern const size_t cli_n_envs;
extern const char cli_about[];   /* what tracebook is, one paragraph ('\n' breaks) */

/* help.c: help and messages. */
/*
 * Finds the command that argv starts with. *used gets the number of words
 * its name took. Returns NULL when there is none, having reported why
 * (*rc gets the exit code). for_help: `help export` names export db (the
 * first command of that family).
 */
const cli_command *cli_select(int argc, char **argv, int for_help, int *used, int *rc);
void cli_help(const cli_command *cmd, FILE *f);   /* cmd NULL: the main usage */
/* Prints `tracebook: error: MESSAGE` and `try 'tracebook help CMD'`; returns TB_EXIT_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_print_error(const tb_error *e);

/* parse.c */
/* Parses argv (the words after the command's name) for cmd into a, which it
 * initialises: free with cli_args_free(), also after a failure. Values are
 * borrowed from argv. Returns -1 when the command should run, else the exit
 * code to end with (help printed, or a usage error reported). */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a);
void cli_args_free(cli_args *a);
/* -o DIR of a command that writes a folder of files into *dir ("." when not given); "-" is a
 * usage error. Returns -1 when fine, else the exit code of the usage error reported. */
int cli_out_dir(const cli_args *a, const char **dir);
/* The one value of a single-valued option, or NULL. Borrowed from argv. */
const char *cli_value(const cli_args *a, cli_opt_id id);
/* Parses a non-negative integer option value; a usage error otherwise. Returns -1 when fine. */
int cli_count(const cli_args *a, cli_opt_id id, int64_t *out);
/* run.c: sets the engine's limits from --max-cpu-time, --max-memory and --max-temp
 * (the defaults for those not given). Returns -1 when fine, else the exit
 * code of the usage error reported. */
int cli_apply_limits(const cli_args *a);

/* progress_line.c: the one progress line on a terminal's stderr. */
typedef struct cli_progress cli_progress;
/* Returns new (free with cli_progress_destroy), drawing only when on (a TTY, not --quiet). */
cli_progress *cli_progress_create(int on);
void cli_progress_destroy(cli_progress *p);
/* tb_load_options.progress */
void cli_progress_load(void *p, const char *file, uint64_t done, uint64_t total, uint64_t bytes);
/* tb_load_options.phase: shows the phase the load entered after reading. */
void cli_progress_phase(void *p, const char *what);
/* Says what runs now ("running reports"); expected: how many reports will run (0: unknown). */
void cli_progress_reports(cli_progress *p, size_t expected);
/* A report finished (or was skipped). */
void cli_progress_report_done(cli_progress *p, const char *id);
/* Erases the line and draws no more (console tables are about to fill the terminal). */
void cli_progress_stop(cli_progress *p);
/* Erases the line (before any other message, and at the end). */
void cli_progress_clear(cli_progress *p);

/* Exit codes of the `tracebook` command (listed in --help and docs/cli.md). */
enum tb_exit {
    TB_EXIT_OK = 0,
    TB_EXIT_FAILURE = 1,  /* internal error */
    TB_EXIT_USAGE = 2,    /* bad command line */
    TB_EXIT_INPUT = 3,    /* malformed or cut-short (with --strict) input */
    TB_EXIT_IO = 4,       /* a file could not be read or written */
    TB_EXIT_DB = 5,       /* SQLite error */
    TB_EXIT_NOTFOUND = 6, /* no usable input found */
    TB_EXIT_WARNING = 7,  /* --fail-on-warning: the load or the run warned (the outputs are written) */
    TB_EXIT_REGRESSION = 8, /* compare --fail-on-regression: a regression rule fired */
    TB_EXIT_FINDING = 9     /* report --fail-on-finding: an advisor rule found something that severe */
};

/* The exit code of an engine status. */
int cli_exit_code(tb_status st);

/* The window, unit and budget options report, query, print, compare and history share. */
typedef struct cli_run_opts {
    tb_window window;
    tb_time_unit unit;
    int64_t max_steps;
} cli_run_opts;

/* parse.c: the window, unit and step budget of a command that reads a DB
 * (the options it does not take stay at their defaults). Returns -1 when
 * fine, else the exit code of the usage error reported. */
int cli_parse_window_opts(const cli_args *a, cli_run_opts *r);
/* --shard I/N of export db (I from 0). Sets 0/0 when not given. Returns -1
 * when fine, else the exit code of the usage error reported. */
int cli_parse_shard(const cli_args *a, unsigned *index, unsigned *count);
/* --format (a list of the formats in allowed, TB_OUT_*): the mask in *out,
 * 0 when not given; with --csv-safe it must name csv when given. Returns
 * -1 when fine, else the exit code of the usage error reported. */
int cli_parse_formats(const cli_args *a, unsigned allowed, unsigned *out);
/* --format of one format only (console when not given). Returns as cli_parse_formats. */
int cli_parse_format(const cli_args *a, unsigned allowed, unsigned *out);

/* run.c: the one set-up and tear-down of a run, and the engine's callbacks. */
typedef struct cli_run {
    const cli_args *a;
    int quiet;
    cli_progress *progress;
    uint64_t warnings;   /* warnings given so far (printed or not) */
    int record;          /* keep the messages of the warnings given while set */
    char **kept;         /* those messages (new strings) */
    size_t n_kept;
    cli_run_opts ro;     /* the window, unit and budget parsed */
    tb_spec **specs;     /* --spec values, loaded (RUN_SPECS) */
    size_t n_specs;
    tb_session *s;       /* the session of -dir (RUN_SESSION) */
    tb_session *extra[2];/* more sessions (compare's two sides), closed at the end */
    tb_error err;        /* what failed (printed by cli_run_end) */
} cli_run;

enum {
    RUN_SPECS = 1,       /* load every --spec first: a broken spec fails before any loading */
    RUN_SESSION = 2,     /* open the session of -dir with the parsed window and find or build its DB */
    RUN_LAZY = 4,        /* with RUN_SESSION: open only (export db writes its own DB) */
    RUN_SCOPED = 8       /* with RUN_SESSION: the session's reports are the specs' (report) */
};

/*
 * Starts a run of command a: the progress line (unless -q), the window
 * options (parsed into r->ro), the specs, the session. Returns -1 when the
 * handler goes on; else the code to end with (a usage error, a failure
 * already printed, or, on an MPI process other than 0, the code of
 * process 0 once it served its rounds). Always end with cli_run_end.
 */
int cli_run_start(cli_run *r, const cli_args *a, unsigned what);
/* The session of -dir for a run started without it (after checks that need
 * the specs); what: RUN_SESSION and its flags. Returns as cli_run_start. */
int cli_run_open(cli_run *r, unsigned what);
/* A session of given inputs over window w with r's options (compare's sides,
 * history's night, merge's DBs), closed by cli_run_end; lazy: open only (no DB found
 * or built yet). Returns as cli_run_start. */
int cli_run_session(cli_run *r, const char *const *inputs, size_t n, const tb_window *w, int lazy,
                    tb_session **out);
/*
 * Ends the run: prints r->err when st failed, closes the sessions, frees the
 * specs and the progress line. Returns the exit code: st's when it failed,
 * else rc.
 */
int cli_run_end(cli_run *r, tb_status st, int rc);

/* The engine's callbacks (ctx: a cli_run): warnings, notes, files written. */
void cli_on_warn(void *ctx, const char *msg);
void cli_on_note(void *ctx, const char *msg);
void cli_on_written(void *ctx, const char *path);
/* With --fail-on-warning and warnings given: says so on stderr and returns
 * TB_EXIT_WARNING; else returns rc. what names them ("the load", "the run"). */
int cli_fail_on_warning(const cli_args *a, uint64_t warnings, const char *what, int rc);

/* mpi.c: `mpirun -n P tracebook ...` (docs/scale-out.md). Without MPI in
 * the build, or without mpirun, the run keeps one process. */
/* Starts MPI for a command that loads, when launched by mpirun. */
void cli_mpi_start(const cli_command *cmd);
/* The distribution hook of the run (NULL: one process). */
const tb_dist *cli_mpi_dist(void);
/* This process served process 0's rounds (its session told it to end). */
void cli_mpi_served(void);
/* Ends the run on every process with process 0's code rc. Returns the code to end with. */
int cli_mpi_finish(int rc);

/* The handlers. */
int cli_cmd_export_db(cli_args *a);
int cli_cmd_merge(cli_args *a);
int cli_cmd_export_timeline(cli_args *a);
int cli_cmd_export_summary(cli_args *a);
int cli_cmd_info(cli_args *a);
int cli_cmd_report(cli_args *a);
int cli_cmd_query(cli_args *a);
int cli_cmd_reports(cli_args *a);
int cli_cmd_print_summary(cli_args *a);   /* print.c */
int cli_cmd_print_trace(cli_args *a);
int cli_cmd_help(cli_args *a);
int cli_cmd_compare(cli_args *a);         /* compare.c */
int cli_cmd_history_add(cli_args *a);     /* history.c */
int cli_cmd_history_report(cli_args *a);
int cli_cmd_history_list(cli_args *a);
int cli_cmd_history_remove(cli_args *a);

#endif
