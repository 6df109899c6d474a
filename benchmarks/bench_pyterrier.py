"""dfrank.pyterrier.GridSearch beside pt.GridSearch, on the same pipeline and parameter map.

    python benchmarks/bench_pyterrier.py [--collection cranfield|cisi] [--seeds 5]

The pipeline is dfrank's built-in BM25 as a PyTerrier retriever (1,000 results a query);
pt.GridSearch evaluates the 11 x 11 grid k1 in 0.1..3.0, b in 0.0..1.0 (121 runs of the
pipeline) and keeps the best MAP; dfrank's tune gets the same map (each list searched as
its range) and, per seed, a budget of 121 runs, of which the script reports how many it
needed before its best MAP reached the grid's best (its trace of values), the median over
the seeds, and the value at a third of the grid's runs (40). Both are timed side by side in
one run, and every value is MAP as pt.Evaluate (ir_measures) computes it on the tuned
pipeline.
"""

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     measure, shared_path, table)


def frames(folder):
    import pandas as pd

    from dfrank import ir

    loader = ir.load_cisi if "cisi" in folder else ir.load_cranfield
    docs, topics, qrels = loader(folder)
    topics = pd.DataFrame({"qid": list(topics), "query": list(topics.values())})
    qrels = pd.DataFrame([(q, d, r) for q, j in qrels.items() for d, r in j.items()],
                         columns=["qid", "docno", "label"])
    return docs, topics, qrels


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collection", default="cranfield", choices=["cranfield", "cisi"])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    folder = shared_path(args.collection)
    if folder is None:
        raise SystemExit(f"../shared/data/{args.collection} is absent")
    import pyterrier as pt

    from dfrank import pyterrier as dpt

    print(load_warning())
    docs, topics, qrels = frames(folder)
    k1s = [round(x, 2) for x in np.linspace(0.1, 3.0, 11)]
    bs = [round(x, 1) for x in np.linspace(0.0, 1.0, 11)]
    bm25 = dpt.Retriever(docs, "bm25", num_results=1000)
    bm25.transform(topics.iloc[:1])   # the engine indexed once, for both
    grid = {bm25: {"k1": k1s, "b": bs}}
    with measure() as m:
        grid_best, setting = pt.GridSearch(bm25, grid, topics, qrels, "map",
                                           return_type="best_setting")
    grid_time = m.timing
    rows = [["pt.GridSearch, 11 x 11", f"{grid_best:.4f}", "121", "121", f"{grid_time:.1f} s",
             load_cell(grid_time)]]
    reach, at_third = [], []
    for seed in range(args.seeds):
        tuned = dpt.Retriever(docs, "bm25", num_results=1000)
        with measure() as m:
            _, res = dpt.GridSearch(tuned, {tuned: {"k1": k1s, "b": bs}}, topics, qrels, "map",
                              budget=121, seed=seed, return_type="tune_result")
        values = [np.mean(e["per_query"]) if e["status"] == "ok" else -1.0
                  for e in res.history]
        best = np.maximum.accumulate(values)
        hit = np.flatnonzero(best >= grid_best - 1e-12)
        reach.append(int(hit[0]) + 1 if hit.size else None)
        at_third.append(float(best[min(39, len(best) - 1)]))
        check = pt.Evaluate(tuned.transform(topics), qrels, ["map"])["map"]
        rows.append([f"dfrank tune, seed {seed}", f"{check:.4f}",
                     str(reach[-1] if reach[-1] else "never"), str(len(values)),
                     f"{m.timing:.1f} s", load_cell(m.timing)])
    got = [r for r in reach if r is not None]
    print(table(rows, ["search", "best MAP (pt.Evaluate)", "runs to the grid's best",
                       "runs made", "time", LOAD_HEADER]))
    med = statistics.median(r if r is not None else 10 ** 9 for r in reach)
    print(f"\nthe grid's best MAP {grid_best:.4f}, reached by dfrank in {len(got)}/"
          f"{len(reach)} seeds; median runs to it: {med if med < 10 ** 9 else 'never'} "
          f"(a third of the grid: 40); dfrank's best after 40 runs: median "
          f"{statistics.median(at_third):.4f}")
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
