"""How numba's parallel kernels wait for work: chosen once, before numba starts its pool.

numba runs ``prange`` loops on a pool of threads from a *threading layer* (TBB, OpenMP or
its own work queue), started at the first parallel call and fixed for the process. With
OpenMP (GNU libgomp), idle workers spin for a while before they sleep; on a machine whose
cores other processes also need, a spinning worker takes the core the work needs, and
every parallel call waits a scheduler slice for a worker that lost its core.

dfrank's default, documented in README ("Threads on a busy machine"):

* TBB, when the ``tbb`` package is installed (a dependency of dfrank on x86-64): numba
  tries it first on its own, and its workers steal work from one another, so a worker
  that lost its core does not hold up the call;
* otherwise OpenMP with ``OMP_WAIT_POLICY=PASSIVE`` (idle workers sleep at once).

Any setting in the user's environment wins: ``NUMBA_THREADING_LAYER`` picks the layer,
and ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` keep OpenMP's wait as the user set it.
"""

import os

__all__ = ["choose_defaults", "has_tbb"]


def has_tbb():
    """Whether the ``tbb`` package (the TBB runtime numba loads) is installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        version("tbb")
    except PackageNotFoundError:
        return False
    return True


def choose_defaults(environ=os.environ):
    """Set OpenMP's passive wait when numba will fall back to OpenMP and the user chose
    nothing; returns what was set (a dict, empty when nothing was)."""
    if environ.get("NUMBA_THREADING_LAYER", "").strip() not in ("", "default"):
        return {}
    if has_tbb():
        return {}
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ:
        return {}
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return {"OMP_WAIT_POLICY": "PASSIVE"}
