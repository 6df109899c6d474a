"""trec_eval's measures on TREC runs, with trec_eval's exact conventions.

* Each query's documents are ranked by score descending, ties broken by docno descending
  (string order); the rank column of the run is ignored. Scores are compared as trec_eval
  reads them, as C ``float`` (single precision): scores equal in single precision tie.
* Only queries in both the qrels and the run are evaluated (a query of the qrels without
  any relevant document is evaluated, its measures 0); a run sharing no query with the
  qrels is an error, as in trec_eval. ``complete=True`` (``-c``) averages over every query
  of the qrels: a judged query missing from the run gets a row of zeros with its
  ``num_rel`` filled in (printed with ``-q``, as trec_eval 10 does).
* A document is relevant if its judgment is >= ``rel_level`` (``-l``); unjudged documents
  are not relevant, and only judged non-relevant ones count for bpref.
* ``max_docs`` (``-M``) keeps the first N documents of each ranking.
* ndcg uses the judgment values as gains (linear), discount 1/log2(1 + rank), the ideal
  ranking of all judged documents of the query; gm_map averages log(max(AP, 1e-5)) and
  reports exp of the mean; P_k divides by k.
* A run holding one docno twice for one query, or qrels judging one twice, is an error
  (both line numbers are given): the measures would depend on which copy counts.
* iprec_at_recall: recall level x needs int(x R + 0.9) relevant documents (trec_eval 9,
  pytrec_eval); ``iprec_rounding="nearest"`` rounds x R instead, as trec_eval 10 does.
* The measures dfrank's metrics also define (AP, P@k, recall@k, R-prec, RR, NDCG, ...)
  are computed by the metric kernels of :mod:`dfrank.metrics` on trec_eval's ranking;
  gm_map is printed for "all" only.

Numbers agree with trec_eval as exposed by pytrec_eval (pytrec-eval-terrier) to 1e-9; see
``tests/test_trec.py``.
"""

import math

import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, njit, ro, tup, u1, u8
from .._kernels.sort import sort_pairs
from ..errors import DataFormatError
from ..io import _trec_kernel as TK
from ..io.forms import as_qrels, as_run
from . import _kernels
from ._rank import STABLE, count_top

__all__ = ["evaluate_run", "TrecEval", "parse_measures", "OFFICIAL", "format_trec"]

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEFAULT_PARAMS = {"P": CUTS, "recall": CUTS, "ndcg_cut": CUTS, "map_cut": CUTS,
                  "success": (1, 5, 10)}
# trec_eval's table order (the order of printing)
ORDER = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
         "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut",
         "success", "map_cut"]
OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P"]
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # trec_eval's
RECALL_LEVELS_ARR = np.array(RECALL_LEVELS)
MIN_GEO = 1e-5
IPREC_ROUNDING = {"legacy": 0.9, "nearest": 0.5}  # added to x R before truncating


def parse_measures(specs):
    """trec_eval measure specs (``official``, ``map``, ``P.5,10``, ``ndcg_cut.10``) into an
    ordered dict family -> cut-offs (or None)."""
    if isinstance(specs, str):
        specs = [specs]
    chosen = {}
    for spec in specs or ["official"]:
        name, _, params = _as_spec(spec).partition(".")
        if name == "official":
            for fam in OFFICIAL:
                chosen.setdefault(fam, DEFAULT_PARAMS.get(fam))
            continue
        if name not in ORDER:
            raise ValueError(f"unknown trec_eval measure {spec!r}; dfrank knows "
                             f"{', '.join(ORDER)} and 'official' (cut-offs as "
                             f"'P.5,10')")
        if params:
            if name not in DEFAULT_PARAMS:
                raise ValueError(f"measure {name!r} takes no parameters, got {spec!r}")
            try:
                cuts = tuple(int(x) for x in params.split(","))
            except ValueError:
                raise ValueError(f"cut-offs must be integers, got {spec!r}") from None
            if any(c < 1 for c in cuts):
                raise ValueError(f"cut-offs must be >= 1, got {spec!r}")
            prev = chosen.get(name) or ()
            chosen[name] = tuple(sorted(set(prev) | set(cuts)))
        else:
            chosen.setdefault(name, DEFAULT_PARAMS.get(name))
    return {f: chosen[f] for f in ORDER if f in chosen}


def _as_spec(name):
    """trec_eval's spec of a measure named as trec_eval prints it and PyTerrier takes it
    (``ndcg_cut_10`` is ``ndcg_cut.10``, ``P_10`` is ``P.10``); any other name as it is."""
    head, _, cut = name.rpartition("_")
    if head in DEFAULT_PARAMS and "." not in name and cut.isdigit():
        return f"{head}.{cut}"
    return name


def _names(family, params):
    if family == "iprec_at_recall":
        return [f"iprec_at_recall_{lv:.2f}" for lv in RECALL_LEVELS]
    if params is None:
        return [family]
    return [f"{family}_{c}" for c in params]


# ---------------------------------------------------------------- the kernel
# per-query output columns: 0 num_ret 1 num_rel 2 num_rel_ret 3 map 4 log(max(ap, 1e-5))
# 5 Rprec 6 bpref 7 recip_rank 8..18 iprec, then P, recall, ndcg, ndcg_cut, success, map_cut
_BASE = 19


@njit(cache=True, nogil=True)
def _docno_greater(buf, span, a, b):
    """strcmp(docno_a, docno_b) > 0."""
    a0, a1 = span[a, 0], span[a, 1]
    b0, b1 = span[b, 0], span[b, 1]
    n = min(a1 - a0, b1 - b0)
    for i in range(n):
        if buf[a0 + i] != buf[b0 + i]:
            return buf[a0 + i] > buf[b0 + i]
    return (a1 - a0) > (b1 - b0)


@njit(cache=True, nogil=True)
def _eval_query(rows, score, rel, judged, buf, d_span, num_rel, num_nonrel, ideal, options,
                cuts, out, scratch):
    """All measures of one query into ``out``; ``ideal`` holds the query's judged gains
    sorted descending; ``options`` = (level, max_docs, iprec_half), ``cuts`` = the cut-offs
    of P, recall, ndcg_cut, success and map_cut, ``scratch`` = the sort's (keys, k2, v2).

    The run is ranked once (score descending, ties by docno descending); the measures that
    dfrank's metrics also define (AP, AP@k, P@k, recall@k, R-precision, RR, success@k,
    NDCG, NDCG@k) are then computed by the metric kernels themselves on that ranking
    (scores -rank, so no tie is left; labels the judgments, unjudged -1; gains the
    positive judgments, linear). Only trec_eval's own measures (counts, bpref,
    interpolated precision) are computed here."""
    level, max_docs, iprec_half = options
    p_cuts, r_cuts, n_cuts, s_cuts, m_cuts = cuts
    keys, k2, v2 = scratch
    m = len(rows)
    # rank: score descending, ties by docno descending
    for i in range(m):
        keys[i] = -score[rows[i]]
    sort_pairs(keys[:m], rows, k2, v2)
    a = 0
    while a < m:
        b = a + 1
        while b < m and keys[b] == keys[a]:
            b += 1
        for t in range(a + 1, b):
            v = rows[t]
            w = t - 1
            while w >= a and _docno_greater(buf, d_span, v, rows[w]):
                rows[w + 1] = rows[w]
                w -= 1
            rows[w + 1] = v
        a = b
    n = m if max_docs <= 0 else min(m, max_docs)
    R = num_rel
    n_p, n_r, n_n, n_s, n_m = len(p_cuts), len(r_cuts), len(n_cuts), len(s_cuts), len(m_cuts)
    col_p = _BASE
    col_r = col_p + n_p
    col_ndcg = col_r + n_r
    col_n = col_ndcg + 1
    col_s = col_n + n_n
    col_m = col_s + n_s
    out[:] = 0.0
    out[0] = n
    out[1] = R
    # the ranking as the metric kernels read it
    s = np.empty(n)
    y = np.empty(n)
    g = np.empty(n)
    disc = np.empty(max(n, 1))
    for i in range(n):
        r = rows[i]
        s[i] = -float(i)
        y[i] = float(rel[r]) if judged[r] else -1.0
        g[i] = float(rel[r]) if (judged[r] and rel[r] > 0) else 0.0
        disc[i] = 1.0 / np.log2(i + 2.0)
    thr = float(level)
    stable = np.int64(STABLE)  # not the bare constant: a literal argument would compile
    #                            the kernels below a second time, apart from the drivers'
    ibuf = np.empty(n + 1, np.int64)
    jbuf = np.empty(2 * n + 2, np.int64)
    fbuf = np.empty(2 * n + 2)
    # trec_eval's own measures: counts, bpref, interpolated precision
    hits = 0
    nonrel = 0
    bpref = 0.0
    for i in range(n):
        r = rows[i]
        if judged[r] and rel[r] >= level:
            hits += 1
            k2[hits - 1] = hits / (i + 1.0)  # precision at the hits-th relevant document
            if nonrel > 0:
                bpref += 1.0 - min(nonrel, R) / min(num_nonrel, R)
            else:
                bpref += 1.0
        elif judged[r] and rel[r] >= 0:   # a negative judgment is unjudged
            nonrel += 1
    # interpolated precision, trec_eval's way: level x needs int(x R + iprec_half)
    # relevant documents; its value is the best precision from that relevant document on
    for j in range(hits - 2, -1, -1):
        k2[j] = max(k2[j], k2[j + 1])
    for lv in range(11):
        need = int(RECALL_LEVELS_ARR[lv] * R + iprec_half)
        if need <= hits and hits > 0:
            out[8 + lv] = k2[max(need, 1) - 1]
    out[2] = hits
    out[6] = bpref / R if R > 0 else 0.0
    # the measures dfrank's metrics define, by their kernels
    ap_val = 0.0
    if R > 0:
        ap_val = _kernels._ap_full(s, y, 0, n, stable, thr, R, ibuf, jbuf, fbuf)
        out[5] = count_top(s, y, 0, n, min(int(R), n), stable, thr, ibuf) / R
    out[3] = ap_val
    out[4] = np.log(max(ap_val, MIN_GEO))
    out[7] = _kernels._rr(s, y, 0, n, n, stable, thr)
    for c in range(n_p):
        out[col_p + c] = count_top(s, y, 0, n, min(p_cuts[c], n), stable, thr, ibuf) / \
            p_cuts[c]
    for c in range(n_r):
        if R > 0:
            out[col_r + c] = count_top(s, y, 0, n, min(r_cuts[c], n), stable, thr, ibuf) / R
    for c in range(n_s):
        out[col_s + c] = 1.0 if count_top(s, y, 0, n, min(s_cuts[c], n), stable, thr,
                                          ibuf) > 0 else 0.0
    for c in range(n_m):
        if R > 0:
            out[col_m + c] = _kernels._ap_cut(s, y, 0, n, min(m_cuts[c], n), stable, thr, R, ibuf)
    # NDCG: linear gains, the ideal ranking of every judged document of the query
    idcg = 0.0
    for j in range(len(ideal)):
        idcg += ideal[j] / np.log2(j + 2.0)
    if idcg > 0:
        out[col_ndcg] = _kernels._dcg(s, y, g, disc, 0, n, n, stable, ibuf, fbuf) / idcg
    for c in range(n_n):
        ic = 0.0
        for j in range(min(n_cuts[c], len(ideal))):
            ic += ideal[j] / np.log2(j + 2.0)
        if ic > 0:
            out[col_n + c] = _kernels._dcg(s, y, g, disc, 0, n, min(n_cuts[c], n), stable,
                                           ibuf, fbuf) / ic


@njit(cache=True, nogil=True)
def _judge_query(rows, buf, d_span, d_hash, qbuf, qd_span, qd_hash, qrel, qrows, table, rel,
                 judged, dup):
    """Judge the run rows of one query: a small open-addressing table of their docno hashes
    (it stays in cache), probed by the query's qrels rows; equal hashes are confirmed byte
    for byte. A docno met twice in the run is reported in ``dup``."""
    m = len(rows)
    size = 1
    while size < 2 * m + 1:
        size *= 2
    t = table[:size]
    t[:] = -1
    mask = np.uint64(size - 1)
    for r in rows:
        judged[r] = False
        rel[r] = 0
        h = d_hash[r] & mask
        while t[h] >= 0:
            s = t[h]
            if d_hash[s] == d_hash[r] and TK.same_bytes(buf, d_span[r, 0], d_span[r, 1], buf,
                                                        d_span[s, 0], d_span[s, 1]):
                dup[0] = min(r, s)
                dup[1] = max(r, s)
                return
            h = (h + np.uint64(1)) & mask
        t[h] = r
    for j in qrows:
        h = qd_hash[j] & mask
        while t[h] >= 0:
            r = t[h]
            if d_hash[r] == qd_hash[j] and TK.same_bytes(buf, d_span[r, 0], d_span[r, 1], qbuf,
                                                         qd_span[j, 0], qd_span[j, 1]):
                judged[r] = True
                rel[r] = qrel[j]
                break
            h = (h + np.uint64(1)) & mask


@njit(cache=True, nogil=True, parallel=True)
def eval_queries(order, qptr, run, qrels, qorder, qlo, qhi, options, cuts, rel, judged, out,
                 dup):
    """Measures of each query (its run rows are ``order[qptr[q]:qptr[q+1]]``, its qrels rows
    ``qorder[qlo[q]:qhi[q]]``) into ``out[q]``; ``dup[q]`` the rows of a duplicate docno,
    if any. ``rel``/``judged`` receive each run row's judgment. ``run`` = (score, buf,
    d_span, d_hash), ``qrels`` = (buf, d_span, d_hash, rel), ``options`` = (level, max_docs,
    iprec_half), ``cuts`` as :func:`_eval_query` reads them."""
    score, buf, d_span, d_hash = run
    qbuf, qd_span, qd_hash, qrel = qrels
    level = options[0]
    nq = len(qptr) - 1
    max_m = 1
    max_j = 1
    for q in range(nq):
        max_m = max(max_m, qptr[q + 1] - qptr[q])
        max_j = max(max_j, qhi[q] - qlo[q])
    size = 1
    while size < 2 * max_m + 1:
        size *= 2
    for q in prange(nq):
        lo, hi = qptr[q], qptr[q + 1]
        m = hi - lo
        rows = order[lo:hi].copy()
        qrows = qorder[qlo[q]:qhi[q]]
        table = np.empty(size, np.int64)
        dup[q, 0] = -1
        dup[q, 1] = -1
        _judge_query(rows, buf, d_span, d_hash, qbuf, qd_span, qd_hash, qrel, qrows, table,
                     rel, judged, dup[q])
        if dup[q, 0] >= 0:
            continue
        # the query's judged gains, descending, and its relevant / judged non-relevant counts
        nj = len(qrows)
        gains = np.empty(max(nj, 1))
        gi = np.empty(max(nj, 1), np.int64)
        n_pos = 0
        n_rel = 0
        n_non = 0
        for i in range(nj):
            v = qrel[qrows[i]]
            if v >= level:
                n_rel += 1
            elif v >= 0:   # a negative judgment is in the pool but unjudged
                n_non += 1
            if v > 0:
                gains[n_pos] = -float(v)
                gi[n_pos] = i
                n_pos += 1
        big = max(m, nj, 1)
        keys = np.empty(big)
        k2 = np.empty(big)
        v2 = np.empty(big, np.int64)
        sort_pairs(gains[:n_pos], gi[:n_pos], k2, v2)
        for i in range(n_pos):
            gains[i] = -gains[i]
        _eval_query(rows, score, rel, judged, buf, d_span, float(n_rel), float(n_non),
                    gains[:n_pos], options, cuts, out[q], (keys, k2, v2))


# ---------------------------------------------------------------- the Python side
class TrecEval:
    """trec_eval's measures of a run.

    Attributes
    ----------
    measures : list of str
        Measure names in trec_eval's order.
    qids : list of str
        The evaluated queries.
    values : ndarray (n_queries, n_measures)
        Per-query values (``runid`` and ``num_q`` columns hold NaN and 1).
    all : dict
        What trec_eval prints for "all" (means; sums for the counts; exp of the mean log
        for gm_map).
    runid : str
    """

    def __init__(self, measures, qids, values, all_, runid):
        self.measures, self.qids, self.values, self.all, self.runid = \
            measures, qids, values, all_, runid
        self._per_query = None

    @property
    def per_query(self):
        """``{qid: {measure: value}}`` (gm_map per query is log(max(AP, 1e-5)), as in
        trec_eval and pytrec_eval)."""
        if self._per_query is None:
            self._per_query = {
                q: {n: (self.runid if n == "runid" else float(v))
                    for n, v in zip(self.measures, row)}
                for q, row in zip(self.qids, self.values)}
        return self._per_query

    def __repr__(self):
        head = ", ".join(f"{n}={self.all[n]:.4f}" for n in self.measures
                         if n in self.all and n not in COUNTS)
        return f"TrecEval({len(self.qids)} queries, runid={self.runid!r}, {head})"

    def format(self, per_query=False):
        """trec_eval's three-column text (``measure<TAB>qid|all<TAB>value``)."""
        return format_trec(self, per_query)


def _fmt(name, value):
    if name in COUNTS:
        return str(int(round(value)))
    return f"{value:.4f}"


def format_trec(res, per_query=False):
    """trec_eval's layout: name padded to 22, a tab, the qid (or "all"), a tab, the value
    (4 decimals; integers for counts); per-query blocks in qid order, then "all"."""
    lines = []
    if per_query:
        cols = [(j, n, f"{n:<22s}\t") for j, n in enumerate(res.measures)
                if n not in ("runid", "num_q", "gm_map")]
        for i in sorted(range(len(res.qids)), key=lambda i: res.qids[i]):
            q = res.qids[i]
            row = res.values[i]
            lines.extend(f"{pad}{q}\t{_fmt(n, row[j])}" for j, n, pad in cols)
    for n in res.measures:
        v = str(res.runid) if n == "runid" else _fmt(n, res.all[n])
        lines.append(f"{n:<22s}\tall\t{v}")
    return "\n".join(lines) + "\n"


def as_trec_eval_reads(scores):
    """``scores`` rounded to single precision, as trec_eval keeps a run's scores (C
    ``float``), in doubles: the same ties and the same order as trec_eval."""
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float32).astype(np.float64)


def evaluate_run(qrels, run, measures=("official",), per_query=False, complete=False,
                 rel_level=1, max_docs=None, iprec_rounding="legacy"):
    """Evaluate a TREC run exactly as trec_eval does.

    Parameters
    ----------
    qrels, run : TREC files, or any form of :mod:`dfrank.io.forms`: dicts ``{qid: {docno:
        value}}``, pandas DataFrames (``qid, docno, label`` / ``qid, docno, score``), ranx
        ``Qrels`` / ``Run``, ir_datasets qrels records
    measures : list of trec_eval measure specs
        ``"official"`` (trec_eval's default set), ``"map"``, ``"P.5,10"``,
        ``"ndcg_cut.10"``, ``"recall"``, ``"map_cut"``, ``"success"``, ...
    per_query : bool
        Return per-query values too (``TrecEval.per_query``); ``False`` keeps them anyway
        but the caller may ignore them.
    complete : bool
        trec_eval -c: average over every query of the qrels.
    rel_level : int
        trec_eval -l: the lowest judgment counted relevant.
    max_docs : int or None
        trec_eval -M: only the first N documents of each ranking.
    iprec_rounding : {"legacy", "nearest"}
        How iprec_at_recall turns a recall level x into a number of relevant documents:
        ``int(x R + 0.9)`` as trec_eval 9 and pytrec_eval (default), or the nearest
        integer (half away from zero) as trec_eval 10, whose values differ on queries
        where x R has a fraction in [0.1, 0.5).

    Returns
    -------
    TrecEval
    """
    qrels, run = as_qrels(qrels), as_run(run)
    if max_docs is not None and (int(max_docs) != max_docs or max_docs < 1):
        raise ValueError(f"max_docs must be a positive integer, got {max_docs!r}")
    if int(rel_level) != rel_level or rel_level < 0:
        raise ValueError(f"rel_level must be an integer >= 0, got {rel_level!r}: trec_eval "
                         "marks documents outside the qrels -1 and negative judgments -2, "
                         "so a level below 0 would count those as relevant")
    if iprec_rounding not in IPREC_ROUNDING:
        raise ValueError(f"iprec_rounding must be one of {list(IPREC_ROUNDING)}, got "
                         f"{iprec_rounding!r}")
    trec_specs, ir, ours = _split_measures(measures, rel_level)
    if ours and max_docs is not None:
        raise ValueError(f"max_docs (trec_eval -M) applies to trec_eval's measures, not to "
                         f"dfrank's {ours[0].name}: evaluate it on the run cut to its first "
                         "documents")
    chosen = parse_measures(trec_specs or ["num_q"])
    names = []
    for fam, params in chosen.items():
        names += _names(fam, params)

    rqids, row_q = run.queries()
    qqids, qrow_q = qrels.queries()
    qrel_index = {q: i for i, q in enumerate(qqids)}
    # run queries that are judged, in run order; their qrels index
    judged_q = np.array([qrel_index.get(q, -1) for q in rqids], dtype=np.int64)
    keep_q = np.flatnonzero(judged_q >= 0)
    # per-qrels-query relevant counts (for -c averages of num_rel)
    nq_qrels = len(qqids)
    num_rel = np.bincount(qrow_q, weights=(qrels.rel >= rel_level), minlength=nq_qrels)
    # run rows grouped by (kept) query
    q_to_k = np.full(len(rqids), -1, np.int64)
    q_to_k[keep_q] = np.arange(len(keep_q))
    row_k = q_to_k[row_q]
    sel = np.flatnonzero(row_k >= 0)
    order = sel[np.argsort(row_k[sel], kind="stable")]
    qptr = np.concatenate([[0], np.cumsum(np.bincount(row_k[sel], minlength=len(keep_q)))])
    cuts = {f: np.asarray(chosen[f] if f in chosen else (), dtype=np.int64)
            for f in DEFAULT_PARAMS}  # families not asked for: no cut-off computed
    n_cols = _BASE + sum(len(cuts[f]) for f in ("P", "recall", "ndcg_cut", "success",
                                                  "map_cut")) + 1
    kq = len(keep_q)
    out = np.zeros((kq, n_cols))
    dup = np.empty((kq, 2), np.int64)
    jq = judged_q[keep_q]
    qorder = np.argsort(qrow_q, kind="stable").astype(np.int64)
    qstart = np.concatenate([[0], np.cumsum(np.bincount(qrow_q, minlength=nq_qrels))])
    rel_out = np.zeros(run.n, np.int64)
    judged_out = np.zeros(run.n, np.bool_)
    eval_queries(order.astype(np.int64), qptr.astype(np.int64),
                 (as_trec_eval_reads(run.score), run.buf, run.d_span, run.d_hash),
                 (qrels.buf, qrels.d_span, qrels.d_hash, qrels.rel),
                 qorder, qstart[jq].astype(np.int64), qstart[jq + 1].astype(np.int64),
                 (int(rel_level), 0 if max_docs is None else int(max_docs),
                  float(IPREC_ROUNDING[iprec_rounding])),
                 tuple(cuts[f] for f in ("P", "recall", "ndcg_cut", "success", "map_cut")),
                 rel_out, judged_out, out, dup)
    bad = np.flatnonzero(dup[:, 0] >= 0)
    if bad.size:
        a, b = sorted(int(x) for x in dup[bad[0]])
        raise DataFormatError(
            f"docno {run.text(a, run.d_span)!r} appears twice for query "
            f"{run.text(a, run.q_span)!r} (lines {int(run.line_no[a])} and "
            f"{int(run.line_no[b])}); trec_eval's measures would depend on which copy "
            "counts, so dfrank refuses the run", path=run.path, line=int(run.line_no[b]))
    if kq == 0:
        raise DataFormatError(
            f"the run ({run.path}) and the qrels ({qrels.path}) share no query: run qids "
            f"{_some(rqids)}, qrels qids {_some(qqids)} (trec_eval stops here too)")
    qids = [rqids[qi] for qi in keep_q]
    if complete:  # every judged query the run lacks: zeros, its relevant count filled in
        missing = np.setdiff1d(np.arange(nq_qrels), jq)
        zeros = np.zeros((len(missing), n_cols))
        zeros[:, 1] = num_rel[missing]
        zeros[:, 4] = math.log(MIN_GEO)
        out = np.vstack([out, zeros])
        qids += [qqids[i] for i in missing]
    values, agg = _tabled(names, out, _columns(cuts), len(qids))
    if ir or ours:
        if not trec_specs:
            names, values, agg = [], values[:, :0], {}
    if ir:
        names, values = _add_ir_measures(ir, qrels, run, qids, names, values, agg)
    if ours:
        names, values = _add_dfrank_metrics(ours, qrels, run, qids, names, values, agg)
    return TrecEval(names, qids, values, agg, run.runid)


def _split_measures(measures, rel_level=1):
    """(trec_eval's measure specs, ir_measures' measures, dfrank's metrics): a name
    trec_eval knows is trec_eval's (``P.5``, ``P_5``, ``ndcg_cut_10``, ``map``, ``ndcg``);
    else a name with a capital letter or parentheses, or a measure object, is
    ir_measures' (``P@5``, ``nDCG@10``, ``AP(rel=2)``); else a name of dfrank's
    (``ndcg@10``, ``p@5``, ``err@20``) is dfrank's metric, its relevance threshold
    ``rel_level``."""
    from .registry import get_metric, is_ir_measure

    trec, ir, ours = [], [], []
    for m in measures:
        if isinstance(m, str):
            try:
                parse_measures([m])
                trec.append(m)
                continue
            except ValueError as e:
                if not is_ir_measure(m):
                    try:
                        ours.append(get_metric(m, rel_threshold=float(rel_level)))
                    except ValueError:
                        raise e from None
                    continue
        elif not is_ir_measure(m):
            raise TypeError(f"a measure is a trec_eval spec or an ir_measures measure, got "
                            f"{m!r}")
        ir.append(m)
    return trec, ir, ours


def _add_dfrank_metrics(ours, qrels, run, qids, names, values, agg):
    """dfrank's metrics ``ours`` on the queries ``qids``, with trec_eval's reading of the run
    (single-precision scores, ties by docno descending, judged documents the run lacks in
    R, a query the run lacks scoring 0), as :func:`dfrank.tune` scores runs; columns named
    as dfrank labels them."""
    from ..io.forms import run_as_data, trec_mapping
    from .evaluation import bind_metric
    from .registry import RUN_TIES

    judged = trec_mapping(qrels, "qrels")
    data = run_as_data(trec_mapping(run, "run"), judged, qids)
    scores = as_trec_eval_reads(data.X[:, 0])
    cols = np.array([bind_metric(data, m, RUN_TIES).per_query(scores) for m in ours]).T
    for j, m in enumerate(ours):
        agg[m.label] = float(cols[:, j].mean()) if len(qids) else 0.0
    return names + [m.label for m in ours], np.hstack([values, cols.reshape(len(qids), -1)])


def _add_ir_measures(ir, qrels, run, qids, names, values, agg):
    """ir_measures' own values of its measures ``ir`` on the queries ``qids`` (a query it
    does not score counts 0, as trec_eval -c): columns named as ir_measures names them."""
    from .._optional import need
    from ..io.forms import trec_mapping

    irm = need("ir_measures", "ir_measures' measure names")
    parsed = []
    for m in ir:
        try:
            parsed.append(irm.parse_measure(m) if isinstance(m, str) else m)
        except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as e:
            raise ValueError(f"unknown measure {m!r}: not trec_eval's nor ir_measures' "
                             f"({e})") from None
    got = {}
    for r in irm.iter_calc(parsed, trec_mapping(qrels, "qrels"), trec_mapping(run, "run")):
        got[str(r.measure), str(r.query_id)] = float(r.value)
    cols = np.array([[got.get((str(m), str(q)), 0.0) for m in parsed] for q in qids])
    for j, m in enumerate(parsed):
        agg[str(m)] = float(cols[:, j].mean()) if len(qids) else 0.0
    return names + [str(m) for m in parsed], np.hstack([values, cols.reshape(len(qids), -1)])


def _tabled(names, out, columns, n_eval):
    """(per-query values of the measures ``names``, their averages as trec_eval takes
    them: counts summed, gm_map the geometric mean, the rest the mean) of the kernel's
    per-query ``out``."""
    values = np.full((n_eval, len(names)), np.nan)
    for j, n in enumerate(names):
        if n in columns:
            values[:, j] = out[:, columns[n]]
        elif n == "num_q":
            values[:, j] = 1.0
    agg = {}
    for name in names:
        if name == "runid":
            continue
        if name == "num_q":
            agg[name] = float(n_eval)
            continue
        col = out[:, columns[name]]
        if name in COUNTS:
            agg[name] = float(col.sum())
        elif name == "gm_map":
            agg[name] = math.exp(col.sum() / n_eval)
        else:
            agg[name] = float(col.sum() / n_eval)
    return values, agg


def _some(qids, n=5):
    return ", ".join(repr(q) for q in qids[:n]) + (", ..." if len(qids) > n else "")


def _columns(cuts):
    col = {"num_ret": 0, "num_rel": 1, "num_rel_ret": 2, "map": 3, "gm_map": 4, "Rprec": 5,
           "bpref": 6, "recip_rank": 7}
    for lv in range(11):
        col[f"iprec_at_recall_{lv / 10:.2f}"] = 8 + lv
    c = _BASE
    for fam in ("P", "recall"):
        for k in cuts[fam]:
            col[f"{fam}_{k}"] = c
            c += 1
    col["ndcg"] = c
    c += 1
    for fam in ("ndcg_cut", "success", "map_cut"):
        for k in cuts[fam]:
            col[f"{fam}_{k}"] = c
            c += 1
    return col


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("files", (
    first(eval_queries, arr(i8), arr(i8), tup(arr(f8), ro(u1), arr(i8, 2), arr(u8)),
          tup(ro(u1), arr(i8, 2), arr(u8), arr(i8)), arr(i8), arr(i8), arr(i8), tup(i8, i8, f8),
          tup(arr(i8), arr(i8), arr(i8), arr(i8), arr(i8)), arr(i8), arr(b1), arr(f8, 2),
          arr(i8, 2)),
), phase=0)
