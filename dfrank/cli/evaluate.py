"""``dfrank evaluate``: a saved model's metrics on a LETOR/SVMlight file."""

import numpy as np

from ..metrics.registry import DEFAULT_TIES
from ..text import format_table
from . import options as o

DESCRIPTION = "Score DATA with MODEL and print metrics."
EPILOG = """\
examples:
  dfrank evaluate model.json Fold1/test.txt.gz --metric map --metric ndcg@10 --per-query
  dfrank evaluate model.json OHSUMED/Fold1/test.txt --letor-tool   (as LETOR's published tables)"""
DEFAULT_METRICS = ("ndcg@10", "map")


def add_arguments(p):
    p.add_argument("model", help="model JSON written by 'dfrank fit'")
    p.add_argument("data", help="LETOR/SVMlight file (- for standard input)")
    o.add_metric(p, " and ".join(DEFAULT_METRICS), repeat=True)
    o.add_reading(p, "DATA")
    p.add_argument("--per-query", action="store_true", help="one row per query")
    o.add_json(p, "the values")
    p.add_argument("--letor-tool", nargs="?", const="3.0", choices=["3.0", "4.0"],
                   metavar="VERSION",
                   help="score as LETOR's Eval-Score-VERSION.pl (3.0, the default, for "
                        "OHSUMED; 4.0 for MQ2007/MQ2008), which produced the published "
                        "numbers on its folds: ranks 1 and 2 undiscounted then 1/log2(rank), "
                        "ties in file order, NDCG@k of a query shorter than k counts 0 "
                        "(metrics p@1..16 for 3.0 or p@1..10 for 4.0, ndcg@ the same, map)")
    o.add_ties(p)
    o.add_scheduler(p, "DATA")
    o.add_quiet(p)


def run(args):
    from ..driver.api import evaluate
    from ..errors import DataFormatError
    from ..io.svmlight import MAX_FEATURES
    from ..driver.result import LinearRanker

    o.outputs_writable(args, "json", inputs=[args.model, args.data])
    model = LinearRanker.load(args.model)
    largest = int(model.feature_ids.max())
    cap = args.max_features or MAX_FEATURES
    if largest > cap:   # refused before a matrix that wide is made
        raise DataFormatError(f"the model reads feature id {largest:,}, above max_features="
                              f"{cap:,}: the data would be a dense matrix that wide; pass "
                              "--max-features if the data really is", path=args.model)
    names = args.metric or list(DEFAULT_METRICS)
    data = o.cluster_data(args, args.data)
    if data is not None:   # evaluated where its shards are
        return _on_cluster(model, data, names, args)
    data = o.load(args.data, args, min_features=largest)
    if args.letor_tool:
        values = _letor_tool_values(model.predict(data), data, names, args)
    else:
        metrics = [o.metric_of(args, m) for m in names]
        o.prepare(args)
        values = evaluate(model.predict(data), data, metrics, ties=args.ties,
                          per_query=args.per_query)
    _report(values, data.qids, args)
    return 0


def _on_cluster(model, data, names, args):
    """The model's metrics on data held by a cluster's workers."""
    from ..driver.api import evaluate_linear

    if args.letor_tool:
        raise o.UsageError("--letor-tool reads the data in this process; drop --scheduler")
    if model.normalization and model.normalization.get("kind") not in (None, "none",
                                                                       "query"):
        raise o.UsageError("the model normalizes features by constants, which a cluster's "
                           "shards are not: evaluate it on files read here")
    column = {int(f): j for j, f in enumerate(data.feature_ids)}
    missing = [int(f) for f in model.feature_ids if int(f) not in column]
    if missing:
        raise o.UsageError(f"the model reads feature id {missing[0]}, which the shards do "
                           f"not have (their ids run up to {int(data.feature_ids.max())})")
    weights = np.zeros(data.n_features)   # the model's weights on the shards' columns
    weights[[column[int(f)] for f in model.feature_ids]] = model.weights
    metrics = [o.metric_of(args, m) for m in names]
    values = evaluate_linear(weights, data, metrics, ties=args.ties, per_query=args.per_query)
    _report(values, data.qids, args)
    return 0


def _report(values, qids, args):
    """Print (or write as JSON) the metrics' ``values``, per query of ``qids`` if asked."""
    out = o.Outputs()
    js = {k: (v.tolist() if args.per_query else v) for k, v in values.items()}
    if args.per_query:
        js["qid"] = [q.item() if hasattr(q, "item") else q for q in qids]
    out.json(args.json, js, "values")
    if args.json != "-":
        if args.per_query:
            names = list(values)
            rows = [[str(q)] + [f"{values[n][i]:.4f}" for n in names]
                    for i, q in enumerate(qids)]
            rows.append(["all"] + [f"{np.nanmean(values[n]):.4f}" for n in names])
            print(format_table(rows, ["qid"] + names))
        else:
            print(format_table([[k, f"{v:.4f}"] for k, v in values.items()],
                               ["metric", "value"]))
    out.done()


def _letor_tool_values(scores, data, metrics, args):
    """``metrics`` of ``scores`` as LETOR's evaluation tool computes them."""
    from ..metrics.letor_tool import MAX_CUTOFF, evaluate_letor

    if args.ties != DEFAULT_TIES:
        raise o.UsageError("--letor-tool orders equal scores as the tool does (file order); "
                           "drop --ties")
    every = evaluate_letor(scores, data, version=args.letor_tool, per_query=args.per_query)
    names = [m.strip().lower() for m in metrics]
    unknown = [m for m in names if m not in every]
    if unknown:
        k = MAX_CUTOFF[args.letor_tool]
        raise o.UsageError(f"--letor-tool {args.letor_tool} computes p@1..p@{k}, "
                           f"ndcg@1..ndcg@{k} and map, not {', '.join(unknown)}")
    return {m: every[m] for m in names}
