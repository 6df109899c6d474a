"""Compile the kernels ahead of use, on every core: the install's build and ``dfrank warmup``.

Every module of kernels declares the argument types Python calls its kernels with
(``EXAMPLES``, :mod:`.examples`); a task compiles the declared versions of some modules
with numba's public ``dispatcher.compile``, which caches them on disk as a call would, so
every later process loads them in a fraction of a second. The install compiles the
versions marked ``first`` (those of a new user's first commands, and every metric's
evaluation); ``dfrank warmup`` the rest. Tasks are split over helper processes (compiling
holds one core per process), fed task names on their standard input.
"""

import importlib
import os
import sys
import time

__all__ = ["MODULES", "TASKS", "GROUPS", "warm", "run_task", "examples", "tasks"]

# every module that defines cached kernels (tests/test_jit.py checks the list is whole)
MODULES = ("dfrank._kernels.scoring", "dfrank._kernels.sort", "dfrank.io._svmlight_kernel",
           "dfrank.io._trec_kernel", "dfrank.io._write_kernel", "dfrank.ir._kernels",
           "dfrank.linesearch.assemble", "dfrank.linesearch.candidates",
           "dfrank.linesearch.choice", "dfrank.linesearch.sweep", "dfrank.metrics._drivers",
           "dfrank.metrics._kernels", "dfrank.metrics._rank", "dfrank.metrics._smoothed",
           "dfrank.metrics.trec_eval", "dfrank.spaces")

# name -> (phase, estimated seconds on one core, kernels: "module" or "module:kernel", ...).
# Phase 0 compiles what later tasks share (a line search's candidates, sorts and assembly
# come with its first sweep; the ranking and scoring with the first driver), so that no
# two processes compile it at once; within a phase the tasks go to the processes longest
# first, each to the first process free.
_D = "dfrank.metrics._drivers:"
_S = "dfrank.linesearch.sweep:"
TASKS = {
    "line search ndcg": (0, 61.0, (_S + "sweep_dcg", "dfrank.linesearch.assemble",
                                   "dfrank.linesearch.candidates",
                                   "dfrank.linesearch.choice")),
    "evaluate ndcg": (0, 9.0, (_D + "batch_ndcg", "dfrank.metrics._kernels",
                                "dfrank._kernels.scoring")),
    "files": (0, 22.0, ("dfrank.io._svmlight_kernel", "dfrank.io._trec_kernel",
                        "dfrank.io._write_kernel", "dfrank.metrics.trec_eval")),
    "retrieval, spaces, smoothed": (0, 10.0, ("dfrank.ir._kernels", "dfrank.spaces",
                                             "dfrank.metrics._smoothed")),
    "line search map": (1, 19.0, (_S + "sweep_ap",)),
    "line search precision": (1, 17.0, (_S + "sweep_count",)),
    "line search rr": (1, 18.0, (_S + "sweep_rr",)),
    "line search err": (1, 23.0, (_S + "sweep_err",)),
    "line search kendall_tau": (1, 18.0, (_S + "sweep_ktau",)),
    "evaluate map, precision, rr": (1, 21.0, tuple(_D + n for n in (
        "batch_ap", "batch_prec", "batch_recall", "batch_rprec", "batch_rr"))),
    "evaluate dcg, err, tau, expected": (1, 19.0, tuple(_D + n for n in (
        "batch_dcg", "batch_err", "batch_ktau", "batch_expected"))),
    "serial twins": (1, 23.0, tuple(_D + n for n in (
        "serial_ndcg", "serial_dcg", "serial_prec", "serial_recall", "serial_rprec",
        "serial_rr", "serial_ap", "serial_err", "serial_ktau", "serial_expected"))),
}
# a group: the versions it compiles ("first" by the install, "all" by dfrank warmup)
GROUPS = {"install": ("first",), "all": ("first", "later")}


def examples(selection, when=("first", "later")):
    """The declared versions (:class:`.examples.Example`) of the kernels ``selection``
    names ("module" or "module:kernel") that are marked one of ``when``."""
    found = []
    for item in selection:
        module, _, kernel = item.partition(":")
        found += [ex for ex in importlib.import_module(module).EXAMPLES
                  if ex.when in when and (not kernel or ex.kernel.py_func.__name__ == kernel)]
    return found


def run_task(name, group="all"):
    """Compile (or load) the versions of one task that ``group`` compiles; returns its wall
    time."""
    t = time.perf_counter()
    for ex in examples(TASKS[name][2], GROUPS[group]):
        ex.kernel.compile(ex.types)
    return time.perf_counter() - t


EVERY = 10.0   # seconds between the warm-up's progress lines while tasks run


def tasks(group):
    """The tasks with something to compile in ``group``, longest first within a phase."""
    names = [n for n in TASKS if examples(TASKS[n][2], GROUPS[group])]
    return sorted(names, key=lambda n: (TASKS[n][0], -TASKS[n][1]))


def warm(group="all", jobs=None, progress=None, still=None, names=None):
    """Compile the versions of ``group`` ("install": the first commands' and every metric's
    evaluation; "all": every declared version) in ``jobs`` processes (default: every core).
    ``progress(task, seconds)`` is called as each task ends, and ``still(tasks, seconds)``
    every ``EVERY`` seconds without one, with the tasks running and the time so far.
    ``names`` keeps only those tasks. Returns the wall time."""
    if group not in GROUPS:
        raise ValueError(f"unknown warm-up group {group!r}; known: {sorted(GROUPS)}")
    unknown = sorted(set(names or ()) - set(TASKS))
    if unknown:
        raise ValueError(f"unknown warm-up tasks {unknown}; known: {sorted(TASKS)}")
    names = [n for n in tasks(group) if names is None or n in names]
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
        for phase in sorted({TASKS[n][0] for n in names}):
            _run_phase(pool, [n for n in names if TASKS[n][0] == phase], progress, still, t)
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
