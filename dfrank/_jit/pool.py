"""Compile the kernels ahead of use, on every core: the install's build and ``dfrank warmup``.

Every module of kernels declares the argument types Python calls its kernels with, and the
task that compiles them (:func:`.examples.declare`, when the module is imported: ``import
dfrank`` imports them all, and so does every helper of the warm-up); a task compiles its
declared versions with numba's public ``dispatcher.compile``, which caches them on disk as
a call would, so every later process loads them in a fraction of a second. The install compiles the
versions marked ``first`` (those of a new user's first commands, and every metric's
evaluation); ``dfrank warmup`` the rest. Tasks are split over helper processes (compiling
holds one core per process), fed task names on their standard input, longest first by
what this machine measured (:mod:`.timing`).
"""

import os
import sys
import time

from .examples import declared
from .timing import estimate

__all__ = ["GROUPS", "warm", "run_task", "tasks", "examples"]

# a group: the versions it compiles ("first" by the install, "all" by dfrank warmup)
GROUPS = {"install": ("first",), "all": ("first", "later")}


def examples(task, when=("first", "later")):
    """The declared versions (:func:`.examples.declare`) of ``task`` marked one of
    ``when``."""
    return [ex for ex in declared() if ex.task == task and ex.when in when]


def run_task(name, group="all"):
    """Compile (or load) the versions of one task that ``group`` compiles; returns its wall
    time."""
    t = time.perf_counter()
    for ex in examples(name, GROUPS[group]):
        ex.kernel.compile(ex.types)
    return time.perf_counter() - t


def _seconds(name, group):
    """A task's compile time by what this machine measured of its versions
    (:mod:`.timing`)."""
    return sum(estimate(ex.kernel, ex.types) for ex in examples(name, GROUPS[group]))


EVERY = 10.0   # seconds between the warm-up's progress lines while tasks run


def tasks(group):
    """The tasks with something to compile in ``group``: ``{name: phase}``, longest first
    within a phase."""
    phase = {}
    for ex in declared():
        if ex.when in GROUPS[group]:
            phase[ex.task] = min(ex.phase, phase.get(ex.task, ex.phase))
    order = sorted(phase, key=lambda n: (phase[n], -_seconds(n, group)))
    return {n: phase[n] for n in order}


def warm(group="all", jobs=None, progress=None, still=None, names=None):
    """Compile the versions of ``group`` ("install": the first commands' and every metric's
    evaluation; "all": every declared version) in ``jobs`` processes (default: every core).
    ``progress(task, seconds)`` is called as each task ends, and ``still(tasks, seconds)``
    every ``EVERY`` seconds without one, with the tasks running and the time so far.
    ``names`` keeps only those tasks. Returns the wall time."""
    if group not in GROUPS:
        raise ValueError(f"unknown warm-up group {group!r}; known: {sorted(GROUPS)}")
    todo = tasks(group)
    unknown = sorted(set(names or ()) - set(todo))
    if unknown:
        raise ValueError(f"unknown warm-up tasks {unknown}; known: {sorted(todo)}")
    names = [n for n in todo if names is None or n in names]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    t = time.perf_counter()
    if jobs == 1:
        for n in names:
            s = run_task(n, group)
            if progress:
                progress(n, s)
        return time.perf_counter() - t
    # each helper compiles its share of a phase; numba's cache files make them everyone's
    from .helpers import end_all, spawn

    pool = [spawn(__name__, "--serve", group, quiet=False) for _ in range(jobs)]
    if any(p is None for p in pool):
        end_all(procs=pool)
        raise RuntimeError("could not start the warm-up's processes")
    try:
        for phase in sorted({todo[n] for n in names}):
            _run_phase(pool, [n for n in names if todo[n] == phase], progress, still, t)
    finally:
        for p in pool:
            p.stdin.close()
        end_all(grace=5.0, procs=pool)
    return time.perf_counter() - t


def _run_phase(pool, todo, progress, still, t0):
    """Give the tasks ``todo`` (in order) to the helpers of ``pool``, each to the first one
    free, and wait for all of them (see :func:`warm` for ``progress`` and ``still``)."""
    import queue
    import threading

    def read(p, done):
        for line in p.stdout:
            done.put((p, line.rstrip("\n")))
        done.put((p, None))

    done = getattr(pool[0], "done", None)
    if done is None:   # the helpers' lines, read as they come, into one queue
        done = queue.Queue()
        for p in pool:
            p.done = done
            threading.Thread(target=read, args=(p, done), daemon=True).start()
    free, running = list(pool), {}
    while todo or running:
        while todo and free:
            p = free.pop(0)
            running[p] = todo.pop(0)
            p.stdin.write(running[p] + "\n")
        for p in pool:
            p.stdin.flush()
        try:
            p, line = done.get(timeout=EVERY)
        except queue.Empty:
            if still:
                still(sorted(running.values()), time.perf_counter() - t0)
            continue
        if line is None:
            raise RuntimeError(f"a warm-up process ended early (exit {p.wait()})")
        kind, _, rest = line.partition(" ")
        if kind == "failed":
            raise RuntimeError(f"warm-up task failed: {rest}")
        if kind == "done":
            name, _, secs = rest.rpartition(" ")
            free.append(p)
            running.pop(p, None)
            if progress:
                progress(name, float(secs))


def _serve(group):
    """A warm-up helper: run the task named on each line of standard input, then print
    ``done NAME SECONDS`` (or ``failed NAME: WHY``)."""
    for line in sys.stdin:
        name = line.strip()
        try:
            secs = run_task(name, group)
        except Exception as e:   # said to the parent, which stops the warm-up
            print(f"failed {name}: {type(e).__name__}: {e}", flush=True)
            return
        print(f"done {name} {secs:.3f}", flush=True)


if __name__ == "__main__":
    _serve(sys.argv[2])
