"""Compile a line-search kernel in a background process while this one compiles the
kernels that run before it.

A new install's first line search compiles, one after the other, the candidates' kernels
and the metric family's sweep, each for tens of seconds. The sweep's argument types are
known before the candidates run (the same call's arguments, its buffers in a throwaway
scratch), so :func:`ahead` starts ``python -m dfrank.linesearch.compile_ahead`` to compile the
sweep into numba's disk cache on the core this process leaves idle while it compiles, and
:func:`wait_for`, just before the sweep's first call, compiles the kernel that runs after
the sweep (the profile's assembly) here if that process has not ended, then waits for it;
the call then loads the kernel from the cache. Either way the same kernel runs, so no result
depends on the background process (had it failed, the call compiles the kernel here).

Nothing starts when the kernel is loaded or cached already, with one numba thread, or
where :func:`dfrank.metrics._background.allowed` says no (``DFRANK_BACKGROUND_COMPILE=0``,
``dfrank warmup``).
"""

import importlib
import os
import pickle
import subprocess
import sys
import tempfile

import numba

from ..metrics._background import ENV, _on_disk, allowed

__all__ = ["ahead", "wait_for"]

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
            and not _on_disk(kernel):
        _procs[kernel] = _start(kernel, types())


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
        if not other.signatures and not _on_disk(other):
            other.compile(types())
    try:
        proc.wait(timeout=WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()


def _start(kernel, types):
    f = kernel.py_func
    fd, path = tempfile.mkstemp(prefix="dfrank-", suffix=".types")
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump((f.__module__, f.__name__, types), fh)
        return subprocess.Popen(
            [sys.executable, "-m", __name__, path],
            env=dict(os.environ, DFRANK_QUIET_COMPILE="1", **{ENV: "0"}),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
    except (OSError, pickle.PicklingError):
        os.unlink(path)
        return None


def _compile(path):
    """The background process: compile the kernel a file names for its types."""
    try:
        with open(path, "rb") as fh:
            module, name, types = pickle.load(fh)
    finally:
        os.unlink(path)
    getattr(importlib.import_module(module), name).compile(types)


if __name__ == "__main__":
    _compile(sys.argv[1])
