#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make_pp_chart_dualpipev.py - how msprof_analyze_pp_chart_dualpipev_pp4_mb8.csv
# was made: msprof-analyze's pp_chart recipe (pp_chart.py at 8399c1cd), its own
# DualPipeV schedule (PPChart.generate_dualpipev_schedule and
# calculate_micro_batch_id_for_dualpipev, the code unchanged) for 4 pipeline
# stages and 8 micro-batches: per stage, the name and type its mapper gives the
# stage's rows of a step, in order, and the count of rows a step must have
# (pp_stage_mstx_num). The two methods are taken out of the recipe's file and
# run alone (the rest of the class needs pandas and a cluster). With PP and MB
# given, the same for that schedule: msprof_analyze_pp_chart_dualpipev_pp2_mb8.csv
# is PP 2, MB 8 (the sizes cli/msprof_analyze_test.py gives pp_chart as
# parameters).
# cli/msprof_analyze_test.py builds an 8-rank cluster with that schedule and
# checks pp_chart's names against these. Not run by the tests: it needs a
# checkout of msprof-analyze (github.com/Ascend/msprof-analyze).
#
# usage: make_pp_chart_dualpipev.py MSPROF_ANALYZE_CHECKOUT OUT_CSV [PP MB]
import ast
import csv
import os
import sys
from collections import defaultdict

PP, MB = 4, 8


def main():
    checkout, out = sys.argv[1:3]
    global PP, MB
    if len(sys.argv) > 3:
        PP, MB = int(sys.argv[3]), int(sys.argv[4])
    path = os.path.join(checkout, "msprof_analyze", "cluster_analyse", "recipes", "pp_chart", "pp_chart.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PPChart")
    cls.bases = []
    cls.body = [n for n in cls.body if not isinstance(n, ast.FunctionDef)
                or n.name in ("generate_dualpipev_schedule", "calculate_micro_batch_id_for_dualpipev")]

    class Log:
        def error(self, msg):
            sys.exit(msg)
    ns = {"defaultdict": defaultdict, "logger": Log()}
    exec(compile(ast.Module(body=[cls], type_ignores=[]), path, "exec"), ns)
    pp = ns["PPChart"].__new__(ns["PPChart"])
    pp.PP_SIZE = "pipeline_model_parallel_size"
    pp.distributed_args = {pp.PP_SIZE: PP}
    pp.micro_batch_num = MB
    pp.micro_batch_id_dict, pp.pp_stage_mstx_num = defaultdict(list), defaultdict(int)
    pp.calculate_micro_batch_id_for_dualpipev()
    with open(out, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["stage", "expected", "position", "name", "type"])
        for stage in range(PP):
            for k, (name, typ) in enumerate(pp.micro_batch_id_dict[stage]):
                w.writerow([stage, pp.pp_stage_mstx_num[stage], k, name, typ])


if __name__ == "__main__":
    main()
