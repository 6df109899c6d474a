"""Tell the user when numba compiles for long, and how it goes.

The install compiles the kernels of the first commands (:mod:`.build`, :mod:`.pool`);
anything else compiles on its first use (cached on disk afterwards), which takes seconds
to tens of seconds and would otherwise look like a hang. A listener on numba's compile
events of dfrank's own kernels (not other libraries') starts a timer when a compilation
begins; if it is still compiling after ``DELAY`` seconds, a line goes to stderr: the first
in the process says why it compiles (the install's kernels do not fit this numba, Python or
CPU, or this kernel is not one of them) and how many of dfrank's kernels are not compiled
yet, and names the kernel compiling; a later compile names its kernel. Then, every
``EVERY`` seconds while it compiles, a progress line: the time so far, the kernels done,
the one compiling now with the time it took when it last compiled here (:mod:`.timing`:
the seconds of every compile are kept beside the cache). Compiles run off the main thread
(:func:`dfrank._jit.store.off_main_thread`), so Ctrl-C stops the command at once; nothing
half-written is cached.

A wait for a helper process compiling a kernel (:func:`waiting`) is said and shown the
same way, and :func:`seconds` counts both, so that a run can print how much of its time
was compiling.

``DFRANK_QUIET_COMPILE=1`` silences it; ``DFRANK_DEBUG_COMPILE=1`` names every kernel
compiled, with its argument types (a kernel compiled at every run means a signature the
cache never sees, or a dispatcher rebuilt without its cache).
"""

import contextlib
import os
import sys
import threading
import time

from . import timing
from .store import made_here

__all__ = ["install", "quiet", "waiting", "seconds", "DELAY", "EVERY"]

DELAY = 2.0
EVERY = 10.0
_state = {"installed": False, "depth": 0, "timer": None, "said": False, "done": 0,
          "now": None, "since": None, "began": None, "seconds": 0.0}
_lock = threading.Lock()



def _uncached():
    """(not compiled, all): dfrank's cached kernels defined so far (:data:`.store.KERNELS`;
    those inlined into their callers left out), and how many have no cache index on disk
    yet."""
    from .store import KERNELS, on_disk

    kernels = [k for k in list(KERNELS) if k.targetoptions.get("inline") != "always"]
    return sum(not on_disk(k) for k in kernels), len(kernels)


def _first_line():
    """Why this process compiles, for the first line: what it claims holds where it is
    said (kernels compiled in memory are neither cached nor helped by a warm-up)."""
    from .manifest import mismatch
    from .store import in_memory

    if in_memory():
        return ("dfrank: compiling numba kernels in memory, as in every process here "
                f"({in_memory()}; set NUMBA_CACHE_DIR to a writable folder to keep them)")
    why = mismatch()
    missing, total = _uncached()
    left = f"{missing} of dfrank's {total} kernels loaded so far are not compiled yet"
    if why:
        return (f"dfrank: compiling numba kernels: the install's compiled kernels do not "
                f"serve here ({why}); each compiles once, on first use, and is cached "
                f"({left}; 'dfrank warmup' compiles them all ahead)")
    return (f"dfrank: compiling numba kernels that the install did not (once: they are "
            f"cached on disk; {left}; 'dfrank warmup' compiles them all ahead)")


def _say():
    with _lock:
        if _state["depth"] == 0 or _state.get("quiet"):
            return
        first = not _state["said"]
        _state["said"] = True
        now, done, began = _state["now"], _state["done"], _state["began"]
    if first:
        line = f"{_first_line()}; now {now}"
    else:
        kernel, types = _state.get("kernel"), _state.get("types")
        usual = timing.measured(kernel, types) if kernel is not None else None
        line = (f"dfrank: compiling: {time.monotonic() - began:.0f} s, {done} kernels "
                f"done, now {now}" + (f" (about {usual:.0f} s when it last compiled here)"
                                      if usual else ""))
    print(line, file=sys.stderr, flush=True)
    _arm(EVERY)


def _arm(delay):
    with _lock:
        if _state["timer"] is not None:
            _state["timer"].cancel()
        t = threading.Timer(delay, _say)
        t.daemon = True
        _state["timer"] = t
        t.start()


def quiet(flag=True):
    """Silence (or not) the messages in this process (the command line's --quiet)."""
    _state["quiet"] = bool(flag)


def _begin(name, kernel=None, types=None):
    """A compile (or a wait for one) of ``name`` (``kernel`` for ``types``) begins in
    this process."""
    with _lock:
        _state["depth"] += 1
        if _state["depth"] == 1:
            _state["now"], _state["kernel"], _state["types"] = name, kernel, types
            _state["began"] = time.monotonic()
            if _state["since"] is None:
                _state["since"] = _state["began"]
            start = _state["timer"] is None and not _state.get("quiet") and \
                not os.environ.get("DFRANK_QUIET_COMPILE")
        else:
            start = False
    if start:
        _arm(DELAY)


def _end():
    with _lock:
        _state["depth"] -= 1
        if _state["depth"] == 0:
            _state["done"] += 1
            _state["seconds"] += time.monotonic() - _state["began"]
            if _state["timer"] is not None:
                _state["timer"].cancel()
                _state["timer"] = None


def seconds():
    """Seconds this process has spent compiling dfrank's kernels (or waiting for a helper
    process compiling them) so far; a run prints the part that fell within it."""
    with _lock:
        extra = time.monotonic() - _state["began"] if _state["depth"] else 0.0
        return _state["seconds"] + extra


@contextlib.contextmanager
def waiting(what):
    """Within the block this process waits for ``what`` (a kernel compiling in a helper
    process): said and shown as a compile is."""
    _begin(what)
    try:
        yield
    finally:
        _end()


def install():
    """Register the listener on numba's compile events of dfrank's kernels (idempotent)."""
    if _state["installed"]:
        return
    from numba.core import event

    def ours(ev):
        d = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        f = getattr(d, "py_func", None)
        mod = getattr(f, "__module__", "") or ""
        return f"{mod}.{f.__name__}" if made_here(d) else None

    started = threading.local()

    class _Listener(event.Listener):
        def on_start(self, ev):
            name = ours(ev)
            if name is None:
                return
            if os.environ.get("DFRANK_DEBUG_COMPILE"):
                print(f"dfrank: compiling {name}{ev.data.get('args')}", file=sys.stderr,
                      flush=True)
            started.__dict__.setdefault("stack", []).append(time.perf_counter())
            _begin(name, ev.data["dispatcher"], ev.data.get("args"))

        def on_end(self, ev):
            if ours(ev) is not None:
                _end()
                t0 = started.stack.pop()
                if ev.data.get("args") is not None:
                    timing.record(ev.data["dispatcher"], ev.data["args"],
                                  time.perf_counter() - t0)

    event.register("numba:compile", _Listener())
    _state["installed"] = True

