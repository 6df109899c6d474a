"""``dfrank info``: what a LETOR/SVMlight file holds."""

import numpy as np

from . import options as o

DESCRIPTION = "Summarize a LETOR/SVMlight file: queries, documents, features, labels."
EPILOG = """\
example:
  dfrank info Fold1/train.txt.gz"""


def add_arguments(p):
    p.add_argument("file", help="LETOR/SVMlight file (plain or .gz; - for standard input)")
    o.add_reading(p, "FILE")


def run(args):
    data = o.load(args.file, args)
    sizes = data.query_sizes
    labels, counts = np.unique(data.y, return_counts=True)
    print(f"{args.file}")
    print(f"  queries     {data.n_queries}")
    print(f"  documents   {data.n_docs}  (per query: min {sizes.min()}, "
          f"median {np.median(sizes):g}, max {sizes.max()})")
    print(f"  features    {data.n_features}")
    print("  labels      " + ", ".join(f"{lab:g}: {c}" for lab, c in zip(labels, counts)))
    no_rel = int((np.maximum.reduceat(data.y, data.qptr[:-1]) <= 0).sum())
    print(f"  queries without a relevant document: {no_rel}")
    const = np.flatnonzero(np.all(data.X == data.X[:1], axis=0))
    if const.size:
        print(f"  constant features: {', '.join(str(data.feature_ids[j]) for j in const)}")
    return 0
