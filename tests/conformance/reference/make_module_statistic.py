#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make_module_statistic.py - how the reference
# msprof_analyze_module_statistic_2ranks.csv was made: msprof-analyze's own
# module_statistic recipe (its ModuleStatistic class, unchanged, with the DB
# export type) on the two ranks' DBs that tests/cli/msprof_analyze_test.py
# builds (module_cluster: msprof's table layouts, Module mstx ranges, PyTorch
# calls linked to kernels and to backward calls). Its mapper runs per rank,
# its reducer over both, and the ModuleStatistic table it would write is
# written with pandas' to_csv instead (no index). Not run by the tests: it
# needs a checkout of msprof-analyze (github.com/Ascend/msprof-analyze) and
# pandas.
#
# usage: make_module_statistic.py MSPROF_ANALYZE_CHECKOUT OUT_DIR
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    checkout, out = sys.argv[1:3]
    sys.path.insert(0, checkout)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "cli"))
    import msprof_analyze_test as mat
    from msprof_analyze.cluster_analyse.recipes.module_statistic.module_statistic import ModuleStatistic
    from msprof_analyze.prof_common.constant import Constant

    with tempfile.TemporaryDirectory() as d:
        dirs = mat.module_cluster(d)
        recipe = ModuleStatistic.__new__(ModuleStatistic)
        recipe._export_type = Constant.DB
        recipe._recipe_name = "module_statistic"
        res = []
        for (rank, _, _), sub in zip(mat.MODULE_RANKS, dirs):
            data_map = {Constant.RANK_ID: rank, Constant.PROFILER_DB_PATH: os.path.join(sub, "msprof_%d.db" % rank)}
            res.append(recipe._mapper_func(data_map, "module_statistic"))
        df = recipe.reducer_func(res)
    df.to_csv(os.path.join(out, "msprof_analyze_module_statistic_2ranks.csv"), index=False)


if __name__ == "__main__":
    main()
