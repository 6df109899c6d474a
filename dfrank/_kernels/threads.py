"""How numba's parallel kernels wait for work: chosen once, before numba starts its pool.

numba runs ``prange`` loops on a pool of threads from a *threading layer* (TBB, OpenMP or
its own work queue), started at the first parallel call and fixed for the process. With
OpenMP (GNU libgomp), idle workers spin for a while before they sleep; on a machine whose
cores other processes also need, a spinning worker takes the core the work needs, and
every parallel call waits a scheduler slice for a worker that lost its core.

dfrank's default (docs/benchmarks.md, "Threads on a busy machine"):

* TBB, when the ``tbb`` package is installed (a dependency of dfrank on x86-64). Its wheel
  puts ``libtbb.so.12`` in the environment's ``lib/``, which the dynamic loader does not
  search in a virtualenv, and numba's ``tbbpool`` extension carries no RPATH: numba would
  fail to load it and fall back to OpenMP without a word. So the library is loaded here,
  from where the wheel's file list says it is, before numba looks for it (the loader then
  finds it by its soname);
* otherwise (no ``tbb``, or a library that does not load) OpenMP with
  ``OMP_WAIT_POLICY=PASSIVE`` (idle workers sleep at once).

Any setting in the user's environment wins: ``NUMBA_THREADING_LAYER`` picks the layer,
and ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` keep OpenMP's wait as the user set it.
"""

import contextlib
import ctypes
import os
import sys

__all__ = ["choose_defaults", "tbb_library", "load_tbb", "numba_threads_here"]

# the file numba's tbbpool links against, by platform (its soname)
_TBB_FILES = {"linux": "libtbb.so.12", "darwin": "libtbb.12.dylib", "win32": "tbb12.dll"}


def tbb_library():
    """The path of the TBB runtime the ``tbb`` package installed, or None."""
    wanted = _TBB_FILES.get(sys.platform)
    if wanted is not None:   # where the wheel puts it in an environment: its lib/
        path = os.path.join(sys.prefix, "lib", wanted)
        if os.path.exists(path) and _has_tbb_wheel():
            return path
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("tbb")
    except PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == wanted:
            path = os.path.normpath(str(dist.locate_file(f)))
            if os.path.exists(path):
                return path
    return None


def _has_tbb_wheel():
    """Whether the tbb wheel's metadata is installed beside this Python (a cheap look at
    site-packages, without importlib.metadata)."""
    import glob
    import sysconfig

    purelib = sysconfig.get_paths()["purelib"]
    return bool(glob.glob(os.path.join(purelib, "tbb-*.dist-info")))


def load_tbb():
    """Load the TBB runtime into the process so that numba's ``tbbpool`` finds it; the
    path loaded, or None where there is none or it does not load."""
    path = tbb_library()
    if path is None:
        return None
    try:
        ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
    except OSError:
        return None
    return path


def choose_defaults(environ=os.environ, load=load_tbb):
    """Make TBB loadable, or set OpenMP's passive wait where numba will fall back to OpenMP
    and the user chose nothing; returns what was done (a dict, empty when nothing was)."""
    layer = environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    if layer in ("omp", "workqueue"):
        return {}
    tbb = load()   # for numba's default and for the layers that may take TBB
    if tbb is not None:
        return {"tbb": tbb}
    if layer not in ("", "default") or "OMP_WAIT_POLICY" in environ \
            or "GOMP_SPINCOUNT" in environ:
        return {}
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return {"OMP_WAIT_POLICY": "PASSIVE"}


def numba_threads_here(n):
    """Run the numba parallel loops of this thread on ``n`` threads. numba keeps the count
    per thread, so only threads that dfrank starts itself call this (the restarts run side
    by side, a serial run's thread): the caller's threads keep theirs, and a count a user
    set (``numba.set_num_threads``, ``NUMBA_NUM_THREADS``) stays as it is; joblib's worker
    processes are capped through joblib's inner thread limits instead, and a Dask worker's
    tasks (:mod:`dfrank.cluster`) run on its own thread count."""
    import numba

    numba.set_num_threads(n)


@contextlib.contextmanager
def numba_threads_within(n):
    """numba's parallel loops of this thread on at most ``n`` threads within the block; the
    thread's count before it restored after (for threads dfrank does not start: a Dask
    worker's)."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)
