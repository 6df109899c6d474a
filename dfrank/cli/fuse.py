"""``dfrank fuse``: learn the weights of a linear fusion of TREC runs."""

import json
import os
import sys

from ..fusion import FUSE_STRATEGY, NORMS
from ..metrics.registry import RUN_METRIC
from . import options as o

DESCRIPTION = ("Learn the weights of a linear fusion of RUNs (TREC run files) that maximize "
               "--metric on the judgments --qrels, exactly: each run's scores are normalized "
               "per query, and coordinate ascent searches the non-negative weights summing "
               "to 1 with the exact line search (any strategy with --signed). Prints each "
               "run, CombSUM, "
               "reciprocal-rank fusion and the learned fusion (with --folds also held out) "
               "with paired p-values; the metric is computed as trec_eval computes it.")
EPILOG = """\
examples:
  dfrank fuse --qrels qrels.txt bm25.run dense.run splade.run --metric map -o fused.run
  dfrank fuse --qrels qrels.txt a.run b.run --metric ndcg@10 --folds 5 \\
      --json fusion.json --export opensearch"""


def add_arguments(p):
    o.add_qrels(p, "judgments (TREC qrels) the fusion maximizes the metric on")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC runs (two or more)")
    o.add_metric(p, RUN_METRIC)
    p.add_argument("--normalize", default="minmax", choices=list(NORMS),
                   help="per-query normalization of each run (default minmax)")
    p.add_argument("--missing", default="zero",
                   help="score of a document a run did not retrieve: zero (default), min "
                        "(the run's lowest) or a number")
    p.add_argument("--signed", action="store_true",
                   help="allow negative weights (Metzler's augmented simplex)")
    o.add_strategy(p, FUSE_STRATEGY, f"search (default {FUSE_STRATEGY}: 5 restarts of exact "
                                     "coordinate ascent, one line for two runs; with --signed "
                                     "any strategy)")
    o.add_options(p, "--option restarts=10")
    o.add_seed(p)
    o.add_budget(p, "objective evaluations per fusion learned (an exact line search "
                    "counts one)")
    o.add_max_seconds(p, "wall-clock limit per fusion learned")
    o.add_n_jobs(p)
    p.add_argument("--folds", type=o.positive_int,
                   help="cross-validate the weights by query over this many folds")
    p.add_argument("--complete", action="store_true",
                   help="count judged queries no run retrieved as 0 (trec_eval -c)")
    o.add_significance(p, "each run and baseline")
    o.add_output(p, "the fused run (TREC)")
    o.add_json(p, "the result (weights, values, baselines)")
    p.add_argument("--export", choices=["ranx", "opensearch", "elasticsearch"],
                   help="print the weights as that system takes them")
    o.add_quiet(p)


def run_names(paths):
    """Each run's name: its file name without .gz, .txt, .run, .trec."""
    names = []
    for path in paths:
        base = os.path.basename(path)
        for ext in (".gz", ".txt", ".run", ".trec"):
            base = base[:-len(ext)] if base.endswith(ext) else base
        names.append(base)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise o.UsageError(f"two runs would have the same name {dup[0]!r} (run names come "
                           "from the file names); rename a file")
    return names


def qrels_and_runs(args):
    """The qrels (--qrels) and the runs. The former form, the qrels as the first positional
    file, had its release: read as it was, a run would be taken for the judgments (its
    rank column for grades), so it is refused with the way to write it."""
    if args.qrels is not None:
        return args.qrels, args.runs
    if len(args.runs) >= 3:
        raise o.UsageError(
            "the judgments are missing (they are --qrels now, no longer the first file): "
            f"dfrank fuse --qrels {args.runs[0]} {' '.join(args.runs[1:])} ...  if "
            f"{args.runs[0]} holds the judgments, or add --qrels QRELS")
    raise o.UsageError("the judgments are missing: dfrank fuse --qrels QRELS RUN RUN...")


def run(args):
    from ..fusion import fuse
    from ..metrics import RUN_TIES

    args.qrels, args.runs = qrels_and_runs(args)
    o.outputs_writable(args, "output", "json", inputs=[args.qrels, *args.runs])
    if args.export and args.json == "-":
        raise o.UsageError("--json - and --export both print on standard output; write the "
                           "result to a file (--json FILE) or leave out one of them")
    metric = o.metric_of(args)
    names = run_names(args.runs)
    missing = args.missing
    if missing not in ("zero", "min"):
        try:
            missing = float(missing)
        except ValueError:
            raise o.UsageError(f"--missing expects zero, min or a number, got "
                               f"{args.missing!r}") from None
    clock = o.prepare(args, metric, None, RUN_TIES)
    res = fuse(args.qrels, dict(zip(names, args.runs)), metric, norm=args.normalize,
               missing=missing, signed=args.signed, strategy=args.strategy,
               folds=args.folds, seed=args.seed, budget=args.budget,
               max_seconds=args.max_seconds, n_jobs=args.n_jobs, complete=args.complete,
               significance=args.significance, progress=o.show_progress(args),
               **o.strategy_options(args.option, [args.strategy])[args.strategy])
    quiet_stdout = args.json == "-"
    out = o.Outputs()
    if not quiet_stdout:
        compiled = clock.line()
        print(f"fusion of {len(names)} runs ({args.normalize} normalization, missing "
              f"documents {args.missing}) in {o.time_text(res.seconds)}")
        if compiled:
            print(compiled)
        print(res.summary())
    if res.status == "interrupted":   # to stderr too: standard output may be a file
        print("dfrank: note: the fusion was interrupted; the best weights found so far are "
              "kept", file=sys.stderr)
    if out.write(args.output, res.to_trec, "fused run", ".run") and not quiet_stdout:
        print(f"fused run written to {args.output}")
    if out.json(args.json, res.to_dict(), "fusion result"):
        print(f"result written to {args.json}")
    if args.export:
        print(json.dumps(res.export(args.export), indent=1))
    out.done()
    return 0
