"""How `dfrank fit`'s default strategy was chosen: on validation queries only, never test.

    python benchmarks/choose_fit_default.py [--seeds 3] [--metric ndcg@10]

`dfrank fit --valid` keeps the restart with the best validation value, so a candidate is
judged on validation queries that chose nothing: every fold's vali.txt is split into two
halves by query (alternate queries); the restarts are chosen on one half and the chosen
ranker is scored on the other, then the halves swap. A row is the median over the seeds
of the mean over 5 folds x 2 halves (OHSUMED QueryLevelNorm and MQ2008, ../shared/data).
A portfolio row keeps whichever of its two members' chosen rankers is better on the
choosing half (the restarts of both members compete).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LETOR_FOLDS, LOAD_HEADER, LOAD_NOTE, letor_folds,  # noqa: E402
                     load_cell, load_warning, measure, table)

import dfrank  # noqa: E402

RUNS = {   # name: (strategy, options)
    "ca, 10 restarts": ("ca", dict(restarts=10)),
    "es, 5 runs of 1,000": ("es", dict(restarts=5, evals=1000)),
    "es, 10 runs of 1,000": ("es", dict(restarts=10, evals=1000)),
    "es, 10 runs of 4,000 (the default)": ("es", dict(restarts=10, evals=4000)),
    "es, 20 runs of 4,000": ("es", dict(restarts=20, evals=4000)),
    "es, 10 runs of 8,000": ("es", dict(restarts=10, evals=8000)),
}
PORTFOLIOS = {"portfolio: ca 10 + es 5": ("ca, 10 restarts", "es, 5 runs of 1,000"),
              "portfolio: ca 10 + es 10 of 1,000": ("ca, 10 restarts",
                                                    "es, 10 runs of 1,000"),
              "portfolio: ca 10 + es 10 of 4,000": ("ca, 10 restarts",
                                                    "es, 10 runs of 4,000 (the default)")}


def halves(data):
    q = np.arange(data.n_queries)
    return data.subset(q[q % 2 == 0]), data.subset(q[q % 2 == 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    print(load_warning())
    for name in LETOR_FOLDS:
        folds = [(train, halves(valid)) for _, (train, valid) in letor_folds(name)]
        if not folds:
            print(f"{name}: skipped (../shared/data absent)")
            continue
        judged = {k: np.zeros((args.seeds, len(folds), 2)) for k in [*RUNS, *PORTFOLIOS]}
        with measure() as m:
            for seed in range(args.seeds):
                for i, (train, vali) in enumerate(folds):
                    for h in (0, 1):
                        chooser, judge = vali[h], vali[1 - h]
                        got = {k: dfrank.maximize(train, args.metric, s, seed=seed,
                                                  valid=chooser, **o)
                               for k, (s, o) in RUNS.items()}
                        for k, members in PORTFOLIOS.items():
                            got[k] = max((got[x] for x in members),
                                         key=lambda r: r.valid_value)
                        for k, r in got.items():
                            judged[k][seed, i, h] = r.ranker.evaluate(judge, args.metric)
        rows = [[k, f"{np.median(v.mean(axis=(1, 2))):.4f}"]
                + [f"{x:.4f}" for x in np.median(v.mean(axis=2), axis=0)]
                for k, v in judged.items()]
        print(f"\n## {name}: {args.metric} of the chosen ranker on the other half of vali "
              f"({args.seeds} seeds, {m.timing:.0f} s; {LOAD_HEADER} {load_cell(m.timing)})")
        print(table(rows, ["candidate", "median of the mean"]
                    + [f"fold {i + 1}" for i in range(len(folds))]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
