"""Kernels that turn the per-query breakpoints of a line into the mean metric's profile.

Each query's sweep (:mod:`dfrank.linesearch.sweep`) writes its breakpoints sorted by t: the t of
a change and the change. The mean metric on the line is their running sum in t order
across all queries, so the whole profile needs one sort of every breakpoint (hundreds of
thousands on OHSUMED MAP). The best interval alone does not:

*Bins.* The breakpoints fall into bins by the top ``BIN_BITS`` bits of their t's float32
rounding as an ordered integer (:func:`bin_of`): sign, exponent and a
few mantissa bits, so bins are narrow near 0 and wide far away, as crossings are. Each
query's breakpoints are summed by bin right after its sweep, while in cache
(:func:`bin_runs`); added up (:func:`bin_sums`) they give each bin's sum of
changes ``S`` and ``P``, the sum over queries of each query's highest running sum in the
bin (at least 0; the profiles change by small steps of either sign). The value just
before bin b is ``base + pref[b]`` (``pref`` the prefix sums of ``S``); inside b each
query has added at most its highest running sum, so no interval whose breakpoint group
ends in b can be higher than ``base + pref[b] + P[b]``. :func:`best_interval` sorts only
the bins that bound can still put on top (a handful of thousands, on LETOR's lines) and
:func:`assemble` sorts them all, bin by bin (the buckets of a bucket sort). (The sum of
each query's rises would be a looser bound, leaving many more bins to sort.)

Both compute every value the same way, ``base + (pref[b] + R)`` with R the running sum of
bin b's changes in t order, so an interval's value is the same bit for bit whichever
kernel computed it, and does not depend on how many threads ran (per-query sums added in
fixed blocks of queries; the threads of :func:`assemble` split its work at bin boundaries).
"""

import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, later, njit, omitted, tup, u1
from .._kernels.chunks import PRANGE_ONLY
from .._kernels.sort import (SHIFT32, count_digits, insert, key32, radix_passes,
                             gather_sorted, radix_argsort, sort_pairs_into, sorted_copy)
from .choice import wide, pick

CHAIN = 4.0  # breakpoints closer than CHAIN * eps (relative) may share a group: kept together
# The bins: the top BIN_BITS bits of a t's ordered float32 key (sign, exponent and a few
# mantissa bits), so bins are narrow near 0 and wide far away, as crossings are. Every
# kernel takes the shift as an argument and sizes its work from the arrays it is given,
# so nothing depends on a constant compiled into another module's cache.
BIN_BITS = 14
BIN_SHIFT = 32 - BIN_BITS
N_BINS = 1 << BIN_BITS
SHORT_BIN = 32  # bins of at most this many changes are sorted by insertion (assemble)
SUM_BLOCKS = 8  # bin_sums adds the queries' runs in this many blocks of queries at most,
SUM_CELLS = 8 * N_BINS  # whose rows of sums hold this many bins in all at most,
SUM_FROM = 1 << 18  # on lines of this many runs or more (sum_blocks)


@njit(cache=True, inline="always")
def bin_of(t, shift):
    """The bin of t: the top 32 - ``shift`` bits of its ordered float32 key."""
    return np.int64(key32(t) >> np.uint64(shift))


@njit(cache=True, nogil=True)
def bin_runs(out_t, out_d, n, runs, run_sp, shift):
    """One query's breakpoints (sorted by t) summed by bin: for each run of rows in one bin,
    ``runs[r] = bin << 32 | number of changes`` and ``run_sp[r] = (sum of changes, highest
    running sum of the changes, at least 0)``. Returns the number of runs. The sums stay
    in registers (per bin in memory, each would wait on the previous store)."""
    n_r = 0
    cur = -1
    s = 0.0
    p = 0.0
    c = 0
    for i in range(n):
        d = out_d[i]
        b = bin_of(out_t[i], shift)
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


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY)
def runs_of_rows(out_t, out_d, offsets, n_out, runs, run_sp, n_runs, shift):
    """Every query's :func:`bin_runs`, at its rows' offset (``n_runs[q]`` of them): the
    runs a sweep makes beside its rows, made again from the rows alone (for breakpoints
    sent without them, :mod:`dfrank.linesearch.split`). Queries in parallel."""
    for q in prange(len(n_out)):
        a = offsets[q]
        b = a + n_out[q]
        n_runs[q] = bin_runs(out_t[a:b], out_d[a:b], n_out[q], runs[a:b], run_sp[a:b],
                             shift)


@njit(cache=True, nogil=True)
def packed_rows(out_t, out_d, out_h, offsets, n_out, ft, fd, fh):
    """Each query's ``n_out[q]`` rows from ``offsets[q]``, one query after another from
    the start of ``ft`` (and ``fd``, ``fh``): a sweep's rows without the gaps it left."""
    at = 0
    for q in range(len(n_out)):
        a = offsets[q]
        for i in range(n_out[q]):
            ft[at + i] = out_t[a + i]
            fd[at + i] = out_d[a + i]
            fh[at + i] = out_h[a + i]
        at += n_out[q]


@njit(cache=True, nogil=True)
def _first_bin_at(out_t, lo, hi, b, shift):
    """The first row of ``out_t[lo:hi]`` (sorted) whose bin is >= b (binary search)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if bin_of(out_t[mid], shift) < b:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _add_runs(runs, run_sp, offsets, n_runs, q0, q1, S, P, C):
    """Queries q0..q1-1's runs added onto the bins' sums, in query order."""
    ru = runs.view(np.uint64)  # unsigned bins: no negative-index checks
    for q in range(q0, q1):
        for r in range(offsets[q], offsets[q] + n_runs[q]):
            b = ru[r] >> SHIFT32
            S[b] += run_sp[r, 0]
            P[b] += run_sp[r, 1]
            C[b] += runs[r] & 0xFFFFFFFF


def sum_blocks(n_runs, n_bins):
    """The blocks of queries :func:`bin_sums` adds ``n_runs``' runs in: one below
    :data:`SUM_FROM` runs (a block's row of sums costs more than it saves), else up to
    :data:`SUM_BLOCKS` (fewer for fewer queries, and for more bins: the rows hold
    :data:`SUM_CELLS` bins at most in all). The data decide, never the threads."""
    if int(n_runs.sum()) < SUM_FROM:
        return 1
    return max(1, min(SUM_BLOCKS, len(n_runs), SUM_CELLS // n_bins))


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY)
def bin_sums(runs, run_sp, offsets, n_runs, S, P, C, pref, fresh=True, blocks=1):
    """Each bin's sum of changes ``S``, bound on the rise inside it ``P`` (the queries'
    highest running sums) and its number of changes ``C`` from the queries' runs
    (:func:`bin_runs`); ``pref[b]`` = sum of S over the bins before b. With ``fresh``
    False the sums go on from the bins' values (a line swept in parts).

    The queries are cut into ``blocks`` blocks (:func:`sum_blocks`; at most one a
    query), each summed in query order into its own row, in parallel; the rows are then
    added in block order onto the bins, by ranges of bins in parallel. One block adds its
    runs straight onto the bins. The sums depend on the blocks, never on the threads."""
    nq = len(n_runs)
    n_bins = len(S)
    if fresh:
        for b in range(n_bins):
            S[b] = 0.0
            P[b] = 0.0
            C[b] = 0
    blocks = max(1, min(blocks, nq))
    if blocks == 1:
        _add_runs(runs, run_sp, offsets, n_runs, 0, nq, S, P, C)
    else:
        bS = np.empty((blocks, n_bins))
        bP = np.empty((blocks, n_bins))
        bC = np.empty((blocks, n_bins), np.int64)
        for k in prange(blocks):   # each block clears its own row
            bS[k, :] = 0.0
            bP[k, :] = 0.0
            bC[k, :] = 0
            _add_runs(runs, run_sp, offsets, n_runs, k * nq // blocks,
                      (k + 1) * nq // blocks, bS[k], bP[k], bC[k])
        for k in prange(blocks):
            for b in range(k * n_bins // blocks, (k + 1) * n_bins // blocks):
                for j in range(blocks):
                    S[b] += bS[j, b]
                    P[b] += bP[j, b]
                    C[b] += bC[j, b]
    acc = 0.0
    for b in range(n_bins):
        pref[b] = acc
        acc += S[b]
    pref[n_bins] = acc


@njit(cache=True, nogil=True)
def kept_rows(out_t, out_d, out_h, offsets, n_out, kept, shift, ft, fd, fh, at):
    """Each query's rows whose bin is ``kept``, in order: query q's at ``ft[at[q]:]``
    (and ``fd``, ``fh``). With empty ``ft`` only counts them: returns the counts."""
    nq = len(n_out)
    n = np.zeros(nq, np.int64)
    write = len(ft) > 0
    for q in range(nq):
        c = 0
        for i in range(offsets[q], offsets[q] + n_out[q]):
            if kept[bin_of(out_t[i], shift)]:
                if write:
                    ft[at[q] + c] = out_t[i]
                    fd[at[q] + c] = out_d[i]
                    fh[at[q] + c] = out_h[i]
                c += 1
        n[q] = c
    return n


@njit(cache=True, inline="always")
def _group_range(t, v, r0, r1, eps):
    """Breakpoint groups of rows r0..r1-1 of ``t`` (sorted changes' times) and ``v`` (the
    values after them), in place from row r0: rows closer than eps (relative to the
    group's first t) to the row before are one breakpoint, at the group's first t, whose
    value is that after its last row. Returns the number of groups. Rows are written only
    from the first group of more than one row on (the usual line has none or few)."""
    g = r0
    i = r0
    while i < r1:  # group g is written at g <= i: never over unread rows
        t0 = t[i]
        lim = eps * max(1.0, abs(t0))
        j = i + 1
        while j < r1 and t[j] - t[j - 1] <= lim:
            j += 1
        if g != i or j != i + 1:
            t[g] = t0
            v[g] = v[j - 1]
        g += 1
        i = j
    return g - r0


@njit(cache=True, inline="always")
def _binned_values(t, d, n, base, pref, shift):
    """``d[r]`` (changes sorted by t) replaced by the value after row r: base + (pref[b] +
    the running sum of bin b's changes up to r)."""
    b_prev = -1
    run = 0.0
    for r in range(n):
        b = bin_of(t[r], shift)
        if b != b_prev:
            run = 0.0
            b_prev = b
        run += d[r]
        d[r] = base + (pref[b] + run)


@njit(cache=True, inline="always")
def _ranges(pos, nz, n):
    """``n`` ranges of the bins with changes ``nz`` (then len(pos) - 1), with about as
    many changes as each other (``pos``: where each bin's changes start, and their total):
    range w is nz[start[w]]..nz[start[w + 1]] - 1, from the bin where w / n of the
    changes are."""
    m = len(nz) - 1
    total = pos[len(pos) - 1]
    start = np.full(n + 1, m, np.int64)
    start[0] = 0
    k = 1
    for i in range(m):
        while k < n and pos[nz[i]] >= total * k // n:
            start[k] = i
            k += 1
    return start


@njit(cache=True, inline="always")
def _sort_bin(ct, cd, n, ka, kb, tt, td):
    """Rows 0..n-1 of ``ct``/``cd`` (one bin's changes, in query order) sorted stably by t
    into ``tt``/``td``: short bins by insertion; longer ones by two 9-bit radix passes
    over the float32 key's bits below the bin's (``ka``, ``kb``: uint64 scratch), then
    :func:`gather_sorted`, whose insertion step orders the rows that round alike."""
    if n <= SHORT_BIN:
        for r in range(n):
            insert(tt, td, 0, r, ct[r], cd[r])
        return
    for r in range(n):
        ka[r] = (key32(ct[r]) << SHIFT32) | np.uint64(r)
    count = count_digits(ka[:n], 9, 2, 32)
    gather_sorted(radix_passes(ka[:n], kb[:n], count, 9, 2, 32)[0], ct, cd, tt, td)


@njit(cache=True, nogil=True)
def _bin_places(C):
    """Where each bin's changes go when bins are laid end to end (bin b's at
    ``pos[b]:pos[b + 1]``), and the bins with changes followed by the number of bins."""
    n_bins = len(C)
    pos = np.empty(n_bins + 1, np.int64)
    nz = np.empty(n_bins + 1, np.int64)
    acc = 0
    m = 0
    for b in range(n_bins):
        pos[b] = acc
        if C[b] > 0:
            nz[m] = b
            m += 1
        acc += C[b]
    pos[n_bins] = acc
    nz[m] = n_bins
    return pos, nz[:m + 1]


@njit(cache=True, nogil=True)
def _gathered_hazards(hz, n_hz, cap, rows):
    """The hazards :func:`assemble`'s copy ranges kept (range w's ``n_hz[w]`` at ``hz[w *
    cap:]``), sorted; every row of ``rows`` is read again when a range had more than its
    room."""
    out_t, _, out_h, offsets, n_out = rows
    h = np.empty(n_hz.sum())
    c = 0
    for w in range(len(n_hz)):
        if n_hz[w] > cap:
            c = 0
            for q in range(len(n_out)):
                for i in range(offsets[q], offsets[q] + n_out[q]):
                    if out_h[i]:
                        h[c] = out_t[i]
                        c += 1
            break
        for r in range(n_hz[w]):
            h[c] = hz[w * cap + r]
            c += 1
    return sorted_copy(h)


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY, error_model="numpy")  # no query averaged: NaN
def assemble(rows, eps, base, n_eff, C, pref, n_copies, n_parts, scratch, shift):
    """All queries' breakpoints ``rows`` = (out_t, out_d, out_h, offsets, n_out) into one
    profile, after :func:`bin_sums` (its ``C`` and ``pref``). Returns ``(edges, values,
    hazards)``: the mean metric ``values[i]`` on ``(edges[i], edges[i + 1])``, edges[0] =
    -inf and edges[-1] = inf (``base`` is the sum of the queries' values at t -> -inf,
    ``n_eff`` the number of queries averaged), and the sorted hazard times. ``scratch`` =
    (hz, ct, cd), each as long as ``out_t``.

    A bucket sort whose buckets are the bins: ``C`` tells where each bin's changes go, so
    each of ``n_copies`` ranges of bins with about as many changes as each other copies
    its changes, query after query, into their bins' places in ``ct``/``cd`` (each range
    but the first finds its first row in every query by a binary search: one range per
    thread); then each of ``n_parts`` such ranges (taken by the threads one at a time)
    sorts each of its bins stably by t while it is in cache (:func:`_sort_bin`; bins hold
    a few thousand changes at most on the lines measured) and writes the values after
    its rows, as :func:`best_interval` does.
    Near-equal t (closer than ``eps`` relative, as in the per-query sweeps) are one
    breakpoint (:func:`_group_range`): each part groups from its first row that is
    :func:`_clear` of the row before, which every grouping starts a group at, so the
    parts' groups are those of one pass over all rows; they are then copied next to each
    other into ``edges``/``values``. Equal t stay in query order, and nothing depends on
    the number of parts."""
    out_t, out_d, out_h, offsets, n_out = rows
    hz, ct, cd = scratch
    nq = len(n_out)
    pos, nz = _bin_places(C)
    m = len(nz) - 1
    n_ch = pos[len(C)]
    start = _ranges(pos, nz, n_parts)
    copy_start = _ranges(pos, nz, n_copies)
    fill = pos.copy()
    cap = len(hz) // n_copies  # range w's hazards: hz[w * cap:], unless more than cap
    n_hz = np.zeros(n_copies, np.int64)
    over = np.zeros(n_copies, np.int64)  # changes past their bin's count
    for w in prange(n_copies):  # each range's changes into their bins, query after query
        b_lo = nz[copy_start[w]]
        b_hi = nz[copy_start[w + 1]]
        h = 0
        for q in range(nq):
            e = offsets[q] + n_out[q]
            i = offsets[q] if w == 0 else _first_bin_at(out_t, offsets[q], e, b_lo, shift)
            while i < e:
                t = out_t[i]
                b = bin_of(t, shift)
                if b >= b_hi:
                    break
                if out_d[i] != 0.0:
                    r = fill[b]
                    if r < pos[b + 1]:
                        fill[b] = r + 1
                        ct[r] = t
                        cd[r] = out_d[i]
                    else:
                        over[w] += 1
                if out_h[i]:
                    if h < cap:
                        hz[w * cap + h] = t
                    h += 1
                i += 1
        n_hz[w] = h
    bad = over.sum() > 0
    for i in range(m):
        bad |= fill[nz[i]] != pos[nz[i] + 1]
    if bad:
        raise ValueError("assemble: the bins' counts C do not match the changes given")
    for w in prange(n_parts):  # each bin sorted in cache, and the values after its rows
        most = 0
        for i in range(start[w], start[w + 1]):
            most = max(most, C[nz[i]])
        ka = np.empty(most, np.uint64)
        kb = np.empty(most, np.uint64)
        tt = np.empty(most)
        td = np.empty(most)
        for i in range(start[w], start[w + 1]):
            b = nz[i]
            n = C[b]
            p0 = pos[b]
            _sort_bin(ct[p0:p0 + n], cd[p0:p0 + n], n, ka, kb, tt, td)
            _binned_values(tt, td, n, base, pref, shift)
            for r in range(n):
                ct[p0 + r] = tt[r]
                cd[p0 + r] = td[r] / n_eff
    # groups: part w groups rows s[w]..s[w + 1] - 1; s[w] is the first row from its own
    # that is clear of the row before (a group starts there however the rows before were
    # grouped, while n_ch * eps keeps a group's first t within 2x of its last, see
    # _clear); the first such row from an earlier part's rows is never later
    s = np.empty(n_parts + 1, np.int64)
    s[0] = 0
    s[n_parts] = n_ch
    for w in prange(1, n_parts):
        r = pos[nz[start[w]]]
        if n_ch * eps > 0.5:  # one group could span more than CHAIN allows for: one part
            r = n_ch
        while 0 < r < n_ch and not _clear(ct[r - 1], ct[r], eps):
            r += 1
        s[w] = r
    g = np.empty(n_parts, np.int64)
    for w in prange(n_parts):
        g[w] = _group_range(ct, cd, s[w], s[w + 1], eps)
    at = np.zeros(n_parts + 1, np.int64)  # part w's groups: rows at[w] + 1.. of edges
    for w in range(n_parts):
        at[w + 1] = at[w] + g[w]
    edges = np.empty(at[n_parts] + 2)
    values = np.empty(at[n_parts] + 1)
    for w in prange(n_parts):
        for r in range(g[w]):
            edges[1 + at[w] + r] = ct[s[w] + r]
            values[1 + at[w] + r] = cd[s[w] + r]
    edges[0] = -np.inf
    values[0] = base / n_eff
    edges[at[n_parts] + 1] = np.inf
    return edges, values, _gathered_hazards(hz, n_hz, cap, rows)


@njit(cache=True, inline="always")
def _clear(a, b, eps):
    """Breakpoints at a < b can never share a group (see CHAIN)."""
    return b - a > CHAIN * eps * max(1.0, abs(a), abs(b))


@njit(cache=True, nogil=True)
def _neighbours(out_t, out_d, offsets, n_out, b_lo, b_hi, lo_row, hi_row, shift):
    """Per query, the rows of bins b_lo..b_hi (``lo_row[q]:hi_row[q]``); returns the last
    change's t before them and the first change's t after them over all queries (-inf /
    inf if none; rows without a change, hazards only, are not breakpoints)."""
    before = -np.inf
    after = np.inf
    for q in range(len(n_out)):
        a = offsets[q]
        e = a + n_out[q]
        lo_row[q] = _first_bin_at(out_t, a, e, b_lo, shift)
        hi_row[q] = _first_bin_at(out_t, lo_row[q], e, b_hi + 1, shift)
        i = lo_row[q] - 1
        while i >= a and out_d[i] == 0.0:
            i -= 1
        if i >= a:
            before = max(before, out_t[i])
        i = hi_row[q]
        while i < e and out_d[i] == 0.0:
            i += 1
        if i < e:
            after = min(after, out_t[i])
    return before, after


@njit(cache=True, nogil=True)
def _first_above(out_t, lo, hi, x):
    """The first row of ``out_t[lo:hi]`` (sorted) with t > x."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if out_t[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _missing(kept, C, b_lo, b_hi, every):
    """A bin of b_lo..b_hi whose rows were not kept (with ``every`` False, only bins with
    changes count). An empty ``kept`` keeps every bin."""
    if len(kept) == 0:
        return False
    for b in range(max(b_lo, 0), min(b_hi, len(C) - 1) + 1):
        if kept[b] == 0 and (every or C[b] > 0):
            return True
    return False


@njit(cache=True, nogil=True)
def _bins_above(C, P, pref, base, n_eff, top_bin, lim):
    """The bins up to ``top_bin`` with changes whose bound ``(base + pref[b] + P[b]) /
    n_eff`` is at least ``lim``, and their bounds negated (the sort key)."""
    n_c = 0
    for b in range(top_bin + 1):
        n_c += 1 if C[b] > 0 else 0
    cand = np.empty(n_c, np.int64)
    negub = np.empty(n_c)
    n_c = 0
    for b in range(top_bin + 1):
        if C[b] > 0:
            ub = (base + (pref[b] + P[b])) / n_eff
            if ub >= lim:
                cand[n_c] = b
                negub[n_c] = -ub
                n_c += 1
    return cand[:n_c], negub[:n_c]


@njit(cache=True, nogil=True)
def _region(out_t, out_d, offsets, n_out, b, lo_row, hi_row, shift, eps):
    """The region of bin ``b``: it and its neighbours while breakpoints chain across the
    boundary (closer than ``eps``, relative). Returns (first bin, last bin, the change
    before it, the change after it); each query's rows in it are ``lo_row[q]:hi_row[q]``."""
    nq = len(n_out)
    b_lo = b
    b_hi = b
    before, after = _neighbours(out_t, out_d, offsets, n_out, b_lo, b_hi, lo_row, hi_row,
                                shift)
    while True:
        first_t = np.inf
        last_t = -np.inf
        for q in range(nq):  # the region's first and last changes
            for i in range(lo_row[q], hi_row[q]):
                if out_d[i] != 0.0:
                    first_t = min(first_t, out_t[i])
                    break
            for i in range(hi_row[q] - 1, lo_row[q] - 1, -1):
                if out_d[i] != 0.0:
                    last_t = max(last_t, out_t[i])
                    break
        grow = False
        if before > -np.inf and not _clear(before, first_t, eps):
            b_lo = bin_of(before, shift)
            grow = True
        if after < np.inf and not _clear(last_t, after, eps):
            b_hi = bin_of(after, shift)
            grow = True
        if not grow:
            return b_lo, b_hi, before, after
        before, after = _neighbours(out_t, out_d, offsets, n_out, b_lo, b_hi, lo_row,
                                    hi_row, shift)


@njit(cache=True, nogil=True)
def _region_changes(out_t, out_d, lo_row, hi_row, base, pref, shift):
    """A region's changes (rows ``lo_row[q]:hi_row[q]`` of each query) stably sorted by t,
    as :func:`assemble`'s edges and values: row r at r + 1 of ``t`` (n + 2 long) and
    ``v`` (n + 1), the values the sums from the bins' prefix on."""
    n = 0
    for q in range(len(lo_row)):
        for i in range(lo_row[q], hi_row[q]):
            n += 1 if out_d[i] != 0.0 else 0
    gt = np.empty(n)  # the region's changes in query order, then stably sorted by t
    gi = np.empty(n, np.int64)
    n = 0
    for q in range(len(lo_row)):
        for i in range(lo_row[q], hi_row[q]):
            if out_d[i] != 0.0:
                gt[n] = out_t[i]
                gi[n] = i
                n += 1
    t = np.empty(n + 2)
    v = np.empty(n + 1)
    srt = np.empty(n, np.int64)
    sort_pairs_into(gt, gi, np.empty(n, np.uint64), np.empty(n, np.uint64), t[1:], srt)
    for r in range(n):
        v[1 + r] = out_d[srt[r]]
    _binned_values(t[1:], v[1:], n, base, pref, shift)
    return t, v


@njit(cache=True, nogil=True)
def _hazards_inside(out_t, out_h, offsets, n_out, lo, hi):
    """The hazards strictly inside (lo, hi), sorted."""
    h = [0.0]
    h.pop()
    for q in range(len(n_out)):
        for i in range(_first_above(out_t, offsets[q], offsets[q] + n_out[q], lo),
                       offsets[q] + n_out[q]):
            if out_t[i] >= hi:
                break
            if out_h[i]:
                h.append(out_t[i])
    return sorted_copy(np.array(h, np.float64))


@njit(cache=True, nogil=True)
def _in_t_order(found, reg_bin, reg_row, has_first, first):
    """The intervals ``found`` = (lower, upper, value) region after region (region i's
    rows ``reg_row[i]:reg_row[i + 1]``, its first bin ``reg_bin[i]``) in t order, after
    the ``first`` interval (lower, upper, value) when there is one."""
    r_lo, r_hi, r_v = found
    n_reg = len(reg_bin)
    n_r = reg_row[n_reg]
    ro = np.empty(n_reg, np.int64)  # the regions in t order (a few: insertion sort)
    for i in range(n_reg):
        j = i
        while j > 0 and reg_bin[ro[j - 1]] > reg_bin[i]:
            ro[j] = ro[j - 1]
            j -= 1
        ro[j] = i
    f = 1 if has_first else 0
    lower = np.empty(n_r + f)
    upper = np.empty(n_r + f)
    values = np.empty(n_r + f)
    if has_first:
        lower[0] = first[0]
        upper[0] = first[1]
        values[0] = first[2]
    j = f
    for i in ro:
        for r in range(reg_row[i], reg_row[i + 1]):
            lower[j] = r_lo[r]
            upper[j] = r_hi[r]
            values[j] = r_v[r]
            j += 1
    return lower, upper, values


@njit(cache=True, nogil=True)
def best_interval(rows, eps, base, n_eff, bins, min_width, tol, shift, segment, kept):
    """The ``"best"`` choice of :func:`dfrank.linesearch.choose` without sorting every
    breakpoint ``rows`` = (out_t, out_d, out_h, offsets, n_out), after :func:`bin_sums`
    (its ``bins`` = (S, P, C, pref)); on the ``segment`` [wlo, whi] (±inf: the whole line)
    it is the choice on the profile's ``within(wlo, whi)``. Returns ``(status, value, lower,
    upper, hazards)``: the chosen interval, its value and the hazards strictly inside it
    (sorted). ``status`` is 1 when found; 0 when the choice is an unbounded interval (its
    point needs the median width of all intervals, so the caller assembles the whole
    profile); -1 when a bin it had to read is not in ``kept`` (per bin, 1 if the
    breakpoints given hold all of that bin's rows; empty: they hold every bin), so the
    caller must give it more bins: ``value`` is then the best eligible value found (a
    bound from below on the answer's).

    Bins are looked at in decreasing order of their bound ``(base + pref[b] + P[b]) /
    n_eff`` until the bound falls 4 tol below the best eligible value found: every interval
    within tol of the best is then among those looked at, and :func:`pick` chooses among
    them, in t order, exactly as among all. A bin looked at is sorted together with its
    neighbours while their breakpoints are closer than CHAIN eps (so every breakpoint
    group is whole), and its intervals reach to the next breakpoint after it; on a segment
    they are cut at its ends and those outside it dropped."""
    out_t, out_d, out_h, offsets, n_out = rows
    S, P, C, pref = bins
    wlo, whi = segment
    nq = len(n_out)
    n_bins = len(S)
    first_value = base / n_eff
    top_bin = n_bins - 1 if whi == np.inf else bin_of(whi, shift)  # later changes: past whi
    first_t = np.inf  # the first change, which ends the interval (-inf, first_t)
    for q in range(nq):
        for i in range(offsets[q], offsets[q] + n_out[q]):
            if out_d[i] != 0.0:
                first_t = min(first_t, out_t[i])
                break
    b_first = 0
    while b_first < n_bins and C[b_first] == 0:
        b_first += 1
    if b_first < n_bins and _missing(kept, C, 0, b_first, False):
        return -1, -np.inf, np.nan, np.nan, np.empty(0)
    # the first interval, cut to the segment (absent when the segment starts after it)
    f_lo = wlo
    f_hi = min(first_t, whi)
    has_first = f_hi > f_lo
    best = first_value if has_first and wide(f_lo, f_hi, min_width) else -np.inf
    lim0 = best - 4 * tol
    cand, negub = _bins_above(C, P, pref, base, n_eff, top_bin, lim0)
    n_c = len(cand)
    order = radix_argsort(negub)
    done = np.zeros(n_bins, np.uint8)
    lo_row = np.empty(nq, np.int64)
    hi_row = np.empty(nq, np.int64)
    # the intervals found (lower, upper, value), region after region: at most one per
    # change, in arrays (appending to numba lists costs more a row); each region's first
    # bin and first row
    n_changes = min(C.sum(), n_out.sum())
    r_lo = np.empty(n_changes)
    r_hi = np.empty(n_changes)
    r_v = np.empty(n_changes)
    n_r = 0
    reg_bin = np.empty(n_c, np.int64)
    reg_row = np.empty(n_c + 1, np.int64)
    n_reg = 0
    for oi in range(n_c):
        b = cand[order[oi]]
        if -negub[order[oi]] < best - 4 * tol:
            break
        if done[b]:
            continue
        b_lo, b_hi, before, after = _region(out_t, out_d, offsets, n_out, b, lo_row,
                                            hi_row, shift, eps)
        # the changes next to the region must be the true ones (past whi any will do)
        if _missing(kept, C, bin_of(before, shift) if before > -np.inf else 0, b_hi, False) \
                or _missing(kept, C, b_lo, min(top_bin, bin_of(after, shift))
                            if after < np.inf else top_bin, False):
            return -1, best, np.nan, np.nan, np.empty(0)
        for bb in range(b_lo, b_hi + 1):
            done[bb] = 1
        t, v = _region_changes(out_t, out_d, lo_row, hi_row, base, pref, shift)
        n = len(v) - 1
        g = _group_range(t[1:], v[1:], 0, n, eps)
        t[g + 1] = after  # the last group's interval reaches the next change
        reg_bin[n_reg] = b_lo
        reg_row[n_reg] = n_r
        n_reg += 1
        for j in range(1, g + 1):
            lo_j = max(t[j], wlo)
            hi_j = min(t[j + 1], whi)
            if hi_j <= lo_j:  # outside the segment
                continue
            r_lo[n_r] = lo_j
            r_hi[n_r] = hi_j
            r_v[n_r] = v[j] / n_eff
            n_r += 1
            if wide(lo_j, hi_j, min_width):
                best = max(best, v[j] / n_eff)
    # every interval that can matter, in t order: the first one, then region by region
    reg_row[n_reg] = n_r
    lower, upper, values = _in_t_order((r_lo, r_hi, r_v), reg_bin[:n_reg], reg_row[:n_reg + 1],
                                       has_first, (f_lo, f_hi, first_value))
    ci = pick(lower, upper, values, values, min_width, tol, False)
    lo = lower[ci]
    hi = upper[ci]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return 0, values[ci], lo, hi, np.empty(0)
    if _missing(kept, C, bin_of(lo, shift), bin_of(hi, shift), True):  # its hazards
        return -1, best, np.nan, np.nan, np.empty(0)
    return 1, values[ci], lo, hi, _hazards_inside(out_t, out_h, offsets, n_out, lo, hi)


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("line search ndcg", (
    first(assemble, tup(arr(f8), arr(f8), arr(b1), arr(i8), arr(i8)), f8, f8, f8, arr(i8),
          arr(f8), i8, i8, tup(arr(f8), arr(f8), arr(f8)), i8),
    first(best_interval, tup(arr(f8), arr(f8), arr(b1), arr(i8), arr(i8)), f8, f8, f8,
          tup(arr(f8), arr(f8), arr(i8), arr(f8)), f8, f8, i8, tup(f8, f8), arr(u1)),
    first(bin_sums, arr(i8), arr(f8, 2), arr(i8), arr(i8), arr(f8), arr(f8), arr(i8), arr(f8),
          omitted(True), i8),
    later(bin_sums, arr(i8), arr(f8, 2), arr(i8), arr(i8), arr(f8), arr(f8), arr(i8), arr(f8),
          b1, i8),
    later(kept_rows, arr(f8), arr(f8), arr(b1), arr(i8), arr(i8), arr(u1), i8, arr(f8),
          arr(f8), arr(b1), arr(i8)),
    first(runs_of_rows, arr(f8), arr(f8), arr(i8), arr(i8), arr(i8), arr(f8, 2), arr(i8), i8),
    first(packed_rows, arr(f8), arr(f8), arr(b1), arr(i8), arr(i8), arr(f8), arr(f8), arr(b1)),
), phase=0)
