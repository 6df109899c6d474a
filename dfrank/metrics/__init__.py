"""Rank-based metrics: numba kernels over the flat query layout, and a name registry.

>>> from dfrank import metrics
>>> metrics.get("NDCG@10").name
'ndcg@10'
"""

from .bound import BoundMetric, versions
from .registry import (DEFAULT_METRIC, DEFAULT_TIES, RUN_METRIC, RUN_TIES, Metric, describe,
                       get_metric, metric_names, register_metric, unregister)

# in this package's namespace the short names say which registry
get, available, register = get_metric, metric_names, register_metric

__all__ = ["Metric", "BoundMetric", "available", "describe", "get", "register", "unregister",
           "get_metric", "metric_names", "register_metric",
           "DEFAULT_METRIC", "DEFAULT_TIES", "RUN_METRIC", "RUN_TIES", "versions"]
