"""Which entry point scores a call while numba's cache is cold: the serial twin at once,
the parallel entry point as soon as a background process has compiled it.

A metric family's parallel entry point takes seconds to compile in a background process of
its own, its serial twin about half as long in this process, and both give the same values
bit for bit. So:

* a process with one numba thread (a joblib worker of a run with as many jobs as cores)
  runs the serial twin;
* otherwise the parallel entry point runs when it is loaded in this process or its cache
  index is on disk;
* otherwise the call runs the serial twin, and the first such call of an entry point
  starts ``python -m dfrank._jit.background`` to compile the parallel one into the
  disk cache, using the core this process leaves idle while it compiles; the calls made
  after that process has ended run the parallel entry point. A command that knows its
  metric starts the process before it loads its data (:func:`prefetch`); a call that comes
  when the process should end sooner than the serial twin would compile waits for it.

``DFRANK_BACKGROUND_COMPILE=0`` compiles the parallel entry point in this process
instead, as does the block of :func:`in_process` (``dfrank warmup``, to fill the cache
ahead).
"""

import contextlib
import os
import subprocess
import sys
import time

import numba
import numpy as np

from ..metrics import _drivers
from ..metrics.registry import DEFAULT_TIES, get_metric, tie_code
from .progress import waiting
from .store import in_memory, on_disk

__all__ = ["entry_point", "prefetch", "in_process", "allowed", "spawn", "on_disk",
           "compile_entry"]

ENV = "DFRANK_BACKGROUND_COMPILE"
# on 2 cores, from an empty cache (ndcg, ap): the background process compiling an entry
# point, start to end; its serial twin compiling in this process
PARALLEL_SECONDS = 12.0
SERIAL_SECONDS = 6.5
_READY = "ready"
_helpers = {}  # (code, ties code, features dtype) -> _READY or the compiling process
_switch = {"in_process": False}  # set by in_process()


def entry_point(code, ties_code, dtype):
    """The compiled entry point to call now for this family, tie rule and features dtype."""
    if numba.get_num_threads() == 1:
        return _drivers.driver(code, ties_code, parallel=False)
    state = _state(code, ties_code, dtype)
    if state is not _READY:
        if state.poll() is None and not _worth_waiting(state, code, ties_code):
            return _drivers.driver(code, ties_code, parallel=False)
        # ended; had it failed, the call below compiles in this process
        _helpers[code, ties_code, np.dtype(dtype).str] = _READY
    return _drivers.driver(code, ties_code)


def _worth_waiting(proc, code, ties_code):
    """Whether this call waits for the background process (and returns True once it has
    ended) rather than run the serial twin: only when the twin is not compiled either and
    the process, by the usual compile times, ends sooner than the twin would compile."""
    serial = _drivers.driver(code, ties_code, parallel=False)
    if serial.signatures or on_disk(serial):
        return False
    left = PARALLEL_SECONDS - (time.monotonic() - proc.started)
    if left > SERIAL_SECONDS:
        return False
    try:
        with waiting("a metric's parallel entry point, compiling in a helper process"):
            proc.wait(timeout=2 * SERIAL_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return True


def prefetch(metric, ties=DEFAULT_TIES, dtype=np.float64):
    """Start compiling the parallel entry point of ``metric`` in the background now, if it
    is not cached (a command calls this before it loads its data)."""
    m = get_metric(metric)
    if not m.is_custom and numba.get_num_threads() > 1:
        _state(m.code, tie_code(ties), dtype)


def _state(code, ties_code, dtype):
    """_READY, or the process compiling the parallel entry point (started on first ask)."""
    key = (code, ties_code, np.dtype(dtype).str)
    state = _helpers.get(key)
    if state is None:
        fast = _drivers.driver(code, ties_code)
        if fast.signatures or not allowed() or on_disk(fast):
            state = _helpers[key] = _READY
        else:
            state = _helpers[key] = _start(key) or _READY
    return state



def _start(key):
    code, ties_code, dtype = key
    return spawn("dfrank._jit.background", str(code), str(ties_code), dtype)


def spawn(module, *args):
    """``python -m module args`` as a background compile (:func:`dfrank._jit.helpers.spawn`:
    dfrank's code never from the working directory, ended with this process): silent,
    compiling in its own process only; the process, or None where it cannot start."""
    from .helpers import spawn as start

    return start(module, *args, env=dict(os.environ, DFRANK_QUIET_COMPILE="1", **{ENV: "0"}),
                 detach=True)


def allowed():
    """Whether kernels may compile in background processes now (not under
    ``DFRANK_BACKGROUND_COMPILE=0``, nor inside :func:`in_process`, nor where kernels
    compile in memory: a helper could not cache them)."""
    return (os.environ.get(ENV, "1") != "0" and not _switch["in_process"]
            and in_memory() is None)


@contextlib.contextmanager
def in_process():
    """Within the block, parallel entry points compile in this process, never in the
    background (``dfrank warmup`` fills the cache so)."""
    before = _switch["in_process"]
    _switch["in_process"] = True
    try:
        yield
    finally:
        _switch["in_process"] = before


def compile_entry(code, ties_code, dtype, parallel=True):
    """Compile (or load) the parallel entry point (or its serial twin) on the example
    arguments its module declares (:func:`dfrank.metrics._drivers.example_arguments`);
    returns the example query's value."""
    args = _drivers.example_arguments(code, ties_code, dtype)
    _drivers.driver(code, ties_code, parallel)(*args)
    return args[-1][0, 0]


if __name__ == "__main__":
    compile_entry(int(sys.argv[1]), int(sys.argv[2]), np.dtype(sys.argv[3]))
