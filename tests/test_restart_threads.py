"""A serial run's restarts side by side in threads of this process (dfrank.driver.parallel.
run_in_threads): the same result as one after another, Ctrl-C and errors reach the
caller, and the cases that must stay one after another do."""

import _thread
import signal
import threading
import time

import numba
import numpy as np
import pytest

import dfrank
from dfrank import testing
from dfrank.driver.api import _restart_threads
from dfrank.objectives.objective import LinearObjective
from dfrank.driver.parallel import run_in_threads
from dfrank.registry import Strategy, resolve

needs_two = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                               reason="numba has one thread here: restarts run serially")


@pytest.fixture(scope="module")
def data():
    return testing.planted_data(n_queries=30, docs_per_query=25, n_features=8, seed=3)


def _same(a, b):
    assert a.value == b.value and np.array_equal(a.point, b.point)
    assert [(r.index, r.value, r.n_evals, r.status) for r in a.restarts] == \
        [(r.index, r.value, r.n_evals, r.status) for r in b.restarts]
    assert [list(r.trace["values"]) for r in a.restarts] == \
        [list(r.trace["values"]) for r in b.restarts]
    assert np.array_equal(a.trace["values"], b.trace["values"])


@needs_two
@pytest.mark.parametrize("strategy, options", [
    ("ca", {"restarts": 5}), ("ca", {"restarts": 3, "rule": "best", "metric": "map"}),
    ("fdsa", {"restarts": 4}), ("ca", {"restarts": 4, "budget": 150})])
def test_restarts_in_threads_give_what_one_after_another_gives(data, strategy, options):
    options = dict(options)
    metric = options.pop("metric", "ndcg@10")
    obj = LinearObjective(data, metric)
    strat = resolve(strategy, **{k: v for k, v in options.items() if k != "budget"})
    assert _restart_threads(obj, strat, strat.n_restarts, 1, False) is not None
    threads = dfrank.maximize(data, metric, strategy, seed=7, **options)
    serial = testing.one_thread(dfrank.maximize, data, metric, strategy, seed=7, **options)
    _same(threads, serial)


@needs_two
def test_which_runs_take_threads(data):
    obj = LinearObjective(data, "ndcg@10")
    ca = resolve("ca", restarts=5)
    n = numba.get_num_threads()
    assert _restart_threads(obj, ca, 5, 1, False) == (min(n, 5), n)
    assert _restart_threads(obj, ca, 1, 1, False) is None         # one restart
    assert _restart_threads(obj, ca, 5, 2, False) is None         # joblib workers
    assert _restart_threads(obj, ca, 5, 1, True) is None          # a callback, a checkpoint
    assert _restart_threads(obj, resolve("es"), 5, 1, False) is None  # Python-heavy runs
    assert testing.one_thread(_restart_threads, obj, ca, 5, 1, False) is None
    box = dfrank.ScoringObjective(lambda x: np.zeros(len(data.y)), data,
                                  dfrank.Box([0.0], [1.0]))
    assert _restart_threads(box, ca, 5, 1, False) is None         # a user's function
    obj.recorder = lambda points, values: None
    assert _restart_threads(obj, ca, 5, 1, False) is None         # every point, in order


@needs_two
def test_ctrl_c_keeps_the_restarts_finished_and_the_best_so_far():
    data = testing.planted_data(n_queries=200, docs_per_query=40, n_features=20, seed=1)
    dfrank.maximize(data, "ndcg@10", "ca", restarts=2, max_sweeps=1)   # kernels warm
    # Ctrl-C as from a terminal (a background job's shell ignores SIGINT, and then
    # interrupt_main does nothing)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    t = time.perf_counter()
    try:
        res = dfrank.maximize(data, "ndcg@10", "ca", restarts=400, seed=0)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert time.perf_counter() - t < 30
    assert res.status == "interrupted"
    assert 0 < len(res.restarts) < 400
    assert res.point is not None and res.value == max(r.value for r in res.restarts
                                                      if r.point is not None)
    assert res.value == pytest.approx(LinearObjective(data, "ndcg@10")(res.point), abs=1e-12)


class _Fails(Strategy):
    name = "fails-in-restart-2"
    concurrent_restarts = True
    default_restarts = 4

    def __init__(self, *, restarts=4):
        self.restarts = restarts

    def run(self, objective, rng, *, restart=0):
        objective(objective.space.center())
        if restart == 2:
            raise ValueError("restart 2 failed")
        return {}


@needs_two
def test_an_error_in_a_restart_reaches_the_caller(data):
    with pytest.raises(ValueError, match="restart 2 failed"):
        dfrank.maximize(data, "ndcg@10", _Fails())


def test_tasks_yield_in_order_and_a_deadline_stops_new_ones():
    def slow(task, cancel=None):
        time.sleep(0.05 * (task % 3))
        return task

    assert list(run_in_threads(slow, range(9), 3, 1)) == list(range(9))
    deadline = time.time() + 0.2
    started = []

    def tasks():
        for i in range(100):
            if i and time.time() >= deadline:
                return
            started.append(i)
            yield i

    got = list(run_in_threads(lambda t, cancel=None: time.sleep(0.05) or t, tasks(), 2, 1))
    assert got == started and 2 <= len(got) < 30


def test_a_failing_task_source_is_raised_not_cut_short():
    def tasks():
        yield 0
        yield 1
        raise RuntimeError("no more tasks")

    got = []
    with pytest.raises(RuntimeError, match="no more tasks"):
        for x in run_in_threads(lambda t, cancel=None: t, tasks(), 2, 2):
            got.append(x)
    assert got == [0, 1]


def test_the_threads_dfrank_starts_set_their_own_numba_count_only():
    """Library code setting numba's thread count would override a user's (STYLE rule 7):
    only the threads dfrank starts set theirs (numba keeps the count per thread), and the
    calling thread's count, here one the user set, is left as it was."""
    from dfrank.driver.parallel import run_in_threads

    before = numba.get_num_threads()
    numba.set_num_threads(1)   # the user's own setting
    try:
        seen = list(run_in_threads(lambda task, cancel: numba.get_num_threads(), range(4),
                                   2, 2))
        assert seen == [1, 1, 1, 1] and numba.get_num_threads() == 1
        assert testing.one_thread(numba.get_num_threads) == 1
        numba.set_num_threads(before)
        if before > 1:
            seen = list(run_in_threads(lambda task, cancel: numba.get_num_threads(),
                                       range(4), 2, 2))
            assert seen == [1, 1, 1, 1] and numba.get_num_threads() == before
    finally:
        numba.set_num_threads(before)
