"""The exact line search split by query, for data held in parts (:mod:`dfrank.cluster`).

A line's profile is a sum over queries, and each query's breakpoints depend on that query
alone. So each part sweeps its own queries (:func:`rows_of_line`, where the part's data
lives) and sends their breakpoints and their values at t -> -inf (:class:`LineRows`);
:class:`LineJoin` joins the parts as they come, with the queries in their order, and
:func:`search_parts` runs the very stages the one-process search runs on the same arrays
-- the sums by bin, the assembly, the choice -- so that the chosen point and value equal
the one-process ones bit for bit, whatever the partitioning. Every breakpoint travels (17
bytes), not only the sums by bin and the rows of the bins chosen: the default
``"plateau"`` rule reads the whole profile (its median interval width, each interval's
window), and sums by bin added part after part would depend on the partitioning. The
one exception: a ``"best"`` line of more than
:data:`~dfrank.linesearch.runner.PART_CROSSINGS` crossings, which one process sweeps in
parts with finer bins, is chosen here from all its rows at once (the same interval, its
value within rounding).
"""

from dataclasses import dataclass

import numpy as np

from .._kernels.scratch import Scratch
from .._kernels.chunks import one_at_a_time
from .assemble import BIN_SHIFT, N_BINS, bin_sums, packed_rows, runs_of_rows, sum_blocks
from .candidates import flat_within_queries
from .choice import RULES, choose
from .profile import DeferredProfile, LineProfile
from .runner import (assembled, Breakpoints, prepare_line, sweep_rows, averaged, best_found,
                     found_result)

__all__ = ["LineJoin", "LineRows", "line_join", "rows_of_line", "search_parts"]


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


def rows_of_line(bound, classes, s0, u, u_order=None, scratch=None):
    """The :class:`LineRows` of ``bound``'s queries along s0 + t u (the part's side). Its
    rows are packed into buffers of the scratch that no earlier result still holds
    (:meth:`~dfrank._kernels.scratch.Scratch.unheld`): a worker sends a line's rows on
    and then drops them, so fresh pages are not faulted in line after line."""
    ws = Scratch() if scratch is None else scratch
    flat = bool(flat_within_queries(u, bound.qptr))
    line = prepare_line(bound, classes, s0, u, u_order, ws)
    _, _, _, _, offsets, base, n_out, n_runs, qorder, *_ = line.fixed
    out_t, out_d, out_h, runs, run_sp = sweep_rows(bound, line, s0, u, qorder, offsets,
                                                    line.total, ws)
    n = int(n_out.sum())
    t, d = ws.unheld(("rows_t",), n), ws.unheld(("rows_d",), n)
    h = ws.unheld(("rows_h",), n, np.bool_)
    packed_rows(out_t, out_d, out_h, offsets, n_out, t, d, h)
    return LineRows(t, d, h, n_out.copy(), base.copy(), bound.empty.copy(), int(line.total),
                    flat, bound.per_query(s0) if flat else None)


# the rows' buffers of a LineJoin: (name in the scratch, dtype, shape past the rows)
_ROW_BUFFERS = (("join_t", np.float64, ()), ("join_d", np.float64, ()),
                ("join_h", np.bool_, ()), ("join_runs", np.int64, ()),
                ("join_run_sp", np.float64, (2,)))


class LineJoin:
    """A line's breakpoints joined part by part in the order the parts' rows come
    (:meth:`add`), so that a driver joins one worker's rows while another still sweeps:
    each part's rows go after those already in, their runs by bin made at once. Every
    kernel reads query q's rows at ``offsets[q]``, wherever they lie, so the queries keep
    their order and every sum its value whatever the order of arrival.
    :meth:`breakpoints` adds up the bins when all parts are in. ``part_queries``: the
    number of queries of each part, in query order; ``scratch``: where the buffers are
    kept (one line's join at a time)."""

    def __init__(self, part_queries, scratch=None):
        ws = self._ws = Scratch() if scratch is None else scratch
        self._first = np.zeros(len(part_queries) + 1, np.int64)
        np.cumsum(part_queries, out=self._first[1:])
        nq = int(self._first[-1])
        self.n_out = ws.get("join_n_out", nq, np.int64)
        self.offsets = ws.get("join_offsets", nq + 1, np.int64)
        self.n_runs = ws.get("join_n_runs", nq, np.int64)
        self.base = ws.get("join_base", nq)
        self.empty = ws.get("join_empty", nq, np.bool_)
        self.parts = [None] * len(part_queries)
        self.filled = 0
        self._rows = self._room(ws.views.get("join_capacity", 1), 0)

    def _room(self, capacity, keep):
        """The rows' buffers with room for ``capacity`` rows, their first ``keep`` rows
        those already joined."""
        ws = self._ws
        rows = tuple(ws.get(name, (capacity,) + tail, dtype)
                     for name, dtype, tail in _ROW_BUFFERS)
        if keep:
            for old, new in zip(self._rows, rows):
                if not np.shares_memory(old, new):
                    new[:keep] = old[:keep]
        ws.views["join_capacity"] = max(capacity, ws.views.get("join_capacity", 1))
        return rows

    def add(self, i, rows):
        """Join part ``i``'s :class:`LineRows`."""
        if self.parts[i] is not None:
            raise ValueError(f"part {i} of the line was joined already")
        q0, q1 = int(self._first[i]), int(self._first[i + 1])
        if len(rows.n_out) != q1 - q0:
            raise ValueError(f"part {i} sent the rows of {len(rows.n_out)} queries, "
                             f"it holds {q1 - q0}")
        at, n = self.filled, len(rows.t)
        if at + n > len(self._rows[0]):
            self._rows = self._room(max(at + n, 2 * len(self._rows[0])), at)
        t, d, h, runs, run_sp = self._rows
        t[at:at + n] = rows.t
        d[at:at + n] = rows.d
        h[at:at + n] = rows.h
        n_out, offsets, n_runs = self.n_out[q0:q1], self.offsets[q0:q1], self.n_runs[q0:q1]
        n_out[:] = rows.n_out
        if q1 > q0:
            offsets[0] = at
            np.cumsum(rows.n_out[:-1], out=offsets[1:])
            offsets[1:] += at
        # the runs by bin the part's sweep made beside its rows, made again from them
        with one_at_a_time():
            runs_of_rows(t, d, offsets, n_out, runs, run_sp, n_runs, BIN_SHIFT)
        self.base[q0:q1] = rows.base
        self.empty[q0:q1] = rows.empty
        self.filled += n
        self.parts[i] = rows

    def breakpoints(self, skip):
        """The :class:`Breakpoints` of every part's queries (all joined), the bins added
        up; ``skip``: whether queries without a relevant document are left out of the
        mean."""
        missing = [i for i, p in enumerate(self.parts) if p is None]
        if missing:
            raise ValueError(f"parts {missing} of the line were not joined")
        ws = self._ws
        self.offsets[-1] = self.filled
        t, d, h, runs, run_sp = self._rows
        bins = (ws.get("bin_S", N_BINS), ws.get("bin_P", N_BINS),
                ws.get("bin_C", N_BINS, np.int64), ws.get("bin_pref", N_BINS + 1))
        bin_sums(runs, run_sp, self.offsets, self.n_runs, *bins,
                 blocks=sum_blocks(self.n_runs, N_BINS))
        base_sum, n_eff = averaged(self.base, self.empty, skip)
        return Breakpoints(t, d, h, self.offsets, self.n_out, base_sum, n_eff,
                            max(sum(p.total for p in self.parts), self.filled, 1), bins)


def line_join(part_queries, rule, scratch=None):
    """The :class:`LineJoin` of a line searched by ``rule``: in ``scratch``, unless the
    rule is ``"best"``, whose profile may be read after later lines (its own buffers)."""
    return LineJoin(part_queries, Scratch() if scratch is None or rule == "best" else scratch)


def search_parts(parts, mean, *, skip, rule="best", window=None, floor=-np.inf,
                 within=None, scratch=None):
    """The exact line search of a line whose queries are split into ``parts`` (their
    :class:`LineRows`, in query order; or a :class:`LineJoin` of them all, made by
    :func:`line_join`): the :class:`~dfrank.linesearch.LineResult` that
    :func:`~dfrank.linesearch.line_search` returns on the whole data. ``mean``: the
    metric's mean over per-query values (:meth:`BoundMetric.mean`); ``skip``: whether
    queries without a relevant document are left out of it."""
    if rule not in RULES:
        raise ValueError(f"unknown line-search rule {rule!r}; known: {sorted(RULES)}")
    wlo, whi = (-np.inf, np.inf) if within is None else (float(within[0]), float(within[1]))

    def cut(profile):
        return profile if within is None else profile.within(wlo, whi)

    join = parts
    if not isinstance(parts, LineJoin):
        join = line_join([len(p.n_out) for p in parts], rule, scratch)
        for i, p in enumerate(parts):
            join.add(i, p)
    if all(p.flat for p in join.parts):
        value = float(mean(np.concatenate([p.at_start for p in join.parts])))
        flat = LineProfile(np.array([-np.inf]), np.array([np.inf]), np.array([value]))
        return choose(cut(flat), 0, rule=rule, window=window, floor=floor)
    bp = join.breakpoints(skip)
    if rule == "best":
        found = best_found(bp, wlo, whi)
        if found is not None:
            return found_result(found, bp.total, wlo, whi, DeferredProfile(
                lambda: cut(assembled(bp, Scratch()))))
    return choose(cut(assembled(bp, join._ws)), bp.total, rule=rule, window=window,
                  floor=floor)
