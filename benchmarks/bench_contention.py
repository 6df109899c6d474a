"""Coordinate ascent and single evaluations on a quiet machine and beside busy processes,
for each threading choice, side by side in one run.

    python benchmarks/bench_contention.py [--rounds 2] [--reps 3] [--busy 2]

Each configuration runs in a fresh process (the threading layer and the OpenMP wait policy
are fixed when numba starts its pool), in an order rotated from round to round (the first
process after the busy ones start is scheduled differently): it loads OHSUMED Fold1 train,
warms the kernels, then times ``maximize(train, "ndcg@10", "ca", restarts=5)`` --reps
times, as a user calls it (its five restarts run side by side in threads, numba's threads
shared among them), and a single evaluation. Every configuration runs once quiet, then
once while --busy processes spin (``while True: pass``, in this session, so the scheduler
shares per thread), round after round. The medians are reported with the load each figure
saw; the default's loaded/quiet ratio is also taken apart into CPU time and cores used,
beside the ratio a fair share of the cores gives. RankLib 2.18's 11.6 s (quiet, same data,
5 restarts; measured on this machine kind) is the reference.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, Timing, load_cell, load_warning,  # noqa: E402
                     measure, median_of, shared_path, table)

RANKLIB_SECONDS = 11.6
DATA = "ohsumed-letor3/QueryLevelNorm/Fold1/train.txt.gz"
CONFIGS = {  # label: environment added to the child's
    "dfrank's default": {},
    "omp, spinning (libgomp's default)": {"NUMBA_THREADING_LAYER": "omp",
                                          "OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": "300000"},
    "omp, passive": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "PASSIVE"},
    "tbb": {"NUMBA_THREADING_LAYER": "tbb"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "one thread": {"NUMBA_NUM_THREADS": "1"},
}


def child(reps):
    """Run in the configured process: JSON with the fit and evaluation timings."""
    import numba
    import numpy as np

    import dfrank

    data = dfrank.load_svmlight(shared_path(DATA))
    dfrank.maximize(data, "ndcg@10", "ca", restarts=1, max_sweeps=1)  # kernels warm
    fits, cpu = [], []
    value = None
    for _ in range(reps):
        c0 = time.process_time()
        with measure() as m:
            value = dfrank.maximize(data, "ndcg@10", "ca", restarts=5, seed=0).value
        cpu.append(time.process_time() - c0)
        fits.append(m.timing)
    obj = dfrank.LinearObjective(data, "ndcg@10")
    pts = obj.space.sample(np.random.default_rng(0), 200)
    with measure() as m:
        t = []
        for p in pts:
            t0 = time.perf_counter()
            obj(p)
            t.append(time.perf_counter() - t0)
    ev = Timing(statistics.median(t), m.timing.others, m.timing.load)
    print(json.dumps({"layer": numba.threading_layer(), "threads": numba.get_num_threads(),
                      "value": value, "cpu": cpu,
                      "fit": [[float(f), f.others, f.load] for f in fits],
                      "eval": [float(ev), ev.others, ev.load]}))


def cores_used(runs):
    """(median CPU seconds of the fits, median cores they kept busy: CPU time / wall)."""
    pairs = [(c, c / float(f)) for d in runs for c, f in zip(d["cpu"], d["fit"])]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def fair_share(quiet_runs, loaded_runs, busy):
    """The loaded/quiet ratio taken apart, and what a fair scheduler allows.

    wall = CPU time / cores used, so the ratio is (CPU loaded / CPU quiet) x (cores used
    quiet / cores used loaded). A quiet fit that kept u cores busy on average is taken to
    have run floor(u) + 1 threads for a share u - floor(u) of its wall time and floor(u)
    for the rest (exact for the default's two restart threads). Beside ``busy`` spinning
    processes
    a fair scheduler gives n running threads cores x n / (n + busy) cores, so each part
    stretches by max(1, (n + busy) / cores): the ratio a fit with its quiet CPU time would
    show at exactly a fair share."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpu_q, used_q = cores_used(quiet_runs)
    cpu_l, used_l = cores_used(loaded_runs)
    lo = max(1, int(used_q))
    more = min(1.0, max(0.0, used_q - lo))   # the share of the time with lo + 1 running
    fair = sum(part * max(1.0, (n + busy) / cores)
               for n, part in ((lo, 1.0 - more), (lo + 1, more)))
    return (f"taken apart: CPU time {cpu_q:.2f} s quiet, {cpu_l:.2f} s loaded "
            f"({cpu_l / cpu_q:.2f}x); cores used {used_q:.2f} quiet, {used_l:.2f} loaded "
            f"({used_q / used_l:.2f}x). With the quiet run's use of the {cores} cores and "
            f"its CPU time, a fair share beside {busy} busy processes gives "
            f"{fair:.2f}x its quiet time.")


def run_config(env_extra, reps):
    env = dict(os.environ)
    for k, v in env_extra.items():
        if v == "":
            env.pop(k, None)
        else:
            env[k] = v
    out = subprocess.run([sys.executable, __file__, "--child", "--reps", str(reps)],
                         env=env, capture_output=True, text=True, check=True)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d["fit"] = [Timing(*f) for f in d["fit"]]
    d["eval"] = Timing(*d["eval"])
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2, help="busy processes in the loaded phase")
    ap.add_argument("--configs", help="comma-separated labels (default: all)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.reps)
    if shared_path(DATA) is None:
        print("skipped: ../shared/data is absent")
        return
    configs = {k: v for k, v in CONFIGS.items()
               if not args.configs or k in args.configs.split(",")}
    print(load_warning())
    got = {(c, ph): [] for c in configs for ph in ("quiet", "loaded")}
    info = {}
    for r in range(args.rounds):
        for phase in ("quiet", "loaded"):
            busy = []
            if phase == "loaded":
                busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _ in range(args.busy)]
                time.sleep(1.0)
            try:
                order = list(configs.items())
                order = order[r % len(order):] + order[:r % len(order)]   # no fixed slot
                for label, env in order:
                    d = run_config(env, args.reps)
                    got[label, phase].append(d)
                    info[label] = (d["layer"], d["threads"], d["value"])
                    print(f"round {r + 1} {phase:6s} {label:34s} fit "
                          f"{statistics.median(d['fit']):.2f} s  eval "
                          f"{d['eval'] * 1e6:.0f} us  ({load_cell(*d['fit'])})", flush=True)
            finally:
                for p in busy:
                    p.kill()
                    p.wait()
            time.sleep(2.0)
    rows = []
    for label in configs:
        fq = median_of([t for d in got[label, "quiet"] for t in d["fit"]])
        fl = median_of([t for d in got[label, "loaded"] for t in d["fit"]])
        eq = median_of([d["eval"] for d in got[label, "quiet"]])
        el = median_of([d["eval"] for d in got[label, "loaded"]])
        worst = max(t for d in got[label, "loaded"] for t in d["fit"])
        layer, threads, value = info[label]
        rows.append([label, f"{layer} x{threads}", f"{fq:.2f} s", load_cell(fq),
                     f"{fl:.2f} s", f"{worst:.2f} s", load_cell(fl),
                     f"{fl / fq:.2f}x", f"{RANKLIB_SECONDS / fl:.1f}x",
                     f"{eq * 1e6:.0f} us", f"{el * 1e6:.0f} us", f"{el / eq:.1f}x",
                     f"{value:.4f}"])
    print()
    print(table(rows, ["configuration", "layer", "fit quiet", LOAD_HEADER, "fit loaded",
                       "worst loaded", LOAD_HEADER, "loaded/quiet", "RankLib/loaded",
                       "eval quiet", "eval loaded", "loaded/quiet", "train ndcg@10"]))
    quiet = {label: median_of([t for d in got[label, "quiet"] for t in d["fit"]])
             for label in configs}
    if "dfrank's default" in quiet:
        mine = "dfrank's default"
        fastest = min(quiet, key=quiet.get)
        loaded = median_of([t for d in got[mine, "loaded"] for t in d["fit"]])
        print(f"\n{mine}: quiet {quiet[mine]:.2f} s = {quiet[mine] / quiet[fastest]:.2f}x "
              f"the fastest choice ({fastest}, {quiet[fastest]:.2f} s); loaded "
              f"{loaded / quiet[mine]:.2f}x its quiet time")
        print(fair_share(got[mine, "quiet"], got[mine, "loaded"], args.busy))
    print(f"fit: maximize(OHSUMED Fold1 train, ndcg@10, ca, restarts=5), median of "
          f"{args.rounds} x {args.reps} runs per phase; eval: one evaluation, median of 200 "
          f"points; loaded: {args.busy} busy processes. RankLib/loaded: RankLib's quiet "
          f"{RANKLIB_SECONDS} s over the loaded fit.")
    print(LOAD_NOTE + " Here the loaded phase is meant to differ: its 'busy elsewhere' "
          "is the load we made.")


if __name__ == "__main__":
    main()
