"""Learned fusion: dfrank's exact coordinate ascent against ranx's optimize_fusion grid,
side by side in one run, end to end (reading the files included).

    python benchmarks/bench_fusion.py [--set mq2008|ohsumed] [--metric map] [--reps 3]

The runs are built from real data: each of the k single LETOR features with the highest
training MAP ranks every query's documents (docnos from the files), the judgments are the
qrels. dfrank: ``dfrank.fuse(qrels_file, run_files, norm="minmax")``; ranx:
``Qrels.from_file``, ``Run.from_file`` per run, ``optimize_fusion(norm="min-max",
method="wsum", step=0.1)`` and ``fuse`` with the weights it found. Both training values are
computed the same way (trec_eval's, on the fused run). With 10 runs ranx's grid (11^10
tuples) is out of reach and only dfrank runs.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     median_of, ratio, shared_path, table, timed)

import dfrank  # noqa: E402
from dfrank.io.forms import run_to_trec_lines  # noqa: E402

SETS = {"mq2008": "mq2008-letor4/Fold1/train.txt.gz",
        "ohsumed": "ohsumed-letor3/QueryLevelNorm/Fold1/train.txt.gz"}


def write_runs(data, k, folder):
    """The qrels file and the run files of the k best single features (by MAP)."""
    qids = [str(q) for q in data.qids]
    docs = np.asarray(data.docids if data.docids is not None else
                      np.arange(data.n_docs)).astype(str)
    maps = []
    for j in range(data.n_features):
        if np.all(data.X[:, j] == data.X[0, j]):
            maps.append(-1.0)
            continue
        maps.append(dfrank.evaluate(data.X[:, j], data, "map", ties="stable"))
    best = np.argsort(maps)[::-1][:k]
    qp = os.path.join(folder, "qrels.txt")
    with open(qp, "w") as f:
        for i, q in enumerate(qids):
            lo, hi = data.qptr[i], data.qptr[i + 1]
            f.writelines(f"{q} 0 {docs[r]} {int(data.y[r])}\n" for r in range(lo, hi))
    paths = {}
    for j in best:
        run = {}
        for i, q in enumerate(qids):
            lo, hi = data.qptr[i], data.qptr[i + 1]
            run[q] = {docs[r]: float(data.X[r, j]) for r in range(lo, hi)}
        name = f"f{data.feature_ids[j]}"
        paths[name] = os.path.join(folder, f"{name}.run")
        with open(paths[name], "w") as f:
            f.writelines(run_to_trec_lines(run, name))
    return qp, paths


def ranx_end_to_end(qp, paths, metric):
    from ranx import Qrels, Run, fuse, optimize_fusion

    qrels = Qrels.from_file(qp, kind="trec")
    runs = [Run.from_file(p, kind="trec") for p in paths.values()]
    best = optimize_fusion(qrels=qrels, runs=runs, norm="min-max", method="wsum",
                           metric=metric, step=0.1, show_progress=False)
    fused = fuse(runs=runs, norm="min-max", method="wsum", params=best)
    return fused, best


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="mq2008", choices=sorted(SETS))
    ap.add_argument("--metric", default="map")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lines", type=int, default=0,
                    help="also fuse two synthetic runs of this many lines (2000000 for the "
                         "web-sized case): time and peak memory of the command")
    args = ap.parse_args()
    path = shared_path(SETS[args.set])
    if path is None:
        print("skipped: ../shared/data is absent")
        return
    print(load_warning())
    data = dfrank.load_svmlight(path)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in (5, 10):
            folder = os.path.join(tmp, str(k))
            os.makedirs(folder)
            qp, paths = write_runs(data, k, folder)
            dfrank.fuse(qp, paths, args.metric)        # kernels warm
            ours = [timed(dfrank.fuse, qp, paths, args.metric) for _ in range(args.reps)]
            res, t_ours = ours[-1][0], median_of([t for _, t in ours])
            out = os.path.join(folder, "fused.run")
            cmd = [timed(command, qp, list(paths.values()), args.metric, out)[1]
                   for _ in range(args.reps)]
            t_cmd = median_of(cmd)
            theirs_v, t_theirs = None, None
            if k <= 5:
                (fused, best), t_theirs = timed(ranx_end_to_end, qp, paths, args.metric)
                fp = os.path.join(folder, "ranx.run")
                with open(fp, "w") as f:
                    f.writelines(run_to_trec_lines(fused.to_dict(), "ranx"))
                theirs_v = dfrank.evaluate_run(qp, fp, [_trec_name(args.metric)]).all[
                    _trec_name(args.metric)]
            rows.append([k, f"{res.value:.4f}", "" if theirs_v is None else f"{theirs_v:.4f}",
                         f"{t_ours:.2f} s", f"{t_cmd:.2f} s",
                         "" if t_theirs is None else f"{t_theirs:.1f} s",
                         "" if t_theirs is None else ratio(t_theirs, t_ours, "{:.0f}x"),
                         "" if t_theirs is None else f"{t_theirs / t_cmd:.0f}x",
                         f"{res.baselines['CombSUM (equal weights)']['value']:.4f}",
                         max(v["value"] for n, v in res.baselines.items()
                             if n.startswith("run")),
                         load_cell(t_ours, *(() if t_theirs is None else (t_theirs,)))])
    print(f"\n{args.set} Fold1 train: {data.n_queries} queries; runs = the best single "
          f"features by {args.metric}; minmax normalization, wsum")
    print(table([r[:9] + [f"{r[9]:.4f}", r[10]] for r in rows],
                ["runs", f"dfrank {args.metric}", f"ranx grid {args.metric}", "dfrank.fuse",
                 "dfrank fuse (command)", "ranx", "ranx/dfrank.fuse", "ranx/command",
                 "CombSUM", "best run", LOAD_HEADER]))
    print("times: end to end from the files (dfrank.fuse also computes the baselines and "
          "their significance tests; the command is a fresh process that also writes the "
          "fused run; its load figure counts that process, so its ratio is printed whatever the "
          "load); values: trec_eval's on each fused run")
    if args.lines:
        large(args.lines, args.metric)
    print(LOAD_NOTE)


def command(qp, runs, metric, out):
    subprocess.run(["dfrank", "fuse", "--qrels", qp, *runs, "--metric", metric, "-o", out,
                    "--quiet"],
                   check=True, capture_output=True)


def large(n_lines, metric, n_queries=2000, seed=0):
    """Two synthetic runs of ``n_lines`` lines each (``n_queries`` queries, half of each
    query's documents shared), fused by the command: its time and peak memory."""
    rng = np.random.default_rng(seed)
    per_q = n_lines // n_queries
    with tempfile.TemporaryDirectory() as tmp:
        qp = os.path.join(tmp, "qrels.txt")
        with open(qp, "w") as f:
            for q in range(n_queries):
                rel = rng.choice(2 * per_q, 20, replace=False)
                f.writelines(f"q{q} 0 d{q}_{d} {1 + d % 2}\n" for d in rel)
        runs = []
        for r in range(2):
            path = os.path.join(tmp, f"r{r}.run")
            with open(path, "w") as f:
                for q in range(n_queries):
                    docs = np.arange(per_q) + r * per_q // 2
                    s = np.sort(rng.random(per_q))[::-1]
                    f.write("".join(f"q{q} Q0 d{q}_{d} {i + 1} {x:.6f} r{r}\n"
                                    for i, (d, x) in enumerate(zip(docs, s))))
            runs.append(path)
        size = sum(os.path.getsize(p) for p in runs)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        command(qp, runs, metric, os.path.join(tmp, "fused.run"))
        secs = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"\ntwo runs of {n_lines:,} lines ({size / 2**20:.0f} MiB), {n_queries} queries: "
          f"dfrank fuse {secs:.1f} s, peak resident {peak / 2**20:.2f} GiB"
          + ("" if peak > before else " (at most the earlier peak)"))


def _trec_name(metric):
    m = metric.lower()
    if m == "map":
        return "map"
    if m.startswith("ndcg@"):
        return f"ndcg_cut_{m[5:]}"
    if m.startswith("p@"):
        return f"P_{m[2:]}"
    raise ValueError(f"bench_fusion compares map, ndcg@k and p@k, got {metric!r}")


if __name__ == "__main__":
    main()
