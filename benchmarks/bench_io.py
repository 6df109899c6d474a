"""Parse speed: dfrank.load_svmlight vs sklearn.datasets.load_svmlight_file, side by side.

    python benchmarks/bench_io.py [--reps 5]

Every fold file of OHSUMED (QueryLevelNorm) and MQ2008 in ../shared/data (gzip included in
both timings). Median over repetitions; ratio = sklearn time / dfrank time.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, comparable, fmt_ms,  # noqa: E402
                     load_cell, load_warning, median_time, ratio, shared_path, table)

import dfrank  # noqa: E402

SETS = [("OHSUMED", "ohsumed-letor3/QueryLevelNorm/Fold{f}/{part}.txt.gz"),
        ("MQ2008", "mq2008-letor4/Fold{f}/{part}.txt.gz")]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(load_warning())
    from sklearn.datasets import load_svmlight_file
    rows = []
    total = {"dfrank": 0.0, "sklearn": 0.0}
    timings = []
    for name, pattern in SETS:
        for f in range(1, 6):
            for part in ("train", "vali", "test"):
                p = shared_path(pattern.format(f=f, part=part))
                if p is None:
                    continue
                dfrank.load_svmlight(p)  # warm (JIT / file cache)
                t_ours = median_time(lambda _: dfrank.load_svmlight(p), [None] * args.reps)
                load_svmlight_file(p, query_id=True)
                t_sk = median_time(lambda _: load_svmlight_file(p, query_id=True),
                                   [None] * args.reps)
                total["dfrank"] += t_ours
                total["sklearn"] += t_sk
                timings += [t_ours, t_sk]
                rows.append([f"{name} Fold{f} {part}", f"{os.path.getsize(p) / 1e6:.1f} MB",
                             fmt_ms(t_ours), fmt_ms(t_sk), ratio(t_sk, t_ours),
                             load_cell(t_ours, t_sk)])
    if not rows:
        print("../shared/data absent: nothing to measure")
        return
    same = comparable(*timings)
    rows.append(["all files", "", fmt_ms(total["dfrank"]), fmt_ms(total["sklearn"]),
                 f"{total['sklearn'] / total['dfrank']:.1f}x" if same else
                 "n/a (the load changed during the run)", load_cell(*timings)])
    print(table(rows, ["file", "gz size", "dfrank", "sklearn", "sklearn/dfrank", LOAD_HEADER]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
