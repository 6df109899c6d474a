"""How a metric sees the documents along a line: a class per document, per-class
constants, and which (metric, tie policy) pairs the exact line search serves."""

from dataclasses import dataclass

import numpy as np

from ..metrics import _kernels

__all__ = ["LineClasses", "unsupported", "EXPECTED_OK"]


@dataclass(frozen=True)
class LineClasses:
    """How a metric sees labels along a line: a class per document, per-class constants."""
    cls: np.ndarray     # (n_docs,) int64 class of each row
    n_classes: int
    gain: np.ndarray    # (L,) graded gain of each class (DCG family)
    err_r: np.ndarray   # (L,) ERR stopping probability of each class
    rel: np.ndarray     # (L,) int64: 1 if the class counts as relevant (binary metrics)
    by_position: np.ndarray  # what a swap at position p reads: the discount (DCG family);
    #                          for AP the precision step 1/p - 1/(p + 1)

    @classmethod
    def of(cls, bound):
        """Classes for a :class:`~dfrank.metrics.BoundMetric`."""
        m = bound.metric
        y = bound.y
        reason = unsupported(m, bound.ties)
        if reason:
            raise ValueError(reason)
        if m.binary:
            c = (y >= m.rel_threshold).astype(np.int64)
            table = bound.disc
            if m.code == _kernels.AP:
                p = np.arange(1.0, bound.max_m + 2.0)
                table = np.concatenate([[np.inf], 1.0 / p - 1.0 / (p + 1.0)])  # as 1/p - ...
            return cls(c, 2, np.zeros(2), np.zeros(2), np.array([0, 1], dtype=np.int64), table)
        values, c = np.unique(y, return_inverse=True)
        gain = (np.exp2(values) - 1.0) if m.gain == "exp" else values.copy()
        return cls(c.astype(np.int64).ravel(), len(values), gain, gain / bound.norm,
                   (values >= m.rel_threshold).astype(np.int64), bound.disc)

    def for_line(self, bound, s0, u):
        """The classes of one line under ``ties="expected"``.

        Along a line only identical lines (rows of one query with equal s0 and u) tie on a
        whole interval, and the expected value of a tied group of a metric that is a sum
        of per-position terms (DCG, NDCG, P@k, recall@k, R-precision) is its value with
        every member's gain replaced by the group's mean gain (McSherry & Najork 2008):
        each member is uniformly spread over the group's positions. So the classes are
        the distinct mean gains, and the sweep may order a group any way. Binary metrics
        become sums with the relevance indicator as gain and every discount 1."""
        m = bound.metric
        gain = (bound.y >= m.rel_threshold).astype(np.float64) if m.binary else bound.gains
        n = len(s0)
        qrow = np.repeat(np.arange(bound.n_queries), np.diff(bound.qptr))
        order = np.lexsort((u, s0, qrow))
        so, uo, qo = s0[order], u[order], qrow[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = (so[1:] != so[:-1]) | (uo[1:] != uo[:-1]) | (qo[1:] != qo[:-1])
        group = np.cumsum(new) - 1
        sums = np.bincount(group, weights=gain[order])
        sizes = np.bincount(group)
        mean = np.empty(n)
        mean[order] = (sums / sizes)[group]
        values, c = np.unique(mean, return_inverse=True)
        table = np.ones_like(bound.disc) if m.binary else bound.disc
        return LineClasses(c.astype(np.int64).ravel(), len(values), values,
                           np.zeros(len(values)), np.zeros(len(values), dtype=np.int64),
                           table)


# sums over positions
EXPECTED_OK = (_kernels.NDCG, _kernels.DCG, _kernels.PREC, _kernels.RECALL, _kernels.RPREC)


def unsupported(metric, ties):
    """Why the exact line search cannot serve ``metric`` under ``ties`` (None if it can)."""
    if metric.is_custom:
        return (f"the exact line search needs a built-in metric; {metric.name!r} is "
                "user-defined (use line_search='steps')")
    if ties == "expected" and metric.code not in EXPECTED_OK:
        return (f"the exact line search cannot keep ties='expected' exact for "
                f"{metric.name!r} (its expected value over a tied group is not a sum over "
                "positions); use line_search='steps', or another tie policy")
    return None
