"""The numbers dfrank reports are the numbers a fresh evaluation gives.

For every registered strategy, the metrics {map, ndcg@10, p@5, err@10, mrr} and every tie
policy, on data with duplicate rows (with different labels) and tied scores: the result's
value, its validation value and every value a callback sees equal a fresh ``evaluate`` of
the weights with the same policy, to 1e-12. A (metric, policy) pair the metric does not
define (ERR has no expected-ties form) is refused with a clear error.
"""

import numpy as np
import pytest

import dfrank
from dfrank import strategies
from dfrank.metrics.registry import TIES

METRICS = ["map", "ndcg@10", "p@5", "err@10", "mrr"]
TOL = 1e-12
OPTIONAL = {"cma": "cma", "nevergrad": "nevergrad", "optuna": "optuna"}
FAST = {"coordinate_ascent": {"restarts": 2}, "steepest_ascent": {"restarts": 2},
        "pso": {"swarm_size": 8, "iterations": 6}, "grid": {"resolution": 4},
        "approx_ndcg": {"restarts": 1, "max_iter": 5},
        "approx_ap": {"restarts": 1, "max_iter": 5},
        "smooth_ndcg": {"restarts": 1, "max_iter": 5},
        "smooth_ap": {"restarts": 1, "max_iter": 5}}


def tied_data(n_queries=10, seed=0, n_features=4):
    """Features rounded to halves (many rows tie under any weights), duplicate rows with
    different labels, a one-document query and a query without a relevant document."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 12, size=n_queries)
    sizes[0] = 1
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, n_features)) * 2) / 2
    y = rng.integers(0, 4, size=n).astype(float)
    X[3::5] = X[2::5][:len(X[3::5])]
    y[1:1 + sizes[1]] = 0.0
    return dfrank.RankingData.from_arrays(X, y, np.repeat(np.arange(n_queries), sizes))


def strategy_names():
    seen, names = set(), []
    for name in strategies.available():
        prefix = name.partition(":")[0]
        if ":" in name and prefix not in ("cma", "nevergrad", "optuna", "scipy"):
            continue
        obj = strategies.get(name)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        names.append(name)
    return names


def options_for(name):
    obj = strategies.get(name)
    return dict(FAST.get(getattr(obj, "name", name), {}))


@pytest.fixture(scope="module")
def sets():
    return tied_data(seed=1), tied_data(seed=2)


def fresh(weights, data, metric, ties):
    """The metric of a linear ranker, scored anew (the ranker's own scoring: a product
    summed in another order, numpy's, can round two mathematically equal scores apart,
    and ties then fall otherwise)."""
    scores = dfrank.LinearRanker(weights).predict(data.X)
    return dfrank.evaluate(scores, data, metric, ties=ties)


@pytest.mark.parametrize("ties", list(TIES))
@pytest.mark.parametrize("name", strategy_names())
def test_reported_values_are_fresh_evaluations(name, ties, sets):
    prefix = name.partition(":")[0]
    if prefix in OPTIONAL:
        pytest.importorskip(OPTIONAL[prefix])
    train, valid = sets
    for metric in METRICS:
        metric_obj = dfrank.metrics.get(metric)
        if not metric_obj.supports_ties(ties):
            with pytest.raises(ValueError, match="expected"):
                dfrank.maximize(train, metric, name, ties=ties, budget=30, seed=0)
            continue
        seen = []

        def callback(res):
            if res.weights is not None and (not seen or res.value != seen[-1][0]):
                seen.append((res.value, np.array(res.weights)))

        r = dfrank.maximize(train, metric, name, ties=ties, budget=30, seed=0, valid=valid,
                            callback=callback, **options_for(name))
        assert abs(r.value - fresh(r.weights, train, metric, ties)) <= TOL, (metric, "value")
        assert abs(r.valid_value - fresh(r.weights, valid, metric, ties)) <= TOL, \
            (metric, "valid_value")
        for restart in r.restarts:
            if restart.point is not None:
                w = restart.point[:-1] - restart.point[-1]
                assert abs(restart.value - fresh(w, train, metric, ties)) <= TOL, \
                    (metric, "restart", restart.index)
        for value, w in seen:
            assert abs(value - fresh(w, train, metric, ties)) <= TOL, (metric, "callback")
        assert r.trace["values"][-1] == max(rr.value for rr in r.restarts)


def test_expected_ties_exact_line_search_is_exact():
    """The exact line search keeps ties="expected" exact for the metrics that are sums over
    positions, and coordinate ascent falls back to the step search (saying so) for the
    others."""
    data = tied_data(n_queries=25, seed=5, n_features=5)
    for metric in ["ndcg@10", "ndcg", "dcg@3", "p@5", "recall@5", "rprec"]:
        r = dfrank.maximize(data, metric, "ca", ties="expected", restarts=2, seed=0)
        assert r.best_restart.info["line_search"] == "exact"
        assert abs(r.value - fresh(r.weights, data, metric, "expected")) <= TOL
    for metric in ["map", "mrr", "kendall_tau"]:
        r = dfrank.maximize(data, metric, "ca", ties="expected", restarts=1, seed=0)
        assert r.best_restart.info["line_search"] == "steps"
        with pytest.raises(TypeError, match="expected"):
            dfrank.maximize(data, metric, "ca", ties="expected", line_search="exact")


def test_compare_rows_are_fresh_evaluations(sets):
    train, valid = sets
    cmp = dfrank.compare(train, ["ca", "random"], seeds=[0, 1], budget=30, metric="ndcg@10",
                         valid=valid, test=valid, ties="expected")
    for run in cmp.runs:
        w = run.point[:-1] - run.point[-1]
        assert abs(run.valid - fresh(w, valid, "ndcg@10", "expected")) <= TOL
        assert abs(run.test - fresh(w, valid, "ndcg@10", "expected")) <= TOL
        assert run.train >= fresh(w, train, "ndcg@10", "expected") - TOL


def test_fit_json_scores_are_fresh_evaluations(tmp_path, capsys, sets):
    import json

    from dfrank import cli

    train, valid = sets
    paths = []
    for name, d in (("train", train), ("valid", valid)):
        p = str(tmp_path / f"{name}.txt")
        dfrank.io.save_svmlight(d, p, precision=1)  # halves are exact in one decimal
        paths.append(p)
    assert cli.main(["fit", paths[0], "--valid", paths[1], "--test", paths[1], "--metric",
                     "p@5", "--ties", "expected", "--restarts", "2", "--json", "-",
                     "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    w = np.asarray(out["weights"])
    assert abs(out["scores"]["train"] - fresh(w, train, "p@5", "expected")) <= TOL
    assert abs(out["scores"]["valid"] - fresh(w, valid, "p@5", "expected")) <= TOL
    assert abs(out["scores"]["test"] - fresh(w, valid, "p@5", "expected")) <= TOL
