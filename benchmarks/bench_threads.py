"""How dfrank scales with threads at web size, and the default fit beside LightGBM.

    python benchmarks/bench_threads.py                 # 1,000,000 training documents
    python benchmarks/bench_threads.py --docs 250000   # quicker, the same steps
    python benchmarks/bench_threads.py --threads 2,4,8,16 --reps 1 --sweeps 1

A synthetic LETOR-like set (``make_letor_like``, float32, 136 features, 60-180 documents a
query: bench_scale.py's data) of about --docs training documents, plus 2,000 test queries
of the same planted model, is saved once as a binary cache; each measurement then runs in a
fresh process that maps it (``RankingData.load(mmap=True)``), with ``NUMBA_NUM_THREADS``
set as a user would:

* one coordinate-ascent sweep over the d + 1 = 137 simplex coordinates (exact line
  search; ``maximize(strategy="ca", restarts=1, max_sweeps=1)``) on 1 thread and on every
  core (or on each count of --threads), with the speed-up and the serial share it implies
  by Amdahl's law
  (s = (N / S - 1) / (N - 1) for speed-up S on N threads), and each run's own time per
  function (cProfile; the kernels are functions of their own);
* ``dfrank fit``'s default (``maximize(train)``) on every core, against LightGBM's
  ``LGBMRanker(n_estimators=500)`` on every core, its Dataset construction counted; each
  one's NDCG@10 on the 2,000 test queries beside its time.

The sweeps run in --reps processes per thread count, in alternating order (1, N, N, 1, 1,
N, ...), --sweeps sweeps each (the first also maps the cache's pages); the fastest of each
count is kept. (Switching numba's thread count inside one process made the kernels scale
worse at 2 threads than a process started with 2: 1.67x against 1.9x.)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, Timing, load_cell, load_warning,  # noqa: E402
                     measure, table)

import dfrank  # noqa: E402

TEST_QUERIES = 2000


def child_sweep(path, top, sweeps):
    import cProfile
    import pstats

    import numba

    data = dfrank.RankingData.load(path, mmap=True)
    obj = dfrank.LinearObjective(data, "ndcg@10")
    tiny = data.subset(np.arange(min(20, data.n_queries)))
    dfrank.maximize(tiny, "ndcg@10", "ca", restarts=1, max_sweeps=1)   # kernels loaded
    best = None
    for rep in range(sweeps):   # the first also maps the cache's pages
        data.derived.coordinate_lines.clear()   # each sweep makes its lines anew
        prof = cProfile.Profile()
        with measure() as m:
            prof.enable()
            r = dfrank.maximize(obj, strategy="ca", restarts=1, max_sweeps=1, seed=0)
            prof.disable()
        if best is not None and best["seconds"] <= m.timing:
            continue
        stats = pstats.Stats(prof).stats
        own = sorted(((v[2], f"{os.path.basename(f[0])}:{f[2]}") for f, v in stats.items()),
                     reverse=True)[:top]
        best = {"seconds": float(m.timing), "value": r.value, "own": own,
                "load": _load(m.timing), "layer": numba.threading_layer()}
    print(json.dumps(best))


def _load(timing):
    return [float(timing), timing.others, timing.load]


def child_fit(train_path, test_path, trees):
    import numba

    train = dfrank.RankingData.load(train_path, mmap=True)
    test = dfrank.RankingData.load(test_path, mmap=True)
    tiny = train.subset(np.arange(min(20, train.n_queries)))
    dfrank.maximize(tiny, "ndcg@10", "ca", restarts=1, max_sweeps=1)   # kernels loaded
    with measure() as m:
        r = dfrank.maximize(train, "ndcg@10", seed=0)
    res = {"dfrank": {"seconds": float(m.timing), "strategy": r.strategy, "train": r.value,
                      "test": r.ranker.evaluate(test, "ndcg@10"), "load": _load(m.timing)},
           "threads": numba.get_num_threads()}
    if trees:
        import lightgbm

        X = np.asarray(train.X)
        with measure() as m:
            model = lightgbm.LGBMRanker(n_estimators=trees, n_jobs=os.cpu_count(),
                                        verbose=-1)
            model.fit(X, np.asarray(train.y), group=np.diff(train.qptr))
        res["lightgbm"] = {"seconds": float(m.timing),
                           "test": dfrank.evaluate(model.predict(np.asarray(test.X)), test,
                                                   "ndcg@10"),
                           "load": _load(m.timing)}
    print(json.dumps(res))


def run_child(args, env_threads):
    env = dict(os.environ)
    env["NUMBA_NUM_THREADS"] = str(env_threads)
    out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000, help="training documents")
    ap.add_argument("--threads", default=str(os.cpu_count()),
                    help="the many-thread count, or counts separated by commas (default: "
                         "every core); the fit runs on the largest")
    ap.add_argument("--trees", type=int, default=500, help="LightGBM's trees (0: none)")
    ap.add_argument("--no-fit", action="store_true", help="the sweeps only")
    ap.add_argument("--top", type=int, default=8, help="functions shown per profile")
    ap.add_argument("--reps", type=int, default=3,
                    help="processes per thread count, alternating (the fastest is kept)")
    ap.add_argument("--sweeps", type=int, default=2,
                    help="sweeps per process (the fastest is kept; the first also maps "
                         "the cache's pages)")
    ap.add_argument("--dir", help="where the cache files go (default: a temporary dir)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.child[0] == "sweep":
            return child_sweep(args.child[1], args.top, args.sweeps)
        return child_fit(args.child[1], args.child[2], int(args.child[3]))
    print(load_warning())
    folder = args.dir or tempfile.mkdtemp(prefix="dfrank-threads-")
    os.makedirs(folder, exist_ok=True)
    n_train = max(1, args.docs // 120)
    train_path = os.path.join(folder, f"train_{args.docs}.dfrank")
    test_path = os.path.join(folder, f"test_{args.docs}.dfrank")
    if not (os.path.exists(train_path) and os.path.exists(test_path)):
        print("making the data ...", flush=True)
        data = dfrank.data.datasets.make_letor_like(
            n_queries=n_train + TEST_QUERIES, docs_per_query=(60, 180), n_features=136,
            seed=0, dtype=np.float32)
        data.subset(np.arange(n_train)).save(train_path)
        data.subset(np.arange(n_train, n_train + TEST_QUERIES)).save(test_path)
        del data
    train = dfrank.RankingData.load(train_path, mmap=True)
    print(f"{train.n_docs:,} training documents x {train.n_features} features in "
          f"{train.n_queries:,} queries, {TEST_QUERIES:,} test queries ({folder})")
    counts = sorted({1, *(int(c) for c in args.threads.split(","))})
    N = counts[-1]
    runs = {k: [] for k in counts}
    for rep in range(args.reps):
        for k in (counts if rep % 2 == 0 else counts[::-1]):
            runs[k].append(run_child(["--top", str(args.top), "--sweeps", str(args.sweeps),
                                      "--child", "sweep", train_path], k))
            print(f"  a sweep on {k} thread(s): {runs[k][-1]['seconds']:.1f} s", flush=True)
    best = {k: min(v, key=lambda o: o["seconds"]) for k, v in runs.items()}
    speedup = best[1]["seconds"] / best[N]["seconds"]
    serial = (N / speedup - 1) / (N - 1) if N > 1 else 1.0
    rows = [[f"{k} thread{'s' if k > 1 else ''} ({best[k]['layer']})",
             f"{best[k]['seconds']:.1f} s", f"{best[1]['seconds'] / best[k]['seconds']:.2f}x",
             f"{best[k]['value']:.4f}", load_cell(Timing(*best[k]["load"]))] for k in counts]
    print()
    print(table(rows, ["one CA sweep", "time", "speed-up", "train NDCG@10", LOAD_HEADER]))
    same = len({best[k]["value"] for k in counts}) == 1
    print(f"speed-up {speedup:.2f}x on {N} threads: a serial share of {serial:.1%} "
          f"(Amdahl); the same value on every count: {same}")
    for k in (1, N):
        print(f"\nown time per function, {k} thread(s):")
        for secs, name in best[k]["own"]:
            print(f"  {secs:7.2f} s  {name}")
    if not args.no_fit:
        print(f"the default fit and LightGBM on {N} threads ...", flush=True)
        res = run_child(["--child", "fit", train_path, test_path, str(args.trees)], N)
        d = res["dfrank"]
        rows = [[f"dfrank fit (default: {d['strategy']})", f"{d['seconds']:.1f} s",
                 f"{d['test']:.4f}", load_cell(Timing(*d["load"]))]]
        if "lightgbm" in res:
            g = res["lightgbm"]
            rows.append([f"LightGBM, {args.trees} trees", f"{g['seconds']:.1f} s",
                         f"{g['test']:.4f}", load_cell(Timing(*g["load"]))])
        print()
        print(table(rows, [f"on {res['threads']} threads", "time", "test NDCG@10",
                           LOAD_HEADER]))
        if "lightgbm" in res:
            print(f"dfrank / LightGBM time: {d['seconds'] / res['lightgbm']['seconds']:.2f}")
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
