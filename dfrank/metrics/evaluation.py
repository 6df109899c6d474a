"""Evaluating scores with rank metrics: :func:`evaluate`, and :func:`bind_metric`, the
metric bound to a dataset's labels and queries (kept with the data)."""

import numpy as np

from .._kernels.scoring import features_T
from ..data.ranking import RankingData
from ..errors import DataFormatError
from .bound import BoundMetric
from .registry import DEFAULT_METRIC, DEFAULT_TIES
from .registry import get_metric
from .registry import with_options

__all__ = ["evaluate", "evaluate_linear", "bind_metric", "check_scores"]


def bind_metric(data, metric, ties=DEFAULT_TIES, /, **options):
    """The :class:`BoundMetric` of ``metric`` on ``data``, kept with the data
    (``data.derived.metrics``)."""
    m = get_metric(metric)
    if options:
        m = with_options(m, **options)
    key = (m.key, ties)
    bound = data.derived.metrics.get(key)
    if bound is None:
        bound = data.derived.metrics[key] = BoundMetric(m, data.y, data.qptr, ties,
                                                        unranked=data.unranked)
    return bound


def check_scores(scores, data):
    """``scores`` as a float64 vector of one finite score per document of ``data``."""
    s = np.asarray(scores)
    if s.ndim != 1 or s.shape[0] != data.n_docs:
        raise ValueError(f"scores must have shape ({data.n_docs},) (one per document), "
                         f"got {s.shape}")
    if not np.issubdtype(s.dtype, np.number):
        raise TypeError(f"scores must be numbers, got dtype {s.dtype}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        i = int(np.flatnonzero(~np.isfinite(s))[0])
        raise DataFormatError(f"scores[{i}] is {s[i]}: scores must be finite")
    return s


def evaluate(scores, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES, per_query=False,
             **options):
    """Evaluate one score per document with one or more rank metrics.

    Parameters
    ----------
    scores : array-like (n_docs,)
        Higher is better.
    data : RankingData
    metrics : str, Metric, numba function, or a list of them
        Names such as ``"ndcg@10"``, ``"map"``, ``"p@5"`` (see ``dfrank.metrics.available()``).
    ties : {"pessimistic", "optimistic", "stable", "expected"}
        How documents with equal scores are ordered (see :mod:`dfrank.metrics._rank`).
    per_query : bool
        Return per-query values (NaN marks a query left out by ``empty="skip"``).
    **options
        Metric options: ``gain``, ``rel_threshold``, ``empty``, ``max_grade``.

    Returns
    -------
    float, ndarray, or dict
        A float (or array with ``per_query``) for one metric; a dict name → value for a list.
    """
    _check_data(data)
    s = check_scores(scores, data)
    return _each_metric(data, metrics, ties, per_query, options, lambda b: b.per_query(s))


def evaluate_linear(weights, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES, per_query=False,
                    **options):
    """:func:`evaluate` of the linear scorer ``weights`` (one per feature of ``data``).

    The same values as ``evaluate`` of the scores ``X @ weights`` summed in dfrank's order
    (:func:`dfrank._kernels.scoring.linear_scores`), computed in one pass that scores and
    ranks, without a score vector.
    """
    _check_data(data)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (data.n_features,):
        raise ValueError(f"weights must have shape ({data.n_features},) (one per feature), "
                         f"got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite, got {w}")
    XT = features_T(data)
    return _each_metric(data, metrics, ties, per_query, options,
                        lambda b: b.per_query_linear(XT, w[None, :])[0])


def _check_data(data):
    if not isinstance(data, RankingData):
        raise TypeError(f"data must be a RankingData, got {type(data).__name__}")


def each_metric(metrics, value_of):
    """The one loop over one metric or a list of them: ``value_of(metric)`` gives ``(name,
    value)``; the value for one metric, a dict name -> value for a list."""
    single = not isinstance(metrics, (list, tuple))
    out = dict(value_of(m) for m in ([metrics] if single else list(metrics)))
    return next(iter(out.values())) if single else out


def _each_metric(data, metrics, ties, per_query, options, per_query_values):
    """Each metric's mean (or per-query values) of ``per_query_values(bound metric)``."""
    def value_of(name):
        bound = bind_metric(data, name, ties, **options)
        values = per_query_values(bound)
        return bound.name, values if per_query else float(bound.mean(values))

    return each_metric(metrics, value_of)
