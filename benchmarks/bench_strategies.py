"""All strategies at equal wall-clock budgets on OHSUMED Fold1 (NDCG@10).

    python benchmarks/bench_strategies.py [--budgets 1,5,20] [--seeds 5]

Each strategy runs until its time budget is spent (restarts, samples or iterations are
left unbounded), once per seed; the table gives mean +- sd of the train and test NDCG@10
of the returned ranker, and the evaluations it made. JIT compilation is excluded by a
warm-up run of every strategy.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     measure, shared_path, table)

import dfrank  # noqa: E402

STRATEGIES = {  # unbounded versions: the time budget stops them
    "coordinate_ascent": dict(restarts=100000),
    "steepest_ascent": dict(restarts=100000),
    "pso": dict(iterations=10**7, swarm_size=30),
    "random": dict(n_samples=10**12),
    "grid": dict(),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="1,5,20")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    print(load_warning())
    paths = [shared_path(f"ohsumed-letor3/QueryLevelNorm/Fold1/{p}.txt.gz")
             for p in ("train", "test")]
    if None in paths:
        print("../shared/data absent: nothing to measure")
        return
    train, test = (dfrank.load_svmlight(p) for p in paths)
    budgets = [float(b) for b in args.budgets.split(",")]
    for name, opts in STRATEGIES.items():  # warm-up (compilation)
        dfrank.maximize(train, args.metric, name, max_seconds=0.3, **opts)
    rows = []
    for secs in budgets:
        for name, opts in STRATEGIES.items():
            tr, te, ev = [], [], []
            with measure() as m:  # a time budget means nothing without the load it ran at
                for seed in range(args.seeds):
                    r = dfrank.maximize(train, args.metric, name, seed=seed,
                                        max_seconds=secs, **opts)
                    tr.append(r.value)
                    te.append(r.ranker.evaluate(test, args.metric))
                    ev.append(r.n_evals)
            rows.append([f"{secs:g} s", name, f"{np.mean(tr):.4f} +- {np.std(tr):.4f}",
                         f"{np.mean(te):.4f} +- {np.std(te):.4f}", f"{np.mean(ev):.0f}",
                         load_cell(m.timing)])
        print(table(rows[-len(STRATEGIES):], ["budget", "strategy", f"train {args.metric}",
                                              f"test {args.metric}", "evals", LOAD_HEADER]),
              flush=True)
    print()
    print(table(rows, ["budget", "strategy", f"train {args.metric}", f"test {args.metric}",
                       "evals", LOAD_HEADER]))
    print(LOAD_NOTE + " Rows whose load differs were given less of the machine.")


if __name__ == "__main__":
    main()
