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

from .._jit import declare, njit

PESSIMISTIC = 0
OPTIMISTIC = 1
STABLE = 2
EXPECTED = 3

TIES = {"pessimistic": PESSIMISTIC, "optimistic": OPTIMISTIC, "stable": STABLE,
        "expected": EXPECTED}


@njit(cache=True, inline="always")
def tie_sign(ties):
    """The tie policy as the sign of a label comparison: pessimistic ranks the lower label
    first (1), optimistic the higher (-1), stable and expected neither (0: input order;
    the expected policy averages over the orders on top of it)."""
    return 1.0 if ties == PESSIMISTIC else (-1.0 if ties == OPTIMISTIC else 0.0)


@njit(cache=True, inline="always")
def tie_above(y, i, j, ties):
    """The tie rule: of two documents with equal scores, does ``i`` rank above ``j``?
    The label compared by the policy's sign, then the input order. Every kernel that
    orders tied documents (metrics and the exact line search) uses this rule."""
    sign = tie_sign(ties)
    yi = sign * y[i]
    yj = sign * y[j]
    return yi < yj or (yi == yj and i < j)


@njit(cache=True, inline="always")
def better(s, y, i, j, ties):
    """True if document ``i`` ranks above document ``j`` (absolute row indices)."""
    if s[i] != s[j]:
        return s[i] > s[j]
    return tie_above(y, i, j, ties)


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _top_k_heap(s, y, lo, hi, n, ties, out):
    """The n best rows of ``lo:hi`` into ``out[:n]``, best first, with a bounded heap that
    keeps the n best seen so far: O(m log n) comparisons (the general fallback)."""
    for t in range(n):  # push, sift up
        out[t] = lo + t
        c = t
        while c > 0:
            p = (c - 1) // 2
            if better(s, y, out[c], out[p], ties):
                break
            out[c], out[p] = out[p], out[c]
            c = p
    worst = s[out[0]]
    for d in range(lo + n, hi):
        sd = s[d]
        if sd < worst:  # the common case: one float comparison
            continue
        if sd > worst or better(s, y, d, out[0], ties):
            out[0] = d
            _sift_down(out, n, 0, s, y, ties)
            worst = s[out[0]]
    # heap sort: repeatedly move the worst to the end
    for end in range(n - 1, 0, -1):
        out[0], out[end] = out[end], out[0]
        _sift_down(out, end, 0, s, y, ties)
    return n


@njit(cache=True, inline="always")
def _rows_above(ss, yy, i, sign):
    """The number of rows ranked above row ``i`` of one query's scores ``ss`` and labels
    ``yy`` under :func:`better` (with the policy's ``sign``): one branch-free expression
    (``r += 1 if c else 0``, ``|`` and ``&``) over slices indexed from 0 (no negative-index
    check), which vectorizes."""
    si = ss[i]
    yi = sign * yy[i]
    r = 0
    for j in range(len(ss)):
        yj = sign * yy[j]
        r += 1 if (ss[j] > si) | ((ss[j] == si) & ((yj < yi) | ((yj == yi) & (j < i)))) \
            else 0
    return r


@njit(cache=True, nogil=True)
def _rank_count(s, y, lo, hi, n, ties, out):
    """Short lists: each row's rank is the number of rows above it (:func:`_rows_above`).
    Every rank 0..m-1 is written once, so there is no branch on r < n either. For a few
    dozen rows this beats any comparison sort."""
    ss = s[lo:hi]
    yy = y[lo:hi]
    sign = tie_sign(ties)
    for i in range(hi - lo):
        out[_rows_above(ss, yy, i, sign)] = lo + i
    return n


_COUNT_MAX = 32  # lists up to this long are ranked by counting
_COUNT_FEW = 16  # longer lists with up to this many rows that matter, too


@njit(cache=True, nogil=True)
def top_k(s, y, lo, hi, k, ties, out):
    """Write the best ``n = min(k, hi - lo)`` rows of ``lo:hi`` into ``out[:n]``, best first
    (``out`` must hold hi - lo rows: it is scratch beyond n).

    Short lists are ranked by counting. Longer ones keep the n highest *scores* seen so
    far in ``out``, sorted by score (an insertion when a score beats the n-th; one float
    comparison otherwise), then collect every row scoring at least the n-th highest score:
    that set is closed upwards in the ranking, so ordering it by the tie rule gives the top
    n exactly. Heavy ties at the threshold fall back to a bounded heap. Returns n.
    """
    m = hi - lo
    n = min(k, m)
    if n <= 0:
        return 0
    if m <= _COUNT_MAX:
        return _rank_count(s, y, lo, hi, n, ties, out)
    kept = 0  # out[:kept]: the highest scores so far, descending (insertion)
    thr = -np.inf
    for d in range(lo, hi):
        v = s[d]
        if kept == n and v <= thr:
            continue
        j = kept if kept < n else n - 1
        while j > 0 and s[out[j - 1]] < v:
            out[j] = out[j - 1]
            j -= 1
        out[j] = d
        kept = min(kept + 1, n)
        thr = s[out[kept - 1]]
    c = 0
    for d in range(lo, hi):  # rows at or above the threshold
        c += 1 if s[d] >= thr else 0
    if c > n:
        if c > 4 * n + 16:
            return _top_k_heap(s, y, lo, hi, n, ties, out)
        c = 0
        for d in range(lo, hi):
            if s[d] >= thr:
                out[c] = d
                c += 1
    for t in range(1, c):  # by the tie rule (out[:n] is sorted by score already)
        v = out[t]
        j = t - 1
        while j >= 0 and better(s, y, v, out[j], ties):
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = v
    return n


@njit(cache=True, inline="always")
def _select(w, lo, hi, thr, sel):
    """The positions ``i`` (from 0) of the rows of ``lo:hi`` with ``w[lo + i] >= thr`` into
    ``sel``, branch-free; returns their number."""
    c = 0
    for i in range(hi - lo):
        sel[c] = i
        c += 1 if w[lo + i] >= thr else 0
    return c


@njit(cache=True, inline="always")
def top_gains(s, y, g, lo, hi, n, ties, ibuf, at):
    """``at[p]`` for p < n: the gain ``g`` of the row at 0-based rank p, 0.0 where a row
    without gain sits (the ranked gains DCG and ERR need; ``ibuf`` is scratch).

    Only the rows with a gain are ranked, each by counting the rows above it: the work is m
    times the number of gains rather than m^2 (in LETOR's sets a fifth of the rows or fewer
    have a gain). Long lists with many gains take :func:`top_k`."""
    for p in range(n):
        at[p] = 0.0
    c = _select(g, lo, hi, 5e-324, ibuf)  # gains are >= 0: the rows with g > 0
    if hi - lo > _COUNT_MAX and c > _COUNT_FEW:
        top_k(s, y, lo, hi, n, ties, ibuf)
        for p in range(n):
            at[p] = g[ibuf[p]]
        return
    ss = s[lo:hi]
    yy = y[lo:hi]
    sign = tie_sign(ties)
    for t in range(c):
        i = ibuf[t]
        r = _rows_above(ss, yy, i, sign)
        if r < n:
            at[r] = g[lo + i]


@njit(cache=True, inline="always")
def count_top(s, y, lo, hi, n, ties, thr, ibuf):
    """The number of rows with label >= ``thr`` among the n (<= hi - lo) best rows of
    ``lo:hi`` (P@k, recall, R-prec): as in :func:`top_gains`, only those rows are ranked,
    by counting."""
    c = _select(y, lo, hi, thr, ibuf)
    if hi - lo > _COUNT_MAX and c > _COUNT_FEW:
        top_k(s, y, lo, hi, n, ties, ibuf)
        c = 0
        for p in range(n):
            c += 1 if y[ibuf[p]] >= thr else 0
        return c
    ss = s[lo:hi]
    yy = y[lo:hi]
    sign = tie_sign(ties)
    top = 0
    for t in range(c):
        top += 1 if _rows_above(ss, yy, ibuf[t], sign) < n else 0
    return top


_RUN = 12


@njit(cache=True, nogil=True)
def sort_rows(s, y, idx, ties, tmp):
    """Sort the row indices ``idx`` in place by rank (best first) under ``ties``.

    Merge sort with the ``better`` comparator (insertion sort on short runs first); ``tmp``
    is scratch space at least as long as ``idx``. No allocation.
    """
    n = len(idx)
    for a in range(0, n, _RUN):
        b = min(a + _RUN, n)
        for t in range(a + 1, b):
            v = idx[t]
            u = t - 1
            while u >= a and better(s, y, v, idx[u], ties):
                idx[u + 1] = idx[u]
                u -= 1
            idx[u + 1] = v
    width = _RUN
    in_tmp = False
    while width < n:
        src = tmp if in_tmp else idx
        dst = idx if in_tmp else tmp
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            i, j, t = a, mid, a
            while i < mid and j < b:
                if better(s, y, src[j], src[i], ties):
                    dst[t] = src[j]
                    j += 1
                else:
                    dst[t] = src[i]
                    i += 1
                t += 1
            while i < mid:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < b:
                dst[t] = src[j]
                j += 1
                t += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:  # explicit loop: numba's array-to-slice assignment is slow to compile
        for t in range(n):
            idx[t] = tmp[t]


@njit(cache=True, nogil=True)
def full_rank(s, y, lo, hi, ties, out, tmp):
    """All rows of ``lo:hi`` in rank order into ``out[:hi-lo]``; returns hi - lo."""
    m = hi - lo
    for t in range(m):
        out[t] = lo + t
    sort_rows(s, y, out[:m], ties, tmp)
    return m


# no kernel here is called from Python: each compiles within the kernels that call it
EXAMPLES = declare("evaluate ndcg", (), phase=0)
