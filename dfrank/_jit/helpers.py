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
command is interrupted. A background compile otherwise finishes after its process ends,
filling the cache for the next one.
"""

import os
import subprocess
import sys
import threading
import time

__all__ = ["argv", "spawn", "end_all", "running"]

# the folder holding the dfrank package this process runs
HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOOTSTRAP = ("import sys, runpy; del sys.path[0:1 - getattr(sys.flags, 'safe_path', 0)]; "
             "sys.path.insert(0, {home!r}); "
             "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
_live = []
_lock = threading.Lock()


def argv(module, *args):
    """The command line that runs ``module`` (one of dfrank's) as ``python -m module args``
    would, with dfrank taken from this process's own folder, never the working
    directory."""
    if not module.startswith("dfrank."):
        raise ValueError(f"helpers run dfrank's own modules, not {module!r}")
    return [sys.executable, "-c", BOOTSTRAP.format(home=HOME, module=module), *args]


def spawn(module, *args, env=None, quiet=True):
    """Start ``module`` as a helper (see :func:`argv`) in a session of its own: its output
    discarded when ``quiet``; else its standard input and output are pipes of text, its
    errors go to its output. Returns the process, with ``started`` (``time.monotonic()``)
    set, or None where it cannot start."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    try:
        proc = subprocess.Popen(argv(module, *args), env=env, stdin=out,
                                stdout=out, stderr=subprocess.STDOUT if not quiet else out,
                                text=not quiet, start_new_session=True)
    except OSError:
        return None
    proc.started = time.monotonic()
    with _lock:
        _live[:] = [p for p in _live if p.poll() is None] + [proc]
    return proc


def running():
    """The helpers of this process still running."""
    with _lock:
        return [p for p in _live if p.poll() is None]


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

