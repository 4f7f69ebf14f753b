/* SPDX-License-Identifier: MIT */
/*
 * commands.c - the command table of `tracebook`.
 *
 * Each command's name, synopsis, help text and options, the exit codes and
 * the environment variables are written once here. Dispatch, `help CMD`,
 * the option parser, tracebook(1) and the bash completion are all made from
 * this table (see cli.h), so they say the same thing; tests/cli/table_test.py
 * fails when the checked-in man page or completion differ from what the
 * table gives.
 */
#include "cli.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Options that read the same for every command that has them. */
#define O_DIR                                                                                            \
    {OPT_DIR, "-dir", "dir", "PATH", 1, COMPLETE_FILE, NULL, "an input (repeat for several ranks)"}
#define O_STRICT(h) {OPT_STRICT, NULL, "strict", NULL, 0, COMPLETE_NONE, NULL, h}
#define O_KEEP(h) {OPT_KEEP_PYTHON, NULL, "keep-python-functions", NULL, 0, COMPLETE_NONE, NULL, h}
#define O_REBUILD(h) {OPT_REBUILD, NULL, "rebuild", NULL, 0, COMPLETE_NONE, NULL, h}
#define O_QUIET(h) {OPT_QUIET, "-q", "quiet", NULL, 0, COMPLETE_NONE, NULL, h}
#define O_FAIL_ON_WARNING                                                                                \
    {OPT_FAIL_ON_WARNING, NULL, "fail-on-warning", NULL, 0, COMPLETE_NONE, NULL,                         \
     "exit 7 when the load or the run warned (the\n"                                                     \
     "outputs are still written)"}
#define O_KEEP_GOING                                                                                     \
    {OPT_KEEP_GOING, NULL, "keep-going", NULL, 0, COMPLETE_NONE, NULL,                                   \
     "shard DBs (export db --shard) or an MPI run: finish\n"                                              \
     "without a missing shard or failed process, and record\n"                                            \
     "it in tracebook_run.json and the DB"}
#define O_CSV_SAFE                                                                                       \
    {OPT_CSV_SAFE, NULL, "csv-safe", NULL, 0, COMPLETE_NONE, NULL,                                       \
     "in CSV, text a spreadsheet would take for a formula\n"                                              \
     "(=, +, -, @ first; header cells too) gets a leading '"}
/* The cached DB's options: load again, and an input cut short is an error. */
#define O_RELOAD                                                                                         \
    O_REBUILD("load the inputs again even when the cached DB is current"),                               \
    O_STRICT("an input cut short is an error")
#define O_CONSOLE_WIDTH                                                                                  \
    {OPT_WIDTH, NULL, "width", "N", 0, COMPLETE_NONE, NULL,                                              \
     "console tables: cut texts longer than N characters\n"                                               \
     "in the middle (head...tail; 5 to 100000, default 40)"}
#define O_CLEAR                                                                                          \
    {OPT_CLEAR, NULL, "clear", NULL, 0, COMPLETE_NONE, NULL,                                             \
     "after a successful export, remove the DB tracebook\n"                                               \
     "loaded into its cache for it (never an input)"}
#define O_HELP {OPT_HELP, "-h", "help", NULL, 0, COMPLETE_NONE, NULL, "show this help"}
#define O_TIMEUNIT(h) {OPT_TIMEUNIT, NULL, "timeunit", "ns|us|ms|s", 0, COMPLETE_WORDS, "ns us ms s", h}
#define O_PARAM(h) {OPT_PARAM, NULL, "param", "NAME=VALUE", 1, COMPLETE_NONE, NULL, h}
#define O_ITERATIONS                                                                                     \
    {OPT_MODEL_ID, NULL, "model-id", "M", 0, COMPLETE_NONE, NULL, "window: model M (4294967295 = step mode)"}, \
    {OPT_ITERATION_ID, NULL, "iteration-id", "I", 0, COMPLETE_NONE, NULL, "window: from iteration (or step) I"}, \
    {OPT_ITERATION_COUNT, NULL, "iteration-count", "N", 0, COMPLETE_NONE, NULL, "window: N iterations (default 1)"}
#define O_WINDOW(what)                                                                                   \
    O_ITERATIONS,                                                                                        \
    {OPT_MAX_STEPS, NULL, "max-steps", "N", 0, COMPLETE_NONE, NULL, "SQLite step budget" what " (default 5000000000)"}, \
    O_LIMITS
/* The limits of docs/reliability.md: CPU time per report, SQLite's heap and temporary files. */
#define O_LIMITS                                                                                         \
    {OPT_MAX_CPU_TIME, NULL, "max-cpu-time", "SECONDS", 0, COMPLETE_NONE, NULL,                          \
     "CPU time of one report, its computed tables\n"                                                      \
     "included (default 20 s plus 1 s per 4 MiB of the DB)"},                                            \
    {OPT_MAX_MEMORY, NULL, "max-memory", "SIZE", 0, COMPLETE_NONE, NULL,                                \
     "SQLite's heap, e.g. 2G (default half the RAM)"},                                                   \
    {OPT_MAX_TEMP, NULL, "max-temp", "SIZE", 0, COMPLETE_NONE, NULL,                                    \
     "SQLite's temporary files at any one time, e.g. 4G\n"                                                \
     "(default half the free space of the temporary folder)"}

static const cli_option export_db_opts[] = {
    O_DIR,
    {OPT_OUTPUT, "-o", "output", "FILE|DIR", 0, COMPLETE_FILE, NULL,
     "the DB to write; a directory gets the default name\n"
     "(missing directories are created); - writes it to\n"
     "stdout. Default: msprof_<UTC YYYYMMDDhhmmss>.db\n"
     "beside the first input (the current directory when\n"
     "that cannot be written), the timestamp taken from\n"
     "the data"},
    {OPT_SHARD, NULL, "shard", "I/N", 0, COMPLETE_NONE, NULL,
     "load only part I (0 to N-1) of N parts of the ranks\n"
     "(largest first, each to the least loaded part) into\n"
     "a shard DB, DIR/shard_I_of_N.db with -o DIR/; report\n"
     "-dir DIR reads the N shards as one run (docs/scale-out.md)"},
    O_KEEP_GOING,
    O_STRICT("an input cut short is an error (default: warning)"),
    O_KEEP("keep Kineto python_function events (in TB_EVENT)"),
    {OPT_PYTORCH_LINKS, NULL, "pytorch-links", NULL, 0, COMPLETE_NONE, NULL,
     "link a torch_npu timeline's PyTorch calls to their\ntasks in the DB as torch_npu's DB does (CONNECTION_IDS)"},
    O_FAIL_ON_WARNING,
    {OPT_TIMING, NULL, "timing", NULL, 0, COMPLETE_NONE, NULL, "print the time of each loading phase on stderr"},
    O_QUIET("no progress line, no warnings on stderr"),
    O_HELP,
};

static const cli_option export_timeline_opts[] = {
    O_DIR,
    {OPT_OUTPUT, "-o", "output", "DIR", 0, COMPLETE_DIR, NULL,
     "where the timeline files go (created with its\n"
     "parents). Default: beside the first input (the\n"
     "current directory when that cannot be written)"},
    {OPT_SPEC, "-reports", "spec", "FILE", 0, COMPLETE_SPEC, NULL,
     "the layers to write: a spec's json_process, or an\n"
     "msprof reports_sample_config.json (default: all)"},
    O_ITERATIONS,
    {OPT_SLICE_MB, NULL, "slice-mb", "N", 0, COMPLETE_NONE, NULL,
     "cut each rank's timeline into files of about N MiB\n"
     "(msprof_slice_<k>_<timestamp>.json; 0: one file)"},
    {OPT_SLICE_CONFIG, NULL, "slice-config", "FILE", 0, COMPLETE_FILE, NULL,
     "take the slicing from an msprof_slice.json"},
    O_CLEAR,
    O_RELOAD,
    O_KEEP_GOING,
    O_QUIET("no progress line, notes or warnings on stderr"),
    O_HELP,
};

static const cli_option merge_opts[] = {
    {OPT_OUTPUT, "-o", "output", "FILE", 0, COMPLETE_FILE, NULL, "the merged DB to write (required)"},
    O_KEEP_GOING,
    O_QUIET("no progress line, no warnings on stderr"),
    O_HELP,
};

static const cli_option export_summary_opts[] = {
    O_DIR,
    {OPT_OUTPUT, "-o", "output", "DIR", 0, COMPLETE_DIR, NULL,
     "write each rank's folder (PROF_XXX/mindstudio_profiler_output,\n"
     "*_ascend_pt/ASCEND_PROFILER_OUTPUT) under DIR. Default:\n"
     "into the rank's own input folder"},
    {OPT_SPEC, "-reports", "spec", "FILE", 0, COMPLETE_SPEC, NULL,
     "run this spec's reports instead of the summaries (an\n"
     "msprof reports_sample_config.json runs the summaries)"},
    {OPT_FORMAT, "--summary-format", "format", "csv|json|xlsx", 0, COMPLETE_WORDS, "csv json xlsx",
     "comma-separated formats (default csv)"},
    O_CSV_SAFE,
    O_ITERATIONS,
    O_LIMITS,
    {OPT_NO_CLOBBER, NULL, "no-clobber", NULL, 0, COMPLETE_NONE, NULL,
     "refuse when an output exists (default: replace it\n"
     "atomically)"},
    {OPT_MERGE, NULL, "merge", NULL, 0, COMPLETE_NONE, NULL,
     "one set of files for every rank (and every PROF_XXX)\n"
     "in DIR/mindstudio_profiler_output, rows with their\n"
     "Rank ID (needs -o DIR)"},
    O_CLEAR,
    O_RELOAD,
    O_KEEP_GOING,
    O_QUIET("no progress line, notes or warnings on stderr"),
    O_HELP,
};

static const cli_option info_opts[] = {
    O_DIR,
    O_REBUILD("load again even when the cached DB is current"),
    O_STRICT("an input cut short is an error"),
    O_KEEP("keep Kineto python_function events"),
    O_KEEP_GOING,
    O_QUIET("no progress line, no warnings on stderr"),
    O_HELP,
};

static const cli_option report_opts[] = {
    O_DIR,
    {OPT_SPEC, NULL, "spec", "FILE", 1, COMPLETE_SPEC, NULL,
     "a spec to run (repeat; run in order); builtin:NAME\n"
     "runs a built-in report"},
    {OPT_OUTPUT, "-o", "output", "DIR", 0, COMPLETE_DIR, NULL,
     "where files go (created with its parents;\n"
     "default: the current directory)"},
    {OPT_FORMAT, NULL, "format", "LIST", 0, COMPLETE_WORDS, "csv json console xlsx html",
     "outputs for every report, replacing the specs':\n"
     "comma-separated csv, json, xlsx (one workbook for all reports), console,\n"
     "html (one page for all reports, report.html)"},
    O_CSV_SAFE,
    {OPT_KEEP_DB, NULL, "keep-db", NULL, 0, COMPLETE_NONE, NULL,
     "keep a copy of the trace DB in DIR (tracebook_trace.db):\n"
     "compare and history then read DIR without the raw profiles"},
    O_TIMEUNIT("unit of typed time columns (default us, as msprof)"),
    O_PARAM("set a parameter (REPORT.NAME=VALUE for one report)"),
    {OPT_REPORT, NULL, "report", "ID", 1, COMPLETE_NONE, NULL, "run only this report (repeat)"},
    O_CONSOLE_WIDTH,
    {OPT_BASE, NULL, "base", "PATH", 1, COMPLETE_FILE, NULL,
     "the base run (an earlier report folder of the spec):\n"
     "baseline reports show each figure's change (review.md)"},
    O_WINDOW(" per report"),
    O_RELOAD,
    O_KEEP_GOING,
    O_FAIL_ON_WARNING,
    {OPT_FAIL_ON_FINDING, NULL, "fail-on-finding", "SEVERITY", 0, COMPLETE_WORDS, "info warning critical",
     "exit 9 when an advisor rule found something of this\n"
     "severity or worse: info, warning, critical (the\n"
     "outputs are still written; docs/advisor.md)"},
    O_QUIET("no progress, notes or list of files written"),
    O_HELP,
};

static const cli_option query_opts[] = {
    O_DIR,
    {OPT_FORMAT, NULL, "format", "console|csv|json", 0, COMPLETE_WORDS, "console csv json",
     "output format (default console)"},
    {OPT_OUTPUT, "-o", "output", "FILE", 0, COMPLETE_FILE, NULL,
     "csv, json: write to FILE instead of stdout (- is\n"
     "stdout; missing parent directories are created)"},
    O_CSV_SAFE,
    O_TIMEUNIT("unit of typed time columns (default us)"),
    O_PARAM("bind :NAME (an integer or real when VALUE is one,\nelse text)"),
    O_WINDOW(""),
    {OPT_MAX_ROWS, NULL, "max-rows", "N", 0, COMPLETE_NONE, NULL, "console: rows printed (default 100; 0 = all)"},
    O_CONSOLE_WIDTH,
    O_RELOAD,
    O_QUIET("no progress line, no warnings or notes"),
    O_HELP,
};

static const cli_option print_opts[] = {
    O_DIR,
    {OPT_PER_DEVICE, NULL, "per-device", NULL, 0, COMPLETE_NONE, NULL,
     "one block per device, opened by Device \"<name> (<n>)\""},
    {OPT_LOG_FILE, NULL, "log-file", "FILE", 0, COMPLETE_FILE, NULL,
     "write the listing to FILE instead of stdout (under a\n"
     "temporary name, renamed when complete; missing\n"
     "parent directories are created)"},
    {OPT_WIDTH, NULL, "width", "N", 0, COMPLETE_NONE, NULL,
     "cut names longer than N characters in the middle\n"
     "(head...tail); default 0: never cut"},
    {OPT_TIMEUNIT, NULL, "timeunit", "ns|us|ms|s", 0, COMPLETE_WORDS, "ns us ms s",
     "every time in this unit (default: each time in the\n"
     "unit that keeps it below 1000, as topsprof)"},
    O_ITERATIONS,
    O_RELOAD,
    O_QUIET("no progress line, no warnings on stderr"),
    O_HELP,
};

static const cli_option compare_opts[] = {
    {OPT_BASE, NULL, "base", "PATH", 1, COMPLETE_FILE, NULL,
     "the base run: an input, a DB tracebook wrote or the\n"
     "output folder of an earlier report run (repeat for\nseveral ranks)"},
    {OPT_NEW, NULL, "new", "PATH", 1, COMPLETE_FILE, NULL, "the new run, as -base"},
    {OPT_SPEC, NULL, "spec", "FILE", 0, COMPLETE_SPEC, NULL, "the report spec (YAML or JSON, or builtin:NAME)"},
    {OPT_OUTPUT, "-o", "output", "DIR", 0, COMPLETE_DIR, NULL,
     "write DIR/<report>_compare.csv and tracebook_run.json\n(default .)"},
    {OPT_FORMAT, NULL, "format", "LIST", 0, COMPLETE_WORDS, "csv json xlsx html",
     "comma-separated csv, json, xlsx, html (default: csv,\n"
     "the compare.xlsx workbook and the compare.html page,\n"
     "json when the spec asks)"},
    O_CSV_SAFE,
    {OPT_FAIL_ON_REGRESSION, NULL, "fail-on-regression", NULL, 0, COMPLETE_NONE, NULL,
     "exit with code 8 when a regression rule fires"},
    O_ITERATIONS,
    {OPT_BASE_ITERATION_ID, NULL, "base-iteration-id", "I", 0, COMPLETE_NONE, NULL,
     "the base run's window starts at iteration I (else\n--iteration-id)"},
    {OPT_NEW_ITERATION_ID, NULL, "new-iteration-id", "I", 0, COMPLETE_NONE, NULL,
     "the new run's window starts at iteration I; step k of\n"
     "the base meets the step as far into the new window"},
    O_TIMEUNIT("unit of typed time columns (default us)"),
    {OPT_MAX_STEPS, NULL, "max-steps", "N", 0, COMPLETE_NONE, NULL, "SQLite VM step budget per report"},
    O_LIMITS,
    O_RELOAD,
    O_KEEP_GOING,
    O_QUIET("no progress, notes or list of files written"),
    O_HELP,
};

#define O_HISTORY(h) {OPT_HISTORY, NULL, "history", "FILE", 0, COMPLETE_FILE, NULL, h}

static const cli_option history_add_opts[] = {
    O_HISTORY("the history DB (SQLite; created when missing)"),
    O_DIR,
    {OPT_SPEC, NULL, "spec", "FILE", 0, COMPLETE_SPEC, NULL,
     "the report spec (YAML or JSON, or builtin:NAME);\n"
     "default with a report folder: the spec it ran"},
    {OPT_LABEL, NULL, "label", "L", 0, COMPLETE_NONE, NULL,
     "the night's name (default: the data's start,\n"
     "UTC YYYY-MM-DDThh:mm:ssZ); unique in the history"},
    {OPT_META, NULL, "meta", "KEY=VALUE", 1, COMPLETE_NONE, NULL,
     "keep KEY=VALUE with the night (commit, cluster\n"
     "size...; repeat)"},
    {OPT_KEEP, NULL, "keep", "N", 0, COMPLETE_NONE, NULL,
     "retention: then keep only the newest N nights"},
    O_PARAM("set a parameter (REPORT.NAME=VALUE for one report)"),
    O_WINDOW(" per report"),
    O_RELOAD,
    O_QUIET("no progress, notes or summary line"),
    O_HELP,
};

static const cli_option history_report_opts[] = {
    O_HISTORY("the history DB (read only)"),
    {OPT_SPEC, NULL, "spec", "FILE", 0, COMPLETE_SPEC, NULL,
     "the spec whose reports (by id) give keys,\n"
     "normalisation and rules (or builtin:NAME)"},
    {OPT_OUTPUT, "-o", "output", "DIR", 0, COMPLETE_DIR, NULL,
     "write DIR/<report>_trend.csv, trend.xlsx, ... and\n"
     "tracebook_run.json (default .)"},
    {OPT_LAST, NULL, "last", "N", 0, COMPLETE_NONE, NULL,
     "show the newest N nights (each is judged against\n"
     "the nights before it, shown or not)"},
    {OPT_FORMAT, NULL, "format", "LIST", 0, COMPLETE_WORDS, "csv json xlsx html",
     "comma-separated csv, json, xlsx, html (default: csv,\n"
     "the trend.xlsx workbook and the trend.html page,\n"
     "json when the spec asks)"},
    O_CSV_SAFE,
    {OPT_FAIL_ON_REGRESSION, NULL, "fail-on-regression", NULL, 0, COMPLETE_NONE, NULL,
     "exit with code 8 when the newest night has a\n"
     "regression"},
    O_TIMEUNIT("unit of typed time columns (default us)"),
    O_QUIET("no notes, list of files written or summary line"),
    O_HELP,
};

static const cli_option history_list_opts[] = {
    O_HISTORY("the history DB (read only)"),
    {OPT_FORMAT, NULL, "format", "console|csv|json", 0, COMPLETE_WORDS, "console csv json",
     "output format on stdout (default console)"},
    O_HELP,
};

static const cli_option history_remove_opts[] = {
    O_HISTORY("the history DB"),
    {OPT_LABEL, NULL, "label", "L", 1, COMPLETE_NONE, NULL, "remove the night labelled L (repeat)"},
    {OPT_KEEP, NULL, "keep", "N", 0, COMPLETE_NONE, NULL, "remove all but the newest N nights"},
    O_QUIET("no summary line"),
    O_HELP,
};

static const cli_option reports_opts[] = {O_HELP};
static const cli_option help_opts[] = {O_HELP};

const cli_command cli_commands[] = {
    {"export db", NULL, "-dir PATH [-dir PATH ...] [-o FILE|DIR] [options]",
     "load the inputs and write the unified DB (msprof_<timestamp>.db)",
     "Loads the inputs into the unified trace DB. PATH is a file (a timeline or\n"
     "Kineto trace .json[.gz], an msprof-compatible .db, a torch_npu summary CSV, a\n"
     "topsprof listing) or a directory searched for them. Files under one rank's\n"
     "directory (PROF_*, *_ascend_pt, ...) form one rank, other files one rank each;\n"
     "within a rank a DB wins over a timeline, a timeline over CSVs.",
     export_db_opts, N(export_db_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_export_db},
    {"export timeline", NULL, "-dir PATH [-dir PATH ...] [-o DIR] [--spec FILE] [window options]",
     "write the Chrome-trace timeline (msprof_<timestamp>.json)",
     "Writes the inputs' timeline as msprof does: one Chrome-trace JSON file per\n"
     "rank (msprof_<timestamp>.json, with _rank<R> when there are several), with\n"
     "process and thread names, slices with their args, flows, counters and the\n"
     "Overlap Analysis lanes (computed when the input has none). --spec or msprof's\n"
     "-reports selects the layers (json_process); the window options select the\n"
     "events of some iterations. The paths written go to stdout (docs/timeline.md).",
     export_timeline_opts, N(export_timeline_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_export_timeline},
    {"export summary", NULL, "-dir PATH [-dir PATH ...] [-o DIR] [--spec FILE] [--format LIST] [window options]",
     "write msprof's and torch_npu's summary CSVs, one set per rank",
     "Writes the summaries as msprof and torch_npu do, one set of files per rank in\n"
     "that rank's layout: an msprof rank's\n"
     "PROF_XXX/mindstudio_profiler_output/<name>_<timestamp>.csv (op_summary,\n"
     "op_statistic, api_statistic, task_time, communication_statistic, step_trace,\n"
     "npu_mem, npu_module_mem), a torch_npu rank's ASCEND_PROFILER_OUTPUT/<name>.csv\n"
     "(kernel_details, operator_details, step_trace_time, memory_record,\n"
     "operator_memory, npu_module_mem, op_statistic, api_statistic,\n"
     "communication.json, communication_matrix.json), with their\n"
     "headers; a window's label goes into the names. Each folder gets a README.txt\n"
     "and a tracebook_run.json listing its files. A summary whose tables are empty\n"
     "is skipped with a note. The paths written go to stdout.",
     export_summary_opts, N(export_summary_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_export_summary},
    {"merge", NULL, "-o FILE DB [DB ...]",
     "merge DBs that tracebook wrote into one, without the raw data",
     "Merges DBs that tracebook wrote (shards of a cluster, other machines'\n"
     "ranks) into one DB, without reading the profile data again: strings are\n"
     "interned anew, ids shifted, each DB keeps its ranks (renumbered in input\n"
     "order, with a warning, when two name the same rank). The result holds the\n"
     "same rows as a load of all the raw inputs at once.",
     merge_opts, N(merge_opts), 1, 1 << 20, "DB", COMPLETE_FILE, cli_cmd_merge},
    {"report", NULL, "-dir PATH [-dir PATH ...] --spec FILE [--spec FILE ...] [options]",
     "run report specs over the inputs: csv, json, xlsx, console tables",
     "Runs report specs (YAML or JSON; docs/spec.md, tracebook-spec(5)) over the\n"
     "inputs' unified DB and writes each report's outputs: DIR/<report id>[_<iteration\n"
     "label>].csv / .json, console tables on stdout, and DIR/tracebook_run.json\n"
     "(inputs, window, unit, specs, files). An msprof reports_sample_config.json is a\n"
     "valid spec. PATH is what export db reads, or a DB that tracebook wrote; the DB\n"
     "is cached as for info. Built-in reports: `tracebook reports`; `--spec\n"
     "builtin:NAME` runs one.",
     report_opts, N(report_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_report},
    {"query", NULL, "-dir PATH [-dir PATH ...] [options] SQL",
     "run one SQL statement over the inputs and print the result",
     "Runs one SQL statement over the inputs' unified DB in the report sandbox\n"
     "(read-only, step budget) and prints the result as a table. Column aliases\n"
     "may carry a type (\"Total:dur_ns\") converted by --timeunit. An error in the\n"
     "statement points at its place in it.",
     query_opts, N(query_opts), 1, 1, "SQL statement", COMPLETE_NONE, cli_cmd_query},
    {"print summary", NULL, "-dir PATH [-dir PATH ...] [--per-device] [--log-file FILE] [options]",
     "print time, calls, avg, min, max per name, as topsprof",
     "Prints the inputs' statistics as topsprof's statistics mode does, per activity\n"
     "class: DEVICE (device tasks), HOST (host ops) and RUNTIME (runtime and API\n"
     "calls), rows `Time(%) Time Calls Avg Min Max Name` grouped by name, largest\n"
     "time first, times with their unit (56.61ms), then Accumulate Time, Total Calls\n"
     "and, for DEVICE, Total Time. The listing reads back as a topsprof listing.",
     print_opts, N(print_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_print_summary},
    {"print trace", NULL, "-dir PATH [-dir PATH ...] [--per-device] [--log-file FILE] [options]",
     "print the device tasks in time order, as topsprof's trace",
     "Prints the device tasks in start order as topsprof's trace mode does: Start\n"
     "(from the first task), Duration, Node Name (the op type) and Name, then\n"
     "Accumulate Time, Total Calls and Total Time.",
     print_opts, N(print_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_print_trace},
    {"compare", NULL, "-base PATH -new PATH --spec FILE [-o DIR] [--fail-on-regression] [options]",
     "run a spec on two runs and compare them row by row",
     "Runs every report of the spec on a base run and a new run, matches rows by\n"
     "the report's key columns (`key:`, after `normalize:`) and writes, per numeric\n"
     "column, base, new, delta and ratio to DIR/<report>_compare.csv, to a sheet\n"
     "of DIR/compare.xlsx and a section of DIR/compare.html (after a Summary of\n"
     "the largest regressions, then improvements); rows in one run only are added\n"
     "or removed. The spec's `regressions:` rules (default: time columns worse when\n"
     "higher by 5% and 1 us, past the run's noise) mark regressions, listed in\n"
     "DIR/tracebook_run.json and the largest on stderr.\n"
     "PATH is what report reads, or the output folder of an earlier report run (its\n"
     "tracebook_run.json names the inputs). docs/nightly.md.",
     compare_opts, N(compare_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_compare},
    {"history add", NULL, "--history FILE -dir PATH --spec FILE [--label L] [--meta KEY=VALUE ...] | --history FILE RUN_DIR",
     "append one night's report rows to a history DB",
     "Runs the spec on one night (-dir inputs, as report takes them, or the output\n"
     "folder of an earlier report run: its inputs, spec and window) and appends\n"
     "every report row, with the night's label, the data's time, the inputs, the\n"
     "version and --meta pairs, to the history DB in one transaction: two jobs\n"
     "appending at once both land. --keep N then removes all but the newest N\n"
     "nights. The label goes to stdout. docs/nightly.md.",
     history_add_opts, N(history_add_opts), 0, 1, "report folder", COMPLETE_DIR, cli_cmd_history_add},
    {"history report", NULL, "--history FILE --spec FILE [--last N] [-o DIR] [--fail-on-regression] [options]",
     "trend tables, verdicts and the trend workbook of a history",
     "Sets the nights side by side per key and numeric column (the spec's key:,\n"
     "normalize: and regressions:, as compare reads them): DIR/<report>_trend.csv,\n"
     "<report>_trend_chart.csv (the charted series, nights down),\n"
     "history_verdicts.csv, DIR/trend.xlsx (Summary, then a trend sheet and a\n"
     "line chart per report) and DIR/trend.html (the verdicts, then per report a\n"
     "line chart per charted key, a marker on each night a verdict fired). Each night is judged against the median and MAD of\n"
     "the nights before it (the rule's nights:, 8; mad:, 3): a regression passes\n"
     "the rule's thresholds and mad times the scaled MAD. Verdicts name the nights\n"
     "they used and go to DIR/tracebook_run.json. docs/nightly.md.",
     history_report_opts, N(history_report_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_history_report},
    {"history list", NULL, "--history FILE [--format console|csv|json]",
     "list the nights of a history DB",
     "Lists the nights of a history DB, oldest first: label, the data's time, when\n"
     "it was added, tracebook's version, reports and rows kept, inputs and the\n"
     "--meta pairs.",
     history_list_opts, N(history_list_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_history_list},
    {"history remove", NULL, "--history FILE [--label L ...] [--keep N]",
     "remove nights from a history DB",
     "Removes the nights named by --label (each must exist; else nothing is\n"
     "removed) and, with --keep N, all but the newest N nights, in one transaction.",
     history_remove_opts, N(history_remove_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_history_remove},
    {"reports", NULL, "[NAME]", "list the built-in reports",
     "Lists the built-in reports (one line each), or shows one report's help:\n"
     "title, description, required tables, parameters and its spec file.",
     reports_opts, N(reports_opts), 0, 1, "report name", COMPLETE_REPORT, cli_cmd_reports},
    {"info", NULL, "-dir PATH [-dir PATH ...] [options]",
     "show what the inputs hold: sources, layers, devices, ranks,\n"
     "steps, time span, rows per table, warnings",
     "Loads the inputs (or reads PATH when it is a .db that tracebook wrote) and\n"
     "prints what was found: sources, ranks and devices, layers, time span,\n"
     "steps, events per destination table, rows per table and warnings.\n"
     "The DB is kept under $XDG_CACHE_HOME/tracebook/ (~/.cache/tracebook/) and\n"
     "reused while the inputs' files, sizes and modification times are unchanged;\n"
     "the first line of the output names it.",
     info_opts, N(info_opts), 0, 0, NULL, COMPLETE_NONE, cli_cmd_info},
    {"help", "help CMD", "[CMD]", "show the options of a command",
     "Shows the usage of a command (export, info, report, query, print, reports), or\n"
     "the main usage without one.",
     help_opts, N(help_opts), 0, 2, "command", COMPLETE_NONE, cli_cmd_help},
};
const size_t cli_n_commands = N(cli_commands);

const cli_exit cli_exits[] = {
    {TB_EXIT_OK, "success"},
    {TB_EXIT_FAILURE, "internal error"},
    {TB_EXIT_USAGE, "usage error (bad command line)"},
    {TB_EXIT_INPUT, "malformed input, or an input cut short with --strict"},
    {TB_EXIT_IO, "a file could not be read or written"},
    {TB_EXIT_DB, "SQLite error"},
    {TB_EXIT_NOTFOUND, "no usable input found"},
    {TB_EXIT_WARNING, "--fail-on-warning: the load or the run warned (the outputs are written)"},
    {TB_EXIT_REGRESSION, "compare or history report --fail-on-regression: a regression was found"},
    {TB_EXIT_FINDING, "report --fail-on-finding: an advisor rule found something that severe (the outputs are written)"},
};
const size_t cli_n_exits = N(cli_exits);

const cli_env cli_envs[] = {
    {"TRACEBOOK_JOBS", "how many ranks load at once (default: the online CPUs, up to 4; 1 loads one after the "
                       "other); the DB is the same whatever the number"},
    {"TRACEBOOK_MAX_EVENT_MB", "the longest single event (or top-level value) of a trace, in MiB (default 64); "
                               "a longer one is an error"},
    {"XDG_CACHE_HOME", "where info, report and query keep the DBs they load (XDG_CACHE_HOME/tracebook, else "
                       "~/.cache/tracebook)"},
    {"TMPDIR", "where the private copy of a DB input with a -wal file goes (default /tmp)"},
    {"TRACEBOOK_MPI_DIR", "under mpirun: where the processes put their shards, a folder every process sees under the "
                          "same path (default: the cache folder)"},
};
const size_t cli_n_envs = N(cli_envs);

const char cli_about[] =
    "tracebook loads accelerator profile data (Ascend msprof/torch_npu timelines,\n"
    "PyTorch Kineto traces) into one msprof-compatible SQLite trace DB and runs\n"
    "report specs over it.";
