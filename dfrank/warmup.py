"""Compile numba's kernels ahead of use, on every core: ``dfrank warmup``.

dfrank's kernels are compiled on their first use and cached on disk (``cache=True``). The
install compiles those of a new user's first commands and every metric's evaluation
(:data:`INSTALL`, run by setup.py); ``dfrank warmup`` compiles the rest (the line searches
of the other metric families, the strategies' own kernels, the readers' other paths), split
over several processes (compiling holds one core per process): every later run, in any
process, loads them from the cache in a fraction of a second. Each task runs a small piece
of the public API, or a command, on tiny data, so it compiles exactly the kernels that
piece needs, as a real run would.
"""

import os
import sys
import tempfile
import time

import numpy as np

__all__ = ["TASKS", "warm", "run_task"]

# metric families (one kernel each: the tie policy and the cut-off are run-time values)
METRICS = ("ndcg@3", "dcg@3", "map", "map@3", "p@2", "recall@2", "mrr", "rr@2", "err@3",
           "rprec", "kendall_tau")


def _tiny(n_queries=3, size=6, d=3, seed=0):
    from .data import RankingData

    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n_queries * size, d)), 1)
    y = rng.integers(0, 3, n_queries * size).astype(float)
    return RankingData.from_arrays(X, y, np.repeat(np.arange(n_queries), size))


def _evaluate(metric, ties="pessimistic"):
    from .api import evaluate

    data = _tiny()
    evaluate(np.arange(data.n_docs, dtype=float), data, metric, ties=ties)


def _line(metric, ties="pessimistic"):
    from .objective import LinearObjective

    data = _tiny()
    obj = LinearObjective(data, metric, ties=ties)
    obj.batch(obj.space.sample(np.random.default_rng(0), 3))
    obj.line(obj.space.center(), np.eye(obj.space.dim)[0])            # a coordinate
    obj.line(obj.space.center(), np.linspace(-1.0, 1.0, obj.space.dim))  # any direction
    obj.line(obj.space.center(), np.eye(obj.space.dim)[1], rule="best").profile.values


def _wide_profile():
    """The plateau rule's parallel kernels, which only profiles of more than
    ``PARALLEL_FROM`` intervals (web-sized lines) reach."""
    from .linesearch import LineProfile, choose
    from .linesearch.choice import PARALLEL_FROM

    edges = np.concatenate([[-np.inf], np.arange(PARALLEL_FROM + 1.0), [np.inf]])
    values = np.arange(len(edges) - 1) % 3 / 2.0
    choose(LineProfile(edges[:-1], edges[1:], values, np.empty(0)), rule="plateau")


def _files():
    from . import io
    from .io.trec import write_run

    data = _tiny()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("d.txt", "d.txt.gz"):
            path = os.path.join(tmp, name)
            io.save_svmlight(data, path)
            io.load_svmlight(path)
        cache = os.path.join(tmp, "d.dfrank")
        data.save(cache)
        type(data).load(cache)
        qrels = os.path.join(tmp, "qrels.txt")
        with open(qrels, "w") as f:
            f.writelines(f"{q} 0 {d} {int(r)}\n" for q, d, r in
                         zip(np.repeat(data.qids, data.query_sizes), range(data.n_docs),
                             data.y))
        data.docids = np.arange(data.n_docs).astype(str)
        run = os.path.join(tmp, "run.txt")
        write_run(run, data, np.arange(data.n_docs, dtype=float))
        from .metrics.trec_eval import evaluate_run

        evaluate_run(qrels, run, ["official", "ndcg_cut", "recall", "map_cut", "success",
                                  "ndcg"])


def _strategies():
    from .api import maximize

    data = _tiny(n_queries=4, size=8)
    for name, opts in (("ca", {"restarts": 1, "line_search": "steps", "max_sweeps": 1}),
                       ("pso", {"iterations": 2, "swarm_size": 4}), ("random", {}),
                       ("es", {"restarts": 1, "evals": 20}),
                       ("grid", {"resolution": 3}), ("fdsa", {"restarts": 1, "max_iter": 1}),
                       ("approx_ndcg", {"restarts": 1, "max_iter": 2}),
                       ("approx_ap", {"restarts": 1, "max_iter": 2}),
                       ("smooth_ndcg", {"restarts": 1, "max_iter": 2}),
                       ("smooth_ap", {"restarts": 1, "max_iter": 2})):
        maximize(data, "ndcg@3", name, budget=20, seed=0, **opts)
    _serial("ndcg@3", "map")  # what joblib workers of dfrank fit --n-jobs run


def _demo():
    """What ``dfrank demo`` compiles: NDCG@10 evaluations, steps, swarm, samples."""
    from .api import maximize
    from .datasets import load_demo

    train, valid, test = load_demo()
    sub = train.subset(np.arange(min(train.n_queries, 3)))
    for name, opts in (("ca", {"restarts": 1, "line_search": "steps", "max_sweeps": 1}),
                       ("pso", {"iterations": 2}), ("random", {"n_samples": 10})):
        maximize(sub, "ndcg@10", name, seed=0, valid=valid, **opts)


def _lines(*metrics):
    for m in metrics:
        _line(m)


def _evaluations(*metrics):
    for m in metrics:
        _evaluate(m)
    _evaluate("ndcg@3", "expected")


def _serial(*metrics):
    """The serial twins, which a process with one numba thread runs (a joblib worker),
    compiled directly: the thread count is the user's and joblib's to set."""
    from ._jit.background import compile_entry
    from .metrics.registry import get, tie_code

    for name in metrics:
        m = get(name)
        for ties in ("pessimistic", "expected"):
            if m.supports_ties(ties):
                compile_entry(m.code, tie_code(ties), np.float64, parallel=False)


def _commands(*names):
    """The first commands of a new user's tasks (``dfrank demo``, ``fit``, ``fit --strategy
    ca``, ``evaluate``, ``trec-eval``, ``fuse``, ``tune``, ``compare``), each run as a
    user runs it, in a process of its own (:mod:`dfrank._jit.helpers`), on tiny files
    shaped as the real ones (gzipped LETOR, TREC runs and qrels, a tab-separated
    collection), so that they compile exactly the kernels and argument types those
    commands need; their parallel entry points compile in that process."""
    import subprocess

    from ._jit.helpers import argv

    env = dict(os.environ, DFRANK_BACKGROUND_COMPILE="0", DFRANK_QUIET_COMPILE="1")
    with tempfile.TemporaryDirectory() as tmp:
        files = _command_inputs(tmp)
        for name in names:
            done = subprocess.run(argv("dfrank.cli", *COMMANDS[name](files), "--quiet"),
                                  env=env, cwd=tmp, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"warm-up of {name!r} failed ({done.returncode}): "
                                   f"{done.stdout}{done.stderr}")


def _command_inputs(tmp):
    """Tiny inputs of :func:`_commands` under ``tmp``; a dict of their paths."""
    import gzip

    from . import io
    from .datasets import make_letor_like
    from .result import LinearRanker

    f = {k: os.path.join(tmp, k) for k in ("train.txt.gz", "test.txt.gz", "model.json",
                                           "qrels.txt", "a.run", "b.run", "docs.tsv",
                                           "topics.tsv", "out")}
    for name, seed in (("train.txt.gz", 0), ("test.txt.gz", 1)):
        data = make_letor_like(n_queries=6, docs_per_query=8, n_features=4, seed=seed)
        data.docids = np.array([f"doc{i}" for i in range(data.n_docs)])   # '# docid = ...'
        io.save_svmlight(data, f[name])
    LinearRanker([0.5, -0.25, 1.0, 0.125]).save(f["model.json"])
    rng = np.random.default_rng(0)
    with open(f["qrels.txt"], "w") as q, open(f["a.run"], "w") as a, \
            open(f["b.run"], "w") as b:
        for qid in range(4):
            for d in range(6):
                q.write(f"{qid} 0 d{d} {int(rng.integers(0, 3))}\n")
                a.write(f"{qid} Q0 d{d} {d + 1} {rng.random()!r} a\n")
                b.write(f"{qid} Q0 d{d} {d + 1} {rng.random()!r} b\n")
    words = ["apple", "pear", "fig", "plum", "kiwi"]
    with open(f["docs.tsv"], "w") as d:
        d.writelines(f"d{i}\t{' '.join(words[(i + j) % 5] for j in range(1 + i % 4))}\n"
                     for i in range(6))
    with open(f["topics.tsv"], "w") as t:
        t.writelines(f"{q}\t{words[q]} {words[q + 1]}\n" for q in range(4))
    with gzip.open(f["out"] + ".gz", "wb"):
        pass
    return f


# the first commands of a new user's tasks, as argument lists of the tiny inputs
COMMANDS = {
    "demo": lambda f: ["demo"],
    "fit": lambda f: ["fit", f["train.txt.gz"], "--valid", f["test.txt.gz"], "--test",
                      f["test.txt.gz"], "-o", f["model.json"]],
    "fit --strategy ca": lambda f: ["fit", f["train.txt.gz"], "--strategy", "ca",
                                    "--restarts", "1", "-o", f["model.json"]],
    "evaluate": lambda f: ["evaluate", f["model.json"], f["test.txt.gz"]],
    "trec-eval": lambda f: ["trec-eval", f["qrels.txt"], f["a.run"]],
    "fuse": lambda f: ["fuse", "--qrels", f["qrels.txt"], f["a.run"], f["b.run"], "--metric", "map",
                       "-o", f["out"]],
    "tune": lambda f: ["tune", "--collection", f["docs.tsv"], "--topics", f["topics.tsv"],
                       "--qrels", f["qrels.txt"], "--model", "bm25", "--budget", "6",
                       "--folds", "2"],
    "compare": lambda f: ["compare", f["train.txt.gz"], "--strategies", "ca,pso,random",
                          "--budget", "60", "--seeds", "1"],
}


# name -> (phase, estimated seconds to compile on one core, function, arguments). Phase 0
# compiles what later tasks share (the line search's candidates, sorts and assembly come
# with its first family), so that no two processes compile it at once; within a phase the
# tasks go to the processes longest first, each to the first process free. Families that
# share a sweep kernel are one task.
TASKS = {
    "line search ndcg": (0, 68.0, _lines, ("ndcg@3", "dcg@3")),
    "evaluate": (0, 30.0, _evaluations, METRICS[:6]),
    "evaluate more": (0, 25.0, _evaluations, METRICS[6:]),
    "files": (0, 30.0, _files, ()),
    "demo": (1, 1.0, _demo, ()),
    "line search map": (1, 22.0, _lines, ("map", "map@3")),
    "line search precision": (1, 19.0, _lines, ("p@2", "recall@2", "rprec")),
    "line search rr": (1, 21.0, _lines, ("mrr", "rr@2")),
    "line search err": (1, 30.0, _lines, ("err@3",)),
    "line search kendall_tau": (1, 21.0, _lines, ("kendall_tau",)),
    "line search expected ties": (1, 3.0, _line, ("p@2", "expected")),
    "serial twins": (1, 30.0, _serial, METRICS),
    "strategies": (1, 9.0, _strategies, ()),
    "wide profiles": (1, 4.0, _wide_profile, ()),
}
# The kernels of the first commands, as the install builds them: the two line searches
# first (one per process), then the rest of each command (most of it shared by then)
FIRST = {
    "first: fit --strategy ca": (0, 68.0, _commands, ("fit --strategy ca",)),
    "first: fuse": (0, 63.0, _commands, ("fuse",)),
    "first: trec-eval, evaluate, compare": (1, 30.0, _commands,
                                            ("trec-eval", "evaluate", "compare")),
    "first: fit, demo, tune": (1, 25.0, _commands, ("fit", "demo", "tune")),
}
# what the install compiles (setup.py): the first commands' kernels, and every metric
# family's evaluation in the processes' spare time (``dfrank warmup`` does the rest)
INSTALL = list(FIRST) + ["evaluate", "evaluate more"]
TASKS.update(FIRST)
GROUPS = {"demo": ["demo"],
          "fit": ["line search ndcg", "files", "demo", "strategies", "line search map"],
          "first": list(FIRST), "install": INSTALL,
          "all": list(TASKS)}


def run_task(name):
    """Compile (or load) the kernels of one task, the parallel entry points in this
    process (not in the background); returns its wall time."""
    from ._jit.background import in_process

    _, _, fn, args = TASKS[name]
    t = time.perf_counter()
    with in_process():
        fn(*args)
    return time.perf_counter() - t


EVERY = 10.0   # seconds between the warm-up's progress lines while tasks run


def _longest_first(names):
    return sorted(names, key=lambda n: -TASKS[n][1])


def warm(names=None, jobs=None, progress=None, still=None):
    """Compile the kernels of ``names`` (task names, or a group: "demo", "fit", "all")
    in ``jobs`` processes (default: every core). ``progress(name, seconds)`` is called as
    each task ends, and ``still(names, seconds)`` every ``EVERY`` seconds without one,
    with the tasks running and the time so far. Returns the wall time."""
    names = GROUPS.get(names, names) if isinstance(names, str) or names is None else names
    names = list(GROUPS["all"] if names is None else names)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise ValueError(f"unknown warm-up tasks {unknown}; known: {sorted(GROUPS)} or "
                         f"{sorted(TASKS)}")
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    t = time.perf_counter()
    if jobs == 1:
        for n in names:
            s = run_task(n)
            if progress:
                progress(n, s)
        return time.perf_counter() - t
    # each helper compiles its share of a phase; numba's cache files make them everyone's
    from ._jit.helpers import end_all, spawn

    pool = [spawn(__name__, "--serve", quiet=False) for _ in range(jobs)]
    if any(p is None for p in pool):
        end_all(procs=pool)
        raise RuntimeError("could not start the warm-up's processes")
    try:
        for phase in sorted({TASKS[n][0] for n in names}):
            _run_phase(pool, _longest_first([n for n in names if TASKS[n][0] == phase]),
                       progress, still, t)
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


def _serve():
    """A warm-up helper: run the task named on each line of standard input, then print
    ``done NAME SECONDS`` (or ``failed NAME: WHY``)."""
    for line in sys.stdin:
        name = line.strip()
        try:
            secs = run_task(name)
        except Exception as e:   # said to the parent, which stops the warm-up
            print(f"failed {name}: {type(e).__name__}: {e}", flush=True)
            return
        print(f"done {name} {secs:.3f}", flush=True)


def main(argv=None):
    """``python -m dfrank.warmup [demo|fit|all] [--jobs N]``."""
    import argparse

    if argv is None and sys.argv[1:] == ["--serve"]:
        return _serve()
    ap = argparse.ArgumentParser(prog="dfrank warmup")
    ap.add_argument("what", nargs="?", default="all", choices=sorted(GROUPS))
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    secs = warm(args.what, args.jobs,
                progress=lambda n, s: print(f"  {n:30s} {s:6.1f} s", file=sys.stderr))
    print(f"kernels ready in {secs:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
