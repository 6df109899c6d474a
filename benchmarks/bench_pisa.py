"""Tuning a real engine through its command line: PISA's BM25 (pyterrier-pisa) on
Cranfield, ``dfrank tune -- COMMAND`` beside the 11 x 11 grid of the same command.

    python benchmarks/bench_pisa.py --venv /tmp/pisa-venv [--create] [--seeds 3]

pyterrier-pisa pins ``tbb<=2020.3.254`` and dfrank needs ``tbb>=2021.6``: PISA runs in its
own virtualenv (``--create`` makes it: ``python -m venv`` and ``pip install
pyterrier-pisa``), called as an engine command (``benchmarks/engines/pisa_search.py``), one
process per point, as a user's engine would be. The grid runs the command 121 times (k1 in
0.1..3.0, b in 0.0..1.0, 11 values each); dfrank tune gets a budget of 40 runs (a third of
the grid) per seed. MAP as trec_eval computes it; times side by side, with the load.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (LOAD_HEADER, LOAD_NOTE, load_cell, load_warning,  # noqa: E402
                     measure, shared_path, table)

ENGINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engines", "pisa_search.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", required=True, help="PISA's virtualenv")
    ap.add_argument("--create", action="store_true", help="create it first")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=40)
    args = ap.parse_args()
    folder = shared_path("cranfield")
    if folder is None:
        raise SystemExit("../shared/data/cranfield is absent")
    python = os.path.join(args.venv, "bin", "python")
    if args.create and not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", args.venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "pyterrier-pisa"], check=True)
    import dfrank
    from dfrank import ir

    print(load_warning())
    docs, topics, qrels = ir.load_cranfield(folder)
    work = tempfile.mkdtemp(prefix="dfrank-pisa-")
    paths = {n: os.path.join(work, n) for n in ("docs.tsv", "topics.tsv", "qrels.txt")}
    with open(paths["docs.tsv"], "w") as f:
        f.writelines(f"{d}\t{' '.join(t.split())}\n" for d, t in docs.items())
    with open(paths["topics.tsv"], "w") as f:
        f.writelines(f"{q}\t{' '.join(t.split())}\n" for q, t in topics.items())
    with open(paths["qrels.txt"], "w") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items())
    index = os.path.join(work, "cran.pisa")
    command = [python, ENGINE, "--index", index, "--docs", paths["docs.tsv"], "--topics",
               paths["topics.tsv"]]

    def run_at(k1, b):
        out = os.path.join(work, "run.txt")
        subprocess.run(command + ["--k1", repr(k1), "--b", repr(b), "-o", out], check=True,
                       capture_output=True)
        return dfrank.evaluate_run(paths["qrels.txt"], out, ["map"], complete=True).all["map"]

    run_at(1.2, 0.75)   # builds the index once
    k1s, bs = np.linspace(0.1, 3.0, 11), np.linspace(0.0, 1.0, 11)
    with measure() as m:
        grid = {(k1, b): run_at(float(k1), float(b)) for k1 in k1s for b in bs}
    (gk1, gb), gbest = max(grid.items(), key=lambda kv: kv[1])
    rows = [["grid 11 x 11", f"{gbest:.4f}", f"k1={gk1:.2f}, b={gb:.2f}", "121",
             f"{m.timing:.0f} s", load_cell(m.timing)]]
    for seed in range(args.seeds):
        js = os.path.join(work, f"tune{seed}.json")
        argv = ["dfrank", "tune", "--qrels", paths["qrels.txt"], "--param", "k1=0.1:3",
                "--param", "b=0:1", "--budget", str(args.budget), "--seed", str(seed),
                "--json", js, "--quiet", "--"] + command + ["--k1", "{k1}", "--b", "{b}",
                                                            "-o", "{run}"]
        with measure() as m:
            subprocess.run(argv, check=True, capture_output=True)
        d = json.load(open(js))
        p = d["best_params"]
        rows.append([f"dfrank tune, seed {seed}", f"{d['value']:.4f}",
                     f"k1={p['k1']:.2f}, b={p['b']:.2f}", str(d["n_runs"]), f"{m.timing:.0f} s",
                     load_cell(m.timing)])
    print(table(rows, ["search", "MAP (trec_eval -c)", "best point", "runs", "time",
                       LOAD_HEADER]))
    print(LOAD_NOTE)


if __name__ == "__main__":
    main()
