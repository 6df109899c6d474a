"""``dfrank compare``: optimizers side by side on one objective with one allowance."""

import math

from ..registry import DEFAULT_METRIC
from ..text import counted
from . import options as o

DESCRIPTION = ("Run every strategy with every seed on TRAIN's --metric, each with the same "
               "allowance (--budget objective evaluations and/or --max-seconds), counted by "
               "the objective. Prints mean +- sd of the train (and valid/test) metric, and "
               "the evaluations and seconds each strategy needed to reach 95% and 99% of the "
               "best value any run found; with --test, a paired test over queries marks the "
               "strategies that differ from the best one.")
EPILOG = """\
examples:
  dfrank compare Fold1/train.txt.gz --test Fold1/test.txt.gz --strategies ca,pso,random \\
      --seeds 5 --budget 2000 --metric ndcg@10 --json cmp.json --plot anytime.png
  dfrank compare train.txt --strategies ca,scipy:powell,nevergrad:NGOpt --max-seconds 5 \\
      --option ca:line_search=steps

External optimizers (scipy:*, cma:es, nevergrad:NAME, optuna:*) need
pip install "dfrank[compare]"; 'dfrank strategies' lists what is installed.
With --max-seconds, keep --n-jobs 1 so that runs do not share cores."""
DEFAULT_STRATEGIES = "ca,pso,random"


def add_arguments(p):
    o.add_data(p, "validation file (chooses among each run's restarts)",
               "test file (reported; significance vs the best)")
    p.add_argument("--strategies", default=DEFAULT_STRATEGIES,
                   help=f"comma-separated strategy names (default {DEFAULT_STRATEGIES})")
    p.add_argument("--seeds", type=o.positive_int, default=5,
                   help="seeds 0..N-1 per strategy (default 5)")
    o.add_budget(p, "objective evaluations per run")
    o.add_max_seconds(p, "wall-clock limit per run")
    p.add_argument("--line-cost", default=1, type=o.line_cost("measured"),
                   metavar="N|measured",
                   help="evaluations of --budget an exact line search counts: 1 (default), "
                        "an int, or 'measured' (the single evaluations its time is worth "
                        "on this data, rounded up)")
    o.add_metric(p, DEFAULT_METRIC)
    o.add_significance(p, "the best strategy")
    o.add_n_jobs(p, "runs in parallel (-1: every core; default 1)")
    o.add_options(p, "--option pso:swarm_size=40")
    o.add_json(p, "the comparison (with traces)")
    p.add_argument("--plot", metavar="FILE", help="write the anytime curves (PNG) here")
    o.add_ties(p)
    o.add_quiet(p)


def run(args):
    from ..comparison import compare

    names = o.name_list(args.strategies, "--strategies", "strategy name")
    o.require_allowance(args, "strategy")
    options = o.strategy_options(args.option, names)
    o.outputs_writable(args, "json", "plot",
                       inputs=[args.train, args.valid, args.test, args.query_file])
    metric = o.metric_of(args)
    train, valid, test = o.load_sets(args)
    o.prepare(args, metric, None, args.ties)
    if args.line_cost == "measured":
        from ..objectives.objective import LinearObjective, line_search_cost

        worth = line_search_cost(LinearObjective(train, metric, ties=args.ties))
        line_cost = math.ceil(worth)
        print(f"an exact line search takes the time of {worth:.1f} single evaluations: it "
              f"counts {line_cost}")
    else:
        line_cost = args.line_cost
    cmp = compare(train, names, seeds=range(args.seeds), budget=args.budget,
                  max_seconds=args.max_seconds, metric=metric, valid=valid, test=test,
                  n_jobs=args.n_jobs, options=options, significance=args.significance,
                  ties=args.ties, progress=o.show_progress(args), line_cost=line_cost)
    out = o.Outputs()
    wrote = out.json(args.json, cmp.to_dict(), "comparison")
    if args.json != "-":
        allowance = " and ".join(x for x in (
            f"{args.budget} evaluations" if args.budget is not None else "",
            f"{args.max_seconds:g} s" if args.max_seconds is not None else "") if x)
        print(f"{counted(len(names), 'strategy', 'strategies')} x "
              f"{counted(args.seeds, 'seed', 'seeds')} on "
              f"{counted(train.n_queries, 'query', 'queries')}, "
              f"{counted(train.n_features, 'feature', 'features')}; {allowance} per run")
        print(cmp.summary())
        if wrote:
            print(f"comparison written to {args.json}")
    if out.write(args.plot, cmp.plot, "plot", ".png") and args.json != "-":
        print(f"anytime curves written to {args.plot}")
    out.done()
    return 0
