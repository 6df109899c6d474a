"""An external engine for ``dfrank tune``: bm25s (a BM25 library whose k1 and b are fixed
when it indexes, so every point indexes the collection again), run on Cranfield or CISI
and written as a TREC run.

    python examples/bm25s_search.py --collection ../shared/data/cranfield --k1 1.2 --b 0.75 \\
        -o run.txt

Tuned by dfrank through its command line (each point one run of this script):

    dfrank tune --qrels cranfield.qrels --param k1=0.1:3 --param b=0:1 --budget 40 -- \\
        python {cwd}/examples/bm25s_search.py --collection {cwd}/../shared/data/cranfield \\
        --k1 {k1} --b {b} -o {run}
"""

import argparse
import os
import sys

import numpy as np


def load(folder):
    from dfrank import ir

    if os.path.exists(os.path.join(folder, "cran.all.1400.gz")):
        return ir.load_cranfield(folder)
    return ir.load_cisi(folder)


def search(docs, topics, k1, b, depth=1000):
    """``{qid: {docno: score}}`` of bm25s's BM25 (Lucene's variant) at (k1, b)."""
    import bm25s

    ids = list(docs)
    corpus = bm25s.tokenize([docs[d] for d in ids], stopwords="en", show_progress=False)
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(corpus, show_progress=False)
    qids = list(topics)
    queries = bm25s.tokenize([topics[q] for q in qids], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(queries, k=min(depth, len(ids)), show_progress=False,
                                       n_threads=1)
    run = {}
    for q, rows, vals in zip(qids, found, scores):
        keep = vals > 0            # bm25s pads with zero scores past the matching documents
        run[q] = {ids[i]: float(v) for i, v in zip(rows[keep], vals[keep])}
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collection", required=True, help="a Cranfield or CISI folder")
    ap.add_argument("--k1", type=float, required=True)
    ap.add_argument("--b", type=float, required=True)
    ap.add_argument("-o", "--output", help="the TREC run file (default: standard output)")
    args = ap.parse_args()
    docs, topics, _ = load(args.collection)
    run = search(docs, topics, args.k1, args.b)
    out = open(args.output, "w") if args.output else sys.stdout
    for q, ranked in run.items():
        for rank, (d, s) in enumerate(sorted(ranked.items(), key=lambda kv: -kv[1]), 1):
            out.write(f"{q} Q0 {d} {rank} {s!r} bm25s\n")
    if args.output:
        out.close()
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
