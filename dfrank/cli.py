"""The ``dfrank`` command line.

Sub-commands are small functions registered in one table; each parses its own options,
calls the Python API, and prints. Exit codes: 0 success, 1 data error, 2 bad usage.
"""

import argparse
import sys

import numpy as np

__all__ = ["main"]

EPILOG = """\
examples:
  dfrank info train.txt.gz                 what a LETOR/SVMlight file holds
  dfrank metrics                           the metric names and their formulas
"""


def _cmd_info(args):
    from .io import load_svmlight

    data = load_svmlight(args.file, query_file=args.query_file)
    sizes = data.query_sizes
    labels, counts = np.unique(data.y, return_counts=True)
    print(f"{args.file}")
    print(f"  queries     {data.n_queries}")
    print(f"  documents   {data.n_docs}  (per query: min {sizes.min()}, "
          f"median {np.median(sizes):g}, max {sizes.max()})")
    print(f"  features    {data.n_features}")
    print("  labels      " + ", ".join(f"{l:g}: {c}" for l, c in zip(labels, counts)))
    no_rel = int((np.maximum.reduceat(data.y, data.qptr[:-1]) <= 0).sum())
    print(f"  queries without a relevant document: {no_rel}")
    return 0


def _cmd_metrics(args):
    from . import metrics

    for name in metrics.available():
        print(f"{name:14s} {metrics.describe(name.replace('@k', '@10'))}")
    return 0


def _parser():
    p = argparse.ArgumentParser(
        prog="dfrank", description="Directly maximize rank-based metrics (MAP, NDCG@k, ...).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="summarize a LETOR/SVMlight file",
                          description="Summarize a LETOR/SVMlight file: queries, documents, "
                                      "features, labels.",
                          epilog="example:\n  dfrank info Fold1/train.txt.gz",
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    info.add_argument("file")
    info.add_argument("--query-file", help="LightGBM-style group sizes for files without qid")
    info.set_defaults(func=_cmd_info)
    mets = sub.add_parser("metrics", help="list the metrics and their formulas",
                          description="List the metric names dfrank knows, with formulas.")
    mets.set_defaults(func=_cmd_metrics)
    return p


def main(argv=None):
    """Entry point of the ``dfrank`` console script; returns the exit code."""
    from .errors import DataFormatError

    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (DataFormatError, FileNotFoundError) as e:
        if args.debug:
            raise
        print(f"dfrank: error: {e}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as e:
        if args.debug:
            raise
        print(f"dfrank: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
