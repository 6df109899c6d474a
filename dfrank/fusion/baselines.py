"""What a learned fusion is compared with: each run alone, CombSUM (equal weights) and
reciprocal-rank fusion (k = 60), each as data under the fused run's conventions, valued as
trec_eval values the run it makes, with a paired test of the learned fusion against it."""

import numpy as np

from ..data.ranking import RankingData
from ..stats import significance as paired_test
from .features import mean_of, unranked_rows, values_of
from .normalize import group_starts

__all__ = ["baselines", "combsum", "run_alone", "rrf"]


def baselines(fu, metric, fused_pq, n_extra, significance):
    """name -> {"value", "per_query", "p_value"} of every baseline of the fusion ``fu``
    whose learned fusion has the per-query values ``fused_pq``."""
    per_query = {f"run {name}": values_of(run_alone(fu, j), metric, np.ones(1))
                 for j, name in enumerate(fu.names)}
    per_query["CombSUM (equal weights)"] = values_of(fu.data, metric, combsum(fu))
    per_query["RRF (k = 60)"] = values_of(rrf(fu), metric, np.ones(1))
    out = {}
    for name, pq in per_query.items():
        p = None
        if not np.array_equal(pq, fused_pq):
            p = float(paired_test(fused_pq, pq, significance, ci=False).p_value)
        out[name] = {"value": mean_of(pq, n_extra),
                     "per_query": dict(zip(fu.qids, map(float, pq))), "p_value": p}
    return out


def combsum(fu):
    return np.full(len(fu.names), 1.0 / len(fu.names))


def run_alone(fu, j):
    """Run ``j`` alone as data, under the fused run's conventions: its documents of each
    query docno-descending, the judged documents it lacks unranked, a query it lacks one
    unjudged row (so it scores 0)."""
    g, p, s = fu.ranked[j]
    nq = len(fu.qids)
    order = np.lexsort((p, g))
    g, p, s = g[order], p[order], s[order]
    counts = np.bincount(g, minlength=nq)
    sizes = np.maximum(counts, 1)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    dest = qptr[g] + np.arange(len(g)) - starts[g]
    X, y = np.zeros(qptr[-1]), np.zeros(qptr[-1])
    X[dest], y[dest] = s, fu.data.y[p]
    retrieved = np.zeros(fu.data.n_docs, np.bool_)
    retrieved[p] = True
    jq, jrow, jrel = fu.judged
    lacked = (jrow < 0) | ~retrieved[np.maximum(jrow, 0)]
    return RankingData(X[:, None], y, qptr, fu.data.qids,
                       unranked=unranked_rows(jq, jrel, lacked, nq))


def rrf(fu, k=60):
    """Reciprocal-rank fusion of the runs as data (every candidate; the rank of a document
    in a run is its place in the run's ranking of the query)."""
    rrf = np.zeros(fu.data.n_docs)
    for g, p, _ in fu.ranked:
        starts, counts = group_starts(g)
        rank = np.arange(len(g)) - np.repeat(starts, counts) + 1
        np.add.at(rrf, p, 1.0 / (k + rank))
    d = fu.data
    return RankingData(rrf[:, None], d.y, d.qptr, d.qids, unranked=d.unranked)
