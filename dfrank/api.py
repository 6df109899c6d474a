"""The user-facing driver: :func:`maximize` (and :func:`evaluate`, from the metrics layer).
"""

import functools

import numpy as np

from .checkpoint import Checkpoint, fingerprint
from .data import RankingData
from .errors import NoEvaluationError
from .metrics.evaluation import bind_metric, evaluate, evaluate_linear
from .normalization import query_level_source
from .objective import BudgetExhausted, check_budget, make_objective
from .parallel import child, describe_seed, effective_n_jobs, run_tasks, seed_sequence
from .registry import BOX_STRATEGY, DEFAULT_STRATEGY, resolve
from .result import RestartResult, Result, overall_status
from .spaces import Box, Simplex

__all__ = ["evaluate", "maximize", "bind_metric"]


# --------------------------------------------------------------------------- maximize
_STATUS_EARLY = ("budget", "time", "stopped", "interrupted")


def _restart_budget(budget, n, r):
    """Restart ``r``'s share of ``budget`` split evenly over ``n`` restarts (the first
    ones get one more when it does not divide)."""
    if budget is None:
        return None
    base, extra = divmod(int(budget), n)
    return base + (1 if r < extra else 0)


def _run_restart(task, objective, listener=None, progress=None):
    """One restart in this process or a worker: a fresh objective, a seeded generator.

    ``progress(index, objective, state_fn)``, when given, receives the strategy's
    mid-restart states (checkpointed runs); a task may carry ``resume`` = such a saved
    state, from which a resumable strategy continues."""
    import time as _time

    strategy, index, ss, max_evals, deadline, resume = task
    max_seconds = None if deadline is None else max(0.0, deadline - _time.time())
    obj = objective.fresh(max_evals=max_evals, max_seconds=max_seconds)
    obj.listener = listener
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
        any :class:`~dfrank.objective.Objective` (e.g. a ScoringObjective over a Box).
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
        callback runs after each restart, in this process.
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
        same file unless ``checkpoint`` names another. See :mod:`dfrank.checkpoint`.
    **options
        The strategy's hyperparameters (e.g. ``restarts=5``, ``rule="plateau"``).

    Returns
    -------
    Result
        Also when the budget runs out, the callback stops the run or Ctrl-C interrupts it
        (``interrupted=True``): the best point found so far is kept.
    """
    import time

    t_start = time.perf_counter()
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (it receives the intermediate Result), "
                        f"got {callback!r}")
    budget, max_seconds = check_budget(budget, max_seconds, "budget")
    objective = make_objective(data_or_objective, metric, ties)
    if budget is None:
        budget = objective.max_evals
    if max_seconds is None:
        max_seconds = objective.max_seconds
    if strategy is None:
        strategy = BOX_STRATEGY if isinstance(objective.space, Box) else DEFAULT_STRATEGY
    strat = resolve(strategy, **options)
    strat.check(objective)
    if valid is not None:
        if not isinstance(valid, RankingData):
            raise TypeError(f"valid must be a RankingData, got {type(valid).__name__}")
        if not getattr(objective, "is_linear", False):
            raise ValueError("valid= needs a linear ranker objective (data, not a box)")
        if valid.n_features != objective.data.n_features:
            raise ValueError(f"valid has {valid.n_features} features but the training data "
                             f"has {objective.data.n_features}; load both with the same "
                             "n_features")
    n_jobs_eff = effective_n_jobs(n_jobs)
    R = strat.n_restarts
    root = seed_sequence(seed)
    deadline = None if max_seconds is None else time.time() + max_seconds
    n_tasks = R if budget is None else min(R, budget)   # restarts with evaluations to make
    saver, restored, current = None, [], None
    if checkpoint is not None or resume is not None:
        fp = fingerprint(objective, strat, root, budget, R)
        saver = Checkpoint(checkpoint if checkpoint is not None else resume, fp,
                           every=checkpoint_every)
        if resume is not None:
            reader = Checkpoint(resume, fp)
            restored, current = reader.restore()
            if getattr(strat, "resumable", False):
                saver.current = current   # kept until the restart saves anew or ends
    skip = {r.index for r in restored}
    # a restart cut short mid-way continues from its saved state if its strategy can
    partial = current if (current is not None and getattr(strat, "resumable", False)) \
        else None

    def tasks():
        """Restarts made on demand; none is started after the deadline."""
        for r in range(n_tasks):
            if r in skip:
                continue
            if deadline is not None and time.time() >= deadline:
                return
            yield (strat, r, child(root, r), _restart_budget(budget, R, r), deadline,
                   partial if (partial is not None and partial["index"] == r) else None)

    done = sorted(restored, key=lambda r: r.index)
    bar = _progress_bar(progress, n_tasks, len(done), strat.label)
    evals_before = [sum(r.n_evals for r in done)]
    best_done = [max((r.value for r in done), default=-np.inf)]

    def snapshot(current=None):
        rs = done + ([current] if current is not None else [])
        return _result_of(objective, strat, rs, valid, seed,
                          time.perf_counter() - t_start, Result, ties)

    last_valid = {}  # the running restart's best point -> its validation value

    def listener(obj):
        if bar is not None:
            _bar_note(bar, evals_before[0] + obj.n_evals, max(best_done[0], obj.best_value))
        if callback is not None:
            part = _partial(obj)
            key = None if part.point is None else part.point.tobytes()
            part.valid_value = last_valid.get(key)   # evaluated once per best point
            result = snapshot(part)
            if valid is not None and key is not None:
                last_valid.clear()
                last_valid[key] = part.valid_value
            callback(result)

    interrupted = False
    try:
        progress_fn = None
        if saver is not None and getattr(strat, "resumable", False):
            def progress_fn(index, obj, state_fn):
                saver.progress(done, index, obj, state_fn)
        local = functools.partial(_run_restart, listener=listener
                                  if (bar is not None or callback is not None) else None,
                                  progress=progress_fn)
        for res in run_tasks(local if n_jobs_eff == 1 else _run_restart, tasks(), n_jobs,
                             shared=(objective,)):
            done.append(res)
            evals_before[0] += res.n_evals
            best_done[0] = max(best_done[0], res.value)
            if saver is not None and res.status not in ("stopped", "interrupted"):
                saver.finished(res.index)
                saver.write(done)
            if bar is not None:
                bar.update(1)
                _bar_note(bar, evals_before[0], best_done[0])
            if res.status in ("stopped", "interrupted"):
                break
            if callback is not None and n_jobs_eff != 1:
                try:
                    callback(snapshot())
                except StopIteration:
                    break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
        if saver is not None:   # restarts that ended on their own (+ a resumable one's state)
            saver.write([r for r in done if r.status not in ("stopped", "interrupted")],
                        force=True)
    done.sort(key=lambda r: r.index)
    if not any(r.point is not None for r in done):
        if interrupted:
            raise KeyboardInterrupt("interrupted before any restart finished")
        raise NoEvaluationError("no point was evaluated: the budget or time limit is too "
                                f"small for {strat.label} ({n_tasks} restarts)")
    result = snapshot()
    if interrupted:
        result.status = "interrupted"
    if len(done) < n_tasks:
        if result.status not in ("interrupted", "stopped"):
            result.status = "time" if deadline is not None and time.time() >= deadline \
                else "stopped"
        result.message = (f"stopped after {len(done)} of {n_tasks} restarts; "
                          + result.message).rstrip("; ")
    return result


def _partial(obj):
    """A RestartResult for a restart still running (for callbacks)."""
    return RestartResult(index=-1, seed={}, value=float(obj.best_value), point=obj.best_point,
                         n_evals=obj.n_evals, seconds=obj.elapsed, status="running",
                         trace=obj.trace)


def _result_of(objective, strat, restarts, valid, seed, elapsed, Result, ties):
    simplex = isinstance(objective.space, Simplex)
    with_point = [r for r in restarts if r.point is not None]
    if valid is not None:
        for r in with_point:
            if r.valid_value is None:
                r.valid_value = evaluate_linear(objective.space.to_weights(r.point), valid,
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
            value = evaluate_linear(weights, objective.data, objective.metric,
                                    ties=objective.ties)
            valid_value = None if valid is None else evaluate_linear(
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
        normalization={"kind": "query"} if query_level_source(getattr(data, "source", None))
        else None)


def _progress_bar(progress, n_restarts, n_done, label):
    """Restarts done of how many, with tqdm's estimate of the time left; the evaluations and
    the best value so far beside them."""
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=n_restarts, initial=n_done, desc=label, unit="restart", leave=False,
                dynamic_ncols=True)


def _bar_note(bar, n_evals, best):
    bar.set_postfix_str(f"{n_evals} evals, best {best:.4f}", refresh=False)
    bar.update(0)   # redraws when tqdm's refresh interval has passed
