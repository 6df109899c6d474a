"""Objectives: what every strategy maximizes, with evaluation counting and budgets.

An objective owns the count of evaluations, the best point so far and the anytime trace,
so strategies can neither miscount nor lose the best point: when a budget runs out the
objective raises :class:`BudgetExhausted`, which carries that best point.

* :class:`LinearObjective` — the mean metric of the linear ranker at a simplex point, batched
  through one parallel scoring pass, with the exact line search.
* :class:`ScoringObjective` — a retrieval model ``score_fn(x)`` with a few parameters (BM25
  k1 and b) on a :class:`~dfrank.Box`.
* :class:`FunctionObjective` — any black-box ``fn(x) -> float``.
"""

import copy
import time

import numpy as np

from .._kernels.chunks import one_at_a_time
from .._kernels.scoring import (features_T, linear_scores, moved_scores_into, nonzero_rows,
                               widened_into)
from ..data.ranking import RankingData
from ..hyperparams import Count, Real
from .._kernels.scratch import PerThread
from ..linesearch import (LineClasses, LineResult, compile_sweep_ahead, direction_kind,
                         flat_within_queries, line_search, sort_within_queries,
                         unsupported)
from ..metrics.evaluation import bind_metric
from ..metrics.registry import DEFAULT_METRIC, DEFAULT_TIES
from ..spaces import Box, Simplex

__all__ = ["BudgetExhausted", "Objective", "LinearObjective", "ScoringObjective",
           "line_search_cost",
           "FunctionObjective", "make_objective", "check_budget",
           "check_allowance"]

# The coordinate lines kept with a dataset, in bytes at most: all of them up to about
# 100,000 documents x 137 coordinates (LETOR's sets: 7 MB), a part of them on web-sized
# sets (1,000,000 x 137 would keep 2.2 GB), where a line's sort costs little beside its
# search anyway.
LINE_CACHE_BYTES = 1 << 28


class BudgetExhausted(Exception):
    """The evaluation or time budget ran out; carries the best point found so far."""

    def __init__(self, reason, best_point, best_value, n_evals):
        super().__init__(f"budget exhausted ({reason}) after {n_evals} evaluations; "
                         f"best value {best_value}")
        self.reason = reason
        self.best_point = best_point
        self.best_value = best_value
        self.n_evals = n_evals


def line_search_cost(objective, repeats=15, seed=0):
    """How many single evaluations an exact line search of ``objective`` is worth in time:
    the median time of a line search along a coordinate or a random direction over the
    median time of one evaluation, from random points (timed on a copy, JIT warm after
    the first of each; a ratio, so it varies with the machine's load only as the two
    times do). Round it up for :meth:`Objective.set_line_cost`."""
    if not getattr(objective, "exact_line", False):
        raise ValueError("this objective has no exact line search")
    obj = objective.fresh()
    rng = np.random.default_rng(seed)
    dim = obj.space.dim
    points = obj.space.sample(rng, repeats + 1)
    directions = [np.eye(dim)[i % dim] if i % 2 else rng.normal(size=dim)
                  for i in range(repeats + 1)]
    one, line = [], []
    for i in range(repeats + 1):
        t = time.perf_counter()
        obj.batch(points[i:i + 1])
        t1 = time.perf_counter()
        obj.line(points[i], directions[i])
        t2 = time.perf_counter()
        if i:  # the first of each compiles or loads its kernels
            one.append(t1 - t)
            line.append(t2 - t1)
    return float(np.median(line) / np.median(one))


def check_allowance(budget, max_seconds, who, evals_name="budget"):
    """``check_budget`` of a comparison's allowance, which must be given: the same for
    every one of ``who`` (strategies, solvers), and more than nothing (a budget of 0
    evaluations or seconds would compare no run)."""
    budget, max_seconds = check_budget(budget, max_seconds, evals_name)
    if budget == 0 or max_seconds == 0:
        zero = evals_name if budget == 0 else "max_seconds"
        raise ValueError(f"{zero} must be more than 0, got 0: the {who} would make no "
                         "evaluation")
    if budget is None and max_seconds is None:
        raise ValueError(f"give a budget (evaluations) and/or max_seconds, so that every "
                         f"one of the {who} gets the same allowance")
    return budget, max_seconds


_EVALS = Count(0, none=True)
_SECONDS = Real(0, none=True)


def check_budget(max_evals, max_seconds, evals_name="max_evals"):
    """``(max_evals, max_seconds)`` checked by their kinds (:mod:`dfrank.hyperparams`):
    None, or a whole number >= 0 of objective evaluations and a finite number >= 0 of
    seconds (a clear ValueError otherwise)."""
    max_evals = _EVALS.value("", evals_name, max_evals)
    _SECONDS.check("", "max_seconds", max_seconds)
    return max_evals, None if max_seconds is None else float(max_seconds)


class Objective:
    """Base class: a function of a point of ``space`` to maximize, counted and budgeted.

    Subclasses implement ``_values(points) -> ndarray`` for a (P, dim) array of valid points.

    Attributes
    ----------
    space : Simplex or Box
    n_evals : int
        Points evaluated so far, plus ``line_cost`` per exact line search.
    line_cost : int
        Evaluations an exact line search counts (1; :func:`dfrank.compare` can count what
        its time is worth, see :func:`line_search_cost`).
    best_point, best_value
        The best evaluated point (first one wins among equals) and its value.
    """

    is_linear = False  # a linear ranker on the simplex (LinearObjective)
    concurrent = False  # may be evaluated from several threads at once (own buffers each)
    exact_line = False  # has the exact line search for its metric and tie policy
    line_cost = 1
    position = None     # (sweep, line, lines per sweep) of a coordinate ascent, as it goes

    def expect_lines(self):
        """Exact line searches are coming (a strategy says so before its first point):
        :class:`LinearObjective` starts compiling their kernels."""

    def __init__(self, space, *, max_evals=None, max_seconds=None):
        self.space = space
        self.max_evals, self.max_seconds = check_budget(max_evals, max_seconds)
        self.listener = None  # called with the objective after every recorded evaluation
        # where strategies that start from one point begin their first restart (a point of
        # the space; None: their own start); a problem instance's start, for example
        self.initial_point = None
        self.recorder = None  # called with (points, values, cube) of every recorded batch
        # (cube: the unit-cube rows an optimizer searched, given to batch, else None), also
        # by the copies fresh() makes in this process (the restarts of a serial run)
        self.progress_saver = None   # set by checkpointed runs: see save_progress
        # set by restarts that run in threads of this process: a threading.Event that,
        # once set (Ctrl-C reached the caller), ends the restart as an interruption
        self.cancel = None
        self.reset()

    def fresh(self, max_evals=None, max_seconds=None):
        """A copy sharing the data, with its own count, best point, trace and budget (one
        per restart)."""
        other = copy.copy(self)   # through __getstate__: no listener, recorder or saver
        other.recorder = self.recorder   # kept: it sees every restart's points
        other.set_budget(max_evals, max_seconds)
        other.reset()
        return other

    def __getstate__(self):  # listeners (progress bars, user callbacks) stay home
        state = self.__dict__.copy()
        state["listener"] = None
        state["recorder"] = None
        state["progress_saver"] = None
        state["cancel"] = None
        return state

    def __setstate__(self, state):
        state.setdefault("progress_saver", None)
        state.setdefault("recorder", None)
        state.setdefault("cancel", None)
        self.__dict__.update(state)

    # ------------------------------------------------------------------ resumable state
    def get_state(self):
        """The bookkeeping of a restart in progress (JSON-able): count, best, trace."""
        return {"n_evals": int(self.n_evals), "n_lines": int(self.n_lines),
                "best_value": float(self.best_value),
                "best_point": None if self.best_point is None else self.best_point.tolist(),
                "trace": [[int(e), float(t), float(v)] for e, t, v in self._trace],
                "elapsed": float(self.elapsed)}

    def set_state(self, state):
        """Continue from :meth:`get_state` (the clock resumes at the saved elapsed time)."""
        self.n_evals = int(state["n_evals"])
        self.n_lines = int(state["n_lines"])
        self.best_value = float(state["best_value"])
        bp = state["best_point"]
        self.best_point = None if bp is None else np.asarray(bp, dtype=np.float64)
        self._trace = [(int(e), float(t), float(v)) for e, t, v in state["trace"]]
        self._t0 = time.perf_counter() - float(state["elapsed"])

    def save_progress(self, strategy_state):
        """Strategies that can resume mid-way call this between two steps with a function
        returning their state (JSON-able, random generator included). A checkpointed run
        (``maximize(checkpoint=...)``, n_jobs = 1) writes it at most every few seconds;
        otherwise nothing happens."""
        if self.progress_saver is not None:
            self.progress_saver(self, strategy_state)

    # ------------------------------------------------------------------ bookkeeping
    def reset(self):
        """Forget the count, best point and trace (the budget stays)."""
        self.n_evals = 0
        self.n_lines = 0
        self.best_point = None
        self.best_value = -np.inf
        self._t0 = None
        self._trace = [(0, 0.0, -np.inf)]

    def set_line_cost(self, cost):
        """Count each exact line search as ``cost`` evaluations (an int >= 1)."""
        if isinstance(cost, bool) or not isinstance(cost, (int, np.integer)) or cost < 1:
            raise ValueError(f"line_cost must be an int >= 1, got {cost!r}")
        self.line_cost = int(cost)

    def set_budget(self, max_evals=None, max_seconds=None):
        self.max_evals, self.max_seconds = check_budget(max_evals, max_seconds)

    def start_clock(self):
        if self._t0 is None:
            self._t0 = time.perf_counter()

    @property
    def elapsed(self):
        return 0.0 if self._t0 is None else time.perf_counter() - self._t0

    @property
    def trace(self):
        """Best value after each improvement: dict of arrays ``evals``, ``seconds``,
        ``values`` (a step function of the evaluation count and of time)."""
        tr = np.array(self._trace, dtype=float)
        return {"evals": tr[:, 0].astype(np.int64), "seconds": tr[:, 1], "values": tr[:, 2]}

    def _exhausted(self, reason):
        return BudgetExhausted(reason, None if self.best_point is None else
                               self.best_point.copy(), self.best_value, self.n_evals)

    def _allowance(self, n):
        """``(allowed, reason)``: how many of ``n`` evaluations the budget allows now, and
        what stops the rest (raises if none is allowed). Past the time limit a run's first
        evaluation is still allowed (one point), so a run whose time went to compiling
        kernels or importing its optimizer still returns its start point, marked ``time``."""
        self.start_clock()
        if self.cancel is not None and self.cancel.is_set():
            raise KeyboardInterrupt("the run was interrupted")
        if self.max_seconds is not None and self.elapsed >= self.max_seconds:
            if self.n_evals:
                raise self._exhausted("time")
            return min(n, 1), "time"
        if self.max_evals is None:
            return n, None
        left = self.max_evals - self.n_evals
        if left <= 0:
            raise self._exhausted("evaluations")
        return min(n, left), "evaluations"

    def _record(self, points, values, cube=None):
        """Count a batch, and put each improvement of the best so far in the trace at its
        own evaluation number (the batch's points are evaluated in their order): a target
        reached by an early point of a batch is reached there, not at the batch's best."""
        before = self.n_evals
        self.n_evals += len(values)
        if len(values):
            # the points that beat every earlier one: the prefix maxima, first occurrences
            earlier = np.maximum.accumulate(np.concatenate(([self.best_value], values)))[:-1]
            better = np.flatnonzero(values > earlier)
            if len(better):
                elapsed = self.elapsed
                self._trace += [(before + int(i) + 1, elapsed, float(values[i]))
                                for i in better]
                i = int(better[-1])
                self.best_value = float(values[i])
                self.best_point = np.array(points[i], dtype=np.float64)
        if self.recorder is not None:
            self.recorder(points, values, cube)
        if self.listener is not None:
            self.listener(self)

    def settle(self, point):
        """Make ``point`` the answer of this run: it is evaluated (counted) and becomes
        ``best_point`` / ``best_value`` even when an evaluated point scored higher. For a
        strategy whose answer is not its best evaluation, such as the best centre of a
        smoothed search; the trace keeps the best values evaluated. Returns its value."""
        pts = self.check_points(point)
        if len(pts) != 1:
            raise ValueError(f"settle takes one point, got {len(pts)}")
        value = float(self.batch(pts)[0])
        self.best_value = value
        self.best_point = np.array(pts[0], dtype=np.float64)
        return value

    # ------------------------------------------------------------------ evaluation
    def check_points(self, points):
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim == 1:
            pts = pts[None, :]
        if pts.ndim != 2:
            raise ValueError(f"points must be a (P, {self.space.dim}) array, got {pts.shape}")
        return self.space.check(pts)

    def batch(self, points, cube=None):
        """Values of the rows of ``points`` (P, dim). Stops exactly at the budget: the
        allowed prefix is evaluated and recorded, then BudgetExhausted is raised. Past the
        time limit, a run's first point is still evaluated. ``cube``: the unit-cube rows
        an optimizer searched that map to ``points``, passed on to the recorder."""
        pts = self.check_points(points)
        n, reason = self._allowance(len(pts))
        values = self._values(pts[:n]) if n else np.empty(0)
        self._record(pts[:n], values, None if cube is None else cube[:n])
        if n < len(pts) or reason == "time":
            raise self._exhausted(reason)
        return values

    def __call__(self, point):
        """Value at one point."""
        return float(self.batch(np.asarray(point, dtype=np.float64)[None, :])[0])

    def _values(self, pts):
        raise NotImplementedError


MAX_FEATURE = 1e150   # larger features overflow in scores, their differences or squares


def _check_magnitude(data):
    """Refuse features so large that scores of weights on the simplex (sum |w| <= 2), the
    lines through them or the smoothed strategies' squares would overflow."""
    if data.derived.largest_feature is None:
        X = data.X
        col = np.maximum(X.max(axis=0), -X.min(axis=0)) if X.size else np.zeros(1)
        j = int(np.argmax(col))
        data.derived.largest_feature = (float(col[j]), j)
    big, j = data.derived.largest_feature
    if big > MAX_FEATURE:
        where = f" ({data.source})" if getattr(data, "source", None) else ""
        raise ValueError(f"feature {int(data.feature_ids[j])} of the data{where} reaches "
                         f"{big:.3g}: features beyond {MAX_FEATURE:g} overflow in scores "
                         "and their differences. Rescale them (dfrank fit --normalize "
                         "standard|minmax, or divide the column)")


class SimplexLines:
    """The part of an exact line search on the simplex that does not read the data: its
    arguments checked, and the point it chose recorded (for :class:`LinearObjective` and
    the objective of data held on a cluster, :class:`dfrank.cluster.ClusterObjective`)."""

    def line_arguments(self, point, direction):
        """``(lambda, direction, j)`` of :meth:`line`, checked; j is the coordinate the
        direction is a unit vector of, else -1."""
        lam = self.space.check(np.asarray(point, dtype=np.float64))
        if lam.ndim != 1:
            raise ValueError(f"a line search starts from one point, got shape {lam.shape}")
        delta = np.asarray(direction, dtype=np.float64)
        finite, j = (False, -1) if delta.shape != (self.space.dim,) else direction_kind(delta)
        if not finite:
            raise ValueError(f"direction must have {self.space.dim} finite coordinates, "
                             f"got shape {delta.shape}: {delta}")
        return lam, delta, j

    def line_end(self, lam, delta, res):
        """Record the point a line search from ``lam`` along ``delta`` chose (``res``, a
        LineResult) at the line's value, and return it: lam, or the projection of
        lam + t delta."""
        new = lam if res.t == 0 else self.space.project(lam + res.t * delta)
        self.n_evals -= 1  # _record counts it again
        self._record(new[None, :], np.array([res.value]))
        return new


class LinearObjective(SimplexLines, Objective):
    """Mean metric of the linear ranker ``w = Simplex.to_weights(lambda)`` on ``data``.

    Parameters
    ----------
    data : RankingData
    metric : str, Metric or numba function
    ties : tie policy of the metric (default "pessimistic": an optimizer cannot profit
        from ties)
    max_evals, max_seconds : optional budget
    **metric_options : gain, rel_threshold, empty, max_grade
    """

    is_linear = True
    concurrent = True   # restarts may evaluate it from several threads at once
    line_cache_share = 1.0   # of LINE_CACHE_BYTES (a part of data split by query: less)

    def __init__(self, data, metric=DEFAULT_METRIC, *, ties=DEFAULT_TIES, max_evals=None,
                 max_seconds=None, **metric_options):
        if not isinstance(data, RankingData):
            raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
        self.data = data
        _check_magnitude(data)
        self.bound = bind_metric(data, metric, ties, **metric_options)
        self.metric = self.bound.metric
        self.ties = ties
        self.XT = features_T(data)
        self.rows = nonzero_rows(data)  # the features dot products read
        self._classes = None
        self._scratch = PerThread()  # line-search work buffers, kept between calls
        super().__init__(Simplex(data.n_features), max_evals=max_evals, max_seconds=max_seconds)

    def __repr__(self):
        return (f"LinearObjective({self.metric.name!r}, n_queries={self.data.n_queries}, "
                f"n_features={self.data.n_features}, ties={self.ties!r})")

    # ------------------------------------------------------------------ scores and values
    def scores(self, points):
        """Scores of one simplex point (n_docs,) or of a batch (P, n_docs)."""
        pts = np.asarray(points, dtype=np.float64)
        return linear_scores(self.XT, self.space.to_weights(pts), self.rows)

    def _values(self, pts):
        W = pts[:, :-1] - pts[:, -1:]  # Simplex.to_weights on checked points
        return self.bound.mean(self.per_query_weights(W))

    def per_query_weights(self, W):
        """Per-query values ``[P, n_queries]`` of linear weights ``W`` (P, d), scoring
        fused with ranking. Not counted as evaluations."""
        return self.bound.per_query_linear(self.XT, W, self.rows)

    def per_query(self, point):
        """Per-query metric values at one point (not counted as an evaluation)."""
        lam = self.space.check(np.asarray(point, dtype=np.float64))
        return self.bound.per_query(self.scores(lam))

    def value_of_scores(self, scores):
        """Mean metric of a score vector (not counted)."""
        return float(self.bound.mean(self.bound.per_query(scores)))

    # ------------------------------------------------------------------ line search
    def _coordinate_line(self, j):
        """``(u, rows sorted by u within each query)`` along simplex coordinate j, computed
        once per coordinate and kept with the data (a coordinate ascent searches each
        coordinate many times; the scores' product is then made for one vector, not two)
        while the kept lines stay within ``LINE_CACHE_BYTES`` (times ``line_cache_share``:
        a part of data split by query keeps its share, :mod:`dfrank.cluster`). The lines
        beyond it (web-sized sets, 16 bytes a document each) are computed at each use,
        without the order: the line search's candidates then sort each query's rows
        themselves, in the same stable order, in scratch of their own."""
        lines = self.data.derived.coordinate_lines
        line = lines.get(j)
        if line is None:
            if j < self.XT.shape[0]:  # feature j itself, in float64
                u = np.empty(self.XT.shape[1])
                with one_at_a_time():
                    widened_into(self.XT[j], u)
            else:  # the augmented coordinate: w = -1 for every feature
                u = linear_scores(self.XT, self.space.direction_to_weights(
                    np.eye(self.space.dim)[j]), self.rows)
            size = 2 * u.nbytes   # u and its order (int64)
            if sum(a.nbytes + b.nbytes for a, b in lines.values()) + size > \
                    LINE_CACHE_BYTES * self.line_cache_share:
                return u, None
            line = lines[j] = (u, sort_within_queries(u, self.data.qptr))
        return line

    def flat_coordinates(self):
        """Boolean mask of the d + 1 simplex coordinates whose line changes no ranking
        (a feature constant inside every query, e.g. an all-zero LETOR feature); a
        coordinate ascent can skip them."""
        flat = self.data.derived.flat_coordinates
        if flat is None:
            qptr = self.data.qptr
            # writable rows, as the line search's directions are: one compiled kernel
            flat = np.array([flat_within_queries(np.array(self.XT[j]), qptr)
                             for j in range(self.XT.shape[0])] +
                            [flat_within_queries(self.XT.sum(axis=0), qptr)])
            self.data.derived.flat_coordinates = flat
        return flat

    @property
    def exact_line(self):
        """Whether the exact line search serves this metric and tie policy (see
        :attr:`exact_line_reason`)."""
        return self.exact_line_reason is None

    @property
    def exact_line_reason(self):
        """Why the exact line search cannot serve this objective, or None."""
        return unsupported(self.metric, self.ties)

    def expect_lines(self):
        """Exact line searches are coming: their sweep kernel starts compiling in the
        background now, if it is not cached (:mod:`dfrank._jit.background`)."""
        if self.exact_line:
            compile_sweep_ahead(self.bound, self.classes)

    @property
    def classes(self):
        if self._classes is None:
            self._classes = LineClasses.of(self.bound)
        return self._classes

    def line_scores(self, s0, u, *, rule="best", window=None, floor=-np.inf, u_order=None,
                    within=None):
        """Exact line search along s0 + t u (scores), over all t or over the segment
        ``within=(lo, hi)``; counts ``line_cost`` evaluations (raises BudgetExhausted when
        fewer are left).

        Returns a :class:`~dfrank.linesearch.LineResult`. The caller records the point.
        """
        allowed, reason = self._allowance(self.line_cost)
        if allowed < self.line_cost:
            raise self._exhausted(reason)
        res = line_search(self.bound, self.classes, s0, u, rule=rule, window=window,
                          floor=floor, u_order=u_order, scratch=self._scratch.get(),
                          within=within)
        self.n_evals += self.line_cost
        self.n_lines += 1
        return res

    def line(self, point, direction, *, rule="best", window=None, floor=-np.inf,
             within=None, scores=None):
        """Exact line search from simplex point ``point`` along ``direction`` (d + 1
        coordinates): scores move along X . to_weights(point + t direction), over all
        t in R (or t in ``within=(lo, hi)``). The new point is ``Simplex.project(point +
        t direction)`` (returned as ``LineResult.point``); it is recorded as evaluated
        with the line's value. Counts ``line_cost`` evaluations. ``rule``, ``window`` and
        ``floor``: see :func:`dfrank.linesearch.choose`.

        ``scores``: the scores at ``point`` (:meth:`scores`), when the caller holds them.
        They are not computed again, and ``LineResult.scores`` holds those at the new
        point, (s0 + t u) / Z with Z the projection's divisor (the same ranking as the
        product over all features at the new point, within rounding): a coordinate ascent
        carries them from one line to the next.
        """
        lam, delta, j = self.line_arguments(point, direction)
        s0 = None if scores is None else self._given_scores(scores)
        s0, u, u_order = self.line_start(lam, delta, j, s0)
        res = self.line_scores(s0, u, rule=rule, window=window, floor=floor, u_order=u_order,
                               within=within)
        new = self.line_end(lam, delta, res)
        carried = None
        if scores is not None:
            carried = s0 if res.t == 0 else moved_scores(s0, u, res.t, lam + res.t * delta)
        return LineResult(res.value, res.t, res.lower, res.upper, res.n_crossings,
                          res.profile, new, carried)

    def line_start(self, lam, delta, j, s0=None):
        """``(s0, u, u_order)`` of the line from ``lam`` along ``delta`` (:meth:`line`):
        the scores at the start (``s0`` when given), along the direction, and the rows
        sorted by u within each query when kept with the data (else None)."""
        w = lam[:-1] - lam[-1]  # Simplex.to_weights of a checked point
        if j >= 0:  # a coordinate: its u and order are kept with the data
            u, u_order = self._coordinate_line(j)
            if s0 is None:
                s0 = linear_scores(self.XT, w, self.rows)
            return s0, u, u_order
        if s0 is None:
            s0, u = linear_scores(self.XT, np.vstack([w, delta[:-1] - delta[-1]]), self.rows)
        else:
            u = linear_scores(self.XT, delta[:-1] - delta[-1], self.rows)
        return s0, u, None

    def _given_scores(self, scores):
        """A caller's scores at a line's start, checked as float64 of one per document."""
        s = np.ascontiguousarray(scores, dtype=np.float64)
        if s.shape != (self.data.n_docs,):
            raise ValueError(f"scores must hold one score per document ({self.data.n_docs},)"
                             f", got shape {s.shape}")
        return s


def moved_scores(s0, u, t, moved, out=None):
    """The scores at ``Simplex.project(moved)``, moved = point + t direction, from those
    at the point (s0) and the direction's (u): the projection shifts every coordinate
    alike, which the weights do not see, and divides by Z = sum(moved - min(0, min
    moved)), so the weights are (w + t d) / Z and the scores (s0 + t u) / Z. One pass over
    the documents, against one over every feature of every document to score anew.
    ``out``: where to write them (a new array when None)."""
    z = float(np.sum(moved - min(0.0, float(moved.min()))))
    out = np.empty_like(s0) if out is None else out
    with one_at_a_time():   # pieces of documents
        moved_scores_into(s0, u, float(t), z, out)
    return out


class ScoringObjective(Objective):
    """A retrieval model with a few parameters: ``score_fn(x)`` gives one score per
    document of ``data`` and the objective is the mean metric of those scores.

    Parameters
    ----------
    score_fn : callable x -> array (n_docs,)
    data : RankingData (only labels and queries are used)
    space : Box (or Simplex)
    metric, ties, max_evals, max_seconds, **metric_options : as :class:`LinearObjective`
    """

    def __init__(self, score_fn, data, space, metric=DEFAULT_METRIC, *, ties=DEFAULT_TIES,
                 max_evals=None, max_seconds=None, **metric_options):
        if not callable(score_fn):
            raise TypeError("score_fn must be callable: x -> one score per document")
        if not isinstance(space, (Box, Simplex)):
            raise TypeError(f"space must be a Box or a Simplex, got {type(space).__name__}")
        self.score_fn = score_fn
        self.data = data
        self.bound = bind_metric(data, metric, ties, **metric_options)
        self.metric = self.bound.metric
        self.ties = ties
        super().__init__(space, max_evals=max_evals, max_seconds=max_seconds)

    def scores(self, x):
        s = np.asarray(self.score_fn(np.array(x, dtype=np.float64)))
        if s.shape != (self.data.n_docs,):
            raise ValueError(f"score_fn returned shape {s.shape}; expected "
                             f"({self.data.n_docs},), one score per document")
        s = np.ascontiguousarray(s, dtype=np.float64)
        if not np.all(np.isfinite(s)):
            i = int(np.flatnonzero(~np.isfinite(s))[0])
            raise ValueError(f"score_fn returned {s[i]} for document {i} at x = {x}; "
                             "scores must be finite")
        return s

    def _values(self, pts):
        S = np.vstack([self.scores(x) for x in pts])
        return self.bound.mean(self.bound.per_query_batch(S))

    def per_query(self, x):
        return self.bound.per_query(self.scores(self.space.check(np.asarray(x, float))))


class FunctionObjective(Objective):
    """Any black-box ``fn(x) -> float`` to maximize over ``space``."""

    def __init__(self, fn, space, *, max_evals=None, max_seconds=None):
        if not callable(fn):
            raise TypeError("fn must be callable: x -> float")
        if not isinstance(space, (Box, Simplex)):
            raise TypeError(f"space must be a Box or a Simplex, got {type(space).__name__}")
        self.fn = fn
        super().__init__(space, max_evals=max_evals, max_seconds=max_seconds)

    def _values(self, pts):
        out = np.empty(len(pts))
        for i, x in enumerate(pts):
            v = float(self.fn(np.array(x)))
            if not np.isfinite(v):
                raise ValueError(f"fn returned {v} at x = {x}; values must be finite")
            out[i] = v
        return out


def make_objective(data_or_objective, metric=None, ties=None):
    """The objective a run maximizes: an :class:`Objective` as it is, or the
    :class:`LinearObjective` of ``metric`` (default :data:`~dfrank.metrics.DEFAULT_METRIC`)
    under ``ties`` (default pessimistic) on a RankingData."""
    if isinstance(data_or_objective, Objective):
        for name, given in (("metric", metric), ("ties", ties)):
            if given is not None:
                raise ValueError(f"{name}= is for data; this objective already has its "
                                 f"{name} ({getattr(data_or_objective, name, None)})")
        return data_or_objective
    if isinstance(data_or_objective, RankingData):
        return LinearObjective(data_or_objective, metric or DEFAULT_METRIC,
                               ties=ties or DEFAULT_TIES)
    raise TypeError("maximize needs a RankingData, data on a Dask cluster (a Dask "
                    "collection, a list of shard paths, dfrank.cluster.ClusterData) or an "
                    f"Objective, got {type(data_or_objective).__name__}")
