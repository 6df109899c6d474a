"""The exact line search split by query, for data held in parts (:mod:`dfrank.cluster`).

A line's profile is a sum over queries, and each query's breakpoints depend on that query
alone. So each part sweeps its own queries (:func:`rows_of_line`, where the part's data
lives) and sends their breakpoints, their runs by bin and their values at t -> -inf
(:class:`LineRows`); :func:`search_parts` joins the parts in query order and runs the very
stages the one-process search runs on the same arrays -- the sums by bin, the assembly,
the choice -- so that the chosen point and value equal the one-process ones bit for bit,
whatever the partitioning. Every breakpoint travels (17 bytes), not only the sums by bin
and the rows of the bins chosen: the default ``"plateau"`` rule reads the whole profile
(its median interval width, each interval's window), and sums by bin added part after
part would depend on the partitioning. The one exception: a ``"best"`` line of more than
:data:`~dfrank.linesearch.search.PART_CROSSINGS` crossings, which one process sweeps in
parts with finer bins, is chosen here from all its rows at once (the same interval, its
value within rounding).
"""

from dataclasses import dataclass

import numpy as np

from .._kernels.scratch import Scratch
from .._kernels.chunks import one_at_a_time
from .assemble import BIN_SHIFT, N_BINS, bin_sums, runs_of_rows, sum_blocks
from .candidates import flat_within_queries
from .choice import RULES, choose
from .profile import DeferredProfile, LineProfile
from .search import (_assembled, _Breakpoints, _prepare, _sweep_rows, averaged, best_found,
                     found_result)

__all__ = ["LineRows", "rows_of_line", "search_parts"]


@dataclass(frozen=True)
class LineRows:
    """One part's side of a line: its queries' breakpoints, in query order.

    ``t, d, h``: each query's breakpoints (position, change of its value, hazard), query
    after query, ``n_out`` of them per query (their sums by bin are made again from them
    where they are joined); ``base``: each query's
    value at t -> -inf; ``empty``: the queries without a relevant document; ``total``: the
    crossings counted by the candidates; ``flat``: no document of the part passes another
    along the line, and then ``at_start`` holds each query's value at t = 0."""
    t: np.ndarray
    d: np.ndarray
    h: np.ndarray
    n_out: np.ndarray
    base: np.ndarray
    empty: np.ndarray
    total: int
    flat: bool
    at_start: np.ndarray = None

    @property
    def nbytes(self):
        """Bytes this part sends for the line."""
        return sum(getattr(self, f).nbytes for f in ("t", "d", "h", "n_out", "base", "empty"))


def _taken(offsets, counts):
    """Indices of the first ``counts[q]`` slots from ``offsets[q]`` of every query q."""
    total = int(counts.sum())
    before = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=before[1:])
    return np.repeat(offsets[:-1] - before, counts) + np.arange(total)


def rows_of_line(bound, classes, s0, u, u_order=None, scratch=None):
    """The :class:`LineRows` of ``bound``'s queries along s0 + t u (the part's side)."""
    ws = Scratch() if scratch is None else scratch
    flat = bool(flat_within_queries(u, bound.qptr))
    line = _prepare(bound, classes, s0, u, u_order, ws)
    _, _, _, _, offsets, base, n_out, n_runs, qorder, *_ = line.fixed
    out_t, out_d, out_h, runs, run_sp = _sweep_rows(bound, line, s0, u, qorder, offsets,
                                                    line.total, ws)
    rows = _taken(offsets, n_out)
    return LineRows(out_t[rows], out_d[rows], out_h[rows], n_out.copy(), base.copy(),
                    bound.empty.copy(), int(line.total), flat,
                    bound.per_query(s0) if flat else None)


def _joined(parts, skip, ws):
    """The :class:`_Breakpoints` of the parts' queries, in the parts' order (in the
    buffers of the scratch ``ws``)."""
    nq = sum(len(p.n_out) for p in parts)
    n_out = np.concatenate([p.n_out for p in parts], out=ws.get("join_n_out", nq, np.int64))
    offsets = ws.get("join_offsets", nq + 1, np.int64)
    offsets[0] = 0
    np.cumsum(n_out, out=offsets[1:])
    size = max(int(offsets[-1]), 1)
    t = np.concatenate([p.t for p in parts], out=ws.get("join_t", int(offsets[-1])))
    d = np.concatenate([p.d for p in parts], out=ws.get("join_d", int(offsets[-1])))
    h = np.concatenate([p.h for p in parts],
                       out=ws.get("join_h", int(offsets[-1]), np.bool_))
    # the runs by bin the parts' sweeps made beside their rows, made again from them
    runs, run_sp = ws.get("join_runs", size, np.int64), ws.get("join_run_sp", (size, 2))
    n_runs = ws.get("join_n_runs", nq, np.int64)
    with one_at_a_time():
        runs_of_rows(t, d, offsets, n_out, runs, run_sp, n_runs, BIN_SHIFT)
    bins = (ws.get("bin_S", N_BINS), ws.get("bin_P", N_BINS),
            ws.get("bin_C", N_BINS, np.int64), ws.get("bin_pref", N_BINS + 1))
    bin_sums(runs, run_sp, offsets, n_runs, *bins, blocks=sum_blocks(n_runs, N_BINS))
    base_sum, n_eff = averaged(np.concatenate([p.base for p in parts]),
                               np.concatenate([p.empty for p in parts]), skip)
    return _Breakpoints(t, d, h, offsets, n_out, base_sum, n_eff,
                        max(sum(p.total for p in parts), size), bins)


def search_parts(parts, mean, *, skip, rule="best", window=None, floor=-np.inf,
                 within=None, scratch=None):
    """The exact line search of a line whose queries are split into ``parts`` (their
    :class:`LineRows`, in query order): the :class:`~dfrank.linesearch.LineResult` that
    :func:`~dfrank.linesearch.line_search` returns on the whole data. ``mean``: the
    metric's mean over per-query values (:meth:`BoundMetric.mean`); ``skip``: whether
    queries without a relevant document are left out of it."""
    if rule not in RULES:
        raise ValueError(f"unknown line-search rule {rule!r}; known: {sorted(RULES)}")
    wlo, whi = (-np.inf, np.inf) if within is None else (float(within[0]), float(within[1]))

    def cut(profile):
        return profile if within is None else profile.within(wlo, whi)

    if all(p.flat for p in parts):
        value = float(mean(np.concatenate([p.at_start for p in parts])))
        flat = LineProfile(np.array([-np.inf]), np.array([np.inf]), np.array([value]))
        return choose(cut(flat), 0, rule=rule, window=window, floor=floor)
    ws = Scratch() if scratch is None or rule == "best" else scratch
    bp = _joined(parts, skip, ws)   # (a "best" line's profile may be read later: its own)
    if rule == "best":
        found = best_found(bp, wlo, whi)
        if found is not None:
            return found_result(found, bp.total, wlo, whi, DeferredProfile(
                lambda: cut(_assembled(bp, Scratch()))))
    return choose(cut(_assembled(bp, ws)), bp.total, rule=rule, window=window,
                  floor=floor)
