"""How `dfrank fit`'s default strategy was chosen: on validation queries only, never test.

    python benchmarks/choose_fit_default.py [--seeds 5] [--metric ndcg@10] [--sets OHSUMED]

A candidate that chooses among its runs by validation value (`maximize(valid=)`, `dfrank
fit --strategy es --valid`) must be judged on validation queries that chose nothing: every
fold's vali.txt is split into two halves by query (alternate queries); a rule chooses on
one half and the chosen ranker is scored on the other, then the halves swap. A row is the
median over the seeds of the mean over 5 folds x 2 halves (OHSUMED QueryLevelNorm and
MQ2008, ../shared/data).

Each configuration is trained once per seed and fold on train.txt, and each rule picks
among its runs for either half (equal values: the higher training value, then the earlier
run, as `maximize` breaks them):

- "best on vali" (the rows named by a configuration alone): what `maximize(valid=)` does;
- "best on train": what `maximize` does without ``valid``;
- "all runs averaged", "3 best on vali averaged": one linear ranker whose direction is the
  mean of the runs' unit standardized weights (w * feature_scale / norm);
- a portfolio keeps whichever of its two members' chosen rankers is better on the choosing
  half;
- "trained on train + the choosing half": es trained on both, best on train (the
  validation queries train instead of choose; fitted once per half).

The paired difference to the default is the mean over seeds, folds and halves of the
candidate's value less the default's on the same half. The last columns are the median
time of one fit (2 cores), over every fold and over fold 1 only. ``--only`` trains a subset
of the configurations (and the default's, for the pairing). Progress goes to stderr.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LETOR_FOLDS, LOAD_HEADER, LOAD_NOTE, letor_folds,  # noqa: E402
                     load_cell, load_warning, measure, table)

import dfrank  # noqa: E402
from dfrank.metrics.evaluation import evaluate_linear  # noqa: E402
from dfrank.objectives.surrogates import feature_scale, mean_direction  # noqa: E402

ES = "es, 10 runs of 4,000"
SMOOTHED = "es smoothed by 8 perturbations, 10 runs of 16,000"
CONFIGS = {   # name: (strategy, options)
    "ca, 10 restarts": ("ca", dict(restarts=10)),
    "es, 5 runs of 1,000": ("es", dict(restarts=5, evals=1000)),
    "es, 10 runs of 1,000": ("es", dict(restarts=10, evals=1000)),
    ES: ("es", dict(restarts=10, evals=4000)),
    "es, 20 runs of 4,000": ("es", dict(restarts=20, evals=4000)),
    "es, 10 runs of 8,000": ("es", dict(restarts=10, evals=8000)),
    SMOOTHED: ("es", dict(restarts=10, evals=16000, smoothing=8)),
    "es, 10 runs of 2,500": ("es", dict(restarts=10, evals=2500)),
    "es smoothed by 4 perturbations, 10 runs of 2,500": ("es", dict(restarts=10, evals=2500,
                                                                     smoothing=4)),
    "es smoothed by 8 perturbations, 10 runs of 2,500": ("es", dict(restarts=10, evals=2500,
                                                                     smoothing=8)),
    "es smoothed by 4 perturbations, 5 runs of 5,000": ("es", dict(restarts=5, evals=5000,
                                                                    smoothing=4)),
}
PORTFOLIOS = {"portfolio: ca 10 + es 5": ("ca, 10 restarts", "es, 5 runs of 1,000"),
              "portfolio: ca 10 + es 10 of 1,000": ("ca, 10 restarts",
                                                    "es, 10 runs of 1,000"),
              "portfolio: ca 10 + es 10 of 4,000": ("ca, 10 restarts", ES)}
RULES = {   # row: (configuration, rule)
    f"{ES}, best on train": (ES, "train"),
    f"{ES}, all runs averaged": (ES, "average"),
    f"{ES}, 3 best on vali averaged": (ES, "top3"),
    f"{SMOOTHED}, all runs averaged (the default)": (SMOOTHED, "average"),
    "es smoothed by 4 perturbations, 10 runs of 2,500, all runs averaged":
        ("es smoothed by 4 perturbations, 10 runs of 2,500", "average"),
    "es smoothed by 8 perturbations, 10 runs of 2,500, all runs averaged":
        ("es smoothed by 8 perturbations, 10 runs of 2,500", "average"),
    "es smoothed by 4 perturbations, 5 runs of 5,000, all runs averaged":
        ("es smoothed by 4 perturbations, 5 runs of 5,000", "average"),
}
DEFAULT_ROW = f"{SMOOTHED}, all runs averaged (the default)"
POOLED = f"{ES}, trained on train + the choosing half"


def halves(data):
    q = np.arange(data.n_queries)
    return data.subset(q[q % 2 == 0]), data.subset(q[q % 2 == 1])


def joined(a, b):
    """The queries of ``a`` then those of ``b`` as one RankingData."""
    return dfrank.RankingData(np.vstack([a.X, b.X]), np.concatenate([a.y, b.y]),
                              np.concatenate([a.qptr, b.qptr[1:] + a.n_docs]),
                              np.concatenate([a.qids, b.qids]))


class Runs:
    """The runs of one fit: weights, training values, and values on both vali halves."""

    def __init__(self, result, train, vali, metric):
        space = dfrank.Simplex(train.n_features)
        self.weights = [space.to_weights(r.point) for r in result.restarts]
        self.train = [r.value for r in result.restarts]
        self.vali = [[evaluate_linear(w, v, metric) for w in self.weights] for v in vali]
        self.scale = feature_scale(train)

    def chosen(self, h):
        """Index of the run `maximize` keeps when half ``h`` is its validation data."""
        return max(range(len(self.train)), key=lambda i: (self.vali[h][i], self.train[i], -i))

    def averaged(self, runs):
        """Weights whose direction is the mean unit standardized weights of ``runs``."""
        return mean_direction([self.weights[i] for i in runs], self.scale)


def rule_weights(runs, rule, h):
    n = len(runs.train)
    if rule == "train":
        return runs.weights[max(range(n), key=lambda i: (runs.train[i], -i))]
    if rule == "average":
        return runs.averaged(range(n))
    top = sorted(range(n), key=lambda i: (-runs.vali[h][i], -runs.train[i], i))[:3]
    return runs.averaged(top)


def fit(train, metric, strategy, seed, options, seconds):
    t = time.perf_counter()
    result = dfrank.maximize(train, metric, strategy, seed=seed, **options)
    seconds.append(time.perf_counter() - t)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--sets", default=",".join(LETOR_FOLDS),
                    help="comma-separated LETOR sets (default: all)")
    ap.add_argument("--only", help="'|'-separated configurations to train (default: all); "
                                   "the default's configuration is always trained, for the "
                                   "paired differences")
    args = ap.parse_args()
    print(load_warning())
    metric = args.metric
    configs = CONFIGS
    if args.only:
        keep = set(args.only.split("|")) | {SMOOTHED}
        unknown = keep - set(CONFIGS)
        if unknown:
            raise SystemExit(f"unknown configurations {sorted(unknown)}")
        configs = {k: v for k, v in CONFIGS.items() if k in keep}
    portfolios = {k: m for k, m in PORTFOLIOS.items() if set(m) <= set(configs)}
    rules = {k: r for k, r in RULES.items() if r[0] in configs}
    pooled = [POOLED] if ES in configs else []
    rows_of = [*configs, *portfolios, *rules, *pooled]
    for name in args.sets.split(","):
        folds = [(train, halves(valid)) for _, (train, valid) in letor_folds(name)]
        if not folds:
            print(f"{name}: skipped (../shared/data absent)")
            continue
        judged = {k: np.zeros((args.seeds, len(folds), 2)) for k in rows_of}
        seconds = {k: [] for k in rows_of}
        with measure() as m:
            for seed in range(args.seeds):
                for i, (train, vali) in enumerate(folds):
                    runs = {k: Runs(fit(train, metric, s, seed, o, seconds[k]), train, vali,
                                    metric)
                            for k, (s, o) in configs.items()}
                    for h in (0, 1):
                        judge = vali[1 - h]
                        chosen = {k: r.chosen(h) for k, r in runs.items()}
                        for k, r in runs.items():
                            judged[k][seed, i, h] = r.vali[1 - h][chosen[k]]
                        for k, members in portfolios.items():
                            best = max(members, key=lambda x: runs[x].vali[h][chosen[x]])
                            judged[k][seed, i, h] = judged[best][seed, i, h]
                        for k, (config, rule) in rules.items():
                            w = rule_weights(runs[config], rule, h)
                            judged[k][seed, i, h] = evaluate_linear(w, judge, metric)
                        if pooled:
                            s, o = CONFIGS[ES]
                            both = joined(train, vali[h])
                            fitted = fit(both, metric, s, seed, o, seconds[POOLED])
                            judged[POOLED][seed, i, h] = fitted.ranker.evaluate(judge, metric)
                    print(f"  {name}: seed {seed}, fold {i + 1} done", file=sys.stderr,
                          flush=True)
        for k, members in portfolios.items():
            seconds[k] = [a + b for a, b in zip(*(seconds[x] for x in members))]
        for k, (config, _) in rules.items():
            seconds[k] = seconds[config]
        base = judged[DEFAULT_ROW]
        rows = [[k, f"{np.median(v.mean(axis=(1, 2))):.4f}",
                 f"{np.mean(v - base):+.4f}"]
                + [f"{x:.4f}" for x in np.median(v.mean(axis=2), axis=0)]
                + [f"{statistics.median(seconds[k]):.1f}",
                   f"{statistics.median(seconds[k][::len(folds)]):.1f}"]
                for k, v in judged.items()]
        print(f"\n## {name}: {metric} of the chosen ranker on the other half of vali "
              f"({args.seeds} seeds, {m.timing:.0f} s; {LOAD_HEADER} {load_cell(m.timing)})")
        print(table(rows, ["candidate", "median of the mean", "mean paired diff. to the "
                                                              "default"]
                    + [f"fold {i + 1}" for i in range(len(folds))]
                    + ["s per fit", "s per fit, fold 1"]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
