"""``dfrank bench``: optimizers x rank-metric problems x instances, runtime-to-target
profiles, IOHprofiler's format."""

import argparse
import os

from . import options as o

DESCRIPTION = (
    "Compare black-box optimizers on dfrank's suite of rank-metric problems (LETOR "
    "rankers, BM25/Dirichlet/SDM tuning, run fusion; 'dfrank bench list DATA' names them), "
    "as COCO and IOHprofiler compare them: each solver runs on each instance (problem, "
    "fold, seed) with the same allowance, the runs go to a JSON-lines file as they finish "
    "(run the same command again to continue an interrupted bench), and the report gives "
    "runtime-to-target ECDFs and data profiles, with targets reference - eps (reference - "
    "start), and flags solvers whose runs ignore the seed or do not repeat with it, fail, "
    "overrun the budget or recommend points they never evaluated.")
EPILOG = """\
actions:
  list DATA                  the problems, and which have their data under DATA
  run DATA -o BENCH.jsonl    run (or continue) a bench; prints the report
  report BENCH.jsonl         the table (and --plot FILE: ECDFs and data profiles)
  export BENCH.jsonl -o DIR  IOHprofiler's format (IOHanalyzer, iohinspector load DIR);
                             --format coco: COCO's (cocopp reads it, see docs/problems.md)
  cocopp DIR [-o OUT ...]    cocopp's figures and pages of a COCO export (pip install cocopp)
  reference DATA -o REFS     measure reference values (the long run of the suite)
  reference --from-runs BENCH.jsonl [--merge REFS] -o NEW
                             the references, with the values bench runs beat replaced

examples:
  dfrank bench run data/ --strategies ca,es,cma:es,nevergrad:NGOpt,optuna:tpe \\
      --problems small --seeds 3 --budget 1000 --strategy-budget optuna:tpe=300 \\
      -o bench.jsonl --plot ecdf.png
  dfrank bench run data/ --strategies ca,es,cma:es --problems letor-mq2008-map \\
      --max-seconds 2 --n-jobs -1 -o timed.jsonl
  dfrank bench export bench.jsonl -o ioh/

DATA holds the data sets as distributed (ohsumed-letor3/, mq2008-letor4/,
lightgbm-lambdarank/, cranfield/, cisi/); nothing is downloaded. Solvers: any strategy
name ('dfrank strategies'), cma:es, nevergrad:NAME, optuna:tpe and optuna:cmaes over
the unit cube, and cma:ipop, pycma's fmin2 with IPOP restarts until the budget is spent
(pip install "dfrank[compare]"), each run as 'dfrank compare' runs it; your own as
module:function, a function fn(problem, seed) returning its recommended cube point (or
a name an installed package registers in the entry-point group dfrank.solvers).
Folds are instances and seeds are runs (trials) of them."""


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the problems", allow_abbrev=False)
    ls.add_argument("data", help="the folder of the data sets")
    run = sub.add_parser("run", help="run or continue a bench", allow_abbrev=False)
    run.add_argument("data", help="the folder of the data sets")
    run.add_argument("--strategies",   # (required: checked in _run, with a hint)
                     help="comma-separated optimizers (required): strategy names, "
                          "cma:es, cma:ipop, nevergrad:NAME, optuna:tpe, optuna:cmaes, or "
                          "your own as module:function")
    _add_selection(run)
    run.add_argument("--seeds", type=o.positive_int, default=3,
                     help="runs per problem and fold: seeds 0..N-1 (default 3; seed "
                          "0 starts at the center)")
    o.add_budget(run, "objective evaluations per run")
    o.add_max_seconds(run, "wall-clock limit per run")
    run.add_argument("--strategy-budget", action="append", metavar="STRATEGY=N",
                     help="a smaller budget for a slow optimizer, e.g. optuna:tpe=300 "
                          "(repeatable)")
    run.add_argument("--line-cost", default="reference", metavar="N|reference|measured",
                     type=o.line_cost("reference", "measured"),
                     help="evaluations an exact line search counts: 'reference' (default: "
                          "its time in single evaluations on each problem, stored with the "
                          "references, so that benches repeat anywhere), 'measured' (on "
                          "this machine, now) or an int")
    o.add_n_jobs(run, "runs in parallel, one process each (-1: every core; default 1)")
    _add_references(run)
    o.add_output(run, "the runs (JSON lines; an existing file is continued)", required=True)
    _add_report(run)
    o.add_quiet(run)
    rep = sub.add_parser("report", help="the report of a bench file", allow_abbrev=False)
    rep.add_argument("--references", metavar="FILE",
                     help="measure the runs against these reference values in this report "
                          "only (the bench file keeps its own)")
    rep.add_argument("bench", help="a file written by 'dfrank bench run'")
    _add_report(rep)
    ex = sub.add_parser("export", help="IOHprofiler's or COCO's format", allow_abbrev=False)
    ex.add_argument("bench", help="a file written by 'dfrank bench run'")
    ex.add_argument("--format", choices=["ioh", "coco"], default="ioh",
                    help="ioh: IOHprofiler's JSON and .dat files (default); coco: COCO's "
                         ".info, .dat and .tdat files, the gap to the reference as f - f_opt")
    ex.add_argument("-o", "--output", metavar="DIR", required=True,
                    help="the folder to write (one folder per solver inside)")
    pp = sub.add_parser("cocopp", help="COCO's post-processing on a COCO export",
                        allow_abbrev=False)
    pp.add_argument("folder", help="a folder written by 'dfrank bench export --format coco' "
                                   "(each solver's folder in it is one of cocopp's "
                                   "algorithms), or one solver's folder")
    pp.add_argument("cocopp_args", nargs=argparse.REMAINDER, metavar="...",
                    help="cocopp's own options, as 'python -m cocopp' takes them (e.g. -o "
                         "ppdata)")
    ref = sub.add_parser("reference", help="measure reference values", allow_abbrev=False)
    ref.add_argument("data", nargs="?",
                     help="the folder of the data sets (not with --from-runs)")
    _add_selection(ref)
    ref.add_argument("--merge", metavar="FILE",
                     help="add the values to those of this references file (with "
                          "--from-runs: the file the runs' better values go into; default "
                          "the shipped references)")
    ref.add_argument("--from-runs", nargs="+", metavar="BENCH",
                     help="no long run: take the better values that these benches' runs "
                          "found (runs measured against the same references), each with "
                          "the solver, seed and file that found it")
    ref.add_argument("--line-costs-only", action="store_true",
                     help="measure only the line costs of the --merge file's values on this "
                          "machine (seconds, not the long run)")
    o.add_output(ref, "the references (JSON)", required=True)


def _add_selection(p):
    p.add_argument("--problems", default="small",
                   help="a subset (small, full), or comma-separated problem ids "
                        "(default small)")
    p.add_argument("--instances", metavar="FOLDS",
                   help="comma-separated folds, the problems' instances (default: the "
                        "subset's, or all)")


def _add_references(p):
    p.add_argument("--references", metavar="FILE",
                   help="reference values (default: those shipped with dfrank)")


def _add_report(p):
    p.add_argument("--plot", metavar="FILE",
                   help="write the ECDFs and data profiles (PNG) here, and the ECDFs per "
                        "dimension group over evaluations per dimension beside it "
                        "(FILE-by-dimension.png)")
    p.add_argument("--by-problem", nargs="?", const="100,1000", metavar="EVALS",
                   help="also each solver's ECDF on each problem alone, at these "
                        "comma-separated evaluation counts (default 100,1000): who wins where")
    o.add_json(p, "the report (summary rows and flags)")


def _ints(text, what):
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise o.UsageError(f"{what} expects comma-separated integers, got {text!r}") \
            from None
    if not out:
        raise o.UsageError(f"{what} is empty")
    return out


def _problems(text):
    from ..problems import SUBSETS

    if text in SUBSETS:
        return text
    ids = [x.strip() for x in text.split(",") if x.strip()]
    if not ids:
        raise o.UsageError("--problems is empty")
    return ids


def run(args):
    return {"list": _list, "run": _run, "report": _report, "export": _export,
            "cocopp": _cocopp, "reference": _reference}[args.action](args)


def _list(args):
    from ..problems import SPECS, SUBSETS, Suite
    from ..text import format_table

    suite = Suite(args.data)
    rows = []
    for pid, spec in SPECS.items():
        what = spec.metric + (f", {spec.model}" if spec.model else "")
        have = "yes" if pid in suite.specs else f"no ({suite.missing[pid]})"
        rows.append([pid, spec.family, what, ",".join(map(str, spec.folds)), have])
    print(format_table(rows, ["problem", "family", "metric", "folds", "data"]))
    for name, (ids, folds) in SUBSETS.items():
        if name != "full":
            print(f"subset {name}: {', '.join(ids)} (folds {','.join(map(str, folds))})")
    return 0


def _run(args):
    from ..problems import bench

    if args.strategies is None:
        raise o.UsageError("give the optimizers to run: --strategies NAME,NAME,...")
    solvers = o.name_list(args.strategies, "--strategies", "optimizer")
    o.require_allowance(args, "solver")
    budgets = {}
    for item in args.strategy_budget or []:
        name, eq, n = item.rpartition("=")
        if not (eq and name and n.isdigit() and int(n) > 0):
            raise o.UsageError(f"--strategy-budget expects STRATEGY=N with N > 0 "
                               f"evaluations, got {item!r}")
        budgets[name] = int(n)
    o.outputs_writable(args, "output", "json", "plot")
    o.prepare(args)
    res = bench(args.data, solvers, _problems(args.problems),
                folds=_ints(args.instances, "--instances") if args.instances else None,
                seeds=range(args.seeds), budget=args.budget, max_seconds=args.max_seconds,
                budgets=budgets, line_cost=args.line_cost, n_jobs=args.n_jobs,
                output=args.output, references=args.references,
                progress=o.show_progress(args))
    if args.json != "-":
        print(f"{len(res.runs)} runs in {args.output}")
    return _show(res, args)


def _report(args):
    from ..problems import read_runs
    from ..problems import references as refs

    o.outputs_writable(args, "json", "plot", inputs=[args.bench])
    res = read_runs(args.bench)
    if args.references:
        res = res.retargeted(refs.load(args.references), args.references)
    return _show(res, args)


def _beside(path, tag):
    """``path`` with ``tag`` before its suffix (None for None)."""
    if not path:
        return None
    stem, ext = os.path.splitext(path)
    return f"{stem}{tag}{ext or '.png'}"


def _references_line(refs):
    """Which references the targets are relative to (a bench header's ``references``)."""
    if not refs:
        return "references: not recorded (a bench file of an older dfrank)"
    if not isinstance(refs, dict) or not isinstance(refs.get("file"), str):
        return f"references: unreadable in the bench file's header ({refs!r})"
    where = "dfrank's shipped file" if refs["file"] == "shipped" else refs["file"]
    again = ", re-targeted in this report only" if refs.get("retargeted") else ""
    return (f"references: {where} ({refs.get('runs')} runs, the last of {refs.get('date')}"
            f"{again})")


def _show(res, args):
    from ..problems.coco import Coco
    from ..problems.provenance import provenance_lines, seed_rows
    from ..text import format_table

    prof = res.profiles()
    coco = Coco(res.runs)
    out = o.Outputs()
    sessions = res.header.get("sessions") or [res.header.get("provenance")]
    seeds = seed_rows(res.runs)
    report = {"summary": prof.summary_rows(), "flags": prof.flags(),
              "references": res.header.get("references"), "by_dimension": coco.report(),
              "ert_by_problem": coco.problem_report(), "sessions": sessions,
              "seeds": [{"solver": s, "seed": seed, "received": got, "runs": n}
                        for s, seed, got, n in seeds]}
    shown = _ints(args.by_problem, "--by-problem") if args.by_problem else None
    if shown:
        report["by_problem"] = prof.by_problem(shown)
    out.json(args.json, report, "report")
    if args.json != "-":
        print(prof.summary())
        print(_references_line(res.header.get("references")))
        print("\n".join(provenance_lines(sessions)))
        print("\n" + format_table([[str(s), str(seed), got, str(n)] for s, seed, got, n in seeds],
                                  ["solver", "seed", "as the solver received it", "runs"]))
        print("\n" + coco.table())
        print("\n" + coco.problem_table())
        if shown:
            print("\n" + prof.by_problem_table(shown))
    if out.write(args.plot, prof.plot, "plot", ".png") and args.json != "-":
        print(f"ECDFs and data profiles written to {args.plot}")
    dims = _beside(args.plot, "-by-dimension")
    if out.write(dims, coco.plot, "plot", ".png") and args.json != "-":
        print(f"ECDFs per dimension group written to {dims}")
    out.done()
    return 0


def _export(args):
    from ..problems import read_runs

    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise o.UsageError(f"-o {args.output}: a file is there, not a folder")
    bench = read_runs(args.bench)
    if args.format == "coco":
        from ..problems.cocodata import export

        files, empty = export(bench.runs, args.output)
        kind = "COCO's"
    else:
        files, empty = bench.to_ioh(args.output)
        kind = "IOHprofiler's"
    print(f"{len(files)} files written under {args.output} ({kind} format)")
    if empty:
        print(f"{len(empty)} runs made no evaluation and cannot be written in {kind} "
              "format (dfrank's report counts them as runs that reached nothing; "
              "named in no_evaluations.tsv): "
              + "; ".join(f"{r['solver']} on {r['problem']} fold {r['fold']} seed "
                          f"{r['seed']}" for r in empty[:5]) + ("; ..." if len(empty) > 5
                                                               else ""))
    return 0


def _cocopp(args):
    """cocopp's ``main`` on a COCO export as it is: dfrank's testbed registered first (cocopp
    knows its own suites only), each solver's folder one algorithm, the rest of the
    arguments cocopp's own."""
    from ..problems.cocodata import algorithms_of, register_cocopp

    folders = algorithms_of(args.folder)
    cocopp = register_cocopp()
    cocopp.main(list(args.cocopp_args) + folders)
    return 0


def _reference_from_runs(args):
    from ..problems import read_runs
    from ..problems import references as refs

    if args.data is not None or args.line_costs_only:
        raise o.UsageError("--from-runs reads bench files: no DATA and no "
                           "--line-costs-only with it")
    new, changes = refs.from_runs(refs.load(args.merge), [read_runs(b) for b in
                                                          args.from_runs],
                                  command=args.command_line)
    for pid, fold, old, value, by in changes:
        print(f"{pid} fold {fold}: {old:.6f} -> {value:.6f} ({by})")
    refs.save(new, args.output)
    print(f"references written to {args.output}: {len(changes)} values replaced")
    return 0


def _reference(args):
    from ..problems import Suite
    from ..problems import references as refs

    o.outputs_writable(args, "output", inputs=list(args.from_runs or []))
    if args.from_runs:
        return _reference_from_runs(args)
    if args.data is None:
        raise o.UsageError("give the folder of the data sets (or --from-runs BENCH)")
    suite = Suite(args.data)
    instances = suite.select(_problems(args.problems),
                             _ints(args.instances, "--instances") if args.instances else None)
    command = args.command_line

    def said(pid, fold, value, by):
        print(f"{pid} fold {fold}: {value:.4f} ({by})", flush=True)

    if args.line_costs_only:
        if not args.merge:
            raise o.UsageError("--line-costs-only adds line costs to the values of a "
                               "references file: give it with --merge")
        new = refs.add_line_costs(refs.load(args.merge), args.data, instances,
                                  command=command)
    else:
        new = refs.compute(args.data, instances, command=command, progress=said)
        if args.merge:
            new = refs.merge(refs.load(args.merge), new)
    refs.save(new, args.output)
    print(f"references written to {args.output} ({new['runs'][-1]['seconds']:.0f} s)")
    return 0
