"""How coordinate ascent's defaults were chosen: validation NDCG@10 (never test) over the
5 folds of OHSUMED and MQ2008, for the line-search choice rule and the tolerance.

    python benchmarks/choose_ca_defaults.py [--restarts 5] [--metric ndcg@10]

For every fold: train on train.txt, report the metric of the learned ranker on vali.txt.
The table gives the per-fold validation values and their mean for each configuration.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LETOR_FOLDS, LOAD_HEADER, LOAD_NOTE, letor_folds,  # noqa: E402
                     load_cell, load_warning, measure, table)

import dfrank  # noqa: E402

CONFIGS = {
    "best, tol 1e-3": dict(rule="best", tol=1e-3),
    "best, tol 1e-4": dict(rule="best", tol=1e-4),
    "plateau, tol 1e-3": dict(rule="plateau", tol=1e-3),
    "plateau, tol 1e-4": dict(rule="plateau", tol=1e-4),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--restarts", type=int, default=5)
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    print(load_warning())
    for name in LETOR_FOLDS:
        folds = [(f, train, valid) for f, (train, valid) in letor_folds(name)]
        if not folds:
            print(f"{name}: skipped (../shared/data absent)")
            continue
        rows = []
        for label, opts in CONFIGS.items():
            vals, trains = [], []
            with measure() as m:
                for f, train, valid in folds:
                    r = dfrank.maximize(train, args.metric, "ca", restarts=args.restarts,
                                        **opts)
                    trains.append(r.value)
                    vals.append(r.ranker.evaluate(valid, args.metric))
            rows.append([label] + [f"{v:.4f}" for v in vals] +
                        [f"{np.mean(vals):.4f}", f"{np.mean(trains):.4f}",
                         f"{m.timing:.1f} s", load_cell(m.timing)])
        print(f"\n## {name}: validation {args.metric} of coordinate ascent "
              f"({args.restarts} restarts)")
        print(table(rows, ["configuration"] + [f"fold {f}" for f, _, _ in folds] +
                    ["mean valid", "mean train", "time", LOAD_HEADER]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
