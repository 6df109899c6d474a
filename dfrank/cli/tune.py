"""``dfrank tune``: search a retrieval system's parameters for the highest metric."""

import argparse

from ..metrics.registry import RUN_METRIC
from ..registry import BOX_STRATEGY
from ..text import counted
from ..tuning.tuner import DEFAULT_BUDGET
from . import options as o

DESCRIPTION = ("Search the parameters of a retrieval system for the highest metric, with "
               "fewer runs than a grid: the built-in engine (--collection, a model: bm25, "
               "ql, sdm), or any engine's command after --, run once per point without a "
               "shell, in a fresh temporary folder, with {name} replaced by a parameter's "
               "value, {run} by the TREC run file it must write (without {run}, its standard "
               "output is the run) and {cwd} by the folder you started dfrank in. The runs "
               "are scored as trec_eval scores them, averaged over the judged queries "
               "(trec_eval -c).")
EPILOG = """\
examples:
  dfrank tune --collection data/cranfield --model bm25 --metric map --folds 5
  dfrank tune --qrels qrels.txt --param k1=0.1:3 --param b=0:1 --default k1=1.2 \\
      --default b=0.75 --budget 40 --cache tune-cache --json tune.json -- \\
      python {cwd}/search.py --k1 {k1} --b {b} -o {run}

A run that fails (non-zero exit, no run, a malformed run) is an error naming the point and
the command's last stderr lines when no run has succeeded yet; later, it is recorded
as failed and the search goes on. --cache keeps every run: the same command again
(or with a larger --budget) repeats none. Each run is a process group of its own, ended
whole on a timeout, an error or Ctrl-C."""


def add_arguments(p):
    o.add_qrels(p, "judgments (TREC qrels); the queries tuned are those with some")
    o.add_collection(p)
    p.add_argument("--model", default="bm25", choices=["bm25", "ql", "sdm"],
                   help="built-in engine's model (default bm25; its usual ranges when no "
                        "--param is given)")
    p.add_argument("--param", action="append", metavar="NAME=LOW:HIGH[:log]",
                   help="a real parameter and its range (repeatable)")
    p.add_argument("--int", action="append", metavar="NAME=LOW:HIGH",
                   help="a whole-number parameter and its range (repeatable)")
    p.add_argument("--default", action="append", metavar="NAME=VALUE",
                   help="the reference point, reported beside the tuned one (repeatable)")
    o.add_metric(p, RUN_METRIC, help=f"metric (default {RUN_METRIC}; computed as trec_eval "
                                     "does)")
    o.add_strategy(p, BOX_STRATEGY, f"search strategy (default {BOX_STRATEGY})")
    o.add_options(p, "--option step=0.1")
    o.add_budget(p, f"runs the search makes (default {DEFAULT_BUDGET}); the default "
                 "point (--default, or a built-in model's own) runs once more where "
                 "the search did not reach it",
                 default=DEFAULT_BUDGET)
    p.add_argument("--folds", type=o.positive_int,
                   help="cross-validate over this many query folds")
    o.add_significance(p, "the default point (with --folds)")
    o.add_n_jobs(p, "runs of a batch in parallel (-1: every core; default 1)")
    p.add_argument("--cache", metavar="FOLDER",
                   help="keep every run here and reuse them: a folder that several tunes "
                        "may share at once, each writing its own file (JSON in "
                        "checkpoint's format, written atomically); a point whose run "
                        "failed (a timeout, an error) is run again")
    p.add_argument("--keep-failed", action="store_true",
                   help="take the cache's failed points as failed instead of running them "
                        "again")
    o.add_json(p, "the result")
    p.add_argument("--timeout", type=o.positive_float, default=3600.0,
                   help="seconds one run of the command may take (default 3600)")
    o.add_seed(p)
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="-- COMMAND ARGS...: the engine's command")
    o.add_quiet(p)


def _param_specs(args, model):
    """The space {name: (low, high[, kind])} of --param/--int (the model's ranges when
    neither is given) and the --default point."""
    spec = {}
    for kind, items in (("real", args.param or []), ("int", args.int or [])):
        for item in items:
            name, sep, rng = item.partition("=")
            parts = rng.split(":")
            ok = sep and name.isidentifier() and len(parts) in (2, 3) and \
                (len(parts) == 2 or (kind == "real" and parts[2] == "log"))
            try:
                lo, hi = float(parts[0]), float(parts[1])
            except (ValueError, IndexError):
                ok = False
            if not ok:
                form = "NAME=LOW:HIGH" + ("[:log]" if kind == "real" else "")
                raise o.UsageError(f"--{'param' if kind == 'real' else 'int'} expects {form}, "
                                 f"got {item!r}")
            if name in spec:
                raise o.UsageError(f"parameter {name!r} is given twice")
            spec[name] = (lo, hi) + (("log",) if len(parts) == 3 else ()) + \
                (("int",) if kind == "int" else ())
    default = o.parse_numbers(args.default, "--default")
    if not spec and model is not None:
        from ..ir import MODELS

        spec = {k: (lo, hi) + (("log",) if lg else ()) for k, (_, lo, hi, lg) in
                MODELS[model].items()}
        default = default or {k: v[0] for k, v in MODELS[model].items()}
    if not spec:
        raise o.UsageError("give the parameters to tune: --param NAME=LOW:HIGH[:log] or --int "
                         "NAME=LOW:HIGH")
    if default and set(default) != set(spec):
        raise o.UsageError(f"--default must give every parameter ({', '.join(spec)})")
    return spec, default or None



def run(args):
    from ..tuning.tuner import tune

    command = list(args.command or [])
    if command[:1] == ["--"]:
        command = command[1:]
    o.outputs_writable(args, "json", "cache",
                       inputs=[args.qrels, args.collection, args.topics])
    options = o.strategy_options(args.option, [args.strategy])[args.strategy]
    if command:
        from ..tuning.command import CommandRun

        if args.collection:
            raise o.UsageError("give --collection (the built-in engine) or a command after "
                               "--, not both")
        if not args.qrels:
            raise o.UsageError("--qrels is needed to evaluate the command's runs")
        spec, default = _param_specs(args, None)
        runner = CommandRun(command, list(spec), timeout=args.timeout)
        target, qrels, system = runner, args.qrels, runner.describe()
    else:
        if not args.collection:
            raise o.UsageError("give a command after -- (e.g. -- ./search --k1 {k1} --b {b} "
                               "-o {run}) or --collection for the built-in engine")
        spec, default = _param_specs(args, args.model)
        o.prepare(args)
        target, qrels, system = (o.engine(args), args.model), None, None
    o.prepare(args)
    res = tune(target, spec, qrels, o.metric_of(args), strategy=args.strategy,
               budget=args.budget, folds=args.folds, n_jobs=args.n_jobs, cache=args.cache,
               seed=args.seed, default=default, progress=o.show_progress(args),
               system=system, significance=args.significance,
               keep_failed=args.keep_failed, **options)
    out = o.Outputs()
    saved = out.json(args.json, res.to_dict(), "tune result")
    if args.json != "-":
        print(res.summary())
        if args.folds:
            for i, f in enumerate(res.cv.per_fold):
                ps = ", ".join(f"{k}={v:g}" for k, v in f["params"].items())
                held = counted(len(f["held_out"]), "query", "queries")
                print(f"  fold {i + 1}: {ps}  train {f['train_value']:.4f}  held out "
                      f"{f['held_out_value']:.4f} ({held})")
        if saved:
            print(f"result written to {args.json}")
    out.done()
    if res.status == "interrupted":   # the best so far is out: exit as interrupted
        raise KeyboardInterrupt
    return 0
