"""Runs and qrels made into the data a fusion searches, and the values of weights on it.

A row per (query, candidate document): the candidates of a query are the union of the runs'
documents, docno-descending (trec_eval's tie order, so the ranker's ties are ``stable``); a
feature per run (its normalized score, ``missing`` where it lacks the document); the
judgments as labels, with judged documents no run retrieved kept as the data's
``unranked`` rows (counted in R and the ideal DCG). Values are computed on scores rounded
as trec_eval reads a run (:func:`values_of`).
"""

from dataclasses import dataclass

import numpy as np

from ..data.ranking import RankingData
from ..errors import DataFormatError
from ..io import docnos as dn
from ..io.forms import as_qrels, as_run
from ..io.fused_run import FusedRun
from ..metrics.evaluation import bind_metric
from ..metrics.registry import RUN_TIES
from ..metrics.trec_measures import as_trec_eval_reads
from .normalize import borda_missing, check_missing, group_starts, normalize_groups

__all__ = ["Fusion", "RunRows", "read_runs", "build", "fusion_data", "scores_of",
           "values_of", "mean_of", "fused_run", "unranked_rows"]


@dataclass
class Fusion:
    names: list
    data: RankingData            # one row per candidate, a feature per run
    qids: list                   # the evaluated queries (in the data's order)
    run_only: list               # queries of some run and not of the qrels (left out)
    unretrieved: list            # judged queries no run retrieved
    complete: bool
    ranked: list                 # per run: (query, candidate row, raw score) of its rows,
    #                              each query's rows ranked as trec_eval ranks them
    judged: tuple                # qrels rows of the queries: (query, candidate row or -1,
    #                              relevance), in file order


@dataclass
class RunRows:
    """What a fusion keeps of a run: per line its query index (into ``qids``), docno
    (an ``S`` array), score and line number, and the file's path for messages. A read
    :class:`~dfrank.io.trec.Run` also holds the file's bytes and spans; runs are read one
    at a time and reduced to this, so only one file's bytes are ever held."""
    qids: list
    row_q: np.ndarray
    docnos: np.ndarray
    score: np.ndarray
    line_no: np.ndarray
    path: str

    def queries(self):
        return self.qids, self.row_q


def run_rows(run, name):
    """A :class:`RunRows` of any run form :func:`~dfrank.io.forms.as_run` takes."""
    f = as_run(run, name)
    qids, row_q = f.queries()
    return RunRows(qids, row_q, dn.docno_bytes(f), f.score, f.line_no, f.path)


def read_runs(runs):
    """name -> :class:`RunRows` of a dict of runs (read one after the other)."""
    if not hasattr(runs, "items"):
        raise TypeError("runs must be a dict name -> run")
    rs = {}
    for n, r in runs.items():
        if str(n) in rs:
            raise ValueError("two runs have the same name")
        rs[str(n)] = run_rows(r, str(n))
    return rs


def build(qrels, runs, norm, missing, complete):
    """The fusion's data: a row per candidate (the union of the runs' documents of a
    query, docno-descending), a feature per run (its normalized score, or ``missing``),
    labels from ``qrels`` (a read Qrels; None: every query of the runs, labels 0, to apply
    a fusion). ``runs``: name -> :class:`RunRows`."""
    check_missing(norm, missing)
    names = list(runs)
    if len(names) < 2:
        raise ValueError(f"fusion needs at least two runs, got {len(names)}")
    per_run = [r.queries() for r in runs.values()]
    run_q = set().union(*[set(q) for q, _ in per_run])
    judged_q = run_q if qrels is None else set(qrels.queries()[0])
    run_only, unretrieved = sorted(run_q - judged_q), sorted(judged_q - run_q)
    qids = sorted(judged_q & run_q)
    if not qids:
        raise DataFormatError(f"the runs and the qrels share no query (runs: {sorted(run_q)[:5]}, "
                         f"qrels: {sorted(judged_q)[:5]})")
    index = {q: i for i, q in enumerate(qids)}
    width = max([r.docnos.dtype.itemsize for r in runs.values()] + (
        [] if qrels is None else [int((qrels.d_span[:, 1] - qrels.d_span[:, 0]).max(
            initial=1))]))
    rows, kept_keys = [], []
    for f, (fq, row_q) in zip(runs.values(), per_run):
        gq = np.array([index.get(q, -1) for q in fq], dtype=np.int64)[row_q]
        keep = np.flatnonzero(gq >= 0)
        rows.append((keep, gq[keep]))
        kept_keys.append(dn.keys(gq[keep], f.docnos[keep].astype(f"S{width}", copy=False)))
    cand, inv = np.unique(np.concatenate(kept_keys), return_inverse=True)
    del kept_keys   # here and below: what is done with goes at once (web-sized runs)
    nq = len(qids)
    cq = dn.key_queries(cand)
    qptr = np.concatenate([[0], np.cumsum(np.bincount(cq, minlength=nq))]).astype(np.int64)
    final = qptr[cq] + qptr[cq + 1] - 1 - np.arange(len(cand))   # docno-descending rows
    del cq
    m_q = np.diff(qptr)
    n_cand = len(cand)
    X = np.empty((n_cand, len(names)))
    q_of_row = np.repeat(np.arange(nq), m_q)
    ranked_rows, at = [], 0
    for j, (name, f, (keep, gq)) in enumerate(zip(names, runs.values(), rows)):
        pos = final[inv[at:at + len(keep)]]
        at += len(keep)
        s = f.score[keep]
        order = np.lexsort((pos, -s, gq))   # per query: score desc, then docno desc
        g, p, s = gq[order], pos[order], s[order]
        _refuse_duplicates(name, f, g, p, keep[order], qids)
        starts, counts = group_starts(g)
        vals = normalize_groups(s, starts, counts, norm, m_q[g[starts]])
        n_rq = np.zeros(nq)
        n_rq[g[starts]] = counts
        if norm == "borda":
            fill = borda_missing(n_rq, np.maximum(m_q, 1).astype(np.float64))
        elif missing == "zero":
            fill = np.zeros(nq)
        elif missing == "min":
            fill = np.zeros(nq)
            if len(starts):
                fill[g[starts]] = np.minimum.reduceat(vals, starts)
        else:
            fill = np.full(nq, float(missing))
        X[:, j] = fill[q_of_row]
        X[p, j] = vals
        ranked_rows.append((g, p, s))
        rows[j] = None
    del inv, q_of_row
    y = np.zeros(n_cand)
    jq, jrow, jrel = np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    if qrels is not None:
        fq, row_q = qrels.queries()
        gq = np.array([index.get(q, -1) for q in fq], dtype=np.int64)[row_q]
        keep = np.flatnonzero(gq >= 0)
        k = dn.keys(gq[keep], dn.docno_bytes(qrels, keep, width))
        at = np.minimum(np.searchsorted(cand, k), n_cand - 1)
        found = cand[at] == k
        jq, jrel = gq[keep], qrels.rel[keep].astype(np.float64)
        jrow = np.where(found, final[at], -1)
        y[jrow[found]] = np.maximum(jrel[found], 0.0)
    uptr, ulab = unranked_rows(jq, jrel, jrow < 0, nq)
    docids = np.empty(n_cand, dtype=cand.dtype)
    docids[final] = cand
    del cand, final
    data = RankingData(X, y, qptr, np.asarray(qids, dtype=object),
                       docids=dn.key_docnos(docids), feature_ids=np.arange(1, len(names) + 1),
                       source="fusion", unranked=(uptr, ulab))
    return Fusion(names, data, qids, run_only, unretrieved, complete, ranked_rows,
                   (jq, jrow, jrel))


def _refuse_duplicates(name, f, g, p, rows, qids):
    """A docno twice for one query of a run: which copy counts would be a guess."""
    same = np.flatnonzero(np.bincount(p) > 1) if len(p) else []
    if len(same):
        twice = rows[np.flatnonzero(p == same[0])]
        a, b = sorted(int(f.line_no[r]) for r in twice[:2])
        docno = f.docnos[int(twice[0])].decode("utf-8", "replace")
        raise DataFormatError(f"run {name!r} holds docno {docno!r} "
                              f"twice for query {qids[int(g[p == same[0]][0])]!r} (lines {a} "
                              f"and {b})", path=f.path, line=b)


def unranked_rows(q, rel, mask, nq):
    """(uptr, labels) of the judged documents ``mask`` selects, per query, in file order
    (negative judgments as 0)."""
    order = np.flatnonzero(mask)
    order = order[np.argsort(q[order], kind="stable")]
    uptr = np.concatenate([[0], np.cumsum(np.bincount(q[order], minlength=nq))])
    return uptr.astype(np.int64), np.maximum(rel[order], 0.0)


def fusion_data(qrels, runs, norm="minmax", missing="zero", complete=False):
    """The data :func:`~dfrank.fusion.fuse` searches: a row per (query, candidate
    document), a column per run (its normalized score, ``missing`` where it lacks the
    document), labels from ``qrels`` (arguments as :func:`~dfrank.fusion.fuse`'s). A
    linear ranker of it, evaluated with ``ties="stable"``, is a fused run under
    trec_eval's conventions."""
    check_missing(norm, missing)
    return build(as_qrels(qrels), read_runs(runs), norm, missing, complete).data


def scores_of(data, weights):
    return data.scores(weights)


def mean_of(per_query, n_extra):
    return float(np.sum(per_query) / (len(per_query) + n_extra))


def values_of(data, metric, w):
    """Per-query values of the weights ``w`` as trec_eval computes them on the run they make
    (its scores read in single precision): the search compares doubles, every value
    reported is trec_eval's."""
    bound = bind_metric(data, metric, RUN_TIES)
    return bound.per_query(as_trec_eval_reads(scores_of(data, w)))


def fused_run(fu, w):
    return FusedRun(fu.qids, fu.data.qptr, fu.data.docids, scores_of(fu.data, w))
