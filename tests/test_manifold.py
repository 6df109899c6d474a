"""The simplex reduction and the box: maps, projection, grids, bad input."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from dfrank import Box, Simplex

from .reference import rank

finite = st.floats(-10, 10, allow_nan=False, allow_subnormal=False).map(
    lambda x: 0.0 if abs(x) < 1e-6 else x)


def same_ranking(s1, s2, y):
    """Same pessimistic ranking, scores compared to 9 significant digits (rounding of
    mathematically equal scores must not count as a difference)."""
    def canon(s):
        scale = max(np.abs(s).max(), 1e-300)
        return list(np.round(s / scale, 9))
    return rank(canon(s1), list(y), "pessimistic") == rank(canon(s2), list(y), "pessimistic")


@settings(max_examples=200, deadline=None)
@given(w=arrays(np.float64, st.integers(1, 5), elements=finite), seed=st.integers(0, 2**31))
def test_from_weights_is_rank_equivalent(w, seed):
    assume(np.any(w != 0))
    d = len(w)
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (12, d)).astype(float)  # small integers: exact scores, many ties
    y = rng.integers(0, 3, 12)
    sp = Simplex(d)
    lam = sp.from_weights(w)
    assert lam.shape == (d + 1,) and np.all(lam >= 0) and math.isclose(lam.sum(), 1.0)
    w2 = sp.to_weights(lam)
    # w2 = w / Z for some Z > 0
    z = w2[np.argmax(np.abs(w))] / w[np.argmax(np.abs(w))]
    assert z > 0
    np.testing.assert_allclose(w2, w * z, rtol=1e-9, atol=1e-12 * np.abs(w2).max())
    for q in range(3):  # three queries of four documents
        rows = slice(4 * q, 4 * q + 4)
        assert same_ranking(X[rows] @ w, X[rows] @ w2, y[rows])


@settings(max_examples=200, deadline=None)
@given(v=arrays(np.float64, st.integers(2, 6), elements=finite), seed=st.integers(0, 2**31))
def test_project_keeps_ranking(v, seed):
    assume(not np.all(v == v[0]))
    d = len(v) - 1
    rng = np.random.default_rng(seed)
    X = rng.random((15, d))
    sp = Simplex(d)
    lam = sp.project(v)
    assert np.all(lam >= 0) and math.isclose(lam.sum(), 1.0, rel_tol=1e-12)
    # the score of the augmented feature f_{d+1} = -sum f (K = 0): scores scale by 1/Z
    s_v = X @ (v[:-1] - v[-1])
    s_l = X @ sp.to_weights(lam)
    np.testing.assert_allclose(s_l * (v - min(0, v.min())).sum(), s_v, rtol=1e-9, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(d=st.sampled_from([2, 7, 45, 127, 128, 135, 300]), n=st.integers(1, 3),
       seed=st.integers(0, 2**31), zeros=st.booleans())
def test_project_rows_are_the_formula(d, n, seed, zeros):
    """The projection of a batch is min(0, min v)-shift then divide by numpy's sum, row by
    row, bit for bit (compiled up to 128 coordinates, numpy beyond), and a zero comes out
    +0.0 even where v holds -0.0."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, d + 1)) * 10.0 ** rng.integers(-3, 3, size=(n, 1))
    if zeros:
        v = np.abs(v)
        v[:, 0], v[:, -1] = 0.0, -0.0
    lam = Simplex(d).project(v)
    z = v - np.minimum(0.0, v.min(axis=1, keepdims=True))
    np.testing.assert_array_equal(lam, z / z.sum(axis=1, keepdims=True))
    assert not np.signbit(lam).any()
    np.testing.assert_array_equal(Simplex(d).project(v[0]), lam[0])  # one row alike


def test_project_names_the_row_that_cannot_be_projected():
    sp = Simplex(3)
    with pytest.raises(ValueError, match=r"cannot project \[2\. 2\. 2\. 2\.\]"):
        sp.project([[1, 0, 0, 0], [2, 2, 2, 2]])
    with pytest.raises(ValueError, match="non-finite"):
        sp.project([[1, 0, 0, 0], [np.inf, 0, 0, 1]])
    with pytest.raises(ValueError, match="4 coordinates"):
        sp.project(np.ones((2, 3)))


@pytest.mark.parametrize("d,K", [(1, 5), (2, 7), (3, 4), (5, 3), (2, 100)])
def test_grid_is_every_composition(d, K):
    sp = Simplex(d)
    pts = np.vstack(list(sp.grid(K, chunk_size=17)))
    assert len(pts) == sp.grid_size(K) == math.comb(K + d, d)
    ints = np.rint(pts * K).astype(int)
    np.testing.assert_allclose(pts * K, ints, atol=1e-9)
    assert np.all(ints.sum(axis=1) == K) and np.all(ints >= 0)
    assert len({tuple(r) for r in ints}) == len(ints)
    np.testing.assert_allclose(pts.sum(axis=1), 1.0)


def test_grid_resumes_at_any_start():
    sp = Simplex(3)
    full = np.vstack(list(sp.grid(6)))
    for start in [0, 1, 13, 50, len(full) - 1, len(full)]:
        rest = list(sp.grid(6, start=start, chunk_size=5))
        rest = np.vstack(rest) if rest else np.empty((0, 4))
        np.testing.assert_array_equal(rest, full[start:])


def test_simplex_points_and_errors():
    sp = Simplex(3)
    np.testing.assert_allclose(sp.center(), 0.25)
    pts = sp.sample(np.random.default_rng(0), 10)
    assert pts.shape == (10, 4) and np.allclose(pts.sum(1), 1) and np.all(pts >= 0)
    with pytest.raises(ValueError, match="4 coordinates"):
        sp.check([0.5, 0.5])
    with pytest.raises(ValueError, match=">= 0"):
        sp.check([1.5, -0.5, 0, 0])
    with pytest.raises(ValueError, match="non-finite"):
        sp.check([np.nan, 0.5, 0.5, 0])
    with pytest.raises(ValueError, match="sum to 1"):
        sp.check([0.5, 0.5, 0.5, 0])
    with pytest.raises(ValueError, match="all coordinates equal"):
        sp.project([2, 2, 2, 2])
    with pytest.raises(ValueError, match="all coordinates equal"):
        sp.project([0, 0, 0, 0])
    with pytest.raises(ValueError, match="all-zero"):
        sp.from_weights([0, 0, 0])
    with pytest.raises(ValueError, match="resolution"):
        list(sp.grid(0))
    with pytest.raises(ValueError, match="positive integer"):
        Simplex(0)


def test_box():
    b = Box([0, 0, 10], [3, 1, 10000], log=[False, False, True], names=["k1", "b", "mu"])
    np.testing.assert_allclose(b.center(), [1.5, 0.5, math.sqrt(10 * 10000)])
    x = b.sample(np.random.default_rng(0), 1000)
    assert np.all(x >= b.lower) and np.all(x <= b.upper)
    # log coordinate: uniform in log space
    assert abs(np.median(np.log10(x[:, 2])) - 2.5) < 0.15
    np.testing.assert_allclose(b.project([5, -1, 1]), [3, 0, 10])
    g = np.vstack(list(b.grid(3, chunk_size=4)))
    assert g.shape == (27, 3) and len({tuple(r) for r in g}) == 27
    np.testing.assert_allclose(sorted(set(g[:, 2])), [10, 316.2277660168, 10000])
    np.testing.assert_allclose(b.from_unit(b.to_unit(x[:5])), x[:5])
    assert "k1 in [0, 3]" in repr(b)


@pytest.mark.parametrize("args,match", [
    (([0, 1], [1, 1]), "lower >= upper in coordinate 1"),
    (([0], [1, 2]), "one length"),
    (([0], [np.inf]), "finite"),
    (([0], [1], True), "log scale"),
])
def test_box_errors(args, match):
    with pytest.raises(ValueError, match=match):
        Box(*args)
