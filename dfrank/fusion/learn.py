"""Learning a fusion's weights: :func:`fuse` and the values of given weights
(:func:`fusion_values`)."""

import time

import numpy as np

from ..driver.api import maximize
from ..driver.crossval import check_folds, cross_validate
from ..io.forms import as_qrels
from ..metrics.registry import RUN_METRIC, RUN_TIES
from ..metrics.registry import get_metric
from ..objectives.objective import LinearObjective
from ..driver.parallel import child, seed_sequence
from ..registry import get_strategy, resolve, strategy_class
from ..driver.result import overall_status
from ..stats import significance as paired_test
from .baselines import baselines
from .features import build, fused_run, mean_of, read_runs, values_of
from .normalize import check_missing
from .result import FusionResult

__all__ = ["fuse", "fusion_values", "FUSE_STRATEGY", "FUSE_OPTIONS", "is_fuse_strategy"]


FUSE_STRATEGY = "ca"
FUSE_OPTIONS = {"restarts": 5, "tol": 1e-6, "max_sweeps": 50, "rule": "best"}


def fusion_values(qrels, runs, weights, metric=RUN_METRIC, norm="minmax", missing="zero"):
    """Per-query values (``{qid: value}``) of the fusion of ``runs`` with ``weights`` (a
    dict run name -> weight), as trec_eval computes them on the fused run: what a fusion
    learned elsewhere scores on other queries (validation topics)."""
    check_missing(norm, missing)
    fu = build(as_qrels(qrels), read_runs(runs), norm, missing, False)
    w = np.array([float(weights[n]) for n in fu.names])
    return dict(zip(fu.qids, map(float, values_of(fu.data, get_metric(metric), w))))


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
        value (``cv``: :class:`~dfrank.driver.crossval.CrossValidation`).
    complete : bool
        Judged queries no run retrieved count as 0 in every mean (trec_eval -c); by
        default they are left out, as trec_eval does.
    significance : the paired test against each baseline (see :func:`dfrank.significance`).

    Returns
    -------
    FusionResult
    """
    t0 = time.perf_counter()
    check_missing(norm, missing)
    q = as_qrels(qrels)
    rs = read_runs(runs)
    fu = build(q, rs, norm, missing, complete)
    if folds is not None:
        check_folds(folds, len(fu.qids))
    n_runs = len(rs)
    del q, rs  # what was read is not needed past the build: its memory goes
    spec = get_metric(metric)
    metric_name = spec.label
    ss = seed_sequence(seed)
    found = get_strategy(strategy) if isinstance(strategy, str) else strategy
    cls = strategy_class(found)   # looked up once: every fold's search runs it
    preset = is_fuse_strategy(strategy, cls)
    opts = dict(FUSE_OPTIONS if preset else {}, **options)
    if not signed and n_runs == 2 and preset and "restarts" not in options:
        # two runs: the non-negative weights are one segment, which the first line search
        # sweeps whole; every restart would find the same best interval, and ties go to
        # the first restart, so one restart gives the same weights
        opts["restarts"] = 1
    if not signed:
        opts["nonnegative"] = True
        if not getattr(cls, "searches_nonnegative", False):
            raise ValueError(f"fuse keeps the weights non-negative with a strategy that "
                             f"offers nonnegative=True ('ca'); for {strategy!r} pass "
                             "signed=True (Metzler's augmented simplex)")
    strat = resolve(found, **opts)
    status = []

    def learn(data):
        res = maximize(LinearObjective(data, spec, ties=RUN_TIES),
                       strategy=strat, seed=ss, budget=budget, max_seconds=max_seconds,
                       n_jobs=n_jobs, progress=progress)
        status.append(res.status)
        w = res.weights
        if not signed:
            return w
        total = w.sum()
        return w / (total if total > 0 else np.abs(w).sum())

    w = learn(fu.data)
    fused_pq = values_of(fu.data, spec, w)
    n_extra = len(fu.unretrieved) if complete else 0
    res = FusionResult(weights=dict(zip(fu.names, map(float, w))),
                       value=mean_of(fused_pq, n_extra),
                       per_query=dict(zip(fu.qids, map(float, fused_pq))),
                       metric=metric_name, norm=norm, missing=missing, signed=signed,
                       runs=fu.names, fused=fused_run(fu, w), significance=significance,
                       n_queries=len(fu.qids) + n_extra,
                       left_out={"run_only": len(fu.run_only),
                                 "unretrieved": len(fu.unretrieved),
                                 "complete": bool(complete)},
                       baselines=baselines(fu, spec, fused_pq, n_extra, significance))
    if folds is not None:
        def fold(train, test):
            w = learn(fu.data.subset(train))
            return (values_of(fu.data.subset(test), spec, w),
                    np.mean(values_of(fu.data.subset(train), spec, w)),
                    {"weights": dict(zip(fu.names, map(float, w)))})

        res.cv = cross_validate(fu.qids, folds, np.random.default_rng(child(ss, 10 ** 6)),
                                fold, n_extra)
        # the baselines tested against the held-out fusion: each query valued by weights
        # learned without it, not by the weights fitted on every query
        held = np.array([res.cv.per_query[q] for q in fu.qids])
        res.tested = "held out"
        for b in res.baselines.values():
            pq = np.array([b["per_query"][q] for q in fu.qids])
            b["p_value"] = None if np.array_equal(pq, held) else \
                float(paired_test(held, pq, significance, ci=False).p_value)
    res.status = overall_status(status)
    res.seconds = time.perf_counter() - t0
    return res


def is_fuse_strategy(strategy, cls=None):
    """Whether ``strategy`` names fuse's default search (:data:`FUSE_STRATEGY`, by any of
    its names, or its class), whose :data:`FUSE_OPTIONS` then apply; an instance keeps
    the options it was made with. ``cls``: ``strategy``'s class, when looked up already."""
    if not isinstance(strategy, (str, type)):
        return False
    return (strategy_class(strategy) if cls is None else cls) is \
        strategy_class(FUSE_STRATEGY)
