"""The smoothed metrics (ApproxNDCG/AP, SmoothNDCG/AP): values against a literal transcription
of the papers' formulas, gradients against finite differences, and their limits."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import dfrank
from dfrank import testing
from dfrank.objectives.surrogates import SmoothedMetric, feature_scale, ridge_start

from . import reference as ref

KINDS = ["approx_ndcg", "approx_ap", "smooth_ndcg", "smooth_ap"]


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def approx_positions(s, alpha):
    return [1.0 + sum(sigmoid(alpha * (s[y] - s[x])) for y in range(len(s)) if y != x)
            for x in range(len(s))]


def ref_query(kind, s, labels, k, alpha, beta, sigma):
    """One query's surrogate, written down from the papers (Qin et al. 2010 eqs. for
    ApproxNDCG/AP; Chapelle & Wu 2010 for SmoothNDCG/AP), O(m^2) plain Python."""
    m = len(s)
    if kind.endswith("ndcg"):
        g = [2.0 ** l - 1 for l in labels]
        ideal = sorted(g, reverse=True)
        cut = m if k is None else min(k, m)
        idcg = sum(ideal[j] / math.log2(j + 2) for j in range(cut))
        if idcg == 0:
            return None
    else:
        r = [1.0 if l >= 1 else 0.0 for l in labels]
        n_rel = sum(r)
        if n_rel == 0:
            return None
    if kind.startswith("approx"):
        pos = approx_positions(s, alpha)
        if kind == "approx_ndcg":
            total = 0.0
            for x in range(m):
                trunc = 1.0 if k is None else sigmoid(beta * (k + 0.5 - pos[x]))
                total += g[x] / math.log2(1 + pos[x]) * trunc
            return total / idcg
        total = 0.0
        for y in range(m):
            inner = sum(r[x] * sigmoid(beta * (pos[y] - pos[x])) for x in range(m) if x != y)
            total += r[y] * (1 + inner) / pos[y]
        return total / n_rel
    order = sorted(range(m), key=lambda i: -s[i])

    def h(i, j):
        c = s[order[j]]
        z = sum(math.exp(-(s[t] - c) ** 2 / sigma) for t in range(m))
        return math.exp(-(s[i] - c) ** 2 / sigma) / z

    if kind == "smooth_ndcg":
        cut = m if k is None else min(k, m)
        return sum(g[i] * h(i, j) / math.log2(j + 2)
                   for i in range(m) for j in range(cut)) / idcg
    rho = [sum(r[i] * h(i, j) for i in range(m)) for j in range(m)]
    prec = [sum(rho[:j + 1]) / (j + 1) for j in range(m)]
    return sum(rho[j] * prec[j] for j in range(m)) / n_rel


@st.composite
def problems(draw, max_queries=3, max_docs=7, n_features=3):
    sizes = draw(st.lists(st.integers(1, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    data = dfrank.RankingData.from_arrays(X, np.array(labels, float),
                                          np.repeat(np.arange(len(sizes)), sizes))
    w = rng.normal(size=n_features)
    return data, w


def options(kind, k):
    return dict(k=k if kind.endswith("ndcg") else None, alpha=3.0, beta=2.0, sigma=0.7)


@pytest.mark.parametrize("kind", KINDS)
@given(problem=problems(), k=st.sampled_from([None, 1, 3, 10]))
@settings(max_examples=40, deadline=None)
def test_value_matches_the_papers_formulas(kind, problem, k):
    data, w = problem
    opts = options(kind, k)
    sm = SmoothedMetric(data, kind, **opts)
    s = data.X @ w
    values, _ = sm.per_query_and_grad_scores(s)
    expected = []
    for q in range(data.n_queries):
        lo, hi = data.qptr[q], data.qptr[q + 1]
        v = ref_query(kind, list(s[lo:hi]), list(data.y[lo:hi]), opts["k"], opts["alpha"],
                      opts["beta"], opts["sigma"])
        expected.append(0.0 if v is None else v)
        assert values[q] == pytest.approx(expected[-1], rel=1e-10, abs=1e-12)
    live = [e for e, q in zip(expected, range(data.n_queries)) if not sm.bound.empty[q]]
    if live:
        assert sm.value(w) == pytest.approx(sum(live) / len(live), rel=1e-10)


@pytest.mark.parametrize("kind", KINDS)
@given(problem=problems(max_docs=9), k=st.sampled_from([None, 2, 5]))
@settings(max_examples=40, deadline=None)
def test_gradient_matches_central_differences(kind, problem, k):
    data, w = problem
    sm = SmoothedMetric(data, kind, **options(kind, k))
    _, grad = sm.value_and_grad(w)
    h = 1e-6
    fd = np.array([(sm.value(w + h * e) - sm.value(w - h * e)) / (2 * h)
                   for e in np.eye(len(w))])
    scale = max(np.abs(grad).max(), 1e-3)
    assert np.abs(fd - grad).max() <= 1e-6 * scale


@st.composite
def tie_free(draw, max_queries=3, max_docs=8):
    """Queries whose scores are distinct integers (gaps >= 1) and some relevant document."""
    sizes = draw(st.lists(st.integers(1, max_docs), min_size=1, max_size=max_queries))
    n = sum(sizes)
    labels = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), float)
    assume(labels.max() >= 1)
    perm = np.array(draw(st.permutations(range(n))), float)
    X = np.column_stack([perm, np.zeros(n)])
    data = dfrank.RankingData.from_arrays(X, labels, np.repeat(np.arange(len(sizes)), sizes))
    return data


def true_mean(kind, data, k):
    vals = []
    for q in range(data.n_queries):
        lo, hi = data.qptr[q], data.qptr[q + 1]
        ranked = list(data.y[lo:hi][np.argsort(-data.X[lo:hi, 0])])
        if kind.endswith("ndcg"):
            if max(ranked) > 0:
                vals.append(ref.ndcg(ranked, 0 if k is None else k))
        elif max(ranked) >= 1:
            vals.append(ref.average_precision(ranked))
    return sum(vals) / len(vals)


@pytest.mark.parametrize("kind", KINDS)
@given(data=tie_free(), k=st.sampled_from([None, 1, 3, 20]))
@settings(max_examples=30, deadline=None)
def test_surrogates_tend_to_the_metric(kind, data, k):
    """Qin et al.: |ApproxNDCG - NDCG| -> 0 as alpha, beta -> infinity (the position error
    is below (m - 1) sigmoid(-alpha delta) for a score gap delta); Chapelle & Wu: h_ij tends
    to the permutation matrix as sigma -> 0."""
    k = k if kind.endswith("ndcg") else None
    w = np.array([1.0, 0.0])
    target = true_mean(kind, data, k)
    errors = []
    for a in (3.0, 30.0, 300.0):
        sm = SmoothedMetric(data, kind, k=k, alpha=a, beta=a, sigma=1.0 / a ** 2)
        errors.append(abs(sm.value(w) - target))
    assert errors[-1] < 1e-9
    assert errors[1] < 1e-3 * max(1.0, 10 * errors[0])


def test_ridge_start_ranks_a_planted_model():
    data = testing.planted_data(n_features=5, noise=0.1, seed=3)
    v0 = ridge_start(data)
    w = v0 / feature_scale(data)
    assert dfrank.evaluate(data.X @ w, data, "ndcg@10") > 0.9
    assert np.array_equal(ridge_start(data), v0)   # cached, and a copy each time


@pytest.mark.parametrize("kind", KINDS)
def test_result_is_the_true_metric_and_surrogate_is_reported(kind):
    data = testing.planted_data(n_features=5, seed=1)
    r = dfrank.maximize(data, "ndcg@10", strategy=kind, seed=0, budget=150)
    assert r.value == pytest.approx(dfrank.evaluate(data.X @ r.weights, data, "ndcg@10"),
                                    abs=1e-12)
    assert all(np.isfinite(x.info["surrogate"]) for x in r.restarts if x.info)


def test_bad_input():
    data = testing.planted_data()
    with pytest.raises(ValueError, match="unknown smoothed metric"):
        SmoothedMetric(data, "approx_map")
    with pytest.raises(ValueError, match="alpha must be"):
        SmoothedMetric(data, "approx_ndcg", alpha=0.0)
    with pytest.raises(ValueError, match="sigma must be"):
        SmoothedMetric(data, "smooth_ap", sigma=float("nan"))
    with pytest.raises(ValueError, match="k must be"):
        SmoothedMetric(data, "smooth_ndcg", k=0)
    with pytest.raises(ValueError, match="sigma_end"):
        dfrank.maximize(data, "map", strategy="smooth_ap", sigma_end=100.0)
    space = dfrank.Box([0, 0], [1, 1])
    with pytest.raises(TypeError, match="to differentiate its scores"):
        dfrank.maximize(dfrank.FunctionObjective(lambda x: 0.0, space), strategy="approx_ap")
