"""The user-facing driver: :func:`maximize` (and :func:`evaluate`, from the metrics layer).
"""

import contextlib
import functools
import time

import numpy as np

from .checkpoint import Checkpoint, fingerprint
from ..data.ranking import RankingData
from ..errors import NoEvaluationError
from ..files import sole_writer
from ..cluster import ClusterObjective, as_cluster_data, is_cluster_input
from ..cluster.objective import evaluate as _evaluate_scores_on_cluster
from ..cluster.objective import evaluate_linear as _evaluate_on_cluster
from ..metrics.evaluation import bind_metric
from ..metrics.evaluation import evaluate as _evaluate
from ..metrics.evaluation import evaluate_linear as _evaluate_linear
from ..metrics.registry import DEFAULT_METRIC, DEFAULT_TIES
from ..data.normalization import of_data
from ..objectives.objective import BudgetExhausted, check_budget, make_objective
from .parallel import (child, describe_seed, effective_n_jobs, run_in_threads, run_tasks,
                       seed_sequence)
from ..registry import BOX_STRATEGY, DEFAULT_STRATEGY, resolve
from .observers import CallbackCaller, CheckpointWriter, ProgressBar, RunState
from .result import RestartResult, Result, overall_status
from ..spaces import Box, Simplex

__all__ = ["evaluate", "evaluate_linear", "maximize", "bind_metric", "kernels_for"]


def evaluate(scores, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES, per_query=False,
             **options):
    evaluate_here = _evaluate_scores_on_cluster if is_cluster_input(data) else _evaluate
    return evaluate_here(scores, data, metrics, ties=ties, per_query=per_query, **options)


evaluate.__doc__ = _evaluate.__doc__ + """
    On data held by a Dask cluster (:mod:`dfrank.cluster`) ``scores`` is a Dask array, one
    score per document in the rows' order, and each part's queries are evaluated where
    they are, to the same values.
    """


def evaluate_linear(weights, data, metrics=DEFAULT_METRIC, *, ties=DEFAULT_TIES,
                    per_query=False, **options):
    """:func:`evaluate` of the linear scorer ``weights`` (one per feature of ``data``), in
    one pass that scores and ranks; on data held by a Dask cluster (a
    :class:`~dfrank.cluster.ClusterData`, a Dask collection, shard paths) each part's
    queries are evaluated where they are, to the same values."""
    evaluate_here = _evaluate_on_cluster if is_cluster_input(data) else _evaluate_linear
    return evaluate_here(weights, data, metrics, ties=ties, per_query=per_query, **options)


def kernels_for(metric, strategy=None, ties=DEFAULT_TIES):
    """The compiled versions of numba kernels (kernel, argument types) that a run of
    ``strategy`` (an instance; None for coordinate ascent) on ``metric`` calls: its
    metric's evaluation, the simplex's projections, the line search's kernels for a
    strategy that makes line searches, the smoothed metrics' for one that climbs them. A
    command loads them in one call before its run (``dfrank._jit.load``), so that the run's
    time holds no compiling."""
    from .. import linesearch, metrics, spaces
    from ..objectives import surrogates
    from .._kernels import scoring
    from ..metrics.registry import get_metric, tie_code

    m = get_metric(metric)
    found = metrics.versions(m, ties) + spaces.versions() + scoring.versions()
    if (strategy is None or strategy.makes_line_searches) and not m.is_custom:
        found += linesearch.versions(m.code, tie_code(ties))
    if strategy is not None and strategy.smoothed_kernels:
        found += surrogates.versions(strategy.smoothed_kernels)
    return found


# --------------------------------------------------------------------------- maximize
_STATUS_EARLY = ("budget", "time", "stopped", "interrupted")


def _restart_budget(budget, n, r):
    """Restart ``r``'s share of ``budget`` split evenly over ``n`` restarts (the first
    ones get one more when it does not divide)."""
    if budget is None:
        return None
    base, extra = divmod(int(budget), n)
    return base + (1 if r < extra else 0)


def _run_restart(task, objective, listener=None, progress=None, cancel=None):
    """One restart in this process or a worker: a fresh objective, a seeded generator.

    ``progress(index, objective, state_fn)``, when given, receives the strategy's
    mid-restart states (checkpointed runs); a task may carry ``resume`` = such a saved
    state, from which a resumable strategy continues."""
    strategy, index, ss, max_evals, deadline, resume = task
    max_seconds = None if deadline is None else max(0.0, deadline - time.time())
    obj = objective.fresh(max_evals=max_evals, max_seconds=max_seconds)
    obj.listener = listener
    obj.cancel = cancel
    if progress is not None:
        obj.progress_saver = lambda o, state_fn: progress(index, o, state_fn)
    obj.start_clock()
    kwargs = {}
    if resume is not None:
        obj.set_state(resume["objective"])
        kwargs["resume"] = resume["strategy"]
    info, status = {}, "completed"
    try:
        info = strategy.run(obj, np.random.default_rng(ss), restart=index,
                            **kwargs) or {}
        if info.get("converged"):
            status = "converged"
    except BudgetExhausted as e:
        status = "time" if e.reason == "time" else "budget"
    except StopIteration:
        status = "stopped"
    except KeyboardInterrupt:
        status = "interrupted"
    if getattr(obj, "package_seed", None) is not None:   # another package's, as it got it
        info = dict(info, seed=obj.package_seed)
    return RestartResult(index=index, seed=describe_seed(ss), value=float(obj.best_value),
                         point=obj.best_point, n_evals=obj.n_evals, seconds=obj.elapsed,
                         status=status, trace=obj.trace, info=info)


def _merge_traces(restarts):
    evals, secs, vals = [0], [0.0], [-np.inf]
    e0, t0, best = 0, 0.0, -np.inf
    for r in restarts:
        tr = r.trace
        for e, t, v in zip(tr["evals"][1:], tr["seconds"][1:], tr["values"][1:]):
            if v > best:
                best = v
                evals.append(int(e0 + e))
                secs.append(float(t0 + t))
                vals.append(float(v))
        e0 += r.n_evals
        t0 += r.seconds
    return {"evals": np.array(evals), "seconds": np.array(secs), "values": np.array(vals)}


def maximize(data_or_objective, metric=None, strategy=None, *, seed=0,
             n_jobs=1, budget=None, max_seconds=None, valid=None, callback=None,
             progress=False, ties=None, checkpoint=None, resume=None,
             checkpoint_every=5.0, **options):
    """Maximize a rank metric directly.

    Parameters
    ----------
    data_or_objective : RankingData or Objective
        Training data (a linear ranker is learned over the simplex of its features), or
        any :class:`~dfrank.objectives.objective.Objective` (e.g. a ScoringObjective over a Box).
    metric : str, optional
        Metric name for data (default :data:`~dfrank.metrics.DEFAULT_METRIC`); an objective
        has its own.
    strategy : str, Strategy, Strategy class or function, optional
        A registered name (``dfrank.strategies.available()``), e.g. ``"ca"``, ``"pso"``.
        Default :data:`~dfrank.registry.DEFAULT_STRATEGY` for a linear ranker,
        :data:`~dfrank.registry.BOX_STRATEGY` on a box of parameters.
    seed : int, Generator, SeedSequence or None
        One SeedSequence spawns a child per restart: same seed, same result, whatever
        ``n_jobs``.
    n_jobs : int
        Restarts run in parallel through joblib (-1: all cores). With n_jobs != 1 the
        callback runs after each restart, in this process. With n_jobs = 1 the restarts
        of the line-search strategies (ca, fdsa) run side by side in threads of this
        process, sharing numba's threads, unless a callback or a checkpoint follows them.
    budget : int, optional
        Objective evaluations in all (an exact line search counts one), split evenly over
        the restarts so the result does not depend on ``n_jobs``.
    max_seconds : float, optional
        Wall-clock limit for the whole run (makes results time-dependent).
    valid : RankingData, optional
        Validation data: the restart with the best validation metric is chosen.
    callback : callable, optional
        ``callback(intermediate_result)`` after every evaluation (n_jobs = 1); raise
        ``StopIteration`` to stop and keep the best so far.
    progress : bool
        Show a progress bar (tqdm).
    ties : tie policy of the metric on data (default "pessimistic"); an objective has its
        own.
    checkpoint : path, optional
        Write the finished restarts to this JSON file (atomically, at most every
        ``checkpoint_every`` seconds, and always at the end or on an interruption).
    resume : path, optional
        Continue the run saved in this checkpoint: its finished restarts are read back,
        the others run, and the result equals that of an uninterrupted run with the same
        arguments. A checkpoint of any other run is refused. Keeps checkpointing to the
        same file unless ``checkpoint`` names another. See :mod:`dfrank.driver.checkpoint`.
    **options
        The strategy's hyperparameters (e.g. ``restarts=5``, ``rule="plateau"``).

    Returns
    -------
    Result
        Also when the budget runs out, the callback stops the run or Ctrl-C interrupts it
        (``interrupted=True``): the best point found so far is kept.
    """
    t_start = time.perf_counter()
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (it receives the intermediate Result), "
                        f"got {callback!r}")
    budget, max_seconds = check_budget(budget, max_seconds, "budget")
    objective = _objective_of(data_or_objective, metric, ties)
    budget = objective.max_evals if budget is None else budget
    max_seconds = objective.max_seconds if max_seconds is None else max_seconds
    strat = _strategy_for(objective, strategy, options)
    _check_valid(valid, objective)
    if getattr(objective, "on_cluster", False):
        n_jobs = 1   # the restarts one after another, each split over the cluster's workers
    n_jobs_eff = effective_n_jobs(n_jobs)
    R = strat.n_restarts
    root = seed_sequence(seed)
    deadline = None if max_seconds is None else time.time() + max_seconds
    n_tasks = R if budget is None else min(R, budget)   # restarts with evaluations to make
    saver, restored, partial = _checkpointing(checkpoint, resume, checkpoint_every,
                                              fingerprint(objective, strat, root, budget, R)
                                              if checkpoint or resume else None, strat)
    writer = CheckpointWriter(saver) if saver is not None else None
    # this run is the one writer of its checkpoint until the end
    with contextlib.nullcontext() if saver is None else sole_writer(saver.path, "checkpoint"):
        state = RunState(restored, lambda restarts, seconds: _result_of(
            objective, strat, restarts, valid, seed, seconds), [
            ProgressBar(n_tasks, len(restored), strat.label) if progress else None, writer,
            CallbackCaller(callback, n_jobs_eff != 1, objective, valid) if callback else None],
            t_start=t_start)
        tasks = _restart_tasks(strat, n_tasks, {r.index for r in restored}, root, budget,
                               deadline, partial)
        interrupted = _run_restarts(objective, strat, state, writer, tasks,
                                    n_tasks - len(restored), n_jobs, n_jobs_eff,
                                    callback is not None)
    return _final_result(state, interrupted, n_tasks, deadline, strat)


def _objective_of(data_or_objective, metric, ties):
    """The objective :func:`maximize` maximizes: the data's on a cluster's workers
    (:mod:`dfrank.cluster`), or :func:`make_objective`'s."""
    if is_cluster_input(data_or_objective):   # its queries' work done where they are
        return ClusterObjective(as_cluster_data(data_or_objective), metric or DEFAULT_METRIC,
                                ties=ties or DEFAULT_TIES)
    return make_objective(data_or_objective, metric, ties)


def _strategy_for(objective, strategy, options):
    """The strategy instance that runs on ``objective``: ``strategy`` resolved (the
    default for the objective's space when None), ``auto``'s pick made, and checked."""
    if strategy is None:
        strategy = BOX_STRATEGY if isinstance(objective.space, Box) else DEFAULT_STRATEGY
    strat = resolve(strategy, **options)
    if strat.chooses:   # auto: the strategy for this objective's size
        strat = strat.pick(objective)
    strat.check(objective)
    return strat


def _check_valid(valid, objective):
    """Refuse validation data that cannot validate ``objective``'s rankers."""
    if valid is None:
        return
    if not isinstance(valid, RankingData):
        raise TypeError(f"valid must be a RankingData, got {type(valid).__name__}")
    if not getattr(objective, "is_linear", False):
        raise ValueError("valid= needs a linear ranker objective (data, not a box)")
    if valid.n_features != objective.data.n_features:
        raise ValueError(f"valid has {valid.n_features} features but the training data "
                         f"has {objective.data.n_features}; load both with the same "
                         "n_features")


def _restart_tasks(strat, n_tasks, skip, root, budget, deadline, partial):
    """The restarts' arguments, made on demand (those in ``skip`` done already); none is
    started after the deadline but the first, which evaluates at least its start point."""
    first = True
    R = strat.n_restarts
    for r in range(n_tasks):
        if r in skip:
            continue
        if deadline is not None and not first and time.time() >= deadline:
            return
        first = False
        yield (strat, r, child(root, r), _restart_budget(budget, R, r), deadline,
               partial if (partial is not None and partial["index"] == r) else None)


def _run_restarts(objective, strat, state, writer, tasks, n_left, n_jobs, n_jobs_eff,
                  has_callback):
    """Run the restarts, each one's result handed to ``state`` as it ends (in threads, in
    joblib's workers or one after another); the checkpoint ``writer`` is the only writer
    of its file. Returns whether Ctrl-C interrupted them."""
    runs = None
    try:
        local = functools.partial(
            _run_restart, listener=state.evaluated if state.wants_evaluations else None,
            progress=(lambda index, obj, state_fn: writer.progress(state, index, obj,
                                                                   state_fn))
            if writer is not None and strat.resumable else None)
        # (a progress bar then counts restarts as they end, as with joblib's workers)
        workers = _restart_threads(objective, strat, n_left, n_jobs_eff,
                                   has_callback or writer is not None)
        if workers:
            runs = run_in_threads(_run_restart, tasks, *workers, shared=(objective,))
        else:
            runs = run_tasks(local if n_jobs_eff == 1 else _run_restart, tasks, n_jobs,
                             shared=(objective,))
        for res in runs:
            try:
                state.finished(res)
            except StopIteration:
                break
            if res.status in ("stopped", "interrupted"):
                break
    except KeyboardInterrupt:
        return True
    finally:
        if runs is not None:
            runs.close()   # restarts still running in threads end (interrupted) here
        state.close()
    return False


def _final_result(state, interrupted, n_tasks, deadline, strat):
    """The run's :class:`Result` from its finished restarts (in restart order), with the
    status and message of a run that ended early."""
    done = sorted(state.done, key=lambda r: r.index)
    if not any(r.point is not None for r in done):
        if interrupted or any(r.status == "interrupted" for r in done):
            raise KeyboardInterrupt("interrupted before any restart finished")
        raise NoEvaluationError("no point was evaluated: the budget or time limit is too "
                                f"small for {strat.label} ({n_tasks} restarts)")
    state.done = done
    result = state.snapshot()
    if interrupted:
        result.status = "interrupted"
    if len(done) < n_tasks:
        if result.status not in ("interrupted", "stopped"):
            result.status = "time" if deadline is not None and time.time() >= deadline \
                else "stopped"
        result.message = (f"stopped after {len(done)} of {n_tasks} restarts; "
                          + result.message).rstrip("; ")
    return result


def _restart_threads(objective, strat, n_tasks, n_jobs, followed):
    """``(workers, numba threads they share)`` when the restarts of a serial run (n_jobs = 1)
    run side by side in threads of this process (:func:`~dfrank.driver.parallel.run_in_threads`),
    else None: two or more restarts, numba's cores for them, a strategy and an objective
    that allow it, no callback after each evaluation and no checkpoint (``followed``),
    and a threading layer that takes calls from several threads (not ``workqueue``).
    Each restart's result is the same as run alone, so the run's is too."""
    if n_jobs != 1 or n_tasks < 2 or not strat.concurrent_restarts or followed \
            or not getattr(objective, "concurrent", False) or objective.recorder is not None:
        return None
    import numba

    threads = numba.get_num_threads()   # (starts numba's pool, so the layer is known)
    if threads < 2 or numba.threading_layer() == "workqueue":
        return None
    return min(threads, n_tasks), threads


def _checkpointing(checkpoint, resume, every, fp, strat):
    """(the Checkpoint written, the restarts read back from ``resume``, the saved state of
    the restart cut short there when its strategy can continue it, else None)."""
    if fp is None:
        return None, [], None
    saver = Checkpoint(checkpoint if checkpoint is not None else resume, fp, every=every)
    if resume is None:
        saver.check_replaceable()
        return saver, [], None
    restored, current = Checkpoint(resume, fp).restore()
    if checkpoint is not None:
        saver.check_replaceable()
    if current is None or not strat.resumable:
        return saver, restored, None
    saver.current = current   # kept until the restart saves anew or ends
    return saver, restored, current


def _result_of(objective, strat, restarts, valid, seed, elapsed):
    """The Result of ``restarts``: the best one (by validation value when ``valid`` is
    given), or the strategy's combination of all of them."""
    simplex = isinstance(objective.space, Simplex)
    with_point = [r for r in restarts if r.point is not None]
    if valid is not None:
        for r in with_point:
            if r.valid_value is None:
                r.valid_value = _evaluate_linear(objective.space.to_weights(r.point), valid,
                                                objective.metric, ties=objective.ties)
    if with_point:
        def key(r):
            primary = r.valid_value if valid is not None else r.value
            return (primary, r.value, -r.index)
        best = max(with_point, key=key)
        point, value = best.point, best.value
        valid_value = best.valid_value
        combined = strat.combine(objective, [r.point for r in sorted(with_point,
                                                                     key=lambda r: r.index)])
        if combined is not None:   # one answer made from all restarts (not counted)
            point = combined
            weights = objective.space.to_weights(point)
            value = _evaluate_linear(weights, objective.data, objective.metric,
                                    ties=objective.ties)
            valid_value = None if valid is None else _evaluate_linear(
                weights, valid, objective.metric, ties=objective.ties)
    else:
        best, point, value, valid_value = None, None, -np.inf, None
    early = [r for r in restarts if r.status in _STATUS_EARLY]
    msg = ""
    if early:
        kinds = sorted({r.status for r in early})
        msg = f"{len(early)} restart(s) ended early ({', '.join(kinds)})"
    info = best.info if best is not None else {}
    if isinstance(info, dict) and info.get("zero_gradient"):
        msg = (msg + "; " if msg else "") + \
            "the finite-difference gradient was exactly zero (a plateau of the metric)"
    metric_name = getattr(getattr(objective, "metric", None), "label", None)
    data = getattr(objective, "data", None)
    return Result(
        value=float(value), point=point,
        weights=objective.space.to_weights(point) if (simplex and point is not None) else None,
        n_evals=int(sum(r.n_evals for r in restarts)), seconds=float(elapsed),
        trace=_merge_traces(restarts), restarts=list(restarts), strategy=strat.label,
        params=strat.get_params(), metric=metric_name, seed=seed,
        status=overall_status(r.status for r in restarts), valid_value=valid_value,
        plateau=info.get("plateau") if isinstance(info, dict) else None, message=msg,
        feature_ids=getattr(data, "feature_ids", None),
        space="simplex" if simplex else "box",
        normalization=of_data(data) if isinstance(data, RankingData) or
        getattr(objective, "on_cluster", False) else None)
