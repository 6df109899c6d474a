"""Every registered strategy on one objective, several seeds, equal evaluation budget:
a table of train / test values and a convergence plot.

    python examples/compare_optimizers.py [--data ../shared/data] [--budget 2000]
                                          [--seeds 3] [--plot convergence.png]

Default objective: NDCG@10 of a linear ranker on OHSUMED Fold1 (the bundled demo set if
../shared/data is absent). Every run gets the same budget of objective evaluations,
counted by the objective itself (an exact line search counts one).
"""

import argparse
import os
import time

import numpy as np

import dfrank
from dfrank import strategies

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--plot", default="convergence.png")
    args = ap.parse_args()
    fold = os.path.join(args.data, "ohsumed-letor3/QueryLevelNorm/Fold1")
    if os.path.isdir(fold):
        train = dfrank.load_svmlight(os.path.join(fold, "train.txt.gz"))
        test = dfrank.load_svmlight(os.path.join(fold, "test.txt.gz"))
        where = "OHSUMED Fold1"
    else:
        print(f"({fold} not found: using the bundled demo set)")
        train, _, test = dfrank.data.datasets.load_demo()
        where = "demo set"
    names = sorted({getattr(strategies.get(n), "name", n) for n in strategies.available()})
    names = [n for n in names if n != "grid"] + (["grid"] if train.n_features <= 6 else [])
    print(f"{where}: {args.metric}, budget {args.budget} evaluations, {args.seeds} seeds")
    rows, best_runs = [], {}
    for name in names:
        tr, te, secs = [], [], []
        for seed in range(args.seeds):
            t = time.perf_counter()
            r = dfrank.maximize(train, args.metric, name, seed=seed, budget=args.budget)
            secs.append(time.perf_counter() - t)
            tr.append(r.value)
            te.append(r.ranker.evaluate(test, args.metric))
            if name not in best_runs or r.value > best_runs[name].value:
                best_runs[name] = r
        rows.append((name, np.mean(tr), np.std(tr), np.mean(te), np.std(te), np.mean(secs)))
    rows.sort(key=lambda r: -r[1])
    print(f"{'strategy':20s} {'train':>17s} {'test':>17s} {'time':>8s}")
    for name, m, s, mt, st, sec in rows:
        print(f"{name:20s} {m:.4f} +- {s:.4f}   {mt:.4f} +- {st:.4f} {sec:7.2f}s")
    if args.plot:
        try:
            from dfrank.plot import convergence
            convergence(best_runs, path=args.plot,
                        title=f"{where}: best {args.metric} (best seed of each strategy)")
            print("convergence plot written to", args.plot)
        except ImportError as e:
            print(f"no plot: {e}")


if __name__ == "__main__":
    main()
