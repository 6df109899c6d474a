"""Tune BM25's k1 and b on Cranfield (or CISI) directly on the metric, strategy against
strategy, with held-out queries.

    python examples/tune_bm25.py [--data ../shared/data] [--collection cranfield]
                                 [--metrics map,ndcg@10] [--budget 40] [--seed 0]

The queries are split at random (seeded) into train and test halves; each strategy has the
same budget of runs of the built-in engine (dfrank.ir, evaluated as trec_eval evaluates its
runs) on the train queries; the table compares k1 = 1.2, b = 0.75 with the tuned values on
both halves. ``dfrank tune --collection FOLDER --folds 5`` does the cross-validated version
in one command.
"""

import argparse
import os
import sys
import time

import numpy as np

import dfrank
from dfrank import ir

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
STRATEGIES = ["pattern", "coordinate_ascent", "pso", "random", "grid"]
SPACE = {"k1": (0.1, 3.0), "b": (0.0, 1.0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--collection", default="cranfield", choices=["cranfield", "cisi"])
    ap.add_argument("--metrics", default="map,ndcg@10")
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    folder = os.path.join(args.data, args.collection)
    if not os.path.isdir(folder):
        sys.exit(f"tune_bm25: no {args.collection} collection in {folder} (pass --data)")
    t0 = time.perf_counter()
    loader = ir.load_cranfield if args.collection == "cranfield" else ir.load_cisi
    docs, topics, qrels = loader(folder)
    judged = [q for q in topics if qrels.get(q)]
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(len(judged))
    halves = {"train": [judged[i] for i in sorted(perm[: len(perm) // 2])],
              "test": [judged[i] for i in sorted(perm[len(perm) // 2:])]}
    engines = {h: ir.Engine(docs, {q: topics[q] for q in qs}, qrels)
               for h, qs in halves.items()}
    print(f"{args.collection}: {len(docs)} documents, {len(judged)} judged queries "
          f"({len(halves['train'])} train / {len(halves['test'])} test), indexed in "
          f"{time.perf_counter() - t0:.1f} s")
    for metric in [m.strip() for m in args.metrics.split(",")]:
        default = {"k1": 1.2, "b": 0.75}
        rows = [["default (k1=1.20, b=0.75)",
                 f"{engines['train'].evaluate('bm25', default, metric):.4f}",
                 f"{engines['test'].evaluate('bm25', default, metric):.4f}", "", ""]]
        for name in STRATEGIES:
            t = time.perf_counter()
            opts = {"restarts": 2} if name == "coordinate_ascent" else {}
            res = dfrank.tune((engines["train"], "bm25"), SPACE, metric=metric,
                              strategy=name, budget=args.budget, seed=args.seed, **opts)
            p = res.best_params
            rows.append([f"{name} (k1={p['k1']:.2f}, b={p['b']:.2f})", f"{res.value:.4f}",
                         f"{engines['test'].evaluate('bm25', p, metric):.4f}",
                         str(res.n_runs), f"{time.perf_counter() - t:.2f} s"])
        print(f"\n{metric}:")
        from dfrank.text import format_table

        print(format_table(rows, ["setting", "train", "test", "runs", "time"]))


if __name__ == "__main__":
    main()
