"""Rank-based metrics: numba kernels over the flat query layout, and a name registry.

>>> from dfrank import metrics
>>> metrics.get("NDCG@10").name
'ndcg@10'
"""

from .bound import BoundMetric
from .registry import (DEFAULT_METRIC, RUN_METRIC, RUN_TIES, Metric, available, describe,
                       get, register, unregister)

__all__ = ["Metric", "BoundMetric", "available", "describe", "get", "register", "unregister",
           "DEFAULT_METRIC", "RUN_METRIC", "RUN_TIES"]
