"""5-fold cross-validation on LETOR OHSUMED (QueryLevelNorm) and MQ2008.

    python examples/letor_cv.py [--data ../shared/data] [--metric ndcg@10]
                                [--strategies fit,ca,es,...] [--seeds 5] [--lambdamart]

For every fold: train on train.txt (maximizing --metric directly), keep the restart with
the best validation metric on vali.txt, report test NDCG@1,3,5,10, P@1,3,5,10 and MAP.
Each row is the median over the seeds of the mean over the 5 folds. The row "fit" is
what ``dfrank fit train.txt --valid vali.txt`` does with nothing set by hand (the
``smoothed_es`` strategy: 5 CMA-ES runs of 5,000 evaluations on the metric smoothed by 4
perturbations, averaged into one ranker). The rows sit next to the published numbers of
the literature for the same folds (LETOR 3.0 baselines; Qin, Liu & Li 2010 for
ApproxNDCG; Alejo et al. 2010 for RankPSO) and, with --lambdamart, LightGBM's
LambdaMART on the same folds (default parameters, early stopping on vali.txt as a user
would; ``pip install lightgbm``). The smoothed-metric strategies (approx_*, smooth_*)
climb their surrogate; like the others they are judged by the true metric. Test metrics
use dfrank's default pessimistic tie policy and LETOR's 2^rel - 1 gain. Published numbers
on LETOR's folds were computed by LETOR's evaluation tools, whose NDCG discounts
differently (ranks 1 and 2 undiscounted, then 1/log2(rank)), whose ties keep the file's
order, and which count NDCG@k of a query with fewer than k documents as 0 (half of
MQ2008's queries); so each set gets a second table, every row scored as its release's tool
scores (``dfrank.evaluate_letor``: 3.0 for OHSUMED, 4.0 for MQ2008), and the published rows
sit there. Last, each method is compared with the first one query by query (a paired
randomization test on the test queries of the 5 folds together, each query's --metric
averaged over the seeds), which says how large a difference these few queries can tell
apart.
"""

import argparse
import inspect
import os
import sys
import time

import numpy as np

import dfrank
from dfrank.text import format_table

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
SETS = {"OHSUMED": "ohsumed-letor3/QueryLevelNorm/Fold{f}/{p}.txt.gz",
        "MQ2008": "mq2008-letor4/Fold{f}/{p}.txt.gz"}
TOOL = {"OHSUMED": "3.0", "MQ2008": "4.0"}   # the LETOR release of each set
REPORT = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@1", "p@3", "p@5", "p@10", "map"]
PUBLISHED = {  # OHSUMED test averages over the 5 folds
    "OHSUMED": {
        "RankSVM (LETOR 3.0)": {"ndcg@1": .4958, "ndcg@3": .4207, "ndcg@5": .4164,
                                "ndcg@10": .4140},
        "ListNet (LETOR 3.0)": {"ndcg@1": .5326, "ndcg@3": .4732, "ndcg@5": .4432,
                                "ndcg@10": .4410},
        "AdaRank-NDCG (LETOR 3.0)": {"ndcg@1": .5330, "ndcg@3": .4790, "ndcg@5": .4673,
                                     "ndcg@10": .4496},
        "ApproxNDCG (Qin et al. 2010)": {"ndcg@1": .5771, "ndcg@3": .5037, "ndcg@5": .4794,
                                         "ndcg@10": .4620},
        "RankPSO (Alejo et al. 2010)": {"p@1": .672, "p@5": .579, "p@10": .506},
    },
}
DEFAULT_STRATEGIES = ["fit", "ca", "fdsa", "pso", "random", "approx_ndcg", "approx_ap",
                      "smooth_ndcg", "smooth_ap"]
OPTIONS = {"ca": dict(restarts=5), "coordinate_ascent": dict(restarts=5),
           "fdsa": dict(restarts=5), "steepest_ascent": dict(restarts=5),
           "pso": dict(), "random": dict()}


def fit(strategy, train, vali, metric, seed, restarts):
    """The ranker of one fold, and its training seconds."""
    opts = dict(OPTIONS.get(strategy, {}))
    if restarts is not None:
        opts["restarts"] = restarts
    t = time.perf_counter()
    # "fit": dfrank fit's defaults (the smoothed_es strategy), nothing set by hand
    name = "smoothed_es" if strategy == "fit" else strategy
    r = dfrank.maximize(train, metric, name, valid=vali, seed=seed, **opts)
    return r.ranker.predict, time.perf_counter() - t


def lambdamart(train, vali, metric, seed):
    """LightGBM's LambdaMART with its defaults, early stopping on the validation queries."""
    import lightgbm as lgb

    k = int(metric.split("@")[1]) if "@" in metric else 10
    model = lgb.LGBMRanker(random_state=seed, verbose=-1, n_jobs=2)
    t = time.perf_counter()
    if "eval_X" in inspect.signature(model.fit).parameters:   # lightgbm >= 4.7
        held_out = dict(eval_X=(vali.X,), eval_y=(vali.y,))
    else:
        held_out = dict(eval_set=[(vali.X, vali.y)])
    model.fit(train.X, train.y, group=np.diff(train.qptr), eval_group=[np.diff(vali.qptr)],
              eval_at=[k], callbacks=[lgb.early_stopping(50, verbose=False)], **held_out)
    return (lambda d: model.predict(d.X)), time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder holding the LETOR sets")
    ap.add_argument("--metric", default="ndcg@10", help="metric maximized on train")
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                    help="comma-separated strategy names, 'fit' for dfrank fit's defaults "
                         "(default: %(default)s)")
    ap.add_argument("--restarts", type=int, help="override the strategies' restarts")
    ap.add_argument("--sets", default="OHSUMED,MQ2008")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1; rows are medians")
    ap.add_argument("--lambdamart", action="store_true",
                    help="add LightGBM's LambdaMART rows (pip install lightgbm)")
    ap.add_argument("--per-fold", action="store_true", help="print per-fold tables")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"letor_cv: no data folder {args.data}; pass --data with the folder that "
                 "holds ohsumed-letor3/ and mq2008-letor4/")
    methods = [s.strip() for s in args.strategies.split(",") if s.strip()]
    if args.lambdamart:
        methods.append("lambdamart")
    for name in [s.strip() for s in args.sets.split(",")]:
        pattern = SETS[name]
        print(f"\n# {name}: maximize {args.metric} on train, restart chosen on vali, "
              f"test reported; median of {args.seeds} seeds of the 5-fold mean", flush=True)
        folds = []
        for f in range(1, 6):
            paths = [os.path.join(args.data, pattern.format(f=f, p=p))
                     for p in ("train", "vali", "test")]
            if not all(os.path.exists(p) for p in paths):
                sys.exit(f"letor_cv: missing {paths}")
            folds.append([dfrank.load_svmlight(p) for p in paths])
        summary, as_tool, per_query = [], [], {}
        for method in methods:
            by_seed, secs, queries = [], [], []
            for seed in range(args.seeds):
                per_fold, seed_queries = [], []
                for train, vali, test in folds:
                    if method == "lambdamart":
                        score, s = lambdamart(train, vali, args.metric, seed)
                    else:
                        score, s = fit(method, train, vali, args.metric, seed, args.restarts)
                    scores = score(test)
                    values = dfrank.evaluate(scores, test, REPORT)
                    tool = dfrank.evaluate_letor(scores, test, version=TOOL[name])
                    values.update({f"tool {m}": tool[m] for m in REPORT})
                    per_fold.append(values)
                    seed_queries.append(dfrank.evaluate(scores, test, args.metric,
                                                        per_query=True))
                    secs.append(s)
                by_seed.append({m: np.mean([v[m] for v in per_fold]) for m in per_fold[0]})
                queries.append(np.concatenate(seed_queries))
                if args.per_fold:
                    rows = [[f"fold {i + 1}"] + [f"{v[m]:.4f}" for m in REPORT]
                            for i, v in enumerate(per_fold)]
                    print(f"\n{method}, seed {seed}:")
                    print(format_table(rows, [""] + REPORT))
            med = {m: np.median([v[m] for v in by_seed]) for m in by_seed[0]}
            label = {"fit": "dfrank fit (defaults)", "lambdamart": "LightGBM LambdaMART"}
            row = label.get(method, f"dfrank {method}")
            per_query[row] = np.mean(queries, axis=0)
            took = f"{np.median(secs):.1f} s"
            summary.append([row] + [f"{med[m]:.4f}" for m in REPORT] + [took])
            as_tool.append([row] + [f"{med['tool ' + m]:.4f}" for m in REPORT] + [took])
            print(f"  {method}: done ({took} per fold)", flush=True)
        print(f"\n{name}: test, median over {args.seeds} seeds of the mean of 5 folds")
        print(format_table(summary, ["method"] + REPORT + ["train time"]))
        for label, vals in PUBLISHED.get(name, {}).items():
            as_tool.append([label] + [f"{vals[m]:.4f}" if m in vals else "" for m in REPORT]
                           + [""])
        print(f"\n{name}: the same rankers scored as LETOR {TOOL[name]}'s evaluation tool "
              f"scores (Eval-Score-{TOOL[name]}.pl: its NDCG discount, ties in file order, "
              "short queries' NDCG@k 0), as the published numbers were")
        print(format_table(as_tool, ["method"] + REPORT + ["train time"]))
        print_paired(name, args.metric, per_query)


def print_paired(name, metric, per_query):
    """Each method against the first, query by query: mean difference, its 95% bootstrap
    interval and the randomization test's p-value."""
    (first, a), *others = per_query.items()
    if not others:
        return
    rows = []
    for row, b in others:
        r = dfrank.significance(a, b)
        rows.append([row, f"{r.mean_difference:+.4f}", f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]",
                     f"{r.p_value:.3g}"])
    se = a.std(ddof=1) / np.sqrt(len(a))
    print(f"\n{name}: {first} against each method on the {len(a)} test queries, {metric} "
          f"averaged over the seeds\n(paired randomization test; standard error of "
          f"{first}'s mean: {se:.4f})")
    print(format_table(rows, ["method", f"{first} - method", "95% interval", "p"]))


if __name__ == "__main__":
    main()
