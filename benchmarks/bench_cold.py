"""A new user's first commands: time spent compiling numba's kernels, from empty caches.

    python benchmarks/bench_cold.py [--rounds 3] [--part demo|line|all]

Each round points ``NUMBA_CACHE_DIR`` at a new empty folder and runs, each in a fresh
process, as a new user would:

1. ``dfrank demo`` (cold), then ``dfrank fit`` on OHSUMED Fold1 train with ``--valid``
   Fold1 vali (cold for what the demo did not compile), then both again (warm);
2. in another empty folder, ``dfrank fit`` first (cold), then again (warm);
3. (``--part line``) each command that runs the exact line search, in an empty folder of
   its own, first (cold) then again (warm): ``dfrank fit --strategy ca`` on OHSUMED Fold1
   train, ``dfrank fuse`` of the 5 runs of ``bench_fusion.py`` (MQ2008 Fold1, MAP) and
   ``dfrank compare`` (its default strategies, 2,000 evaluations, one seed) on OHSUMED
   Fold1 train; and again from another empty cache with ``DFRANK_BACKGROUND_COMPILE=0``
   (every kernel compiled in the process, none in the background), side by side.

Compiling is the cold time less the warm time of the same command (loading a kernel from
the cache is part of the warm time), when both ran under the same load. Medians over
rounds; the load of other processes is sampled just before each command starts (after
waiting up to SETTLE seconds for the background compile of the command before to end, as
a user reading its output would), since during it the command's own processes count.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_TOLERANCE, Timing, comparable, load_cell,  # noqa: E402
                     load_now, load_warning, median_of, shared_path, table)

FOLD = "ohsumed-letor3/QueryLevelNorm/Fold1/{}.txt.gz"
GOAL = 5.0  # seconds of compiling allowed to each first command (issue #24)
LINE_GOAL = 10.0  # ... to the first command that runs the exact line search (issue #34)
MQ2008 = "mq2008-letor4/Fold1/train.txt.gz"
SETTLE = 10.0  # seconds a run waits for the tasks of the run before it to end


def run(argv, cache, **extra_env):
    """Wall time of ``dfrank argv`` in a fresh process whose numba cache is ``cache``, with
    the tasks of other processes ready to run just before it starts (during the run they
    would count its own processes) and the load average at its end."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, DFRANK_QUIET_COMPILE="1", **extra_env)
    code = "import sys; from dfrank.cli import main; sys.exit(main(sys.argv[1:]))"
    before = load_now()
    settle = time.perf_counter() + SETTLE
    while (before.others or 0.0) > LOAD_TOLERANCE and time.perf_counter() < settle:
        before = load_now()  # a background compile of the command before is finishing
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code] + argv, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    return Timing(wall, before.others, os.getloadavg()[0])


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


def first_uses(commands):
    """Cold then warm time of each command, each in an empty cache of its own, and its
    cold time with every kernel compiled in the process (another empty cache)."""
    out = {}
    for name, argv in commands.items():
        with tempfile.TemporaryDirectory() as cache:
            out[name, "cold"] = run(argv, cache)
            out[name, "warm"] = run(argv, cache)
        with tempfile.TemporaryDirectory() as cache:
            out[name, "in process"] = run(argv, cache, DFRANK_BACKGROUND_COMPILE="0")
    return out


def line_commands(tmp):
    """The commands of part 3 (their run files written into ``tmp``)."""
    from bench_fusion import write_runs

    import dfrank

    train = shared_path(FOLD.format("train"))
    qrels, runs = write_runs(dfrank.load_svmlight(shared_path(MQ2008)), 5, tmp)
    out = os.path.join(tmp, "out")
    return {"fit --strategy ca": ["fit", train, "--strategy", "ca", "--metric", "ndcg@10",
                                  "--quiet", "-o", out + ".json"],
            "fuse (5 runs)": ["fuse", "--qrels", qrels, *runs.values(), "--metric", "map",
                              "-o", out + ".run"],
            "compare": ["compare", train, "--metric", "ndcg@10", "--budget", "2000",
                        "--seeds", "1", "--quiet"]}


def _compiling(rounds, cmd, cold_key):
    """Median of cold less warm over the rounds, or None when a pair's loads differ."""
    pairs = [(r[cmd, cold_key], r[cmd, "warm"]) for r in rounds]
    if not all(comparable(c, w) for c, w in pairs):
        return None
    return statistics.median(c - w for c, w in pairs)


def report(rounds, names, goal):
    rows = []
    in_process = any(k[1] == "in process" for k in rounds[0])
    for cmd in names:
        cold = median_of([r[cmd, "cold"] for r in rounds])
        warm = median_of([r[cmd, "warm"] for r in rounds])
        compiling = _compiling(rounds, cmd, "cold")
        cells = (["n/a (load differs)", "?"] if compiling is None else
                 [f"{compiling:.1f} s", "yes" if compiling <= goal else "no"])
        if in_process:
            alone = _compiling(rounds, cmd, "in process")
            cells.append("n/a" if alone is None else f"{alone:.1f} s")
        rows.append([cmd, f"{cold:.1f} s", f"{warm:.1f} s", *cells,
                     load_cell(cold, warm)])
    print(table(rows, ["command", "cold", "warm", "compiling", f"<= {goal:.0f} s",
                       *(["compiling, all in process"] if in_process else []),
                       "elsewhere / load1"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--part", choices=("demo", "line", "all"), default="demo",
                    help="demo: parts 1-2; line: part 3; all: both")
    args = ap.parse_args()
    train, vali = shared_path(FOLD.format("train")), shared_path(FOLD.format("vali"))
    if train is None or vali is None or shared_path(MQ2008) is None:
        sys.exit("OHSUMED Fold1 or MQ2008 Fold1 not found under ../shared/data")
    print(load_warning())
    print(f"medians of {args.rounds} rounds, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("demo", "all"):
            fit_args = ["fit", train, "--valid", vali, "--metric", "ndcg@10", "--quiet",
                        "-o", os.path.join(tmp, "model.json")]
            rounds = [one_round(fit_args) for _ in range(args.rounds)]
            report(rounds, ("demo", "fit after demo", "fit first"), GOAL)
        if args.part in ("line", "all"):
            commands = line_commands(tmp)
            rounds = [first_uses(commands) for _ in range(args.rounds)]
            report(rounds, list(commands), LINE_GOAL)
    print("elsewhere: the most tasks of other processes ready to run just before a run "
          "started; load1: the highest 1-minute load average at the end of a run (the runs "
          "included). A cold and a warm run whose 'elsewhere' differ by more than "
          f"{LOAD_TOLERANCE} are not subtracted.")


if __name__ == "__main__":
    main()
