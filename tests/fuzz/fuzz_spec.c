/* SPDX-License-Identifier: MIT */
/*
 * fuzz_spec.c - libFuzzer harness for the spec loader: each input is a spec
 * text given to tb_spec_load_mem (YAML, or JSON when it starts with '{' or
 * '['). A spec that loads must answer its accessors; one that does not must
 * say why. sql_file names resolve beside the fuzz folder, where nothing is.
 */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[1100];
    snprintf(name, sizeof name, "%s/spec.yaml", fuzz_dir());
    tb_spec *spec = NULL;
    tb_error err;
    tb_error_clear(&err);
    tb_status st = tb_spec_load_mem(name, (const char *)data, size, &spec, NULL, NULL, &err);
    if (st != TB_OK) {
        if (!err.message[0] || spec || st == TB_ERR_INTERNAL)
            abort();
        return 0;
    }
    (void)tb_spec_outputs(spec);
    for (size_t i = 0; i < tb_spec_n_reports(spec); i++) {
        const tb_spec_report *rep = tb_spec_report_at(spec, i);
        if (!rep || !tb_report_id(rep) || !tb_report_title(rep))
            abort();
        for (size_t j = 0; j < tb_report_n_requires(rep); j++)
            if (!tb_report_require(rep, j))
                abort();
        for (size_t j = 0; j < tb_report_n_params(rep); j++)
            if (!tb_report_param(rep, j))
                abort();
    }
    tb_spec_free(spec);
    return 0;
}
