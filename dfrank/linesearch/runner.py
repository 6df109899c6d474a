"""The line search's driver: the stages run in turn over the queries of a line.

:func:`line_profile` returns the mean metric along a line whole (every breakpoint and the
value on every interval); :func:`line_search` finds the chosen interval, for the ``"best"``
rule (on the whole line or a segment) without assembling the whole profile. A line with
more crossings than :data:`PART_CROSSINGS` is swept a part of the queries at a time, so its
memory is bounded (:func:`_best_in_parts`). See DESIGN.md, "Exact line search"; the stages
are described in the package's docstring (:mod:`dfrank.linesearch`).
"""

from dataclasses import dataclass

import numba
import numpy as np

from .._kernels.chunks import one_at_a_time
from .._kernels.scratch import Scratch
from ..metrics._rank import EXPECTED, STABLE
from ..metrics.bound import n_chunks
from .assemble import (BIN_SHIFT, N_BINS, best_interval, bin_of, bin_sums, kept_rows,
                       sum_blocks)
from .assemble import assemble as assemble_profile   # the module keeps its name
from .._jit import ahead, wait_for
from . import assemble as _assemble
from . import candidates as _candidates
from . import choice as _choice
from . import sweep as _sweeps
from .sweep import BLOCKS_PER_THREAD, SWEEPS, sweep_dcg
from .candidates import (HULL_GAIN, HULL_SAMPLE, HULL_SAMPLE_FROM, PRUNABLE, candidates,
                         flat_within_queries, rows_by_u)
from .choice import RULES, TOL, choose
from .classes import LineClasses
from .profile import MIN_WIDTH, DeferredProfile, LineProfile, LineResult, safe_point

__all__ = ["line_profile", "line_search", "sort_within_queries", "compile_sweep_ahead",
           "versions",
           "EPS", "PART_CROSSINGS"]

EPS = 1e-12        # crossings closer than this (relative) are one event (rounding)
# lines with more crossings than this are swept a part of the queries at a time (two
# passes, see _best_in_parts): ~41 bytes a crossing, so about 86 MB of outputs
PART_CROSSINGS = 1 << 21
PART_BIN_BITS = 18  # and summed in finer bins than BIN_BITS (bounds on fewer changes)


_NO_ORDER = np.empty(0, dtype=np.int64)
_NO_T = np.empty(0)
_NO_H = np.empty(0, dtype=np.bool_)
_NO_KEPT = np.empty(0, dtype=np.uint8)   # best_interval: every bin's rows are given


def sort_within_queries(u, qptr):
    """Row indices with each query's rows sorted by ``u`` (stable; a kernel, not numpy's
    lexsort, since it is paid on each coordinate's first line search)."""
    out = np.empty(len(u), np.int64)
    rows_by_u(np.ascontiguousarray(u, dtype=np.float64), qptr, out)
    return out


@dataclass(frozen=True)
class Breakpoints:
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


@dataclass(frozen=True)
class _Line:
    """A line's candidates (:func:`.candidates.candidates`) and what its sweeps need."""
    sweep: object       # the metric family's sweep kernel
    classes: LineClasses
    ties: int
    fixed: tuple        # the per-query buffers (views kept in the scratch)
    total: int          # crossings of all queries
    max_n: int
    max_ev: int


def _buffers(bound, n_docs, ws):
    """The per-query buffers of a line's kernels, as a tuple (``_Line.fixed``)."""
    nq = bound.n_queries
    threads = numba.get_num_threads()
    # every buffer is a view kept in ws.views from one line to the next, made again only
    # when the sizes outgrow it: right after the kernels each Python step runs slower
    # than warm, so a line makes as few as it can
    fixed = ws.views.get("line")
    if fixed is None or fixed[0] != (bound, n_docs, threads):
        fixed = ws.views["line"] = (
            (bound, n_docs, threads), ws.get("cand", n_docs, np.int64),
            ws.get("n_cand", nq, np.int64), ws.get("n_events", nq, np.int64),
            ws.get("offsets", nq + 1, np.int64), ws.get("base", nq),
            ws.get("n_out", nq, np.int64), ws.get("n_runs", nq, np.int64),
            bound.query_order(BLOCKS_PER_THREAD * threads), max(1, min(nq, n_chunks())),
            threads,  # the sweep's scratch rows: one per thread
            (ws.get("bin_S", N_BINS), ws.get("bin_P", N_BINS),
             ws.get("bin_C", N_BINS, np.int64), ws.get("bin_pref", N_BINS + 1)))
    return fixed


def _sweep_kernel(bound):
    """The sweep of ``bound``'s lines (mean-gain classes under expected ties: every order
    of a tie is equal)."""
    return sweep_of(bound.metric.code, bound.tie_code)


def sweep_of(code, ties_code):
    """The sweep of a metric family's lines under a tie rule."""
    return sweep_dcg if ties_code == EXPECTED else SWEEPS[code]


def versions(code, ties_code):
    """The compiled versions (numba kernels and argument types) a line search of a metric
    family calls: its sweep, and the candidates', assembly's and choice's that a first
    line search calls; what a command loads before a run (``dfrank._jit.load``)."""
    sweep = sweep_of(code, ties_code)
    found = [(ex.kernel, ex.types) for ex in _sweeps.EXAMPLES if ex.kernel is sweep]
    return found + [(ex.kernel, ex.types) for module in (_candidates, _assemble, _choice)
                    for ex in module.EXAMPLES if ex.when == "first"]


def _family(bound, classes, s0, u):
    """The sweep kernel, classes and tie code of a line along s0 + t u."""
    if bound.tie_code == EXPECTED:
        return _sweep_kernel(bound), classes.for_line(bound, s0, u), STABLE
    return _sweep_kernel(bound), classes, bound.tie_code


def compile_sweep_ahead(bound, classes):
    """Start compiling the sweep of ``bound``'s metric family in the background, if it
    is not cached (:mod:`dfrank._jit.background`): for a caller about to search lines, before
    it compiles the kernels that run first (the scores', the candidates')."""
    def types():
        s0 = u = np.zeros(len(bound.y))  # the types of the lines' scores
        sweep, line_classes, ties = _family(bound, classes, s0, u)
        fixed = _buffers(bound, len(s0), Scratch())
        return _sweep_types(bound, _Line(sweep, line_classes, ties, fixed, 1, 1, 1), s0, u)

    ahead(_sweep_kernel(bound), types)


def prepare_line(bound, classes, s0, u, u_order, ws):
    """The candidates of every query along s0 + t u: a :class:`_Line`."""
    m = bound.metric
    code = m.code
    compile_sweep_ahead(bound, classes)  # a caller that did not expect lines
    sweep, classes, ties = _family(bound, classes, s0, u)
    fixed = _buffers(bound, len(s0), ws)
    _, cand, n_cand, n_events, offsets, *_, qorder, n_chunks, threads, _ = fixed
    with one_at_a_time(threads):
        total, max_n, max_ev = candidates(
            s0, u, (bound.y, classes.cls, classes.n_classes, bound.qptr, qorder, bound.c0,
                    bound.empty),
            (code, m.k, ties, code in PRUNABLE and m.k > 0),
            _NO_ORDER if u_order is None else u_order, n_chunks,
            (cand, n_cand, n_events, offsets),
            (HULL_SAMPLE if bound.n_queries >= HULL_SAMPLE_FROM else 0, HULL_GAIN))
    return _Line(sweep, classes, ties, fixed, total, max_n, max_ev)


def _sweep_types(bound, line, s0, u):
    """The argument types of ``line.sweep``'s call by :func:`sweep_rows` (for its compile
    ahead, :func:`dfrank._jit.ahead`): the same call's arguments, its buffers in a
    throwaway scratch."""
    _, _, _, _, offsets, *_, qorder, _, _, _ = line.fixed
    args = _sweep_args(bound, line, s0, u, qorder, offsets, 1, Scratch(), BIN_SHIFT)[0]
    return tuple(numba.typeof(a) for a in args)


def sweep_rows(bound, line, s0, u, order, offsets, total, ws, shift=BIN_SHIFT):
    """Sweep the queries of ``order`` along s0 + t u, query q's breakpoints at
    ``offsets[q]`` of the outputs returned (``out_t, out_d, out_h, runs, run_sp``, as long
    as the longest part swept so far; summed in bins of ``shift``)."""
    args, out = _sweep_args(bound, line, s0, u, order, offsets, total, ws, shift)
    wait_for(line.sweep, (assemble_profile, lambda: _assemble_types(line, out, offsets)))
    with one_at_a_time(line.fixed[-2]):   # (the thread count the buffers were made for)
        line.sweep(*args)
    return out


def _sweep_args(bound, line, s0, u, order, offsets, total, ws, shift):
    """The arguments of :func:`sweep_rows`'s call of ``line.sweep``, and its outputs."""
    _, cand, n_cand, _, _, base, n_out, n_runs, _, _, n_workers, _ = line.fixed
    classes, L, max_n, max_ev = line.classes, line.classes.n_classes, line.max_n, line.max_ev
    out = ws.views.get("line_out")
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
    m = bound.metric
    queries = (classes.cls, bound.qptr, order, cand, n_cand, offsets, bound.c0, bound.empty)
    rule = (m.code, m.k, classes.gain, classes.err_r, classes.rel, classes.by_position,
            bound.empty_value, L)
    return (s0, u, queries, rule, EPS, sw,
            (base, n_out, out_t, out_d, out_h, runs, run_sp, n_runs), shift), out


def _averaged(bound, base):
    """(sum of the averaged queries' values at t -> -inf, number of queries averaged)."""
    return averaged(base, bound.empty, bound.metric.empty == "skip")


def averaged(base, empty, skip):
    """:func:`_averaged` of per-query values ``base``, ``empty`` marking the queries
    without a relevant document, which are left out when ``skip``."""
    if skip:
        live = ~empty
        return float(base[live].sum()), int(live.sum())
    return float(base.sum()), len(base)


def _sweep(bound, classes, s0, u, u_order, ws, line=None):
    """The per-query sweeps along s0 + t u, summed by bin: a :class:`Breakpoints`
    (``line``: its :class:`_Line`, if made already)."""
    if line is None:
        line = prepare_line(bound, classes, s0, u, u_order, ws)
    _, _, _, _, offsets, base, n_out, n_runs, qorder, _, _, bins = line.fixed
    out_t, out_d, out_h, runs, run_sp = sweep_rows(bound, line, s0, u, qorder, offsets,
                                                    line.total, ws)
    bin_sums(runs, run_sp, offsets, n_runs, *bins, blocks=sum_blocks(n_runs, N_BINS))
    base_sum, n_eff = _averaged(bound, base)
    return Breakpoints(out_t, out_d, out_h, offsets, n_out, base_sum, n_eff, line.total,
                        bins)


def _parts(offsets, cap):
    """Runs of consecutive queries with at most ``cap`` crossings each (or one query):
    their bounds, as (q0, q1) pairs."""
    nq = len(offsets) - 1
    parts, q0 = [], 0
    while q0 < nq:
        q1 = int(np.searchsorted(offsets, offsets[q0] + cap, side="right")) - 1
        q1 = min(nq, max(q1, q0 + 1))
        parts.append((q0, q1))
        q0 = q1
    return parts


def _select_bins(bins, base, n_eff, wlo, whi, floor, reach, shift):
    """The bins whose rows a second sweep keeps for :func:`best_interval` (uint8 per bin):
    those whose bound reaches ``floor`` (less 4 TOL; None: the highest value known at a
    bin boundary inside [wlo, whi]; -inf: every bin), each with ``reach`` bins with changes
    on either side, and the bins up to the first with a change."""
    S, P, C, pref = bins
    if floor == -np.inf:   # every bin
        return np.ones(len(C), np.uint8)
    nonempty = np.flatnonzero(C > 0)
    kept = np.zeros(len(C), np.uint8)
    if not len(nonempty):
        return kept
    kept[:nonempty[0] + 1] = 1
    top = len(C) - 1 if whi == np.inf else int(bin_of(whi, shift))
    if floor is None:   # the values just before bins inside the segment are reached
        low = -1 if wlo == -np.inf else int(bin_of(wlo, shift))
        inside = nonempty[(nonempty > low) & (nonempty <= top)]
        first = [base] if nonempty[0] > low else []  # (-inf, first change) meets it
        known = first + list(base + pref[inside])
        floor = max(known) / n_eff if known else -np.inf
    at = np.flatnonzero(nonempty <= top)
    ub = (base + (pref[nonempty[at]] + P[nonempty[at]])) / n_eff
    for p in at[ub >= floor - 4 * TOL]:
        a = nonempty[max(p - reach, 0)]
        b = nonempty[min(p + reach, len(nonempty) - 1)]
        kept[a:b + 1] = 1
    return kept


def _best_in_parts(bound, line, s0, u, ws, wlo, whi):
    """The ``"best"`` interval of a line with too many crossings to hold at once: a first
    sweep, part by part (:func:`_parts`), adds up the bins (finer ones,
    :data:`PART_BIN_BITS`, whose bounds are tighter); a second keeps only the rows of the
    bins that can hold the best interval (:func:`_select_bins`), and
    :func:`best_interval` reads those. When it needed a bin not kept, it tells the best
    value it found, and the second sweep is made again with the bins that reach it (then
    with all). Returns best_interval's tuple (None when the line's choice is an unbounded
    interval) and the number of crossings."""
    _, _, _, _, offsets, base, n_out, n_runs, qorder, _, _, _ = line.fixed
    shift = 32 - PART_BIN_BITS
    n_bins = 1 << PART_BIN_BITS
    bins = (ws.get("pbin_S", n_bins), ws.get("pbin_P", n_bins),
            ws.get("pbin_C", n_bins, np.int64), ws.get("pbin_pref", n_bins + 1))
    parts = _parts(offsets, max(PART_CROSSINGS, line.max_ev))
    orders = [(qorder[(qorder >= q0) & (qorder < q1)], offsets - offsets[q0])
              for q0, q1 in parts]
    size = max(int(offsets[q1] - offsets[q0]) for q0, q1 in parts)
    for i, ((q0, q1), (order, offs)) in enumerate(zip(parts, orders)):
        runs, run_sp = sweep_rows(bound, line, s0, u, order, offs, size, ws, shift)[3:]
        bin_sums(runs, run_sp, offs[q0:q1 + 1], n_runs[q0:q1], *bins, fresh=i == 0,
                 blocks=sum_blocks(n_runs[q0:q1], n_bins))
    base_sum, n_eff = _averaged(bound, base)
    if n_eff == 0:
        return None, line.total
    floor, reach = None, 1
    while True:
        kept = _select_bins(bins, base_sum, n_eff, wlo, whi, floor, reach, shift)
        # the kept rows, part after part, into one set of arrays (grown if the hazards
        # without a change, which C does not count, overflow it)
        cap = int(bins[2][kept == 1].sum()) + 1024
        rows = (np.empty(cap), np.empty(cap), np.empty(cap, np.bool_))
        f_n = np.empty(len(n_out), np.int64)
        f_off = np.zeros(len(n_out) + 1, np.int64)
        for (q0, q1), (order, offs) in zip(parts, orders):
            out_t, out_d, out_h = sweep_rows(bound, line, s0, u, order, offs, size, ws,
                                              shift)[:3]
            o, n = offs[q0:q1 + 1], n_out[q0:q1]
            f_n[q0:q1] = kept_rows(out_t, out_d, out_h, o, n, kept, shift, _NO_T, _NO_T,
                                   _NO_H, _NO_ORDER)
            f_off[q0 + 1:q1 + 1] = f_off[q0] + np.cumsum(f_n[q0:q1])
            if f_off[q1] > len(rows[0]):
                rows = tuple(np.concatenate([r, np.empty_like(r, shape=f_off[q1] + cap)])
                             for r in rows)
            kept_rows(out_t, out_d, out_h, o, n, kept, shift, *rows, f_off[q0:q1])
        found = best_interval((*rows, f_off, f_n), EPS, base_sum, float(n_eff), bins,
                              MIN_WIDTH, TOL, shift, (float(wlo), float(whi)),
                              _NO_KEPT if kept.all() else kept)
        if found[0] >= 0:
            return (found if found[0] == 1 else None), line.total
        # the bins that reach the best value found, and farther neighbours; then all
        floor, reach = (float(found[1]), 2) if reach == 1 else (-np.inf, 0)


def assembled(bp, ws):
    """The whole :class:`LineProfile` of a line's :class:`Breakpoints`."""
    threads = numba.get_num_threads()
    with one_at_a_time(threads):
        edges, values, hazards = assemble_profile(*_assemble_args(bp, ws, threads))
    return LineProfile(edges[:-1], edges[1:], values, hazards)


def _assemble_args(bp, ws, threads):
    """The arguments of :func:`assembled`'s call of the assembly kernel."""
    S, P, C, pref = bp.bins
    total = bp.total
    return ((bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out), EPS, bp.base,
            float(bp.n_eff), C, pref, threads, BLOCKS_PER_THREAD * threads,
            (ws.get("hazards", total), ws.get("change_t", total), ws.get("change_d", total)),
            BIN_SHIFT)


def _assemble_types(line, out, offsets):
    """The argument types of the assembly kernel's call on ``line``'s sweep outputs
    (compiled while the sweep compiles in the background, :func:`dfrank._jit.wait_for`)."""
    _, _, _, _, _, _, n_out, _, _, _, _, bins = line.fixed
    bp = Breakpoints(*out[:3], offsets, n_out, 0.0, 1, 1, bins)
    return tuple(numba.typeof(a) for a in _assemble_args(bp, Scratch(), 1))


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
    return assembled(bp, ws), bp.total


def line_search(bound, classes, s0, u, *, rule="best", window=None, floor=-np.inf,
                u_order=None, scratch=None, within=None):
    """The exact line search along s0 + t u (over the segment ``within=(lo, hi)`` of t, if
    given): :func:`choose` on :func:`line_profile` (or its ``within``), the same
    :class:`LineResult` bit for bit. With the ``"best"`` rule the chosen interval is
    found from the few bins of breakpoints that can hold it, unless it is unbounded (its
    point needs the median width of all intervals); the result's profile is then a
    :class:`DeferredProfile`, which sweeps the line again when read (s0 and u are copied
    for it). A line of more than :data:`PART_CROSSINGS` crossings is then swept a part of
    the queries at a time, twice, instead of held whole."""
    if rule not in RULES:
        raise ValueError(f"unknown line-search rule {rule!r}; known: {sorted(RULES)}")
    wlo, whi = (-np.inf, np.inf) if within is None else (float(within[0]), float(within[1]))

    def cut(profile):
        return profile if within is None else profile.within(wlo, whi)

    if flat_within_queries(u, bound.qptr):
        return choose(cut(_flat_profile(bound, s0)), 0, rule=rule, window=window, floor=floor)
    ws = Scratch() if scratch is None else scratch
    bp = None
    if rule == "best":
        line = prepare_line(bound, classes, s0, u, u_order, ws)
        if line.total > PART_CROSSINGS:
            found, total = _best_in_parts(bound, line, s0, u, ws, wlo, whi)
        else:
            bp = _sweep(bound, classes, s0, u, u_order, ws, line)
            total = bp.total
            found = best_found(bp, wlo, whi)
        if found is not None:
            s0c, uc = s0.copy(), u.copy()
            return found_result(found, total, wlo, whi, DeferredProfile(
                lambda: cut(line_profile(bound, classes, s0c, uc, u_order)[0])))
    if bp is None:
        bp = _sweep(bound, classes, s0, u, u_order, ws)
    return choose(cut(assembled(bp, ws)), bp.total, rule=rule, window=window, floor=floor)


def best_found(bp, wlo, whi):
    """:func:`best_interval`'s tuple for the ``"best"`` interval of a line's
    :class:`Breakpoints` within [wlo, whi], or None when the choice is an unbounded
    interval (or no query is averaged): then :func:`choose` on the whole profile decides."""
    if bp.n_eff == 0:
        return None
    found = best_interval((bp.out_t, bp.out_d, bp.out_h, bp.offsets, bp.n_out), EPS, bp.base,
                          float(bp.n_eff), bp.bins, MIN_WIDTH, TOL, BIN_SHIFT,
                          (float(wlo), float(whi)), _NO_KEPT)
    return found if found[0] == 1 else None


def found_result(found, total, wlo, whi, profile):
    """The :class:`LineResult` of an interval :func:`best_found` chose (``profile``: the
    line's, made when read)."""
    _, value, lo, hi, hazards = found
    if lo == wlo and hi == whi:  # the segment is one interval (as choose)
        return LineResult(float(value), 0.0, -np.inf, np.inf, total, profile)
    t = safe_point(hazards, lo, hi, 0.5 * (lo + hi))
    return LineResult(float(value), t, float(lo), float(hi), total, profile)
