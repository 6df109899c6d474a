"""Kernels that turn the per-query breakpoints of a line into the mean metric's profile.

Each query's sweep (:mod:`dfrank.linesearch.sweep`) writes its breakpoints sorted by t: the t of
a change and the change. The mean metric on the line is their running sum in t order
across all queries, so the whole profile needs one sort of every breakpoint (hundreds of
thousands on OHSUMED MAP). The best interval alone does not:

*Bins.* The breakpoints fall into bins by the top ``BIN_BITS`` bits of their t's float32
rounding as an ordered integer (:func:`bin_of`): sign, exponent and a
few mantissa bits, so bins are narrow near 0 and wide far away, as crossings are. Each
query's breakpoints are summed by bin right after its sweep, while in cache
(:func:`bin_runs`); added up in query order they give each bin's sum of
changes ``S`` and ``P``, the sum over queries of each query's highest running sum in the
bin (at least 0; the profiles change by small steps of either sign). The value just
before bin b is ``base + pref[b]`` (``pref`` the prefix sums of ``S``); inside b each
query has added at most its highest running sum, so no interval whose breakpoint group
ends in b can be higher than ``base + pref[b] + P[b]``. :func:`best_interval` sorts only
the bins that bound can still put on top (a handful of 16,384 on the lines measured) and
:func:`assemble` sorts them all. (The sum of each query's rises, the bound first used, is
looser: on OHSUMED MAP it let best_interval sort 10-14 bins of 1,500 changes on some
lines, 1-1.8 ms.)

Both compute every value the same way, ``base + (pref[b] + R)`` with R the running sum of
bin b's changes in t order, so an interval's value is the same bit for bit whichever
kernel computed it, and does not depend on how many threads ran (per-query sums added in
query order; the threads of :func:`assemble` split its work at bin boundaries).
"""

import numpy as np
from numba import njit, prange

from .._kernels.chunks import PRANGE_ONLY
from .._kernels.sort import (_SHIFT32, _key32, _radix_high, gather_sorted, radix_argsort,
                             sort_pairs_into, sorted_copy)
from .choice import _wide, pick

CHAIN = 4.0  # breakpoints closer than CHAIN * eps (relative) may share a group: kept together
# The bins: the top BIN_BITS bits of a t's ordered float32 key (sign, exponent and a few
# mantissa bits), so bins are narrow near 0 and wide far away, as crossings are. Every
# kernel takes the shift as an argument and sizes its work from the arrays it is given,
# so nothing depends on a constant compiled into another module's cache.
BIN_BITS = 14
BIN_SHIFT = 32 - BIN_BITS
N_BINS = 1 << BIN_BITS


@njit(cache=True, inline="always")
def bin_of(t, shift):
    """The bin of t: the top 32 - ``shift`` bits of its ordered float32 key."""
    return np.int64(_key32(t) >> np.uint64(shift))


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


@njit(cache=True, nogil=True)
def bin_sums(runs, run_sp, offsets, n_runs, S, P, C, pref, fresh=True):
    """Each bin's sum of changes ``S``, bound on the rise inside it ``P`` (the queries'
    highest running sums) and its number of changes ``C``
    from the queries' runs (:func:`bin_runs`), added in query order
    (so the sums do not depend on how many threads swept); ``pref[b]`` = sum of S over
    the bins before b. With ``fresh`` False the sums go on from the bins' values, so
    queries given in consecutive parts add up exactly as given at once."""
    if fresh:
        for b in range(len(S)):
            S[b] = 0.0
            P[b] = 0.0
            C[b] = 0
    ru = runs.view(np.uint64)  # unsigned bins: no negative-index checks
    for q in range(len(n_runs)):
        for r in range(offsets[q], offsets[q] + n_runs[q]):
            b = ru[r] >> _SHIFT32
            S[b] += run_sp[r, 0]
            P[b] += run_sp[r, 1]
            C[b] += runs[r] & 0xFFFFFFFF
    acc = 0.0
    for b in range(len(S)):
        pref[b] = acc
        acc += S[b]
    pref[len(S)] = acc


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
def _apart(edges, r0, r1, eps):
    """No two of ``edges[r0:r1 + 1]`` (sorted) are within eps of each other (relative
    to the lower one): every row is a breakpoint group of its own."""
    apart = 1  # a branch-free test: the usual case
    for r in range(r0, r1):
        t0 = edges[r]
        apart &= 1 if edges[r + 1] - t0 > eps * max(1.0, abs(t0)) else 0
    return apart


@njit(cache=True, inline="always")
def _group_values(edges, values, total, eps, apart=-1):
    """Breakpoint groups in place: rows of ``edges[1:total + 1]`` closer than eps
    (relative to the group's first t) are one breakpoint, whose value is that after its
    last row. Returns the number of groups. ``apart``: whether :func:`_apart` holds for
    those rows, if known (-1: test it)."""
    if apart < 0:
        apart = _apart(edges, 1, total, eps)
    if apart:
        return total
    g = 0
    i = 0
    while i < total:  # group g (1-based) is written at g <= i + 1: never over unread rows
        t0 = edges[1 + i]
        lim = eps * max(1.0, abs(t0))
        j = i + 1
        while j < total and edges[1 + j] - edges[j] <= lim:
            j += 1
        g += 1
        edges[g] = t0
        values[g] = values[j]
        i = j
    return g


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


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY, error_model="numpy")  # no query averaged: NaN
def assemble(out_t, out_d, out_h, offsets, n_out, eps, base, n_eff, C, pref, cut, ka, kb, hz,
             ct, cd, shift):
    """All queries' breakpoints into one profile, after :func:`bin_sums` (its ``C`` and
    ``pref``). Returns ``(edges, values, hazards)``: the mean metric
    ``values[i]`` on ``(edges[i], edges[i + 1])``, edges[0] = -inf and edges[-1] = inf
    (``base`` is the sum of the queries' values at t -> -inf, ``n_eff`` the number of
    queries averaged), and the sorted hazard times. Scratch: ``cut`` (int64, parts + 1 x
    queries), ``ka``, ``kb`` (uint64), ``hz``, ``ct`` and ``cd``, as long as ``out_t``.

    The threads sort the parts (``cut``'s rows less one, several per thread, taken one at
    a time: ranges of bins with about as many changes as each other; part w of query q is
    ``cut[w, q]:cut[w + 1, q]``) stably by t: each part's changes are copied, in query
    order, next to each other (``ct``, ``cd``), with a sort key each: the float32
    rounded t (high word) and the copy's place (low word), radix sorted on the high word
    (see :func:`dfrank._kernels.sort._radix_pairs`); the copies are then read in that
    order, from a part's few MB rather than from all the sweep's outputs, an insertion
    step restoring the float64 order where the rounding tied, so equal t stay in query
    order. (Sequential, this step ran beside OpenMP workers still spinning after the sweep,
    which on this machine's two hardware threads cost it up to half its speed.) Near-equal
    t (closer than ``eps`` relative, as in the per-query sweeps) are one breakpoint."""
    nq = len(n_out)
    n_parts = cut.shape[0] - 1
    n_changes = 0
    for b in range(len(C)):
        n_changes += C[b]
    # part w starts at the bin where w / n_parts of the changes are (len(C): past them all)
    start = np.full(n_parts + 1, len(C), np.int64)
    acc = 0
    w = 1
    for b in range(len(C)):
        while w < n_parts and acc >= n_changes * w // n_parts:
            start[w] = b
            w += 1
        acc += C[b]
    blocks = max(1, min(nq, n_parts))
    for k in prange(blocks):  # each query's rows of each part: blocks of queries
        for q in range(k * nq // blocks, (k + 1) * nq // blocks):
            end = offsets[q] + n_out[q]
            cut[0, q] = offsets[q]
            for w in range(1, n_parts + 1):
                cut[w, q] = _first_bin_at(out_t, cut[w - 1, q], end, start[w], shift)
    rows = np.empty(n_parts, np.int64)
    for w in prange(n_parts):
        c = 0
        for q in range(nq):
            c += cut[w + 1, q] - cut[w, q]
        rows[w] = c
    room = np.zeros(n_parts + 1, np.int64)  # part w's keys start at room[w]
    for w in range(n_parts):
        room[w + 1] = room[w] + rows[w]
    n_ch = np.zeros(n_parts, np.int64)
    n_hz = np.zeros(n_parts, np.int64)
    for w in prange(n_parts):
        c = room[w]
        h = room[w]
        for q in range(nq):
            for i in range(cut[w, q], cut[w + 1, q]):
                if out_d[i] != 0.0:
                    ka[c] = (_key32(out_t[i]) << _SHIFT32) | np.uint64(c)
                    ct[c] = out_t[i]
                    cd[c] = out_d[i]
                    c += 1
                if out_h[i]:
                    hz[h] = out_t[i]
                    h += 1
        n_ch[w] = c - room[w]
        n_hz[w] = h - room[w]
    first = np.zeros(n_parts + 1, np.int64)  # part w's changes start at first[w]
    for w in range(n_parts):
        first[w + 1] = first[w] + n_ch[w]
    total = first[n_parts]
    edges = np.empty(total + 2)
    values = np.empty(total + 1)
    apart = np.ones(n_parts, np.int64)
    for w in prange(n_parts):
        a = room[w]
        t = edges[1 + first[w]:1 + first[w + 1]]
        d = values[1 + first[w]:1 + first[w + 1]]
        gather_sorted(_radix_high(ka[a:a + n_ch[w]], kb[a:a + n_ch[w]])[0], ct, cd,
                      t, d)  # rows whose t round alike: in order
        _binned_values(t, d, n_ch[w], base, pref, shift)
        for r in range(n_ch[w]):  # (grouping below moves values: divided alike)
            d[r] = d[r] / n_eff
        apart[w] = _apart(edges, 1 + first[w], first[w + 1], eps)
    together = 1
    for w in range(n_parts):  # and across parts: a part's first row after the last one
        together &= apart[w]
        if n_ch[w] > 0 and first[w] > 0:
            together &= _apart(edges, first[w], first[w] + 1, eps)
    edges[0] = -np.inf
    values[0] = base / n_eff
    g = _group_values(edges, values, total, eps, together)
    edges[g + 1] = np.inf
    n_h = 0
    for w in range(n_parts):
        n_h += n_hz[w]
    h = np.empty(n_h)
    c = 0
    for w in range(n_parts):
        for r in range(room[w], room[w] + n_hz[w]):
            h[c] = hz[r]
            c += 1
    return edges[:g + 2], values[:g + 1], sorted_copy(h)


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
def best_interval(out_t, out_d, out_h, offsets, n_out, eps, base, n_eff, S, P, C,
                  pref, min_width, tol, shift, wlo, whi, kept):
    """The ``"best"`` choice of :func:`dfrank.linesearch.choose` without sorting every
    breakpoint, after :func:`bin_sums`; on the segment [wlo, whi] (±inf: the whole line)
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
    best = first_value if has_first and _wide(f_lo, f_hi, min_width) else -np.inf
    lim0 = best - 4 * tol
    n_c = 0
    for b in range(top_bin + 1):
        n_c += 1 if C[b] > 0 else 0
    cand = np.empty(n_c, np.int64)
    negub = np.empty(n_c)
    n_c = 0
    for b in range(top_bin + 1):
        if C[b] > 0:
            ub = (base + (pref[b] + P[b])) / n_eff
            if ub >= lim0:
                cand[n_c] = b
                negub[n_c] = -ub
                n_c += 1
    order = radix_argsort(negub[:n_c])
    done = np.zeros(n_bins, np.uint8)
    lo_row = np.empty(nq, np.int64)
    hi_row = np.empty(nq, np.int64)
    # the intervals found (lower, upper, value), region after region: at most one per
    # change, in arrays (appending to numba lists cost 5 ns a row each, 0.4 ms on lines
    # that look at 10 bins of OHSUMED MAP); each region's first bin and first row
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
        # the region: b and its neighbours while breakpoints chain across the boundary
        b_lo = b
        b_hi = b
        before, after = _neighbours(out_t, out_d, offsets, n_out, b_lo, b_hi,
                                    lo_row, hi_row, shift)
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
                break
            before, after = _neighbours(out_t, out_d, offsets, n_out, b_lo, b_hi,
                                        lo_row, hi_row, shift)
        # the changes next to the region must be the true ones (past whi any will do)
        if _missing(kept, C, bin_of(before, shift) if before > -np.inf else 0, b_hi, False) \
                or _missing(kept, C, b_lo, min(top_bin, bin_of(after, shift))
                            if after < np.inf else top_bin, False):
            return -1, best, np.nan, np.nan, np.empty(0)
        for bb in range(b_lo, b_hi + 1):
            done[bb] = 1
        n = 0
        for q in range(nq):
            for i in range(lo_row[q], hi_row[q]):
                n += 1 if out_d[i] != 0.0 else 0
        gt = np.empty(n)  # the region's changes in query order, then stably sorted by t
        gi = np.empty(n, np.int64)
        n = 0
        for q in range(nq):
            for i in range(lo_row[q], hi_row[q]):
                if out_d[i] != 0.0:
                    gt[n] = out_t[i]
                    gi[n] = i
                    n += 1
        t = np.empty(n + 2)  # as assemble's edges and values: row r at r + 1
        v = np.empty(n + 1)
        srt = np.empty(n, np.int64)
        sort_pairs_into(gt, gi, np.empty(n, np.uint64), np.empty(n, np.uint64), t[1:], srt)
        for r in range(n):
            v[1 + r] = out_d[srt[r]]
        _binned_values(t[1:], v[1:], n, base, pref, shift)
        g = _group_values(t, v, n, eps)
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
            if _wide(lo_j, hi_j, min_width):
                best = max(best, v[j] / n_eff)
    # every interval that can matter, in t order: the first one, then region by region
    reg_row[n_reg] = n_r
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
        lower[0] = f_lo
        upper[0] = f_hi
        values[0] = first_value
    j = f
    for i in ro:
        for r in range(reg_row[i], reg_row[i + 1]):
            lower[j] = r_lo[r]
            upper[j] = r_hi[r]
            values[j] = r_v[r]
            j += 1
    ci = pick(lower, upper, values, values, min_width, tol, False)
    lo = lower[ci]
    hi = upper[ci]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return 0, values[ci], lo, hi, np.empty(0)
    if _missing(kept, C, bin_of(lo, shift), bin_of(hi, shift), True):  # its hazards
        return -1, best, np.nan, np.nan, np.empty(0)
    h = [0.0]  # the hazards strictly inside (lo, hi)
    h.pop()
    for q in range(nq):
        for i in range(_first_above(out_t, offsets[q], offsets[q] + n_out[q], lo),
                       offsets[q] + n_out[q]):
            if out_t[i] >= hi:
                break
            if out_h[i]:
                h.append(out_t[i])
    return 1, values[ci], lo, hi, sorted_copy(np.array(h, np.float64))
