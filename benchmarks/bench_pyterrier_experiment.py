"""dfrank's PyTerrier stages beside PyTerrier's own, in pt.Experiment (issue #49), on
Cranfield and CISI.

    python benchmarks/bench_pyterrier_experiment.py [--collections cranfield,cisi]

The judged topics in order: every second one trains, every fourth (of the rest) validates,
the others test. The first stage is dfrank's BM25 (100 results a query), its features BM25,
query likelihood and SDM of the same engine (``**``). In one pt.Experiment per group, on
the test topics, AP and nDCG@10 with PyTerrier's paired t-test against the group's
PyTerrier baseline (``baseline=0``):

* learned stages over the three features, beside the first stage alone (the baseline):
  PyTerrier's ``pt.ltr.apply_learned_model`` with LightGBM's LGBMRanker at its defaults,
  with the settings of PyTerrier's
  learning-to-rank tutorial (num_leaves 7, min_data_in_leaf 1, min_sum_hessian_in_leaf 100,
  learning_rate 0.1, 10 iterations), scikit-learn's LinearRegression, and
  ``dfrank.pyterrier.ltr(metric="nDCG@10")``; those taking validation topics get them;
* tuning BM25's k1 and b on the training topics: ``pt.GridSearch`` over 6 x 5 values (the
  baseline) and ``dfrank.pyterrier.GridSearch`` with the same map and a budget of the same 30 runs;
* fusing BM25 and query likelihood: PyTerrier's ``bm25 + ql`` (the raw sum, the baseline),
  dfrank's ``Fusion`` with equal weights kept (min-max CombSUM) and learned (validated).
"""

import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import shared_path  # noqa: E402

GRID = {"k1": [0.3, 0.6, 0.9, 1.2, 1.8, 2.4], "b": [0.2, 0.4, 0.6, 0.8, 1.0]}


def frames(name):
    import pandas as pd

    from dfrank import ir

    folder = shared_path(name)
    docs, topics, qrels = (ir.load_cisi if name == "cisi" else ir.load_cranfield)(folder)
    judged = [q for q in topics if qrels.get(q)]
    topics = pd.DataFrame({"qid": judged, "query": [topics[q] for q in judged]})
    qrels = pd.DataFrame([(q, d, r) for q, j in qrels.items() for d, r in j.items()],
                         columns=["qid", "docno", "label"])
    train = topics.iloc[::2]
    rest = topics.iloc[1::2]
    return docs, train, rest.iloc[::4], rest.drop(rest.index[::4]), qrels


def groups(name):
    import lightgbm as lgb
    import pyterrier as pt
    from ir_measures import AP, nDCG
    from sklearn.linear_model import LinearRegression

    from dfrank import pyterrier as dpt

    docs, train, valid, test, qrels = frames(name)
    rows = []

    def experiment(label, systems, names):
        table = pt.Experiment(systems, test, qrels, [AP, nDCG @ 10], names=names, baseline=0)
        for _, r in table.iterrows():
            rows.append([name, label, r["name"], f"{r['AP']:.4f}", f"{r['nDCG@10']:.4f}",
                         "" if r["AP p-value"] != r["AP p-value"] else
                         f"{r['AP p-value']:.3g}",
                         "" if r["nDCG@10 p-value"] != r["nDCG@10 p-value"] else
                         f"{r['nDCG@10 p-value']:.3g}", seconds.get(r["name"], "")])

    seconds = {}
    bm25 = dpt.Retriever(docs, "bm25", num_results=100)
    features = bm25 >> (dpt.Retriever(docs, "bm25") ** dpt.Retriever(docs, "ql")
                        ** dpt.Retriever(docs, "sdm"))
    learners = {
        "LightGBM defaults": pt.ltr.apply_learned_model(
            lgb.LGBMRanker(verbose=-1, random_state=0), form="ltr"),
        "LightGBM, PyTerrier tutorial": pt.ltr.apply_learned_model(lgb.LGBMRanker(
            min_data_in_leaf=1, min_sum_hessian_in_leaf=100, max_bin=255, num_leaves=7,
            learning_rate=0.1, num_iterations=10, importance_type="gain", verbose=-1,
            random_state=0), form="ltr"),
        "LinearRegression": pt.ltr.apply_learned_model(LinearRegression()),
        "dfrank ltr (nDCG@10)": dpt.ltr(metric="nDCG@10", seed=0),
    }
    systems = [bm25]   # the first stage alone: what every learned stage re-ranks
    for label, learner in learners.items():
        pipe = features >> learner
        t = time.perf_counter()
        if label == "LinearRegression":
            pipe.fit(train, qrels)
        else:
            pipe.fit(train, qrels, valid, qrels)
        seconds[label] = f"{time.perf_counter() - t:.1f} s"
        systems.append(pipe)
    experiment("learned stage", systems, ["first stage: dfrank BM25"] + list(learners))

    grid_bm25 = dpt.Retriever(docs, "bm25", num_results=1000)
    t = time.perf_counter()
    pt.GridSearch(grid_bm25, {grid_bm25: GRID}, train, qrels, "map")
    seconds["pt.GridSearch (30 runs)"] = f"{time.perf_counter() - t:.1f} s"
    tuned = dpt.Retriever(docs, "bm25", num_results=1000)
    t = time.perf_counter()
    dpt.GridSearch(tuned, {tuned: GRID}, train, qrels, "map", budget=30, seed=0)
    seconds["dfrank tune (30 runs)"] = f"{time.perf_counter() - t:.1f} s"
    experiment("tuning BM25", [grid_bm25, tuned],
               ["pt.GridSearch (30 runs)", "dfrank tune (30 runs)"])

    b, q = dpt.Retriever(docs, "bm25", num_results=100), dpt.Retriever(docs, "ql",
                                                                          num_results=100)
    equal = dpt.Fusion({"bm25": b, "ql": q}, "map").fit(train, qrels)
    equal.weights = {"bm25": 0.5, "ql": 0.5}
    learned = dpt.Fusion({"bm25": b, "ql": q}, "map").fit(train, qrels, valid, qrels)
    print(f"  {name}: the validated fusion kept {learned.choice}", file=sys.stderr)
    experiment("fusing BM25 and QL", [b + q, equal, learned],
               ["bm25 + ql (raw sum)", "dfrank Fusion, equal weights (minmax)",
                "dfrank Fusion, learned and validated"])
    return rows, (len(train), len(valid), len(test))


def main():
    from dfrank.text import format_table

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collections", default="cranfield,cisi")
    args = ap.parse_args()
    if shared_path() is None:
        sys.exit("needs ../shared/data (Cranfield, CISI)")
    warnings.filterwarnings("ignore")
    print(f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    for name in args.collections.split(","):
        rows, sizes = groups(name)
        print(f"{name}: {sizes[0]} training, {sizes[1]} validation, {sizes[2]} test topics")
        print(format_table(rows, ["collection", "group", "system", "AP", "nDCG@10",
                                  "AP p", "nDCG@10 p", "fit"]))


if __name__ == "__main__":
    main()
