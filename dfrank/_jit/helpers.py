"""Helper processes of the compile lifecycle: started so that none of dfrank's code comes
from the working directory, and ended when the command that started them is interrupted.

``python -m M`` puts the working directory first on ``sys.path``: a folder ``dfrank/``
there would run in place of the installed package. A helper starts instead as
``python -c BOOTSTRAP``, whose bootstrap drops that first entry and puts the folder this
process imported dfrank from in its place, then runs the module as ``-m`` would. A
``pip --user`` install, the user's ``PYTHONPATH`` and the build's tree reach the helper as
they reach this process (they are later entries of ``sys.path``, or this very folder).

Helpers run in sessions of their own (a terminal's Ctrl-C goes to the command, not to
them); :func:`end_all` ends those still running, which the command line calls when a
command is interrupted. Each helper holds the read end of a pipe, its lifeline, whose
write end only this process holds: when this process ends in any way that skips its exit
handlers (SIGKILL, a crash, its own parent's end closing it), the pipe closes and the
helper ends at once, wherever its compile is. A background compile (``detach``) is told
at this process's normal exit to finish on its own, filling the cache for the next one.
"""

import atexit
import os
import subprocess
import sys
import threading
import time

__all__ = ["argv", "spawn", "end_all", "running", "LIFELINE"]

# the folder holding the dfrank package this process runs
HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# a helper's first lines: its lifeline watched (b"d": go on alone; the pipe closed: end now)
LIFELINE = ("import os, threading; threading.Thread(target=lambda: os.read({fd}, 1) == b'd' "
            "or os._exit(143), daemon=True).start(); ")
BOOTSTRAP = ("import sys, runpy; del sys.path[0:1 - getattr(sys.flags, 'safe_path', 0)]; "
             "sys.path.insert(0, {home!r}); {lifeline}"
             "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
_live = []
_lock = threading.Lock()


def argv(module, *args, lifeline=None):
    """The command line that runs ``module`` (one of dfrank's) as ``python -m module args``
    would, with dfrank taken from this process's own folder, never the working
    directory; ``lifeline``: the descriptor of its lifeline's read end."""
    if not module.startswith(__name__.split(".")[0] + "."):
        raise ValueError(f"helpers run dfrank's own modules, not {module!r}")
    watch = "" if lifeline is None else LIFELINE.format(fd=int(lifeline))
    return [sys.executable, "-c", BOOTSTRAP.format(home=HOME, module=module, lifeline=watch),
            *args]


def spawn(module, *args, env=None, quiet=True, detach=False):
    """Start ``module`` as a helper (see :func:`argv`) in a session of its own, on a
    lifeline to this process: its output discarded when ``quiet``; else its standard input
    and output are pipes of text, its errors go to its output. ``detach``: at this
    process's normal exit the helper goes on alone (a background compile); otherwise it
    ends with this process. Returns the process, with ``started`` (``time.monotonic()``)
    set, or None where it cannot start."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    read, write = os.pipe()
    try:
        proc = subprocess.Popen(argv(module, *args, lifeline=read), env=env, stdin=out,
                                stdout=out, stderr=subprocess.STDOUT if not quiet else out,
                                text=not quiet, start_new_session=True, pass_fds=(read,))
    except OSError:
        os.close(write)
        return None
    finally:
        os.close(read)
    proc.started, proc.lifeline, proc.detach = time.monotonic(), write, detach
    with _lock:
        _live[:] = [p for p in _live if _alive(p)] + [proc]
    return proc


def _alive(proc):
    """Whether ``proc`` runs; the lifeline of one that ended is closed."""
    if proc.poll() is None:
        return True
    if proc.lifeline is not None:
        os.close(proc.lifeline)
        proc.lifeline = None
    return False


@atexit.register
def _at_exit():
    """At a normal exit: background compiles go on alone (the others end as their
    lifelines close with this process)."""
    with _lock:
        for p in _live:
            if p.detach and p.lifeline is not None and p.poll() is None:
                try:
                    os.write(p.lifeline, b"d")
                except OSError:
                    pass


def running():
    """The helpers of this process still running."""
    with _lock:
        return [p for p in _live if _alive(p)]


def end_all(grace=1.0, procs=None):
    """End every helper still running (or those of ``procs``): SIGTERM, then SIGKILL
    after ``grace`` seconds."""
    procs = running() if procs is None else [p for p in procs if p and p.poll() is None]
    for p in procs:
        try:
            p.terminate()
        except OSError:
            pass
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

