"""Metric kernels against the pure-Python references, on generated inputs."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dfrank
from dfrank import metrics

from . import reference as ref

FAMILIES = [  # (name, family, k)
    ("ndcg@3", "ndcg", 3), ("ndcg", "ndcg", 0), ("dcg@5", "dcg", 5), ("map", "map", 0),
    ("map@3", "map", 3), ("p@3", "p", 3), ("p@10", "p", 10), ("recall@2", "recall", 2),
    ("mrr", "rr", 0), ("rr@2", "rr", 2), ("err@3", "err", 3), ("err", "err", 0),
    ("rprec", "rprec", 0), ("kendall_tau", "kendall_tau", 0),
]
EXPECTED_OK = {"ndcg", "dcg", "map", "p", "recall", "rr", "rprec", "kendall_tau"}


@st.composite
def ranking_data(draw, max_queries=4, max_docs=7, max_label=4, score_values=4):
    """Small queries with ties in scores, graded labels, one-document queries and queries
    without relevant documents."""
    nq = draw(st.integers(1, max_queries))
    sizes = [draw(st.integers(1, max_docs)) for _ in range(nq)]
    n = sum(sizes)
    labels = draw(st.lists(st.integers(0, max_label), min_size=n, max_size=n))
    scores = draw(st.lists(st.integers(0, score_values - 1), min_size=n, max_size=n))
    qid = np.repeat(np.arange(nq), sizes)
    data = dfrank.RankingData.from_arrays(np.zeros((n, 1)), labels, qid)
    return data, np.asarray(scores, dtype=float) * 0.5


def _reference(data, scores, family, k, ties, empty=0.0, kind="exp", thr=1):
    gmax = float(data.y.max())
    out = []
    for q in range(data.n_queries):
        rows = data.query_rows(q)
        out.append(ref.query_metric(family, list(scores[rows]), list(data.y[rows]), k, ties,
                                    gmax, kind, thr, empty))
    return np.array(out)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable", "expected"])
@pytest.mark.parametrize("name,family,k", FAMILIES)
@settings(max_examples=60, deadline=None)
@given(case=ranking_data())
def test_kernel_matches_reference(case, name, family, k, ties):
    data, scores = case
    if ties == "expected" and family not in EXPECTED_OK:
        with pytest.raises(ValueError, match="expected"):
            dfrank.evaluate(scores, data, name, ties=ties)
        return
    got = dfrank.evaluate(scores, data, name, ties=ties, per_query=True)
    want = _reference(data, scores, family, k, ties)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    mean = dfrank.evaluate(scores, data, name, ties=ties)
    assert math.isclose(mean, want.mean(), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("name,family,k", [("ndcg@3", "ndcg", 3), ("p@2", "p", 2),
                                           ("map", "map", 0), ("err@4", "err", 4)])
@settings(max_examples=40, deadline=None)
@given(case=ranking_data(max_label=3))
def test_options_gain_threshold_empty(case, name, family, k):
    data, scores = case
    got = dfrank.evaluate(scores, data, name, gain="linear", rel_threshold=2, empty="one",
                          per_query=True)
    want = _reference(data, scores, family, k, "pessimistic", empty=1.0, kind="linear", thr=2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(case=ranking_data())
def test_empty_skip_leaves_query_out(case):
    data, scores = case
    per = dfrank.evaluate(scores, data, "map", empty="skip", per_query=True)
    rel = np.array([(data.y[data.query_rows(q)] >= 1).any() for q in range(data.n_queries)])
    assert np.array_equal(np.isnan(per), ~rel)
    mean = dfrank.evaluate(scores, data, "map", empty="skip")
    if rel.any():
        assert math.isclose(mean, per[rel].mean(), rel_tol=1e-12)
    else:
        assert math.isnan(mean)


@settings(max_examples=30, deadline=None)
@given(case=ranking_data(max_docs=30, score_values=1000))
def test_batch_equals_single(case):
    data, scores = case
    rng = np.random.default_rng(0)
    S = np.vstack([scores, rng.permutation(scores), rng.normal(size=len(scores))])
    for name in ["ndcg@10", "map", "mrr", "err@5", "kendall_tau"]:
        bound = dfrank.driver.api.bind_metric(data, name)
        batch = bound.per_query_batch(np.ascontiguousarray(S))
        for p in range(len(S)):
            assert np.array_equal(batch[p], bound.per_query(S[p]))


@settings(max_examples=30, deadline=None)
@given(case=ranking_data(max_docs=30, score_values=3), seed=st.integers(0, 2**32 - 1))
def test_evaluate_linear_equals_evaluate_of_scores(case, seed):
    """Scoring and ranking in one pass gives the values of the scores it stands for (tied
    scores from features on a coarse grid), for every tie rule and per query."""
    from dfrank._kernels.scoring import features_T, linear_scores
    from dfrank.metrics.evaluation import evaluate_linear

    base, _ = case
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(base.n_docs, 3)).astype(float)
    data = dfrank.RankingData.from_arrays(X, base.y, np.repeat(base.qids, base.query_sizes))
    w = np.round(rng.normal(size=3), 1)
    for ties in ("pessimistic", "optimistic", "expected"):
        names = ["ndcg@3", "map", "p@2"] + (["err@5"] if ties != "expected" else [])
        want = dfrank.evaluate(linear_scores(features_T(data), w), data, names, ties=ties,
                               per_query=True)
        got = evaluate_linear(w, data, names, ties=ties, per_query=True)
        for n in want:
            np.testing.assert_array_equal(got[n], want[n])
    with pytest.raises(ValueError, match="one per feature"):
        evaluate_linear(np.ones(2), data)
    with pytest.raises(ValueError, match="finite"):
        evaluate_linear(np.array([1.0, np.nan, 0.0]), data)


@settings(max_examples=25, deadline=None)
@given(case=ranking_data(max_docs=30, score_values=4))
def test_serial_twins_equal_the_parallel_entry_points(case):
    """The serial twin of each family's entry point (run while the parallel one compiles,
    and with one numba thread) gives the parallel one's values bit for bit."""
    from dfrank._kernels.scoring import read_only
    from dfrank.metrics import _drivers

    data, scores = case
    rng = np.random.default_rng(0)
    XT = read_only(np.vstack([scores, rng.permutation(scores), rng.normal(size=len(scores))]))
    W = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, -1.0, 2.0]])
    chosen = _drivers.entry_point
    try:
        for name in ["ndcg@3", "dcg@3", "map", "map@2", "p@2", "recall@2", "rprec", "mrr",
                     "err@3", "kendall_tau"]:
            for ties in ("pessimistic", "optimistic", "expected"):
                bound = dfrank.driver.api.bind_metric(data, name)
                if not bound.metric.supports_ties(ties):
                    continue
                bound = dfrank.driver.api.bind_metric(data, name, ties)
                values = []
                for parallel in (True, False):
                    _drivers.entry_point = (
                        lambda c, t, d, p=parallel, driver=_drivers.driver: driver(c, t, p))
                    values.append(bound.per_query_linear(XT, W))
                np.testing.assert_array_equal(values[0], values[1])
    finally:
        _drivers.entry_point = chosen


@pytest.mark.parametrize("rel_share", [0.8, 0.04])
def test_long_lists_against_reference(rel_share):
    # longer queries exercise every top-k path (counting up to 32 rows, the score buffer,
    # its tie collection and the heap when ties swamp the threshold) and AP's counting;
    # with few relevant rows, long lists rank only those rows by counting (up to 16 of them)
    rng = np.random.default_rng(1)
    sizes = [1, 2, 20, 32, 33, 50, 200, 333, 400]
    n = sum(sizes)
    y = np.where(rng.random(n) < rel_share, rng.integers(1, 5, n), 0).astype(float)
    normal = rng.normal(size=n)
    data = dfrank.RankingData.from_arrays(np.zeros((n, 1)), y,
                                          np.repeat(range(len(sizes)), sizes))
    for s in (np.round(normal, 1), np.round(normal), np.zeros(n), normal):  # ties: many..none
        for name, family, k in FAMILIES + [("ndcg@100", "ndcg", 100), ("p@250", "p", 250)]:
            for ties in ["pessimistic", "optimistic", "stable"]:
                got = dfrank.evaluate(s, data, name, ties=ties, per_query=True)
                want = _reference(data, s, family, k, ties)
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "stable"])
def test_ap_kernels_agree(ties):
    # AP by counting non-relevant rows above (every list up to 2^24 pairs), by sorting
    # the relevant rows (longer lists, not reached by the lists above) and directly
    from dfrank.metrics import _kernels as K
    from dfrank.metrics._rank import TIES
    rng = np.random.default_rng(4)
    ib, jb = np.empty(801, np.int64), np.empty(801, np.int64)
    fb = np.empty(1600)
    for m in [1, 2, 7, 40, 263, 400]:
        for share in [0.0, 0.1, 0.5, 1.0]:
            for s in (np.round(rng.normal(size=m), 1), rng.normal(size=m), np.zeros(m)):
                y = (rng.random(m) < share).astype(float)
                r = max(1.0, y.sum())
                code = TIES[ties]
                want = K._ap_counting(s, y, 0, m, code, 1.0, r, jb, fb)
                assert K._ap_full(s, y, 0, m, code, 1.0, r, ib, jb, fb) == pytest.approx(
                    want, rel=1e-12, abs=1e-15)
                assert K._ap_sorted(s, y, 0, m, code, 1.0, r, ib, jb) == pytest.approx(
                    want, rel=1e-12, abs=1e-15)


def test_known_values():
    # one query, ranked labels [2, 0, 1]: hand-computed values
    data = dfrank.RankingData.from_arrays(np.zeros((3, 1)), [2, 0, 1], [7, 7, 7])
    s = np.array([3.0, 2.0, 1.0])
    dcg = 3 / math.log2(2) + 0 + 1 / math.log2(4)
    idcg = 3 + 1 / math.log2(3)
    assert math.isclose(dfrank.evaluate(s, data, "ndcg"), dcg / idcg)
    assert math.isclose(dfrank.evaluate(s, data, "map"), (1 + 2 / 3) / 2)
    assert math.isclose(dfrank.evaluate(s, data, "p@2"), 0.5)
    assert math.isclose(dfrank.evaluate(s, data, "p@10"), 0.2)  # divides by k
    assert math.isclose(dfrank.evaluate(s, data, "mrr"), 1.0)
    assert math.isclose(dfrank.evaluate(s, data, "kendall_tau"), (2 - 1) / 3)


def test_lower_case_names_are_dfranks_and_aliases():
    assert metrics.get("ndcg@10").gain == "exp"
    assert metrics.get("ap@5").name == "map@5"
    assert metrics.get("precision@3").name == "p@3"
    assert metrics.get("mrr@10").name == "rr@10"
    assert "ndcg@k" in metrics.available()
    assert metrics.get("ndcg@10", gain="linear").label == "ndcg@10 (linear gain)"


ir_measures = pytest.importorskip("ir_measures")


@pytest.mark.parametrize("name,family,k,gain,rel", [
    ("nDCG@10", "ndcg", 10, "linear", 1), ("NDCG@10", "ndcg", 10, "linear", 1),
    ("nDCG(dcg='exp-log2')@5", "ndcg", 5, "exp", 1), ("AP(rel=2)", "map", 0, "linear", 2),
    ("AP@100", "map", 100, "linear", 1), ("MAP", "map", 0, "linear", 1),
    ("P@5", "p", 5, "linear", 1), ("R@100", "recall", 100, "linear", 1),
    ("RR", "rr", 0, "linear", 1), ("RR(rel=2)@10", "rr", 10, "linear", 2),
    ("Rprec", "rprec", 0, "linear", 1)])
def test_names_with_capitals_are_ir_measures(name, family, k, gain, rel):
    m = metrics.get(name)
    assert (m.family, m.k, m.rel_threshold) == (family, k, rel)
    if family == "ndcg":
        assert m.gain == gain
    assert metrics.get(ir_measures.parse_measure(name)).key == m.key


def test_ir_measures_names_compute_what_ir_measures_computes():
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 30, 25)
    qid = np.repeat(np.arange(25), sizes)
    y = rng.integers(0, 4, len(qid)).astype(float)
    y[qid == 3] = 0                                  # a query without a relevant document
    s = rng.permutation(len(qid)).astype(float)      # no ties
    data = dfrank.RankingData.from_arrays(s[:, None], y, qid)
    qrels = {str(q): {f"d{i}": int(y[i]) for i in np.flatnonzero(qid == q)} for q in range(25)}
    run = {str(q): {f"d{i}": float(s[i]) for i in np.flatnonzero(qid == q)} for q in range(25)}
    names = ["nDCG@10", "nDCG", "AP", "AP(rel=2)", "AP@5", "P@5", "P(rel=2)@3", "R@10",
             "RR", "RR@3", "Rprec", "nDCG(dcg='exp-log2')@10"]
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels,
                                      run)
    got = dfrank.evaluate(s, data, names)
    for n in names:
        # ir_measures' provider of dcg='exp-log2' (gdeval) prints 6 decimals per query
        tol = 1e-6 if "exp-log2" in n else 1e-12
        assert got[str(ir_measures.parse_measure(n))] == pytest.approx(
            want[ir_measures.parse_measure(n)], abs=tol), n
    # the gain is never silently changed: dfrank's lower-case name keeps 2^l - 1
    assert got["nDCG@10"] != dfrank.evaluate(s, data, "ndcg@10")
    assert got["nDCG@10"] == pytest.approx(dfrank.evaluate(s, data, "ndcg@10",
                                                           gain="linear"), abs=1e-15)
    with pytest.raises(ValueError, match="not one dfrank's kernels compute exactly"):
        metrics.get("Judged@10")
    with pytest.raises(ValueError, match="unknown metric 'Nope@3'"):
        metrics.get("Nope@3")


@pytest.mark.parametrize("bad,match", [
    ("ndcg@0", "cut-off"), ("p", "needs a cut-off"), ("rprec@3", "no cut-off"),
    ("ndgc@10", "Did you mean"), ("foo", "Known metrics"), ("", "unknown metric"),
])
def test_bad_metric_names(bad, match):
    with pytest.raises(ValueError, match=match):
        metrics.get(bad)


def test_bad_options():
    with pytest.raises(ValueError, match="gain"):
        metrics.get("ndcg@10", gain="log")
    with pytest.raises(ValueError, match="empty"):
        metrics.get("map", empty="nan")
    data = dfrank.RankingData.from_arrays(np.zeros((2, 1)), [0, 1], [1, 1])
    with pytest.raises(ValueError, match="ties"):
        dfrank.evaluate([1, 2], data, "map", ties="random")
    with pytest.raises(ValueError, match="shape"):
        dfrank.evaluate([1, 2, 3], data, "map")
    with pytest.raises(ValueError, match="finite"):
        dfrank.evaluate([1, np.nan], data, "map")
    with pytest.raises(TypeError, match="metric option"):
        dfrank.evaluate([1, 2], data, "map", gian="exp")


def test_user_metric_works_like_builtin():
    from numba import njit

    @njit
    def top_is_relevant(labels, k):
        return 1.0 if labels[0] > 0 else 0.0

    metrics.register("top1_rel", top_is_relevant, doc="1 if the top document is relevant")
    try:
        data = dfrank.RankingData.from_arrays(np.zeros((4, 1)), [0, 1, 1, 0], [1, 1, 2, 2])
        s = np.array([1.0, 0.0, 1.0, 1.0])
        # pessimistic: query 2's tie puts label 0 first
        assert dfrank.evaluate(s, data, "top1_rel") == 0.0
        assert dfrank.evaluate(s, data, "top1_rel", ties="optimistic") == 0.5
        assert dfrank.evaluate(s, data, ["top1_rel", "p@1"]) == {"top1_rel": 0.0, "p@1": 0.0}
        assert dfrank.evaluate(s, data, top_is_relevant) == 0.0  # a function directly
        with pytest.raises(ValueError, match="already registered"):
            metrics.register("top1_rel", top_is_relevant)
        with pytest.raises(ValueError, match="expected"):
            dfrank.evaluate(s, data, "top1_rel", ties="expected")
    finally:
        metrics.unregister("top1_rel")
    with pytest.raises(TypeError, match="njit"):
        metrics.register("plain", lambda labels, k: 0.0)


def test_evaluate_takes_trec_evals_and_ir_measures_names_each_with_its_meaning():
    """``evaluate`` takes dfrank's names (``ndcg@10``: 2^l - 1 gains), ir_measures'
    (``nDCG@10``: linear gains) and trec_eval's as PyTerrier passes them (``ndcg_cut_10``,
    read as ir_measures reads it), as every entry point that takes a measure does."""
    pytest.importorskip("ir_measures")
    data = dfrank.data.datasets.make_letor_like(n_queries=6, seed=2)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    got = dfrank.evaluate(scores, data, ["nDCG@10", "ndcg@10", "P@5"])
    assert dfrank.evaluate(scores, data, "ndcg_cut_10") == got["nDCG@10"]
    assert dfrank.evaluate(scores, data, "P_5") == got["P@5"]
    assert got["ndcg@10"] != got["nDCG@10"]   # the gains differ (labels 0-4)
