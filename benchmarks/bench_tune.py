"""Tuning BM25 (k1, b) on Cranfield and CISI: dfrank tune's default strategy against the
11 x 11 grid users run today, the built-in engine against re-running an external one,
and five-fold cross-validated MAP against k1 = 1.2, b = 0.75. Side by side in one run.

    python benchmarks/bench_tune.py [--seeds 5] [--budget 40] [--metric map]

1. Search: the grid's best of 121 points (k1 in 0.1..3, b in 0..1, 11 values each) against
   dfrank's default strategy (pattern) with ``--budget`` runs, median over seeds.
2. Cost of a point: the built-in engine's evaluation of one (k1, b) against bm25s
   (which fixes k1 and b when it indexes) re-indexing, retrieving and being evaluated,
   in this process and as a command (one process per point, as ``dfrank tune --``
   runs it).
3. Five-fold cross-validated MAP of the tuned parameters against the default ones, with
   the paired randomization test.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     median_of, ratio, shared_path, table, timed)

from dfrank import ir  # noqa: E402
from dfrank.registry import BOX_STRATEGY as DEFAULT_STRATEGY  # noqa: E402
from dfrank.tuning.tuner import tune  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
SPACE = {"k1": (0.1, 3.0), "b": (0.0, 1.0)}
DEFAULT = {"k1": 1.2, "b": 0.75}


def grid_best(engine, metric):
    vals = [(engine.evaluate("bm25", {"k1": k1, "b": b}, metric), k1, b)
            for k1 in np.linspace(0.1, 3.0, 11) for b in np.linspace(0.0, 1.0, 11)]
    return max(vals)


def bm25s_point(docs, topics, qrels, metric, k1, b):
    """One point of the external engine in this process: index, retrieve, evaluate."""
    sys.path.insert(0, EXAMPLES)
    try:
        import bm25s_search
    finally:
        sys.path.pop(0)
    from dfrank.tuning.tuner import RunEvaluator

    ev = RunEvaluator(lambda p: bm25s_search.search(docs, topics, p["k1"], p["b"]), qrels,
                      metric)
    return float(np.mean(ev({"k1": k1, "b": b})))


def bm25s_command(folder, qrels_path, metric):
    """One point as ``dfrank tune --`` runs it: a process writing the run, then scored."""
    from dfrank.tuning.tuner import RunEvaluator
    from dfrank.tuning.command import CommandRun

    run = CommandRun([sys.executable, os.path.join(EXAMPLES, "bm25s_search.py"),
                      "--collection", folder, "--k1", "{k1}", "--b", "{b}", "--output",
                      "{run}"], ["k1", "b"])
    return float(np.mean(RunEvaluator(run, qrels_path, metric)({"k1": 1.2, "b": 0.75})))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--metric", default="map")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each timing")
    args = ap.parse_args()
    print(load_warning())
    search_rows, cost_rows, cv_rows = [], [], []
    for name, loader in (("cranfield", ir.load_cranfield), ("cisi", ir.load_cisi)):
        folder = shared_path(name)
        if folder is None:
            print(f"skipped {name}: ../shared/data is absent")
            continue
        docs, topics, qrels = loader(folder)
        engine = ir.Engine(docs, topics, qrels)
        engine.evaluate("bm25", DEFAULT, args.metric)          # kernels warm
        g, gk1, gb = grid_best(engine, args.metric)
        runs = [tune((engine, "bm25"), SPACE, metric=args.metric, budget=args.budget,
                     seed=s) for s in range(args.seeds)]
        vals = [r.value for r in runs]
        n_runs = [r.n_runs for r in runs]
        search_rows.append([name, f"{g:.4f} (k1={gk1:.2f}, b={gb:.2f})", "121",
                            f"{np.median(vals):.4f}", f"{min(vals):.4f}-{max(vals):.4f}",
                            f"{int(np.median(n_runs))}",
                            f"{sum(v >= g for v in vals)}/{len(vals)}"])
        # the cost of one point
        pts = [{"k1": k1, "b": b} for k1, b in zip(np.linspace(0.5, 2.5, args.reps),
                                                   np.linspace(0.2, 0.9, args.reps))]
        ours = median_of([timed(engine.evaluate, "bm25", p, args.metric)[1] for p in pts])
        inproc = median_of([timed(bm25s_point, docs, topics, qrels, args.metric,
                                  p["k1"], p["b"])[1] for p in pts[:3]])
        with tempfile.TemporaryDirectory() as tmp:
            qp = os.path.join(tmp, "qrels.txt")
            with open(qp, "w") as f:
                f.writelines(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items())
            cmd = median_of([timed(bm25s_command, folder, qp, args.metric)[1]
                             for _ in range(3)])
        cost_rows.append([name, f"{ours * 1e3:.2f} ms", f"{inproc:.3f} s",
                          ratio(inproc, ours, "{:.0f}x"), f"{cmd:.2f} s",
                          # the command's own process counts as 'elsewhere' while it runs
                          f"{cmd / ours:.0f}x", load_cell(ours, inproc)])
        # five-fold cross-validation against the default parameters
        cv = tune((engine, "bm25"), SPACE, metric=args.metric, budget=args.budget, seed=0,
                  folds=5, default=DEFAULT)
        cv_rows.append([name, f"{cv.default_value:.4f}", f"{cv.value:.4f}",
                        f"{cv.cv_value:.4f}", f"{cv.cv_value - cv.cv_default:+.4f}",
                        f"{cv.cv_test.p_value:.3g}",
                        "; ".join(f"k1={f['params']['k1']:.2f} b={f['params']['b']:.2f}"
                                  for f in cv.cv.per_fold)])
    m = args.metric
    print(f"\n1. Search, BM25 on {m}: the 11 x 11 grid against dfrank tune's default "
          f"({DEFAULT_STRATEGY}) with a budget of {args.budget} runs, {args.seeds} seeds")
    print(table(search_rows, ["collection", f"grid best {m}", "grid runs",
                              f"dfrank median {m}", "dfrank range", "dfrank runs",
                              "seeds >= grid"]))
    print("\n2. The cost of one point (k1, b): built-in engine vs bm25s re-indexing, "
          "retrieving (depth 1000) and being scored")
    print(table(cost_rows, ["collection", "built-in", "bm25s in process", "ratio",
                            "bm25s as a command", "ratio", LOAD_HEADER]))
    print("(the load column covers the first two; while the command runs, its own process "
          "is the 'elsewhere')")
    print(f"\n3. Five-fold cross-validation of the tuned (k1, b) on {m} against k1 = 1.2, "
          "b = 0.75 (paired randomization test over the queries)")
    print(table(cv_rows, ["collection", "default", "tuned (all queries)",
                          "tuned, held out", "held out - default", "p", "chosen per fold"]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
