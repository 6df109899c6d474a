"""The data-parallel fit on a Dask cluster (dfrank.cluster), against one process and
against LightGBM's DaskLGBMRanker, in one run.

    python benchmarks/bench_dask.py                  # 1,000,000 training documents x 136
    python benchmarks/bench_dask.py --docs 200000    # a quick look

A synthetic LETOR-like set (``make_letor_like``, float64, about 120 documents per query)
is split by query into a training set of ``--docs`` documents, cut into four shards
(binary caches, which the workers map), and a test set of a tenth of that. Then, on a
``LocalCluster`` of single-threaded worker processes, each with a memory limit:

- the default fit (``dfrank.maximize(data, seed=0)``) on 1, 2 and 4 workers, beside the
  same fit in a fresh process on the whole training set with as many numba threads as
  the cluster has workers (1 and 2; a 2-core machine has no third), and whether the two
  models are equal bit for bit;
- each worker's peak anonymous memory (RssAnon of the whole worker process, sampled every
  5 ms: the pages only swap could free, not the mapped shards) against its share of the
  features (the worker nearest its bound is shown);
- per line search: the bytes and breakpoint rows the workers send, the seconds waiting for
  them and the seconds the driver spends choosing;
- ``lightgbm.DaskLGBMRanker(n_estimators=500)`` on the 2-worker cluster, the same shards
  (in memory, as Dask arrays), and both models' NDCG@10 on the test set.
The load of the machine is printed beside each timing.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import LOAD_HEADER, LOAD_NOTE, load_cell, load_now, load_warning, table  # noqa: E402

import dfrank  # noqa: E402

N_SHARDS = 4

ONE_PROCESS = r"""
import json, sys, time
import dfrank
data = dfrank.RankingData.load(sys.argv[1])
dfrank.maximize(dfrank.data.datasets.make_letor_like(n_queries=1100, docs_per_query=4,
                                                n_features=3, seed=0), seed=0)  # kernels
t = time.perf_counter()
r = dfrank.maximize(data, seed=0)
print(json.dumps({"seconds": time.perf_counter() - t, "value": r.value,
                  "weights": r.weights.tolist(), "strategy": r.strategy}))
"""


def start_watch(dask_worker):
    """In a worker: sample its RssAnon every 5 ms from now on (the peak kept), as
    /proc/self/statm's resident less shared pages (RssFile + RssShmem), read from a file
    kept open: a sample costs microseconds, so the watch barely takes from the fit it
    watches."""
    import threading

    fd = os.open("/proc/self/statm", os.O_RDONLY)
    page = os.sysconf("SC_PAGE_SIZE")

    def anon():
        fields = os.pread(fd, 128, 0).split()
        return (int(fields[1]) - int(fields[2])) * page

    worker = dask_worker
    worker.dfrank_peak = anon()

    def watch():
        while True:
            worker.dfrank_peak = max(worker.dfrank_peak, anon())
            time.sleep(0.005)

    threading.Thread(target=watch, daemon=True).start()


def read_watch(dask_worker):
    return dask_worker.dfrank_peak


def write_shards(data, folder):
    """The training set in N_SHARDS binary caches, cut between queries; their feature
    bytes."""
    bounds = np.linspace(0, data.n_queries, N_SHARDS + 1).astype(int)
    sizes = []
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = data.subset(np.arange(a, b))
        part.save(os.path.join(folder, f"train-{k}.dfrank"))
        sizes.append(part.X.nbytes)
    return sizes


def one_process(cache, threads):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", ONE_PROCESS, cache], capture_output=True,
                         text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def on_cluster(shards, n_workers, limit):
    """The default fit on ``n_workers`` single-threaded workers: seconds, result,
    traffic, each worker's peak RssAnon growth and the time to read the shards."""
    from distributed import Client, LocalCluster

    from dfrank.cluster import ClusterObjective, from_shards

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      memory_limit=limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(start_watch)
        t = time.perf_counter()
        data = from_shards(shards, client=client)
        objective = ClusterObjective(data, "ndcg@10")
        read = time.perf_counter() - t
        t = time.perf_counter()
        result = dfrank.maximize(objective, seed=0)
        secs = time.perf_counter() - t
        peaks = client.run(read_watch)
        owners = client.who_has(data.parts)
    return secs, result, dict(objective.traffic), peaks, owners, read


def lightgbm_on_cluster(folder, test, limit, trees):
    import dask
    import dask.array as da
    import lightgbm
    from distributed import Client, LocalCluster

    def load(path):
        return dfrank.RankingData.load(path, mmap=False)

    paths = sorted(glob.glob(os.path.join(folder, "train-*.dfrank")))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        parts = [dask.delayed(load)(p) for p in paths]
        heads = [dfrank.RankingData.load(p) for p in paths]   # shapes only (mapped)
        X = da.concatenate([da.from_delayed(dask.delayed(lambda d: d.X)(d), h.X.shape,
                                            np.float64) for d, h in zip(parts, heads)])
        y = da.concatenate([da.from_delayed(dask.delayed(lambda d: d.y)(d), h.y.shape,
                                            np.float64) for d, h in zip(parts, heads)])
        g = da.concatenate([da.from_delayed(dask.delayed(lambda d: np.diff(d.qptr))(d),
                                            (h.n_queries,), np.int64)
                            for d, h in zip(parts, heads)])
        X, y, g = client.persist([X, y, g])
        client.wait_for_workers(2)
        t = time.perf_counter()
        model = lightgbm.DaskLGBMRanker(n_estimators=trees, client=client, verbose=-1)
        model.fit(X, y, group=g)
        secs = time.perf_counter() - t
        scores = model.to_local().predict(test.X)
    return secs, float(dfrank.evaluate(scores, test, "ndcg@10"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000, help="training documents")
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--trees", type=int, default=500, help="DaskLGBMRanker's trees (0: none)")
    ap.add_argument("--dir", help="where to write the shards (default: a temporary dir)")
    args = ap.parse_args()
    print(load_warning())
    folder = args.dir or tempfile.mkdtemp(prefix="dfrank-dask-")
    os.makedirs(folder, exist_ok=True)
    per_query = 120
    n_train = max(N_SHARDS, args.docs // per_query)
    whole = dfrank.data.datasets.make_letor_like(
        n_queries=n_train + max(1, n_train // 10), docs_per_query=(60, 180),
        n_features=args.features, seed=0)
    train = whole.subset(np.arange(n_train))
    test = whole.subset(np.arange(n_train, whole.n_queries))
    del whole
    cache = os.path.join(folder, "train.dfrank")
    train.save(cache)
    sizes = write_shards(train, folder)
    shards = os.path.join(folder, "train-*.dfrank")
    size = train.X.nbytes
    print(f"{train.n_docs:,} training documents x {args.features} features, float64 "
          f"({size / 2**20:,.0f} MiB of features in {N_SHARDS} shards), "
          f"{test.n_docs:,} test documents; files in {folder}")

    def limit(workers):
        """A worker's memory limit: Dask measures its whole resident set, where the shards
        it maps (X and its transposed copy) count beside what it allocates."""
        return int(4 * size / workers + (1 << 30))

    rows, loads, local = [], [], {}
    for threads in (1, 2):
        res = one_process(cache, threads)
        local[threads] = res
        rows.append([f"one process, {threads} thread{'s' * (threads > 1)}",
                     f"{res['seconds']:.1f} s", "", "", "",
                     f"NDCG@10 train {res['value']:.4f}, test "
                     f"{dfrank.evaluate_linear(np.array(res['weights']), test):.4f}"])
        loads.append(load_cell(load_now()))
    lines = None
    for workers in (1, 2, 4):
        secs, r, traffic, peaks, owners, read = on_cluster(shards, workers, limit(workers))
        same = local[min(workers, 2)]
        equal = np.array_equal(r.weights, np.array(same["weights"])) and \
            r.value == same["value"]
        share = {w: 0 for w in peaks}
        for k, where in enumerate(owners.values()):
            for w in where:
                share[w] += sizes[k]
        bound = {w: 1.5 * share[w] + 300 * 2**20 for w in peaks}
        w = max(peaks, key=lambda w: peaks[w] / bound[w])   # the closest to its bound
        within = all(peaks[v] <= bound[v] for v in peaks)
        ratio = secs / same["seconds"] if workers <= 2 else None
        rows.append([f"cluster, {workers} worker{'s' * (workers > 1)} x 1 thread",
                     f"{secs:.1f} s",
                     f"{ratio:.2f}x" if ratio else "-",
                     "yes" if equal else "NO" if r.strategy == same["strategy"] else
                     f"- ({same['strategy']} there: below 1,000 queries auto picks it in "
                     "one process)",
                     f"{peaks[w] / 2**20:,.0f} MiB, share {share[w] / 2**20:,.0f} MiB "
                     f"({'all within' if within else 'ABOVE'} share x 1.5 + 300 MiB)",
                     f"read shards {read:.1f} s; {traffic['lines']} lines"])
        loads.append(load_cell(load_now()))
        if workers == 2:
            lines = traffic
            test_value = dfrank.evaluate_linear(r.weights, test)
    print()
    print(table([r + [load] for r, load in zip(rows, loads)],
                ["fit (default, seed 0)", "time", "/ one process", "same model",
                 "peak RssAnon of a worker", "notes", LOAD_HEADER]))
    n = max(lines["lines"], 1)
    per = {k: lines[k] / n for k in ("bytes", "rows", "gather_seconds", "choose_seconds")}
    print(f"\nper line search (2 workers, {n} lines): {per['bytes'] / 2**20:.1f} MiB and "
          f"{per['rows']:,.0f} breakpoint rows sent to the driver; "
          f"{per['gather_seconds'] * 1e3:.0f} ms waiting for the workers (their sweeps and "
          f"the transfer), {per['choose_seconds'] * 1e3:.0f} ms choosing on the driver")
    scale, workers16 = 100e6 / train.n_docs, 16
    sweeps = per["gather_seconds"] * scale / workers16 * 2   # each worker's share grows
    choose = per["choose_seconds"] * scale                    # the driver's grows with all
    print(f"on paper, 100M documents on 16 workers (x{scale:.0f} the data, each worker "
          f"{scale / workers16 * 2:.1f}x the documents of one of these 2): per line "
          f"{per['bytes'] * scale / 2**30:.1f} GiB to the driver, {sweeps:.1f} s of "
          f"workers' sweeps, {choose:.1f} s choosing; x {n} lines = "
          f"{n * (sweeps + choose) / 60:.0f} min plus the transfer "
          f"({per['bytes'] * scale * n / 2**30:,.0f} GiB at the network's rate)")
    if args.trees:
        secs, value = lightgbm_on_cluster(folder, test, limit(2), args.trees)
        two = [r for r in rows if r[0].startswith("cluster, 2 ")][0]
        print(f"\nlightgbm.DaskLGBMRanker({args.trees} trees), 2 workers x 1 thread: "
              f"{secs:.1f} s, test NDCG@10 {value:.4f}; dfrank's default fit on the same "
              f"cluster: {two[1]} = {float(two[1].split()[0]) / secs:.2f} of its time, "
              f"test NDCG@10 {test_value:.4f} ({load_cell(load_now())})")
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
