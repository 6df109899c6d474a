"""Paired significance tests against scipy.stats and against exact enumeration."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dfrank.stats import significance

scipy_stats = pytest.importorskip("scipy.stats")


def paired(n, seed, shift=0.03, zeros=0, ties=False):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = a + rng.normal(shift, 0.1, n)
    if ties:
        b = a + np.round(b - a, 1)
    b[:zeros] = a[:zeros]
    return a, b


@pytest.mark.parametrize("n,zeros,ties", [(8, 0, False), (25, 2, False), (40, 0, True),
                                          (63, 3, False), (300, 10, True)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_scipy(n, zeros, ties, seed):
    a, b = paired(n, seed, zeros=zeros, ties=ties)
    d = a - b
    nz = d[d != 0]
    t = significance(a, b, "t")
    assert t.p_value == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue, rel=1e-9)
    assert t.statistic == pytest.approx(scipy_stats.ttest_rel(a, b).statistic, rel=1e-12)
    w = significance(a, b, "wilcoxon")
    method = "exact" if w.exact else "asymptotic"
    ref = scipy_stats.wilcoxon(nz, method=method, correction=False).pvalue
    assert w.p_value == pytest.approx(ref, rel=1e-9)
    s = significance(a, b, "sign")
    ref = scipy_stats.binomtest(int((nz > 0).sum()), len(nz)).pvalue
    assert s.p_value == pytest.approx(ref, rel=1e-9)


def exact_randomization(d):
    obs = abs(d.sum())
    hits = [abs(np.dot(signs, d)) >= obs - 1e-9
            for signs in itertools.product([-1.0, 1.0], repeat=len(d))]
    return np.mean(hits)


@given(values=st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=10),
       shift=st.floats(-0.5, 0.5))
@settings(max_examples=40, deadline=None)
def test_randomization_exact_and_monte_carlo(values, shift):
    b = np.array(values)
    a = b + shift + np.linspace(-0.2, 0.3, len(b))
    exact = exact_randomization(a - b)
    r = significance(a, b, "randomization", n_resamples=2 ** 12)
    assert r.exact and r.p_value == pytest.approx(exact, abs=1e-12)
    n = 4000
    mc = significance(a, b, "randomization", n_resamples=n, seed=3)
    if 2 ** len(b) > n:
        assert not mc.exact
        se = np.sqrt(max(exact * (1 - exact), 1e-4) / n)
        assert abs(mc.p_value - exact) <= 5 * se + 1.0 / n


def test_monte_carlo_is_seeded_and_within_error_of_exact():
    a, b = paired(18, 5)
    exact = significance(a, b, "randomization", n_resamples=2 ** 18)
    assert exact.exact
    mc = [significance(a, b, "randomization", n_resamples=5000, seed=s).p_value
          for s in range(3)]
    assert mc[0] == significance(a, b, "randomization", n_resamples=5000, seed=0).p_value
    se = np.sqrt(exact.p_value * (1 - exact.p_value) / 5000)
    assert all(abs(p - exact.p_value) < 5 * se + 1e-3 for p in mc)


def test_effect_size_and_bootstrap_interval():
    a, b = paired(200, 0, shift=-0.05)
    r = significance(a, b, "t", n_resamples=2000)
    d = a - b
    assert r.mean_difference == pytest.approx(d.mean())
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert r.ci_low < r.mean_difference < r.ci_high
    assert r.ci_low > 0    # a clear shift of +0.05 (a - b)
    assert r.significant()
    assert "p =" in str(r)


def test_nan_queries_are_dropped_from_both():
    a, b = paired(30, 1)
    a2, b2 = a.copy(), b.copy()
    a2[3] = np.nan
    b2[7] = np.nan
    keep = np.ones(30, bool)
    keep[[3, 7]] = False
    assert significance(a2, b2, "t").p_value == significance(a[keep], b[keep], "t").p_value


def test_identical_rankers():
    a = np.linspace(0, 1, 20)
    for test in ("randomization", "t", "wilcoxon", "sign"):
        assert significance(a, a.copy(), test).p_value == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="unknown test"):
        significance([1, 2], [1, 2], "anova")
    with pytest.raises(ValueError, match="same length"):
        significance([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        significance([1.0], [0.5])
    with pytest.raises(ValueError, match="n_resamples"):
        significance([1, 2], [2, 1], n_resamples=0)
