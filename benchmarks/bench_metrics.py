"""Metric speed: dfrank vs ranx vs pytrec_eval, side by side in one run.

    python benchmarks/bench_metrics.py [--reps 5] [--queries 10000] [--docs 100] [--busy N]

For each dataset (synthetic 10,000 queries x 100 documents with graded labels 0-4, and
OHSUMED / MQ2008 Fold1 train from ../shared/data when present) and each metric (NDCG@10,
MAP, P@10, MRR): the median over repetitions, each on a different score vector, of the
metric time with inputs already converted. Input conversion and JIT compilation are timed
separately. Ratios = other library's time / dfrank's time, refused when the two were timed
under different loads. ``--busy N`` runs the whole comparison beside N processes spinning on
the CPU (a shared machine); every row says the load it was measured under.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, busy, fmt_ms, load_cell,  # noqa: E402
                     load_warning, median_time, ratio, shared_path, table, timed)

import dfrank  # noqa: E402

METRICS = {  # dfrank name: (ranx name, trec_eval measure, trec_eval result key)
    "ndcg@10": ("ndcg_burges@10", "ndcg_cut.10", "ndcg_cut_10"),
    "map": ("map", "map", "map"),
    "p@10": ("precision@10", "P.10", "P_10"),
    "mrr": ("mrr", "recip_rank", "recip_rank"),
}


def synthetic(nq, m, seed=0):
    rng = np.random.default_rng(seed)
    n = nq * m
    y = rng.choice(5, size=n, p=[0.5, 0.25, 0.15, 0.07, 0.03]).astype(float)
    X = np.zeros((n, 1))
    return dfrank.RankingData.from_arrays(X, y, np.repeat(np.arange(nq), m))


def score_vectors(data, reps, seed=1):
    rng = np.random.default_rng(seed)
    # scores correlated with labels, continuous so no library's tie rule matters
    return [data.y * 0.5 + rng.normal(size=data.n_docs) for _ in range(reps)]


def to_dicts(data, scores):
    qids = [str(q) for q in data.qids]
    docs = [f"d{i}" for i in range(data.n_docs)]
    qrels, run = {}, {}
    for qi, q in enumerate(qids):
        lo, hi = data.qptr[qi], data.qptr[qi + 1]
        qrels[q] = {docs[i]: int(data.y[i]) for i in range(lo, hi) if data.y[i] > 0}
        run[q] = {docs[i]: float(scores[i]) for i in range(lo, hi)}
    return qrels, run


def bench(name, data, reps):
    print(f"\n## {name}: {data.n_queries} queries, {data.n_docs} documents")
    S = score_vectors(data, reps)
    rows = []
    # ---------------- dfrank: conversion = building RankingData + binding the metric
    t_conv = timed(dfrank.RankingData.from_arrays, data.X, data.y,
                   np.repeat(data.qids, data.query_sizes))[1]
    results = {}
    for met in METRICS:
        (_, t_first) = timed(dfrank.evaluate, S[0], data, met)  # binds constants once
        t = median_time(lambda s: dfrank.evaluate(s, data, met), S)
        results[met] = {"dfrank": t}
        results[met]["dfrank_first"] = t_first
    # ---------------- ranx
    try:
        import ranx
        dicts = [to_dicts(data, s) for s in S]
        t0 = time.perf_counter()
        qrels = ranx.Qrels.from_dict(dicts[0][0])
        runs = [ranx.Run.from_dict(d[1]) for d in dicts]
        t_conv_ranx = (time.perf_counter() - t0) / len(runs)
        for met, (rname, _, _) in METRICS.items():
            ranx.evaluate(qrels, runs[0], rname)  # JIT warm-up
            results[met]["ranx"] = median_time(lambda r: ranx.evaluate(qrels, r, rname), runs)
    except ImportError:
        dicts, t_conv_ranx = [to_dicts(data, s) for s in S], None
    # ---------------- pytrec_eval
    try:
        import pytrec_eval
        t0 = time.perf_counter()
        evs = {met: pytrec_eval.RelevanceEvaluator(dicts[0][0], {m_}) for met, (_, m_, _) in
               METRICS.items()}
        t_conv_te = (time.perf_counter() - t0) / len(METRICS)
        for met in METRICS:
            ev = evs[met]
            results[met]["pytrec_eval"] = median_time(lambda d: ev.evaluate(d[1]), dicts)
    except ImportError:
        t_conv_te = None
    # ---------------- agreement on this tie-free input (linear gain where trec_eval uses it)
    for met, (rname, m_, key) in METRICS.items():
        res = results[met]
        ours = dfrank.evaluate(S[0], data, met, gain="linear" if met == "ndcg@10" else "exp")
        if "pytrec_eval" in res:
            per = evs[met].evaluate(dicts[0][1])
            te = np.mean([per.get(str(q), {}).get(key, 0.0) for q in data.qids])
            res["check"] = f"{abs(ours - te):.1e}"
        row = [met, fmt_ms(res["dfrank"])]
        for lib in ("ranx", "pytrec_eval"):
            if lib in res:
                row += [fmt_ms(res[lib]), ratio(res[lib], res["dfrank"])]
            else:
                row += ["n/a", ""]
        row += [res.get("check", ""), load_cell(*[res[k] for k in ("dfrank", "ranx",
                                                                   "pytrec_eval") if k in res])]
        rows.append(row)
    print(table(rows, ["metric", "dfrank", "ranx", "ranx/dfrank", "pytrec_eval",
                       "trec/dfrank", "|dfrank-trec|", LOAD_HEADER]))
    print(f"input conversion: dfrank RankingData.from_arrays {fmt_ms(t_conv)}; first "
          f"evaluate incl. per-query constants {fmt_ms(results['ndcg@10']['dfrank_first'])}; "
          + (f"ranx Qrels/Run.from_dict {fmt_ms(t_conv_ranx)} per run; " if t_conv_ranx else "")
          + (f"pytrec_eval RelevanceEvaluator {fmt_ms(t_conv_te)}" if t_conv_te else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--busy", type=int, default=0,
                    help="processes spinning on the CPU during the measurements")
    args = ap.parse_args()
    print(load_warning())
    with busy(args.busy):
        run(args)
    print(LOAD_NOTE)


def run(args):
    import numba
    # JIT compile (or cache load) of the metric kernels, timed once
    tiny = synthetic(3, 5)
    t0 = time.perf_counter()
    for met in METRICS:
        dfrank.evaluate(np.arange(15.0), tiny, met)
    print(f"dfrank kernel compile/cache load: {time.perf_counter() - t0:.2f} s (excluded below)")
    print(f"numba: {numba.get_num_threads()} threads, {numba.threading_layer()} layer; "
          f"{args.busy} busy processes beside")
    bench(f"synthetic {args.queries} x {args.docs}", synthetic(args.queries, args.docs),
          args.reps)
    for label, rel in [("OHSUMED Fold1 train", "ohsumed-letor3/QueryLevelNorm/Fold1/train.txt.gz"),
                       ("MQ2008 Fold1 train", "mq2008-letor4/Fold1/train.txt.gz")]:
        p = shared_path(rel)
        if p is None:
            print(f"\n## {label}: skipped (../shared/data absent)")
            continue
        bench(label, dfrank.load_svmlight(p), args.reps)


if __name__ == "__main__":
    main()
