"""5-fold cross-validation on LETOR OHSUMED (QueryLevelNorm) and MQ2008.

    python examples/letor_cv.py [--data ../shared/data] [--metric ndcg@10]
                                [--strategies ca,fdsa,pso,...] [--restarts 5]

For every fold: train on train.txt (maximizing --metric directly), keep the restart with
the best validation metric on vali.txt, report test NDCG@1,3,5,10, P@1,3,5,10 and MAP.
Per-fold and averaged tables are printed for every strategy, next to the published numbers
of the literature for the same folds (LETOR 3.0 baselines; Qin, Liu & Li 2010 for
ApproxNDCG; Alejo et al. 2010 for RankPSO). The smoothed-metric strategies (approx_*,
smooth_*) climb their surrogate; like the others they are judged by the true metric.
Test metrics use dfrank's default pessimistic tie policy and LETOR's 2^rel - 1 gain.
"""

import argparse
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
DEFAULT_STRATEGIES = ["ca", "fdsa", "pso", "random", "approx_ndcg", "approx_ap", "smooth_ndcg",
                      "smooth_ap"]
OPTIONS = {"ca": dict(restarts=5), "coordinate_ascent": dict(restarts=5),
           "fdsa": dict(restarts=5), "steepest_ascent": dict(restarts=5),
           "pso": dict(), "random": dict()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder holding the LETOR sets")
    ap.add_argument("--metric", default="ndcg@10", help="metric maximized on train")
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                    help="comma-separated strategy names (default: %(default)s)")
    ap.add_argument("--restarts", type=int, help="override the strategies' restarts")
    ap.add_argument("--sets", default="OHSUMED,MQ2008")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-fold", action="store_true", help="print per-fold tables")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"letor_cv: no data folder {args.data}; pass --data with the folder that "
                 "holds ohsumed-letor3/ and mq2008-letor4/")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for name in [s.strip() for s in args.sets.split(",")]:
        pattern = SETS[name]
        print(f"\n# {name}: maximize {args.metric} on train, restart chosen on vali, "
              "test reported", flush=True)
        summary = []
        for strat in strategies:
            opts = dict(OPTIONS.get(strat, {}))
            if args.restarts is not None:
                opts["restarts"] = args.restarts
            per_fold, secs = [], 0.0
            for f in range(1, 6):
                paths = [os.path.join(args.data, pattern.format(f=f, p=p))
                         for p in ("train", "vali", "test")]
                if not all(os.path.exists(p) for p in paths):
                    sys.exit(f"letor_cv: missing {paths}")
                train, vali, test = (dfrank.load_svmlight(p) for p in paths)
                t = time.perf_counter()
                r = dfrank.maximize(train, args.metric, strat, valid=vali, seed=args.seed,
                                    **opts)
                secs += time.perf_counter() - t
                per_fold.append(r.ranker.evaluate(test, REPORT))
            if args.per_fold:
                rows = [[f"fold {i + 1}"] + [f"{v[m]:.4f}" for m in REPORT]
                        for i, v in enumerate(per_fold)]
                print(f"\n{strat}:")
                print(format_table(rows, [""] + REPORT))
            mean = {m: np.mean([v[m] for v in per_fold]) for m in REPORT}
            summary.append([f"dfrank {strat}"] + [f"{mean[m]:.4f}" for m in REPORT] +
                           [f"{secs / 5:.1f} s"])
            print(f"  {strat}: done ({secs / 5:.1f} s per fold)", flush=True)
        for label, vals in PUBLISHED.get(name, {}).items():
            summary.append([label] + [f"{vals[m]:.4f}" if m in vals else "" for m in REPORT]
                           + [""])
        print(f"\n{name}: test, mean of 5 folds")
        print(format_table(summary, ["method"] + REPORT + ["train time"]))


if __name__ == "__main__":
    main()
