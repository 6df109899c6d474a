"""Data no single machine holds: a linear ranker fitted and evaluated on a Dask cluster,
each worker holding whole queries (see DESIGN.md, "Data on a cluster").

:func:`from_dask` and :func:`from_shards` make a :class:`ClusterData`, which
:func:`dfrank.maximize`, :class:`dfrank.DirectRanker` and :func:`dfrank.evaluate_linear`
take (as they take a Dask collection or a list of shard paths), with the same model as
one process on the same data.
"""

from .data import CONNECT_TIMEOUT, ClusterData, as_cluster_data, from_dask, from_shards, \
    get_client, is_cluster_input
from .objective import ClusterObjective, ClusterScores

__all__ = ["ClusterData", "ClusterObjective", "ClusterScores", "from_dask", "from_shards",
           "get_client", "as_cluster_data", "is_cluster_input", "CONNECT_TIMEOUT"]
