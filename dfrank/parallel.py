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

__all__ = ["seed_sequence", "spawn", "run_tasks", "effective_n_jobs"]


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


def spawn(seed, n):
    """``n`` independent child seed sequences of ``seed``."""
    return seed_sequence(seed).spawn(n)


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


def run_tasks(fn, tasks, n_jobs):
    """Yield ``fn(task)`` for each task, in task order; in this process when n_jobs == 1
    (so callbacks and Ctrl-C reach the caller), else through joblib."""
    if effective_n_jobs(n_jobs) == 1:
        for t in tasks:
            yield fn(t)
        return
    yield from Parallel(n_jobs=n_jobs, return_as="generator")(delayed(fn)(t) for t in tasks)
