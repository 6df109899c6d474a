"""Today's default `dfrank fit` against LightGBM's LambdaMART, with its defaults and tuned
(issue #51), on OHSUMED and MQ2008 (5 folds each) and LightGBM's own ranking example.

    python benchmarks/bench_lambdamart.py [--sets OHSUMED,MQ2008,LightGBM]

For each fold: train, validation and test queries (the LightGBM example has no validation
file: every fifth of its 201 training queries validates, the rest train, for every ranker).

* dfrank fit: ``maximize(train, "ndcg@10", valid=vali, seed=0)``, dfrank fit's default
  strategy (``auto``), nothing set by hand;
* LambdaMART, defaults: ``LGBMRanker()`` on train (100 trees, no early stopping);
* LambdaMART, tuned: ``num_leaves`` {15, 31, 63} x ``learning_rate`` {0.05, 0.1} x
  ``min_child_samples`` {5, 20, 50}, each up to 1,000 trees with early stopping after 50
  rounds on the validation queries' NDCG@10; the setting with the best validation NDCG@10
  (at its best iteration) is kept.

Test NDCG@10 and MAP (dfrank's: gain 2^l - 1, pessimistic ties), the mean over the folds'
test queries pooled; the paired per-query differences of dfrank fit against each
LambdaMART with a randomization test (dfrank.significance: 10,000 sign patterns, seeded, a
95% bootstrap interval); fit time per fold (the tuned one: its whole grid). LightGBM runs
on every core.
"""

import argparse
import itertools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_now, shared_path, table  # noqa: E402

import dfrank  # noqa: E402

GRID = {"num_leaves": (15, 31, 63), "learning_rate": (0.05, 0.1),
        "min_child_samples": (5, 20, 50)}
METRICS = ("ndcg@10", "map")
SETS = {"OHSUMED": "ohsumed-letor3/QueryLevelNorm/Fold{f}/{p}.txt.gz",
        "MQ2008": "mq2008-letor4/Fold{f}/{p}.txt.gz"}


def folds(name):
    """[(fold label, train, valid, test)] of a set."""
    if name == "LightGBM":
        base = shared_path("lightgbm-lambdarank")
        full = dfrank.load_svmlight(os.path.join(base, "rank.train.gz"))
        test = dfrank.load_svmlight(os.path.join(base, "rank.test.gz"),
                                    n_features=full.n_features)
        q = np.arange(full.n_queries)
        return [("example", full.subset(q[q % 5 != 4]), full.subset(q[q % 5 == 4]), test)]
    out = []
    for f in range(1, 6):
        parts = [shared_path(SETS[name].format(f=f, p=p)) for p in ("train", "vali", "test")]
        train = dfrank.load_svmlight(parts[0])
        out.append((f"Fold{f}", train, *(dfrank.load_svmlight(p, n_features=train.n_features)
                                         for p in parts[1:])))
    return out


def _lgb_fit(model, train, valid=None):
    import inspect

    import lightgbm as lgb

    kw = {}
    if valid is not None:
        if "eval_X" in inspect.signature(model.fit).parameters:   # lightgbm >= 4.7
            kw = dict(eval_X=(valid.X,), eval_y=(valid.y,))
        else:
            kw = dict(eval_set=[(valid.X, valid.y)])
        kw.update(eval_group=[np.diff(valid.qptr)], eval_at=[10],
                  callbacks=[lgb.early_stopping(50, verbose=False)])
    model.fit(train.X, train.y, group=np.diff(train.qptr), **kw)
    return model


def lambdamart_default(train, valid):
    import lightgbm as lgb

    return _lgb_fit(lgb.LGBMRanker(random_state=0, verbose=-1), train)


def lambdamart_tuned(train, valid):
    """The grid, each setting early-stopped on ``valid``; the best on ``valid``."""
    import lightgbm as lgb

    best, best_value = None, -np.inf
    for values in itertools.product(*GRID.values()):
        params = dict(zip(GRID, values))
        model = _lgb_fit(lgb.LGBMRanker(n_estimators=1000, random_state=0, verbose=-1,
                                        **params), train, valid)
        value = model.best_score_["valid_0"]["ndcg@10"]
        if value > best_value:
            best, best_value = model, value
    return best


def per_query(scores, data):
    return {m: dfrank.evaluate(scores, data, m, per_query=True) for m in METRICS}


def run_set(name):
    """Per-query test values of each ranker over the set's folds, and fit times."""
    values = {k: {m: [] for m in METRICS} for k in ("fit", "default", "tuned")}
    seconds = {k: [] for k in values}
    others = []
    for label, train, valid, test in folds(name):
        before = load_now()
        t = time.perf_counter()
        res = dfrank.maximize(train, "ndcg@10", valid=valid, seed=0)
        seconds["fit"].append(time.perf_counter() - t)
        got = {"fit": res.ranker.predict(test)}
        for key, learn in (("default", lambdamart_default), ("tuned", lambdamart_tuned)):
            t = time.perf_counter()
            model = learn(train, valid)
            seconds[key].append(time.perf_counter() - t)
            got[key] = model.predict(test.X)
        others.append(before.others)
        for key, scores in got.items():
            for m, v in per_query(scores, test).items():
                values[key][m].append(v)
        print(f"  {name} {label}: dfrank fit ({res.strategy}) "
              + ", ".join(f"{k} {np.mean(per_query(s, test)['ndcg@10']):.4f}"
                          for k, s in got.items()), file=sys.stderr, flush=True)
    pooled = {k: {m: np.concatenate(v) for m, v in d.items()} for k, d in values.items()}
    return pooled, seconds, max(o for o in others if o is not None)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="OHSUMED,MQ2008,LightGBM")
    args = ap.parse_args()
    if shared_path() is None:
        sys.exit("needs ../shared/data")
    print(f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    means, tests = [], []
    for name in args.sets.split(","):
        pooled, seconds, others = run_set(name)
        n = len(pooled["fit"]["ndcg@10"])
        for key, label in (("fit", "dfrank fit (default)"),
                           ("default", "LambdaMART, defaults"),
                           ("tuned", "LambdaMART, tuned on validation")):
            means.append([name, label] + [f"{pooled[key][m].mean():.4f}" for m in METRICS]
                         + [f"{np.mean(seconds[key]):.1f} s", f"{others:.2f}"])
        for key, label in (("default", "defaults"), ("tuned", "tuned")):
            for m in METRICS:
                r = dfrank.significance(pooled["fit"][m], pooled[key][m])
                tests.append([name, f"fit - LambdaMART {label}", m, str(n),
                              f"{r.mean_difference:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}]",
                              f"{r.p_value:.3g}"])
    print(table(means, ["set", "ranker", "test NDCG@10", "test MAP", "fit time (per fold)",
                        "others"]))
    print()
    print(table(tests, ["set", "difference", "metric", "queries", "mean [95% interval]", "p"]))


if __name__ == "__main__":
    main()
