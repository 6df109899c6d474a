"""One query-level cross-validation for fuse and tune (dfrank.driver.crossval): the same deal of
queries into folds, the same held-out block in both results and their files, and fusion
files of the former layout still read."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfrank.driver.crossval import CrossValidation, check_folds, cross_validate, fold_of
from dfrank.fusion import FusionResult, fuse
from dfrank.driver.result import QueryResult
from dfrank.tuning.tuner import TuneResult


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 60), k=st.integers(2, 8), seed=st.integers(0, 2 ** 32 - 1))
def test_queries_are_dealt_round_robin_from_a_seeded_permutation(n, k, seed):
    if k > n:
        with pytest.raises(ValueError, match=f"{k} folds need at least {k} queries"):
            check_folds(k, n)
        return
    f = fold_of(n, k, np.random.default_rng(seed))
    perm = np.random.default_rng(seed).permutation(n)
    assert all(f[perm[i]] == i % k for i in range(n))
    sizes = np.bincount(f, minlength=k)
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n


@pytest.mark.parametrize("bad", [1, 0, -2, 2.5, True, "3", None])
def test_a_fold_count_that_cannot_deal_is_refused(bad):
    with pytest.raises(ValueError, match="folds must be an integer >= 2"):
        check_folds(bad, 10)


def test_each_fold_is_scored_by_what_the_other_folds_chose():
    qids = [f"q{i}" for i in range(10)]
    values = np.arange(10.0)
    seen = []

    def fold(train, test):
        seen.append((set(train), set(test)))
        return values[test], values[train].mean(), {"params": {"n": len(train)}}

    cv = cross_validate(qids, 3, np.random.default_rng(0), fold, n_extra=2)
    assert cv.folds == 3 and len(cv.per_fold) == 3
    for (train, test), f in zip(seen, cv.per_fold):
        assert not train & test and train | test == set(range(10))
        assert f["held_out"] == [qids[i] for i in sorted(test)]
        assert f["params"] == {"n": len(train)}
        assert f["held_out_value"] == pytest.approx(values[sorted(test)].mean())
    assert cv.per_query == {q: float(v) for q, v in zip(qids, values)}
    assert cv.value == pytest.approx(values.sum() / 12)   # two queries count as 0
    assert CrossValidation.from_dict(json.loads(json.dumps(cv.to_dict()))) == cv


def test_fuse_and_tune_report_the_same_block():
    from tests.inputs import make_runs

    qrels, runs = make_runs(n_q=12)
    fu = fuse(qrels, runs, "map", folds=3, restarts=1)

    def run_fn(params):   # a run whose quality depends on one parameter
        w = params["w"]
        return {q: {d: w * a + (1 - w) * runs["r1"][q].get(d, 0.0) for d, a in r.items()}
                for q, r in runs["r0"].items()}

    from dfrank.tuning.tuner import tune

    tu = tune(run_fn, {"w": (0.0, 1.0)}, qrels, "map", budget=6, folds=3)
    for res in (fu, tu):
        assert isinstance(res, QueryResult)
        assert res.folds == 3 and isinstance(res.cv, CrossValidation)
        assert res.cv_value == res.cv.value
        assert set(res.per_query) == set(res.cv.per_query)
        assert all({"held_out", "train_value", "held_out_value"} <= set(f)
                   for f in res.cv.per_fold)
        d = json.loads(json.dumps(res.to_dict()))
        assert d["cv"]["folds"] == 3 and d["per_query"] == res.per_query
    assert all("weights" in f for f in fu.cv.per_fold)
    assert all("params" in f for f in tu.cv.per_fold)
    assert isinstance(tu, TuneResult)


def test_a_fusion_file_of_the_former_layout_still_loads(tmp_path):
    old = {"format": "dfrank.fusion", "version": 1, "metric": "map", "norm": "minmax",
           "missing": "zero", "signed": False, "weights": {"a": 0.25, "b": 0.75},
           "value": 0.3, "n_queries": 4, "folds": 2, "cv_value": 0.28,
           "fold_weights": [{"weights": {"a": 0.5, "b": 0.5}, "held_out": ["1", "3"]},
                            {"weights": {"a": 0.2, "b": 0.8}, "held_out": ["2", "4"]}],
           "left_out": {}, "baselines": {}, "per_query": {"1": 0.1, "2": 0.2, "3": 0.4,
                                                         "4": 0.5},
           "significance": "randomization", "status": "converged", "seconds": 1.5}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    res = FusionResult.load(path)
    assert res.folds == 2 and res.cv_value == 0.28 and res.status == "converged"
    assert res.fold_weights == old["fold_weights"]
    assert res.weights == {"a": 0.25, "b": 0.75} and res.per_query["3"] == 0.4
    again = FusionResult.load(res.to_json(tmp_path / "new.json") and tmp_path / "new.json")
    assert again.cv == res.cv and again.to_dict()["version"] == 2
