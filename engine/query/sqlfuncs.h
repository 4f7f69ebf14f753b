/* SPDX-License-Identifier: MIT */
/*
 * sqlfuncs.h - the SQL functions report specs may call beyond SQLite's own
 * (private to the engine).
 *
 * Statistics (doubles; NULL inputs are ignored like sum(); other values are
 * read as sqlite3_value_double reads them, like avg()):
 *   median(x)            the 50th percentile; NULL for no values
 *   percentile(x, p)     p in 0 .. 100, the same for every row of a group;
 *                        linear interpolation between the closest ranks
 *                        (numpy's default 'linear'): position p/100 * (n-1)
 *                        in the sorted values. A p that is not a number in
 *                        0 .. 100 is an error ("percentile: p must be between
 *                        0 and 100"), and so is a p that changes within a
 *                        group. NULL for no values
 *   lower_quartile(x)    percentile(x, 25)
 *   upper_quartile(x)    percentile(x, 75)
 *   variance(x), stdev(x)    sample (n - 1); NULL for fewer than 2 values
 *   var_pop(x), stdev_pop(x) population (n); NULL for no values
 * Variances use Welford's update (numerically stable in one pass); the
 * percentiles keep the group's values, so their memory is O(group size).
 *
 * Intervals (int64, exact: no value goes through a double; a start or end
 * stored as REAL is truncated as sqlite3_value_int64 does):
 *   union_ns(start, end)     aggregate: total length of the union of the
 *                            group's intervals [start, end) (touching ones
 *                            merge); rows with a NULL bound or end <= start
 *                            add nothing; 0 for an empty group
 *   union_count(start, end)  aggregate: number of intervals of that union; 0
 *                            for an empty group
 *   intersect_ns(s1, e1, s2, e2)  scalar: overlap length of [s1, e1) and
 *                            [s2, e2), 0 when they do not overlap; NULL when
 *                            an argument is NULL
 * The interval aggregates merge on the fly while rows arrive ordered by start
 * and compact themselves when they do not, so they hold about the size of the
 * merged union, not of the group.
 *
 * Sets:
 *   pyset_array(x)           aggregate: a JSON array of the group's distinct
 *                            integers in the order CPython 3 iterates a set
 *                            built by add() of the values in row order (its
 *                            hash-table slot order: msprof-analyze writes its
 *                            sets of ranks so); NULLs are skipped, another
 *                            non-integer is an error ("pyset_array: the
 *                            values must be integers"); "[]" for no values
 *
 * msprof-analyze's DualPipeV schedule (metrics/ppchart.h):
 *   dualpipev_slot(mb, tp, pp, dp, rank, pos, count)  scalar: the JSON
 *                            array [name, type] of the task at place pos
 *                            (from 0) of a step of count tasks of rank
 *                            (stage rank / (tp x dp) of pp stages, mb
 *                            micro-batches); ["", 0] when count is not the
 *                            stage's or there is no schedule (mb NULL or
 *                            under 2 pp); NULL when tp, pp, dp, rank, pos or
 *                            count is NULL or the rank is past pp x tp x dp;
 *                            an error for a size under 1 or over 100000 or
 *                            an argument that is no integer. The last stage
 *                            computed is kept per connection.
 *
 * All are deterministic (and innocuous); none supports use as a window
 * function.
 */
#ifndef TB_QUERY_SQLFUNCS_H
#define TB_QUERY_SQLFUNCS_H

#include <sqlite3.h>

/*
 * Registers the functions above on db (borrowed; the registration lives as
 * long as the connection). Returns SQLITE_OK or the first failing
 * sqlite3_create_function_v2 result code.
 */
int sqlfuncs_register(sqlite3 *db);

#endif
