"""Where the default for linear rankers switches from smoothed_es to ca: training size.

    python benchmarks/choose_default_by_size.py [--queries 100 300 1000 3000 8333]

For each number of training queries, a synthetic LETOR-like set
(``dfrank.data.datasets.make_letor_like``, 136 float32 features, 60-180 documents a query) gets
that many training queries and 2,000 held-out ones from the same generator; ``smoothed_es``
(its defaults: 4 perturbations, 5 runs of 5,000 evaluations averaged) and ``ca`` with one
restart each learn a ranker on the training queries (seed 0), timed, and are scored by
NDCG@10 on the held-out queries. ``auto`` (the default, strategies/auto.py) runs the
faster of the two where it is also the better on held-out queries. On real data of a few
hundred queries (LETOR's folds) smoothed_es's lead is measured by
``benchmarks/choose_fit_default.py`` (docs/decisions.md).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import LOAD_HEADER, LOAD_NOTE, load_cell, load_warning, measure, table  # noqa: E402

import dfrank  # noqa: E402

HELD_OUT = 2000
CANDIDATES = {"smoothed_es (5 runs averaged)": ("smoothed_es", {}),
              "ca, 1 restart": ("ca", {"restarts": 1})}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, nargs="+", default=[100, 300, 1000, 3000, 8333])
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args()
    print(load_warning())
    rows = []
    for nq in args.queries:
        full = dfrank.data.datasets.make_letor_like(n_queries=nq + HELD_OUT,
                                               docs_per_query=(60, 180), n_features=136,
                                               seed=1, dtype=np.float32)
        train, test = full.subset(np.arange(nq)), full.subset(np.arange(nq, nq + HELD_OUT))
        X_test = test.X.astype(np.float64)
        got = {}
        for label, (name, opts) in CANDIDATES.items():
            with measure() as m:
                r = dfrank.maximize(train, args.metric, name, seed=0, **opts)
            held = dfrank.evaluate(X_test @ r.weights, test, args.metric)
            got[label] = (m.timing, r.value, held)
        best = max(got, key=lambda k: got[k][2])
        for label, (t, value, held) in got.items():
            rows.append([f"{nq:,} ({train.n_docs:,} docs)", label, f"{t:.1f} s",
                         f"{value:.4f}", f"{held:.4f}" + (" *" if label == best else ""),
                         load_cell(t)])
        print(f"{nq} queries done", file=sys.stderr, flush=True)
    print(table(rows, ["training queries", "strategy", "fit", f"train {args.metric}",
                       f"held-out {args.metric}", LOAD_HEADER]))
    print(f"* the better on the {HELD_OUT:,} held-out queries. " + LOAD_NOTE)


if __name__ == "__main__":
    main()
