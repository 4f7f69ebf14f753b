#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make_mstx_sum.py - how the references msprof_analyze_mstx_*_3ranks.csv
# and msprof_analyze_pp_chart_3ranks.csv were made: msprof-analyze's own mstx_sum recipe (its MstxSum class,
# unchanged) on the three ranks' DBs that tests/cli/msprof_analyze_test.py
# builds (mstx_cluster: msprof's table layouts, mstx ranges and marks). Each
# rank's DB is the recipe's profiler DB; its mapper runs per rank with the
# default step range, its reducer over the three, and the four CSVs are
# written as its save step writes them (times from ns to ms under names
# ending in (Ms); mark_stats.csv without the index, the three statistics with
# it). One fix is made to the recipe's code as run: at 8399c1cd its mark
# query asks DBManager.judge_table_exists whether the DB has PYTORCH_API and
# TASK with the DB's path where that function takes a cursor, so the answer is
# always no and every mark pair's framework and device times come out 0;
# here the check is given the path's tables, as the recipe means it (its
# range query, which uses check_tables_in_db, already does so). The same DBs
# give msprof_analyze_pp_chart_3ranks.csv: the pp_chart recipe's mapper (its
# StepTaskInfo table of each rank, kept instead of written into the rank's
# DB), the ranks' rows one after the other with the rank first. Not run by the tests: it needs a checkout of msprof-analyze
# (github.com/Ascend/msprof-analyze) and pandas.
#
# usage: make_mstx_sum.py MSPROF_ANALYZE_CHECKOUT OUT_DIR
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
    from msprof_analyze.cluster_analyse.recipes.mstx_sum.mstx_sum import MstxSum
    from msprof_analyze.prof_common.constant import Constant
    from msprof_analyze.prof_common.db_manager import DBManager

    judge = DBManager.judge_table_exists

    def judge_path(curs, table):
        if isinstance(curs, str):
            return DBManager.check_tables_in_db(curs, table)
        return judge(curs, table)
    DBManager.judge_table_exists = staticmethod(judge_path)

    from msprof_analyze.cluster_analyse.recipes.pp_chart.pp_chart import PPChart
    import pandas as pd

    with tempfile.TemporaryDirectory() as d:
        dirs = mat.mstx_cluster(d)
        pp, chart = PPChart.__new__(PPChart), []
        pp.dump_data = lambda data, **kw: chart.append(data)
        recipe = MstxSum.__new__(MstxSum)
        res = []
        for (rank, _, _, _), sub in zip(mat.MSTX_RANKS, dirs):
            data_map = {Constant.RANK_ID: rank, Constant.PROFILER_DB_PATH: os.path.join(sub, "msprof_%d.db" % rank),
                        Constant.STEP_RANGE: {Constant.START_NS: 0, Constant.END_NS: Constant.MAX_INTEGER}}
            res.append(recipe._mapper_func(data_map, "mstx_sum"))
            pp._mapper_func(data_map, "pp_chart")
            chart[-1].insert(0, "rankId", rank)
        recipe.reducer_func(res)
    pd.concat(chart).to_csv(os.path.join(out, "msprof_analyze_pp_chart_3ranks.csv"), index=False)
    for df, name, index in ((recipe.mark_stats, "mark_stats", False), (recipe.all_fwk_stats, "all_fwk_stats", True),
                            (recipe.all_cann_stats, "all_cann_stats", True),
                            (recipe.all_device_stats, "all_device_stats", True)):
        convert_unit(df, "Ns", recipe.UNIT, recipe.FACTOR).to_csv(
            os.path.join(out, "msprof_analyze_mstx_%s_3ranks.csv" % name), index=index)


if __name__ == "__main__":
    main()
