"""The line search's second stage: each query's sweep along s(t) = s0 + t u, the metric's
breakpoints and their sums by bin.

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
from numba import get_thread_id, prange

from .._jit import arr, b1, declare, f8, first, i8, later, njit, tup, u8
from .._kernels.sort import LOW_BITS, SHIFT32, insert, sort_pairs_into
from ..metrics._kernels import AP, DCG, ERR, KTAU, NDCG, PREC, RECALL, RPREC, RR
from .assemble import bin_runs
from .candidates import top_cut

# the sweep's queries are dealt in this many blocks per thread, handed out one at a time
# (dfrank._kernels.chunks)
BLOCKS_PER_THREAD = 4
_ONE = np.uint64(1)  # unsigned index arithmetic (numba wraps negative signed indices)

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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _v_err(seq, n, kk, k, gc, rc, relc, disc, c0, L):
    v = 0.0
    stay = 1.0
    for p in range(min(kk, n)):
        r = rc[seq[p]]
        v += stay * r / (p + 1.0)
        stay *= 1.0 - r
    return v


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
def _meeting(delta_fn, g, events, C, S, swap_rule, L, eps, sw, gk, value, out_t, out_d,
             out_h, n_out):
    """The meeting of events starting at g (a group of nearly coincident events, or one
    event between runs of duplicate rows): all their rows' swaps in bubble order, its
    breakpoint written. Returns (the next event, the value, the number of rows written).
    ``events`` = (ts, pair, run, block, seq): the events sorted, the rows' runs, u-blocks
    and classes; ``swap_rule`` = (kk, gc, rc, relc, disc, scale) as :func:`_swap` reads
    them; ``sw`` and ``gk`` are scratch (the sort's, free by now). What it writes (the
    counts ``C`` and ``S``, the scratch, the outputs) comes as arrays of their own: numba
    drops the writes of a function inlined two levels into a parallel loop through the
    arrays of a tuple argument."""
    ts, pair, run, block, seq = events
    n_ev = len(ts)
    n = len(seq)
    kk, gc, rc, relc, disc, scale = swap_rule
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
        # path above runs the same expansion without staging it, which costs less)
        n_sw = 0
        for r in range(g, h):
            hd = pair[r] >> 32
            hu = pair[r] & 0xFFFFFFFF
            for b in range(hd + run[hd] - 1, hd - 1, -1):
                for a in range(hu, hu + run[hu]):
                    sw[n_sw] = (b << 32) | a
                    insert(gk, sw, 0, n_sw, np.uint64(_bubble_key(sw[n_sw], n, block)),
                            sw[n_sw])
                    n_sw += 1
        swu = sw.view(np.uint64)
        for r in range(n_sw):
            dv, at_top = _swap(delta_fn, swu[r] & LOW_BITS, swu[r] >> SHIFT32, seq, C, S, kk,
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


@njit(cache=True, nogil=True)
def _class_runs(s0, u, cls, idx, L, ws_i, C):
    """The candidates' class sequence, counts of other-class rows above (by class in
    ``C``), u-blocks and runs, into the rows of ``ws_i`` (0, 1, 2, 6; 3 is scratch).
    Rows of one class on one line (equal s0 and u; duplicate documents) next to each other
    stay together for every t, so only a run's first row takes part in making and sorting
    the events; the sweep then expands each event into its runs' swaps."""
    n = len(idx)
    seq = ws_i[0, :n]  # scratch from the caller (no allocation per query)
    S = ws_i[1, :n]
    block = ws_i[2, :n]
    running = ws_i[3, :L]
    run = ws_i[6, :n]  # at a run's first row its length, else 0
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


@njit(cache=True, nogil=True)
def _crossing_events(s0, u, idx, L, ws_i, ws_f, ev_t, ev_pair):
    """The crossing events of a query's candidates (after :func:`_class_runs`, whose rows
    of ``ws_i`` it reads) into ``ev_t``/``ev_pair`` (down << 32 | up); returns their
    number."""
    n = len(idx)
    seq = ws_i[0, :n]
    running = ws_i[3, :L]
    run = ws_i[6, :n]
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
    return e


@njit(inline="always")
def _query_sweep(delta_fn, value_fn, s0, u, cls, idx, m, rule, c0, L, eps, found, ws):
    """Sweep one query (``m`` documents, ``idx`` its candidates); write its (t, delta,
    hazard) breakpoints into ``found`` = (out_t, out_d, out_h); return (base, count).
    ``rule`` as :func:`_sweep_drive` reads it.

    A *hazard* is a meeting of three or more documents (a group of events) reaching the
    top k: its value before and after may agree, but exactly at it (or within rounding of
    it) the tied documents may come out in an order whose value differs. Hazards are
    written (with their delta, possibly 0) so a chosen point can keep away from them. Two
    documents crossing without changing the metric are harmless: near their crossing the
    value is that of one side or the other, which are equal.
    """
    code, k, gc, rc, relc, disc, _, _ = rule
    out_t, out_d, out_h = found
    kk = top_cut(code, k, m, c0)
    ws_i, ws_C, ws_f, ws_e, ws_p, ws_k = ws  # this worker's scratch (see _sweep_drive)
    n = len(idx)  # the candidates, sorted by their order at t -> -inf
    C = ws_C[:n]
    _class_runs(s0, u, cls, idx, L, ws_i, C)  # scratch from the caller: no allocation
    seq = ws_i[0, :n]
    S = ws_i[1, :n]
    block = ws_i[2, :n]
    run = ws_i[6, :n]  # at a run's first row its length, else 0
    scale = _scale(code, k, c0)
    base = value_fn(seq, n, kk, k, gc, rc, relc, disc, c0, L)
    base *= 0.5 * scale if code == KTAU else scale
    # crossing events: i above j at -inf, u_i < u_j, so j passes i at t (len(out_t) of
    # them, counted by `candidates`; fewer between runs)
    if len(out_t) == 0:
        return base, 0
    ev_t = ws_e[0]
    ev_pair = ws_p[0]  # down << 32 | up: shifts, not divisions, decode it
    n_ev = _crossing_events(s0, u, idx, L, ws_i, ws_f, ev_t, ev_pair)
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
        # meetings and runs, handled in the same loop, would slow every event through
        # register pressure; as calls out of line, each would pass a score of arrays).
        # Unsigned indices: a signed one is tested for a negative value and wrapped at
        # every access, which nearly doubles the instructions of an event
        gu = np.uint64(g)
        ou = np.uint64(n_out)
        while gu < end:
            t0 = ts[gu]
            pr = pair_u[gu]
            hd = pr >> SHIFT32
            hu = pr & LOW_BITS
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
            g, value, n_out = _meeting(delta_fn, g, (ts, pair, run, block, seq), C, S,
                                       (kk, gc, rc, relc, disc, scale), L, eps, ws_p[0],
                                       ws_k[0], value, out_t, out_d, out_h, n_out)
    return base, n_out


@njit(inline="always")
def _sweep_drive(delta_fn, value_fn, s0, u, queries, rule, L, eps, ws, out, shift):
    """Per-query sweeps in parallel of the queries in ``order``; query q writes its
    breakpoints at offsets[q] (query q's outputs only are written). ``queries`` = (cls,
    qptr, order, cand, n_cand, offsets, c0, empty), the layout; ``rule`` = (code, k, gc,
    rc, relc, disc, empty_value, L), the metric along the line's classes. ``order`` is cut
    into :data:`BLOCKS_PER_THREAD` contiguous blocks per thread, of about equal work (see
    :meth:`~dfrank.metrics.BoundMetric.query_order`). Each thread reuses one set of
    scratch sized for the largest query, so it stays in cache: ``ws`` holds, with one row
    per thread (numba's thread id), class sequences / counts of other classes above /
    u-blocks / running counts / positions class by class / class starts / runs (int64,
    7 x max(max_n, L + 1)), per-class counts (int64, max_n x L), the candidates' s0 and u
    class by class (2 x max_n), event times unsorted and sorted (2 x max_ev), event pairs
    likewise (int64, 2 x max_ev) and the sort's keys (uint64, 2 x max_ev); ``out`` the
    outputs (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs). Each query's
    breakpoints are summed by bin while they are in cache
    (:func:`dfrank.linesearch.assemble.bin_runs`, bins of ``shift``). Inlined into one
    cached entry point per metric family (as in :mod:`dfrank.metrics._drivers`), so each
    family's code is compiled only when used."""
    cls, qptr, order, cand, n_cand, offsets, c0, empty = queries
    empty_value = rule[6]
    nq = len(order)  # the queries swept: all, or a part of them
    ws_i, ws_C, ws_f, ws_e, ws_p, ws_k = ws
    base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs = out
    nb = max(1, min(nq, BLOCKS_PER_THREAD * ws_i.shape[0]))
    for blk in prange(nb):  # blocks of `order`, taken by the threads as they come free
        w = get_thread_id()  # this thread's scratch
        for qi in range(blk * nq // nb, (blk + 1) * nq // nb):
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
            bq, cnt = _query_sweep(delta_fn, value_fn, s0, u, cls, idx, qptr[q + 1] - lo,
                                   rule, c0[q], L, eps, (out_t[a:b], out_d[a:b], out_h[a:b]),
                                   (ws_i[w], ws_C[w], ws_f[w], ws_e[w], ws_p[w], ws_k[w]))
            base[q] = bq
            n_out[q] = cnt
            n_runs[q] = bin_runs(out_t[a:b], out_d[a:b], cnt, runs[a:b], run_sp[a:b], shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_dcg(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_dcg, _v_dcg, s0, u, queries, rule, rule[7], eps, ws, out, shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_count(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_count, _v_count, s0, u, queries, rule, 2, eps, ws, out, shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_rr(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_rr, _v_rr, s0, u, queries, rule, 2, eps, ws, out, shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_ap(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_ap, _v_ap, s0, u, queries, rule, 2, eps, ws, out, shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_err(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_err, _v_err, s0, u, queries, rule, rule[7], eps, ws, out, shift)


@njit(cache=True, nogil=True, parallel=True)
def sweep_ktau(s0, u, queries, rule, eps, ws, out, shift):
    _sweep_drive(_d_ktau, _v_ktau, s0, u, queries, rule, rule[7], eps, ws, out, shift)


# The binary families (count, rr, ap) pass the class count as the constant 2, whatever L
# says (binary metrics always have two classes): every test on L then folds away at compile
# time.
SWEEPS = {NDCG: sweep_dcg, DCG: sweep_dcg, PREC: sweep_count, RECALL: sweep_count,
          RPREC: sweep_count, RR: sweep_rr, AP: sweep_ap, ERR: sweep_err, KTAU: sweep_ktau}

# the argument types of the sweeps, compiled by the warm-up (dfrank._jit.examples); a new
# user's first commands search lines of NDCG and AP
_ARGS = (arr(f8), arr(f8),
         tup(arr(i8), arr(i8), arr(i8), arr(i8), arr(i8), arr(i8), arr(f8), arr(b1)),
         tup(i8, i8, arr(f8), arr(f8), arr(i8), arr(f8), f8, i8), f8,
         tup(arr(i8, 3), arr(i8, 3), arr(f8, 3), arr(f8, 3), arr(i8, 3), arr(u8, 3)),
         tup(arr(f8), arr(i8), arr(f8), arr(f8), arr(b1), arr(i8), arr(f8, 2), arr(i8)), i8)
EXAMPLES = (declare("line search ndcg", (first(sweep_dcg, *_ARGS),), phase=0)
            + declare("line search map", (first(sweep_ap, *_ARGS),))
            + declare("line search precision", (later(sweep_count, *_ARGS),))
            + declare("line search rr", (later(sweep_rr, *_ARGS),))
            + declare("line search err", (later(sweep_err, *_ARGS),))
            + declare("line search kendall_tau", (later(sweep_ktau, *_ARGS),)))
