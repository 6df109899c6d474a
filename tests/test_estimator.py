"""DirectRanker: scikit-learn's estimator checks, the LightGBM/XGBoost ranking signature,
the same weights as dfrank.maximize, pipelines and grouped model selection."""

import os
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GroupKFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dfrank  # noqa: E402
from dfrank import DirectRanker, LinearRanker  # noqa: E402
from tests.inputs import LETOR, letor_data, write_file  # noqa: E402

HERE = os.path.dirname(__file__)
OHSUMED = os.path.join(HERE, "..", "..", "shared", "data", "ohsumed-letor3",
                       "QueryLevelNorm", "Fold1")
needs_ohsumed = pytest.mark.skipif(not os.path.isdir(OHSUMED), reason="../shared absent")


@parametrize_with_checks([DirectRanker(strategy="ca", restarts=1)])
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks fit without query ids: one query, which the estimator warns about
        warnings.filterwarnings("ignore", message="no qid or group")
        check(estimator)


def letor(seed=0, n_q=30, n_docs=12, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_q * n_docs, d)) * [1, 10, 0.1, 1, 5][:d]
    truth = X @ rng.normal(size=d) + rng.normal(size=len(X))
    y = np.clip(np.round(truth - truth.mean()), 0, 3)
    qid = np.repeat(np.arange(100, 100 + n_q), n_docs)
    return X, y, qid


@needs_ohsumed
def test_same_weights_and_scores_as_maximize():
    train = dfrank.load_svmlight(os.path.join(OHSUMED, "train.txt.gz"))
    test = dfrank.load_svmlight(os.path.join(OHSUMED, "test.txt.gz"))
    res = dfrank.maximize(train, "ndcg@10", "ca", restarts=3, seed=7)
    qid = np.repeat(np.arange(train.n_queries), np.diff(train.qptr))
    est = DirectRanker(metric="ndcg@10", strategy="ca", restarts=3, seed=7)
    est.fit(train.X, train.y, qid=qid)
    np.testing.assert_array_equal(est.coef_, res.weights)
    assert est.best_score_ == res.value
    assert est.n_features_in_ == 45
    np.testing.assert_array_equal(est.predict(test.X), res.ranker.predict(test))
    test_qid = np.repeat(np.arange(test.n_queries), np.diff(test.qptr))
    assert est.score(test.X, test.y, qid=test_qid) == \
        dfrank.evaluate(res.ranker.predict(test), test, "ndcg@10")


def test_group_and_qid_give_the_same_model():
    X, y, qid = letor()
    a = DirectRanker(strategy="ca", restarts=2, seed=1).fit(X, y, qid=qid)
    b = DirectRanker(strategy="ca", restarts=2, seed=1).fit(X, y, group=np.bincount(qid - 100))
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_strategy_options_are_one_parameter():
    est = DirectRanker(strategy="pso", restarts=1,
                       strategy_options={"swarm_size": 6, "iterations": 3})
    assert est.get_params()["strategy_options"] == {"swarm_size": 6, "iterations": 3}
    c = clone(est)
    assert c.get_params() == est.get_params()
    X, y, qid = letor()
    c.set_params(strategy_options={"swarm_size": 4, "iterations": 3}).fit(X, y, qid=qid)
    assert c.result_.params["swarm_size"] == 4
    with pytest.raises(TypeError, match="swarm"):
        DirectRanker(strategy="ca", strategy_options={"swarm_size": 4}).fit(X, y,
                                                                             qid=qid)
    # switching the strategy alone drops nothing it cannot take
    c.set_params(strategy="random", strategy_options=None).fit(X, y, qid=qid)
    assert c.result_.strategy == "random"


def test_grid_search_over_the_strategy():
    from sklearn.model_selection import GridSearchCV, GroupKFold

    X, y, qid = letor()
    grid = [{"strategy": ["ca"], "strategy_options": [{"max_sweeps": 1}]},
            {"strategy": ["random"], "strategy_options": [{"n_samples": 20}]}]
    with sklearn.config_context(enable_metadata_routing=True):
        est = DirectRanker(strategy="ca", restarts=1)
        est.set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(est, grid, cv=GroupKFold(n_splits=2))
        search.fit(X, y, qid=qid, groups=qid)
    assert search.best_params_["strategy"] in ("ca", "random")
    assert len(search.cv_results_["params"]) == 2


@pytest.mark.parametrize("params,exc,words", [
    ({"metric": "ndgc@10"}, ValueError, "ndgc@10"),
    ({"strategy": "nope"}, ValueError, "unknown strategy"),
    ({"strategy_options": [1]}, TypeError, "strategy_options must be a dict"),
    ({"restarts": 0}, ValueError, "restarts must be an integer >= 1"),
    ({"n_jobs": 0}, ValueError, "n_jobs must be a nonzero integer"),
    ({"ties": "random"}, ValueError, "ties must be one of"),
    ({"normalize": "zscore"}, ValueError, "normalize must be"),
    ({"budget": -1}, ValueError, "budget must be"),
    ({"max_seconds": 0}, ValueError, "max_seconds must be"),
])
def test_parameters_are_checked_at_fit(params, exc, words):
    X, y, qid = letor()
    est = DirectRanker(**params)   # stores only
    with pytest.raises(exc, match=words):
        est.fit(X, y, qid=qid)


def test_eval_set_chooses_the_restart():
    X, y, qid = letor(0)
    Xv, yv, qv = letor(1)
    est = DirectRanker(strategy="ca", restarts=4, seed=3).fit(X, y, qid=qid, eval_set=[(Xv, yv)],
                                               eval_qid=[qv])
    values = [r.valid_value for r in est.result_.restarts]
    assert est.best_score_ == max(values)
    assert est.score(Xv, yv, qid=qv) == pytest.approx(est.best_score_, abs=1e-12)
    with pytest.raises(ValueError, match="eval_set\\[0\\] has 4 features"):
        est.fit(X, y, qid=qid, eval_set=[(Xv[:, :4], yv)], eval_qid=[qv])


def test_normalize_keeps_constants_in_the_model():
    X, y, qid = letor()
    est = DirectRanker(strategy="ca", normalize="standard", restarts=1).fit(X, y, qid=qid)
    norm = est.ranker_.normalization
    np.testing.assert_allclose(norm["mean"], X.mean(axis=0))
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    np.testing.assert_allclose(est.predict(X), Z @ est.coef_, rtol=1e-12, atol=1e-12)
    assert "feature_normalizers" in est.ranker_.export(format="es-ltr",
                                                       names=list("abcde"))


def test_pipeline_after_a_scaler():
    X, y, qid = letor()
    pipe = make_pipeline(StandardScaler(), DirectRanker(strategy="ca", restarts=1, seed=0))
    pipe.fit(X, y, directranker__qid=qid)
    alone = DirectRanker(strategy="ca", restarts=1, seed=0)
    alone.fit(StandardScaler().fit_transform(X), y, qid=qid)
    np.testing.assert_array_equal(pipe[-1].coef_, alone.coef_)
    np.testing.assert_array_equal(pipe.predict(X), alone.predict(
        StandardScaler().fit_transform(X)))


def test_group_kfold_with_metadata_routing():
    X, y, qid = letor(n_q=24)
    with sklearn.config_context(enable_metadata_routing=True):
        est = DirectRanker(strategy="ca", restarts=1)
        est.set_fit_request(qid=True).set_score_request(qid=True)
        scores = cross_val_score(est, X, y, cv=GroupKFold(n_splits=3),
                                 params={"qid": qid, "groups": qid})
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    # by hand: the same folds give the same scores
    for s, (tr, te) in zip(scores, GroupKFold(n_splits=3).split(X, y, qid)):
        m = DirectRanker(strategy="ca", restarts=1).fit(X[tr], y[tr], qid=qid[tr])
        assert m.score(X[te], y[te], qid=qid[te]) == s


def test_lightgbm_style_call_with_group_and_eval_group():
    """The keywords a LightGBM-style caller passes (PyTerrier's form="ltr" among them)."""
    X, y, qid = letor(0)
    Xv, yv, qv = letor(1)
    est = DirectRanker(strategy="ca", restarts=2).fit(X, y, group=np.bincount(qid - 100),
                                       eval_set=[(Xv, yv)],
                                       eval_group=[np.bincount(qv - 100)])
    assert est.best_score_ == max(r.valid_value for r in est.result_.restarts)


def test_dataframe_names_travel_to_exports():
    pd = pytest.importorskip("pandas")
    X, y, qid = letor()
    df = pd.DataFrame(X, columns=["title_bm25", "body_bm25", "pr", "age", "len"])
    est = DirectRanker(strategy="ca", restarts=1).fit(df, y, qid=qid)
    assert list(est.feature_names_in_) == list(df.columns)
    assert "title_bm25" in est.ranker_.export(format="solr-ltr")


def test_clear_errors():
    X, y, qid = letor()
    with pytest.raises(ValueError, match="not both"):
        DirectRanker().fit(X, y, qid=qid, group=[len(X)])
    with pytest.raises(ValueError, match="adding up to the 360 rows"):
        DirectRanker().fit(X, y, group=[10, 10])
    with pytest.raises(ValueError, match="graded relevances >= 0"):
        DirectRanker().fit(X, -y - 1, qid=qid)
    with pytest.raises(ValueError, match="contiguous|qid"):
        DirectRanker().fit(X, y, qid=np.tile([1, 2], len(X) // 2))
    with pytest.raises(ValueError, match="unknown metric|metric"):
        DirectRanker(metric="ndgc@10").fit(X, y, qid=qid)
    est = DirectRanker(strategy="ca", restarts=1).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="expecting 5 features"):
        est.predict(X[:, :3])
    with pytest.warns(UserWarning, match="one query"):
        DirectRanker(strategy="ca", restarts=1).fit(X[:20], y[:20])


def test_a_frame_with_its_columns_reordered_is_refused():
    """A DataFrame with its columns reordered or renamed was scored by position, silently:
    refused, as scikit-learn refuses it."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    data = letor_data()
    names = ["bm25", "tfidf", "pagerank", "length"]
    frame = pd.DataFrame(data.X, columns=names)
    qid = np.repeat(np.arange(data.n_queries), np.diff(data.qptr))
    ranker = dfrank.DirectRanker(strategy="ca", restarts=1).fit(frame, data.y, qid=qid)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(ranker.predict(frame), ranker.predict(data.X))
    with pytest.raises(ValueError, match="same order"):
        ranker.predict(frame[names[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        ranker.predict(frame.rename(columns={"bm25": "bm25f"}))


def test_raw_exceptions_are_clear_errors(tmp_path):
    """The metric passed as an option, features that overflow a score, string labels and
    all-zero labels raised numpy's and numba's own errors: each is a clear error or warning
    naming what was wrong."""
    data = dfrank.load_svmlight(write_file(tmp_path, "d.txt", LETOR))
    with pytest.raises(TypeError, match="the metric itself is not an option"):
        LinearRanker([1.0, 0.0, 0.0]).evaluate(data, metric="map")
    huge = dfrank.RankingData.from_arrays(np.array([[1e308, -1e308], [-1e308, 1e308],
                                                    [0.0, 1.0]]), [1, 0, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="features"):
        dfrank.maximize(huge, "ndcg@10", "ca", restarts=1)
    pytest.importorskip("sklearn")
    from dfrank import DirectRanker

    X = np.random.default_rng(0).normal(size=(8, 2))
    with pytest.raises(ValueError, match="must be numbers"):
        DirectRanker().fit(X, np.array(["a", "b"] * 4), qid=np.repeat([1, 2], 4))
    with pytest.warns(UserWarning, match="every label .y. is 0"):
        DirectRanker(strategy="random", budget=10).fit(X, np.zeros(8), qid=np.repeat([1, 2], 4))
