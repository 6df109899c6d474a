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
import sys
import tempfile

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
            theirs_v, t_theirs = None, None
            if k <= 5:
                (fused, best), t_theirs = timed(ranx_end_to_end, qp, paths, args.metric)
                fp = os.path.join(folder, "ranx.run")
                with open(fp, "w") as f:
                    f.writelines(run_to_trec_lines(fused.run(), "ranx"))
                theirs_v = dfrank.evaluate_run(qp, fp, [_trec_name(args.metric)]).all[
                    _trec_name(args.metric)]
            rows.append([k, f"{res.value:.4f}", "" if theirs_v is None else f"{theirs_v:.4f}",
                         f"{t_ours:.2f} s", "" if t_theirs is None else f"{t_theirs:.1f} s",
                         "" if t_theirs is None else ratio(t_theirs, t_ours, "{:.0f}x"),
                         f"{res.baselines['CombSUM (equal weights)']['value']:.4f}",
                         max(v["value"] for n, v in res.baselines.items()
                             if n.startswith("run")),
                         load_cell(t_ours, *(() if t_theirs is None else (t_theirs,)))])
    print(f"\n{args.set} Fold1 train: {data.n_queries} queries; runs = the best single "
          f"features by {args.metric}; minmax normalization, wsum")
    print(table([[r[0], r[1], r[2], r[3], r[4], r[5], r[6], f"{r[7]:.4f}", r[8]] for r in rows],
                ["runs", f"dfrank {args.metric}", f"ranx grid {args.metric}", "dfrank",
                 "ranx", "ranx/dfrank", "CombSUM", "best run", LOAD_HEADER]))
    print("times: end to end from the files (dfrank.fuse also computes the baselines and "
          "their significance tests); values: trec_eval's on each fused run")
    print(LOAD_NOTE)


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
