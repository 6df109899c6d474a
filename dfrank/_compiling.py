"""Tell the user when numba compiles for long: the first use of a kernel compiles it
(cached on disk afterwards), which takes seconds to tens of seconds and would otherwise
look like a hang.

A listener on numba's compile events (of dfrank's own kernels, not other libraries')
starts a timer when a compilation begins; if it is
still compiling after ``DELAY`` seconds, one line goes to stderr, once per process:
``dfrank: compiling numba kernels (once: ...)``. ``DFRANK_QUIET_COMPILE=1`` silences it;
``DFRANK_DEBUG_COMPILE=1`` names every kernel compiled, with its argument types (a kernel
compiled at every run means a signature the cache never sees, or a dispatcher rebuilt
without its cache).
"""

import os
import sys
import threading

__all__ = ["install", "quiet", "DELAY"]

DELAY = 2.0
_state = {"installed": False, "depth": 0, "timer": None, "said": False}
_lock = threading.Lock()
MESSAGE = ("dfrank: compiling numba kernels (once: they are cached on disk; "
           "'dfrank warmup' compiles them all ahead, on every core)...")


def _say():
    with _lock:
        if _state["said"] or _state["depth"] == 0 or _state.get("quiet"):
            return
        _state["said"] = True
    print(MESSAGE, file=sys.stderr, flush=True)


def quiet(flag=True):
    """Silence (or not) the message in this process (the command line's --quiet)."""
    _state["quiet"] = bool(flag)


def install():
    """Register the listener (idempotent; nothing happens under DFRANK_QUIET_COMPILE)."""
    if _state["installed"] or os.environ.get("DFRANK_QUIET_COMPILE"):
        return
    from numba.core import event

    def ours(ev):
        d = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        mod = getattr(getattr(d, "py_func", None), "__module__", "") or ""
        return mod.startswith("dfrank")

    class _Listener(event.Listener):
        def on_start(self, ev):
            if not ours(ev):
                return
            if os.environ.get("DFRANK_DEBUG_COMPILE"):
                f = ev.data["dispatcher"].py_func
                print(f"dfrank: compiling {f.__module__}.{f.__name__}{ev.data.get('args')}",
                      file=sys.stderr, flush=True)
            with _lock:
                _state["depth"] += 1
                if _state["depth"] == 1 and not _state["said"]:
                    t = threading.Timer(DELAY, _say)
                    t.daemon = True
                    _state["timer"] = t
                    t.start()

        def on_end(self, ev):
            if not ours(ev):
                return
            with _lock:
                _state["depth"] -= 1
                if _state["depth"] == 0 and _state["timer"] is not None:
                    _state["timer"].cancel()
                    _state["timer"] = None

    event.register("numba:compile", _Listener())
    _state["installed"] = True
