"""``dfrank fit``: learn a linear ranker that maximizes a metric, and write it."""

import json
import os
import time

from ..registry import DEFAULT_STRATEGY, DEFAULT_METRIC
from ..text import counted, format_table
from . import options as o

DESCRIPTION = ("Learn a linear ranker on TRAIN that maximizes --metric directly, and write "
               "it as JSON.")
EPILOG = f"""\
examples:
  dfrank fit Fold1/train.txt.gz --valid Fold1/vali.txt.gz --test Fold1/test.txt.gz \\
      --metric ndcg@10 -o model.json
  dfrank fit Fold1/train.txt.gz --strategy ca --restarts 5 -o model.json
  dfrank fit 'shards/train-*.txt' --scheduler tcp://10.0.0.1:8786 -o model.json

The default strategy is {DEFAULT_STRATEGY}: smoothed_es (a smoothed metric, 5 runs averaged)
below 1,000 training queries, where a single maximum overfits; ca (coordinate ascent, exact
line search, one restart) from 1,000 on. 'dfrank strategies' describes every one.
With --valid, the validation metric is reported, and strategies with restarts keep the
best restart on it. Ctrl-C stops the run and keeps the best point found so far.
Long runs: add --checkpoint run.ckpt; after a crash, the same command with
--resume run.ckpt finishes it with the result of an uninterrupted run."""


def add_arguments(p):
    o.add_data(p, "validation file (chooses among restarts)", "test file (only reported)")
    o.add_metric(p, DEFAULT_METRIC)
    o.add_strategy(p, DEFAULT_STRATEGY, f"optimizer (default {DEFAULT_STRATEGY}; see "
                                        "'dfrank strategies')")
    o.add_seed(p)
    o.add_n_jobs(p)
    p.add_argument("--restarts", type=o.positive_int, help="restarts of the strategy")
    o.add_budget(p)
    o.add_max_seconds(p)
    o.add_options(p, "--option evals=8000 (es), --option rule=best (ca)")
    p.add_argument("--checkpoint", metavar="FILE",
                   help="save finished restarts here (JSON, atomically, every few seconds)")
    p.add_argument("--resume", metavar="FILE",
                   help="continue the run saved in this checkpoint (same arguments: the "
                        "result equals an uninterrupted run)")
    p.add_argument("--normalize", choices=["standard", "minmax"],
                   help="normalize each feature by constants fitted on TRAIN ((x - mean) / "
                        "std, or (x - min) / (max - min)), applied to every set; the model "
                        "keeps them, so 'dfrank export' writes them as the engine's "
                        "normalizers. (Features normalized within each query, as in "
                        "LETOR's QueryLevelNorm files, are recognized from the data.)")
    o.add_output(p, "the model (JSON)")
    p.add_argument("--result", metavar="FILE",
                   help="write the full result (JSON, with traces) here")
    o.add_json(p, "the outcome (values, evaluations, seconds, weights)")
    o.add_ties(p)
    o.add_scheduler(p, "TRAIN")
    o.add_quiet(p)


def _normalization(kind, train, path):
    """The normalization ``--normalize KIND`` fits on TRAIN (None without the option)."""
    from ..data import normalization

    if kind is None:
        return None
    if not hasattr(train, "X"):
        raise o.UsageError("--normalize fits constants on TRAIN in this process; on a "
                           "cluster, normalize the shards where they are")
    if normalization.within_queries(train):
        raise o.UsageError(f"{path}: its features are normalized within each query already "
                           "(as LETOR's QueryLevelNorm files and MQ2008 are), and normalizing "
                           "them again by constants gives a model no engine can apply either. "
                           "Use the collection's raw features with --normalize")
    return normalization.fit(train.X, kind)


def run(args):
    from ..driver.api import evaluate, maximize

    # the metric and the strategy are resolved once, here, and passed down as objects
    metric = o.metric_of(args)
    fixed = {} if args.restarts is None else {"restarts": args.restarts}
    strategy = o.strategies(args.option, [args.strategy], **fixed)[args.strategy]
    strategy.check_options()
    o.outputs_writable(args, "output", "result", "checkpoint", "json",
                       inputs=[args.train, args.valid, args.test, args.query_file,
                               args.resume])
    train, valid, test = o.load_sets(args)
    norm = _normalization(args.normalize, train, args.train)
    if norm is not None:
        from ..data import normalization

        train, valid, test = (normalization.apply(d, norm) if d is not None else None
                              for d in (train, valid, test))
    strategy = o.chosen(strategy, train, metric, args.ties)   # auto's pick, made once
    clock = o.prepare(args, metric, strategy, args.ties)
    t0 = time.perf_counter()
    result = maximize(train, metric, strategy, seed=args.seed, n_jobs=args.n_jobs,
                      budget=args.budget, max_seconds=args.max_seconds, valid=valid,
                      progress=o.show_progress(args), ties=args.ties,
                      checkpoint=args.checkpoint, resume=args.resume)
    secs = time.perf_counter() - t0
    compiled = clock.line()
    if norm is not None:
        result.normalization = norm
    ranker = result.ranker
    scores = {"train": result.value}
    if valid is not None:
        scores["valid"] = result.valid_value
    if test is not None:   # already normalized: score with the bare weights
        scores["test"] = evaluate(test.scores(result.weights), test,
                                  metric, ties=args.ties)
    ranker.meta.update({"train_file": os.path.abspath(args.train), "test": scores.get("test")})
    out = o.Outputs()
    saved = out.write(args.output, ranker.save, "model", ".json",
                      stdout=lambda: json.dumps(ranker.to_dict(), indent=1) + "\n")
    out.write(args.result, result.save, "result", ".json")
    out.json(args.json, {"metric": result.metric, "scores": scores,
                         "n_evals": result.n_evals, "seconds": secs,
                         "strategy": result.strategy, "status": result.status,
                         "model": args.output, "weights": result.weights.tolist()},
             "outcome")
    if args.json != "-":
        rows = [[k, f"{v:.4f}"] for k, v in scores.items()]
        rows += [["evaluations", str(result.n_evals)], ["time", o.time_text(secs)]]
        print(f"{result.strategy} on {counted(train.n_queries, 'query', 'queries')}, "
              f"{counted(train.n_features, 'feature', 'features')} (seed {args.seed})")
        print(format_table(rows, ["", result.metric]))
        if compiled:
            print(compiled)
        if result.status == "interrupted":
            print(f"note: {result.message} (the best point found so far is kept)")
        if saved:
            print(f"model written to {args.output}")
    out.done()
    return 0
