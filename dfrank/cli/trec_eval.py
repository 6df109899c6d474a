"""``dfrank trec-eval``: trec_eval's measures of a TREC run, in trec_eval's layout."""

import sys

from . import options as o

DESCRIPTION = ("Evaluate a TREC run (qid Q0 docno rank score runid) against qrels (qid iter "
               "docno rel) exactly as trec_eval does, printing trec_eval's three-column "
               "layout. Ties in score are broken by docno, descending; the rank column is "
               "ignored.")
EPILOG = """\
examples:
  dfrank trec-eval qrels.txt run.txt
  dfrank trec-eval -q -m map -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt.gz
  dfrank trec-eval -m 'nDCG@10' -m 'AP(rel=2)' qrels.txt run.txt   (ir_measures' names)
  cat run.txt | dfrank trec-eval qrels.txt -"""


def add_arguments(p):
    p.add_argument("qrels", help="TREC qrels (plain or .gz; - for standard input)")
    p.add_argument("run", help="TREC run (plain or .gz; - for standard input)")
    p.add_argument("-q", dest="per_query", action="store_true",
                   help="also print every query's values")
    p.add_argument("-c", dest="complete", action="store_true",
                   help="average over every query of the qrels: a judged query the run "
                        "lacks counts 0 (with -q it gets a block of zeros, as trec_eval 10 "
                        "prints)")
    p.add_argument("-l", dest="level", type=int, default=1,
                   help="lowest judgment counted relevant (default 1)")
    p.add_argument("-M", dest="max_docs", type=o.positive_int,
                   help="only the first N documents of each ranking")
    p.add_argument("--iprec-rounding", choices=("legacy", "nearest"), default="legacy",
                   help="recall level x needs int(x R + 0.9) relevant documents (legacy: "
                        "trec_eval 9, pytrec_eval) or round(x R) (nearest: trec_eval 10)")
    p.add_argument("-m", dest="measure", action="append", metavar="MEASURE",
                   help="measure (repeatable): official (default), map, gm_map, Rprec, "
                        "bpref, recip_rank, iprec_at_recall, P[.k,...], recall[.k,...], "
                        "ndcg, ndcg_cut[.k,...], map_cut[.k,...], success[.k,...], num_q, "
                        "num_ret, num_rel, num_rel_ret, runid; or an ir_measures name "
                        "(nDCG@10, AP(rel=2), P@5, R@100, RR, Judged@10, ...)")
    o.add_quiet(p)


def run(args):
    from ..metrics.trec_measures import evaluate_run

    if args.qrels == "-" and args.run == "-":
        raise o.UsageError("only one of QRELS and RUN can be standard input (-)")
    o.prepare(args)
    res = evaluate_run(args.qrels, args.run, args.measure or ["official"],
                       complete=args.complete, rel_level=args.level,
                       max_docs=args.max_docs, iprec_rounding=args.iprec_rounding)
    sys.stdout.write(res.format(per_query=args.per_query))
    return 0
