"""Objective speed: single evaluations, batches and exact line searches, side by side with
a straightforward numpy baseline (X @ w, np.argsort per query, metric in numpy).

    python benchmarks/bench_objective.py [--reps 7]

OHSUMED Fold1 train (45 features) and MQ2008 Fold1 train (46 features) from ../shared/data.
Every repetition uses a different point (and coordinate), so no kernel is flattered by
branch prediction on one input. numba runs its own threads; dfrank uses no BLAS.
Targets (issue 4): one evaluation >= 10x RankLib's full evaluation (about 900 us on these
sets, i.e. <= 90 us); batch per point >= 15x the numpy baseline; one exact line search <=
the cost of 50 single evaluations ("line/eval": the median line over the mean evaluation,
each measured on its own; "side by side": the median over lines of each line's time over
that of 20 evaluations made right after it, after 5 untimed ones).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     measure, median_time, ratio, shared_path, table)

import dfrank  # noqa: E402

SETS = [("OHSUMED Fold1 train", "ohsumed-letor3/QueryLevelNorm/Fold1/train.txt.gz"),
        ("MQ2008 Fold1 train", "mq2008-letor4/Fold1/train.txt.gz")]


def numpy_metric(data, scores, metric):
    """The baseline: per query, argsort and the metric in numpy (exp gain NDCG@10, MAP)."""
    vals = []
    for q in range(data.n_queries):
        lo, hi = data.qptr[q], data.qptr[q + 1]
        order = np.lexsort((data.y[lo:hi], -scores[lo:hi]))  # ties: worst label first
        lab = data.y[lo:hi][order]
        if metric == "ndcg@10":
            disc = 1.0 / np.log2(np.arange(2, min(10, hi - lo) + 2))
            dcg = ((2.0 ** lab[:10] - 1) * disc).sum()
            ideal = ((2.0 ** np.sort(lab)[::-1][:10] - 1) * disc).sum()
            vals.append(dcg / ideal if ideal > 0 else 0.0)
        else:
            rel = lab >= 1
            if not rel.any():
                vals.append(0.0)
                continue
            prec = np.cumsum(rel) / np.arange(1, hi - lo + 1)
            vals.append(prec[rel].mean())
    return float(np.mean(vals))


def bench(label, data, reps):
    rng = np.random.default_rng(0)
    rows = []
    for metric in ("ndcg@10", "map"):
        obj = dfrank.LinearObjective(data, metric)
        sp = obj.space
        d1 = sp.dim
        pts = [sp.sample(rng) for _ in range(reps)]
        # the baseline computes the same thing
        w = sp.to_weights(pts[0])
        base_v = numpy_metric(data, data.X @ w, metric)
        assert abs(base_v - obj(pts[0])) < 1e-9, (base_v, obj(pts[0]))
        obj(pts[0])  # warm
        t_base = median_time(lambda p: numpy_metric(data, data.X @ sp.to_weights(p), metric),
                             pts)
        # single evaluations back to back, as an optimizer makes them (evaluations per
        # second over 200 different points; the median of 5 such runs)
        many = sp.sample(rng, 200)
        t_single = median_time(lambda _: [obj(p) for p in many], [None] * 5).per(len(many))
        batches = {P: [sp.sample(rng, P) for _ in range(max(3, reps // 2))] for P in (64, 1024)}
        t_batch = {P: median_time(lambda B: obj.batch(B), bs).per(P)
                   for P, bs in batches.items()}
        lines = [(sp.sample(rng), np.eye(d1)[rng.integers(d1)]) for _ in range(reps)]
        obj.line(*lines[0])
        t_line = median_time(lambda a: obj.line(*a), lines)
        # the same ratio side by side: each line, then 20 single evaluations (after 5
        # untimed ones, so the line's leftovers in the caches are not charged to them), so
        # a phase of the (shared) machine slows both alike; the median of the ratios
        warm, burst = sp.sample(rng, 5), sp.sample(rng, 20)
        ratios = []
        with measure() as side:
            for a in lines:
                t0 = time.perf_counter()
                obj.line(*a)
                t_l = time.perf_counter() - t0
                [obj(p) for p in warm]
                t0 = time.perf_counter()
                [obj(p) for p in burst]
                ratios.append(t_l / ((time.perf_counter() - t0) / len(burst)))
        rows.append([metric, f"{t_single * 1e6:.0f} us", f"{900 / (t_single * 1e6):.1f}x",
                     f"{t_base * 1e6:.0f} us", ratio(t_base, t_single, "{:.0f}x"),
                     f"{t_batch[64] * 1e6:.1f} us", ratio(t_base, t_batch[64], "{:.0f}x"),
                     f"{t_batch[1024] * 1e6:.1f} us", ratio(t_base, t_batch[1024], "{:.0f}x"),
                     f"{t_line * 1e3:.2f} ms", ratio(t_line, t_single, "{:.1f}"),
                     f"{np.median(ratios):.1f}",
                     load_cell(t_single, t_base, t_batch[64], t_batch[1024], t_line,
                               side.timing)])
    print(f"\n## {label}: {data.n_queries} queries, {data.n_docs} documents, "
          f"{data.n_features} features")
    print(table(rows, ["metric", "1 eval", "RankLib 900us/", "numpy eval", "numpy/",
                       "batch64 /pt", "numpy/", "batch1024 /pt", "numpy/", "line search",
                       "line/eval", "side by side", LOAD_HEADER]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=11)
    args = ap.parse_args()
    print(load_warning())
    try:  # the numpy baseline uses BLAS; idle BLAS threads must not spin against numba's
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(1)
    except ImportError:
        limit = None
    for label, rel in SETS:
        p = shared_path(rel)
        if p is None:
            print(f"{label}: skipped (../shared/data absent)")
            continue
        bench(label, dfrank.load_svmlight(p), args.reps)
    del limit
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
