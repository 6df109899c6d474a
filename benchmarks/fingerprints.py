"""Fingerprints of what dfrank computes, to compare two commits bit for bit.

    python benchmarks/fingerprints.py > now.txt
    (in a checkout of another commit, with its dfrank importable)
    python benchmarks/fingerprints.py > then.txt
    diff then.txt now.txt

One line per result: every registered strategy (one name per class and preset) on
ndcg@10 and map with a budget of 150 evaluations on 30 queries of OHSUMED Fold1 (value
as repr, a hash of the weights, evaluations, status); the default fit on all of Fold1;
``fuse`` with 3 folds, plain and signed (weights, value, held-out value, every fold's
weights and first held-out queries, every baseline); ``tune`` with 4 folds and a default
point, with pattern, random and grid (best point, a hash of its per-query values,
held-out value, each fold's point, the paired test's p-value). A strategy that a commit
does not have, or whose package is missing, prints an ERROR line of its own.

The data is ../shared/data's OHSUMED (skipped with a message where it is absent); the
runs and the collection are the tests' generated ones, read from this checkout's tests/.
"""

import hashlib
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import shared_path  # noqa: E402

import dfrank  # noqa: E402
from dfrank import registry  # noqa: E402


def digest(a):
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return hashlib.sha1(a.tobytes()).hexdigest()[:12]


def one_name_per_strategy():
    """The first registered name of each class (and of each preset of a class)."""
    seen, names = set(), []
    every = getattr(registry, "strategy_names", None) or registry.available   # older commits
    get = getattr(registry, "get_strategy", None) or registry.get
    for name in sorted(set(every())):
        obj = get(name)
        key = (obj, None) if isinstance(obj, type) else (type(obj), repr(vars(obj)))
        if key not in seen:
            seen.add(key)
            names.append(name)
    return names


def strategies(data):
    small = data.subset(np.arange(30))
    for name in one_name_per_strategy():
        for metric in ("ndcg@10", "map"):
            try:
                r = dfrank.maximize(small, metric, name, seed=1, budget=150)
                print(name, metric, repr(r.value), digest(r.weights), r.n_evals, r.status,
                      flush=True)
            except Exception as e:   # a missing package, a strategy of another commit
                print(name, metric, "ERROR", type(e).__name__, str(e)[:80], flush=True)
    r = dfrank.maximize(data, "ndcg@10", seed=0)
    print("default-fit", repr(r.value), digest(r.weights), r.strategy, flush=True)


def fusions():
    try:
        from tests.inputs import make_runs
    except ImportError:   # a commit whose tests kept it in test_fusion
        from tests.test_fusion import make_runs

    qrels, runs = make_runs()
    for signed in (False, True):
        f = dfrank.fuse(qrels, runs, "map", folds=3, seed=2, signed=signed)
        fw = f.fold_weights
        print("fuse", signed, repr(f.value), digest(list(f.weights.values())),
              repr(f.cv_value), digest([v for x in fw for v in x["weights"].values()]),
              [x["held_out"][:3] for x in fw],
              {k: repr(b["value"]) for k, b in f.baselines.items()}, flush=True)


def tunes():
    from dfrank import ir
    from dfrank.tuning.tuner import tune
    try:
        from tests.inputs import small_collection
    except ImportError:   # a commit whose tests kept it in test_tune
        from tests.test_tune import small_collection

    engine = ir.Engine(*small_collection())
    for strategy in ("pattern", "random", "grid"):
        t = tune((engine, "bm25"), {"k1": (0.1, 3.0), "b": (0.0, 1.0)}, metric="map",
                 budget=25, seed=2, folds=4, default={"k1": 1.2, "b": 0.75},
                 strategy=strategy)
        per_fold = t.cv.per_fold if hasattr(t, "cv") else t.folds   # before: a list
        pq = t.per_query.values() if isinstance(t.per_query, dict) else t.per_query
        print("tune", strategy, t.best_params, repr(t.value), digest(list(pq)),
              repr(t.cv_value), [f["params"] for f in per_fold], repr(t.cv_test.p_value),
              flush=True)


def main():
    warnings.simplefilter("ignore")
    sys.path.insert(0, os.path.dirname(HERE))   # tests/ of this checkout
    path = shared_path("ohsumed-letor3", "QueryLevelNorm", "Fold1", "train.txt.gz")
    if path is None:
        print("OHSUMED is not in ../shared/data: the strategies' lines are left out",
              file=sys.stderr)
    else:
        strategies(dfrank.load_svmlight(path))
    fusions()
    tunes()


if __name__ == "__main__":
    main()
