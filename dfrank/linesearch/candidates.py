"""The line search's first stage: per query, the rows that can matter along a line, in
their order at t -> -inf, and the number of crossing events among them.

For cut-off metrics, documents that stay below k others for every t (k documents dominate
them on t > 0 and k on t < 0), or that lie on none of the first k upper hulls of the
points (u, s0), are pruned before any crossing is generated; the top k at any t is
unchanged by the pruning. Identical lines (equal s0 and u) are ordered by the tie rule.
"""

import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, njit, tup
from .._kernels.sort import sort_pairs
from ..metrics._kernels import AP, DCG, ERR, NDCG, PREC, RECALL, RPREC, RR, cutoff
from ..metrics._rank import tie_above

PRUNABLE = (NDCG, DCG, PREC, RECALL, RR, ERR, AP)  # when k > 0
# on lines of at least HULL_SAMPLE_FROM queries, every HULL_SAMPLE-th query's hull layers
# are peeled first; the others' are peeled only if there they removed more than 1 / HULL_GAIN
# of the events left by the dominance test (smaller lines peel every query's, in one pass)
HULL_SAMPLE = 16
HULL_SAMPLE_FROM = 1024
HULL_GAIN = 20
_SHORT_RUN = 24  # runs of equal u shorter than this are put in order by insertion


@njit(cache=True, nogil=True)
def flat_within_queries(u, qptr):
    """True if ``u`` is constant inside every query (the line changes no ranking)."""
    for q in range(len(qptr) - 1):
        for i in range(qptr[q] + 1, qptr[q + 1]):
            if u[i] != u[qptr[q]]:
                return False
    return True


@njit(cache=True, nogil=True)
def direction_kind(delta):
    """``(finite, j)``: whether every coordinate of ``delta`` is finite, and j if delta is
    the coordinate direction e_j (else -1). One pass, for every line search."""
    j = -1
    n_nonzero = 0
    for i in range(len(delta)):
        x = delta[i]
        if not np.isfinite(x):
            return False, -1
        if x != 0.0:
            n_nonzero += 1
            j = i
    return True, (j if n_nonzero == 1 and delta[j] == 1.0 else -1)


@njit(cache=True, nogil=True, parallel=True)
def rows_by_u(u, qptr, out):
    """``out``: the row indices with each query's rows sorted by ``u`` (stable)."""
    for q in prange(len(qptr) - 1):
        lo, hi = qptr[q], qptr[q + 1]
        keys = u[lo:hi].copy()
        rows = out[lo:hi]
        for i in range(hi - lo):
            rows[i] = lo + i
        sort_pairs(keys, rows, np.empty(hi - lo), np.empty(hi - lo, np.int64))


@njit(cache=True, nogil=True)
def _pairs_across_classes(cls, rows, per_class):
    """Pairs of ``rows`` of different classes; ``per_class`` is zeroed scratch (and left so)."""
    sq = 0
    for r in rows:
        per_class[cls[r]] += 1
    for r in rows:
        c = per_class[cls[r]]
        sq += c * c
        per_class[cls[r]] = 0
    return (len(rows) * len(rows) - sq) // 2


@njit(cache=True, nogil=True)
def _finish_start_order(s0, u, y, cls, srt, ties, keys, ktmp, vtmp, per_class):
    """Rows ``srt`` already sorted by u (stably): order each run of equal u by s0
    descending, then each run of identical lines by the tie rule, giving the order at
    t -> -inf. Short runs (most: 500 a line on OHSUMED, 11 docs on average) by insertion
    in place; longer ones by the float-key sorts shared with the event sort, instead of a
    three-level comparator sort, which was slower to run and to compile. Returns the pairs
    of different classes within runs (they never cross), counted on the way
    (``per_class``: zeroed scratch, left so)."""
    m = len(srt)
    same_u = 0
    a = 0
    while a < m:
        b = a + 1
        ua = u[srt[a]]
        while b < m and u[srt[b]] == ua:
            b += 1
        if 1 < b - a < _SHORT_RUN:  # most runs: insertion sort, in place, no call
            for t in range(a + 1, b):
                v = srt[t]
                sv = s0[v]
                w = t - 1
                while w >= a and s0[srt[w]] < sv:
                    srt[w + 1] = srt[w]
                    w -= 1
                srt[w + 1] = v
        elif b - a > 1:
            for t in range(a, b):
                keys[t] = -s0[srt[t]]
            sort_pairs(keys[a:b], srt[a:b], ktmp, vtmp)
        if b - a > 1:
            same_u += _pairs_across_classes(cls, srt[a:b], per_class)
            c = a
            while c < b:  # identical lines (equal u and s0): insertion by the tie rule
                e = c + 1
                while e < b and s0[srt[e]] == s0[srt[c]]:
                    e += 1
                for t in range(c + 1, e):
                    v = srt[t]
                    w = t - 1
                    while w >= c and tie_above(y, v, srt[w], ties):
                        srt[w + 1] = srt[w]
                        w -= 1
                    srt[w + 1] = v
                c = e
        a = b
    return same_u


@njit(cache=True, inline="always")
def _keep_largest(top, n_top, kk, v):
    """Insert v into ``top[:n_top]`` (descending), keeping at most kk entries; returns the
    new count."""
    if n_top == kk and v <= top[kk - 1]:
        return n_top
    j = min(n_top, kk - 1)
    while j > 0 and top[j - 1] < v:
        top[j] = top[j - 1]
        j -= 1
    top[j] = v
    return min(n_top + 1, kk)


@njit(cache=True, nogil=True)
def _dominated(s0, u, srt, kk, top, out):
    """``out[p]``: at least kk rows stay above row srt[p] for all t > 0 and kk for all
    t < 0 (it is never in the top kk).

    Row c stays above d on t > 0 if s0_c >= s0_d and u_c >= u_d (on t < 0: u_c <= u_d),
    not both equal; an identical line (both equal) stays above d if the tie rule says so.
    ``srt`` is the order at t -> -inf (u ascending, then s0 descending, identical lines by
    the tie rule), so within a run of equal u the rows above d are exactly those before
    it; of the rows of larger u (for t > 0; smaller u for t < 0), d needs ``need`` more
    above it, which holds when the need-th largest s0 among them (``top`` keeps the kk
    largest; scratch of kk) is >= s0_d: O(m) comparisons for the whole query, plus an
    insertion for the rows that enter the kk largest."""
    n = len(srt)
    for p in range(n):
        out[p] = True
    for side in range(2):  # 0: t > 0, runs by decreasing u; 1: t < 0, increasing u
        n_top = 0
        done = 0
        while done < n:
            if side == 0:
                b = n - done
                a = b - 1
                while a > 0 and u[srt[a - 1]] == u[srt[b - 1]]:
                    a -= 1
            else:
                a = done
                b = a + 1
                while b < n and u[srt[b]] == u[srt[a]]:
                    b += 1
            for p in range(a, b):
                need = kk - (p - a)
                if out[p] and need > 0 and not (n_top >= need and
                                                 top[need - 1] >= s0[srt[p]]):
                    out[p] = False
            for p in range(a, b):
                n_top = _keep_largest(top, n_top, kk, s0[srt[p]])
            done += b - a


@njit(cache=True, inline="always")
def top_cut(code, k, m, c0):
    """The positions of a query of m documents that a cut-off metric reads: R for
    R-precision (c0 = R), else the metric's own cut-off (:func:`dfrank.metrics._kernels.
    cutoff`)."""
    if code == RPREC:
        return min(int(c0), m)
    return cutoff(k, m)


@njit(cache=True, nogil=True)
def _hull_layers(s0, u, srt, kk, mark, run_end, head, hull, ru, rs):
    """Mark the rows of the first kk upper convex layers of the points (u, s0).

    A row ranked among the top kk at some t (scores s0 + t u) lies on one of the first kk
    upper hulls of the points (u, s0): each layer removes the current maximum in every
    direction (t, 1), so a row with fewer than kk rows above it is removed within kk layers.
    ``srt`` holds the rows sorted by (u ascending, s0 descending); identical points join
    their representative's layer. Only the highest remaining point of each run of equal u
    can be a vertex, and points leave a run from its top, so a layer scans the runs that
    still hold points: their u (``ru``), the s0 of their highest point (``rs``), where
    it is in ``srt`` (``head``, ``run_end``); ``hull`` is the stack of a layer's runs. All
    five are scratch. O(kk runs) after the sort.
    """
    n = len(srt)
    n_runs = 0
    p = 0
    while p < n:
        q = p + 1
        while q < n and u[srt[q]] == u[srt[p]]:
            q += 1
        head[n_runs] = p
        run_end[n_runs] = q
        ru[n_runs] = u[srt[p]]
        rs[n_runs] = s0[srt[p]]
        n_runs += 1
        p = q
    for _ in range(kk):
        if n_runs == 0:
            break
        h = 0
        for r in range(n_runs):
            ud = ru[r]
            sd = rs[r]
            while h >= 2:
                a = hull[h - 2]
                b = hull[h - 1]
                if (ru[b] - ru[a]) * (sd - rs[a]) - (rs[b] - rs[a]) * (ud - ru[a]) >= 0:
                    h -= 1  # b is on or below the segment from a to d
                else:
                    break
            hull[h] = r
            h += 1
        for t in range(h):
            r = hull[t]
            p = head[r]
            sd = rs[r]
            mark[p] = True
            # identical points (ties for every t) follow their representative
            q = p + 1
            while q < run_end[r] and s0[srt[q]] == sd:
                mark[q] = True
                q += 1
            head[r] = q
            if q < run_end[r]:
                rs[r] = s0[srt[q]]
        kept = 0  # drop the runs left empty, in order
        for r in range(n_runs):
            if head[r] < run_end[r]:
                head[kept] = head[r]
                run_end[kept] = run_end[r]
                ru[kept] = ru[r]
                rs[kept] = rs[r]
                kept += 1
        n_runs = kept


@njit(cache=True, inline="always")
def _events(u, cls, rows, per_class):
    """Crossing events among ``rows`` (in u order): pairs of different classes and
    different u, that is all pairs of different classes less those within a run of equal
    u (pairs of different classes among c rows = (c^2 - sum of squared class counts) /
    2); ``per_class``: zeroed scratch, left so."""
    n = len(rows)
    same_u = 0
    a = 0
    while a < n:
        b = a + 1
        while b < n and u[rows[b]] == u[rows[a]]:
            b += 1
        same_u += _pairs_across_classes(cls, rows[a:b], per_class)
        a = b
    return _pairs_across_classes(cls, rows, per_class) - same_u


@njit(cache=True, nogil=True)
def _candidates_chunk(s0, u, queries, rule, presorted, first, last, max_m, found, phase, hull,
                      sample, sampled):
    """The queries order[first:last] (see :func:`candidates`, whose ``queries``, ``rule``
    and ``found`` these are), with scratch for them: in ``phase`` 0 only the sampled ones
    (q % sample == 0), whose hull layers are peeled and whose events before them go to
    ``sampled[q]``; in phase 1 the others, peeling the hull layers if ``hull``; in phase 2
    all, peeling them."""
    y, cls, L, qptr, order, c0, empty = queries
    code, k, ties, prune = rule
    cand, n_cand, n_events, _ = found
    per_class = np.zeros(L, np.int64)
    srt = np.empty(max_m, np.int64)
    tmp = np.empty(max_m, np.int64)
    keys = np.empty(max_m)
    ktmp = np.empty(max_m)
    mark = np.empty(max_m, np.bool_)
    dominated = np.empty(max_m, np.bool_)
    hull_rows = np.empty(max_m, np.int64)
    heads = np.empty(max_m, np.int64)
    run_u = np.empty(max_m)
    for qi in range(first, last):
        q = order[qi]
        if phase < 2 and (q % sample == 0) != (phase == 0):
            continue
        lo, hi = qptr[q], qptr[q + 1]
        m = hi - lo
        if empty[q]:
            n_cand[q] = 0
            n_events[q] = 0
            continue
        kk = top_cut(code, k, m, c0[q])
        pruned = prune and kk < m
        rows = srt[:m] if pruned else cand[lo:hi]  # without pruning, in place
        if len(presorted):
            for t in range(m):
                rows[t] = presorted[lo + t]
        else:
            for t in range(m):
                rows[t] = lo + t
                keys[t] = u[lo + t]
            sort_pairs(keys[:m], rows, ktmp, tmp)
        same_u = _finish_start_order(s0, u, y, cls, rows, ties, keys, ktmp, tmp, per_class)
        if not pruned:
            n_cand[q] = m
            n_events[q] = _pairs_across_classes(cls, rows, per_class) - same_u
            if phase == 0:
                sampled[q] = n_events[q]
            continue
        # the rows not dominated (in order), then those of them on the first kk hulls
        _dominated(s0, u, srt[:m], kk, keys, dominated)
        k2 = 0
        for p in range(m):
            if not dominated[p]:
                srt[k2] = srt[p]
                k2 += 1
        if phase == 0:
            sampled[q] = _events(u, cls, srt[:k2], per_class)
        if phase != 1 or hull:
            mark[:k2] = False
            _hull_layers(s0, u, srt[:k2], kk, mark, tmp, heads, hull_rows, run_u, ktmp)
        else:
            mark[:k2] = True
        n = 0
        for p in range(k2):
            if mark[p]:
                cand[lo + n] = srt[p]
                n += 1
        n_cand[q] = n
        n_events[q] = _events(u, cls, cand[lo:lo + n], per_class)


@njit(cache=True, nogil=True, parallel=True)
def candidates(s0, u, queries, rule, presorted, chunks, found, hull_rule):
    """Per query: the rows that can matter, in their order at t -> -inf, into
    ``cand[qptr[q]:qptr[q] + n_cand[q]]``, and the number of crossing events among them;
    ``offsets`` (nq + 1) their running sum (where each query's breakpoints go). Returns
    the sizes the sweep needs: ``(events in all, most candidates, most events)`` of a
    query (at least 1). ``queries`` = (y, cls, L, qptr, order, c0, empty), the layout and
    the line's classes; ``rule`` = (code, k, ties, prune), the metric and whether rows
    never in the top k may be dropped; ``found`` = (cand, n_cand, n_events, offsets), the
    outputs; ``hull_rule`` = (hull_sample, hull_gain), below.

    For cut-off metrics a row is kept only if it is not dominated (k rows above it for all
    t > 0 and k for all t < 0) and, where that pays, lies on one of the first k upper hull
    layers of the points (u, s0); both tests only drop rows that are never in the top k.
    The hull layers cost O(k) passes over a query's rows: with ``hull_sample`` > 0 they
    are peeled first on every ``hull_sample``-th query, and on the others only if there
    they removed more than 1 / ``hull_gain`` of the events (0: never); with 0, on every
    query. On continuous features the dominance test often leaves them nothing to remove;
    on LETOR's, with ties, they remove a third. The sample is fixed by the queries'
    numbers, so the choice is the same on any thread count. Queries are processed in
    chunks that allocate their scratch once (small queries are common); the parallel loop
    only calls the chunk function, which keeps the compile short.
    ``presorted`` (or an empty array) holds each query's rows sorted by u: then only runs
    of equal u need sorting (a coordinate ascent reuses one order per coordinate).
    """
    qptr = queries[3]
    _, n_cand, n_events, offsets = found
    hull_sample, hull_gain = hull_rule
    nq = len(qptr) - 1
    max_m = np.int64(1)  # not a literal: one signature of the chunk function
    for q in range(nq):
        max_m = max(max_m, qptr[q + 1] - qptr[q])
    nc = max(1, min(nq, chunks))
    sampled = np.zeros(nq, np.int64)
    sample = max(hull_sample, 1)
    first_phase = 0 if hull_sample > 0 else 2
    for phase in range(first_phase, 3 if first_phase == 2 else 2):
        hull = True   # phase 1: peel the hull layers if they removed events in the sample
        if phase == 1:
            before = 0
            after = 0
            for q in range(0, nq, sample):
                before += sampled[q]
                after += n_events[q]
            hull = (before - after) * hull_gain > before
        for ch in prange(nc):
            _candidates_chunk(s0, u, queries, rule, presorted, ch * nq // nc,
                              (ch + 1) * nq // nc, max_m, found, phase, hull, sample, sampled)
    offsets[0] = 0
    max_n = 1
    max_ev = 1
    for q in range(nq):
        offsets[q + 1] = offsets[q] + n_events[q]
        max_n = max(max_n, n_cand[q])
        max_ev = max(max_ev, n_events[q])
    return offsets[nq], max_n, max_ev


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("line search ndcg", (
    first(candidates, arr(f8), arr(f8),
          tup(arr(f8), arr(i8), i8, arr(i8), arr(i8), arr(f8), arr(b1)), tup(i8, i8, i8, b1),
          arr(i8), i8, tup(arr(i8), arr(i8), arr(i8), arr(i8)), tup(i8, i8)),
    first(direction_kind, arr(f8)),
    first(flat_within_queries, arr(f8), arr(i8)),
    first(rows_by_u, arr(f8), arr(i8), arr(i8)),
), phase=0)
