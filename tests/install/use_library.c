/* SPDX-License-Identifier: MIT */
/*
 * use_library.c - a program built against the installed library, the way a
 * user builds one: `cc use_library.c $(pkg-config --cflags --libs tracebook)`.
 *
 * tests/install/install_test.py compiles it against a `meson install
 * --destdir` tree (linked to the shared library, and again to the static
 * one) and runs it:
 *
 *   use_library SAMPLE_DIR OUT_DIR
 *
 * It loads SAMPLE_DIR into OUT_DIR/sample.db with tb_load(), runs the
 * built-in report step_trace_time (builtin step_trace.yaml, times in ns)
 * over a session of that DB (tb_session_open, tb_session_run) into a sink
 * of its own that prints the rows as CSV on
 * stdout, after a first line `version TB_VERSION tb_version()`. The test
 * compares the rows with the command's CSV of the same report. Exit 0 on
 * success, 1 with a message on stderr otherwise.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebook/tracebook.h>

typedef struct print_sink {
    tb_sink base;
    size_t n;
} print_sink;

static tb_status ps_begin(tb_sink *s, const tb_sink_column *cols, size_t n, tb_error *err)
{
    (void)err;
    ((print_sink *)s)->n = n;
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? "," : "", cols[i].header);
    printf("\n");
    return TB_OK;
}

/* A cell as the CSV writer would write it for these columns (integers with
 * their decimal places, text as it is; the report has no quotes to escape). */
static void print_cell(const tb_cell *c)
{
    switch (c->kind) {
    case TB_CELL_NULL:
        break;
    case TB_CELL_INT: {
        if (c->scale == 0) {
            printf("%" PRId64, c->i);
            break;
        }
        int64_t p = 1;
        for (int k = 0; k < c->scale; k++)
            p *= 10;
        int64_t a = c->i < 0 ? -c->i : c->i;
        printf("%s%" PRId64 ".%0*" PRId64, c->i < 0 ? "-" : "", a / p, c->scale, a % p);
        break;
    }
    case TB_CELL_REAL:
        printf("%.17g", c->d);
        break;
    case TB_CELL_TEXT:
        fwrite(c->s, 1, c->n, stdout);
        break;
    }
}

static tb_status ps_row(tb_sink *s, const tb_cell *cells, tb_error *err)
{
    (void)err;
    for (size_t i = 0; i < ((print_sink *)s)->n; i++) {
        if (i)
            printf(",");
        print_cell(&cells[i]);
    }
    printf("\n");
    return TB_OK;
}

static tb_status ps_finish(tb_sink *s, tb_error *err)
{
    (void)s;
    (void)err;
    return fflush(stdout) == 0 ? TB_OK : TB_ERR_IO;
}

static void ps_destroy(tb_sink *s)
{
    free(s);
}

static tb_status open_sink(void *ctx, const tb_spec *spec, const tb_spec_report *rep, unsigned format,
                           const char *label, tb_sink **out, tb_error *err)
{
    (void)ctx;
    (void)spec;
    (void)rep;
    (void)format;
    (void)label;
    print_sink *s = calloc(1, sizeof *s);
    if (!s)
        return tb_error_set(err, TB_ERR_NOMEM, "out of memory");
    s->base = (tb_sink){.begin = ps_begin, .row = ps_row, .finish = ps_finish, .destroy = ps_destroy};
    *out = &s->base;
    return TB_OK;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: use_library SAMPLE_DIR OUT_DIR\n");
        return 1;
    }
    printf("version %s %s\n", TB_VERSION, tb_version());

    char db[4096];
    snprintf(db, sizeof db, "%s/sample.db", argv[2]);
    const char *inputs[] = {argv[1]};
    tb_error err;
    tb_error_clear(&err);
    tb_load_result loaded;
    memset(&loaded, 0, sizeof loaded);
    tb_spec *spec = NULL;
    tb_session *session = NULL;
    int status = 1;
    if (tb_load(&(tb_load_options){.inputs = inputs, .n_inputs = 1, .output = db, .jobs = 1}, &loaded, &err))
        goto fail;

    const tb_builtin *b = tb_builtin_find("step_trace");
    if (!b) {
        tb_error_set(&err, TB_ERR_NOTFOUND, "no built-in 'step_trace'");
        goto fail;
    }
    if (tb_spec_load_mem("builtin:step_trace.yaml", b->text, strlen(b->text), &spec, NULL, NULL, &err))
        goto fail;
    const char *only[] = {"step_trace_time"};
    const tb_spec *specs[] = {spec};
    tb_run_result res;
    memset(&res, 0, sizeof res);
    const char *in_db[] = {db};
    if (tb_session_open(&(tb_session_options){.inputs = in_db, .n_inputs = 1}, &session, &err) ||
        tb_session_run(session, &(tb_run_options){.specs = specs, .n_specs = 1, .unit = TB_UNIT_NS,
                                                  .formats = TB_OUT_CSV, .only = only, .n_only = 1,
                                                  .open_sink = open_sink},
                       &res, &err))
        goto fail;
    if (res.reports_run != 1 || res.rows == 0) {
        tb_error_set(&err, TB_ERR_INTERNAL, "expected one report with rows, got %zu reports, %" PRIu64 " rows",
                     res.reports_run, res.rows);
        goto fail;
    }
    status = 0;
fail:
    if (status)
        fprintf(stderr, "use_library: %s: %s\n", tb_strerror(err.code), err.message);
    tb_session_close(session);
    tb_spec_free(spec);
    return status;
}
