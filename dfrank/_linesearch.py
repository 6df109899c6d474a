"""Kernels of the exact line search: the mean metric along s(t) = s0 + t u, for every t.

Along the line each query's metric is piecewise constant and changes only where two
documents of different *classes* cross (classes: the label values for graded metrics,
relevant / not relevant for binary ones). Documents of one class are interchangeable for
the metric, so their crossings are never generated. For each document ``c`` the kernel keeps
``C[c, l]``, the number of class-``l`` documents ranked above it, for every class ``l`` other
than its own; those counts change only when ``c`` crosses a document of another class. When
``a`` (class la) passes ``b`` (class lb) just above it, ``b`` sits at 1-based position
``p = C[a, lb] + S[b]`` (``S`` = documents of other classes above), which is all a metric
needs to update itself by the O(1) delta of swapping positions p and p + 1. With two
classes ``C[c, other] = S[c]``, so only S is kept.

Events that meet at one t (several lines through one point, common with quantized features)
are applied in the order of a bubble sort of the meeting group, so every swap is between
neighbours: the top block of identical lines first, its bottom member first, each passing
the members below it from the top. Events closer than ``eps`` (rounding) count as one.

For cut-off metrics, documents that stay below k others for every t (k documents dominate
them on t > 0 and k on t < 0) are pruned before any crossing is generated; the top k at any
t is unchanged by the pruning.
"""

import numpy as np
from numba import njit, prange

from ._sort import _LOW, _SHIFT32, _insert, _key32, sort_pairs, sort_pairs_into
from .metrics._kernels import AP, DCG, ERR, KTAU, NDCG, PREC, RECALL, RPREC, RR
from .metrics._rank import tie_above

_ONE = np.uint64(1)  # unsigned index arithmetic (numba wraps negative signed indices)
PRUNABLE = (NDCG, DCG, PREC, RECALL, RR, ERR, AP)  # when k > 0
_SHORT_RUN = 24  # runs of equal u shorter than this are put in order by insertion


@njit(cache=True)
def flat_within_queries(u, qptr):
    """True if ``u`` is constant inside every query (the line changes no ranking)."""
    for q in range(len(qptr) - 1):
        for i in range(qptr[q] + 1, qptr[q + 1]):
            if u[i] != u[qptr[q]]:
                return False
    return True


@njit(cache=True)
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


@njit(cache=True, parallel=True)
def rows_by_u(u, qptr, out):
    """``out``: the row indices with each query's rows sorted by ``u`` (stable)."""
    for q in prange(len(qptr) - 1):
        lo, hi = qptr[q], qptr[q + 1]
        keys = u[lo:hi].copy()
        rows = out[lo:hi]
        for i in range(hi - lo):
            rows[i] = lo + i
        sort_pairs(keys, rows, np.empty(hi - lo), np.empty(hi - lo, np.int64))


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _cutoff(code, k, m, c0):
    if code == RPREC:
        return min(int(c0), m)
    return m if k <= 0 else min(k, m)


@njit(cache=True)
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


@njit(cache=True)
def _candidates_chunk(code, s0, u, y, cls, L, qptr, order, k, ties, c0, empty, prune,
                      presorted, first, last, max_m, cand, n_cand, n_events):
    """The queries order[first:last] (see :func:`candidates`), with scratch for them."""
    per_class = np.zeros(L, np.int64)
    srt = np.empty(max_m, np.int64)
    tmp = np.empty(max_m, np.int64)
    keys = np.empty(max_m)
    ktmp = np.empty(max_m)
    mark = np.empty(max_m, np.bool_)
    dominated = np.empty(max_m, np.bool_)
    hull = np.empty(max_m, np.int64)
    heads = np.empty(max_m, np.int64)
    run_u = np.empty(max_m)
    for qi in range(first, last):
        q = order[qi]
        lo, hi = qptr[q], qptr[q + 1]
        m = hi - lo
        if empty[q]:
            n_cand[q] = 0
            n_events[q] = 0
            continue
        kk = _cutoff(code, k, m, c0[q])
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
            continue
        # the rows not dominated (in order), then those of them on the first kk hulls
        _dominated(s0, u, srt[:m], kk, keys, dominated)
        k2 = 0
        for p in range(m):
            if not dominated[p]:
                srt[k2] = srt[p]
                k2 += 1
        mark[:k2] = False
        _hull_layers(s0, u, srt[:k2], kk, mark, tmp, heads, hull, run_u, ktmp)
        n = 0
        for p in range(k2):
            if mark[p]:
                cand[lo + n] = srt[p]
                n += 1
        n_cand[q] = n
        # events: pairs of different classes and different u, that is all pairs of
        # different classes less those within a run of equal u (the rows are in u order);
        # pairs of different classes among c rows = (c^2 - sum of squared class counts) / 2
        same_u = 0
        a = 0
        while a < n:
            b = a + 1
            while b < n and u[cand[lo + b]] == u[cand[lo + a]]:
                b += 1
            same_u += _pairs_across_classes(cls, cand[lo + a:lo + b], per_class)
            a = b
        n_events[q] = _pairs_across_classes(cls, cand[lo:lo + n], per_class) - same_u


@njit(cache=True, parallel=True)
def candidates(code, s0, u, y, cls, L, qptr, order, k, ties, c0, empty, prune, presorted,
               chunks, cand, n_cand, n_events, offsets):
    """Per query: the rows that can matter, in their order at t -> -inf, into
    ``cand[qptr[q]:qptr[q] + n_cand[q]]``, and the number of crossing events among them;
    ``offsets`` (nq + 1) their running sum (where each query's breakpoints go). Returns
    the sizes the sweep needs: ``(events in all, most candidates, most events)`` of a
    query (at least 1).

    For cut-off metrics a row is kept only if it lies on one of the first k upper hull
    layers of the points (u, s0) and is not dominated (k rows above it for all t > 0 and
    k for all t < 0); both tests only drop rows that are never in the top k. Queries are
    processed in chunks that allocate their scratch once (small queries are common); the
    parallel loop only calls the chunk function, which keeps the compile short.
    ``presorted`` (or an empty array) holds each query's rows sorted by u: then only runs
    of equal u need sorting (a coordinate ascent reuses one order per coordinate).
    """
    nq = len(qptr) - 1
    max_m = 1
    for q in range(nq):
        max_m = max(max_m, qptr[q + 1] - qptr[q])
    nc = max(1, min(nq, chunks))
    for ch in prange(nc):
        _candidates_chunk(code, s0, u, y, cls, L, qptr, order, k, ties, c0, empty, prune,
                          presorted, ch * nq // nc, (ch + 1) * nq // nc, max_m, cand,
                          n_cand, n_events)
    offsets[0] = 0
    max_n = 1
    max_ev = 1
    for q in range(nq):
        offsets[q + 1] = offsets[q] + n_events[q]
        max_n = max(max_n, n_cand[q])
        max_ev = max(max_ev, n_events[q])
    return offsets[nq], max_n, max_ev


# ---------------------------------------------------------------- per-family pieces
# value of a ranked class sequence: (seq, n, kk, k, gc, rc, relc, disc, c0, L) -> float
# change of a swap: (p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L) -> float,
# where a (class la, at p + 1) and b (class lb, at p) swap, p is 1-based, C and S hold the
# counts before the swap (read through _above), and scale is the per-query normalization
# (see _scale). Table lookups cast their index to np.uint64, which numba does not test for
# a negative value (the sweep's hot loop, below).

@njit(cache=True, inline="always")
def _above(C, S, x, l, L):
    """Documents of class l (not row x's own) above row x. With two classes that is all
    documents of the other class, S[x], and the sweep does not keep C up to date."""
    return S[x] if L == 2 else C[x, l]


@njit(cache=True)
def _v_dcg(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    v = 0.0
    for p in range(min(kk, n)):
        v += gc[seq[p]] * disc[p]
    return v


@njit(cache=True, inline="always")
def _d_dcg(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    if p > kk:
        return 0.0
    dg = gc[np.uint64(la)] - gc[np.uint64(lb)]
    if p + 1 <= kk:
        return dg * (disc[np.uint64(p - 1)] - disc[np.uint64(p)]) * scale
    return dg * disc[np.uint64(p - 1)] * scale


@njit(cache=True)
def _v_count(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    c = 0
    for p in range(min(kk, n)):
        c += relc[seq[p]]
    return float(c)


@njit(cache=True, inline="always")
def _d_count(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    if p != kk:
        return 0.0
    return (relc[np.uint64(la)] - relc[np.uint64(lb)]) * scale


@njit(cache=True)
def _v_rr(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    for p in range(min(kk, n)):
        if relc[seq[p]]:
            return 1.0 / (p + 1.0)
    return 0.0


@njit(cache=True, inline="always")
def _d_rr(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    if p > kk:
        return 0.0
    if relc[la] and _above(C, S, b, 1, L) == 0:  # the first relevant moves up
        if p + 1 <= kk:
            return 1.0 / p - 1.0 / (p + 1.0)
        return 1.0 / p
    if relc[lb] and _above(C, S, a, 1, L) == 1:  # the first relevant (b) moves down
        if p + 1 <= kk:
            return 1.0 / (p + 1.0) - 1.0 / p
        return -1.0 / p
    return 0.0


@njit(cache=True)
def _v_ap(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    c = 0
    v = 0.0
    for p in range(min(kk, n)):
        if relc[seq[p]]:
            c += 1
            v += c / (p + 1.0)
    return v


@njit(cache=True, inline="always")
def _d_ap(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    """A relevant a moves up: its precision c/(p+1) -> c/p, c = relevant at or above it;
    or a relevant b moves down: c/p -> c/(p+1). Selects, not branches, for the direction
    (it is a coin toss per event); the sign flip is exact, so both read like the formula.
    ``disc`` holds the step 1/p - 1/(p + 1) for every p (LineClasses.by_position): a load
    instead of two divisions per event."""
    if p > kk:
        return 0.0
    up = relc[np.uint64(la)] != 0
    sgn = 1.0 if up else -1.0
    c = (_above(C, S, b, 1, L) + 1.0) if up else float(_above(C, S, a, 1, L))
    if p + 1 <= kk:
        return sgn * c * disc[np.uint64(p)] * scale
    return sgn * c / p * scale


@njit(cache=True)
def _v_err(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    v = 0.0
    stay = 1.0
    for p in range(min(kk, n)):
        r = rc[seq[p]]
        v += stay * r / (p + 1.0)
        stay *= 1.0 - r
    return v


@njit(cache=True)
def _v_ktau(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    counts = np.zeros(L, np.int64)
    disc_pairs = 0
    for p in range(n):
        for l2 in range(seq[p]):
            disc_pairs += counts[l2]
        counts[seq[p]] += 1
    return c0 - 2.0 * disc_pairs  # times 1/pairs (the scale) below


@njit(cache=True, inline="always")
def _d_ktau(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    return scale if la > lb else -scale


@njit(cache=True)
def _scale(code, k, c0):
    """Per-query normalization: 1/IDCG (NDCG), 1/R (AP, recall, R-prec), 1/k (P@k),
    2/pairs (Kendall's tau), 1 otherwise."""
    if code == NDCG or code == AP or code == RECALL or code == RPREC:
        return 1.0 / c0
    if code == PREC:
        return 1.0 / k
    if code == KTAU:
        return 2.0 / c0
    return 1.0


@njit(cache=True, inline="always")
def _d_err(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L):
    """ERR change of swapping positions p, p + 1 (a of class la moves up past b)."""
    if p > kk:
        return 0.0
    stay = 1.0  # prod of (1 - R) over the documents above position p
    for l2 in range(L):
        n_above = _above(C, S, a, lb, L) - 1 if l2 == lb else _above(C, S, b, l2, L)
        if n_above > 0:
            stay *= (1.0 - rc[l2]) ** n_above
    ra = rc[la]
    rb = rc[lb]
    if p + 1 <= kk:
        return stay * ((ra / p + (1.0 - ra) * rb / (p + 1.0)) -
                       (rb / p + (1.0 - rb) * ra / (p + 1.0)))
    return stay * (ra - rb) / p


@njit(cache=True, inline="always")
def _bubble_key(pair, n, block):
    """Order of an event inside a meeting: the down document's u-block (top first), then
    the down document bottom-first, then the up document top-first."""
    down = pair >> 32
    up = pair & 0xFFFFFFFF
    return (block[down] * n + (n - 1 - down)) * n + up


@njit(cache=True, inline="always")
def _swap(delta_fn, a, b, seq, C, S, kk, gc, rc, relc, disc, scale, L):
    """Row a passes row b just above it: the change of the metric, whether it happens in
    the top kk, and the counts updated."""
    la = seq[a]
    lb = seq[b]
    p = _above(C, S, a, lb, L) + S[b]  # b's position; a moves to p, b to p + 1
    dv = delta_fn(p, la, lb, a, b, C, S, kk, gc, rc, relc, disc, scale, L)
    if L > 2:
        C[a, lb] -= 1
        C[b, la] += 1
    S[a] -= 1
    S[b] += 1
    return dv, p <= kk


@njit(inline="always")
def _meeting(delta_fn, g, n_ev, ts, pair, run, block, n, seq, C, S, kk, gc, rc, relc, disc,
             scale, L, eps, sw, gk, value, out_t, out_d, out_h, n_out):
    """The meeting of events starting at g (a group of nearly coincident events, or one
    event between runs of duplicate rows): all their rows' swaps in bubble order, its
    breakpoint written. Returns (the next event, the value, the number of rows written).
    ``sw`` and ``gk`` are scratch (the sort's, free by now)."""
    t0 = ts[g]
    h = g + 1
    lim = eps * max(1.0, abs(t0))
    while h < n_ev and ts[np.uint64(h)] - ts[np.uint64(h - 1)] <= lim:
        h += 1
    before = value
    top = False
    if h - g == 1:  # one event: its runs' rows, the down run's bottom row first
        hd = pair[g] >> 32
        hu = pair[g] & 0xFFFFFFFF
        n_sw = run[hd] * run[hu]
        for b in range(hd + run[hd] - 1, hd - 1, -1):
            for a in range(hu, hu + run[hu]):
                dv, at_top = _swap(delta_fn, np.uint64(a), np.uint64(b), seq, C, S, kk, gc,
                                   rc, relc, disc, scale, L)
                value += dv
                top = top or at_top
    else:  # several: all their rows' swaps, insertion sorted by bubble key (the one-event
        # path above runs the same expansion without staging it: 10% faster measured)
        n_sw = 0
        for r in range(g, h):
            hd = pair[r] >> 32
            hu = pair[r] & 0xFFFFFFFF
            for b in range(hd + run[hd] - 1, hd - 1, -1):
                for a in range(hu, hu + run[hu]):
                    sw[n_sw] = (b << 32) | a
                    _insert(gk, sw, 0, n_sw, np.uint64(_bubble_key(sw[n_sw], n, block)),
                            sw[n_sw])
                    n_sw += 1
        swu = sw.view(np.uint64)
        for r in range(n_sw):
            dv, at_top = _swap(delta_fn, swu[r] & _LOW, swu[r] >> _SHIFT32, seq, C, S, kk,
                               gc, rc, relc, disc, scale, L)
            value += dv
            top = top or at_top
    hazard = top and n_sw > 1
    if hazard or abs(value - before) > 1e-14:
        out_t[n_out] = t0
        out_d[n_out] = value - before if abs(value - before) > 1e-14 else 0.0
        out_h[n_out] = hazard
        n_out += 1
    return h, value, n_out


@njit(inline="always")
def _query_sweep(delta_fn, value_fn, code, s0, u, y, cls, lo, hi, idx, k, ties, gc, rc,
                 relc, disc, c0, L, eps, out_t, out_d, out_h, ws):
    """Sweep one query; write its (t, delta, hazard) breakpoints; return (base, count).

    A *hazard* is a meeting of three or more documents (a group of events) reaching the
    top k: its value before and after may agree, but exactly at it (or within rounding of
    it) the tied documents may come out in an order whose value differs. Hazards are
    written (with their delta, possibly 0) so a chosen point can keep away from them. Two
    documents crossing without changing the metric are harmless: near their crossing the
    value is that of one side or the other, which are equal.
    """
    m = hi - lo
    kk = _cutoff(code, k, m, c0)
    ws_i, ws_C, ws_f, ws_e, ws_p, ws_k = ws  # this worker's scratch (see _sweep_drive)
    n = len(idx)  # the candidates, sorted by their order at t -> -inf
    # class sequence, counts of other-class documents above, u-blocks, and runs: rows of
    # one class on one line (equal s0 and u; duplicate documents) next to each other stay
    # together for every t, so only a run's first row takes part in making and sorting
    # the events; the sweep then expands each event into its runs' swaps
    seq = ws_i[0, :n]  # scratch from the caller (no allocation per query)
    S = ws_i[1, :n]
    block = ws_i[2, :n]
    running = ws_i[3, :L]
    run = ws_i[6, :n]  # at a run's first row its length, else 0
    C = ws_C[:n]
    running[:] = 0
    head = 0
    for p in range(n):
        d = idx[p]
        c = cls[d]
        seq[p] = c
        tot = 0
        for l2 in range(L):
            C[p, l2] = running[l2]
            if l2 != c:
                tot += running[l2]
        S[p] = tot
        running[c] += 1
        same_u = p > 0 and u[idx[p - 1]] == u[d]
        block[p] = block[p - 1] if same_u else p
        if same_u and c == seq[p - 1] and s0[idx[p - 1]] == s0[d]:
            run[p] = 0
            run[head] += 1
        else:
            run[p] = 1
            head = p
    scale = _scale(code, k, c0)
    base = value_fn(seq, n, kk, k, gc, rc, relc, disc, c0, L)
    base *= 0.5 * scale if code == KTAU else scale
    # crossing events: i above j at -inf, u_i < u_j, so j passes i at t (len(out_t) of
    # them, counted by `candidates`; fewer between runs)
    if len(out_t) == 0:
        return base, 0
    ev_t = ws_e[0]
    ev_pair = ws_p[0]  # down << 32 | up: shifts, not divisions, decode it
    # the events are the pairs of runs of different classes and different u: made class
    # pair by class pair from per-class lists in position order (so u rises along each
    # list and the rows of equal u are contiguous, skipped by bounds rather than tested
    # pair by pair: the loops have no branch and vectorize). t = (s_a - s_b) / (u_b - u_a)
    # is the same number whichever of a, b is above; the order of events at one t does not
    # matter, as each meeting is put in bubble order below.
    ks = ws_f[0, :n]  # s0, u and position of each run's first row, class by class
    ku = ws_f[1, :n]
    kp = ws_i[4, :n]
    start = ws_i[5, :L + 1]
    start[:] = 0
    for p in range(n):
        start[seq[p] + 1] += 1 if run[p] else 0
    for l2 in range(L):
        start[l2 + 1] += start[l2]
        running[l2] = start[l2]
    for p in range(n):
        if run[p]:
            r = running[seq[p]]
            running[seq[p]] = r + 1
            ks[r] = s0[idx[p]]
            ku[r] = u[idx[p]]
            kp[r] = p
    e = 0
    for la in range(L):
        for lb in range(la + 1, L):
            bs = ks[start[lb]:start[lb + 1]]  # slices indexed from 0: no negative-index check
            bu = ku[start[lb]:start[lb + 1]]
            bp = kp[start[lb]:start[lb + 1]]
            nb = len(bs)
            below = 0  # bu[:below] < ua, bu[below:above] == ua, bu[above:] > ua
            above = 0
            for ia in range(start[la], start[la + 1]):
                sa = ks[ia]
                ua = ku[ia]
                pa = kp[ia]
                while below < nb and bu[below] < ua:
                    below += 1
                above = max(above, below)
                while above < nb and bu[above] == ua:
                    above += 1
                et = ev_t[e:e + below]
                ep = ev_pair[e:e + below]
                for x in range(below):  # b above a at -inf: a passes b
                    et[x] = (sa - bs[x]) / (bu[x] - ua)
                    ep[x] = (bp[x] << 32) | pa
                e += below
                na = nb - above
                et = ev_t[e:e + na]
                ep = ev_pair[e:e + na]
                ra = bs[above:]
                rb = bu[above:]
                rp = bp[above:]
                for x in range(na):  # a above b: b passes a
                    et[x] = (sa - ra[x]) / (rb[x] - ua)
                    ep[x] = (pa << 32) | rp[x]
                e += na
    n_ev = e
    ts = ws_e[1, :n_ev]  # events sorted by t: the sweep reads in order
    pair = ws_p[1, :n_ev]
    sort_pairs_into(ev_t[:n_ev], ev_pair[:n_ev], ws_k[0], ws_k[1], ts, pair)
    n_out = 0
    g = 0
    value = base
    pair_u = pair.view(np.uint64)
    end = np.uint64(n_ev)
    while g < n_ev:
        # the common case in a tight inner loop: one event between two single rows (the
        # meetings and runs handled below, in the same loop, slowed every event through
        # register pressure; out of line, the calls cost more: each passes a score of
        # arrays, counted in and out, 2.7x slower). Unsigned indices: a signed one is
        # tested for a negative value and wrapped at every access, which made this loop
        # 97 instructions an event instead of 55 (sweep -9% side by side on OHSUMED MAP)
        gu = np.uint64(g)
        ou = np.uint64(n_out)
        while gu < end:
            t0 = ts[gu]
            pr = pair_u[gu]
            hd = pr >> _SHIFT32
            hu = pr & _LOW
            nx = gu + _ONE
            if not ((nx == end or ts[nx] - t0 > eps * max(1.0, abs(t0))) and
                    run[hd] == 1 and run[hu] == 1):
                break
            dv = _swap(delta_fn, hu, hd, seq, C, S, kk, gc, rc, relc, disc, scale, L)[0]
            before = value
            value += dv
            if abs(value - before) > 1e-14:
                out_t[ou] = t0
                out_d[ou] = value - before
                out_h[ou] = False
                ou += _ONE
            gu = nx
        g = np.int64(gu)
        n_out = np.int64(ou)
        if g < n_ev:
            g, value, n_out = _meeting(delta_fn, g, n_ev, ts, pair, run, block, n, seq, C, S,
                                       kk, gc, rc, relc, disc, scale, L, eps, ws_p[0],
                                       ws_k[0], value, out_t, out_d, out_h, n_out)
    return base, n_out


# ------------------------------------------------------------------------------ bins
# Breakpoints fall into bins by the top BIN_BITS bits of their t's float32 rounding as an
# ordered integer (sign, exponent, 5 mantissa bits): narrow near 0, wide far away, as
# crossings are. See dfrank._assemble, which uses the sums by bin to find the best interval
# without sorting every breakpoint. best_interval + bin_sums on 8 OHSUMED MAP lines, one
# run: 0.21 ms at 12 bits, 0.19 at 13, 0.21 at 14, 0.26 at 15, 0.36 at 16 (fewer bits:
# cheaper sums, looser bounds, more sorting; 12-14 are within noise). To try
# another value, clear the numba caches first: dfrank._assemble compiles bin_of (and this
# constant) into its own cached kernels, which do not see a change to this file, and
# kernels disagreeing on the number of bins write past the end of the bin sums.
BIN_BITS = 14
BIN_SHIFT = 32 - BIN_BITS
N_BINS = 1 << BIN_BITS


@njit(cache=True, inline="always")
def bin_of(t):
    """The bin of t."""
    return np.int64(_key32(t) >> np.uint64(BIN_SHIFT))


@njit(cache=True)
def _bin_runs(out_t, out_d, n, runs, run_sp):
    """One query's breakpoints (sorted by t) summed by bin: for each run of rows in one bin,
    ``runs[r] = bin << 32 | number of changes`` and ``run_sp[r] = (sum of changes, highest
    running sum of the changes, at least 0)``. Returns the number of runs. (Summed in
    registers: per bin in memory, each sum waited on the previous store, 0.6 ms a line on
    OHSUMED MAP.)"""
    n_r = 0
    cur = -1
    s = 0.0
    p = 0.0
    c = 0
    for i in range(n):
        d = out_d[i]
        b = bin_of(out_t[i])
        if b != cur:
            if cur >= 0:
                runs[n_r] = (cur << 32) | c
                run_sp[n_r, 0] = s
                run_sp[n_r, 1] = p
                n_r += 1
            cur = b
            s = 0.0
            p = 0.0
            c = 0
        s += d  # + 0.0 for a hazard without a change
        p = max(p, s)
        c += 1 if d != 0.0 else 0
    if cur >= 0:
        runs[n_r] = (cur << 32) | c
        run_sp[n_r, 0] = s
        run_sp[n_r, 1] = p
        n_r += 1
    return n_r


@njit(inline="always")
def _sweep_drive(delta_fn, value_fn, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, L, eps, ws, out):
    """Per-query sweeps in parallel; query q writes its breakpoints at offsets[q]. Each
    worker (one per thread: ``order`` deals the queries to the threads in contiguous
    blocks, see :meth:`~dfrank.metrics.BoundMetric.query_order`) reuses one set of scratch
    sized for the largest query, so it stays in cache: ``ws`` holds, with one row per
    worker, class sequences / counts of other classes above / u-blocks / running counts /
    positions class by class / class starts / runs (int64, 7 x max(max_n, L + 1)), per-class
    counts (int64, max_n x L), the candidates' s0 and u class by class (2 x max_n), event
    times unsorted and sorted (2 x max_ev), event pairs likewise (int64, 2 x max_ev) and
    the sort's keys (uint64, 2 x max_ev); ``out`` the outputs (packed: numba cannot inline
    a call of more than 30 arguments). Each query's breakpoints are summed by bin
    while they are in cache (:func:`_bin_runs`). Inlined into one cached entry point per
    metric family (as in :mod:`dfrank.metrics._drivers`), so each family's code is
    compiled only when used."""
    nq = len(qptr) - 1
    ws_i, ws_C, ws_f, ws_e, ws_p, ws_k = ws
    base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs = out
    nw = ws_i.shape[0]
    for w in prange(nw):  # one worker per thread, a contiguous block of `order` each
        for qi in range(w * nq // nw, (w + 1) * nq // nw):
            q = order[qi]
            if empty[q]:
                base[q] = empty_value
                n_out[q] = 0
                n_runs[q] = 0
                continue
            a = offsets[q]
            b = offsets[q + 1]
            lo = qptr[q]
            idx = cand[lo:lo + n_cand[q]]
            bq, cnt = _query_sweep(delta_fn, value_fn, code, s0, u, y, cls, lo, qptr[q + 1],
                                   idx, k, ties, gc, rc, relc, disc, c0[q], L, eps,
                                   out_t[a:b], out_d[a:b], out_h[a:b],
                                   (ws_i[w], ws_C[w], ws_f[w], ws_e[w], ws_p[w], ws_k[w]))
            base[q] = bq
            n_out[q] = cnt
            n_runs[q] = _bin_runs(out_t[a:b], out_d[a:b], cnt, runs[a:b], run_sp[a:b])


@njit(cache=True, parallel=True)
def sweep_dcg(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_dcg, _v_dcg, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, L, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


@njit(cache=True, parallel=True)
def sweep_count(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_count, _v_count, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, 2, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


@njit(cache=True, parallel=True)
def sweep_rr(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_rr, _v_rr, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, 2, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


@njit(cache=True, parallel=True)
def sweep_ap(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_ap, _v_ap, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, 2, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


@njit(cache=True, parallel=True)
def sweep_err(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_err, _v_err, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, L, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


@njit(cache=True, parallel=True)
def sweep_ktau(code, s0, u, y, cls, qptr, order, cand, n_cand, offsets, k, ties, gc, rc,
              relc, disc, c0, empty, empty_value, L, eps, ws, base, n_out, out_t, out_d,
              out_h, runs, run_sp, n_runs):
    _sweep_drive(_d_ktau, _v_ktau, code, s0, u, y, cls, qptr, order, cand, n_cand,
                 offsets, k, ties, gc, rc, relc, disc, c0, empty, empty_value, L, eps, ws,
                 (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs))


# The binary families (count, rr, ap) pass the class count as the constant 2, whatever L
# says (binary metrics always have two classes): every test on L then folds away at compile
# time, which made the OHSUMED MAP sweep 23% faster (3.23 -> 2.50 ms per line side by side).
SWEEPS = {NDCG: sweep_dcg, DCG: sweep_dcg, PREC: sweep_count, RECALL: sweep_count,
          RPREC: sweep_count, RR: sweep_rr, AP: sweep_ap, ERR: sweep_err, KTAU: sweep_ktau}


# ---------------------------------------------------------------------------- choosing
@njit(cache=True, inline="always")
def _middle(lower, upper, i, step):
    """Interval i's point (see :func:`middles`)."""
    lo = lower[i]
    hi = upper[i]
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    if np.isfinite(lo):
        return lo + (step if step > 0 else max(abs(lo), 1.0))
    if np.isfinite(hi):
        return hi - (step if step > 0 else max(abs(hi), 1.0))
    return 0.0


@njit(cache=True, inline="always")
def _eligible(lower, upper, i, min_width):
    """Interval i may be chosen: unbounded, or wider than min_width relative to |t|."""
    lo = lower[i]
    hi = upper[i]
    if np.isfinite(lo) and np.isfinite(hi):
        return hi - lo > min_width * max(1.0, abs(lo), abs(hi))
    return True


@njit(cache=True)
def middles(lower, upper, step):
    """A point inside each interval: the middle of bounded ones; past the finite end of an
    unbounded one by ``step`` (the median width of the bounded ones, given by the caller;
    or max(1, |end|) when there is none, ``step <= 0``)."""
    n = len(lower)
    mid = np.empty(n)
    for i in range(n):
        mid[i] = _middle(lower, upper, i, step)
    return mid


@njit(cache=True)
def window_min(values, lower, upper, mid, w):
    """For each interval i, the lowest value of the intervals meeting [mid_i - w, mid_i + w]
    (a sliding-window minimum: both window ends only move right)."""
    n = len(values)
    out = np.empty(n)
    dq = np.empty(n, np.int64)  # indices with increasing values
    head = 0
    tail = 0
    b = 0  # next interval to enter
    for i in range(n):
        while b < n and lower[b] < mid[i] + w:
            while tail > head and values[dq[tail - 1]] >= values[b]:
                tail -= 1
            dq[tail] = b
            tail += 1
            b += 1
        while head < tail and upper[dq[head]] <= mid[i] - w:
            head += 1
        out[i] = values[dq[head]] if head < tail else values[i]
    return out


@njit(cache=True)
def _window_score(lower, upper, values, i, step, w):
    """The lowest value of the intervals meeting [mid_i - w, mid_i + w] (as
    :func:`window_min`) and the number of neighbours looked at."""
    mid = _middle(lower, upper, i, step)
    v = values[i]
    j = i - 1
    while j >= 0 and upper[j] > mid - w:
        v = min(v, values[j])
        j -= 1
    looked = i - 1 - j
    j = i + 1
    while j < len(values) and lower[j] < mid + w:
        v = min(v, values[j])
        j += 1
    return v, looked + j - i - 1


@njit(cache=True)
def plateau_pick(lower, upper, values, step, w, floor, min_width, tol):
    """:func:`pick` of the ``"plateau"`` rule without a window minimum for every interval:
    an interval's window minimum is at most its own value, so only intervals whose value
    could still reach the best window minimum are looked at (intervals narrower than
    ``min_width`` are never chosen; below ``floor`` neither, unless every interval is).
    Returns -1 when that would look at too many neighbours (wide windows over rising
    values): the caller then takes the sliding-window path."""
    n = len(values)
    budget = 8 * n + 1000
    lim = floor - tol
    any_high = False
    for i in range(n):
        if values[i] >= lim:
            any_high = True
            break
    best = -np.inf
    for i in range(n):
        v = values[i]
        if v <= best or (any_high and v < lim) or not _eligible(lower, upper, i, min_width):
            continue
        sc, looked = _window_score(lower, upper, values, i, step, w)
        budget -= looked
        if budget < 0:
            return -1
        best = max(best, sc)
    # among the best (within tol): the highest own value, then the nearest to t = 0
    vbest = -np.inf
    for i in range(n):
        v = values[i]
        if v < best - tol or v <= vbest or (any_high and v < lim) or \
                not _eligible(lower, upper, i, min_width):
            continue
        if _window_score(lower, upper, values, i, step, w)[0] >= best - tol:
            vbest = v
    chosen = -1
    dbest = np.inf
    for i in range(n):
        v = values[i]
        if v < best - tol or v < vbest - tol or (any_high and v < lim) or \
                not _eligible(lower, upper, i, min_width):
            continue
        d = lower[i] if lower[i] > 0 else (-upper[i] if upper[i] < 0 else 0.0)
        if d < dbest and _window_score(lower, upper, values, i, step, w)[0] >= best - tol:
            dbest = d
            chosen = i
    return chosen


@njit(cache=True)
def pick(lower, upper, values, score, min_width, tol, by_value):
    """Index of the chosen interval: eligible (unbounded, or wider than min_width relative
    to |t|), highest ``score`` (within tol), then highest value if ``by_value``, then the
    nearest to t = 0 (distance 0 if it contains 0); the first of equals.

    Only intervals scoring within 2 tol of the top score are looked at closely (the top
    one is almost always eligible); when that cannot settle it, all are."""
    n = len(values)
    t0 = t1 = t2 = t3 = -np.inf  # the maximum in four chains: max waits on the previous
    i = 0  # max (4 cycles), which made one chain 0.25 ms on 216k intervals
    while i + 4 <= n:
        t0 = max(t0, score[i])
        t1 = max(t1, score[i + 1])
        t2 = max(t2, score[i + 2])
        t3 = max(t3, score[i + 3])
        i += 4
    for j in range(i, n):
        t0 = max(t0, score[j])
    top = max(max(t0, t1), max(t2, t3))
    near = np.empty(n, np.int64)  # only its first few rows are ever touched
    best = -np.inf
    for sweep in range(2):
        lim = top - 2 * tol if sweep == 0 else -np.inf
        cnt = 0
        for b0 in range(0, n, 64):  # blocks: a branch-free test first (vectorizes)
            b1 = min(n, b0 + 64)
            hit = 0
            for i in range(b0, b1):
                hit |= 1 if score[i] >= lim else 0
            if hit:
                for i in range(b0, b1):
                    if score[i] >= lim and _eligible(lower, upper, i, min_width):
                        near[cnt] = i
                        cnt += 1
        best = -np.inf
        for i in near[:cnt]:
            best = max(best, score[i])
        if best - tol >= lim:  # every interval within tol of the best is in `near`
            break
    near = near[:cnt]
    vbest = -np.inf
    if by_value:
        for i in near:
            if score[i] >= best - tol:
                vbest = max(vbest, values[i])
    chosen = -1
    dbest = np.inf
    for i in near:  # in increasing order: the first of equals
        if score[i] < best - tol or (by_value and values[i] < vbest - tol):
            continue
        d = lower[i] if lower[i] > 0 else (-upper[i] if upper[i] < 0 else 0.0)
        if d < dbest:
            dbest = d
            chosen = i
    return chosen
