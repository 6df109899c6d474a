"""Where a first line search's compiling goes: seconds by kernel, LLVM's share, and the
bound that the machine's cores put on the wall time.

    python benchmarks/bench_compile_split.py [--top 8]

Runs each command of ``bench_cold.py --part line`` once, in a fresh process and an empty
numba cache of its own, with every kernel compiled in that process
(``DFRANK_BACKGROUND_COMPILE=0``), and listens to numba's events inside it: ``numba:compile``
(each compilation; a kernel's seconds are those of its outermost compile, the kernels it
calls included) and ``numba:llvm_lock`` (the time LLVM holds its lock: code generation and
optimization). However the compiling is split between the process and background
processes, it cannot take less wall time than its CPU seconds over the cores, which the
last column prints beside the goal of ``bench_cold.py`` (10 s more than a warm run).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_now, load_warning, shared_path, table  # noqa: E402
from bench_cold import FOLD, LINE_GOAL, MQ2008, line_commands  # noqa: E402


def _child(out_path, argv):
    """In the measured process: run ``dfrank argv`` and write what numba's events said."""
    from numba.core import event

    kernels, depth, seen = {}, [], {"compilations": 0, "llvm": 0.0}

    class Compiles(event.Listener):
        def on_start(self, ev):
            depth.append(time.perf_counter())

        def on_end(self, ev):
            took = time.perf_counter() - depth.pop()
            seen["compilations"] += 1
            if not depth:
                f = ev.data["dispatcher"].py_func
                name = f"{f.__module__.removeprefix('dfrank.')}.{f.__name__}"
                kernels[name] = kernels.get(name, 0.0) + took

    class Llvm(event.Listener):  # outermost holds of the lock only
        starts = []

        def on_start(self, ev):
            self.starts.append(time.perf_counter())

        def on_end(self, ev):
            t = self.starts.pop()
            if not self.starts:
                seen["llvm"] += time.perf_counter() - t

    event.register("numba:compile", Compiles())
    event.register("numba:llvm_lock", Llvm())
    from dfrank.cli import main

    t = time.perf_counter()
    main(argv)
    with open(out_path, "w") as f:
        json.dump(dict(seen, kernels=kernels, wall=time.perf_counter() - t), f)


def measure(argv):
    """What one command's first run, all in process, compiled (see :func:`_child`)."""
    with tempfile.TemporaryDirectory() as cache:
        out = os.path.join(cache, "split.json")
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, DFRANK_QUIET_COMPILE="1",
                   DFRANK_BACKGROUND_COMPILE="0")
        before = load_now()
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", out, "--",
                        *argv], env=env, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f), before, os.getloadavg()[0]


def _others(timing):
    return "?" if timing.others is None else f"{timing.others:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=8, help="kernels listed per command")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args.child, args.argv)
    if None in (shared_path(FOLD.format("train")), shared_path(MQ2008)):
        sys.exit("OHSUMED Fold1 or MQ2008 Fold1 not found under ../shared/data")
    cores = os.cpu_count()
    print(load_warning())
    summary, details = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in line_commands(tmp).items():
            seen, before, load1 = measure(argv)
            compiling = sum(seen["kernels"].values())
            summary.append([name, f"{seen['wall']:.1f} s", f"{compiling:.1f} s",
                            str(seen["compilations"]), f"{seen['llvm']:.1f} s",
                            f"{compiling - seen['llvm']:.1f} s",
                            f"{compiling / cores:.1f} s (goal {LINE_GOAL:.0f} s)",
                            f"{_others(before)} / {load1:.2f}"])
            top = sorted(seen["kernels"].items(), key=lambda kv: -kv[1])[:args.top]
            details += [[name, k, f"{v:.1f} s", f"{100 * v / compiling:.0f}%"]
                        for k, v in top]
    print(table(summary, ["first command", "run", "compiling", "compilations", "in LLVM",
                          "in numba", f"CPU / {cores} cores", "elsewhere / load1"]))
    print()
    print(table(details, ["first command", "kernel (outermost compile)", "compiling",
                          "share"]))
    print("run: the command's wall time in its process, all compiled there; in LLVM: the "
          "time LLVM's lock was held; elsewhere: tasks of other processes ready to run "
          "just before the run; load1: the 1-minute load average at its end.")


if __name__ == "__main__":
    main()
