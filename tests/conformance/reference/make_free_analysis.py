#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make_free_analysis.py - how the reference
# msprof_analyze_free_analysis_2ranks.csv was made: msprof-analyze's own
# free_analysis recipe (its FreeAnalysis class, unchanged, top_num 10) on the
# two ranks' DBs that tests/cli/msprof_analyze_test.py builds (free_cluster:
# msprof's table layouts, compute kernels with their CANN and PyTorch calls,
# other tasks, communication ops). Its mapper runs per rank, its reducer over
# both, and free_analysis.csv is written as its text export writes it (its
# column names, its unit conversion, no index). Not run by the tests: it
# needs a checkout of msprof-analyze (github.com/Ascend/msprof-analyze) and
# pandas.
#
# usage: make_free_analysis.py MSPROF_ANALYZE_CHECKOUT OUT_DIR
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    checkout, out = sys.argv[1:3]
    sys.path.insert(0, checkout)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "cli"))
    import msprof_analyze_test as mat
    from msprof_analyze.cluster_analyse.common_func.utils import convert_unit
    from msprof_analyze.cluster_analyse.recipes.free_analysis.free_analysis import FreeAnalysis
    from msprof_analyze.prof_common.constant import Constant

    with tempfile.TemporaryDirectory() as d:
        dirs = mat.free_cluster(d)
        recipe = FreeAnalysis.__new__(FreeAnalysis)
        recipe.top_num = FreeAnalysis.DEFAULT_TOP_NUM
        res = []
        for (rank, _), sub in zip(mat.FREE_RANKS, dirs):
            data_map = {Constant.RANK_ID: rank, Constant.PROFILER_DB_PATH: os.path.join(sub, "msprof_%d.db" % rank)}
            res.append(recipe._mapper_func(data_map, "free_analysis"))
        df = recipe.reducer_func(res)
    csv_df = df.rename(columns={'rankId': 'Rank ID', 'startTime(us)': 'Start Time(us)', 'endTime(us)': 'End Time(us)',
                                'duration(us)': 'Duration(us)', 'pytorchIdleTime(us)': 'Pytorch Idle Time(us)',
                                'cannIdleTime(us)': 'Cann Idle Time(us)', 'reason': 'Reason'})
    convert_unit(csv_df, recipe.DB_UNIT, recipe.UNIT, recipe.FACTOR).to_csv(
        os.path.join(out, "msprof_analyze_free_analysis_2ranks.csv"), index=False)


if __name__ == "__main__":
    main()
