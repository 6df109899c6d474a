"""A metric bound to the labels and query offsets of one dataset.

Binding computes the per-query constants (ideal DCG, relevant counts) once; afterwards
every call is one parallel kernel over (point, query) pairs (:mod:`._drivers`; its serial
twin while the parallel one compiles, :mod:`dfrank._jit.background`).
"""

import numba
import numpy as np

from .._kernels.scoring import all_rows, read_only
from .._kernels.scratch import PerThread
from . import _drivers, _kernels
from .registry import DEFAULT_TIES, GAINS, get_metric, tie_code

__all__ = ["BoundMetric"]

_EMPTY_VALUE = {"zero": 0.0, "one": 1.0, "skip": np.nan}
_ONE = np.ones((1, 1))
# The features of one group of queries, at most: half of a 1 MiB L2 cache (a core's on
# common x86 servers), so that the points of a batch, which score a group one after the
# other, read its features from cache rather than from memory.
_GROUP_BYTES = 1 << 19


def n_chunks():
    """Chunks of work per parallel kernel call: 8 per numba thread (for load balance)."""
    return 8 * numba.get_num_threads()


class BoundMetric:
    """Metric + labels + query offsets + tie policy, ready to score.

    Parameters
    ----------
    metric : str, Metric or numba function
    y : ndarray (n_docs,) float64 labels
    qptr : ndarray (n_queries + 1,) int64 offsets
    ties : {"pessimistic", "optimistic", "stable", "expected"}
    unranked : (offsets, labels) or None
        Judged documents of each query that are not rows (see ``RankingData.unranked``).
    """

    def __init__(self, metric, y, qptr, ties=DEFAULT_TIES, unranked=None):
        self.metric = get_metric(metric)
        self.ties = ties
        self.tie_code = tie_code(ties)
        if not self.metric.supports_ties(ties):
            raise ValueError(f"ties='expected' is not available for {self.metric.name!r}; "
                             "use 'pessimistic', 'optimistic' or 'stable'")
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.qptr = np.ascontiguousarray(qptr, dtype=np.int64)
        nq = len(self.qptr) - 1
        self.n_queries = nq
        self.max_m = int(np.diff(self.qptr).max())
        m = self.metric
        self.gain_code = GAINS[m.gain]
        gmax = float(m.max_grade if m.max_grade is not None else max(self.y.max(), 0.0))
        if m.gain == "exp":
            with np.errstate(over="ignore"):
                self.gains = np.exp2(self.y) - 1.0
                self.norm = float(np.exp2(gmax))  # ERR: R = (2^l - 1) / 2^gmax
            if not np.isfinite(self.norm) or not np.all(np.isfinite(self.gains)):
                raise ValueError(f"labels up to {self.y.max():g} make the gain 2^label - 1 "
                                 "overflow; graded labels are small integers (0-4 in "
                                 "LETOR), or use gain='linear'")
        else:
            self.gains = self.y.copy()
            self.norm = gmax if gmax > 0 else 1.0
        self.disc = 1.0 / np.log2(np.arange(self.max_m) + 2.0)
        self.empty_value = _EMPTY_VALUE[m.empty]
        self.c0 = np.ones(nq)
        self.empty = np.zeros(nq, dtype=np.bool_)
        if not m.is_custom:
            uptr, ulab = unranked if unranked is not None else (np.zeros(nq + 1, np.int64),
                                                                 np.zeros(0))
            _kernels.query_constants(m.code, self.y, self.qptr, m.k, self.gain_code,
                                     float(m.rel_threshold), uptr, ulab, self.c0, self.empty)

        self._order = {}  # blocks -> query order
        self._groups = {}
        self._group_docs = {}  # documents in the largest group
        self._scratch = PerThread()  # the kernels' per-chunk buffers, kept between calls

    def query_order(self, n_blocks=None):
        """Query order balancing O(m^2) work over ``n_blocks`` contiguous blocks (numba's
        threads by default): queries by decreasing size dealt to the blocks in a snake, so
        each block of a ``prange`` gets about the same work."""
        n = numba.get_num_threads() if n_blocks is None else n_blocks
        order = self._order.get(n)
        if order is None:
            sizes = np.diff(self.qptr).astype(np.float64)
            order = np.argsort(-sizes ** 2, kind="stable")
            n_bins = max(1, min(n, len(order)))
            bins = [[] for _ in range(n_bins)]
            for i, q in enumerate(order):
                r, k = divmod(i, n_bins)
                bins[k if r % 2 == 0 else n_bins - 1 - k].append(q)
            order = self._order[n] = np.concatenate(
                [np.asarray(b, dtype=np.int64) for b in bins])
        return order

    def groups(self, n_groups):
        """Boundaries of ``n_groups`` runs of consecutive queries with about equal work:
        the parallel tasks of an evaluation. numba deals a ``prange`` to the threads in
        contiguous blocks, so the estimate must hold for whole halves of the data: m log m
        per query of m documents (ranking, scoring) plus a constant."""
        g = self._groups.get(n_groups)
        if g is None:
            m = np.diff(self.qptr).astype(np.float64)
            cost = np.cumsum(m * np.log2(m + 2.0) + 16.0)
            cuts = np.searchsorted(cost, cost[-1] * np.arange(1, n_groups) / n_groups)
            g = np.unique(np.concatenate([[0], cuts, [self.n_queries]])).astype(np.int64)
            self._groups[n_groups] = g
            self._group_docs[n_groups] = int(np.diff(self.qptr[g]).max())
        return g

    @property
    def name(self):
        return self.metric.name

    def per_query(self, scores):
        """Per-query values for one score vector (NaN marks a skipped query)."""
        s = np.ascontiguousarray(scores, dtype=np.float64)
        # read-only, as the features are: one compiled driver serves scores and features
        return self.per_query_linear(read_only(s[None, :]), _ONE)[0]

    def per_query_batch(self, S):
        """Per-query values for P score vectors ``S[P, n_docs]`` → ``[P, n_queries]``."""
        out = np.empty((S.shape[0], self.n_queries))
        for p in range(S.shape[0]):
            out[p] = self.per_query(S[p])
        return out

    def per_query_linear(self, XT, W, rows=None):
        """Per-query values ``[P, n_queries]`` of the linear scorers ``W`` (P, d) over the
        transposed features ``XT`` (d, n_docs): scoring and ranking in one parallel pass.
        ``rows``: the features to read (default all; see :func:`dot_block`)."""
        W = np.ascontiguousarray(W, dtype=np.float64)
        if rows is None:
            rows = all_rows(XT.shape[0])
        P = W.shape[0]
        out = np.empty((P, self.n_queries))
        m = self.metric
        chunks = n_chunks()
        if m.is_custom:
            _drivers.batch_custom(m.fn, XT, rows, W, self.qptr, self.y, m.k, self.tie_code,
                                  chunks, out)
        else:
            n_groups = self._n_groups(XT, rows, chunks)
            groups = self.groups(n_groups)
            fscr, iscr = self._buffers(max(1, min((P + 3) // 4 * (len(groups) - 1), chunks)),
                                       n_groups)
            # looked up at each call, never kept on the object: a dispatcher pickled to a
            # worker process is rebuilt there without its disk cache and compiles anew
            run = _drivers.entry_point(m.code, self.tie_code, XT.dtype)
            queries = (self.qptr, groups, self.y, self.gains, self.c0, self.empty)
            rule = (m.code, m.k, self.tie_code, float(m.rel_threshold), self.norm, self.disc,
                    self.empty_value)
            run(XT, rows, W, queries, rule, (fscr, iscr), out)
        return out

    def _n_groups(self, XT, rows, chunks):
        """Groups of an evaluation over ``XT`` reading ``rows``: ``chunks`` (for load
        balance), or more where one group's features would not fit in ``_GROUP_BYTES``
        (web-sized sets); never more than the queries."""
        need = (int(self.qptr[-1]) * len(rows) * XT.itemsize) // _GROUP_BYTES + 1
        return int(max(chunks, min(need, self.n_queries)))

    def _buffers(self, nc, n_groups):
        """Each chunk's scratch, one row per chunk: floats (2 max_m for the kernels, then
        the scores of four points on the largest of ``n_groups`` groups) and integers
        (2 max_m + 1). Kept from call to call: kernels allocating their own would spend a
        noticeable part of a single evaluation on it."""
        scr = self._scratch.get()
        bufs = scr.views.get((nc, n_groups))
        if bufs is None:
            bufs = scr.views[nc, n_groups] = (
                scr.get("f", (nc, 2 * self.max_m + 4 * self._group_docs[n_groups])),
                scr.get("i", (nc, 2 * self.max_m + 1), np.int64))
        return bufs

    def mean(self, values):
        """Mean over queries of per-query values, leaving out skipped (NaN) queries.

        Works on the last axis; a fixed-order numpy sum, so the result does not depend on
        the number of threads. NaN if every query is skipped.
        """
        return query_mean(values, self.metric.empty == "skip")

    def __call__(self, scores):
        return float(self.mean(self.per_query(scores)))

    def __repr__(self):
        return f"BoundMetric({self.metric.name!r}, n_queries={self.n_queries}, ties={self.ties!r})"


def versions(metric, ties=DEFAULT_TIES, dtype=np.float64):
    """The compiled versions (numba kernels and argument types) an evaluation of ``metric``
    under ``ties`` calls now: what a command loads before a run (``dfrank._jit.load``);
    none for a user's metric (compiled in each process)."""
    m = get_metric(metric)
    return [] if m.is_custom else _drivers.versions(m.code, tie_code(ties), dtype)


def query_mean(values, skip):
    """:meth:`BoundMetric.mean` of per-query ``values`` (last axis), leaving out the NaN
    of skipped queries when ``skip``: for values gathered from data held in parts."""
    values = np.asarray(values)
    if not skip:
        return values.sum(axis=-1) / values.shape[-1]
    keep = ~np.isnan(values)
    n = keep.sum(axis=-1)
    total = np.where(keep, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n
