"""Learned fusion of retrieval runs: the weights of a linear fusion that maximize a metric.

    res = dfrank.fuse("qrels.txt", {"bm25": "bm25.run", "dense": "dense.run"}, metric="map")
    res.weights            # {"bm25": 0.38, "dense": 0.62}: non-negative, summing to 1
    res.to_trec("fused.run")

Each run's scores are normalized per query (:data:`NORMS`); a document a run did not
retrieve gets ``missing`` (0, the run's lowest normalized score, or a given value). The
candidates of a query are the union of the runs' documents; they become a
:class:`~dfrank.RankingData` with one feature per run and the judgments as labels, so the
metric is dfrank's own, computed as trec_eval computes it: linear gains, ties broken by
docno descending (the rows are in that order and ties are ``stable``), and judged documents
no run retrieved counted in R and in the ideal DCG (``RankingData.unranked``).

The weights live on the simplex over the runs (w >= 0, sum w = 1), the space ranx,
OpenSearch and Elasticsearch accept. Coordinate ascent there moves along the segment from
the current weights to a vertex (all weight on one run) and back past the start, as far as
every weight stays >= 0: an exact line search restricted to that segment
(:meth:`~dfrank.linesearch.LineProfile.within`). ``signed=True`` searches Metzler's
augmented simplex instead (any registered strategy; a run may get a negative weight).
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._kernels.scoring import features_T, linear_scores
from .api import maximize
from .data import RankingData
from .io.forms import (DocnoDesc, ranked, read_qrels, read_run, run_as_data, run_to_dataframe,
                       run_to_trec_lines)
from .metrics.evaluation import bind_metric
from .objective import LinearObjective
from .parallel import child, seed_sequence
from .files import VERSION, jsonable, write_json_atomic
from .metrics.registry import RUN_METRIC
from .metrics.registry import get as get_metric
from .result import overall_status
from .stats import significance as paired_test

__all__ = ["fuse", "FusionResult", "NORMS", "FUSION_FORMAT", "normalize"]

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


def _build(qrels, runs, norm, missing, complete):
    """The fusion's data: a row per candidate (the union of the runs' documents of a
    query, docno-descending), a feature per run (its normalized score or ``missing``),
    labels from ``qrels`` (None: every query of the runs, labels 0, to apply a fusion)."""
    if qrels is None:
        qrels = {q: {} for r in runs.values() for q in r}
    if norm not in NORMS:
        raise ValueError(f"unknown normalization {norm!r}; known: {', '.join(NORMS)}")
    fill = missing
    if not (missing in ("zero", "min") or (isinstance(missing, (int, float)) and
                                           not isinstance(missing, bool)
                                           and math.isfinite(missing))):
        raise ValueError(f"missing must be 'zero', 'min' or a finite number, got {missing!r}")
    names = list(runs)
    if len(names) < 2:
        raise ValueError(f"fusion needs at least two runs, got {len(names)}")
    judged_q = set(qrels)
    run_q = set().union(*[set(r) for r in runs.values()])
    run_only = sorted(run_q - judged_q)
    qids = sorted(judged_q & run_q)
    unretrieved = sorted(judged_q - run_q)
    if not qids:
        raise ValueError(f"the runs and the qrels share no query (runs: {sorted(run_q)[:5]}, "
                         f"qrels: {sorted(judged_q)[:5]})")
    X, y, sizes, docids, uptr, ulab = [], [], [], [], [0], []
    for q in qids:
        per_run = [ranked(runs[n].get(q, {})) for n in names]
        cands = sorted({d for pr in per_run for d, _ in pr}, key=DocnoDesc)
        index = {d: i for i, d in enumerate(cands)}
        m = len(cands)
        block = np.empty((m, len(names)))
        for j, pr in enumerate(per_run):
            if norm == "borda":
                col = np.full(m, _borda_missing(len(pr), m))
            elif not pr:
                col = np.zeros(m) if fill in ("zero", "min") else np.full(m, float(fill))
            else:
                vals = normalize([s for _, s in pr], norm, m)
                base = 0.0 if fill == "zero" else (float(vals.min()) if fill == "min"
                                                   else float(fill))
                col = np.full(m, base)
            if pr:
                vals = normalize([s for _, s in pr], norm, m)
                col[[index[d] for d, _ in pr]] = vals
            block[:, j] = col
        judged = qrels[q]
        X.append(block)
        y.extend(max(judged.get(d, 0), 0) for d in cands)
        sizes.append(m)
        docids.extend(cands)
        extra = [max(r, 0) for d, r in judged.items() if d not in index]
        ulab.extend(extra)
        uptr.append(uptr[-1] + len(extra))
    X = np.vstack(X)
    qptr = np.concatenate([[0], np.cumsum(sizes)])
    data = RankingData(X, np.asarray(y, dtype=np.float64), qptr, np.asarray(qids, dtype=object),
                       docids=np.asarray(docids, dtype=object),
                       feature_ids=np.arange(1, len(names) + 1), source="fusion",
                       unranked=(np.asarray(uptr), np.asarray(ulab, dtype=np.float64)))
    return _Fusion(names, data, qids, run_only, unretrieved, complete)


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
    """
    weights: dict
    value: float
    per_query: dict
    metric: str
    norm: str
    missing: object
    signed: bool
    runs: list
    fused: dict = field(repr=False)
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

    def run(self):
        """The fused run as ``{qid: {docno: score}}``."""
        return {q: dict(d) for q, d in self.fused.items()}

    def to_trec(self, path, tag="dfrank-fusion"):
        """Write the fused run as a TREC run file."""
        with open(path, "w") as f:
            f.writelines(run_to_trec_lines(self.fused, tag))
        return path

    def to_dataframe(self):
        """The fused run as a pandas DataFrame (``qid, docno, score, rank``)."""
        return run_to_dataframe(self.fused)

    def apply(self, runs):
        """The fused run ``{qid: {docno: score}}`` of other runs of the same systems (a dict
        name -> run, the names of :attr:`runs`), with this fusion's normalization,
        missing-document rule and weights: the learned fusion applied to new queries."""
        if not hasattr(runs, "items") or sorted(runs) != sorted(self.runs):
            raise ValueError(f"apply takes a dict of the runs {self.runs}, got "
                             f"{sorted(runs) if hasattr(runs, 'items') else type(runs)}")
        rs = {str(n): read_run(runs[n], n) for n in self.runs}
        fu = _build(None, rs, self.norm, self.missing, False)
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
        """:meth:`to_dict`, also written atomically to ``path``."""
        d = self.to_dict()
        if path is not None:
            write_json_atomic(path, d)
        return d

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


def _rrf(runs, qids, k=60):
    out = {}
    for q in qids:
        acc = {}
        for r in runs.values():
            for rank, (d, _) in enumerate(ranked(r.get(q, {})), 1):
                acc[d] = acc.get(d, 0.0) + 1.0 / (k + rank)
        out[q] = acc
    return out


FUSE_STRATEGY = "ca"
FUSE_OPTIONS = {"restarts": 5, "tol": 1e-6, "max_sweeps": 50, "rule": "best"}


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
        restarts, the first from equal weights; tolerance 1e-6; the ``best`` line-search
        rule), each option overridable. Without ``signed`` the search keeps the weights
        non-negative (coordinate ascent's ``nonnegative=True``, which other strategies do
        not offer); with ``signed`` any registered strategy.
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
    if not hasattr(runs, "items"):
        raise TypeError("runs must be a dict name -> run")
    q = read_qrels(qrels)
    rs = {str(n): read_run(r, n) for n, r in runs.items()}
    if len(rs) != len(runs):
        raise ValueError("two runs have the same name")
    fu = _build(q, rs, norm, missing, complete)
    spec = get_metric(metric)
    metric_name = spec.label
    ss = seed_sequence(seed)
    opts = dict(FUSE_OPTIONS if strategy == FUSE_STRATEGY else {}, **options)
    if not signed:
        opts["nonnegative"] = True
        if "nonnegative" not in _strategy_options(strategy):
            raise ValueError(f"fuse keeps the weights non-negative with a strategy that "
                             f"offers nonnegative=True ('ca'); for {strategy!r} pass "
                             "signed=True (Metzler's augmented simplex)")
    status = []

    def learn(data):
        res = maximize(LinearObjective(data, spec, ties="stable"),
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
    for name in fu.names:
        base[f"run {name}"] = _values_of_run(rs[name], fu, q, spec)
    base["CombSUM (equal weights)"] = _values(fu.data, spec, _combsum(fu))
    base["RRF (k = 60)"] = _values_of_run(_rrf(rs, fu.qids), fu, q, spec)
    for name, pq in base.items():
        p = None
        if not np.array_equal(pq, fused_pq):
            p = float(paired_test(fused_pq, pq, significance).p_value)
        res.baselines[name] = {"value": _mean(pq, n_extra),
                               "per_query": dict(zip(fu.qids, map(float, pq))),
                               "p_value": p}
    if folds is not None:
        _cross_validate(res, fu, folds, ss, learn, spec, n_extra)
    res.status = overall_status(status)
    res.seconds = time.perf_counter() - t0
    return res


def _strategy_options(strategy):
    """The option names a strategy takes."""
    import inspect

    from .registry import resolve

    return set(inspect.signature(type(resolve(strategy)).__init__).parameters)


def _mean(per_query, n_extra):
    return float(np.sum(per_query) / (len(per_query) + n_extra))


def _values(data, metric, w):
    bound = bind_metric(data, metric, "stable")
    return bound.per_query(_scores(data, w))


def _fused_run(fu, w):
    s = _scores(fu.data, w)
    out = {}
    qptr = fu.data.qptr
    for i, q in enumerate(fu.qids):
        lo, hi = qptr[i], qptr[i + 1]
        out[q] = dict(zip(fu.data.docids[lo:hi].tolist(), s[lo:hi].tolist()))
    return out


def _values_of_run(run, fu, qrels, metric):
    """Per-query values (``fu.qids`` order) of a run ``{qid: {docno: score}}`` under the
    same conventions as the fused run; a query the run lacks scores 0."""
    return _values(run_as_data(run, qrels, fu.qids), metric, np.ones(1))


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
