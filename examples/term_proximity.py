"""Metzler's large-collection setting at small scale: weight term, ordered-window and
unordered-window features (Dirichlet-smoothed log-likelihoods, as in the paper's Table 5)
by direct maximization, on Cranfield and CISI.

    python examples/term_proximity.py [--data ../shared/data] [--metric map]
                                      [--resolution 40] [--plot-dir .]

For each collection the queries are split at random (seeded) into train and test halves.
The weights live on the simplex: ``grid`` evaluates every point of the face of
non-negative weights (lambda_T + lambda_O + lambda_U = 1) at the given resolution, and
``coordinate_ascent`` searches the whole simplex (negative weights included). Both are
compared with the term-only baseline (query likelihood) and with the weights commonly
used for the sequential dependence model (0.85, 0.10, 0.05). The metric surface over the
non-negative face is written as a ternary plot per collection.
"""

import argparse
import os
import time

import numpy as np

import dfrank
from dfrank import ir

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
LOADERS = {"Cranfield": ("cranfield", ir.load_cranfield), "CISI": ("cisi", ir.load_cisi)}
NAMES = ["term", "ordered #1", "unordered #uw8"]


def face_points(K):
    """Grid points of the non-negative face of the 3-feature simplex (augmented
    coordinate 0), as 4-coordinate simplex points."""
    tri = np.vstack(list(dfrank.Simplex(2).grid(K)))
    return np.hstack([tri, np.zeros((len(tri), 1))])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--metric", default="map")
    ap.add_argument("--resolution", type=int, default=40)
    ap.add_argument("--mu", type=float, default=2500.0, help="Dirichlet prior")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--restarts", type=int, default=2,
                    help="coordinate ascent restarts (each line search of MAP sweeps every "
                         "relevant/non-relevant pair of the ~1400 documents per query)")
    ap.add_argument("--plot-dir", default=".", help="where the surface plots go ('' = none)")
    args = ap.parse_args()
    for label, (sub, loader) in LOADERS.items():
        folder = os.path.join(args.data, sub)
        if not os.path.isdir(folder):
            print(f"{label}: skipped (no {folder}; pass --data)")
            continue
        t0 = time.perf_counter()
        engine = ir.Engine(*loader(folder), sdm_mu=args.mu)
        data = engine.sdm_data()      # each query's candidates, the three features
        rng = np.random.default_rng(args.seed)
        perm = rng.permutation(data.n_queries)
        train = data.subset(np.sort(perm[: len(perm) // 2]))
        test = data.subset(np.sort(perm[len(perm) // 2:]))
        print(f"\n# {label}: {len(engine.docnos)} documents, {data.n_queries} judged queries "
              f"({train.n_queries} train / {test.n_queries} test); features in "
              f"{time.perf_counter() - t0:.1f} s; metric {args.metric}")
        trec = dict(ties="stable", gain="linear")   # trec_eval's conventions
        obj = dfrank.LinearObjective(train, args.metric, **trec)
        rows = []

        def report(name, lam, evals="", secs=""):
            w = dfrank.Simplex(3).to_weights(lam)
            r = dfrank.LinearRanker(w)
            rows.append([name, " ".join(f"{x:+.3f}" for x in w / np.abs(w).sum()),
                         f"{r.evaluate(train, args.metric, **trec):.4f}",
                         f"{r.evaluate(test, args.metric, **trec):.4f}", str(evals), secs])

        report("term only (query likelihood)", np.array([1.0, 0, 0, 0]))
        report("SDM weights 0.85/0.10/0.05", np.array([0.85, 0.10, 0.05, 0]))
        pts = face_points(args.resolution)
        t = time.perf_counter()
        vals = obj.batch(pts)
        best = pts[int(np.argmax(vals))]
        report(f"grid, non-negative face, K={args.resolution}", best, len(pts),
               f"{time.perf_counter() - t:.2f} s")
        t = time.perf_counter()
        r = dfrank.maximize(obj, strategy="ca", restarts=args.restarts, seed=args.seed)
        report("coordinate ascent, whole simplex", r.point, r.n_evals,
               f"{time.perf_counter() - t:.2f} s")
        head = ["weights", "term / ordered / unordered", "train", "test", "evals", "time"]
        w = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for row in rows:
            print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(row)))
        if args.plot_dir:
            try:
                from dfrank.plot import ternary_surface
                path = os.path.join(args.plot_dir, f"surface_{label.lower()}.png")
                ternary_surface(pts[:, :3], vals, path=path, labels=NAMES, best=best[:3],
                                title=f"{label}: train {args.metric}")
                print(f"surface written to {path}")
            except ImportError as e:
                print(f"no plot: {e}")


if __name__ == "__main__":
    main()
