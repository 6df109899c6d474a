"""Tune BM25's k1 and b on the Cranfield collection, directly on MAP and NDCG@10.

    python examples/tune_bm25.py [--data ../shared/data] [--metrics map,ndcg@10]
                                 [--budget 200] [--seed 0]

Cranfield's 225 queries are split at random (seeded) into train and test halves; each
applicable strategy searches the box k1 in [0, 3], b in [0, 1] with the same evaluation
budget on the train queries; the table compares the default (k1 = 1.2, b = 0.75) with the
tuned values on both halves. Queries are numbered by position in cran.qry (as cranqrel
does); grades are 5 - code (code 1 = complete answer ... 4 = minimum interest); the one
undocumented -1 judgment per query is treated as not relevant. BM25 term statistics are
computed once per (query, document) pair, and every (k1, b) is rescored in numba.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _ir  # noqa: E402

import dfrank  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
STRATEGIES = {"coordinate_ascent": dict(restarts=2), "steepest_ascent": dict(restarts=2),
              "pso": dict(swarm_size=10), "random": dict(), "grid": dict()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--metrics", default="map,ndcg@10")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    folder = os.path.join(args.data, "cranfield")
    if not os.path.isdir(folder):
        sys.exit(f"tune_bm25: no Cranfield collection in {folder} (pass --data)")
    t0 = time.perf_counter()
    coll = _ir.Collection(*_ir.load_cranfield(folder))
    score = _ir.bm25_scorer(coll)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(coll.qids))
    train_q, test_q = np.sort(perm[: len(perm) // 2]), np.sort(perm[len(perm) // 2:])
    train = coll.data.subset(train_q)
    test = coll.data.subset(test_q)
    rows_train = coll.subset(train_q)
    rows_test = coll.subset(test_q)
    print(f"Cranfield: {coll.n_docs} documents, {len(coll.qids)} queries "
          f"({len(train_q)} train / {len(test_q)} test), built in "
          f"{time.perf_counter() - t0:.1f} s")
    space = dfrank.Box([0.0, 0.0], [3.0, 1.0], names=["k1", "b"])
    for metric in [m.strip() for m in args.metrics.split(",")]:
        obj = dfrank.ScoringObjective(lambda x: score(x)[rows_train], train, space, metric)
        default = np.array([1.2, 0.75])
        s = score(default)
        rows = [["default (k1=1.20, b=0.75)",
                 f"{dfrank.evaluate(s[rows_train], train, metric):.4f}",
                 f"{dfrank.evaluate(s[rows_test], test, metric):.4f}", "", ""]]
        for name, opts in STRATEGIES.items():
            t = time.perf_counter()
            r = dfrank.maximize(obj, strategy=name, seed=args.seed, budget=args.budget,
                                **opts)
            secs = time.perf_counter() - t
            k1, b = r.point
            te = dfrank.evaluate(score(r.point)[rows_test], test, metric)
            rows.append([f"{name} (k1={k1:.2f}, b={b:.2f})", f"{r.value:.4f}", f"{te:.4f}",
                         str(r.n_evals), f"{secs:.2f} s"])
        print(f"\n{metric}:")
        w = [max(len(str(x)) for x in col) for col in zip(*rows, ["setting", "train",
                                                                    "test", "evals", "time"])]
        head = ["setting", "train", "test", "evals", "time"]
        print("  ".join(h.ljust(w[0]) if i == 0 else h.rjust(w[i]) for i, h in enumerate(head)))
        for r_ in rows:
            print("  ".join(str(c).ljust(w[0]) if i == 0 else str(c).rjust(w[i])
                            for i, c in enumerate(r_)))


if __name__ == "__main__":
    main()
