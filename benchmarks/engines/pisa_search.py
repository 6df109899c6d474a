"""A search engine's command line for ``dfrank tune -- COMMAND``: PISA's BM25 through
pyterrier-pisa, run with the Python of PISA's own virtualenv (pyterrier-pisa pins a tbb
older than dfrank's, so the two do not share an environment; this script needs no dfrank).

    python pisa_search.py --index DIR --docs docs.tsv --topics topics.tsv \\
        --k1 1.2 --b 0.75 -o run.txt

The index is built from the docs (TSV: docno, text) on the first call and reused after.
"""

import argparse
import csv
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--index", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--topics", required=True)
    ap.add_argument("--k1", type=float, required=True)
    ap.add_argument("--b", type=float, required=True)
    ap.add_argument("--num-results", type=int, default=1000)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    import pandas as pd
    from pyterrier_pisa import PisaIndex

    csv.field_size_limit(sys.maxsize)
    index = PisaIndex(args.index, threads=1)
    if not os.path.exists(os.path.join(args.index, "fwd")):
        with open(args.docs, newline="") as f:
            docs = [{"docno": d, "text": t} for d, t in csv.reader(f, delimiter="\t")]
        index.index(docs)
    with open(args.topics, newline="") as f:
        topics = pd.DataFrame(list(csv.reader(f, delimiter="\t")), columns=["qid", "query"])
    res = index.bm25(k1=args.k1, b=args.b, num_results=args.num_results).transform(topics)
    with open(args.output, "w") as f:
        for q, d, r, s in zip(res["qid"], res["docno"], res["rank"], res["score"]):
            f.write(f"{q} Q0 {d} {int(r) + 1} {float(s)!r} pisa\n")


if __name__ == "__main__":
    main()
