"""The ``dfrank`` command line.

Each sub-command is a small function registered in one table (``COMMANDS``); it parses its
own options, calls the Python API and prints. Exit codes: 0 success, 1 a data error (a
malformed or missing file), 2 bad usage (an unknown metric or option, a bad value). Errors
print one line without a traceback unless ``--debug``.
"""

import argparse
import ast
import math
import json
import os
import sys
import time

import numpy as np

from .text import format_table

__all__ = ["main"]

EPILOG = """\
first run:
  dfrank demo                                   learn a ranker on the bundled demo data

examples:
  dfrank fit Fold1/train.txt.gz --valid Fold1/vali.txt.gz --test Fold1/test.txt.gz \\
      --metric ndcg@10 --strategy ca -o model.json
  dfrank evaluate model.json Fold1/test.txt.gz --metric map --metric ndcg@10
  dfrank grid Fold1/train.txt.gz --features 1,10,25 --resolution 50 --metric map \\
      --plot surface.png
  dfrank compare Fold1/train.txt.gz --test Fold1/test.txt.gz \\
      --strategies ca,pso,random,cma:es --seeds 5 --budget 2000 --plot anytime.png
  dfrank trec-eval qrels.txt run.txt            trec_eval's measures of a TREC run
  dfrank fuse qrels.txt a.run b.run --metric map  learn the weights of a fusion of runs
  dfrank info Fold1/train.txt.gz                what a LETOR/SVMlight file holds
  dfrank metrics                                metric names and formulas
  dfrank strategies                             optimizers and their options
  dfrank warmup                                 compile every kernel now (once, all cores)

Run "dfrank COMMAND --help" for the options of a command.
"""


class UsageError(ValueError):
    """Bad command-line usage (exit code 2)."""


# --------------------------------------------------------------------------- helpers
class _Compiling:
    """A block that may compile numba kernels: dfrank._compiling says so after a few
    seconds (once per process), unless --quiet."""

    def __init__(self, quiet):
        from . import _compiling

        _compiling.quiet(quiet)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _warm_up(metric, ties="pessimistic", exact=True, strategy="ca"):
    """Load (or compile) the kernels a run of ``strategy`` needs, on a tiny problem: the
    line search's only for a strategy that makes line searches."""
    from .api import maximize
    from .data import RankingData
    from .registry import resolve

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    tiny = RankingData.from_arrays(X, np.arange(12) % 3, np.repeat([0, 1], 6))
    if resolve(strategy).makes_line_searches:
        maximize(tiny, metric, "ca", restarts=1, max_sweeps=1, ties=ties,
                 line_search="auto" if exact else "steps")
    else:
        maximize(tiny, metric, strategy, budget=4, ties=ties)


def _prefetch(metric, ties="pessimistic"):
    """Start compiling the metric's parallel kernel in the background if it is not cached
    (see :mod:`dfrank.metrics._background`); a bad metric name is reported later, where
    it is used."""
    from .metrics import _background

    try:
        _background.prefetch(metric, ties)
    except (ValueError, TypeError):
        pass


def _show_progress(args):
    return not args.quiet and sys.stderr.isatty()


def _parse_options(pairs):
    """``key=value`` strings into a dict; values are Python literals when they parse."""
    out = {}
    for item in pairs or []:
        if "=" not in item:
            raise UsageError(f"--option expects key=value, got {item!r}")
        k, v = item.split("=", 1)
        k = k.strip().replace("-", "_")
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k] = v
    return out


def _load(path, args, n_features=None, grouping=True):
    """A LETOR/SVMlight file, with the command's --max-features and (``grouping``: the
    command's main file) its --query-file / --one-query."""
    from .io import load_svmlight
    from .io.svmlight import MAX_FEATURES

    return load_svmlight(path, n_features=n_features,
                         query_file=args.query_file if grouping else None,
                         single_query=bool(args.one_query) if grouping else False,
                         max_features=args.max_features or MAX_FEATURES)


def _load_sets(args):
    """TRAIN, and --valid/--test read with TRAIN's feature count (None when absent); a file
    without qids takes its sibling query file (FILE.query), as LightGBM does."""
    train = _load(args.train, args)
    valid = _load(args.valid, args, train.n_features, False) if args.valid else None
    test = _load(args.test, args, train.n_features, False) if args.test else None
    return train, valid, test


def _outputs_writable(args, *names, inputs=()):
    """Check now that the output files named by ``args`` can be written (before any work)
    and that none of them is one of the ``inputs``."""
    from .files import check_not_input, check_writable

    for name in names:
        path = getattr(args, name, None)
        if path:
            what = f"--{name.replace('_', '-')} file"
            check_writable(path, what)
            check_not_input(path, [os.fspath(x) for x in inputs if x], what)


class _Outputs:
    """Writes a command's result files; a write that fails keeps its file elsewhere
    (:func:`dfrank.files.write_kept`), the others are still written, and :meth:`done`
    raises the failures once the command has printed its outcome."""

    def __init__(self):
        self.errors = []

    def write(self, path, write, what, suffix="", stdout=None):
        from .errors import OutputError
        from .files import write_kept

        if not path:
            return False
        try:
            write_kept(path, write, what, suffix, stdout)
        except OutputError as e:
            self.errors.append(e)
            return False
        return True

    def done(self):
        from .errors import OutputError

        if self.errors:
            raise OutputError("\n".join(str(e) for e in self.errors),
                              kept=self.errors[0].kept)


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (v > 0 and np.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return v


def _data_arguments(p, valid_help, test_help):
    """TRAIN, --valid, --test and how files are read, shared by fit and compare."""
    p.add_argument("train", help="LETOR/SVMlight file (plain or .gz; - for standard input)")
    p.add_argument("--valid", help=valid_help)
    p.add_argument("--test", help=test_help)
    _reading_arguments(p, "TRAIN")


def _reading_arguments(p, which="the file"):
    """--query-file, --one-query and --max-features: how a LETOR/SVMlight file is read."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--query-file", metavar="FILE",
                       help=f"group sizes (one per line) for {which} when it has no qid: "
                            f"(default: {which}.query when it exists, as LightGBM)")
    group.add_argument("--one-query", action="store_true",
                       help=f"{which} has no qid: and all its rows are one query")
    p.add_argument("--max-features", type=_positive_int, metavar="N",
                   help="largest feature id read (default 65536: the features become a "
                        "dense matrix)")


def _normalize_sets(kind, train, path):
    """The normalization ``--normalize KIND`` fits on TRAIN (None without the option)."""
    from . import normalization

    if kind is None:
        return None
    if normalization.query_level_source(path):
        raise UsageError(f"{path} is in a QueryLevelNorm folder: its features are already "
                         "normalized within each query, and normalizing them again by "
                         "constants gives a model no engine can apply either. Use the "
                         "collection's raw (Feature) files with --normalize")
    return normalization.fit(train.X, kind)


# --------------------------------------------------------------------------- commands
def cmd_fit(args):
    from ._kernels.scoring import features_T, linear_scores
    from .api import evaluate, maximize

    metric = args.metric
    options = _parse_options(args.option)
    if args.restarts is not None:
        options["restarts"] = args.restarts
    _outputs_writable(args, "output", "result", "checkpoint",
                      inputs=[args.train, args.valid, args.test, args.query_file,
                              args.resume])
    _prefetch(metric, args.ties)
    train, valid, test = _load_sets(args)
    norm = _normalize_sets(args.normalize, train, args.train)
    if norm is not None:
        from . import normalization

        train, valid, test = (normalization.apply(d, norm) if d is not None else None
                              for d in (train, valid, test))
    with _Compiling(args.quiet):
        _warm_up(metric, args.ties, strategy=args.strategy)
    t0 = time.perf_counter()
    result = maximize(train, metric, args.strategy, seed=args.seed, n_jobs=args.n_jobs,
                      budget=args.budget, max_seconds=args.max_seconds, valid=valid,
                      progress=_show_progress(args), ties=args.ties,
                      checkpoint=args.checkpoint, resume=args.resume, **options)
    secs = time.perf_counter() - t0
    if norm is not None:
        result.normalization = norm
    ranker = result.ranker
    scores = {"train": result.value}
    if valid is not None:
        scores["valid"] = result.valid_value
    if test is not None:   # already normalized: score with the bare weights
        scores["test"] = evaluate(linear_scores(features_T(test), result.weights), test,
                                  metric, ties=args.ties)
    ranker.meta.update({"train_file": os.path.abspath(args.train), "test": scores.get("test")})
    out = _Outputs()
    saved = out.write(args.output, ranker.save, "model", ".json",
                      stdout=lambda: json.dumps(ranker.to_dict(), indent=1) + "\n")
    out.write(args.result, result.save, "result", ".json")
    if args.json:
        print(json.dumps({"metric": result.metric, "scores": scores,
                          "n_evals": result.n_evals, "seconds": secs,
                          "strategy": result.strategy, "interrupted": result.interrupted,
                          "model": args.output, "weights": result.weights.tolist()}))
        out.done()
        return 0
    rows = [[k, f"{v:.4f}"] for k, v in scores.items()]
    rows += [["evaluations", str(result.n_evals)], ["time", f"{secs:.2f} s"]]
    print(f"{result.strategy} on {train.n_queries} queries, {train.n_features} features "
          f"(seed {args.seed})")
    print(format_table(rows, ["", result.metric]))
    if result.interrupted:
        print(f"note: {result.message} (the best point found so far is kept)")
    if saved:
        print(f"model written to {args.output}")
    out.done()
    return 0


def cmd_evaluate(args):
    from .api import evaluate
    from .result import LinearRanker

    model = LinearRanker.load(args.model)
    data = _load(args.data, args, n_features=model.n_features)
    if data.n_features != model.n_features:
        raise UsageError(f"the model has {model.n_features} features but {args.data} has "
                         f"{data.n_features}")
    metrics = args.metric or ["ndcg@10", "map"]
    if args.letor_tool:
        values = _letor_tool_values(model.predict(data), data, metrics, args)
    else:
        with _Compiling(args.quiet):
            scores = model.predict(data)
            values = evaluate(scores, data, metrics, ties=args.ties, per_query=args.per_query)
    if args.json:
        out = {k: (v.tolist() if args.per_query else v) for k, v in values.items()}
        if args.per_query:
            out["qid"] = [q.item() if hasattr(q, "item") else q for q in data.qids]
        print(json.dumps(out))
        return 0
    if args.per_query:
        names = list(values)
        rows = [[str(q)] + [f"{values[n][i]:.4f}" for n in names]
                for i, q in enumerate(data.qids)]
        rows.append(["all"] + [f"{np.nanmean(values[n]):.4f}" for n in names])
        print(format_table(rows, ["qid"] + names))
    else:
        print(format_table([[k, f"{v:.4f}"] for k, v in values.items()],
                           ["metric", "value"]))
    return 0


def _letor_tool_values(scores, data, metrics, args):
    """``metrics`` of ``scores`` as LETOR's evaluation tool computes them."""
    from .metrics.letor_tool import MAX_CUTOFF, evaluate_letor

    if args.ties != "pessimistic":
        raise UsageError("--letor-tool orders equal scores as the tool does (file order); "
                         "drop --ties")
    every = evaluate_letor(scores, data, version=args.letor_tool, per_query=args.per_query)
    names = [m.strip().lower() for m in metrics]
    unknown = [m for m in names if m not in every]
    if unknown:
        k = MAX_CUTOFF[args.letor_tool]
        raise UsageError(f"--letor-tool {args.letor_tool} computes p@1..p@{k}, "
                         f"ndcg@1..ndcg@{k} and map, not {', '.join(unknown)}")
    return {m: every[m] for m in names}


def cmd_grid(args):
    from .objective import LinearObjective
    from .spaces import Simplex

    try:
        ids = [int(x) for x in args.features.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--features expects comma-separated feature ids, got "
                         f"{args.features!r}") from None
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise UsageError("--features needs two or more distinct feature ids, e.g. 3,7,12")
    _outputs_writable(args, "plot", inputs=[args.train, args.query_file])
    train = _load(args.train, args).select_features(ids)
    obj = LinearObjective(train, args.metric, ties=args.ties)
    space = obj.space
    size = space.grid_size(args.resolution)
    if size > args.max_points:
        raise UsageError(f"resolution {args.resolution} over {len(ids)} features makes "
                         f"{size:,} grid points (more than --max-points {args.max_points:,})")
    with _Compiling(args.quiet):
        _warm_up(args.metric, args.ties)
    from tqdm.auto import tqdm

    pts, vals = [], []
    bar = tqdm(total=size, unit="pt", disable=not _show_progress(args), leave=False)
    t0 = time.perf_counter()
    for chunk in space.grid(args.resolution, chunk_size=4096):
        pts.append(chunk)
        vals.append(obj.batch(chunk))
        bar.update(len(chunk))
    bar.close()
    pts = np.vstack(pts)
    vals = np.concatenate(vals)
    secs = time.perf_counter() - t0
    i = int(np.argmax(vals))
    w = Simplex(len(ids)).to_weights(pts[i])
    print(f"grid of {size:,} points (resolution {args.resolution}) over features "
          f"{ids} in {secs:.2f} s")
    print(f"best {obj.metric.name} = {vals[i]:.4f} at weights "
          + ", ".join(f"f{f}: {x:+.3f}" for f, x in zip(ids, w)))
    face = np.isclose(pts[:, -1], 0.0)  # non-negative weights: Metzler's Figure 1
    if len(ids) == 3:
        j = np.flatnonzero(face)[np.argmax(vals[face])]
        print(f"best with non-negative weights = {vals[j]:.4f} at "
              + ", ".join(f"f{f}: {x:.3f}" for f, x in zip(ids, pts[j, :3])))
    if args.plot:
        if len(ids) != 3:
            raise UsageError("--plot draws the ternary surface of exactly three features")
        from .plot import ternary_surface

        j = np.flatnonzero(face)[np.argmax(vals[face])]
        ternary_surface(pts[face, :3], vals[face], path=args.plot,
                        labels=[f"feature {f}" for f in ids], best=pts[j, :3],
                        title=f"{obj.metric.name} (non-negative weights)")
        print(f"surface written to {args.plot}")
    return 0


def cmd_demo(args):
    from .api import maximize
    from .datasets import load_demo

    t_start = time.perf_counter()
    metric = "ndcg@10"
    _prefetch(metric)
    train, valid, test = load_demo()
    print("dfrank demo: learn a linear ranker that maximizes NDCG@10 directly")
    print(f"  data: synthetic LETOR-like set bundled with dfrank, {train.n_features} "
          f"features, graded labels 0-4 from a planted linear model plus noise")
    print(f"        train {train.n_queries} queries / {train.n_docs} documents, valid "
          f"{valid.n_queries}, test {test.n_queries}")
    with _Compiling(args.quiet):
        _warm_up(metric, exact=False)
    rows = []
    # RankLib-style steps keep the first run short: the exact line search's kernels are
    # compiled on their first use (dfrank fit), about 20 s once
    runs = [("coordinate ascent (RankLib-style steps)", "ca",
             dict(restarts=3, line_search="steps")),
            ("particle swarm (RankPSO)", "pso", dict(iterations=60)),
            ("random search (baseline)", "random", dict(n_samples=1000))]
    best = None
    for label, name, opts in runs:
        t = time.perf_counter()
        r = maximize(train, metric, name, seed=args.seed, valid=valid, **opts)
        secs = time.perf_counter() - t
        te = r.ranker.evaluate(test, metric)
        rows.append([label, f"{r.value:.4f}", f"{r.valid_value:.4f}", f"{te:.4f}",
                     str(r.n_evals), f"{secs:.2f} s"])
        if best is None:
            best = r
    print(format_table(rows, ["strategy", "train", "valid", "test", "evals", "time"]))
    w = best.weights / np.abs(best.weights).max()
    print("  learned weights (coordinate ascent, scaled):" +
          "".join(f" {x:+.2f}" for x in w))
    print(f"done in {time.perf_counter() - t_start:.1f} s. Next: dfrank fit --help (your own "
          "files), or README.md for the Python API.")
    return 0


def cmd_compare(args):
    from .compare import compare

    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    if not names:
        raise UsageError("--strategies needs at least one strategy name")
    if args.seeds < 1:
        raise UsageError(f"--seeds must be at least 1, got {args.seeds}")
    if args.budget is None and args.max_seconds is None:
        raise UsageError("give --budget (evaluations) and/or --max-seconds: every strategy "
                         "gets the same allowance")
    options = {}
    for item in args.option or []:
        left, eq, value = item.partition("=")
        name, sep, key = left.rpartition(":")   # names may hold ':' (cma:es:sigma0=0.3)
        if not (eq and sep and name and key):
            raise UsageError(f"--option expects STRATEGY:KEY=VALUE, got {item!r}")
        options.setdefault(name, {}).update(_parse_options([f"{key}={value}"]))
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise UsageError(f"--option names strategies not in --strategies: {unknown}")
    if args.line_cost != "measured" and not (args.line_cost.isdigit() and
                                             int(args.line_cost) >= 1):
        raise UsageError(f"--line-cost expects an int >= 1 or 'measured', got "
                         f"{args.line_cost!r}")
    _outputs_writable(args, "json", "plot",
                      inputs=[args.train, args.valid, args.test, args.query_file])
    train, valid, test = _load_sets(args)
    with _Compiling(args.quiet):
        _warm_up(args.metric, args.ties)
    if args.line_cost == "measured":
        from .objective import LinearObjective, line_search_cost

        worth = line_search_cost(LinearObjective(train, args.metric, ties=args.ties))
        line_cost = math.ceil(worth)
        print(f"an exact line search takes the time of {worth:.1f} single evaluations: it "
              f"counts {line_cost}")
    else:
        line_cost = int(args.line_cost)
    cmp = compare(train, names, seeds=range(args.seeds), budget=args.budget,
                  max_seconds=args.max_seconds, metric=args.metric, valid=valid, test=test,
                  n_jobs=args.n_jobs, options=options, test_name=args.test_name,
                  ties=args.ties, progress=_show_progress(args), line_cost=line_cost)
    allowance = " and ".join(x for x in (
        f"{args.budget} evaluations" if args.budget is not None else "",
        f"{args.max_seconds:g} s" if args.max_seconds is not None else "") if x)
    print(f"{len(names)} strategies x {args.seeds} seeds on {train.n_queries} queries, "
          f"{train.n_features} features; {allowance} per run")
    print(cmp.summary())
    out = _Outputs()
    if out.write(args.json, cmp.to_json, "comparison", ".json"):
        print(f"comparison written to {args.json}")
    if out.write(args.plot, cmp.plot, "plot", os.path.splitext(args.plot or "")[1]):
        print(f"anytime curves written to {args.plot}")
    out.done()
    return 0


def cmd_trec_eval(args):
    from .metrics.trec_eval import evaluate_run

    with _Compiling(args.quiet):
        res = evaluate_run(args.qrels, args.run, args.measure or ["official"],
                           complete=args.complete, rel_level=args.level,
                           max_docs=args.max_docs, iprec_rounding=args.iprec_rounding)
    sys.stdout.write(res.format(per_query=args.per_query))
    return 0


def cmd_export(args):
    from .export import ExportError
    from .result import LinearRanker

    _outputs_writable(args, "output", inputs=[args.model, args.names])
    model = LinearRanker.load(args.model)
    names, lines = _names_arg(args.names)
    try:
        text = model.export(None, args.format, names)
    except ExportError as e:
        if lines is None or e.index is None:
            raise
        raise UsageError(f"{args.names}, line {lines[e.index]}: {e}") from None
    if not args.output:
        sys.stdout.write(text)
        return 0
    from .files import write_text_atomic

    out = _Outputs()
    if out.write(args.output, lambda p: write_text_atomic(p, text), f"{args.format} model",
                 os.path.splitext(args.output)[1], stdout=lambda: text):
        print(f"{args.format} model written to {args.output}")
    out.done()
    return 0


def _names_arg(value):
    """--names: a file with one name per line (blank lines and # comments skipped), or
    names separated by commas. Returns (names, the file's line of each name or None)."""
    if value is None:
        return None, None
    if os.path.isfile(value):
        with open(value, encoding="utf-8-sig") as f:
            kept = [(i, ln.strip()) for i, ln in enumerate(f, 1)
                    if ln.strip() and not ln.lstrip().startswith("#")]
        return [n for _, n in kept], [i for i, _ in kept]
    return [n.strip() for n in value.split(",")], None


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
                raise UsageError(f"--{'param' if kind == 'real' else 'int'} expects {form}, "
                                 f"got {item!r}")
            if name in spec:
                raise UsageError(f"parameter {name!r} is given twice")
            spec[name] = (lo, hi) + (("log",) if len(parts) == 3 else ()) + \
                (("int",) if kind == "int" else ())
    default = {}
    for item in args.default or []:
        name, sep, val = item.partition("=")
        try:
            default[name] = float(val)
        except ValueError:
            raise UsageError(f"--default expects NAME=VALUE, got {item!r}") from None
    if not spec and model is not None:
        from .ir import MODELS

        spec = {k: (lo, hi) + (("log",) if lg else ()) for k, (_, lo, hi, lg) in
                MODELS[model].items()}
        default = default or {k: v[0] for k, v in MODELS[model].items()}
    if not spec:
        raise UsageError("give the parameters to tune: --param NAME=LOW:HIGH[:log] or --int "
                         "NAME=LOW:HIGH")
    if default and set(default) != set(spec):
        raise UsageError(f"--default must give every parameter ({', '.join(spec)})")
    return spec, default or None


def _engine(args, need_qrels=True):
    """The built-in engine on --collection (a file, or a Cranfield / CISI folder)."""
    from . import ir
    from .io.forms import read_qrels

    path = args.collection
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "cran.all.1400.gz")):
            docs, topics, qrels = ir.load_cranfield(path)
        elif os.path.exists(os.path.join(path, "CISI.ALL.gz")):
            docs, topics, qrels = ir.load_cisi(path)
        else:
            raise UsageError(f"{path}: a folder is read as Cranfield or CISI (their SMART "
                             "files); give a TSV or JSON-lines collection file otherwise")
    else:
        if not args.topics:
            raise UsageError("--collection FILE needs --topics (TREC topics, TSV or "
                             "JSON lines)")
        docs, topics, qrels = ir.read_collection(path), ir.read_topics(args.topics), None
    if args.topics and os.path.isdir(path):
        topics = ir.read_topics(args.topics)
    if getattr(args, "qrels", None):
        qrels = read_qrels(args.qrels)
    if qrels is None and need_qrels:
        raise UsageError("--qrels is needed to evaluate the runs")
    return ir.Engine(docs, topics, qrels if need_qrels else None)


def cmd_search(args):
    from .io.forms import run_to_trec_lines

    _outputs_writable(args, "out", inputs=[args.collection, args.topics])
    params = {}
    for item in args.set or []:
        name, sep, val = item.partition("=")
        try:
            params[name] = float(val)
        except ValueError:
            raise UsageError(f"--set expects NAME=VALUE, got {item!r}") from None
    with _Compiling(args.quiet):
        engine = _engine(args, need_qrels=False)
        run = engine.run(args.model, params, depth=args.depth)
    lines = run_to_trec_lines(run, tag=f"dfrank-{args.model}")
    if args.out:
        from .files import write_text_atomic

        out = _Outputs()
        out.write(args.out, lambda p: write_text_atomic(p, "".join(lines)), "run", ".run")
        out.done()
    else:
        sys.stdout.writelines(lines)
    return 0


def cmd_tune(args):
    from .tuning import tune

    command = list(args.command or [])
    if command[:1] == ["--"]:
        command = command[1:]
    _outputs_writable(args, "json", "cache", inputs=[args.qrels, args.collection, args.topics])
    options = _parse_options(args.option)
    if command:
        from .command import CommandRun

        if args.collection:
            raise UsageError("give --collection (the built-in engine) or a command after "
                             "--, not both")
        if not args.qrels:
            raise UsageError("--qrels is needed to evaluate the command's runs")
        spec, default = _param_specs(args, None)
        runner = CommandRun(command, list(spec), timeout=args.timeout)
        target, qrels, system = runner, args.qrels, runner.describe()
    else:
        if not args.collection:
            raise UsageError("give a command after -- (e.g. -- ./search --k1 {k1} --b {b} "
                             "--out {run}) or --collection for the built-in engine")
        spec, default = _param_specs(args, args.model)
        with _Compiling(args.quiet):
            engine = _engine(args)
        target, qrels, system = (engine, args.model), None, None
    with _Compiling(args.quiet):
        res = tune(target, spec, qrels, args.metric, strategy=args.strategy,
                   budget=args.budget, folds=args.folds, n_jobs=args.jobs, cache=args.cache,
                   seed=args.seed, default=default, progress=_show_progress(args),
                   system=system, **options)
    out = _Outputs()
    saved = out.write(args.json, res.to_json, "tune result", ".json")
    print(res.summary())
    if args.folds:
        for i, f in enumerate(res.folds):
            ps = ", ".join(f"{k}={v:g}" for k, v in f["params"].items())
            print(f"  fold {i + 1}: {ps}  train {f['train_value']:.4f}  held out "
                  f"{f['held_out_value']:.4f} ({len(f['queries'])} queries)")
    if saved:
        print(f"result written to {args.json}")
    out.done()
    return 0


def cmd_fuse(args):
    from .fusion import fuse

    _outputs_writable(args, "output", "json", inputs=[args.qrels, *args.runs])
    names = []
    for path in args.runs:
        base = os.path.basename(path)
        for ext in (".gz", ".txt", ".run", ".trec"):
            base = base[:-len(ext)] if base.endswith(ext) else base
        names.append(base)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"two runs would have the same name {dup[0]!r} (run names come "
                         "from the file names); rename a file")
    missing = args.missing
    if missing not in ("zero", "min"):
        try:
            missing = float(missing)
        except ValueError:
            raise UsageError(f"--missing expects zero, min or a number, got "
                             f"{args.missing!r}") from None
    with _Compiling(args.quiet):
        res = fuse(args.qrels, dict(zip(names, args.runs)), args.metric, norm=args.norm,
                   missing=missing, signed=args.signed, strategy=args.strategy,
                   folds=args.folds, seed=args.seed, complete=args.complete,
                   test=args.test_name)
    print(f"fusion of {len(names)} runs ({args.norm} normalization, missing documents "
          f"{args.missing}) in {res.seconds:.2f} s")
    print(res.summary())
    out = _Outputs()
    if out.write(args.output, res.to_trec, "fused run", ".run"):
        print(f"fused run written to {args.output}")
    if out.write(args.json, res.to_json, "fusion result", ".json"):
        print(f"result written to {args.json}")
    if args.export:
        print(json.dumps(res.export(args.export), indent=1))
    out.done()
    return 0


def cmd_warmup(args):
    from .warmup import warm

    print(f"compiling dfrank's numba kernels ({args.what}) on "
          f"{args.jobs or os.cpu_count()} processes; they are cached on disk for every "
          "later run", file=sys.stderr)
    secs = warm(args.what, args.jobs, progress=None if args.quiet else
                lambda name, s: print(f"  {name:28s} {s:6.1f} s", file=sys.stderr))
    print(f"kernels ready in {secs:.1f} s")
    return 0


def cmd_info(args):
    data = _load(args.file, args)
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
    const = np.flatnonzero(np.all(data.X == data.X[:1], axis=0))
    if const.size:
        print(f"  constant features: {', '.join(str(data.feature_ids[j]) for j in const)}")
    return 0


def cmd_metrics(args):
    from . import metrics

    for name in metrics.available():
        print(f"{name:14s} {metrics.describe(name.replace('@k', '@10'))}")
    return 0


def cmd_strategies(args):
    from . import registry

    import textwrap

    for name in registry.available():
        obj = registry.get(name)
        cls = obj if isinstance(obj, type) else type(obj)
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        primary = getattr(cls, "name", None)
        alias = f" (alias of {primary})" if primary and primary != name else ""
        lines = textwrap.wrap(doc + alias, 100 - 19) or [""]
        print(f"{name:18s} {lines[0]}")
        for line in lines[1:]:
            print(" " * 19 + line)
    return 0


# --------------------------------------------------------------------------- parser
def _common(p, ties=True, quiet=True):
    if ties:
        p.add_argument("--ties", default="pessimistic",
                       choices=["pessimistic", "optimistic", "stable", "expected"],
                       help="how equal scores are ordered (default: pessimistic, worst "
                            "label first)")
    if quiet:
        p.add_argument("--quiet", action="store_true", help="no progress bar or notes")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def _parser():
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog="dfrank", formatter_class=fmt, epilog=EPILOG,
        description="Directly maximize rank-based metrics (MAP, NDCG@k, P@k, MRR, ERR@k) "
                    "of linear rankers over Metzler's multinomial manifold.")
    p.add_argument("--version", action="version", version=_version())
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    f = sub.add_parser("fit", formatter_class=fmt, help="learn a linear ranker",
                       description="Learn a linear ranker on TRAIN that maximizes --metric "
                                   "directly, and write it as JSON.",
                       epilog="example:\n  dfrank fit Fold1/train.txt.gz --valid "
                              "Fold1/vali.txt.gz --test Fold1/test.txt.gz \\\n"
                              "      --metric ndcg@10 -o model.json\n"
                              "  dfrank fit Fold1/train.txt.gz --strategy ca --restarts 5 "
                              "-o model.json\n\nWith --valid, the validation metric is "
                              "reported, and es and ca keep their best restart on it.\n"
                              "Ctrl-C stops the run and keeps the best point found so far.\n"
                              "Long runs: add --checkpoint run.ckpt; after a crash, the same "
                              "command with\n--resume "
                              "run.ckpt finishes it with the result of an uninterrupted run.")
    _data_arguments(f, "validation file (chooses among restarts)", "test file (only reported)")
    f.add_argument("--metric", default="ndcg@10", help="metric to maximize (default ndcg@10)")
    f.add_argument("--strategy", default="smoothed_es",
                   help="optimizer (default smoothed_es: 10 CMA-ES runs of 16,000 "
                        "evaluations on the metric smoothed by 8 perturbations, averaged "
                        "into one ranker; es: plain CMA-ES runs, the best on --valid, else "
                        "on TRAIN, wins; ca: coordinate ascent with the exact line search; "
                        "see 'dfrank strategies')")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--n-jobs", type=int, default=1, help="parallel restarts (-1: all cores)")
    f.add_argument("--restarts", type=int, help="restarts of the strategy")
    f.add_argument("--budget", type=_positive_int,
                   help="objective evaluations in all (an exact line search counts one)")
    f.add_argument("--max-seconds", type=_positive_float, help="wall-clock limit")
    f.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a strategy option, e.g. --option evals=8000 (es), --option "
                        "rule=best (ca) (repeatable)")
    f.add_argument("--checkpoint", metavar="FILE",
                   help="save finished restarts here (JSON, atomically, every few seconds)")
    f.add_argument("--resume", metavar="FILE",
                   help="continue the run saved in this checkpoint (same arguments: the "
                        "result equals an uninterrupted run)")
    f.add_argument("--normalize", choices=["standard", "minmax"],
                   help="normalize each feature by constants fitted on TRAIN ((x - mean) / "
                        "std, or (x - min) / (max - min)), applied to every set; the model "
                        "keeps them, so 'dfrank export' writes them as the engine's "
                        "normalizers. (Files in LETOR's QueryLevelNorm folders are "
                        "recognized as normalized within each query.)")
    f.add_argument("-o", "--output", help="write the model (JSON) here")
    f.add_argument("--result", help="write the full result (JSON, with traces) here")
    f.add_argument("--json", action="store_true", help="print the outcome as JSON")
    _common(f)
    f.set_defaults(func=cmd_fit)

    e = sub.add_parser("evaluate", formatter_class=fmt, help="evaluate a model on data",
                       description="Score DATA with MODEL and print metrics.",
                       epilog="example:\n  dfrank evaluate model.json Fold1/test.txt.gz "
                              "--metric map --metric ndcg@10 --per-query\n"
                              "  dfrank evaluate model.json OHSUMED/Fold1/test.txt "
                              "--letor-tool   (as LETOR's published tables)")
    e.add_argument("model", help="model JSON written by 'dfrank fit'")
    e.add_argument("data", help="LETOR/SVMlight file")
    e.add_argument("--metric", action="append",
                   help="metric (repeatable; default ndcg@10 and map)")
    _reading_arguments(e, "DATA")
    e.add_argument("--per-query", action="store_true", help="one row per query")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.add_argument("--letor-tool", nargs="?", const="3.0", choices=["3.0", "4.0"],
                   metavar="VERSION",
                   help="score as LETOR's Eval-Score-VERSION.pl (3.0, the default, for "
                        "OHSUMED; 4.0 for MQ2007/MQ2008), which produced the published "
                        "numbers on its folds: ranks 1 and 2 undiscounted then 1/log2(rank), "
                        "ties in file order, NDCG@k of a query shorter than k counts 0 "
                        "(metrics p@1..16 for 3.0 or p@1..10 for 4.0, ndcg@ the same, map)")
    _common(e)
    e.set_defaults(func=cmd_evaluate)

    g = sub.add_parser("grid", formatter_class=fmt,
                       help="metric surface over a few features (Metzler's Figure 1)",
                       description="Evaluate every grid point of the simplex of the chosen "
                                   "features (resolution K: points k/K) and report the best; "
                                   "with three features, --plot draws the surface over "
                                   "their non-negative weights as a ternary heat map.",
                       epilog="example:\n  dfrank grid Fold1/train.txt.gz --features 1,10,25 "
                              "--resolution 50 --metric map --plot surface.png")
    g.add_argument("train")
    g.add_argument("--features", required=True, help="comma-separated feature ids (1-based)")
    g.add_argument("--resolution", type=int, default=30, help="grid resolution K (default 30)")
    g.add_argument("--metric", default="map")
    g.add_argument("--max-points", type=int, default=2_000_000)
    _reading_arguments(g, "TRAIN")
    g.add_argument("--plot", help="write the ternary surface (PNG) here")
    _common(g)
    g.set_defaults(func=cmd_grid)

    d = sub.add_parser("demo", formatter_class=fmt, help="a first run on bundled data",
                       description="Learn rankers on the small synthetic set bundled with "
                                   "dfrank and compare strategies (well under a minute, "
                                   "first-run compilation included).",
                       epilog="example:\n  dfrank demo --seed 1")
    d.add_argument("--seed", type=int, default=0)
    _common(d, ties=False)
    d.set_defaults(func=cmd_demo)

    c = sub.add_parser("compare", formatter_class=fmt,
                       help="compare optimizers on one objective with one budget",
                       description="Run every strategy with every seed on TRAIN's --metric, "
                                   "each with the same allowance (--budget objective "
                                   "evaluations and/or --max-seconds), counted by the "
                                   "objective. Prints mean +- sd of the train (and valid/"
                                   "test) metric, and the evaluations and seconds each "
                                   "strategy needed to reach 95% and 99% of the best value "
                                   "any run found; with --test, a paired test over queries "
                                   "marks the strategies that differ from the best one.",
                       epilog="examples:\n  dfrank compare Fold1/train.txt.gz --test "
                              "Fold1/test.txt.gz --strategies ca,pso,random \\\n"
                              "      --seeds 5 --budget 2000 --metric ndcg@10 --json "
                              "cmp.json --plot anytime.png\n"
                              "  dfrank compare train.txt --strategies ca,scipy:powell,"
                              "nevergrad:NGOpt --max-seconds 5 \\\n"
                              "      --option ca:line_search=steps\n\n"
                              "External optimizers (scipy:*, cma:es, nevergrad:NAME, "
                              "optuna:*) need\npip install \"dfrank[compare]\"; "
                              "'dfrank strategies' lists what is installed.\n"
                              "With --max-seconds, keep --n-jobs 1 so that runs do not "
                              "share cores.")
    _data_arguments(c, "validation file (chooses among each run's restarts)",
                    "test file (reported; significance vs the best)")
    c.add_argument("--strategies", default="ca,pso,random",
                   help="comma-separated strategy names (default ca,pso,random)")
    c.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per strategy "
                                                         "(default 5)")
    c.add_argument("--budget", type=_positive_int, help="objective evaluations per run")
    c.add_argument("--max-seconds", type=_positive_float, help="wall-clock limit per run")
    c.add_argument("--line-cost", default="1", metavar="N|measured",
                   help="evaluations of --budget an exact line search counts: 1 (default), "
                        "an int, or 'measured' (the single evaluations its time is worth "
                        "on this data, rounded up)")
    c.add_argument("--metric", default="ndcg@10", help="metric to maximize (default ndcg@10)")
    c.add_argument("--test-name", default="randomization",
                   choices=["randomization", "t", "wilcoxon", "sign"],
                   help="paired test against the best strategy (default randomization)")
    c.add_argument("--n-jobs", type=int, default=1, help="runs in parallel (-1: all cores)")
    c.add_argument("--option", action="append", metavar="STRATEGY:KEY=VALUE",
                   help="a strategy option, e.g. --option pso:swarm_size=40 (repeatable)")
    c.add_argument("--json", help="write the comparison (JSON, with traces) here")
    c.add_argument("--plot", help="write the anytime curves (PNG) here")
    _common(c)
    c.set_defaults(func=cmd_compare)

    t = sub.add_parser("trec-eval", formatter_class=fmt,
                       help="trec_eval's measures of a TREC run, trec_eval's output",
                       description="Evaluate a TREC run (qid Q0 docno rank score runid) "
                                   "against qrels (qid iter docno rel) exactly as trec_eval "
                                   "does, printing trec_eval's three-column layout. Ties "
                                   "in score are broken by docno, descending; the rank "
                                   "column is ignored.",
                       epilog="examples:\n  dfrank trec-eval qrels.txt run.txt\n"
                              "  dfrank trec-eval -q -m map -m ndcg_cut.10 -m P.5,10 "
                              "qrels.txt run.txt.gz")
    t.add_argument("qrels")
    t.add_argument("run")
    t.add_argument("-q", dest="per_query", action="store_true",
                   help="also print every query's values")
    t.add_argument("-c", dest="complete", action="store_true",
                   help="average over every query of the qrels: a judged query the run "
                        "lacks counts 0 (with -q it gets a block of zeros, as trec_eval 10 "
                        "prints)")
    t.add_argument("-l", dest="level", type=int, default=1,
                   help="lowest judgment counted relevant (default 1)")
    t.add_argument("-M", dest="max_docs", type=int,
                   help="only the first N documents of each ranking")
    t.add_argument("--iprec-rounding", choices=("legacy", "nearest"), default="legacy",
                   help="recall level x needs int(x R + 0.9) relevant documents (legacy: "
                        "trec_eval 9, pytrec_eval) or round(x R) (nearest: trec_eval 10)")
    t.add_argument("-m", dest="measure", action="append", metavar="MEASURE",
                   help="measure (repeatable): official (default), map, gm_map, Rprec, "
                        "bpref, recip_rank, iprec_at_recall, P[.k,...], recall[.k,...], "
                        "ndcg, ndcg_cut[.k,...], map_cut[.k,...], success[.k,...], num_q, "
                        "num_ret, num_rel, num_rel_ret, runid")
    _common(t, ties=False)
    t.set_defaults(func=cmd_trec_eval)

    u = sub.add_parser("fuse", formatter_class=fmt,
                       help="learn the weights of a fusion of TREC runs",
                       description="Learn the weights of a linear fusion of RUNs (TREC run "
                                   "files) that maximize --metric on QRELS, exactly: each "
                                   "run's scores are normalized per query, and coordinate "
                                   "ascent searches the non-negative weights summing to 1 "
                                   "with the exact line search. Prints each run, CombSUM, "
                                   "reciprocal-rank fusion and the learned fusion (with "
                                   "--folds also held out) with paired p-values; the metric "
                                   "is computed as trec_eval computes it.",
                       epilog="examples:\n  dfrank fuse qrels.txt bm25.run dense.run "
                              "splade.run --metric map -o fused.run\n  dfrank fuse "
                              "qrels.txt a.run b.run --metric ndcg@10 --folds 5 --json "
                              "fusion.json --export opensearch")
    u.add_argument("qrels")
    u.add_argument("runs", nargs="+", metavar="RUN")
    u.add_argument("--metric", default="map", help="metric to maximize (default map)")
    u.add_argument("--norm", default="minmax",
                   choices=["minmax", "zscore", "sum", "max", "rank", "borda", "l2", "none"],
                   help="per-query normalization of each run (default minmax)")
    u.add_argument("--missing", default="zero",
                   help="score of a document a run did not retrieve: zero (default), min "
                        "(the run's lowest) or a number")
    u.add_argument("--signed", action="store_true",
                   help="allow negative weights (Metzler's augmented simplex)")
    u.add_argument("--strategy", default="ca",
                   help="search (default ca; with --signed any strategy)")
    u.add_argument("--folds", type=_positive_int,
                   help="cross-validate the weights by query over this many folds")
    u.add_argument("--complete", action="store_true",
                   help="count judged queries no run retrieved as 0 (trec_eval -c)")
    u.add_argument("--test", dest="test_name", default="randomization",
                   choices=["randomization", "t", "wilcoxon", "sign"])
    u.add_argument("--seed", type=int, default=0)
    u.add_argument("-o", "--output", help="write the fused run (TREC) here")
    u.add_argument("--json", help="write the result (weights, values, baselines) here")
    u.add_argument("--export", choices=["ranx", "opensearch", "elasticsearch"],
                   help="print the weights as that system takes them")
    _common(u, ties=False)
    u.set_defaults(func=cmd_fuse)

    t = sub.add_parser("tune", formatter_class=fmt,
                       help="tune a retrieval system's parameters on a metric",
                       description="Search the parameters of a retrieval system for the "
                                   "highest metric, with fewer runs than a grid: the built-in "
                                   "engine (--collection, a model: bm25, ql, sdm), or any "
                                   "engine's command after --, run once per point without a "
                                   "shell, in a fresh temporary folder, with {name} replaced "
                                   "by a parameter's value, {run} by the TREC run file it must "
                                   "write (without {run}, its standard output is the run) and "
                                   "{cwd} by the folder you started dfrank in. The runs are "
                                   "scored as trec_eval scores them, averaged over the judged "
                                   "queries (trec_eval -c).",
                       epilog="examples:\n  dfrank tune --collection data/cranfield --model "
                              "bm25 --metric map --folds 5\n  dfrank tune --qrels "
                              "qrels.txt --param k1=0.1:3 --param b=0:1 --default k1=1.2 "
                              "--default b=0.75 \\\n      --budget 40 --cache tune.jsonl "
                              "--json tune.json -- \\\n      python {cwd}/search.py --k1 "
                              "{k1} --b {b} --out {run}\n\nA run that fails (non-zero "
                              "exit, no run, a malformed run) is an error naming the point "
                              "and\nthe command's last stderr lines when no run has "
                              "succeeded yet; later, it is recorded\nas failed and the "
                              "search goes on. --cache keeps every run: the same command "
                              "again\n(or with a larger --budget) repeats none.")
    t.add_argument("--qrels", help="judgments (TREC qrels); the queries tuned are those "
                                   "with some")
    t.add_argument("--collection", help="built-in engine: a TSV / JSON-lines collection, or "
                                        "a Cranfield or CISI folder")
    t.add_argument("--topics", help="built-in engine: TREC topics, TSV or JSON lines")
    t.add_argument("--model", default="bm25", choices=["bm25", "ql", "sdm"],
                   help="built-in engine's model (default bm25; its usual ranges when no "
                        "--param is given)")
    t.add_argument("--param", action="append", metavar="NAME=LOW:HIGH[:log]",
                   help="a real parameter and its range (repeatable)")
    t.add_argument("--int", action="append", metavar="NAME=LOW:HIGH",
                   help="a whole-number parameter and its range (repeatable)")
    t.add_argument("--default", action="append", metavar="NAME=VALUE",
                   help="the reference point, reported beside the tuned one (repeatable)")
    t.add_argument("--metric", default="map", help="metric (default map; computed as "
                                                   "trec_eval does)")
    t.add_argument("--strategy", help="search strategy (default pattern)")
    t.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a strategy option (repeatable)")
    t.add_argument("--budget", type=_positive_int, default=40, help="runs in all (default 40)")
    t.add_argument("--folds", type=int, help="cross-validate over this many query folds")
    t.add_argument("--jobs", type=int, default=1, help="runs in parallel (default 1)")
    t.add_argument("--cache", metavar="FILE", help="keep every run here (JSON lines) and "
                                                   "reuse them")
    t.add_argument("--json", metavar="FILE", help="write the result here")
    t.add_argument("--timeout", type=_positive_float, default=3600.0,
                   help="seconds one run of the command may take (default 3600)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("command", nargs=argparse.REMAINDER,
                   help="-- COMMAND ARGS...: the engine's command")
    _common(t, ties=False)
    t.set_defaults(func=cmd_tune)

    r = sub.add_parser("search", formatter_class=fmt,
                       help="rank a collection with the built-in engine, as a TREC run",
                       description="Rank every topic's documents with the built-in engine "
                                   "(bm25: k1, b; ql: mu; sdm: w_t, w_o, w_u) and write the "
                                   "TREC run (standard output by default).",
                       epilog="example:\n  dfrank search --collection docs.tsv --topics "
                              "topics.tsv --model bm25 --set k1=0.9 --set b=0.4 --out "
                              "run.txt")
    r.add_argument("--collection", required=True,
                   help="a TSV / JSON-lines collection, or a Cranfield or CISI folder")
    r.add_argument("--topics", help="TREC topics, TSV or JSON lines")
    r.add_argument("--model", default="bm25", choices=["bm25", "ql", "sdm"])
    r.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a parameter of the model (repeatable; the others keep their "
                        "defaults)")
    r.add_argument("--depth", type=_positive_int, default=1000,
                   help="documents per topic (default 1000)")
    r.add_argument("--out", help="the run file (default: standard output)")
    _common(r, ties=False)
    r.set_defaults(func=cmd_search)

    x = sub.add_parser("export", formatter_class=fmt,
                       help="write a model in the format of RankLib or a search engine",
                       description="Write MODEL (JSON from 'dfrank fit') in the format of "
                                   "the system that applies it: ranklib (a Coordinate Ascent "
                                   "model RankLib loads with -load), es-ltr / opensearch-ltr "
                                   "(the body of the LTR plugin's _createmodel: a "
                                   "model/linear with feature_normalizers), solr-ltr (a "
                                   "LinearModel for Solr's model store), vespa (a rank "
                                   "profile). Engines name their features: give --names. A "
                                   "model learned on features normalized within each query "
                                   "(LETOR's QueryLevelNorm) is refused for the engines: "
                                   "they cannot apply that normalization.",
                       epilog="examples:\n  dfrank export model.json --format ranklib -o "
                              "model.ranklib\n  dfrank export model.json --format es-ltr "
                              "--names title_bm25,body_bm25,pagerank\n  dfrank export "
                              "model.json --format solr-ltr --names names.txt -o model.json")
    x.add_argument("model", help="model JSON written by 'dfrank fit'")
    x.add_argument("--format", required=True,
                   choices=["ranklib", "es-ltr", "opensearch-ltr", "solr-ltr", "vespa"])
    x.add_argument("--names", metavar="A,B,C|FILE",
                   help="the engine's name of each feature, in feature order: separated by "
                        "commas, or a file with one per line")
    x.add_argument("-o", "--output", help="write here (default: print)")
    _common(x, ties=False)
    x.set_defaults(func=cmd_export)

    w = sub.add_parser("warmup", formatter_class=fmt,
                       help="compile every numba kernel ahead of use (once, on every core)",
                       description="Compile dfrank's numba kernels now, split over processes "
                                   "(one per core by default), instead of on their first "
                                   "use: they are cached on disk, so every later run loads "
                                   "them in a fraction of a second. Run it once after "
                                   "installing (or after upgrading) dfrank.",
                       epilog="examples:\n  dfrank warmup\n  dfrank warmup demo --jobs 1")
    w.add_argument("what", nargs="?", default="all", choices=["all", "demo", "fit"],
                   help="which kernels: all (default), those of 'dfrank demo', or of a "
                        "first 'dfrank fit'")
    w.add_argument("--jobs", type=_positive_int, help="processes (default: one per core)")
    _common(w, ties=False)
    w.set_defaults(func=cmd_warmup)

    i = sub.add_parser("info", formatter_class=fmt, help="summarize a LETOR/SVMlight file",
                       description="Summarize a LETOR/SVMlight file: queries, documents, "
                                   "features, labels.",
                       epilog="example:\n  dfrank info Fold1/train.txt.gz")
    i.add_argument("file")
    _reading_arguments(i, "FILE")
    _common(i, ties=False, quiet=False)
    i.set_defaults(func=cmd_info)

    m = sub.add_parser("metrics", formatter_class=fmt, help="list the metrics and formulas",
                       description="List the metric names dfrank knows, with formulas.",
                       epilog="example:\n  dfrank metrics | grep ndcg")
    _common(m, ties=False, quiet=False)
    m.set_defaults(func=cmd_metrics)

    s = sub.add_parser("strategies", formatter_class=fmt, help="list the optimizers",
                       description="List the registered strategies (optimizers); their "
                                   "options are the keyword arguments documented in "
                                   "dfrank.strategies.",
                       epilog="example:\n  dfrank strategies\n  dfrank fit train.txt "
                              "--strategy pso --option swarm_size=40")
    _common(s, ties=False, quiet=False)
    s.set_defaults(func=cmd_strategies)
    return p


def _version():
    from . import __version__
    return f"dfrank {__version__}"


def main(argv=None):
    """Entry point of the ``dfrank`` console script; returns the exit code."""
    from .errors import DataFormatError, NoEvaluationError, OutputError, TuneError

    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    debug = getattr(args, "debug", False)
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"dfrank: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = show
            return args.func(args)
    except NoEvaluationError as e:
        if debug:
            raise
        print(f"dfrank: error: {e}", file=sys.stderr)
        return 2
    except (DataFormatError, FileNotFoundError, IsADirectoryError, PermissionError,
            TuneError, OutputError) as e:
        if debug:
            raise
        print(f"dfrank: error: {e}", file=sys.stderr)
        return 1
    except (UsageError, ValueError, TypeError) as e:
        if debug:
            raise
        print(f"dfrank: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dfrank: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
