# SPDX-License-Identifier: MIT
"""hta_peer.py - HolisticTraceAnalysis's three breakdowns over a trace folder.

The peer figure of the HTA path in tests/bench/bench.sh: HTA reads the
Kineto traces of DIR (TraceAnalysis) and computes the temporal breakdown,
the comm/comp overlap and the idle-time breakdown of every rank, nothing
drawn (visualize=False). Prints one line, "ranks N rows T C I" (the rows of
each table), so that the run is seen to have made them. HTA_CHECKOUT is a
HolisticTraceAnalysis checkout (its hta package is imported from there);
pandas must be installed (Debian: python3-pandas).

usage: python3 hta_peer.py HTA_CHECKOUT DIR
Not a test; HTA is no dependency of tracebook.
"""
import logging
import sys


def main():
    sys.path.insert(0, sys.argv[1])
    from hta.trace_analysis import TraceAnalysis

    logging.disable(logging.CRITICAL)
    t = TraceAnalysis(trace_dir=sys.argv[2])
    temporal = t.get_temporal_breakdown(visualize=False)
    overlap = t.get_comm_comp_overlap(visualize=False)
    idle = t.get_idle_time_breakdown(visualize=False)[0]
    print("ranks %d rows %d %d %d" % (len(t.t.get_ranks()), len(temporal), len(overlap), len(idle)))


if __name__ == "__main__":
    main()
