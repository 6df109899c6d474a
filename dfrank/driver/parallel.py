"""Seeds and parallel restarts.

One ``numpy.random.SeedSequence(seed)`` spawns a child per restart, so each restart's
random stream depends only on the seed and its index: the result is the same for any
``n_jobs`` and any restart can be replayed alone. Restarts run in joblib workers
(processes by default); joblib's loky backend gives each worker NUMBA_NUM_THREADS =
cores // n_jobs, so numba threads and workers do not oversubscribe the cores, and dfrank
never changes numba's or numpy's global thread settings. Inside
``joblib.parallel_config(backend="dask")`` the same calls run on a Dask cluster.
"""

import numpy as np
from joblib import Parallel, delayed

from .._kernels.threads import numba_threads_here
from ..data.ranking import RankingData
from ..objectives.objective import Objective

__all__ = ["seed_sequence", "child", "run_tasks", "run_in_threads", "effective_n_jobs",
           "one_thread_each"]


def seed_sequence(seed):
    """A SeedSequence from an int, None, a SeedSequence or a Generator."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(2**63)))
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)
                        and seed >= 0):
        return np.random.SeedSequence(seed)
    raise TypeError(f"seed must be a non-negative int, None, a numpy Generator or "
                    f"SeedSequence; got {seed!r}")


def child(root, i):
    """The ``i``-th child of a fresh ``root`` SeedSequence, the same as numpy's
    ``root.spawn(i + 1)[i]`` but made on demand: a run with a million restarts under a
    time limit should not spend seconds spawning seeds it never uses."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (i,),
                                  pool_size=root.pool_size)


def describe_seed(ss):
    """JSON-able description of a child SeedSequence, enough to rebuild it."""
    return {"entropy": int(ss.entropy) if ss.entropy is not None else None,
            "spawn_key": [int(k) for k in ss.spawn_key]}


def effective_n_jobs(n_jobs):
    from joblib import effective_n_jobs as eff

    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a nonzero integer (-1 = all cores), got {n_jobs!r}")
    return eff(int(n_jobs))


def one_thread_each():
    """A context in which joblib's worker processes run numba (and BLAS, OpenMP) on one
    thread each: joblib's inner thread limit, set in each worker's environment before
    numba starts, for runs that must not share cores (time budgets, timings). Only
    joblib's default process backend is configured; a backend the user chose (Dask, or
    loky with its own inner limit) is left as it is."""
    import contextlib

    from joblib import parallel_config
    from joblib._parallel_backends import LokyBackend
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    if isinstance(backend, LokyBackend) and backend.inner_max_num_threads is None:
        return parallel_config(backend="loky", inner_max_num_threads=1)
    return contextlib.nullcontext()


def run_tasks(fn, tasks, n_jobs, shared=()):
    """Yield ``fn(task, *shared)`` for each task, in task order; in this process when
    n_jobs == 1 (so callbacks and Ctrl-C reach the caller), else through joblib.

    ``shared`` holds the large objects every task needs (the objective with its data).
    They are separate arguments, not parts of the task tuples, so that joblib's dask
    backend sends each of them to the cluster once per call (it scatters arguments that
    dask's ``sizeof`` finds large; :func:`_teach_dask_sizes` tells it their real size)
    instead of with every task."""
    if effective_n_jobs(n_jobs) == 1:
        for t in tasks:
            yield fn(t, *shared)
        return
    _teach_dask_sizes()
    yield from Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(fn)(t, *shared) for t in tasks)


def run_in_threads(fn, tasks, workers, threads, shared=()):
    """Yield ``fn(task, *shared, cancel=event)`` for each task, in task order, from
    ``workers`` threads of this process that share ``threads`` numba threads (worker k
    runs numba's parallel loops on ``threads // workers`` of them, one more while k <
    ``threads % workers``; numba's thread count is per thread: nothing global changes).

    Whole restarts side by side: none waits for another, so a thread that loses its core
    to another process delays only its own restart, where threads that share each line
    search's loops wait for each other at every loop's end. The tasks are taken from
    ``tasks`` one at a time as threads come free (a deadline there still holds). Ctrl-C
    sets ``event``, which ``fn`` must watch (an objective's ``cancel``): the running
    tasks end, interrupted, and every finished one is still yielded."""
    import threading

    source = iter(tasks)
    take = threading.Lock()
    ready = threading.Condition()
    results = {}
    cancel = threading.Event()
    taken = [0]   # tasks taken so far: the next one's index
    ended = [0]   # workers that ended

    def work(k):
        numba_threads_here(max(1, threads // workers + (k < threads % workers)))
        try:
            while not cancel.is_set():
                with take:
                    i = taken[0]
                    try:
                        task = next(source)
                    except StopIteration:
                        return
                    except BaseException as e:  # the tasks' own generator failed
                        with ready:
                            results[i] = _Raised(e)
                        return
                    taken[0] += 1
                try:
                    out = fn(task, *shared, cancel=cancel)
                except BaseException as e:  # raised in the caller's thread
                    out = _Raised(e)
                with ready:
                    results[i] = out
                    ready.notify_all()
        finally:
            with ready:
                ended[0] += 1
                ready.notify_all()

    pool = [threading.Thread(target=work, args=(k,), name=f"dfrank-restarts-{k}",
                             daemon=True)
            for k in range(workers)]
    for t in pool:
        t.start()
    nxt = 0
    try:
        while True:
            with ready:
                while nxt not in results and ended[0] < workers:
                    ready.wait(0.25)
                out = results.pop(nxt, None)
            if out is None:
                return
            nxt += 1
            if isinstance(out, _Raised):
                raise out.error
            yield out
    except KeyboardInterrupt:
        cancel.set()
        for t in pool:
            t.join()
        for i in sorted(results):
            if isinstance(results[i], _Raised):
                continue
            yield results[i]
    finally:
        cancel.set()
        for t in pool:
            t.join()


class _Raised:
    """An exception a task raised in a worker thread, carried to the caller."""

    def __init__(self, error):
        self.error = error


def gather(results, total, desc, progress=False, each=None, stop=None):
    """The runs a generator yields as they finish, in a list: a progress bar of ``total``
    when asked, ``each(run)`` on every one (to save it at once). Ctrl-C ends the gathering
    with the runs already finished (with none, it is raised); with ``stop="raise"`` it is
    raised after them, so that a caller that saves each run also stops."""
    bar = None
    if progress and total:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="run")
    out = []
    try:
        for run in results:
            out.append(run)
            if each is not None:
                each(run)
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        if not out or stop == "raise":
            raise
    finally:
        if bar is not None:
            bar.close()
    return out


def nbytes_of(obj, _depth=0):
    """Bytes held in numpy arrays by ``obj`` and its attributes (two levels deep): the
    size that matters when it is shipped to another process."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if _depth > 2:
        return 0
    if isinstance(obj, dict):
        values = obj.values()
    elif isinstance(obj, (list, tuple)):
        values = obj
    else:
        values = list(getattr(obj, "__dict__", {}).values())
        values += [getattr(obj, k, None) for k in getattr(type(obj), "__slots__", ())]
    return sum(nbytes_of(v, _depth + 1) for v in values)


_taught = False


def _teach_dask_sizes():
    """Register dfrank's data-carrying classes with dask's ``sizeof`` (when dask is in
    use), which otherwise sees a few dozen bytes and would ship them with every task."""
    global _taught
    import sys

    if _taught or "dask" not in sys.modules:
        return
    from dask.sizeof import sizeof

    for cls in (RankingData, Objective):
        sizeof.register(cls)(lambda obj: max(nbytes_of(obj), 64))
    _taught = True
