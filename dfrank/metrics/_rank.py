"""Ranking one query's documents under a tie policy: top-k selection and full sorts.

Tie policies (integer codes used by every kernel):

* ``PESSIMISTIC`` (0): documents with equal scores are ordered worst label first, so a
  ranker can never profit from a tie;
* ``OPTIMISTIC`` (1): best label first;
* ``STABLE`` (2): input order;
* ``EXPECTED`` (3): the exact mean over all orderings of each tied group (handled by the
  metric kernels on top of a stable sort).

Within equal labels the input order decides, so every policy but ``EXPECTED`` is a strict
total order and the ranked label sequence is well defined.
"""

import numpy as np
from numba import njit

PESSIMISTIC = 0
OPTIMISTIC = 1
STABLE = 2
EXPECTED = 3

TIES = {"pessimistic": PESSIMISTIC, "optimistic": OPTIMISTIC, "stable": STABLE,
        "expected": EXPECTED}


@njit(cache=True, inline="always")
def better(s, y, i, j, ties):
    """True if document ``i`` ranks above document ``j`` (absolute row indices)."""
    if s[i] != s[j]:
        return s[i] > s[j]
    if ties == PESSIMISTIC and y[i] != y[j]:
        return y[i] < y[j]
    if ties == OPTIMISTIC and y[i] != y[j]:
        return y[i] > y[j]
    return i < j


@njit(cache=True)
def _sift_down(h, n, pos, s, y, ties):
    # h is a heap whose root is the *worst* kept document
    while True:
        c = 2 * pos + 1
        if c >= n:
            return
        if c + 1 < n and better(s, y, h[c], h[c + 1], ties):
            c += 1
        if better(s, y, h[c], h[pos], ties):
            return
        h[pos], h[c] = h[c], h[pos]
        pos = c


@njit(cache=True)
def top_k(s, y, lo, hi, k, ties, out):
    """Write the best ``n = min(k, hi - lo)`` rows of ``lo:hi`` into ``out[:n]``, best first.

    A bounded heap keeps the n best seen so far: O(m log n) comparisons, no full sort.
    Returns n.
    """
    m = hi - lo
    n = min(k, m)
    if n <= 0:
        return 0
    for t in range(n):  # push, sift up
        out[t] = lo + t
        c = t
        while c > 0:
            p = (c - 1) // 2
            if better(s, y, out[c], out[p], ties):
                break
            out[c], out[p] = out[p], out[c]
            c = p
    for d in range(lo + n, hi):
        if better(s, y, d, out[0], ties):
            out[0] = d
            _sift_down(out, n, 0, s, y, ties)
    # heap sort: repeatedly move the worst to the end
    for end in range(n - 1, 0, -1):
        out[0], out[end] = out[end], out[0]
        _sift_down(out, end, 0, s, y, ties)
    return n


@njit(cache=True)
def sort_rows(s, y, idx, ties):
    """Sort the row indices ``idx`` in place by rank (best first) under ``ties``.

    A stable argsort on the scores, then runs of equal scores re-ordered by label for the
    pessimistic and optimistic policies (runs are short, insertion sort).
    """
    n = len(idx)
    keys = np.empty(n)
    for t in range(n):
        keys[t] = -s[idx[t]]
    order = np.argsort(keys, kind="mergesort")
    tmp = idx.copy()
    for t in range(n):
        idx[t] = tmp[order[t]]
    if ties == PESSIMISTIC or ties == OPTIMISTIC:
        a = 0
        while a < n:
            b = a + 1
            while b < n and s[idx[b]] == s[idx[a]]:
                b += 1
            if b - a > 1:
                for t in range(a + 1, b):
                    v = idx[t]
                    u = t - 1
                    while u >= a and better(s, y, v, idx[u], ties):
                        idx[u + 1] = idx[u]
                        u -= 1
                    idx[u + 1] = v
            a = b


@njit(cache=True)
def full_rank(s, y, lo, hi, ties, out):
    """All rows of ``lo:hi`` in rank order into ``out[:hi-lo]``; returns hi - lo."""
    m = hi - lo
    for t in range(m):
        out[t] = lo + t
    sort_rows(s, y, out[:m], ties)
    return m
