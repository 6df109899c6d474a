"""Compile one version of a kernel in a helper process while this one does other work:
the service's one way to compile in the background.

A kernel that takes tens of seconds to compile (a line search's sweep, a metric's parallel
entry point) is often known before it runs: :func:`ahead` starts ``python -m
dfrank._jit.background`` to compile that version into numba's disk cache, on the core this
process leaves idle while it compiles or reads; :func:`ready` says whether a kernel is
loaded or cached, :func:`left` how long its helper should still take (by what this
machine measured, :mod:`.timing`), and :func:`wait_for` waits for the helper (then the
call loads the kernel from the cache). Either way the same kernel runs, so no result
depends on the helper (had it failed, the call compiles the kernel here).

The types go to the helper as JSON on its command line (:func:`describe`; arrays, tuples
and numeric scalars, which is all the kernels take); the helper imports the kernel's own
module and compiles it. A helper ends with this process unless this process exits
normally, when it goes on to fill the cache (:func:`dfrank._jit.helpers.spawn`).

Nothing starts when the kernel is loaded or cached already, with one numba thread, or
where :func:`allowed` says no (``DFRANK_BACKGROUND_COMPILE=0``, the block of
:func:`in_process`, kernels compiled in memory).
"""

import contextlib
import importlib
import json
import os
import subprocess
import sys
import time

import numba
import numpy as np
from numba.core import types as nbt

from . import timing
from .progress import waiting
from .store import in_memory, on_disk

__all__ = ["ahead", "wait_for", "ready", "left", "allowed", "in_process", "describe",
           "numba_type", "ENV"]

ENV = "DFRANK_BACKGROUND_COMPILE"
WAIT_SECONDS = 600.0  # the longest wait for a helper, then the call compiles here
_procs = {}  # kernel -> the helper compiling it, or None once settled
_switch = {"in_process": False}  # set by in_process()


def allowed():
    """Whether kernels may compile in helper processes now (not under
    ``DFRANK_BACKGROUND_COMPILE=0``, nor inside :func:`in_process`, nor where kernels
    compile in memory: a helper could not cache them)."""
    return (os.environ.get(ENV, "1") != "0" and not _switch["in_process"]
            and in_memory() is None)


@contextlib.contextmanager
def in_process():
    """Within the block, kernels compile in this process, never in a helper (``dfrank
    warmup`` fills the cache so)."""
    before = _switch["in_process"]
    _switch["in_process"] = True
    try:
        yield
    finally:
        _switch["in_process"] = before


def ready(kernel):
    """Whether ``kernel`` runs without compiling: loaded in this process, or its cache
    index on disk."""
    return bool(kernel.signatures) or on_disk(kernel)


def ahead(kernel, types):
    """Start compiling ``kernel`` (a cached dispatcher of a module's top level) for the
    argument types ``types`` (a tuple, or a function giving it) in a helper process, unless
    it is ready, a helper compiles it already, or it is not worth it (one numba thread,
    not :func:`allowed`); returns the helper, or None."""
    if kernel in _procs:
        return _procs[kernel]
    _procs[kernel] = None
    if allowed() and numba.get_num_threads() > 1 and not ready(kernel):
        from .helpers import spawn

        f = kernel.py_func
        found = types() if callable(types) else types
        _procs[kernel] = spawn(__name__, json.dumps(
            [f.__module__, f.__name__, [describe(t) for t in found]]),
            env=dict(os.environ, DFRANK_QUIET_COMPILE="1", **{ENV: "0"}), detach=True)
    return _procs[kernel]


def left(kernel):
    """Seconds the helper compiling ``kernel`` should still take (by what this machine
    measured), or None when no helper compiles it (none started, or it has ended)."""
    proc = _procs.get(kernel)
    if proc is None or proc.poll() is not None:
        return None
    return timing.estimate(kernel) - (time.monotonic() - proc.started)


def wait_for(kernel, meanwhile=None, timeout=WAIT_SECONDS):
    """Wait for the helper compiling ``kernel``, if one runs (then the call loads it);
    whether it ended within ``timeout`` seconds (or none ran). ``meanwhile``: a kernel that
    runs after it and a function giving its argument types; if the helper is still
    running, that kernel compiles here first, unless it is ready."""
    proc = _procs.get(kernel)
    if proc is None:
        return True
    if meanwhile is not None and proc.poll() is None:
        other, types = meanwhile
        if not ready(other):
            other.compile(types())
    name = f"{kernel.py_func.__module__}.{kernel.py_func.__name__}"
    with waiting(f"{name}, compiling in a helper process"):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
    _procs[kernel] = None
    return True


def describe(t):
    """A numba argument type as JSON-able data (:func:`numba_type` makes it again)."""
    if isinstance(t, nbt.Array):
        return {"array": str(np.dtype(t.dtype.name)), "ndim": t.ndim, "layout": t.layout,
                "readonly": not t.mutable, "aligned": t.aligned}
    if isinstance(t, nbt.BaseTuple):
        return {"tuple": [describe(x) for x in t.types]}
    if isinstance(t, (nbt.Integer, nbt.Float, nbt.Boolean)):
        return {"scalar": str(t)}
    raise TypeError(f"no description of the numba type {t}")


def numba_type(d):
    """The numba type :func:`describe` gave ``d`` for."""
    if "array" in d:
        return nbt.Array(numba.from_dtype(np.dtype(d["array"])), d["ndim"], d["layout"],
                         readonly=d["readonly"], aligned=d["aligned"])
    if "tuple" in d:
        return nbt.BaseTuple.from_types([numba_type(x) for x in d["tuple"]])
    t = getattr(nbt, d["scalar"], None)
    if not isinstance(t, (nbt.Integer, nbt.Float, nbt.Boolean)):
        raise ValueError(f"not a numeric scalar type: {d['scalar']!r}")
    return t


def _compile(spec):
    """The helper: compile the kernel ``spec`` names for its types."""
    module, name, types = json.loads(spec)
    kernel = getattr(importlib.import_module(module), name)
    kernel.compile(tuple(numba_type(d) for d in types))


if __name__ == "__main__":
    _compile(sys.argv[1])
