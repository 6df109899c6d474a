"""Numba kernels of the smoothed rank metrics: values and gradients with respect to scores.

Two families, each O(m^2) per query of m documents (queries run in parallel, each writing
its own slice of the gradient, so the result does not depend on the number of threads):

* Approx (Qin, Liu & Li 2010): the position of x is approximated by
  pi(x) = 1 + sum_{y != x} sigmoid(alpha (s_y - s_x)). ApproxNDCG@k is
  sum_x G_x / log2(1 + pi(x)) * sigmoid(beta (k + 0.5 - pi(x))) / IDCG@k, ApproxAP is
  (1/R) sum_{y rel} (1 + sum_{x rel, x != y} sigmoid(beta (pi(y) - pi(x)))) / pi(y).
  With c_x = dV/dpi(x), the score gradient is
  dV/ds_z = sum_{x != z} alpha sigmoid'(alpha (s_x - s_z)) (c_x - c_z).
* Smooth (Chapelle & Wu 2010): soft indicators h_ij = e_ij / sum_k e_kj with
  e_ij = exp(-(s_i - s_d(j))^2 / sigma), d(j) the document at rank j. SmoothNDCG@k is
  sum_{j<k} D(j) sum_i G_i h_ij / IDCG@k; SmoothAP is (1/R) sum_j rho_j P_j with the smoothed
  relevance at rank j, rho_j = sum_i r_i h_ij, and smoothed precision
  P_j = (1/j) sum_{j' <= j} rho_j'. Both are sums over columns j of w_j sum_i G_i h_ij
  (for AP, w_j = dAP/drho_j), whose gradient is taken column by column with d(j) fixed
  (the ranking is piecewise constant; s_d(j), the j-th largest score, is continuous).

Labels enter as ``gains`` (G_i, graded) or ``rel`` (0/1), with the per-query normalizer
``c0`` of the bound metric (IDCG@k or R). Queries flagged in ``skip`` (nothing relevant)
have value 0 and gradient 0.
"""

import math

import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, later, njit, ro
from .._kernels.sort import radix_argsort

APPROX_NDCG = 0
APPROX_AP = 1
SMOOTH_NDCG = 2
SMOOTH_AP = 3

_LN2 = math.log(2.0)


@njit(cache=True, inline="always")
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit(cache=True, nogil=True)
def _approx_positions(s, alpha, rows, pos):
    """pi(x) = 1 + sum_{y != x} sigmoid(alpha (s_y - s_x)) for the rows x in ``rows``."""
    m = len(s)
    for a in range(len(rows)):
        x = rows[a]
        p = 1.0
        for y in range(m):
            if y != x:
                p += _sigmoid(alpha * (s[y] - s[x]))
        pos[x] = p


@njit(cache=True, nogil=True)
def _approx_ndcg_query(s, g, c0, alpha, beta, k, grad):
    m = len(s)
    rows = np.arange(m)
    pos = np.empty(m)
    _approx_positions(s, alpha, rows, pos)
    c = np.zeros(m)
    value = 0.0
    for x in range(m):
        if g[x] == 0.0:
            continue
        p = pos[x]
        ln = math.log1p(p)
        f = _LN2 / ln                            # 1 / log2(1 + p)
        df = -_LN2 / ((1.0 + p) * ln * ln)
        if k > 0:
            t = _sigmoid(beta * (k + 0.5 - p))
            dt = -beta * t * (1.0 - t)
        else:
            t = 1.0
            dt = 0.0
        value += g[x] * f * t
        c[x] = g[x] * (df * t + f * dt) / c0
    _approx_chain(s, alpha, c, grad)
    return value / c0


@njit(cache=True, nogil=True)
def _approx_ap_query(s, r, c0, alpha, beta, grad):
    m = len(s)
    n_rel = 0
    for x in range(m):
        if r[x] > 0.0:
            n_rel += 1
    rows = np.empty(n_rel, np.int64)
    n_rel = 0
    for x in range(m):
        if r[x] > 0.0:
            rows[n_rel] = x
            n_rel += 1
    pos = np.empty(m)
    _approx_positions(s, alpha, rows, pos)
    c = np.zeros(m)
    value = 0.0
    for a in range(n_rel):
        y = rows[a]
        py = pos[y]
        above = 1.0
        dsum = 0.0
        for b in range(n_rel):
            if b == a:
                continue
            px = pos[rows[b]]
            sg = _sigmoid(beta * (py - px))
            above += sg
            dsum += beta * sg * (1.0 - sg) * (1.0 / py - 1.0 / px)
        value += above / py
        c[y] = (-above / (py * py) + dsum) / c0
    _approx_chain(s, alpha, c, grad)
    return value / c0


@njit(cache=True, nogil=True)
def _approx_chain(s, alpha, c, grad):
    """grad_z = sum_{x != z} alpha sigmoid'(alpha (s_x - s_z)) (c_x - c_z)."""
    m = len(s)
    for z in range(m):
        grad[z] = 0.0
    for x in range(m):
        for z in range(x + 1, m):
            dc = c[x] - c[z]
            if dc == 0.0:
                continue
            sg = _sigmoid(alpha * (s[x] - s[z]))
            d = alpha * sg * (1.0 - sg) * dc
            grad[z] += d
            grad[x] -= d


@njit(cache=True, nogil=True)
def _smooth_columns(s, order, g, w, n_cols, sigma, grad):
    """sum_j w_j sum_i g_i h_ij over the first ``n_cols`` ranks, and its score gradient
    (added into ``grad``) with d(j) = order[j] fixed."""
    m = len(s)
    e = np.empty(m)
    total = 0.0
    for j in range(n_cols):
        if w[j] == 0.0:
            continue
        dj = order[j]
        c = s[dj]
        z = 0.0
        num = 0.0
        for i in range(m):
            diff = s[i] - c
            ei = math.exp(-diff * diff / sigma)
            e[i] = ei
            z += ei
            num += g[i] * ei
        gbar = num / z
        total += w[j] * gbar
        dc = 0.0
        for i in range(m):
            if e[i] == 0.0:
                continue
            t = w[j] * (g[i] - gbar) * (e[i] / z) * 2.0 * (s[i] - c) / sigma
            grad[i] -= t
            dc += t
        grad[dj] += dc
    return total


@njit(cache=True, nogil=True)
def _smooth_ndcg_query(s, g, c0, sigma, k, disc, grad):
    m = len(s)
    for i in range(m):
        grad[i] = 0.0
    order = radix_argsort(-s)
    n_cols = m if k <= 0 else min(k, m)
    w = np.empty(n_cols)
    for j in range(n_cols):
        w[j] = disc[j] / c0
    return _smooth_columns(s, order, g, w, n_cols, sigma, grad)


@njit(cache=True, nogil=True)
def _smooth_rho(s, order, r, sigma, rho):
    """Smoothed relevance at every rank: rho_j = sum_i r_i h_ij."""
    m = len(s)
    for j in range(m):
        c = s[order[j]]
        z = 0.0
        num = 0.0
        for i in range(m):
            diff = s[i] - c
            ei = math.exp(-diff * diff / sigma)
            z += ei
            num += r[i] * ei
        rho[j] = num / z


@njit(cache=True, nogil=True)
def _smooth_ap_query(s, r, c0, sigma, grad):
    m = len(s)
    for i in range(m):
        grad[i] = 0.0
    order = radix_argsort(-s)
    rho = np.empty(m)
    _smooth_rho(s, order, r, sigma, rho)
    prec = np.empty(m)
    acc = 0.0
    for j in range(m):
        acc += rho[j]
        prec[j] = acc / (j + 1)
    value = 0.0
    for j in range(m):
        value += rho[j] * prec[j]
    # dAP/drho_j = (P_j + sum_{j' >= j} rho_j' / j') / R (ranks counted from 1)
    w = np.empty(m)
    tail = 0.0
    for j in range(m - 1, -1, -1):
        tail += rho[j] / (j + 1)
        w[j] = (prec[j] + tail) / c0
    _smooth_columns(s, order, r, w, m, sigma, grad)
    return value / c0


@njit(cache=True, nogil=True, parallel=True)
def value_and_grad(kind, s, labels, qptr, qorder, c0, skip, alpha, beta, sigma, k, disc,
                   values, grad):
    """Per-query surrogate ``values`` and the score gradient ``grad`` of their sum.

    kind: APPROX_NDCG / APPROX_AP (alpha, beta) or SMOOTH_NDCG / SMOOTH_AP (sigma);
    labels: gains G (NDCG) or 0/1 relevance (AP); k <= 0 means no cutoff.
    """
    for i in prange(len(qorder)):
        q = qorder[i]
        lo, hi = qptr[q], qptr[q + 1]
        sq = s[lo:hi]
        lq = labels[lo:hi]
        gq = grad[lo:hi]
        if skip[q]:
            values[q] = 0.0
            for d in range(hi - lo):
                gq[d] = 0.0
        elif kind == APPROX_NDCG:
            values[q] = _approx_ndcg_query(sq, lq, c0[q], alpha, beta, k, gq)
        elif kind == APPROX_AP:
            values[q] = _approx_ap_query(sq, lq, c0[q], alpha, beta, gq)
        elif kind == SMOOTH_NDCG:
            values[q] = _smooth_ndcg_query(sq, lq, c0[q], sigma, k, disc, gq)
        else:
            values[q] = _smooth_ap_query(sq, lq, c0[q], sigma, gq)


@njit(cache=True, nogil=True, parallel=True)
def features_dot(XT, g, out):
    """out[j] = sum_i XT[j, i] g[i] (i in increasing order: the same bits for any number
    of threads, unlike a threaded BLAS gemv)."""
    d, n = XT.shape
    for j in prange(d):
        acc = 0.0
        row = XT[j]
        for i in range(n):
            acc += row[i] * g[i]
        out[j] = acc


@njit(cache=True, nogil=True)
def weighted_gram(XT, mean, omega, out):
    """out[a, b] = sum_i omega_i (XT[a, i] - mean[a]) (XT[b, i] - mean[b]) (deterministic
    order; the ridge start of the smoothed strategies and of es). Serial: it runs once per
    fit (milliseconds), and a parallel loop would add its compiling to a new install's
    first fit."""
    d, n = XT.shape
    for a in range(d):
        ra = XT[a]
        for b in range(a, d):
            rb = XT[b]
            acc = 0.0
            for i in range(n):
                acc += omega[i] * (ra[i] - mean[a]) * (rb[i] - mean[b])
            out[a, b] = acc
            out[b, a] = acc


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("retrieval, spaces, smoothed", (
    first(features_dot, ro(f8, 2), arr(f8), arr(f8)),
    later(value_and_grad, i8, arr(f8), arr(f8), arr(i8), arr(i8), arr(f8), arr(b1), f8, f8, f8, i8,
          arr(f8), arr(f8), arr(f8)),
    first(weighted_gram, ro(f8, 2), arr(f8), arr(f8), arr(f8, 2)),
), phase=0)
