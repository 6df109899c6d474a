"""The objective of a linear ranker on data held by a Dask cluster (:class:`ClusterObjective`):
the same values, lines and points as :class:`~dfrank.objectives.objective.LinearObjective` on the
same data in one process, bit for bit, with the features never leaving their workers.

Per evaluation the workers send their queries' values; per exact line search their
queries' breakpoints (:mod:`dfrank.linesearch.split`), which the driver joins and
chooses from. A line is one task per worker (its parts together), which first moves its
scores by the previous line's step. Scores stay on the workers: the driver holds
:class:`ClusterScores`, futures of where their chain of moves began and the steps since.
"""

import time
import uuid
from dataclasses import dataclass

import numpy as np

from .._kernels.scratch import Scratch
from ..linesearch import LineResult, unsupported
from ..linesearch.split import line_join, search_parts
from ..metrics.bound import query_mean
from ..metrics.evaluation import each_metric
from ..metrics.registry import DEFAULT_METRIC, DEFAULT_TIES, get_metric, with_options
from ..objectives.objective import Objective, SimplexLines
from ..spaces import Simplex
from . import tasks

__all__ = ["ClusterObjective", "ClusterScores", "evaluate_linear", "evaluate"]


def metric_on_parts(metric, options, data):
    """``(the metric with options, the options each part binds it with)``: those given, and
    the largest label of all parts where the metric reads the data's (ERR's
    normalization), so that every part normalizes as the whole does."""
    m = get_metric(metric)
    if options:
        m = with_options(m, **options)
    options = dict(options)
    if m.max_grade is None:
        options["max_grade"] = data.max_label
    return m, options


@dataclass(frozen=True)
class ClusterScores:
    """Scores at ``point``, kept on the workers as a chain: ``start``, one future per
    group of parts (a worker's parts), holds the scores where the chain began (at a point,
    or at a checkpoint); ``state`` names them; ``steps`` are the line searches' steps since
    (start, direction, coordinate, t and the state after). A line's task moves the scores
    its worker reached last by the steps it has not made (one step, as a rule), so no task
    per line moves scores alone; every :data:`CHECKPOINT_STEPS` steps a checkpoint starts
    a new chain, which bounds what a worker that lost its scores makes again."""
    point: np.ndarray
    start: tuple
    state: str
    steps: tuple = ()


CHECKPOINT_STEPS = 16


class ClusterObjective(SimplexLines, Objective):
    """Mean metric of the linear ranker ``w = Simplex.to_weights(lambda)`` on
    :class:`~dfrank.cluster.ClusterData`: :class:`~dfrank.objectives.objective.LinearObjective`'s
    interface (values, batches, scores, exact lines along any direction), its restarts
    run one after another, each line search split over the workers. ``traffic`` counts
    the line searches of every restart: lines, bytes and breakpoint rows sent to the
    driver, the seconds until the last worker's rows are in (joined as they come) and
    the seconds choosing after."""

    is_linear = True
    on_cluster = True

    def __init__(self, data, metric=DEFAULT_METRIC, *, ties=DEFAULT_TIES, max_evals=None,
                 max_seconds=None, **metric_options):
        m, options = metric_on_parts(metric, metric_options, data)
        self.data = data
        self.metric = m
        self.ties = ties
        self.parts = data.bound(m, ties, options)
        data.wait(self.parts)   # errors of binding (the data's, the metric's) now
        # what the line searches moved and where their time went, over every restart
        self.traffic = {"lines": 0, "bytes": 0, "rows": 0, "gather_seconds": 0.0,
                        "choose_seconds": 0.0}
        self._groups = None
        self._scratch = Scratch()   # the driver's buffers for joining a line's breakpoints
        super().__init__(Simplex(data.n_features), max_evals=max_evals,
                         max_seconds=max_seconds)

    def __repr__(self):
        return (f"ClusterObjective({self.metric.name!r}, {len(self.parts)} parts, "
                f"n_queries={self.data.n_queries}, n_features={self.data.n_features}, "
                f"ties={self.ties!r})")

    def _submit(self, fn, *args, each=None, priority=0):
        """``fn(part, *args, *each[i])`` on every part, futures in order."""
        client = self.data.client
        return tuple(client.submit(fn, p, *args, *(() if each is None else each[i]),
                                   pure=False, priority=priority)
                     for i, p in enumerate(self.parts))

    def _gather(self, fn, *args, each=None, submit=None, arrived=None):
        """:meth:`_submit`'s results (or those of ``submit``, a function of ``fn``, ``args``
        and ``each``), waited for: before any task queued without waiting, and fetched
        from the workers straight, not through the scheduler (unless the client was made
        with ``direct_to_workers=False``: workers it cannot reach). Those done are fetched
        while the others still run, so that a worker's results travel (and
        ``arrived(i, result)`` works on them) while a slower one computes."""
        from distributed import as_completed

        client = self.data.client
        direct = getattr(client, "direct_to_workers", None) is not False
        futures = (submit or self._submit)(fn, *args, each=each, priority=1)
        where = {f.key: i for i, f in enumerate(futures)}
        out = [None] * len(futures)
        for batch in as_completed(futures).batches():
            for f, r in zip(batch, client.gather(batch, direct=direct)):
                out[where[f.key]] = r
                if arrived is not None:
                    arrived(where[f.key], r)
        return out

    @property
    def groups(self):
        """The parts by the worker that holds them (lists of part indices, in the parts'
        order), and a key naming each group: a line on W workers is W tasks."""
        if self._groups is None:
            who = self.data.client.who_has(list(self.parts))
            by = {}
            for i, f in enumerate(self.parts):
                holders = sorted(who.get(f.key, ())) or [None]
                by.setdefault(holders[0], []).append(i)
            self._groups = [(w, idx, "|".join(self.parts[i].key for i in idx))
                            for w, idx in by.items()]
        return self._groups

    def _submit_groups(self, fn, *args, each=None, priority=0):
        """``fn(its parts, its key, *args, *each[g])`` on every group of parts, on the
        worker that holds them (elsewhere if it is gone), futures in the groups' order.
        The tasks go to the scheduler in one graph (``client.map``), each pinned to its
        worker by a key -> worker annotation (:func:`dask.annotate` calls it with each
        task's key): one submission per task would reach the scheduler one after another,
        and the last worker would start its share of the line that much later."""
        import dask

        client = self.data.client
        groups = self.groups
        name = f"{fn.__name__}-{uuid.uuid4().hex}"
        keys = [f"{name}-{g}" for g in range(len(groups))]
        pinned = {k: [w] for k, (w, _, _) in zip(keys, groups)}
        n = len(groups)
        columns = ([[self.parts[i] for i in idx] for _, idx, _ in groups],
                   [key for *_, key in groups], *([a] * n for a in args),
                   *(() if each is None else (list(c) for c in zip(*each))))
        # a holder not known (None): every task where Dask puts it (near its parts)
        known = all(w is not None for w, _, _ in groups)
        with dask.annotate(**({"workers": pinned.get, "allow_other_workers": True}
                              if known else {})):
            return tuple(client.map(fn, *columns, key=keys, pure=False, priority=priority))

    @property
    def _skip(self):
        return self.metric.empty == "skip"

    # ------------------------------------------------------------------ values
    def per_query_weights(self, W):
        """Per-query values ``[P, n_queries]`` of linear weights ``W`` (P, d)."""
        W = np.ascontiguousarray(W, dtype=np.float64)
        return np.concatenate(self._gather(tasks.per_query, W), axis=1)

    def _values(self, pts):
        W = pts[:, :-1] - pts[:, -1:]  # Simplex.to_weights on checked points
        return query_mean(self.per_query_weights(W), self._skip)

    def per_query(self, point):
        """Per-query metric values at one point (not counted as an evaluation)."""
        lam = self.space.check(np.asarray(point, dtype=np.float64))
        return self.per_query_weights((lam[:-1] - lam[-1])[None, :])[0]

    def scores(self, points):
        """The scores at one simplex point, kept on the workers: :class:`ClusterScores`."""
        lam = self.space.check(np.asarray(points, dtype=np.float64))
        if lam.ndim != 1:
            raise ValueError("on a cluster the scores of one point at a time are kept "
                             f"(on the workers), got shape {lam.shape}")
        state = tasks.step_state("scores", lam, lam, -1, 0.0)
        return ClusterScores(lam, self._submit_groups(tasks.group_scores, lam, state), state)

    def flat_coordinates(self):
        """The coordinates whose line changes no ranking of any part."""
        return np.logical_and.reduce(self._gather(tasks.flat))

    # ------------------------------------------------------------------ line search
    @property
    def exact_line(self):
        return self.exact_line_reason is None

    @property
    def exact_line_reason(self):
        return unsupported(self.metric, self.ties)

    def line_scores(self, s0, u, **kwargs):
        raise TypeError("on a cluster the scores stay on the workers: search lines with "
                        "line(point, direction) (the strategies that search segments of "
                        "the simplex's face, such as ca with nonnegative=True, do not run "
                        "on a cluster)")

    def line(self, point, direction, *, rule="best", window=None, floor=-np.inf,
             within=None, scores=None):
        """:meth:`LinearObjective.line` with the queries' sweeps on their workers (see
        :mod:`dfrank.linesearch.split`); ``scores`` and ``LineResult.scores`` are
        :class:`ClusterScores`."""
        lam, delta, j = self.line_arguments(point, direction)
        if scores is not None and not isinstance(scores, ClusterScores):
            raise TypeError(f"scores must be the ClusterScores of scores(point), got "
                            f"{type(scores).__name__}")
        allowed, reason = self._allowance(self.line_cost)
        if allowed < self.line_cost:
            raise self._exhausted(reason)
        t0 = time.perf_counter()
        join = line_join(self.data.part_queries, rule, self._scratch)

        def arrived(g, rows):   # joined while other workers still sweep
            for i, r in zip(self.groups[g][1], rows):
                join.add(i, r)

        self._gather(tasks.group_line, lam, delta, j, each=self._chains(scores),
                     submit=self._submit_groups, arrived=arrived)
        t1 = time.perf_counter()
        res = search_parts(join, lambda v: query_mean(v, self._skip), skip=self._skip,
                           rule=rule, window=window, floor=floor, within=within)
        self._count(join.parts, t1 - t0, time.perf_counter() - t1)
        self.n_evals += self.line_cost
        self.n_lines += 1
        new = self.line_end(lam, delta, res)
        return LineResult(res.value, res.t, res.lower, res.upper, res.n_crossings,
                          res.profile, new, None if scores is None else
                          self._carried(scores, new, (lam.copy(), delta.copy(), j, res.t)))

    def _chains(self, scores, steps=None):
        """Each group's chain of ``scores`` (its own start), as the ``each`` of
        :meth:`_submit_groups` (None: no scores)."""
        if scores is None:
            return [(None,)] * len(self.groups)
        steps = scores.steps if steps is None else steps
        return [((start, scores.state, steps),) for start in scores.start]

    def _carried(self, scores, point, step):
        """The :class:`ClusterScores` at ``point``, reached from ``scores`` by ``step``
        (none when the line chose t = 0), a checkpoint every :data:`CHECKPOINT_STEPS`.
        The step holds copies of the caller's point and direction: a worker may replay it
        lines later, after the caller reused its arrays."""
        if step[3] == 0:
            return ClusterScores(point, scores.start, scores.state, scores.steps)
        state = tasks.step_state(scores.steps[-1][4] if scores.steps else scores.state,
                                 *step)
        steps = scores.steps + (step + (state,),)
        if len(steps) < CHECKPOINT_STEPS:
            return ClusterScores(point, scores.start, scores.state, steps)
        return ClusterScores(point, self._submit_groups(
            tasks.group_moved, each=self._chains(scores, steps)), state)

    def _count(self, rows, gather, choose):
        t = self.traffic
        t["lines"] += 1
        t["bytes"] += sum(r.nbytes for r in rows)
        t["rows"] += sum(len(r.t) for r in rows)
        t["gather_seconds"] += gather
        t["choose_seconds"] += choose


def evaluate_linear(weights, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES,
                    per_query=False, **options):
    """:func:`dfrank.metrics.evaluation.evaluate_linear` of data on a cluster (a
    :class:`~dfrank.cluster.ClusterData`, a Dask collection or shard paths): each part's
    queries evaluated where they are, the same values as in one process."""
    from .data import as_cluster_data

    data = as_cluster_data(data)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (data.n_features,) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be {data.n_features} finite numbers (one per "
                         f"feature), got shape {w.shape}")
    def value_of(name):
        objective = ClusterObjective(data, name, ties=ties, **options)
        values = objective.per_query_weights(w[None, :])[0]
        return objective.metric.name, values if per_query else \
            float(query_mean(values, objective._skip))

    return each_metric(metrics, value_of)


def evaluate(scores, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES, per_query=False,
             **options):
    """:func:`dfrank.evaluate` of ``scores`` (a Dask array, one score per document in the
    rows' order) on data held by a cluster: each part's queries evaluated where they are,
    with its own slice of the scores, to the same values as in one process."""
    from .data import as_cluster_data

    data = as_cluster_data(data)
    if not hasattr(scores, "to_delayed") or getattr(scores, "ndim", 0) != 1 or \
            scores.shape[0] != data.n_docs:
        raise ValueError(f"scores of data on a cluster must be a 1-D Dask array of "
                         f"{data.n_docs} scores (one per document, in the rows' order), got "
                         f"{type(scores).__name__} of shape {getattr(scores, 'shape', None)}")
    client = data.client
    pieces = scores.rechunk((tuple(data.part_docs),)).to_delayed().ravel()
    chunks = [client.compute(p) for p in pieces]
    def value_of(name):
        m, opts = metric_on_parts(name, options, data)
        values = np.concatenate(client.gather([
            client.submit(tasks.values_of_scores, p, c, m, ties, opts, pure=False)
            for p, c in zip(data.parts, chunks)]))
        return m.name, values if per_query else float(query_mean(values, m.empty == "skip"))

    return each_metric(metrics, value_of)
