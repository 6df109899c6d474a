"""``dfrank demo``: a first run on the data bundled with dfrank."""

import time

import numpy as np

from ..text import format_table
from . import options as o

DESCRIPTION = ("Learn rankers on the small synthetic set bundled with dfrank and compare "
               "strategies (well under a minute, first-run compilation included).")
EPILOG = """\
example:
  dfrank demo --seed 1"""


def add_arguments(p):
    o.add_seed(p)
    o.add_quiet(p)


def run(args):
    from ..driver.api import maximize
    from ..data.datasets import load_demo
    from ..metrics.registry import DEFAULT_METRIC
    from ..registry import resolve

    t_start = time.perf_counter()
    metric = DEFAULT_METRIC
    train, valid, test = load_demo()
    print("dfrank demo: learn a linear ranker that maximizes NDCG@10 directly")
    print(f"  data: synthetic LETOR-like set bundled with dfrank, {train.n_features} "
          f"features, graded labels 0-4 from a planted linear model plus noise")
    print(f"        train {train.n_queries} queries / {train.n_docs} documents, valid "
          f"{valid.n_queries}, test {test.n_queries}")
    # RankLib-style steps keep the first run short (the demo's runs evaluate batches of
    # points: no exact line search, whose kernels dfrank fit loads)
    clock = o.prepare(args, metric, resolve("random"))
    rows = []
    runs = [("coordinate ascent (RankLib-style steps)", "ca",
             dict(restarts=3, line_search="steps")),
            ("particle swarm (RankPSO)", "pso", dict(iterations=60)),
            ("random search (baseline)", "random", dict(n_samples=1000))]
    best = None
    for label, name, opts in runs:
        t = time.perf_counter()
        r = maximize(train, metric, name, seed=args.seed, valid=valid, **opts)
        secs = time.perf_counter() - t
        te = r.ranker.evaluate(test, metric)
        rows.append([label, f"{r.value:.4f}", f"{r.valid_value:.4f}", f"{te:.4f}",
                     str(r.n_evals), f"{secs:.2f} s"])
        if best is None:
            best = r
    print(format_table(rows, ["strategy", "train", "valid", "test", "evals", "time"]))
    w = best.weights / np.abs(best.weights).max()
    print("  learned weights (coordinate ascent, scaled):" +
          "".join(f" {x:+.2f}" for x in w))
    compiled = clock.line()
    if compiled:
        print(compiled)
    print(f"done in {o.time_text(time.perf_counter() - t_start, digits=1)}. Next: dfrank fit "
          "--help (your own files), or README.md for the Python API.")
    return 0
