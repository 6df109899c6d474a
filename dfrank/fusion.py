"""Learned fusion of retrieval runs: the weights of a linear fusion that maximize a metric.

    res = dfrank.fuse("qrels.txt", {"bm25": "bm25.run", "dense": "dense.run"}, metric="map")
    res.weights            # {"bm25": 0.38, "dense": 0.62}: non-negative, summing to 1
    res.to_trec("fused.run")

Each run's scores are normalized per query (:data:`NORMS`); a document a run did not
retrieve gets ``missing`` (0, the run's lowest normalized score, or a given value). The
candidates of a query are the union of the runs' documents; they become a
:class:`~dfrank.RankingData` with one feature per run and the judgments as labels, so the
metric is dfrank's own, computed with trec_eval's conventions for runs: ties broken by
docno descending (the rows are in that order and ties are ``stable``), and judged documents
no run retrieved counted in R and in the ideal DCG (``RankingData.unranked``). The search
compares fused scores in double precision; every value reported (the fusion's, the
baselines', the held-out folds') is computed on scores rounded as trec_eval reads a run
(single precision), so it is trec_eval's value of the run written. The runs stay
arrays from the compiled reader to the fused run (:mod:`dfrank.io.docnos`): no Python
object per line.

The weights live on the simplex over the runs (w >= 0, sum w = 1), the space ranx,
OpenSearch and Elasticsearch accept. Coordinate ascent there moves along the segment from
the current weights to a vertex (all weight on one run) and back past the start, as far as
every weight stays >= 0: an exact line search restricted to that segment
(:meth:`~dfrank.linesearch.LineProfile.within`). ``signed=True`` searches Metzler's
augmented simplex instead (any registered strategy; a run may get a negative weight).
"""

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._kernels.scoring import features_T, linear_scores
from .api import maximize
from .data import RankingData
from .errors import DataFormatError
from .io import docnos as dn
from .io.forms import as_qrels, as_run
from .metrics.evaluation import bind_metric
from .objective import LinearObjective
from .parallel import child, seed_sequence
from .files import VERSION, jsonable, write_json_atomic, write_text_atomic
from .metrics.registry import RUN_METRIC, RUN_TIES
from .metrics.trec_eval import as_trec_eval_reads
from .metrics.registry import get as get_metric
from .result import overall_status
from .stats import significance as paired_test

__all__ = ["fuse", "fusion_data", "fusion_values", "FusionResult", "NORMS", "FUSION_FORMAT",
           "normalize"]

FUSION_FORMAT = "dfrank.fusion"
NORMS = ("minmax", "zscore", "sum", "max", "rank", "borda", "l2", "none")
_TINY = 1e-9   # the floor of a normalizer's denominator (ranx's)
_HUGE = 1e150  # scores beyond this are divided by their largest magnitude first
_SCALE_FREE = ("minmax", "zscore", "sum", "max", "l2")   # norm(c s) = norm(s) for c > 0

# ---------------------------------------------------------------- normalization
def normalize(scores, norm, n_candidates=None):
    """One run's scores for one query, normalized (``scores`` best first).

    ``minmax`` (s - min) / (max - min), ``zscore`` (s - mean) / sd, ``sum``
    (s - min) / sum(s - min), ``max`` s / max (ranx's definitions, denominators floored at
    1e-9); ``rank`` 1 / rank; ``borda`` 1 - (rank - 1) / n_candidates (ranx's); ``l2``
    s / ||s|| (OpenSearch's); ``none`` s."""
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    big = float(np.abs(s).max()) if n else 0.0
    if big > _HUGE and norm in _SCALE_FREE:   # differences or sums would overflow
        s = s / big
    if norm == "minmax":
        lo = s.min()
        return (s - lo) / max(s.max() - lo, _TINY)
    if norm == "zscore":
        return (s - s.mean()) / max(float(s.std()), _TINY)
    if norm == "sum":
        lo = s.min()
        return (s - lo) / max(float(s.sum()) - lo * n, _TINY)
    if norm == "max":
        return s / max(float(s.max()), _TINY)
    if norm == "rank":
        return 1.0 / np.arange(1.0, n + 1.0)
    if norm == "borda":
        return 1.0 - np.arange(n) / float(n_candidates)
    if norm == "l2":
        return s / max(float(np.sqrt((s * s).sum())), _TINY)
    if norm == "none":
        return s.copy()
    raise ValueError(f"unknown normalization {norm!r}; known: {', '.join(NORMS)}")


def _borda_missing(n_results, n_candidates):
    """ranx's Borda value of a candidate a run did not retrieve: the mean of the places
    left below its results."""
    return 0.5 - (n_results - 1) / (2.0 * n_candidates)


# ---------------------------------------------------------------- the data
@dataclass
class _Fusion:
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


def _check_missing(norm, missing):
    if norm not in NORMS:
        raise ValueError(f"unknown normalization {norm!r}; known: {', '.join(NORMS)}")
    if not (missing in ("zero", "min") or (isinstance(missing, (int, float)) and
                                           not isinstance(missing, bool)
                                           and math.isfinite(missing))):
        raise ValueError(f"missing must be 'zero', 'min' or a finite number, got {missing!r}")


def _group_starts(g):
    """Start of each run of equal values of sorted ``g`` (and its length)."""
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.empty(0, np.int64)
    return starts, np.diff(np.r_[starts, len(g)])


def _normalize_groups(s, starts, counts, norm, m):
    """:func:`normalize` of every group of ``s`` (each group one run's scores for one
    query, best first; ``m`` its query's candidates) at once."""
    if norm in ("rank", "borda"):
        rank = np.arange(len(s)) - np.repeat(starts, counts)
        return 1.0 / (rank + 1.0) if norm == "rank" else 1.0 - rank / np.repeat(m, counts)
    if norm == "none":
        return s.copy()
    big = np.maximum.reduceat(np.abs(s), starts)
    scale = np.where((big > _HUGE) & (norm in _SCALE_FREE), big, 1.0)
    s = s / np.repeat(scale, counts)   # differences or sums would overflow
    lo = np.repeat(np.minimum.reduceat(s, starts), counts)
    if norm == "minmax":
        return (s - lo) / np.maximum(np.repeat(np.maximum.reduceat(s, starts), counts) - lo,
                                     _TINY)
    if norm == "max":
        return s / np.maximum(np.repeat(np.maximum.reduceat(s, starts), counts), _TINY)
    n = np.repeat(counts, counts).astype(np.float64)
    total = np.repeat(np.add.reduceat(s, starts), counts)
    if norm == "sum":
        return (s - lo) / np.maximum(total - lo * n, _TINY)
    if norm == "zscore":
        dev = s - total / n
        sd = np.sqrt(np.repeat(np.add.reduceat(dev * dev, starts), counts) / n)
        return dev / np.maximum(sd, _TINY)
    return s / np.maximum(np.sqrt(np.repeat(np.add.reduceat(s * s, starts), counts)), _TINY)


@dataclass
class _RunRows:
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


def _run_rows(run, name):
    """A :class:`_RunRows` of any run form :func:`~dfrank.io.forms.as_run` takes."""
    f = as_run(run, name)
    qids, row_q = f.queries()
    return _RunRows(qids, row_q, dn.docno_bytes(f), f.score, f.line_no, f.path)


def _read_runs(runs):
    """name -> :class:`_RunRows` of a dict of runs (read one after the other)."""
    if not hasattr(runs, "items"):
        raise TypeError("runs must be a dict name -> run")
    rs = {}
    for n, r in runs.items():
        if str(n) in rs:
            raise ValueError("two runs have the same name")
        rs[str(n)] = _run_rows(r, str(n))
    return rs


def _build(qrels, runs, norm, missing, complete):
    """The fusion's data: a row per candidate (the union of the runs' documents of a
    query, docno-descending), a feature per run (its normalized score, or ``missing``),
    labels from ``qrels`` (a read Qrels; None: every query of the runs, labels 0, to apply
    a fusion). ``runs``: name -> :class:`_RunRows`."""
    _check_missing(norm, missing)
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
        starts, counts = _group_starts(g)
        vals = _normalize_groups(s, starts, counts, norm, m_q[g[starts]])
        n_rq = np.zeros(nq)
        n_rq[g[starts]] = counts
        if norm == "borda":
            fill = _borda_missing(n_rq, np.maximum(m_q, 1).astype(np.float64))
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
    uptr, ulab = _unranked(jq, jrel, jrow < 0, nq)
    docids = np.empty(n_cand, dtype=cand.dtype)
    docids[final] = cand
    del cand, final
    data = RankingData(X, y, qptr, np.asarray(qids, dtype=object),
                       docids=dn.key_docnos(docids), feature_ids=np.arange(1, len(names) + 1),
                       source="fusion", unranked=(uptr, ulab))
    return _Fusion(names, data, qids, run_only, unretrieved, complete, ranked_rows,
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


def _unranked(q, rel, mask, nq):
    """(uptr, labels) of the judged documents ``mask`` selects, per query, in file order
    (negative judgments as 0)."""
    order = np.flatnonzero(mask)
    order = order[np.argsort(q[order], kind="stable")]
    uptr = np.concatenate([[0], np.cumsum(np.bincount(q[order], minlength=nq))])
    return uptr.astype(np.int64), np.maximum(rel[order], 0.0)


# ---------------------------------------------------------------- the search
def _scores(data, weights):
    return linear_scores(features_T(data), np.asarray(weights, dtype=np.float64))


# ---------------------------------------------------------------- the result
@dataclass
class FusionResult:
    """What :func:`fuse` learned and how it compares.

    Attributes
    ----------
    weights : dict
        Run name -> weight (sum 1; >= 0 unless ``signed``).
    value : float
        The metric of the fused run on the training queries, as trec_eval computes it.
    per_query : dict
        qid -> the fused run's value.
    baselines : dict
        name -> {"value", "per_query", "p_value"} for each run alone, CombSUM (equal
        weights) and reciprocal-rank fusion (k = 60); ``p_value`` of the paired test of the
        learned fusion against it.
    cv_value, cv_per_query, fold_weights
        With ``folds``: the value of the run assembled from each fold's fusion learned on
        the other folds, per query, and each fold's weights.
    status : str
        Why the search ended: ``converged``, ``completed``, ``budget``, ``time``,
        ``stopped`` or ``interrupted``.
    seconds : float
        Wall-clock seconds of the whole fusion (reading included).
    fused : FusedRun
        The fused run as arrays; a mapping ``qid -> {docno: score}``.
    """
    weights: dict
    value: float
    per_query: dict
    metric: str
    norm: str
    missing: object
    signed: bool
    runs: list
    fused: "FusedRun" = field(repr=False)
    baselines: dict = field(default_factory=dict, repr=False)
    folds: int = None
    cv_value: float = None
    cv_per_query: dict = field(default=None, repr=False)
    fold_weights: list = None
    n_queries: int = 0
    left_out: dict = field(default_factory=dict)
    significance: str = "randomization"
    status: str = "completed"
    seconds: float = 0.0

    def _fused(self):
        if self.fused is None:
            raise ValueError("this fusion was loaded from its file, which keeps the weights "
                             "but not the fused run: apply(runs) fuses runs with them")
        return self.fused

    def run(self):
        """The fused run as ``{qid: {docno: score}}``."""
        return self._fused().to_dict()

    def to_trec(self, path, tag="dfrank-fusion"):
        """Write the fused run as a TREC run file (atomically)."""
        write_text_atomic(path, ("".join(b) for b in self._fused().blocks(tag)))
        return path

    def to_dataframe(self):
        """The fused run as a pandas DataFrame (``qid, docno, score, rank``)."""
        return self._fused().to_dataframe()

    def apply(self, runs):
        """The fused run of other runs of the same systems (a dict name -> run, the names
        of :attr:`runs`), with this fusion's normalization, missing-document rule and
        weights: the learned fusion applied to new queries. A :class:`FusedRun`: read as
        the mapping ``{qid: {docno: score}}``, written with ``to_trec``-style lines or
        ``to_dataframe``."""
        if not hasattr(runs, "items") or sorted(runs) != sorted(self.runs):
            raise ValueError(f"apply takes a dict of the runs {self.runs}, got "
                             f"{sorted(runs) if hasattr(runs, 'items') else type(runs)}")
        fu = _build(None, _read_runs({n: runs[n] for n in self.runs}), self.norm,
                    self.missing, False)
        return _fused_run(fu, np.array([self.weights[n] for n in self.runs]))

    def summary_rows(self):
        rows = [{"name": "learned fusion (train)", "value": self.value, "p_value": None}]
        if self.cv_value is not None:
            rows.append({"name": f"learned fusion ({self.folds}-fold held out)",
                         "value": self.cv_value, "p_value": None})
        for name, b in self.baselines.items():
            rows.append({"name": name, "value": b["value"], "p_value": b["p_value"]})
        return rows

    def summary(self):
        """The table ``dfrank fuse`` prints."""
        from .text import format_table

        rows = [[r["name"], f"{r['value']:.4f}",
                 "" if r["p_value"] is None else f"{r['p_value']:.3g}" +
                 (" *" if r["p_value"] < 0.05 else "")] for r in self.summary_rows()]
        weights = ", ".join(f"{n} {w:+.4f}" if self.signed else f"{n} {w:.4f}"
                            for n, w in self.weights.items())
        notes = [f"{self.metric} over {self.n_queries} queries; weights: {weights}",
                 f"p: paired {self.significance} test of the learned fusion (train) against each "
                 "row; * = p < 0.05"]
        lo = self.left_out
        if lo.get("run_only"):
            notes.append(f"{lo['run_only']} queries of the runs have no judgments: left out")
        if lo.get("unretrieved"):
            notes.append(f"{lo['unretrieved']} judged queries no run retrieved: "
                         + ("counted as 0 (complete)" if lo.get("complete") else
                            "left out (as trec_eval without -c)"))
        return format_table(rows, ["", self.metric, "p vs learned"]) + "\n" + "\n".join(notes)

    def to_dict(self):
        """The result as a JSON-ready dict (``format``, ``version``, weights, values,
        baselines, folds); :meth:`run` is the fused run."""
        return jsonable({
            "format": FUSION_FORMAT, "version": VERSION, "metric": self.metric,
            "norm": self.norm, "missing": self.missing, "signed": self.signed,
            "weights": self.weights, "value": self.value, "n_queries": self.n_queries,
            "folds": self.folds, "cv_value": self.cv_value,
            "fold_weights": self.fold_weights, "left_out": self.left_out,
            "baselines": {k: {"value": v["value"], "p_value": v["p_value"]}
                          for k, v in self.baselines.items()},
            "per_query": self.per_query, "significance": self.significance,
            "status": self.status, "seconds": self.seconds})

    def to_json(self, path=None):
        """:meth:`to_dict`, also written atomically to ``path``; :meth:`load` reads it
        back."""
        d = self.to_dict()
        if path is not None:
            write_json_atomic(path, d)
        return d

    @classmethod
    def load(cls, path):
        """A fusion written by :meth:`to_json`: what :meth:`apply` needs (weights,
        normalization, missing-document rule) and the values it reported; the fused run
        itself is not in the file (``fused`` is None)."""
        from .files import read_json

        return cls.from_dict(read_json(path, FUSION_FORMAT), path)

    @classmethod
    def from_dict(cls, obj, path=None):
        """:meth:`load` of a dict of :meth:`to_dict` (``path`` names it in errors)."""
        weights = obj.get("weights")
        if not isinstance(weights, dict) or not weights or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
                for w in weights.values()):
            raise DataFormatError(f"a {FUSION_FORMAT} file needs 'weights': run name -> "
                                  "finite number", path=path)
        missing = obj.get("missing", "zero")
        try:
            _check_missing(obj.get("norm"), missing)
        except (ValueError, TypeError) as e:
            raise DataFormatError(f"a corrupt {FUSION_FORMAT} file: {e}", path=path) from None
        base = obj.get("baselines") or {}
        return cls(weights={str(k): float(v) for k, v in weights.items()},
                   value=float(obj.get("value", math.nan)),
                   per_query=dict(obj.get("per_query") or {}),
                   metric=str(obj.get("metric", "")), norm=obj["norm"], missing=missing,
                   signed=bool(obj.get("signed", False)), runs=[str(k) for k in weights],
                   fused=None, baselines={k: dict(v, per_query={}) for k, v in base.items()
                                          if isinstance(v, dict)},
                   folds=obj.get("folds"), cv_value=obj.get("cv_value"),
                   fold_weights=obj.get("fold_weights"), n_queries=obj.get("n_queries", 0),
                   left_out=obj.get("left_out") or {},
                   significance=obj.get("significance", "randomization"),
                   status=obj.get("status", "completed"), seconds=obj.get("seconds", 0.0))

    def export(self, format):
        """The weights where fusion runs in production: ``"ranx"`` (arguments of ranx's
        ``fuse``), ``"opensearch"`` (a normalization-processor search pipeline),
        ``"elasticsearch"`` (a ``linear`` retriever). A normalization, a missing-document
        rule or a negative weight the target cannot express is refused with the reason."""
        from .export import fusion_export

        return fusion_export(self, format)


# ---------------------------------------------------------------- fuse
def _combsum(fu):
    return np.full(len(fu.names), 1.0 / len(fu.names))


FUSE_STRATEGY = "ca"
FUSE_OPTIONS = {"restarts": 5, "tol": 1e-6, "max_sweeps": 50, "rule": "best"}


def fusion_data(qrels, runs, norm="minmax", missing="zero", complete=False):
    """The data :func:`fuse` searches: a row per (query, candidate document), a column per
    run (its normalized score, ``missing`` where it lacks the document), labels from
    ``qrels`` (arguments as :func:`fuse`'s). A linear ranker of it, evaluated with
    ``ties="stable"``, is a fused run under trec_eval's conventions."""
    _check_missing(norm, missing)
    return _build(as_qrels(qrels), _read_runs(runs), norm, missing, complete).data


def fusion_values(qrels, runs, weights, metric=RUN_METRIC, norm="minmax", missing="zero"):
    """Per-query values (``{qid: value}``) of the fusion of ``runs`` with ``weights`` (a
    dict run name -> weight), as trec_eval computes them on the fused run: what a fusion
    learned elsewhere scores on other queries (validation topics)."""
    _check_missing(norm, missing)
    fu = _build(as_qrels(qrels), _read_runs(runs), norm, missing, False)
    w = np.array([float(weights[n]) for n in fu.names])
    return dict(zip(fu.qids, map(float, _values(fu.data, get_metric(metric), w))))


def fuse(qrels, runs, metric=RUN_METRIC, *, norm="minmax", missing="zero", signed=False,
         strategy=FUSE_STRATEGY, folds=None, seed=0, budget=None, max_seconds=None,
         n_jobs=1, complete=False, significance="randomization", progress=False,
         **options):
    """Learn the weights of a linear fusion of ``runs`` that maximize ``metric``.

    Parameters
    ----------
    qrels : TREC qrels path, dict ``{qid: {docno: relevance}}``, DataFrame or ranx Qrels
    runs : dict name -> run (TREC run path, dict ``{qid: {docno: score}}``, DataFrame with
        ``qid, docno, score``, or a ranx Run)
    metric : str, Metric or ir_measures measure
        ``map``, ``ndcg@10``, ``p@10``, ``mrr``, ``recall@100``, ... (default
        :data:`~dfrank.metrics.RUN_METRIC`), with trec_eval's conventions for runs (ties
        broken by docno, judged documents a run lacks counted in R and the ideal DCG). A
        name means what it means everywhere (:mod:`dfrank.metrics.registry`): ``ndcg@10``
        is dfrank's (gain 2^l - 1), ``nDCG@10`` trec_eval's and ir_measures' (linear gain).
    norm : one of :data:`NORMS`
        The per-query normalization of each run's scores.
    missing : "zero", "min" or a number
        The normalized score of a candidate a run did not retrieve (Borda has its own).
    signed : bool
        Search Metzler's augmented simplex (weights of any sign, summing to 1), instead of
        the non-negative weights of the plain simplex.
    strategy, **options
        The search, through :func:`dfrank.maximize` and the strategy registry: by default
        exact coordinate ascent (:data:`FUSE_STRATEGY`) with :data:`FUSE_OPTIONS` (5
        restarts, the first from equal weights, one for two runs without ``signed``;
        tolerance 1e-6; the ``best`` line-search rule), each option overridable. Without
        ``signed`` the search keeps the weights non-negative (coordinate ascent's
        ``nonnegative=True``, which other strategies do not offer); with ``signed`` any
        registered strategy.
    seed, budget, max_seconds, n_jobs, progress
        As :func:`dfrank.maximize` (the budget and time limit are per fusion learned: with
        ``folds``, per fold).
    folds : int, optional
        Cross-validate by query (seeded): each fold's fusion is learned on the other
        folds; the run assembled from the held-out folds is reported next to the training
        value (``cv_value``).
    complete : bool
        Judged queries no run retrieved count as 0 in every mean (trec_eval -c); by
        default they are left out, as trec_eval does.
    significance : the paired test against each baseline (see :func:`dfrank.significance`).

    Returns
    -------
    FusionResult
    """
    t0 = time.perf_counter()
    _check_missing(norm, missing)
    q = as_qrels(qrels)
    rs = _read_runs(runs)
    fu = _build(q, rs, norm, missing, complete)
    n_runs = len(rs)
    del q, rs  # what was read is not needed past the build: its memory goes
    spec = get_metric(metric)
    metric_name = spec.label
    ss = seed_sequence(seed)
    preset = _is_fuse_strategy(strategy)
    opts = dict(FUSE_OPTIONS if preset else {}, **options)
    if not signed and n_runs == 2 and preset and "restarts" not in options:
        # two runs: the non-negative weights are one segment, which the first line search
        # sweeps whole; every restart would find the same best interval, and ties go to
        # the first restart, so one restart gives the same weights
        opts["restarts"] = 1
    if not signed:
        opts["nonnegative"] = True
        if "nonnegative" not in _strategy_options(strategy):
            raise ValueError(f"fuse keeps the weights non-negative with a strategy that "
                             f"offers nonnegative=True ('ca'); for {strategy!r} pass "
                             "signed=True (Metzler's augmented simplex)")
    status = []

    def learn(data):
        res = maximize(LinearObjective(data, spec, ties=RUN_TIES),
                       strategy=strategy, seed=ss, budget=budget, max_seconds=max_seconds,
                       n_jobs=n_jobs, progress=progress, **opts)
        status.append(res.status)
        w = res.weights
        if not signed:
            return w
        total = w.sum()
        return w / (total if total > 0 else np.abs(w).sum())

    w = learn(fu.data)
    fused_pq = _values(fu.data, spec, w)
    res = FusionResult(weights=dict(zip(fu.names, map(float, w))), value=0.0,
                       per_query={}, metric=metric_name, norm=norm, missing=missing,
                       signed=signed, runs=fu.names, fused=_fused_run(fu, w),
                       significance=significance)
    res.per_query = dict(zip(fu.qids, map(float, fused_pq)))
    n_extra = len(fu.unretrieved) if complete else 0
    res.n_queries = len(fu.qids) + n_extra
    res.value = _mean(fused_pq, n_extra)
    res.left_out = {"run_only": len(fu.run_only), "unretrieved": len(fu.unretrieved),
                    "complete": bool(complete)}
    # baselines: each run, CombSUM, RRF
    base = {}
    for j, name in enumerate(fu.names):
        base[f"run {name}"] = _values(_run_alone(fu, j), spec, np.ones(1))
    base["CombSUM (equal weights)"] = _values(fu.data, spec, _combsum(fu))
    base["RRF (k = 60)"] = _values(_rrf(fu), spec, np.ones(1))
    for name, pq in base.items():
        p = None
        if not np.array_equal(pq, fused_pq):
            p = float(paired_test(fused_pq, pq, significance, ci=False).p_value)
        res.baselines[name] = {"value": _mean(pq, n_extra),
                               "per_query": dict(zip(fu.qids, map(float, pq))),
                               "p_value": p}
    if folds is not None:
        _cross_validate(res, fu, folds, ss, learn, spec, n_extra)
    res.status = overall_status(status)
    res.seconds = time.perf_counter() - t0
    return res


def _strategy_class(strategy):
    """The class of a strategy given by name (or alias), class or instance."""
    from .registry import get

    if isinstance(strategy, str):
        found = get(strategy)
        return found if isinstance(found, type) else type(found)
    return strategy if isinstance(strategy, type) else type(strategy)


def _is_fuse_strategy(strategy):
    """Whether ``strategy`` names fuse's default search (:data:`FUSE_STRATEGY`, by any of
    its names, or its class), whose :data:`FUSE_OPTIONS` then apply; an instance keeps
    the options it was made with."""
    if not isinstance(strategy, (str, type)):
        return False
    return _strategy_class(strategy) is _strategy_class(FUSE_STRATEGY)


def _strategy_options(strategy):
    """The option names a strategy takes."""
    import inspect

    return set(inspect.signature(_strategy_class(strategy).__init__).parameters)


def _mean(per_query, n_extra):
    return float(np.sum(per_query) / (len(per_query) + n_extra))


def _values(data, metric, w):
    """Per-query values of the weights ``w`` as trec_eval computes them on the run they make
    (its scores read in single precision): the search compares doubles, every value
    reported is trec_eval's."""
    bound = bind_metric(data, metric, RUN_TIES)
    return bound.per_query(as_trec_eval_reads(_scores(data, w)))


def _fused_run(fu, w):
    return FusedRun(fu.qids, fu.data.qptr, fu.data.docids, _scores(fu.data, w))


def _run_alone(fu, j):
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
                       unranked=_unranked(jq, jrel, lacked, nq))


def _rrf(fu, k=60):
    """Reciprocal-rank fusion of the runs as data (every candidate; the rank of a document
    in a run is its place in the run's ranking of the query)."""
    rrf = np.zeros(fu.data.n_docs)
    for g, p, _ in fu.ranked:
        starts, counts = _group_starts(g)
        rank = np.arange(len(g)) - np.repeat(starts, counts) + 1
        np.add.at(rrf, p, 1.0 / (k + rank))
    d = fu.data
    return RankingData(rrf[:, None], d.y, d.qptr, d.qids, unranked=d.unranked)


class FusedRun(Mapping):
    """A fused run as arrays: each query's documents (docno-descending) and their scores.
    Read as a mapping it is the run ``{qid: {docno: score}}``, one query built at a time."""

    def __init__(self, qids, qptr, docnos, scores):
        self.qids, self.qptr, self.docnos, self.scores = list(qids), qptr, docnos, scores
        self._where = None

    def __getitem__(self, qid):
        if self._where is None:
            self._where = {q: i for i, q in enumerate(self.qids)}
        i = self._where[qid]
        a, b = self.qptr[i], self.qptr[i + 1]
        docs = np.char.decode(self.docnos[a:b], "utf-8", errors="replace").tolist()
        return dict(zip(docs, self.scores[a:b].tolist()))

    def __iter__(self):
        return iter(self.qids)

    def __len__(self):
        return len(self.qids)

    def _text(self, rows=None):
        """The docnos (of ``rows``, or all) as str (an object array; bytes.decode per
        docno is 7x faster than np.char.decode)."""
        docnos = self.docnos if rows is None else self.docnos[rows]
        out = np.empty(len(docnos), dtype=object)
        out[:] = [d.decode("utf-8", "replace") for d in docnos.tolist()]
        return out

    def to_dict(self):
        """``{qid: {docno: score}}``."""
        docs, s = self._text().tolist(), self.scores.tolist()
        return {q: dict(zip(docs[a:b], s[a:b]))
                for q, a, b in zip(self.qids, self.qptr[:-1], self.qptr[1:])}

    def ranking(self):
        """(query index, row) of every document, each query ranked as trec_eval ranks
        (score descending, then docno descending: the rows' order)."""
        q = np.repeat(np.arange(len(self.qids)), np.diff(self.qptr))
        order = np.lexsort((np.arange(len(q)), -self.scores, q))
        return q[order], order

    def lines(self, tag):
        """TREC run lines, each query ranked (scores written exactly: ``repr``)."""
        return [line for block in self.blocks(tag) for line in block]

    def blocks(self, tag, size=1 << 16):
        """:meth:`lines` in lists of ``size`` lines (or fewer, the last): a file is written
        one block at a time, without every line in memory at once."""
        q, order = self.ranking()
        qids = np.asarray(self.qids, dtype=object)
        for a in range(0, len(order), size):
            rows, qb = order[a:a + size], q[a:a + size]
            rank = (np.arange(a, a + len(rows)) - self.qptr[qb] + 1).tolist()
            yield [f"{x} Q0 {d} {r} {v!r} {tag}\n" for x, d, r, v in zip(
                qids[qb].tolist(), self._text(rows).tolist(), rank,
                self.scores[rows].tolist())]

    def to_dataframe(self):
        """A pandas DataFrame ``qid, docno, score, rank`` (PyTerrier's layout; rank from
        0)."""
        from ._optional import need

        pd = need("pandas", "to_dataframe")
        q, order = self.ranking()
        return pd.DataFrame({"qid": np.asarray(self.qids, dtype=object)[q],
                             "docno": self._text()[order], "score": self.scores[order],
                             "rank": np.arange(len(order)) - self.qptr[q]})


def _cross_validate(res, fu, folds, ss, learn, metric, n_extra):
    """Each fold's weights learned on the other folds' queries; the held-out values of the
    run assembled from the folds. A held-out query never influences its own weights."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    nq = fu.data.n_queries
    if folds > nq:
        raise ValueError(f"{folds} folds need at least {folds} queries; there are {nq}")
    perm = np.random.default_rng(child(ss, 10 ** 6)).permutation(nq)
    fold_of = np.empty(nq, np.int64)
    fold_of[perm] = np.arange(nq) % folds
    held = np.empty(nq)
    weights = []
    for f in range(folds):
        train_q = np.flatnonzero(fold_of != f)
        test_q = np.flatnonzero(fold_of == f)
        w = learn(fu.data.subset(train_q))
        weights.append({"weights": dict(zip(fu.names, map(float, w))),
                        "held_out": [fu.qids[i] for i in test_q]})
        held[test_q] = _values(fu.data.subset(test_q), metric, w)
    res.folds = int(folds)
    res.fold_weights = weights
    res.cv_per_query = dict(zip(fu.qids, map(float, held)))
    res.cv_value = _mean(held, n_extra)
