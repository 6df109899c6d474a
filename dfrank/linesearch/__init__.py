"""The exact line search: the global maximum of the mean metric along a line of scores.

Scores move as s(t) = s0 + t u. Each query's metric is piecewise constant in t, so the mean
is too; :func:`line_profile` returns it whole (every breakpoint and the value on every
interval) and :func:`choose` picks a point from it. :func:`line_search` does both, and for
the ``"best"`` rule finds the chosen interval without assembling the whole profile; the
profile is then built only if asked for. See DESIGN.md, "Exact line search".

The stages, a module each:

* :mod:`.candidates` -- per query, the rows that can matter, in their order at t -> -inf;
* :mod:`.sweep` -- each query's sweep over its crossings: breakpoints, summed by bin;
* :mod:`.assemble` -- the profile (or only the best interval) from the breakpoints;
* :mod:`.choice` -- a point of the profile, by the ``"best"`` or ``"plateau"`` rule;

with :mod:`.classes` (how a metric sees the documents) and :mod:`.profile` (what a line
search returns).
"""

from dataclasses import dataclass

import numba
import numpy as np

from .._kernels.scratch import Scratch
from ..metrics._rank import EXPECTED, STABLE
from ..metrics.bound import _chunks
from .assemble import BIN_SHIFT, N_BINS, best_interval, bin_sums
from .assemble import assemble as assemble_profile   # the module keeps its name
from .sweep import SWEEPS, sweep_dcg
from .candidates import PRUNABLE, candidates, direction_kind, flat_within_queries, rows_by_u
from .choice import RULES, TOL, choose
from .classes import LineClasses, unsupported
from .profile import MIN_WIDTH, DeferredProfile, LineProfile, LineResult, safe_point

__all__ = ["LineResult", "LineProfile", "LineClasses", "line_profile", "line_search", "choose",
           "RULES", "unsupported", "sort_within_queries", "flat_within_queries",
           "direction_kind"]

EPS = 1e-12        # crossings closer than this (relative) are one event (rounding)


_NO_ORDER = np.empty(0, dtype=np.int64)


def sort_within_queries(u, qptr):
    """Row indices with each query's rows sorted by ``u`` (stable; 0.44 ms with numpy's
    lexsort on OHSUMED, paid on each coordinate's first line search)."""
    out = np.empty(len(u), np.int64)
    rows_by_u(np.ascontiguousarray(u, dtype=np.float64), qptr, out)
    return out


@dataclass(frozen=True)
class _Breakpoints:
    """Every query's breakpoints along a line and their sums by bin (views into a
    scratch; see :data:`.sweep.SWEEPS` and :func:`.assemble.bin_sums`)."""
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
    sweep = SWEEPS[code]
    if ties == EXPECTED:  # mean-gain classes: every order of a tied group is equal
        classes = classes.for_line(bound, s0, u)
        ties = STABLE
        sweep = sweep_dcg
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
            (ws.get("bin_S", N_BINS), ws.get("bin_P", N_BINS),
             ws.get("bin_C", N_BINS, np.int64), ws.get("bin_pref", N_BINS + 1)))
    _, cand, n_cand, n_events, offsets, base, n_out, n_runs, qorder, n_chunks, n_workers, \
        bins = fixed
    total, max_n, max_ev = candidates(
        code, s0, u, bound.y, classes.cls, L, bound.qptr, qorder, m.k, ties,
        bound.c0, bound.empty, code in PRUNABLE and m.k > 0,
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
          sw, base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs, BIN_SHIFT)
    if m.empty == "skip":
        live = ~bound.empty
        n_eff = int(live.sum())
        base_sum = float(base[live].sum())
    else:
        n_eff = nq
        base_sum = float(base.sum())
    bin_sums(runs, run_sp, offsets, n_runs, *bins)
    return _Breakpoints(out_t, out_d, out_h, offsets, n_out, base_sum, n_eff, total, bins)


def _assembled(bp, ws):
    """The whole :class:`LineProfile` of a line's :class:`_Breakpoints`."""
    S, P, C, pref = bp.bins
    total = bp.total
    edges, values, hazards = assemble_profile(
        bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out, EPS, bp.base, float(bp.n_eff),
        C, pref, ws.get("cut", (numba.get_num_threads() + 1, len(bp.n_out)), np.int64),
        ws.get("keys", total, np.uint64), ws.get("keys2", total, np.uint64),
        ws.get("hazards", total), BIN_SHIFT)
    return LineProfile(edges[:-1], edges[1:], values, hazards)


def _flat_profile(bound, s0):
    value = float(bound.mean(bound.per_query(s0)))
    return LineProfile(np.array([-np.inf]), np.array([np.inf]), np.array([value]))


def line_profile(bound, classes, s0, u, u_order=None, scratch=None):
    """The profile of ``bound``'s mean metric along s0 + t u (all t in R).

    ``u_order`` (optional, from :func:`sort_within_queries`) saves sorting by u when the
    same direction is searched many times; ``scratch`` (a :class:`dfrank._kernels.scratch.Scratch`)
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
        found, value, lo, hi, hazards = best_interval(
            bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out, EPS, bp.base,
            float(bp.n_eff), *bp.bins, MIN_WIDTH, TOL, BIN_SHIFT)
        if found:
            t = safe_point(hazards, lo, hi, 0.5 * (lo + hi))
            s0c, uc = s0.copy(), u.copy()
            profile = DeferredProfile(lambda: line_profile(bound, classes, s0c, uc, u_order)[0])
            return LineResult(float(value), t, float(lo), float(hi), bp.total, profile)
    return choose(_assembled(bp, ws), bp.total, rule=rule, window=window, floor=floor)
