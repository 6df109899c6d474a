"""Compile a line-search kernel in a background process while this one compiles the
kernels that run before it.

A new install's first line search compiles, one after the other, the candidates' kernels
and the metric family's sweep, each for tens of seconds. The sweep's argument types are
known before the candidates run (the same call's arguments, its buffers in a throwaway
scratch), so :func:`ahead` starts ``python -m dfrank._jit.ahead`` to compile
the sweep into numba's disk cache on the core this process leaves idle while it compiles;
:func:`wait_for`, just before the sweep's first call, compiles the kernel that runs after
the sweep (the profile's assembly) here if that process has not ended, then waits for it;
the call then loads the kernel from the cache. Either way the same kernel runs, so no result
depends on the background process (had it failed, the call compiles the kernel here).

The types go to the process as JSON on its command line (:func:`describe`; arrays,
tuples and numeric scalars, which is all the kernels take).

Nothing starts when the kernel is loaded or cached already, with one numba thread, or
where :func:`.background.allowed` says no (``DFRANK_BACKGROUND_COMPILE=0``,
``dfrank warmup``).
"""

import importlib
import json
import subprocess
import sys

import numba
import numpy as np
from numba.core import types as nbt

from .background import allowed, spawn
from .progress import waiting
from .store import on_disk

__all__ = ["ahead", "wait_for", "describe", "numba_type"]

WAIT_SECONDS = 600.0  # the longest wait for the background process, then compile here
_procs = {}  # kernel -> the process compiling it, or None once settled


def ahead(kernel, types):
    """Start compiling ``kernel`` (a cached numba dispatcher of a module's top level) for
    the argument types ``types()`` in a background process, unless it is loaded, cached
    or not worth it; once per kernel and process."""
    if kernel in _procs:
        return
    _procs[kernel] = None
    if allowed() and numba.get_num_threads() > 1 and not kernel.signatures \
            and not on_disk(kernel):
        f = kernel.py_func
        _procs[kernel] = spawn(__name__, json.dumps(
            [f.__module__, f.__name__, [describe(t) for t in types()]]))


def wait_for(kernel, meanwhile=None):
    """Wait for the process compiling ``kernel``, if one runs (then the call loads it).
    ``meanwhile``: a kernel that runs after it and a function giving its argument types;
    if the process is still running, that kernel compiles here first, unless it is
    loaded or cached."""
    proc = _procs.get(kernel)
    if proc is None:
        return
    _procs[kernel] = None
    if meanwhile is not None and proc.poll() is None:
        other, types = meanwhile
        if not other.signatures and not on_disk(other):
            other.compile(types())
    name = f"{kernel.py_func.__module__}.{kernel.py_func.__name__}"
    with waiting(f"{name}, compiling in a helper process"):
        try:
            proc.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()


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
    """The background process: compile the kernel ``spec`` names for its types."""
    module, name, types = json.loads(spec)
    kernel = getattr(importlib.import_module(module), name)
    kernel.compile(tuple(numba_type(d) for d in types))


if __name__ == "__main__":
    _compile(sys.argv[1])
