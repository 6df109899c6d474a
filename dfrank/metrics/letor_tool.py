"""P@k, NDCG@k and MAP as LETOR's evaluation tools (Eval-Score-3.0.pl, Eval-Score-4.0.pl)
compute them.

The LETOR baselines on LETOR's folds (OHSUMED and TD2003/2004 of LETOR 3.0, MQ2007/MQ2008
of LETOR 4.0) were scored by these scripts, and papers reporting on those folds commonly
use them too. Their conventions differ from dfrank's metrics:

* DCG discounts rank r by 1 / log2(r) from rank 3 on; ranks 1 and 2 are not discounted
  (dfrank, RankLib and trec_eval: 1 / log2(1 + r) from rank 1). Gains are 2^l - 1 for the
  labels 0, 1 and 2, the only ones their tables define; a document is relevant if l >= 1.
* Documents with equal scores keep their order in the data (the file's order).
* NDCG@k of a query with fewer than k documents counts 0 in the mean (the scripts leave it
  undefined and sum only what is defined); so does P@k in 3.0, while 4.0 counts the missing
  ranks as irrelevant (hits / k). NDCG@k is 0 where the ideal DCG@k is 0, and AP is 0 for
  a query with no relevant document.
* Every query weighs the same; k runs from 1 to 16 (3.0) or 10 (4.0), as the scripts print.

The measures here are computed by numpy over the whole flat layout (one sort, one sum per
cut-off), not by the metric kernels: they serve comparisons with published numbers, not
optimization, and are checked in ``tests/test_letor_tool.py`` against a per-query port of
the scripts' rules.
"""

import numpy as np

from ..data.ranking import RankingData
from .evaluation import check_scores

__all__ = ["evaluate_letor", "MAX_CUTOFF"]

MAX_CUTOFF = {"3.0": 16, "4.0": 10}   # the scripts' iMaxPosition
GRADES = (0, 1, 2)


def evaluate_letor(scores, data, *, version="3.0", per_query=False):
    """The measures of LETOR's evaluation tool of ``version`` for one score per document.

    Parameters
    ----------
    scores : array-like (n_docs,)
        Higher is better; ties keep the documents' order in ``data``.
    data : RankingData
        Labels must be 0, 1 or 2.
    version : {"3.0", "4.0"}
        The tool of the LETOR release the data comes from (OHSUMED: 3.0; MQ2007 and
        MQ2008: 4.0).
    per_query : bool
        Return each query's values instead of their means.

    Returns
    -------
    dict
        ``"p@1"`` .. ``"p@K"``, ``"ndcg@1"`` .. ``"ndcg@K"`` (K = 16 for 3.0, 10 for 4.0)
        and ``"map"``: floats, or arrays of one value per query with ``per_query``.
    """
    if version not in MAX_CUTOFF:
        raise ValueError(f"version must be one of {sorted(MAX_CUTOFF)}, got {version!r}")
    if not isinstance(data, RankingData):
        raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
    s = check_scores(scores, data)
    y = data.y
    q = np.repeat(np.arange(data.n_queries), np.diff(data.qptr))   # each document's query
    bad = np.flatnonzero(~np.isin(y, GRADES))
    if len(bad):
        raise ValueError(f"label {y[bad[0]]:g} of document {bad[0]} (query "
                         f"{data.qids[q[bad[0]]]}): LETOR's tools define gains for the "
                         "labels 0, 1 and 2 only")
    n_q, sizes = data.n_queries, np.diff(data.qptr)
    line = np.arange(len(s))
    pos = line - data.qptr[q]                       # 0-based rank within the query
    ranked = y[np.lexsort((line, -s, q))]           # query, score descending, data order
    ideal = y[np.lexsort((line, -y, q))]
    discount = np.ones(len(s))
    deep = pos >= 2
    discount[deep] = np.log(2.0) / np.log(pos[deep] + 1.0)
    out = {}
    for k in range(1, MAX_CUTOFF[version] + 1):
        top = pos < k
        full = sizes >= k
        hits = np.bincount(q, weights=(ranked >= 1) & top, minlength=n_q)
        out[f"p@{k}"] = hits / k if version == "4.0" else np.where(full, hits / k, 0.0)
        dcg = np.bincount(q, weights=(2.0 ** ranked - 1.0) * discount * top, minlength=n_q)
        best = np.bincount(q, weights=(2.0 ** ideal - 1.0) * discount * top, minlength=n_q)
        out[f"ndcg@{k}"] = np.where(full & (best > 0), dcg / np.where(best > 0, best, 1.0),
                                    0.0)
    out["map"] = _average_precision(ranked >= 1, q, data.qptr, pos)
    return out if per_query else {name: float(v.mean()) for name, v in out.items()}


def _average_precision(relevant, q, qptr, pos):
    """Per query: the mean of the precisions at the ranks of its relevant documents, 0
    without one."""
    n_q = len(qptr) - 1
    rel = relevant.astype(np.float64)
    before = np.cumsum(rel)
    start = np.concatenate([[0.0], before])[qptr[:-1]]
    hits_so_far = before - start[q]                 # relevant documents up to this rank
    total = np.bincount(q, weights=rel, minlength=n_q)
    sums = np.bincount(q, weights=rel * hits_so_far / (pos + 1.0), minlength=n_q)
    return np.where(total > 0, sums / np.where(total > 0, total, 1.0), 0.0)
