"""The exact line search: the global maximum of the mean metric along a line of scores.

Scores move as s(t) = s0 + t u. Each query's metric is piecewise constant in t, so the mean
is too; :func:`line_profile` returns it whole (every breakpoint and the value on every
interval) from the per-query sweeps of :mod:`dfrank._linesearch`, and :func:`choose` picks a
point from it. :func:`line_search` does both, and for the ``"best"`` rule finds the chosen
interval without assembling the whole profile (:func:`dfrank._assemble.best_interval`);
the profile is then built only if asked for. See DESIGN.md, "Exact line search".
"""

from dataclasses import dataclass

import numba
import numpy as np

from . import _assemble as A
from . import _linesearch as K
from ._linesearch import flat_within_queries
from ._scratch import Scratch
from .metrics._rank import EXPECTED, STABLE
from .metrics.bound import _chunks

__all__ = ["LineResult", "LineProfile", "LineClasses", "line_profile", "line_search", "choose",
           "RULES"]

EPS = 1e-12        # crossings closer than this (relative) are one event (rounding)
MIN_WIDTH = 1e-9   # intervals narrower than this (relative) are never chosen
TOL = 1e-12        # values this close are equal when choosing


@dataclass(frozen=True)
class LineClasses:
    """How a metric sees labels along a line: a class per document, per-class constants."""
    cls: np.ndarray     # (n_docs,) int64 class of each row
    n_classes: int
    gain: np.ndarray    # (L,) graded gain of each class (DCG family)
    err_r: np.ndarray   # (L,) ERR stopping probability of each class
    rel: np.ndarray     # (L,) int64: 1 if the class counts as relevant (binary metrics)
    by_position: np.ndarray  # what a swap at position p reads: the discount (DCG family);
    #                          for AP the precision step 1/p - 1/(p + 1)

    @classmethod
    def of(cls, bound):
        """Classes for a :class:`~dfrank.metrics.BoundMetric`."""
        m = bound.metric
        y = bound.y
        reason = unsupported(m, bound.ties)
        if reason:
            raise ValueError(reason)
        if m.binary:
            c = (y >= m.rel_threshold).astype(np.int64)
            table = bound.disc
            if m.code == K.AP:
                p = np.arange(1.0, bound.max_m + 2.0)
                table = np.concatenate([[np.inf], 1.0 / p - 1.0 / (p + 1.0)])  # as 1/p - ...
            return cls(c, 2, np.zeros(2), np.zeros(2), np.array([0, 1], dtype=np.int64), table)
        values, c = np.unique(y, return_inverse=True)
        gain = (np.exp2(values) - 1.0) if m.gain == "exp" else values.copy()
        return cls(c.astype(np.int64).ravel(), len(values), gain, gain / bound.norm,
                   (values >= m.rel_threshold).astype(np.int64), bound.disc)


    def for_line(self, bound, s0, u):
        """The classes of one line under ``ties="expected"``.

        Along a line only identical lines (rows of one query with equal s0 and u) tie on a
        whole interval, and the expected value of a tied group of a metric that is a sum
        of per-position terms (DCG, NDCG, P@k, recall@k, R-precision) is its value with
        every member's gain replaced by the group's mean gain (McSherry & Najork 2008):
        each member is uniformly spread over the group's positions. So the classes are
        the distinct mean gains, and the sweep may order a group any way. Binary metrics
        become sums with the relevance indicator as gain and every discount 1."""
        m = bound.metric
        gain = (bound.y >= m.rel_threshold).astype(np.float64) if m.binary else bound.gains
        n = len(s0)
        qrow = np.repeat(np.arange(bound.n_queries), np.diff(bound.qptr))
        order = np.lexsort((u, s0, qrow))
        so, uo, qo = s0[order], u[order], qrow[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = (so[1:] != so[:-1]) | (uo[1:] != uo[:-1]) | (qo[1:] != qo[:-1])
        group = np.cumsum(new) - 1
        sums = np.bincount(group, weights=gain[order])
        sizes = np.bincount(group)
        mean = np.empty(n)
        mean[order] = (sums / sizes)[group]
        values, c = np.unique(mean, return_inverse=True)
        table = np.ones_like(bound.disc) if m.binary else bound.disc
        return LineClasses(c.astype(np.int64).ravel(), len(values), values,
                           np.zeros(len(values)), np.zeros(len(values), dtype=np.int64),
                           table)


EXPECTED_OK = (K.NDCG, K.DCG, K.PREC, K.RECALL, K.RPREC)  # sums over positions


def unsupported(metric, ties):
    """Why the exact line search cannot serve ``metric`` under ``ties`` (None if it can)."""
    if metric.is_custom:
        return (f"the exact line search needs a built-in metric; {metric.name!r} is "
                "user-defined (use line_search='steps')")
    if ties == "expected" and metric.code not in EXPECTED_OK:
        return (f"the exact line search cannot keep ties='expected' exact for "
                f"{metric.name!r} (its expected value over a tied group is not a sum over "
                "positions); use line_search='steps', or another tie policy")
    return None


@dataclass(frozen=True)
class LineProfile:
    """The mean metric on each interval of the line: ``values[i]`` on
    ``(lower[i], upper[i])``; the first interval starts at -inf, the last ends at +inf.

    Breakpoints are where the metric changes. ``hazards`` are meetings of several
    documents near the top whose value is the same on both sides but may differ exactly
    at the meeting (ties); :meth:`safe_point` steers a chosen t away from them.
    """
    lower: np.ndarray
    upper: np.ndarray
    values: np.ndarray
    hazards: np.ndarray = None  # sorted t of meetings to keep away from

    def value_at(self, t):
        """The mean metric at ``t`` (inside an interval)."""
        i = int(np.searchsorted(self.upper, t, side="left"))
        return float(self.values[min(i, len(self.values) - 1)])

    def safe_point(self, lo, hi, t):
        """``t`` if no hazard (a meeting of several documents near the top, where the
        value depends on how ties fall) lies near it inside (lo, hi); else the middle of
        the widest hazard-free stretch (nearest t among equals). For an unbounded interval
        the stretch considered runs from its finite end to t and as far again."""
        return safe_point(self.hazards, lo, hi, t)


def safe_point(hazards, lo, hi, t):
    """:meth:`LineProfile.safe_point` with the sorted hazard times ``hazards`` (or None)."""
    if hazards is None or hazards.size == 0:
        return t
    a = lo if np.isfinite(lo) else t - 2 * (hi - t)
    b = hi if np.isfinite(hi) else t + 2 * (t - lo)
    i, j = np.searchsorted(hazards, [a, b], side="right")
    inside = hazards[i:j]
    inside = inside[(inside > a) & (inside < b)]
    if inside.size == 0:
        return t
    margin = max(MIN_WIDTH * max(1.0, abs(t)), 1e-3 * (b - a))
    if np.abs(inside - t).min() > margin:
        return t
    edges = np.concatenate([[a], inside, [b]])
    gaps = np.diff(edges)
    mids = 0.5 * (edges[1:] + edges[:-1])
    best = np.flatnonzero(gaps >= gaps.max() * (1 - 1e-12))
    return float(mids[best[np.argmin(np.abs(mids[best] - t))]])


class DeferredProfile:
    """A :class:`LineProfile` built on first use (by ``make()``), with the same
    attributes and methods: a line search that chose its point without the whole profile
    leaves this in its result, and pays for the profile only if it is read."""

    def __init__(self, make):
        self._make = make
        self._profile = None

    def get(self):
        """The :class:`LineProfile` itself."""
        if self._profile is None:
            self._profile = self._make()
            self._make = None
        return self._profile

    def __getattr__(self, name):  # only for names not set in __init__
        return getattr(self.get(), name)

    def __reduce__(self):  # pickles (to another process) as the profile itself
        p = self.get()
        return LineProfile, (p.lower, p.upper, p.values, p.hazards)


@dataclass(frozen=True)
class LineResult:
    """Outcome of an exact line search.

    Attributes
    ----------
    value : float
        The mean metric on the chosen interval.
    t : float
        The chosen step: the middle of the chosen interval, or past the finite end of an
        unbounded one by the median interval width -- moved to the middle of the widest
        stretch free of crossings if documents that leave the metric unchanged cross near
        it (at a crossing scores tie and the value would depend on rounding).
    lower, upper : float
        The chosen interval (±inf when unbounded).
    n_crossings : int
        Crossings of differently labelled documents swept (after pruning).
    profile : LineProfile or DeferredProfile
        The whole piecewise-constant profile, for other choice rules (built when first
        read if the search did not need it).
    """
    value: float
    t: float
    lower: float
    upper: float
    n_crossings: int
    profile: LineProfile
    point: np.ndarray = None  # the new point, filled in by LinearObjective.line

    @property
    def width(self):
        return self.upper - self.lower


_NO_ORDER = np.empty(0, dtype=np.int64)


def sort_within_queries(u, qptr):
    """Row indices with each query's rows sorted by ``u`` (stable; 0.44 ms with numpy's
    lexsort on OHSUMED, paid on each coordinate's first line search)."""
    out = np.empty(len(u), np.int64)
    K.rows_by_u(np.ascontiguousarray(u, dtype=np.float64), qptr, out)
    return out


@dataclass(frozen=True)
class _Breakpoints:
    """Every query's breakpoints along a line and their sums by bin (views into a
    scratch; see K.SWEEPS and :func:`dfrank._assemble.bin_sums`)."""
    out_t: np.ndarray
    out_d: np.ndarray
    out_h: np.ndarray
    offsets: np.ndarray
    n_out: np.ndarray
    base: float     # sum of the averaged queries' values at t -> -inf
    n_eff: int      # queries averaged
    total: int      # crossings swept
    bins: tuple     # (S, P, C, pref) of bin_sums


def _sweep(bound, classes, s0, u, u_order, ws):
    """The per-query sweeps along s0 + t u, summed by bin: a :class:`_Breakpoints`."""
    m = bound.metric
    code = m.code
    ties = bound.tie_code
    sweep = K.SWEEPS[code]
    if ties == EXPECTED:  # mean-gain classes: every order of a tied group is equal
        classes = classes.for_line(bound, s0, u)
        ties = STABLE
        sweep = K.sweep_dcg
    nq = bound.n_queries
    L = classes.n_classes
    threads = numba.get_num_threads()
    # every buffer is a view kept in ws.views from one line to the next, made again only
    # when the sizes outgrow it: right after the kernels, each Python step runs 3-4x
    # slower than warm, and the score of ws.get calls this replaced cost 90-150 us a line
    fixed = ws.views.get("line")
    if fixed is None or fixed[0] != (bound, len(s0), threads):
        fixed = ws.views["line"] = (
            (bound, len(s0), threads), ws.get("cand", len(s0), np.int64),
            ws.get("n_cand", nq, np.int64), ws.get("n_events", nq, np.int64),
            ws.get("offsets", nq + 1, np.int64), ws.get("base", nq),
            ws.get("n_out", nq, np.int64), ws.get("n_runs", nq, np.int64),
            bound.query_order(), max(1, min(nq, _chunks())),
            min(nq, threads),  # workers: query_order deals to as many
            (ws.get("bin_S", K.N_BINS), ws.get("bin_P", K.N_BINS),
             ws.get("bin_C", K.N_BINS, np.int64), ws.get("bin_pref", K.N_BINS + 1)))
    _, cand, n_cand, n_events, offsets, base, n_out, n_runs, qorder, n_chunks, n_workers, \
        bins = fixed
    total, max_n, max_ev = K.candidates(
        code, s0, u, bound.y, classes.cls, L, bound.qptr, qorder, m.k, ties,
        bound.c0, bound.empty, code in K.PRUNABLE and m.k > 0,
        _NO_ORDER if u_order is None else u_order, n_chunks, cand, n_cand, n_events, offsets)
    out = ws.views.get("line_out")  # as long as the longest line so far
    if out is None or len(out[0]) < total:
        out = ws.views["line_out"] = (
            ws.get("out_t", total), ws.get("out_d", total), ws.get("out_h", total, np.bool_),
            ws.get("runs", total, np.int64), ws.get("run_sp", (total, 2)))
    out_t, out_d, out_h, runs, run_sp = out
    # the sweep's per-worker scratch, likewise; its sizes are its shapes (sweep_C: workers
    # x rows x classes, sweep_e: workers x 2 x events)
    sw = ws.views.get("line_sweep")
    if sw is None or sw[1].shape[0] != n_workers or sw[1].shape[2] != L or \
            sw[1].shape[1] < max_n or sw[3].shape[2] < max_ev:
        if sw is not None:  # never shrink
            max_n, max_ev = max(max_n, sw[1].shape[1]), max(max_ev, sw[3].shape[2])
        sw = ws.views["line_sweep"] = (
            ws.get("sweep_i", (n_workers, 7, max(max_n, L + 1)), np.int64),
            ws.get("sweep_C", (n_workers, max_n, L), np.int64),
            ws.get("sweep_f", (n_workers, 2, max_n)),
            ws.get("sweep_e", (n_workers, 2, max_ev)),
            ws.get("sweep_p", (n_workers, 2, max_ev), np.int64),
            ws.get("sweep_k", (n_workers, 2, max_ev), np.uint64))
    sweep(code, s0, u, bound.y, classes.cls, bound.qptr, qorder, cand, n_cand,
                   offsets, m.k, ties, classes.gain, classes.err_r, classes.rel,
                   classes.by_position, bound.c0, bound.empty, bound.empty_value, L, EPS,
                   sw, base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs)
    if m.empty == "skip":
        live = ~bound.empty
        n_eff = int(live.sum())
        base_sum = float(base[live].sum())
    else:
        n_eff = nq
        base_sum = float(base.sum())
    A.bin_sums(runs, run_sp, offsets, n_runs, *bins)
    return _Breakpoints(out_t, out_d, out_h, offsets, n_out, base_sum, n_eff, total, bins)


def _assembled(bp, ws):
    """The whole :class:`LineProfile` of a line's :class:`_Breakpoints`."""
    S, P, C, pref = bp.bins
    total = bp.total
    edges, values, hazards = A.assemble(
        bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out, EPS, bp.base, float(bp.n_eff),
        C, pref, ws.get("cut", (numba.get_num_threads() + 1, len(bp.n_out)), np.int64),
        ws.get("keys", total, np.uint64), ws.get("keys2", total, np.uint64),
        ws.get("hazards", total))
    return LineProfile(edges[:-1], edges[1:], values, hazards)


def _flat_profile(bound, s0):
    value = float(bound.mean(bound.per_query(s0)))
    return LineProfile(np.array([-np.inf]), np.array([np.inf]), np.array([value]))


def line_profile(bound, classes, s0, u, u_order=None, scratch=None):
    """The profile of ``bound``'s mean metric along s0 + t u (all t in R).

    ``u_order`` (optional, from :func:`sort_within_queries`) saves sorting by u when the
    same direction is searched many times; ``scratch`` (a :class:`dfrank._scratch.Scratch`)
    keeps the work buffers from one call to the next. Returns
    ``(LineProfile, n_crossings)``.
    """
    if flat_within_queries(u, bound.qptr):  # no document ever passes another
        return _flat_profile(bound, s0), 0
    ws = Scratch() if scratch is None else scratch
    bp = _sweep(bound, classes, s0, u, u_order, ws)
    return _assembled(bp, ws), bp.total


def line_search(bound, classes, s0, u, *, rule="best", window=None, floor=-np.inf,
                u_order=None, scratch=None):
    """The exact line search along s0 + t u: :func:`choose` on :func:`line_profile`, the
    same :class:`LineResult` bit for bit. With the ``"best"`` rule the chosen interval is
    found from the few bins of breakpoints that can hold it, unless it is unbounded (its
    point needs the median width of all intervals); the result's profile is then a
    :class:`DeferredProfile`, which sweeps the line again when read (s0 and u are copied
    for it)."""
    if rule not in RULES:
        raise ValueError(f"unknown line-search rule {rule!r}; known: {sorted(RULES)}")
    if flat_within_queries(u, bound.qptr):
        return choose(_flat_profile(bound, s0), 0, rule=rule, window=window, floor=floor)
    ws = Scratch() if scratch is None else scratch
    bp = _sweep(bound, classes, s0, u, u_order, ws)
    if rule == "best" and bp.n_eff > 0:
        found, value, lo, hi, hazards = A.best_interval(
            bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out, EPS, bp.base,
            float(bp.n_eff), *bp.bins, MIN_WIDTH, TOL)
        if found:
            t = safe_point(hazards, lo, hi, 0.5 * (lo + hi))
            s0c, uc = s0.copy(), u.copy()
            profile = DeferredProfile(lambda: line_profile(bound, classes, s0c, uc, u_order)[0])
            return LineResult(float(value), t, float(lo), float(hi), bp.total, profile)
    return choose(_assembled(bp, ws), bp.total, rule=rule, window=window, floor=floor)


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
            w = hi - lo
            w = w[np.isfinite(w)]
            k = (w.size - 1) // 2
            median_width = float(np.partition(w, k)[k]) if w.size else -1.0
        return median_width

    if rule == "plateau":
        if window is None:
            window = step() if step() > 0 else 1.0
        i = K.plateau_pick(lo, hi, v, step(), float(window), float(floor), min_width, tol)
        if i < 0:  # wide windows: every interval's window minimum, sliding
            score = K.window_min(v, lo, hi, K.middles(lo, hi, step()), float(window))
            if np.isfinite(floor):
                low = v < floor - tol
                if not low.all():
                    score = np.where(low, -np.inf, score)
            i = K.pick(lo, hi, v, score, min_width, tol, True)
    else:
        i = K.pick(lo, hi, v, v, min_width, tol, False)
    if np.isfinite(lo[i]) and np.isfinite(hi[i]):
        t = 0.5 * (lo[i] + hi[i])
    else:
        t = float(K.middles(lo[i:i + 1], hi[i:i + 1], step())[0])
    t = profile.safe_point(float(lo[i]), float(hi[i]), t)
    return LineResult(float(v[i]), t, float(lo[i]), float(hi[i]), int(n_crossings), profile)


RULES = ("best", "plateau")
