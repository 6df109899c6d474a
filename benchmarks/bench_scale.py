"""Web-sized data on one machine: load, cache, evaluate, line search, one sweep.

    python benchmarks/bench_scale.py            # 1,000,000 documents x 136 features
    python benchmarks/bench_scale.py --full     # 3,770,000 x 136 (MSLR-WEB30K's size)

A synthetic LETOR-like set (``dfrank.data.datasets.make_letor_like``, about 120 documents per
query, float32, six decimals as in MSLR) is written as an SVMlight text file, then:
- the text load (float32) in a fresh process: wall time and peak memory (the growth of the
  process's peak resident set, reset just before the load) against the final arrays;
- the binary cache: ``RankingData.save`` once, ``RankingData.load(mmap=True)`` after;
- NDCG@10 of one weight vector, of a batch of 64 (and the same batch with the queries in
  as few groups as a LETOR-sized set gets, each group's features then beyond the cache),
  one exact line search, and one coordinate-ascent sweep over all d + 1 = 137 simplex
  coordinates (exact line search);
- what ``dfrank fit`` costs here: its whole default (``dfrank.registry.DEFAULT_STRATEGY``),
  timed; again in a fresh process on a float64 cache, with its peak anonymous memory
  (RssAnon, sampled every 2 ms) beyond the process before the load, against the feature
  matrix; and one run of ``es`` (4,000 evaluations) times the 10 it makes by default; beside
  them LightGBM's ``LGBMRanker(n_estimators=500)`` on every core, its Dataset construction
  included (``--trees``; 0 leaves it out).
Times are medians of three where it is cheap enough to repeat.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_now,  # noqa: E402
                     load_warning, table)

import dfrank  # noqa: E402
from dfrank.io import save_svmlight  # noqa: E402
from dfrank.metrics import bound  # noqa: E402
from dfrank.objectives.objective import LinearObjective  # noqa: E402

LOAD_SCRIPT = r"""
import json, sys, time
import numpy as np
import dfrank

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

tiny = sys.argv[2]
dfrank.load_svmlight(tiny, dtype=np.float32)            # compile / load the kernel first
with open("/proc/self/clear_refs", "w") as f:           # reset the peak (VmHWM) to now
    f.write("5")
before = status("VmRSS")
t = time.perf_counter()
data = dfrank.load_svmlight(sys.argv[1], dtype=np.float32)
secs = time.perf_counter() - t
peak = status("VmHWM") - before
size = sum(a.nbytes for a in (data.X, data.y, data.qptr, data.qids))
t = time.perf_counter()
data.save(sys.argv[3])
save = time.perf_counter() - t
print(json.dumps({"seconds": secs, "peak": peak, "size": size, "save": save,
                  "n_docs": data.n_docs, "n_queries": data.n_queries}))
"""


FIT_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
import numpy as np
import dfrank
from _common import AnonPeak, rss_anon

# the kernels loaded first, on a small set (their memory is the process's, not the fit's)
dfrank.maximize(dfrank.data.datasets.make_letor_like(n_queries=1100, docs_per_query=4,
                                                n_features=3, seed=0), seed=0)
before = rss_anon()
watch = AnonPeak().start()
data = dfrank.RankingData.load(sys.argv[1], mmap=True)
t = time.perf_counter()
r = dfrank.maximize(data, seed=0)
secs = time.perf_counter() - t
peak = watch.stop() - before
print(json.dumps({"seconds": secs, "peak": peak, "size": data.X.nbytes, "value": r.value,
                  "strategy": r.strategy, "n_evals": r.n_evals}))
"""


def median3(fn):
    times = []
    for i in range(3):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="3,770,000 documents")
    ap.add_argument("--docs", type=int, help="number of documents (overrides --full)")
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--dir", help="where to write the files (default: a temporary dir)")
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--trees", type=int, default=500,
                    help="LightGBM's trees, timed beside dfrank fit (0: no LightGBM)")
    args = ap.parse_args()
    n_docs = args.docs or (3_770_000 if args.full else 1_000_000)
    print(load_warning())
    folder = args.dir or tempfile.mkdtemp(prefix="dfrank-scale-")
    os.makedirs(folder, exist_ok=True)
    text = os.path.join(folder, f"synthetic_{n_docs}.txt")
    cache = os.path.join(folder, f"synthetic_{n_docs}.dfrank")
    tiny = os.path.join(folder, "tiny.txt")
    rows = []
    loads = []

    t = time.perf_counter()
    data = dfrank.data.datasets.make_letor_like(n_queries=max(1, n_docs // 120),
                                           docs_per_query=(60, 180), n_features=args.features,
                                           seed=0, dtype=np.float32)
    rows.append(["generate (make_letor_like)", f"{time.perf_counter() - t:.1f} s",
                 f"{data.n_docs:,} docs, {data.n_queries:,} queries"])
    loads.append(load_cell(load_now()))
    t = time.perf_counter()
    save_svmlight(data, text)
    save_svmlight(data.subset(np.arange(3)), tiny)
    rows.append(["write SVMlight text (save_svmlight)", f"{time.perf_counter() - t:.1f} s",
                 f"{os.path.getsize(text) / 2**30:.2f} GiB"])
    loads.append(load_cell(load_now()))
    del data

    out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, text, tiny, cache],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    rows.append(["load text, float32 (fresh process)", f"{res['seconds']:.1f} s",
                 f"peak +{res['peak'] / 2**30:.2f} GiB = {res['peak'] / res['size']:.2f}x "
                 f"the arrays ({res['size'] / 2**30:.2f} GiB)"])
    loads.append(load_cell(load_now()))
    rows.append(["save binary cache", f"{res['save']:.1f} s", ""])
    loads.append(load_cell(load_now()))
    t = time.perf_counter()
    data = dfrank.RankingData.load(cache, mmap=True)
    rows.append(["load binary cache (mmap)", f"{(time.perf_counter() - t) * 1e3:.1f} ms",
                 repr(data)[:60]])
    loads.append(load_cell(load_now()))

    t = time.perf_counter()
    obj = LinearObjective(data, args.metric)
    rows.append([f"objective {args.metric} (per-query constants)",
                 f"{time.perf_counter() - t:.1f} s", ""])
    loads.append(load_cell(load_now()))
    rng = np.random.default_rng(0)
    pts = obj.space.sample(rng, 64 * 4)
    obj(pts[0])     # first touch of the mapped pages and of the kernels
    one = median3(lambda i: obj(pts[i + 1]))
    rows.append([f"one evaluation of {args.metric}", f"{one * 1e3:.0f} ms", ""])
    loads.append(load_cell(load_now()))
    batch = median3(lambda i: obj.batch(pts[64 * i:64 * (i + 1)]))
    rows.append(["one batch of 64 weight vectors", f"{batch:.2f} s",
                 f"{batch / 64 * 1e3:.0f} ms per vector ({one * 64 / batch:.1f}x)"])
    loads.append(load_cell(load_now()))
    chunks = bound.n_chunks()
    n_groups = obj.bound._n_groups(obj.XT, obj.rows, chunks)
    saved = bound._GROUP_BYTES
    bound._GROUP_BYTES = 1 << 62       # as many groups as chunks, whatever their size
    try:
        few = median3(lambda i: LinearObjective(data, args.metric).batch(
            pts[64 * i:64 * (i + 1)]))
    finally:
        bound._GROUP_BYTES = saved
    rows.append([f"the same in {chunks} groups of queries, not {n_groups}", f"{few:.2f} s",
                 f"{few / batch:.1f}x the time: a group's features no longer fit in cache"])
    loads.append(load_cell(load_now()))
    dim = obj.space.dim

    def line(i):      # from a random interior point along a simplex coordinate
        e = np.zeros(dim)
        e[i] = 1.0
        obj.line(pts[i], e - 1.0 / dim)
    ls = median3(line)
    rows.append(["one exact line search", f"{ls:.2f} s", f"{ls / one:.0f} evaluations' time"])
    loads.append(load_cell(load_now()))
    t = time.perf_counter()
    r = dfrank.maximize(obj, strategy="ca", restarts=1, max_sweeps=1, seed=0)
    sweep = time.perf_counter() - t
    kept = data.derived.coordinate_lines
    kept_mb = sum(u.nbytes + order.nbytes for u, order in kept.values()) / 2**20
    rows.append([f"one coordinate-ascent sweep ({dim} coordinates)", f"{sweep:.1f} s",
                 f"{args.metric} {r.value:.4f} after it (random point: "
                 f"{obj(pts[-1]):.4f}); {len(kept)} lines kept ({kept_mb:.0f} MiB)"])
    loads.append(load_cell(load_now()))
    t = time.perf_counter()
    r = dfrank.maximize(obj, seed=0)
    run = time.perf_counter() - t
    rows.append([f"dfrank fit (its default, {r.strategy})", f"{run / 60:.1f} min",
                 f"{r.n_evals:,} evaluations ({run / r.n_evals * 1e3:.1f} ms each), "
                 f"{args.metric} {r.value:.4f}"])
    loads.append(load_cell(load_now()))
    cache64 = os.path.join(folder, f"synthetic_{n_docs}_float64.dfrank")
    dfrank.RankingData(data.X.astype(np.float64), data.y, data.qptr, data.qids,
                       feature_ids=data.feature_ids).save(cache64)
    out = subprocess.run([sys.executable, "-c", FIT_SCRIPT, cache64,
                          os.path.dirname(os.path.abspath(__file__))],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    rows.append([f"dfrank fit, float64 cache, fresh process ({res['strategy']})",
                 f"{res['seconds'] / 60:.1f} min",
                 f"peak anonymous memory +{res['peak'] / 2**20:,.0f} MiB = "
                 f"{res['peak'] / res['size']:.2f}x the features ({res['size'] / 2**20:,.0f} "
                 f"MiB); {args.metric} {res['value']:.4f}"])
    loads.append(load_cell(load_now()))
    t = time.perf_counter()
    r = dfrank.maximize(obj, strategy="es", restarts=1, seed=0)
    run = time.perf_counter() - t
    rows.append(["dfrank fit --strategy es, estimated", f"{10 * run / 60:.1f} min",
                 f"10 x one run of {r.n_evals:,} evaluations ({run:.0f} s)"])
    loads.append(load_cell(load_now()))
    if args.trees:
        import lightgbm

        t = time.perf_counter()
        model = lightgbm.LGBMRanker(n_estimators=args.trees, n_jobs=os.cpu_count(),
                                    verbose=-1)
        model.fit(data.X, data.y, group=np.diff(data.qptr))
        run = time.perf_counter() - t
        scores = model.predict(data.X)
        rows.append([f"LightGBM LGBMRanker({args.trees} trees), {os.cpu_count()} threads",
                     f"{run / 60:.1f} min", f"Dataset construction included; "
                     f"{args.metric} {dfrank.evaluate(scores, data, args.metric):.4f}"])
        loads.append(load_cell(load_now()))
    print(f"\n{n_docs:,} documents x {args.features} features, float32 "
          f"(files in {folder})")
    print(table([r + [load] for r, load in zip(rows, loads)],
                ["step", "time", "notes", LOAD_HEADER]))
    print(LOAD_NOTE + " Here the load is sampled right after each step.")


if __name__ == "__main__":
    main()
