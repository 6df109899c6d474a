"""TREC run evaluation: dfrank vs pytrec_eval, end to end (file parsing included).

    python benchmarks/bench_trec.py [--queries 5000] [--docs 1000] [--reps 3]

Writes a qrels file and a run of --queries x --docs lines (with score ties) to a temporary
folder, then times, side by side, for each measure set: pytrec_eval (read the files into
its dicts, evaluate, average) and dfrank (``evaluate_run`` on the files, averages
included), medians of --reps. The ``dfrank trec-eval`` command line (a fresh process, so
interpreter start and kernel loading included) is timed once per set as well. Target:
dfrank >= 5x faster end to end.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     median_of, ratio, table, timed)

import dfrank  # noqa: E402

SETS = {"official": ["official"],
        "ndcg_cut + map + P": ["ndcg_cut", "map", "P"],
        "map": ["map"]}
PYTREC = {"official": {"map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall",
                       "P", "num_ret", "num_rel", "num_rel_ret"},
          "ndcg_cut + map + P": {"ndcg_cut", "map", "P"},
          "map": {"map"}}


def write_files(folder, nq, nd, seed=0):
    rng = np.random.default_rng(seed)
    qp = os.path.join(folder, "qrels.txt")
    rp = os.path.join(folder, "run.txt")
    with open(qp, "w") as fq, open(rp, "w") as fr:
        for q in range(nq):
            scores = np.round(rng.random(nd), 3)  # ties
            order = np.argsort(-scores, kind="stable")
            fr.write("".join(f"{q} Q0 doc{q}_{d} {r + 1} {scores[d]} bench\n"
                             for r, d in enumerate(order)))
            judged = rng.choice(2 * nd, nd // 3, replace=False)
            rels = rng.choice(4, len(judged), p=[0.6, 0.25, 0.1, 0.05])
            fq.write("".join(f"{q} 0 doc{q}_{d} {r}\n" for d, r in zip(judged, rels)))
    return qp, rp


def pytrec(qp, rp, measures):
    import pytrec_eval

    qrels, run = {}, {}
    with open(qp) as f:
        for line in f:
            q, _, d, r = line.split()[:4]
            qrels.setdefault(q, {})[d] = int(r)
    with open(rp) as f:
        for line in f:
            q, _, d, _, s = line.split()[:5]
            run.setdefault(q, {})[d] = float(s)
    per = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    names = next(iter(per.values())).keys()
    return {n: np.mean([v[n] for v in per.values()]) for n in names}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print(load_warning())
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        qp, rp = write_files(tmp, args.queries, args.docs)
        print(f"wrote {args.queries} x {args.docs} run ({os.path.getsize(rp) / 1e6:.0f} MB) "
              f"and qrels in {time.perf_counter() - t:.1f} s")
        dfrank.evaluate_run(qp, rp, ["map"])  # kernels compiled / loaded (excluded)
        rows = []
        for label, ms in SETS.items():
            td, tp = [], []
            for _ in range(args.reps):
                ours, t = timed(dfrank.evaluate_run, qp, rp, ms)
                td.append(t)
                theirs, t = timed(pytrec, qp, rp, PYTREC[label])
                tp.append(t)
            diff = max(abs(ours.all[n] - theirs[n]) for n in theirs if n in ours.all
                       and n != "gm_map" and not n.startswith("num_"))
            cmd = [sys.executable, "-m", "dfrank.cli", "trec-eval", "--quiet"]
            for m in ms:
                cmd += ["-m", m]
            _, t_cli = timed(subprocess.run, cmd + [qp, rp], check=True, capture_output=True)
            d, p = median_of(td), median_of(tp)
            rows.append([label, f"{d:.2f} s", f"{t_cli:.2f} s", f"{p:.2f} s", ratio(p, d),
                         ratio(p, t_cli), f"{diff:.1e}", load_cell(d, p, t_cli)])
        print(table(rows, ["measures", "dfrank", "dfrank CLI", "pytrec_eval",
                           "pytrec/dfrank", "pytrec/CLI", "max |diff| of means", LOAD_HEADER]))
        print(LOAD_NOTE)


if __name__ == "__main__":
    main()
