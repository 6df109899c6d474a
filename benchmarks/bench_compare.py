"""dfrank's strategies against general-purpose black-box optimizers, on equal budgets.

    python benchmarks/bench_compare.py [--seeds 5] [--budgets 500,2000,10000]
                                       [--seconds 5,20] [--n-jobs 2] [--out bench_out]

Datasets: OHSUMED Fold1 with NDCG@10 and MQ2008 Fold1 with MAP (../shared/data). Every
strategy runs once per seed through :func:`dfrank.compare`, at each evaluation budget
(counted by the objective: an exact line search counts as many single evaluations as its
time is worth, measured on the set and printed, unless ``--line-cost`` says otherwise) and
at each wall-clock budget. Tables print the mean +- sd of the train and test metric; plots of the
anytime curves and the JSON of every comparison go to ``--out``.

Settings, so that the budget is what binds:
- dfrank's restarting strategies get restarts at an evaluation budget (split evenly
  among them): fdsa max(10, budget / 250), ca about 250 line searches each, max(1, budget
  / (250 line cost)) (max(10, budget / 250) when a line search counts one); both get
  unbounded restarts at a time budget; pso and random search are unbounded (the budget
  stops them); the smoothed-metric baselines keep their defaults and stop on their own.
- External optimizers keep their library defaults (one run; Nelder-Mead and Powell may
  converge before the budget); at a time budget they restart until the time is spent
  (optuna and nevergrad get one long run instead, since their models carry over).
- A run at an evaluation budget is also capped at ``--cap`` seconds (optuna's TPE slows
  down with the number of trials); the "evals" column shows where a capped run stopped.
- With ``--n-jobs 2`` two runs share the machine's two cores, one core each (joblib gives
  each worker one numba thread), the same for every strategy.
- grid is left out: a simplex grid over 46 coordinates has C(K + 45, 45) points, so any
  budget here sees only its first corner.
"""

import argparse
import math
import os
import sys

import numpy as np


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, load_cell, load_warning, measure,  # noqa: E402
                     shared_path, table)

import dfrank  # noqa: E402
from dfrank import strategies  # noqa: E402
from dfrank.objectives.objective import LinearObjective, line_search_cost  # noqa: E402

_OH, _MQ = "ohsumed-letor3/QueryLevelNorm/Fold1", "mq2008-letor4/Fold1"
DATASETS = {   # name: (train file, test file, metric)
    "OHSUMED Fold1": (f"{_OH}/train.txt.gz", f"{_OH}/test.txt.gz", "ndcg@10"),
    "MQ2008 Fold1": (f"{_MQ}/train.txt.gz", f"{_MQ}/test.txt.gz", "map"),
    "MQ2008 Fold1 NDCG": (f"{_MQ}/train.txt.gz", f"{_MQ}/test.txt.gz", "ndcg@10"),
    "LightGBM example": ("lightgbm-lambdarank/rank.train.gz",
                         "lightgbm-lambdarank/rank.test.gz", "ndcg@10"),
}
OURS = ["es", "ca", "fdsa", "pso", "random", "approx_ndcg", "approx_ap", "smooth_ndcg",
        "smooth_ap"]
EXTERNAL = ["scipy:nelder-mead", "scipy:powell", "scipy:differential_evolution", "cma:es",
            "nevergrad:NGOpt", "optuna:tpe", "optuna:cmaes"]
UNBOUNDED = 10 ** 6


def options_at(name, budget=None, line_cost=1):
    """Settings of ``name`` at an evaluation budget (or at a time budget when None)."""
    if name == "ca":   # about 250 line searches a restart
        return {"restarts": UNBOUNDED if budget is None else
                max(10 if line_cost == 1 else 1, budget // (250 * line_cost))}
    if name == "fdsa":
        return {"restarts": UNBOUNDED if budget is None else max(10, budget // 250)}
    if name == "es":   # one IPOP run to its last restart; at a time budget, more runs
        return {"restarts": UNBOUNDED if budget is None else 1, "evals": None}
    if name == "pso":
        return {"iterations": UNBOUNDED}
    if name == "random":
        return {"n_samples": UNBOUNDED * 1000}
    if budget is None and name.startswith("optuna:"):
        return {"n_trials": UNBOUNDED}
    if budget is None and name.startswith("nevergrad:"):
        return {"max_evals": 100_000}   # NGOpt picks its algorithm from this
    if budget is None and name in EXTERNAL:
        return {"restarts": UNBOUNDED}
    return {}


def run_all(train, test, metric, names, seeds, budget, seconds, n_jobs, cap, line_cost):
    specs = [(n, options_at(n, budget, line_cost)) for n in names]
    return dfrank.compare(train, specs, seeds=range(seeds), budget=budget,
                          max_seconds=seconds if budget is None else cap, metric=metric,
                          test=test, n_jobs=n_jobs,
                          line_cost=line_cost if budget is not None else 1)


def measured_line_cost(train, metric):
    """Single evaluations an exact line search is worth in time on this set (median of
    three measurements, rounded up), with the load it was measured under."""
    obj = LinearObjective(train, metric)
    with measure() as m:
        cost = float(np.median([line_search_cost(obj, seed=i) for i in range(3)]))
    return math.ceil(cost), cost, m.timing


def report(cmp, title, names):
    rows = []
    for r in cmp.summary_rows():
        sig = cmp.significance.get(r["strategy"])
        mark = "best" if sig is None else f"{sig.p_value:.3f}" + ("*" if sig.p_value < .05
                                                                    else "")
        capped = sum(run.status == "time" for run in cmp.runs_of(r["strategy"]))
        if "train" not in r:
            rows.append([r["strategy"], "nan (no run evaluated anything)"] + [""] * 6)
            continue
        rows.append([r["strategy"] + ("" if r["strategy"] in OURS else " (ext)"),
                     f"{r['train']:.4f} ± {r['train_sd']:.4f}"
                     + (f" ({r['failed']} failed)" if r["failed"] else ""),
                     f"{r['test']:.4f} ± {r['test_sd']:.4f}", mark,
                     f"{r['evals']:.0f}", f"{r['seconds']:.1f}",
                     "-" if r["evals_to_99"] is None else f"{r['evals_to_99']:.0f}"
                     f" ({r['reached_99']}/{r['runs']})",
                     f"{capped}" if cmp.budget is not None else ""])
    rows.sort(key=lambda x: -float(x[1].split()[0]) if x[1][0] != "n" else 0.0)
    print(f"\n{title}")
    print(table(rows, ["strategy", "train", "test", "p vs best test", "evals", "s",
                       "evals to 99%", "capped"]))
    med = {s: float(np.median([r.train for r in cmp.runs_of(s)])) if cmp.runs_of(s)
           else float("nan") for s in names}
    ours = max((s for s in names if s in OURS), key=lambda s: med[s], default=None)
    ext = [s for s in names if s not in OURS]
    if ours is not None and ext:
        best_ext = max(ext, key=lambda s: med[s])
        verdict = "at least as high as" if med[ours] >= med[best_ext] else "LOWER than"
        print(f"median train: dfrank's best ({ours} {med[ours]:.4f}) is {verdict} the best "
              f"external optimizer's ({best_ext} {med[best_ext]:.4f})")
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budgets", default="500,2000,10000", help="evaluation budgets")
    ap.add_argument("--seconds", default="5,20", help="wall-clock budgets")
    ap.add_argument("--datasets", default="OHSUMED Fold1,MQ2008 Fold1",
                    help=f"comma-separated, of: {', '.join(DATASETS)}")
    ap.add_argument("--strategies", default=",".join(OURS + EXTERNAL))
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cap", type=float, default=120.0,
                    help="seconds cap of a run at an evaluation budget (default 120)")
    ap.add_argument("--out", default="bench_out", help="directory for plots and JSON")
    ap.add_argument("--line-cost", default="measured",
                    help="evaluations an exact line search counts at an evaluation budget: "
                         "'measured' (what its time is worth on the set) or an int")
    args = ap.parse_args()
    print(load_warning())
    available = set(strategies.available())
    names = [n for n in args.strategies.split(",") if n]
    missing = [n for n in names if n not in available]
    if missing:
        print(f"not installed (pip install 'dfrank[compare]'): {', '.join(missing)}")
    names = [n for n in names if n in available]
    os.makedirs(args.out, exist_ok=True)
    budgets = [("evals", int(b)) for b in args.budgets.split(",") if b] + \
              [("seconds", float(s)) for s in args.seconds.split(",") if s]
    for ds in args.datasets.split(","):
        train_file, test_file, metric = DATASETS[ds]
        paths = [shared_path(train_file), shared_path(test_file)]
        if None in paths:
            print(f"{ds}: ../shared/data absent, skipped")
            continue
        train, test = (dfrank.load_svmlight(p) for p in paths)
        # compile every kernel once, outside the timed runs
        dfrank.compare(train, [(n, {}) for n in names], seeds=[0], budget=30,
                       metric=metric, test=test)
        if args.line_cost == "measured":
            line_cost, raw, t = measured_line_cost(train, metric)
            print(f"\n{ds}, {metric}: an exact line search takes the time of {raw:.1f} "
                  f"single evaluations; it counts {line_cost} at an evaluation budget "
                  f"({LOAD_HEADER} {load_cell(t)})")
        else:
            line_cost = int(args.line_cost)
        grid = {}
        for kind, b in budgets:
            with measure() as m:
                cmp = run_all(train, test, metric, names, args.seeds,
                              b if kind == "evals" else None,
                              b if kind == "seconds" else None, args.n_jobs, args.cap,
                              line_cost)
            label = f"{b} evaluations" if kind == "evals" else f"{b:g} s"
            tag = f"{ds.lower().replace(' ', '_')}_{kind}_{b:g}"
            grid[label] = report(cmp, f"{ds}, {metric}, {label} per run, {args.seeds} seeds "
                                      f"({m.timing:.0f} s; {LOAD_HEADER} "
                                      f"{load_cell(m.timing)})", names)
            cmp.to_json(os.path.join(args.out, f"compare_{tag}.json"))
            try:
                cmp.plot(os.path.join(args.out, f"compare_{tag}.png"),
                         title=f"{ds}: best train {metric}, {label} per run "
                               f"(median of {args.seeds} seeds, quartile bands)")
            except ImportError as e:
                print(f"no plot: {e}")
        labels = list(grid)
        rows = [[n + ("" if n in OURS else " (ext)")] + [f"{grid[l][n]:.4f}" for l in labels]
                for n in names]
        print(f"\n{ds}, {metric}: median train value over the seeds, per budget")
        print(table(rows, ["strategy"] + labels))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
