"""Scores of linear rankers: S = W X^T in one parallel pass over blocks of documents.

A numba kernel rather than a BLAS call, on purpose:

* every score is summed over the features in the same order whatever the number of weight
  vectors, so a batch of P points gives bit-identical scores (and metric values) to P single
  evaluations, on every machine and for every thread count;
* float32 features are read as they are and accumulated in float64, without a float64 copy
  of X (web-sized data);
* there is no BLAS thread pool to compete with numba's threads.

The kernel reads the features transposed, ``XT`` of shape (n_features, n_docs), so the
inner loop runs over contiguous documents and vectorizes (as fast as numpy's ``X @ w``
for one vector, faster for batches of a few dozen; ``benchmarks/bench_objective.py``).
Batches are scored four vectors at a time (:func:`dot_block4`), each feature read once for
the four.
"""

import functools

import numpy as np
from numba import prange

from .._jit import arr, declare, f8, first, i8, njit, ro
from .chunks import one_at_a_time

BLOCK = 256  # documents per dot_block call (a block of scores stays in L1)


@njit(cache=True, inline="always")
def dot_block(XT, rows, w, lo, hi, acc):
    """``acc[i] = sum_j w[j] * XT[j, lo + i]`` over the features j in ``rows`` (increasing).

    Four features per pass, written as one left-to-right sum: the rounding is exactly that
    of adding the features one by one, while the block is read and written a quarter as
    often. Every score in dfrank goes through here, so a batch of points scores exactly
    like the same points one at a time.

    ``rows`` may leave out the features that are zero for every document (LETOR sets have
    a few: 6 of MQ2008's 46, 9 of OHSUMED's 45), which are then never read. That changes
    no bit: w * 0 is +-0, and adding +-0 to a running sum that starts at +0 leaves it as
    it is (the sum can only become -0 by adding -0 to -0).
    """
    d = len(rows)
    m = hi - lo
    for i in range(m):
        acc[i] = 0.0
    j = 0
    while j + 4 <= d:
        f0, f1, f2, f3 = rows[j], rows[j + 1], rows[j + 2], rows[j + 3]
        w0, w1, w2, w3 = w[f0], w[f1], w[f2], w[f3]
        r0 = XT[f0, lo:hi]
        r1 = XT[f1, lo:hi]
        r2 = XT[f2, lo:hi]
        r3 = XT[f3, lo:hi]
        for i in range(m):
            acc[i] = (((acc[i] + w0 * r0[i]) + w1 * r1[i]) + w2 * r2[i]) + w3 * r3[i]
        j += 4
    while j < d:
        wj = w[rows[j]]
        row = XT[rows[j], lo:hi]
        for i in range(m):
            acc[i] += wj * row[i]
        j += 1


@njit(cache=True, nogil=True)
def dot_block4(XT, rows, W, p, lo, hi, a0, a1, a2, a3):
    """:func:`dot_block` of the four weight vectors ``W[p:p + 4]`` at once, into ``a0`` ..
    ``a3``: each feature row is read (and widened to float64) once for the four. Every
    score is the same expression as dot_block's, bit for bit; only the loads (and the
    widening of float32 features) are shared."""
    d = len(rows)
    m = hi - lo
    for i in range(m):
        a0[i] = 0.0
        a1[i] = 0.0
        a2[i] = 0.0
        a3[i] = 0.0
    j = 0
    while j + 4 <= d:
        f0, f1, f2, f3 = rows[j], rows[j + 1], rows[j + 2], rows[j + 3]
        u0, u1, u2, u3 = W[p, f0], W[p, f1], W[p, f2], W[p, f3]
        v0, v1, v2, v3 = W[p + 1, f0], W[p + 1, f1], W[p + 1, f2], W[p + 1, f3]
        x0, x1, x2, x3 = W[p + 2, f0], W[p + 2, f1], W[p + 2, f2], W[p + 2, f3]
        y0, y1, y2, y3 = W[p + 3, f0], W[p + 3, f1], W[p + 3, f2], W[p + 3, f3]
        r0 = XT[f0, lo:hi]
        r1 = XT[f1, lo:hi]
        r2 = XT[f2, lo:hi]
        r3 = XT[f3, lo:hi]
        for i in range(m):
            e0 = np.float64(r0[i])
            e1 = np.float64(r1[i])
            e2 = np.float64(r2[i])
            e3 = np.float64(r3[i])
            a0[i] = (((a0[i] + u0 * e0) + u1 * e1) + u2 * e2) + u3 * e3
            a1[i] = (((a1[i] + v0 * e0) + v1 * e1) + v2 * e2) + v3 * e3
            a2[i] = (((a2[i] + x0 * e0) + x1 * e1) + x2 * e2) + x3 * e3
            a3[i] = (((a3[i] + y0 * e0) + y1 * e1) + y2 * e2) + y3 * e3
        j += 4
    while j < d:
        f = rows[j]
        u, v, x, y = W[p, f], W[p + 1, f], W[p + 2, f], W[p + 3, f]
        r = XT[f, lo:hi]
        for i in range(m):
            e = np.float64(r[i])
            a0[i] += u * e
            a1[i] += v * e
            a2[i] += x * e
            a3[i] += y * e
        j += 1


@functools.lru_cache(maxsize=None)
def all_rows(d):
    """``rows`` for :func:`dot_block` reading all ``d`` features."""
    return np.arange(d, dtype=np.int64)


@njit(cache=True, nogil=True, parallel=True)
def scores_into(XT, rows, W, out):
    """``out[p, i] = sum_j W[p, j] * XT[j, i]`` (j in ``rows``, increasing), in float64.

    XT: (d, n) float32 or float64, C-contiguous; rows: int64 features to read (see
    :func:`dot_block`); W: (P, d) float64; out: (P, n) float64.
    """
    d, n = XT.shape
    P = W.shape[0]
    nblocks = (n + BLOCK - 1) // BLOCK
    for b in prange(nblocks):
        lo = b * BLOCK
        hi = min(n, lo + BLOCK)
        m = hi - lo
        acc = np.empty((4, BLOCK))
        p = np.int64(0)  # not a literal: one signature of dot_block4
        while p < P:
            k = min(4, P - p)
            if k == 4:
                dot_block4(XT, rows, W, p, lo, hi, acc[0], acc[1], acc[2], acc[3])
            else:
                for j in range(k):
                    dot_block(XT, rows, W[p + j], lo, hi, acc[j])
            for j in range(k):
                o = out[p + j, lo:hi]
                for i in range(m):
                    o[i] = acc[j, i]
            p += k


PIECE = 1 << 14  # documents per piece of the elementwise kernels below


@njit(cache=True, nogil=True, parallel=True)
def moved_scores_into(s0, u, t, z, out):
    """``out = (s0 + t u) / z``, elementwise, in pieces of :data:`PIECE` documents (the
    scores a line search carries to its new point)."""
    n = len(s0)
    for p in prange((n + PIECE - 1) // PIECE):
        for i in range(p * PIECE, min(n, (p + 1) * PIECE)):
            out[i] = (s0[i] + t * u[i]) / z


@njit(cache=True, nogil=True, parallel=True)
def widened_into(x, out):
    """``out = float64(x) + 0.0`` (a feature's row as a line's direction of scores; + 0.0
    turns -0.0 into 0.0, as a product of scores does), in pieces of :data:`PIECE`."""
    n = len(x)
    for p in prange((n + PIECE - 1) // PIECE):
        for i in range(p * PIECE, min(n, (p + 1) * PIECE)):
            out[i] = np.float64(x[i]) + 0.0


def transpose_features(X):
    """The (n_features, n_docs) C-contiguous copy of X that :func:`scores_into` reads."""
    return np.ascontiguousarray(np.asarray(X).T)


def features_T(data):
    """``data``'s transposed features, made once and kept with the data."""
    if data.derived.XT is None:
        data.derived.XT = read_only(transpose_features(data.X))
    return data.derived.XT


def read_only(a):
    """``a`` as a read-only array (a view when it is writable). The kernels take the
    features read-only in every process: a worker gets them read-only (joblib maps large
    arrays from a file) and a kernel compiled for one of the two kinds is compiled anew for
    the other."""
    if a.flags.writeable:
        a = a.view()
        a.setflags(write=False)
    return a


def nonzero_rows(data):
    """The features that are nonzero for some document of ``data`` (kept with the data):
    the only ones :func:`dot_block` needs to read."""
    if data.derived.XT_rows is None:
        XT = features_T(data)
        data.derived.XT_rows = np.flatnonzero(XT.any(axis=1)).astype(np.int64)  # no temporary
    return data.derived.XT_rows


def linear_scores(XT, W, rows=None):
    """Scores of weight vectors ``W`` (P, d) — or one vector (d,) — given ``XT`` (d, n);
    ``rows``: the features to read (default all; :func:`nonzero_rows` gives the same
    scores). The kernel gets the features read-only and the weights writable, whatever the
    caller holds (a model's weights may be read-only, features transposed for a prediction
    writable): the versions the install compiles."""
    W = np.asarray(W, dtype=np.float64)
    single = W.ndim == 1
    W2 = np.ascontiguousarray(W[None, :] if single else W)
    if not W2.flags.writeable:
        W2 = W2.copy()
    XT = read_only(XT)
    if W2.shape[1] != XT.shape[0]:
        raise ValueError(f"weights have {W2.shape[1]} coordinates but the data has "
                         f"{XT.shape[0]} features")
    out = np.empty((W2.shape[0], XT.shape[1]))
    with one_at_a_time():   # blocks of documents
        scores_into(XT, all_rows(XT.shape[0]) if rows is None else rows, W2, out)
    return out[0] if single else out


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("evaluate ndcg", (
    first(moved_scores_into, arr(f8), arr(f8), f8, f8, arr(f8)),
    first(scores_into, ro(f8, 2), arr(i8), arr(f8, 2), arr(f8, 2)),
    first(widened_into, ro(f8), arr(f8)),
), phase=0)


def versions():
    """The compiled versions (numba kernels and argument types) that scoring linear rankers
    calls (an objective's scores, its moves along a line): what a command loads before a
    run."""
    return [(ex.kernel, ex.types) for ex in EXAMPLES]
