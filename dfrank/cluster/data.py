"""Ranking data held by a Dask cluster's workers, split by query: what the driver knows of
it (:class:`ClusterData`), and how it is made from Dask collections or shard files.

The driver keeps one future per part (its :class:`~dfrank.RankingData`, on a worker) and
the parts' query ids, sizes and feature ids; never their features.
"""

import glob
import os

import numpy as np

from .._optional import need
from ..errors import DataFormatError, UsageError
from . import tasks

__all__ = ["ClusterData", "from_dask", "from_shards", "as_cluster_data", "is_cluster_input",
           "get_client"]


# seconds to wait for a scheduler's first answer (Dask's own default waits 30)
CONNECT_TIMEOUT = 10.0


def get_client(client=None, scheduler=None, connect_timeout=CONNECT_TIMEOUT):
    """The Dask client to use: ``client``; else one for ``scheduler`` (an address); else
    the current one; else one for the address Dask's configuration names
    (``DASK_SCHEDULER_ADDRESS``). Never starts a cluster of its own. A scheduler that does
    not answer within ``connect_timeout`` seconds is a :class:`~dfrank.errors.UsageError`
    naming its address."""
    dask = need("dask", "data on a Dask cluster")
    distributed = need("distributed", "data on a Dask cluster")
    current = distributed.get_client
    if client is not None:
        return client
    try:
        here = current()
    except ValueError:
        here = None
    if scheduler is not None:   # this process's client of that scheduler, if it has one
        same = here is not None and here.scheduler is not None and \
            here.scheduler.address == scheduler
        return here if same else _connect(distributed, scheduler, connect_timeout)
    if here is not None:
        return here
    address = dask.config.get("scheduler-address", None)
    if address:
        return _connect(distributed, address, connect_timeout)
    raise ValueError("no Dask cluster to use: make a distributed.Client first, pass "
                     "client= (or scheduler='ADDRESS'), or set DASK_SCHEDULER_ADDRESS")


def _connect(distributed, address, timeout):
    """A client of the scheduler at ``address``, or a UsageError when it does not answer
    within ``timeout`` seconds (a wrong address, a scheduler not started)."""
    if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
            and timeout > 0):
        raise ValueError(f"connect_timeout must be a number of seconds > 0, got {timeout!r}")
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as e:
        raise UsageError(f"no Dask scheduler answered at {address} within {timeout:g} s "
                         f"({type(e).__name__}): is it running, and is that its address? "
                         "(--connect-timeout sets the wait)") from None


class ClusterData:
    """Learning-to-rank data whose queries are split into parts held by Dask workers.

    Made by :func:`from_dask` or :func:`from_shards` (or passed to :func:`dfrank.maximize`,
    :class:`dfrank.DirectRanker` and :func:`dfrank.evaluate_linear` as a Dask collection
    or a list of shard paths). Query ``q`` of the whole is query ``q - first`` of its part;
    the parts' order is the queries' order, as if their rows were one file.

    Attributes: ``client``, ``parts`` (futures of the parts' RankingData), ``names`` (where
    each part came from), ``part_docs`` and ``part_queries`` (its documents and queries),
    ``n_queries``, ``n_docs``,
    ``n_features``, ``feature_ids``, ``qids``, ``max_label``, ``digest``,
    ``within_queries`` (features normalized within each query in every part), ``source``.
    """

    def __init__(self, client, parts, summaries, source):
        self.client = client
        self.parts = list(parts)
        self.names = [s["source"] for s in summaries]
        self.part_docs = [int(s["n_docs"]) for s in summaries]
        self.part_queries = [len(s["qids"]) for s in summaries]
        self.qids = np.concatenate([np.asarray(s["qids"]) for s in summaries])
        self.n_queries = len(self.qids)
        self.n_docs = int(sum(s["n_docs"] for s in summaries))
        self.n_features = int(summaries[0]["n_features"])
        self.feature_ids = np.asarray(summaries[0]["feature_ids"])
        self.max_label = max(s["max_label"] for s in summaries)
        self.digest = tasks.digest([s["digest"] for s in summaries])
        self.within_queries = all(s["within_queries"] for s in summaries)
        self.source = source
        self._bound = {}

    def __repr__(self):
        return (f"ClusterData({len(self.parts)} parts, n_queries={self.n_queries}, "
                f"n_docs={self.n_docs}, n_features={self.n_features})")

    def bound(self, metric, ties, options):
        """Futures of the parts' objectives for ``metric`` under ``ties`` (made once)."""
        key = (metric.key, ties, tuple(sorted(options.items())))
        if key not in self._bound:
            self._bound[key] = [self.client.submit(tasks.bind, p, metric, ties, options,
                                                   n / self.n_docs, pure=False)
                                for p, n in zip(self.parts, self.part_docs)]
        return self._bound[key]

    def wait(self, futures):
        """Wait for ``futures`` to finish where they are, raising the first one's error;
        their results stay on the workers (never gathered here)."""
        from distributed import wait

        wait(futures)
        for f in futures:
            if f.status == "error":
                f.result()   # raises the task's own exception


def _checked(client, parts, summaries, source, reread=None):
    """The :class:`ClusterData` of ``parts``: every query whole in one part, the same
    features in every part (a part with fewer SVMlight features is read again with all,
    by ``reread(index, n_features)``)."""
    qids = np.concatenate([np.asarray(s["qids"]) for s in summaries])
    owner = np.repeat(np.arange(len(summaries)), [len(s["qids"]) for s in summaries])
    order = np.argsort(qids, kind="stable")
    twice = np.flatnonzero(qids[order][1:] == qids[order][:-1])
    if len(twice):   # (within a part, a query's rows are one run already)
        a, b = order[twice[0]], order[twice[0] + 1]
        raise DataFormatError(
            f"query {qids[a].item()!r} is split: it has rows in "
            f"{summaries[owner[a]]['source']} and in {summaries[owner[b]]['source']}; each "
            "query's rows must lie in one part (partition the data by query)")
    n = max(int(s["n_features"]) for s in summaries)
    short = [i for i, s in enumerate(summaries) if int(s["n_features"]) < n]
    if short:
        if reread is None:
            i = short[0]
            raise DataFormatError(f"{summaries[i]['source']} has {summaries[i]['n_features']} "
                                  f"features, other parts {n}")
        for i in short:
            parts[i] = reread(i, n)
        summaries = _summaries(client, parts, [s["source"] for s in summaries])
    return ClusterData(client, parts, summaries, source)


def _summaries(client, parts, sources, poll=1.0, patience=3):
    """The summaries of ``parts`` (futures of parts being read, from ``sources``), as their
    reads end. A worker that dies while reading, or stays paused at its memory limit for
    ``patience`` polls while reads wait (Dask pauses a worker at 80% of its limit and ends
    it at 95%), is a :class:`~dfrank.errors.UsageError` saying what the parts need."""
    import asyncio

    from distributed import KilledWorker, wait

    futures = [client.submit(tasks.summary, p, pure=False) for p in parts]
    paused = 0
    while True:
        try:
            wait(futures, timeout=poll)
            break
        except (TimeoutError, asyncio.TimeoutError):
            pass
        if any(f.status == "error" for f in futures):
            break
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
        stuck = [w for w in workers if w.get("status") == "paused"]
        paused = paused + 1 if stuck else 0
        if paused >= patience:
            pending = [src for src, f in zip(sources, futures) if not f.done()]
            held = stuck[0]["metrics"]["memory"]
            raise UsageError(_short_of_memory(
                f"a Dask worker ({stuck[0]['name']}) is paused at its memory limit of "
                f"{_mib(stuck[0]['memory_limit'])}", pending, held))
    try:
        return client.gather(futures)
    except KilledWorker:
        limits = {w["memory_limit"] for w in
                  client.scheduler_info(n_workers=-1)["workers"].values()}
        pending = [src for src, f in zip(sources, futures) if f.status != "finished"]
        raise UsageError(_short_of_memory(
            "a Dask worker died while reading (its memory limit: "
            f"{', '.join(_mib(x) for x in sorted(limits))})", pending,
            max(limits) if limits else None)) from None


def _mib(n):
    return "no limit" if not n else f"{n / 2 ** 20:,.0f} MiB"


def _short_of_memory(what, pending, held=None):
    """What a part needs, for a worker that ran out of memory reading ``pending`` (``held``:
    the bytes it held then, which the part needs more than)."""
    more = f"more than {_mib(held)}, " if held else ""
    return (f"{what} while reading {', '.join(map(str, pending[:3]))}"
            f"{', ...' if len(pending) > 3 else ''}: a worker reading its part needs "
            f"{more}about twice the part's features (rows x features x 8 bytes, while they "
            "are read) above what a worker holds idle: give each worker more memory "
            "(memory_limit) or cut the data into more parts")


def from_shards(paths, *, client=None, scheduler=None, connect_timeout=CONNECT_TIMEOUT):
    """:class:`ClusterData` from SVMlight/LETOR files (paths or glob patterns, in order;
    or binary caches of :meth:`RankingData.save`) that the workers read themselves: each
    file a part, each query in one file (``scheduler`` and ``connect_timeout``: see
    :func:`get_client`)."""
    client = get_client(client, scheduler, connect_timeout)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = []
    for p in paths:
        p = os.fspath(p)
        found = sorted(glob.glob(p)) if glob.has_magic(p) else [p]
        if not found:
            raise FileNotFoundError(f"no shard matches {p!r}")
        files += found
    parts = [client.submit(tasks.read_part, f, i, pure=False) for i, f in enumerate(files)]
    summaries = _summaries(client, parts, files)
    return _checked(client, parts, summaries, f"{len(files)} shards ({files[0]}, ...)",
                    reread=lambda i, n: client.submit(tasks.read_part, files[i], i, n,
                                                      pure=False))


def from_dask(X, y=None, qid=None, *, qid_column="qid", label_column="label", client=None,
              scheduler=None, connect_timeout=CONNECT_TIMEOUT):
    """:class:`ClusterData` from Dask collections partitioned by query: a Dask DataFrame
    with ``qid_column``, ``label_column`` and feature columns (every other one, in order);
    or Dask arrays ``X`` (n_docs, n_features), ``y`` and ``qid`` chunked alike along rows.
    Each partition is a part; each query's rows must lie in one partition. A frame indexed
    by ``qid_column`` (``ddf.set_index("qid")``, Dask's way to partition by a key) is read
    with its index as that column."""
    client = get_client(client, scheduler, connect_timeout)
    if y is None and qid is None and hasattr(X, "to_delayed") and hasattr(X, "columns"):
        pieces = [(frame, qid_column, label_column) for frame in X.to_delayed()]
    else:
        if y is None or qid is None:
            raise TypeError("from_dask takes a Dask DataFrame, or the arrays X, y and qid")
        if X.ndim == 2 and len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        if y.chunks[0] != X.chunks[0] or qid.chunks[0] != X.chunks[0]:
            raise DataFormatError(f"X, y and qid must be chunked alike along rows (X: "
                                  f"{X.chunks[0]}, y: {y.chunks[0]}, qid: {qid.chunks[0]})")
        xs = X.to_delayed().ravel()
        pieces = list(zip(xs, y.to_delayed().ravel(), qid.to_delayed().ravel()))
    parts = [client.submit(tasks.read_part, client.compute(list(piece))
                           if not isinstance(piece[1], str) else
                           (client.compute(piece[0]), *piece[1:]), i, pure=False)
             for i, piece in enumerate(pieces)]
    summaries = _summaries(client, parts, [f"partition {i}" for i in range(len(parts))])
    return _checked(client, parts, summaries, f"a Dask collection of {len(parts)} partitions")


def is_cluster_input(obj):
    """Whether ``obj`` is data held on a cluster: a :class:`ClusterData`, a Dask
    collection, or a list of shard paths (checked without importing Dask)."""
    import sys

    if isinstance(obj, ClusterData):
        return True
    dask = sys.modules.get("dask")
    if dask is not None and dask.is_dask_collection(obj):
        return True
    return isinstance(obj, (list, tuple)) and len(obj) > 0 and \
        all(isinstance(p, (str, os.PathLike)) for p in obj)


def as_cluster_data(obj, client=None):
    """``obj`` (see :func:`is_cluster_input`) as a :class:`ClusterData`."""
    if isinstance(obj, ClusterData):
        return obj
    if isinstance(obj, (list, tuple)):
        return from_shards(obj, client=client)
    return from_dask(obj, client=client)
