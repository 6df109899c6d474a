"""The strategy conformance suite, shipped so plugin authors can run it on their own.

    from dfrank.testing import check_strategy
    check_strategy("my_strategy")          # raises AssertionError on the first failure

Each check is also a function of its own (``check_on_simplex``, ``check_reevaluation``,
``check_same_seed``, ``check_budget_monotone``, ``check_beats_random``,
``check_n_jobs_invariant``). The data is a synthetic set with a planted linear model.
"""

import numpy as np

from .driver.api import maximize
from .data.ranking import RankingData
from .metrics.registry import DEFAULT_METRIC
from .objectives.objective import LinearObjective

__all__ = ["planted_data", "check_strategy", "check_on_simplex", "check_reevaluation",
           "check_same_seed", "check_budget_monotone", "check_beats_random",
           "check_n_jobs_invariant"]


def planted_data(n_queries=40, docs_per_query=20, n_features=6, noise=0.5, seed=0):
    """Queries whose graded labels (0-3) come from a hidden linear model plus noise."""
    rng = np.random.default_rng(seed)
    n = n_queries * docs_per_query
    X = rng.normal(size=(n, n_features))
    w = rng.normal(size=n_features)
    s = X @ w + noise * rng.normal(size=n)
    y = np.digitize(s, np.quantile(s, [0.6, 0.85, 0.95])).astype(float)
    return RankingData.from_arrays(X, y, np.repeat(np.arange(n_queries), docs_per_query))


def _fail(msg):
    raise AssertionError(msg)


def _run(strategy, data, metric, budget, seed, n_jobs=1, **options):
    return maximize(data, metric, strategy, seed=seed, budget=budget, n_jobs=n_jobs,
                    **options)


def check_on_simplex(strategy, data=None, metric=DEFAULT_METRIC, budget=200, **options):
    data = data if data is not None else planted_data()
    r = _run(strategy, data, metric, budget, 0, **options)
    lam = np.asarray(r.point)
    if lam.shape != (data.n_features + 1,) or np.any(lam < -1e-12) or \
            abs(lam.sum() - 1) > 1e-9:
        _fail(f"{strategy}: result point is not on the simplex: {lam}")
    return r


def check_reevaluation(strategy, data=None, metric=DEFAULT_METRIC, budget=200, **options):
    data = data if data is not None else planted_data()
    r = _run(strategy, data, metric, budget, 0, **options)
    fresh = LinearObjective(data, metric)(r.point)
    if abs(fresh - r.value) > 1e-9:
        _fail(f"{strategy}: value {r.value} but re-evaluating the point gives {fresh}")
    w = r.ranker.evaluate(data, metric)
    if abs(w - r.value) > 1e-9:
        _fail(f"{strategy}: the ranker's weights score {w}, the result says {r.value}")
    return r


def check_same_seed(strategy, data=None, metric=DEFAULT_METRIC, budget=200, **options):
    data = data if data is not None else planted_data()
    a = _run(strategy, data, metric, budget, 7, **options)
    b = _run(strategy, data, metric, budget, 7, **options)
    if a.value != b.value or not np.array_equal(a.point, b.point) or a.n_evals != b.n_evals:
        _fail(f"{strategy}: two runs with seed 7 differ ({a.value} vs {b.value})")


def check_budget_monotone(strategy, data=None, metric=DEFAULT_METRIC, budgets=(60, 150, 400),
                          **options):
    data = data if data is not None else planted_data()
    values = [_run(strategy, data, metric, b, 3, **options).value for b in budgets]
    for (b1, v1), (b2, v2) in zip(zip(budgets, values), zip(budgets[1:], values[1:])):
        if v2 < v1 - 1e-12:
            _fail(f"{strategy}: budget {b2} gave {v2} < {v1} with budget {b1} (seed 3)")
    return values


def check_beats_random(strategy, data=None, metric=DEFAULT_METRIC, budget=400, seeds=(0, 1, 2),
                       **options):
    """Mean over seeds at equal budget: the strategy must not lose to random search."""
    data = data if data is not None else planted_data(n_features=8)
    ours = np.mean([_run(strategy, data, metric, budget, s, **options).value for s in seeds])
    rnd = np.mean([_run("random", data, metric, budget, s).value for s in seeds])
    if ours < rnd - 1e-12:
        _fail(f"{strategy}: mean {ours:.4f} is below random search's {rnd:.4f} at a budget "
              f"of {budget}")
    return ours, rnd


def check_n_jobs_invariant(strategy, data=None, metric=DEFAULT_METRIC, budget=120,
                           n_jobs=(1, 2, -1), **options):
    """The same result for any ``n_jobs``, and with n_jobs = 1 also when the restarts run
    one after another on one thread (a serial run may run them side by side in threads:
    see :func:`dfrank.driver.parallel.run_in_threads`)."""
    data = data if data is not None else planted_data()
    runs = [_run(strategy, data, metric, budget, 11, n_jobs=j, **options) for j in n_jobs]
    runs.append(one_thread(_run, strategy, data, metric, budget, 11, **options))
    for j, r in zip(list(n_jobs[1:]) + ["1 on one thread"], runs[1:]):
        if r.value != runs[0].value or not np.array_equal(r.point, runs[0].point):
            _fail(f"{strategy}: n_jobs={j} gave {r.value}, n_jobs={n_jobs[0]} gave "
                  f"{runs[0].value} with the same seed")


def one_thread(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a new thread whose numba kernels run on one thread (so a
    serial run's restarts run one after another); its result, or what it raised."""
    import threading

    from .driver.parallel import numba_threads_here

    out = []

    def call():
        numba_threads_here(1)
        try:
            out.append((True, fn(*args, **kwargs)))
        except BaseException as e:
            out.append((False, e))

    t = threading.Thread(target=call)
    t.start()
    t.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


def check_strategy(strategy, n_jobs=False, **options):
    """Run every conformance check on a strategy (name, class or instance)."""
    check_on_simplex(strategy, **options)
    check_reevaluation(strategy, **options)
    check_same_seed(strategy, **options)
    check_budget_monotone(strategy, **options)
    check_beats_random(strategy, **options)
    if n_jobs:
        check_n_jobs_invariant(strategy, **options)
