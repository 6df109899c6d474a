"""The line search's last stage: a point from the profile of a line, by the ``"best"`` or
the ``"plateau"`` rule (:func:`choose`), kept away from the hazards of tied meetings
(:meth:`~dfrank.linesearch.LineProfile.safe_point`). The kernels below pick the interval;
:func:`choose` turns it into a :class:`~dfrank.linesearch.LineResult`."""

import numba
import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, later, njit
from .._kernels.chunks import PRANGE_ONLY
from .._kernels.sort import sorted_copy
from .profile import MIN_WIDTH, LineResult

__all__ = ["choose", "RULES", "MIN_WIDTH", "TOL"]

TOL = 1e-12        # values this close are equal when choosing
RULES = ("best", "plateau")
# profiles with more intervals than this find their median width and plateau in parallel
PARALLEL_FROM = 1 << 16


def choose(profile, n_crossings=0, rule="best", window=None, floor=-np.inf,
           min_width=MIN_WIDTH, tol=TOL):
    """Pick a point of a :class:`LineProfile` and return a :class:`LineResult`.

    Rules
    -----
    ``"best"``
        The highest value; among equal values the interval nearest t = 0 (an interval
        containing 0 is at distance 0); its middle.
    ``"plateau"``
        Among the intervals whose value is at least ``floor`` (a coordinate ascent passes
        its current value, so it never goes down), the one whose worst value within
        ``window`` of its middle is highest (ties: higher own value, then nearest 0):
        prefers wide plateaus over narrow peaks, which generalize poorly and strand the
        next line search. ``window`` defaults to the median interval width (the lower
        middle one for an even count).

    Intervals narrower than ``min_width`` (relative to |t|) are never chosen: they are
    rounding artefacts where crossings coincide.
    """
    if rule not in RULES:
        raise ValueError(f"unknown line-search rule {rule!r}; known: {sorted(RULES)}")
    lo, hi, v = profile.lower, profile.upper, profile.values
    if len(v) == 1:
        return LineResult(float(v[0]), 0.0, -np.inf, np.inf, int(n_crossings), profile)
    median_width = None

    def step():  # the median width of the bounded intervals (a selection, O(n))
        nonlocal median_width
        if median_width is None:  # the lower median: one selection (np.median makes two)
            if len(lo) > PARALLEL_FROM:   # numba's own chunks: see median_width_of
                median_width = float(median_width_of(lo, hi, numba.get_num_threads()))
            else:
                w = hi - lo
                w = w[np.isfinite(w)]
                k = (w.size - 1) // 2
                median_width = float(np.partition(w, k)[k]) if w.size else -1.0
        return median_width

    if rule == "plateau":
        if window is None:
            window = step() if step() > 0 else 1.0
        threads = numba.get_num_threads()
        if len(v) > PARALLEL_FROM and threads > 1:   # one piece per thread
            i = plateau_pick_parts(lo, hi, v, step(), float(window), float(floor), min_width,
                                   tol, threads)
        else:
            i = plateau_pick(lo, hi, v, step(), float(window), float(floor), min_width, tol)
        if i < 0:  # wide windows: every interval's window minimum, sliding
            score = window_min(v, lo, hi, middles(lo, hi, step()), float(window))
            if np.isfinite(floor):
                low = v < floor - tol
                if not low.all():
                    score = np.where(low, -np.inf, score)
            i = pick(lo, hi, v, score, min_width, tol, True)
    else:
        i = pick(lo, hi, v, v, min_width, tol, False)
    if np.isfinite(lo[i]) and np.isfinite(hi[i]):
        t = 0.5 * (lo[i] + hi[i])
    else:
        t = float(middles(lo[i:i + 1], hi[i:i + 1], step())[0])
    t = profile.safe_point(float(lo[i]), float(hi[i]), t)
    return LineResult(float(v[i]), t, float(lo[i]), float(hi[i]), int(n_crossings), profile)


@njit(cache=True, inline="always")
def _bucket(w):
    """The top 16 bits of a non-negative width's float64 pattern (sign, exponent, four
    mantissa bits): a bucket number that never decreases as the width grows."""
    return np.int64(np.float64(w).view(np.uint64) >> np.uint64(48))


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY)
def median_width_of(lower, upper, parts):
    """The lower median of the finite widths ``upper - lower`` (the k-th smallest of the n
    finite ones, k = (n - 1) // 2), or -1.0 when none is finite: ``np.partition``'s value,
    found by ``parts`` pieces in parallel, which count the widths by :func:`_bucket`; the
    widths of the bucket where the count passes k are then gathered and sorted.

    Not to be called inside :func:`~dfrank._kernels.chunks.one_at_a_time`: with numba's
    chunk size 1 it runs two orders of magnitude slower, as if more than its ``prange``
    loops were handed out one iteration at a time."""
    n = len(lower)
    nb = 1 << 16
    count = np.empty((parts, nb), np.int64)
    finite = np.empty(parts, np.int64)
    for p in prange(parts):   # each piece clears and fills its own row of counts
        row = count[p]
        for b in range(nb):
            row[b] = 0
        c = 0
        for i in range(p * n // parts, (p + 1) * n // parts):
            w = upper[i] - lower[i]
            if np.isfinite(w):
                row[_bucket(w)] += 1
                c += 1
        finite[p] = c
    total = 0
    for p in range(parts):
        total += finite[p]
    if total == 0:
        return -1.0
    per_bucket = np.empty(nb, np.int64)
    for blk in prange(16):   # the pieces' counts added per bucket, 16 blocks of buckets
        for b in range(blk * (nb // 16), (blk + 1) * (nb // 16)):
            c = 0
            for p in range(parts):
                c += count[p, b]
            per_bucket[b] = c
    k = (total - 1) // 2
    below = 0
    target = 0
    for b in range(nb):
        c = per_bucket[b]
        if below + c > k:
            target = b
            break
        below += c
    at = np.zeros(parts + 1, np.int64)   # each piece's place among the bucket's widths
    for p in range(parts):
        at[p + 1] = at[p] + count[p, target]
    bucket = np.empty(at[parts])
    for p in prange(parts):
        j = at[p]
        for i in range(p * n // parts, (p + 1) * n // parts):
            w = upper[i] - lower[i]
            if np.isfinite(w) and _bucket(w) == target:
                bucket[j] = w
                j += 1
    return sorted_copy(bucket)[k - below]


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
def wide(lo, hi, min_width):
    """The interval (lo, hi) may be chosen: unbounded, or wider than min_width relative
    to |t|."""
    if np.isfinite(lo) and np.isfinite(hi):
        return hi - lo > min_width * max(1.0, abs(lo), abs(hi))
    return True


@njit(cache=True, inline="always")
def _eligible(lower, upper, i, min_width):
    """Interval i may be chosen (:func:`wide`)."""
    return wide(lower[i], upper[i], min_width)


@njit(cache=True, nogil=True)
def middles(lower, upper, step):
    """A point inside each interval: the middle of bounded ones; past the finite end of an
    unbounded one by ``step`` (the median width of the bounded ones, given by the caller;
    or max(1, |end|) when there is none, ``step <= 0``)."""
    n = len(lower)
    mid = np.empty(n)
    for i in range(n):
        mid[i] = _middle(lower, upper, i, step)
    return mid


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, inline="always")
def _part_best(lower, upper, values, step, w, lim, any_high, min_width, i0, i1, budget,
               best):
    """The highest window minimum of the eligible intervals i0..i1 - 1 and ``best`` (an
    interval whose own value is not above the best so far cannot beat it: skipped), and
    the neighbours looked at (counting stops past ``budget``)."""
    looked = 0
    for i in range(i0, i1):
        v = values[i]
        if v <= best or (any_high and v < lim) or not _eligible(lower, upper, i, min_width):
            continue
        sc, n_looked = _window_score(lower, upper, values, i, step, w)
        looked += n_looked
        if looked > budget:
            break
        best = max(best, sc)
    return best, looked


@njit(cache=True, inline="always")
def _part_value(lower, upper, values, step, w, lim, any_high, min_width, tol, best, i0, i1):
    """The highest own value among the intervals i0..i1 - 1 whose window minimum is within
    tol of ``best``."""
    vbest = -np.inf
    for i in range(i0, i1):
        v = values[i]
        if v < best - tol or v <= vbest or (any_high and v < lim) or \
                not _eligible(lower, upper, i, min_width):
            continue
        if _window_score(lower, upper, values, i, step, w)[0] >= best - tol:
            vbest = v
    return vbest


@njit(cache=True, inline="always")
def _part_nearest(lower, upper, values, step, w, lim, any_high, min_width, tol, best, vbest,
                  i0, i1):
    """Among the intervals i0..i1 - 1 within tol of ``best`` and of ``vbest``, the first
    nearest to t = 0 and its distance (-1 and inf if none)."""
    chosen = -1
    dbest = np.inf
    for i in range(i0, i1):
        v = values[i]
        if v < best - tol or v < vbest - tol or (any_high and v < lim) or \
                not _eligible(lower, upper, i, min_width):
            continue
        d = lower[i] if lower[i] > 0 else (-upper[i] if upper[i] < 0 else 0.0)
        if d < dbest and _window_score(lower, upper, values, i, step, w)[0] >= best - tol:
            dbest = d
            chosen = i
    return chosen, dbest


@njit(cache=True, inline="always")
def _plateau_pick(lower, upper, values, step, w, floor, min_width, tol, parts):
    """:func:`plateau_pick` over ``parts`` pieces of the intervals (a ``prange`` when
    inlined into a parallel kernel): each piece's best window minimum, highest own value
    and nearest interval, combined in piece order. Every step is a maximum or a first
    minimum, so the choice is the one of a single piece; only the neighbours looked at
    (each piece prunes by its own best) depend on ``parts``, and with them whether the
    budget sends the caller to the sliding-window path, which picks the same interval."""
    n = len(values)
    budget = 8 * n + 1000
    lim = floor - tol
    any_high = False
    for i in range(n):
        if values[i] >= lim:
            any_high = True
            break
    bests = np.empty(parts)
    looked = np.empty(parts, np.int64)
    for p in prange(parts):
        b, n_looked = _part_best(lower, upper, values, step, w, lim, any_high, min_width,
                                 p * n // parts, (p + 1) * n // parts, budget, -np.inf)
        bests[p] = b
        looked[p] = n_looked
    best = -np.inf
    total = 0
    for p in range(parts):
        best = max(best, bests[p])
        total += looked[p]
    if total > budget:
        return -1
    # among the best (within tol): the highest own value, then the nearest to t = 0
    for p in prange(parts):
        bests[p] = _part_value(lower, upper, values, step, w, lim, any_high, min_width, tol,
                               best, p * n // parts, (p + 1) * n // parts)
    vbest = -np.inf
    for p in range(parts):
        vbest = max(vbest, bests[p])
    firsts = np.empty(parts, np.int64)
    for p in prange(parts):
        c, d = _part_nearest(lower, upper, values, step, w, lim, any_high, min_width, tol,
                             best, vbest, p * n // parts, (p + 1) * n // parts)
        firsts[p] = c
        bests[p] = d
    chosen = -1
    dbest = np.inf
    for p in range(parts):
        if bests[p] < dbest:
            dbest = bests[p]
            chosen = firsts[p]
    return chosen


@njit(cache=True, nogil=True)
def plateau_pick(lower, upper, values, step, w, floor, min_width, tol):
    """:func:`pick` of the ``"plateau"`` rule without a window minimum for every interval:
    an interval's window minimum is at most its own value, so only intervals whose value
    could still reach the best window minimum are looked at (intervals narrower than
    ``min_width`` are never chosen; below ``floor`` neither, unless every interval is).
    Returns -1 when that would look at more than 8 neighbours an interval (wide windows
    over rising values): the caller then takes the sliding-window path."""
    return _plateau_pick(lower, upper, values, step, w, floor, min_width, tol, 1)


@njit(cache=True, nogil=True, parallel=PRANGE_ONLY)
def plateau_pick_parts(lower, upper, values, step, w, floor, min_width, tol, parts):
    """:func:`plateau_pick` by ``parts`` pieces in parallel: the same choice (and -1 when
    the pieces together look at too many neighbours)."""
    return _plateau_pick(lower, upper, values, step, w, floor, min_width, tol, parts)


@njit(cache=True, nogil=True)
def pick(lower, upper, values, score, min_width, tol, by_value):
    """Index of the chosen interval: eligible (unbounded, or wider than min_width relative
    to |t|), highest ``score`` (within tol), then highest value if ``by_value``, then the
    nearest to t = 0 (distance 0 if it contains 0); the first of equals.

    Only intervals scoring within 2 tol of the top score are looked at closely (the top
    one is almost always eligible); when that cannot settle it, all are."""
    n = len(values)
    t0 = t1 = t2 = t3 = -np.inf  # the maximum in four chains: max waits on the previous
    i = 0  # max (4 cycles), the bottleneck of a single chain
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


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("line search ndcg", (
    later(median_width_of, arr(f8), arr(f8), i8),
    first(middles, arr(f8), arr(f8), f8),
    later(pick, arr(f8), arr(f8), arr(f8), arr(f8), f8, f8, b1),
    first(plateau_pick, arr(f8), arr(f8), arr(f8), f8, f8, f8, f8, f8),
    later(plateau_pick_parts, arr(f8), arr(f8), arr(f8), f8, f8, f8, f8, f8, i8),
    first(window_min, arr(f8), arr(f8), arr(f8), arr(f8), f8),
), phase=0)
