"""A new user's first commands: time spent compiling numba's kernels, from empty caches.

    python benchmarks/bench_cold.py [--rounds 3]

Each round points ``NUMBA_CACHE_DIR`` at a new empty folder and runs, each in a fresh
process, as a new user would:

1. ``dfrank demo`` (cold), then ``dfrank fit`` on OHSUMED Fold1 train with ``--valid``
   Fold1 vali (cold for what the demo did not compile), then both again (warm);
2. in another empty folder, ``dfrank fit`` first (cold), then again (warm).

Compiling is the cold time less the warm time of the same command (loading a kernel from
the cache is part of the warm time). Medians over rounds, with the load average: the
commands' own processes are the other processes here, so the count of tasks elsewhere
that other benchmarks report would count the work measured.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_warning, measure, median_of, shared_path, table  # noqa: E402

FOLD = "ohsumed-letor3/QueryLevelNorm/Fold1/{}.txt.gz"
GOAL = 5.0  # seconds of compiling allowed to each first command (issue #24)


def run(argv, cache):
    """Wall time of ``dfrank argv`` in a fresh process whose numba cache is ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, DFRANK_QUIET_COMPILE="1")
    code = "import sys; from dfrank.cli import main; sys.exit(main(sys.argv[1:]))"
    with measure() as m:
        subprocess.run([sys.executable, "-c", code] + argv, env=env, check=True,
                       stdout=subprocess.DEVNULL)
    return m.timing


def one_round(fit_args):
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        out["demo", "cold"] = run(["demo"], cache)
        out["fit after demo", "cold"] = run(fit_args, cache)
        out["demo", "warm"] = run(["demo"], cache)
        out["fit after demo", "warm"] = run(fit_args, cache)
    with tempfile.TemporaryDirectory() as cache:
        out["fit first", "cold"] = run(fit_args, cache)
        out["fit first", "warm"] = run(fit_args, cache)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    train, vali = shared_path(FOLD.format("train")), shared_path(FOLD.format("vali"))
    if train is None or vali is None:
        sys.exit("OHSUMED Fold1 not found under ../shared/data")
    print(load_warning())
    with tempfile.TemporaryDirectory() as tmp:
        fit_args = ["fit", train, "--valid", vali, "--metric", "ndcg@10", "--quiet",
                    "-o", os.path.join(tmp, "model.json")]
        rounds = [one_round(fit_args) for _ in range(args.rounds)]
    rows = []
    for cmd in ("demo", "fit after demo", "fit first"):
        cold = median_of([r[cmd, "cold"] for r in rounds])
        warm = median_of([r[cmd, "warm"] for r in rounds])
        compiling = statistics.median(r[cmd, "cold"] - r[cmd, "warm"] for r in rounds)
        rows.append([cmd, f"{cold:.1f} s", f"{warm:.1f} s", f"{compiling:.1f} s",
                     "yes" if compiling <= GOAL else "no", f"{max(cold.load, warm.load):.2f}"])
    print(f"medians of {args.rounds} rounds, {os.cpu_count()} cores")
    print(table(rows, ["command", "cold", "warm", "compiling", f"<= {GOAL:.0f} s", "load1"]))
    print("load1: the highest 1-minute load average seen at the end of a run (the runs "
          "themselves included; the commands run one at a time)")


if __name__ == "__main__":
    main()
