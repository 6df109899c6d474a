"""Evaluating scores with rank metrics: :func:`evaluate`, and :func:`bind_metric`, the
metric bound to a dataset's labels and queries (kept with the data)."""

import numpy as np

from ..data import RankingData
from .bound import BoundMetric
from .registry import get as get_metric
from .registry import with_options

__all__ = ["evaluate", "bind_metric", "check_scores"]


def bind_metric(data, metric, ties="pessimistic", **options):
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
        raise ValueError(f"scores[{i}] is {s[i]}: scores must be finite")
    return s


def evaluate(scores, data, metrics="ndcg@10", *, ties="pessimistic", per_query=False,
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
    if not isinstance(data, RankingData):
        raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
    s = check_scores(scores, data)
    single = not isinstance(metrics, (list, tuple))
    names = [metrics] if single else list(metrics)
    out = {}
    for name in names:
        bound = bind_metric(data, name, ties, **options)
        values = bound.per_query(s)
        out[bound.name] = values if per_query else float(bound.mean(values))
    return next(iter(out.values())) if single else out
