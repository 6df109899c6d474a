"""What the commands share: the options that mean one thing everywhere, how data files are
read, how result files are written, and the errors the command line maps to exit codes.

One vocabulary (a test reads every command's parser and checks it):

* ``--metric``, ``--strategy``, ``--option KEY=VALUE``, ``--seed``, ``--budget``,
  ``--max-seconds``, ``--n-jobs``: what the Python API calls ``metric``, ``strategy``,
  the strategy's options, ``seed``, ``budget``, ``max_seconds``, ``n_jobs``;
* ``--valid`` and ``--test`` are data (validation and test files); the paired test of
  significance is ``--significance``;
* every file a command writes is named by ``-o/--output`` (its main output) or by an option
  named after what it holds (``--json``, ``--plot``, ``--cache``, ``--checkpoint``);
  ``--json FILE`` writes JSON to FILE, ``--json -`` to standard output;
* ``--quiet`` silences progress bars and notes, ``--ties`` names the tie policy.
"""

import ast
import json
import os
import sys
import types


from ..errors import UsageError
from ..hyperparams import Int, Real, Workers, flag_type
from ..metrics.registry import DEFAULT_TIES
from ..stats import TESTS as SIGNIFICANCE_TESTS

__all__ = ["UsageError", "Outputs", "add_seed", "add_budget", "add_max_seconds", "add_n_jobs",
           "add_strategy", "add_options", "add_metric", "metric_of", "add_json", "add_output",
           "add_ties", "add_quiet", "add_significance", "add_data", "add_reading",
           "positive_int", "positive_float", "parse_options", "load", "load_sets",
           "outputs_writable", "show_progress", "prepare", "CompileClock", "time_text",
           "compiling_line",
           "SIGNIFICANCE_TESTS"]


# ---------------------------------------------------------------- value types
# the flags' kinds are dfrank.hyperparams' (one validation path for options and flags)
positive_int = flag_type(Int(1), "positive_int")
positive_float = flag_type(Real(0, low_open=True), "positive_float")
n_jobs = flag_type(Workers(), "n_jobs")


def line_cost(*words):
    """An argparse type for ``--line-cost``: an int >= 1, or one of ``words`` as given."""
    return flag_type(Int(1, words=words), "line_cost")


def name_list(text, option, what):
    """The comma-separated names of ``option`` (at least one)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(f"{option} needs at least one {what}")
    return names


def require_allowance(args, who):
    """A budget or a time limit, the same for every one of ``who``."""
    if args.budget is None and args.max_seconds is None:
        raise UsageError(f"give --budget (evaluations) and/or --max-seconds: every {who} "
                         "gets the same allowance")


# ---------------------------------------------------------------- shared options
def add_seed(p):
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0): the same "
                                                       "seed gives the same result")


def add_budget(p, help="objective evaluations in all (an exact line search counts one)",
               default=None):
    p.add_argument("--budget", type=positive_int, default=default, metavar="N", help=help)


def add_max_seconds(p, help="wall-clock limit in seconds (the best point so far is kept)"):
    p.add_argument("--max-seconds", type=positive_float, metavar="S", help=help)


def add_n_jobs(p, help="parallel restarts (-1: every core; default 1)"):
    p.add_argument("--n-jobs", type=n_jobs, default=1, metavar="N", help=help)


def add_strategy(p, default, help):
    p.add_argument("--strategy", default=default, help=help)


def add_options(p, example="--option restarts=5"):
    """--option [STRATEGY:]KEY=VALUE, the same in every command (see strategy_options)."""
    p.add_argument("--option", action="append", metavar="[STRATEGY:]KEY=VALUE",
                   help=f"a strategy option, e.g. {example} (repeatable; 'dfrank "
                        "strategies' lists them); with a STRATEGY: prefix it is that "
                        "strategy's alone, where several run")


def add_qrels(p, help="judgments (TREC qrels)"):
    """--qrels FILE: the one form of the judgments wherever a command takes them as an
    option (trec_eval keeps trec_eval's positional QRELS RUN)."""
    p.add_argument("--qrels", metavar="FILE", help=help)


def add_metric(p, default, help=None, repeat=False):
    """--metric (a dfrank name in lower case, or an ir_measures name with capitals: see
    dfrank.metrics.registry) and --gain."""
    if repeat:
        p.add_argument("--metric", action="append",
                       help=help or f"metric (repeatable; default {default})")
    else:
        p.add_argument("--metric", default=default,
                       help=help or f"metric to maximize (default {default}; 'dfrank "
                                    "metrics' lists them)")
    p.add_argument("--gain", choices=["exp", "linear"],
                   help="the gain of ndcg/dcg: exp (2^l - 1, the default of dfrank's lower-case "
                        "names) or linear (l, trec_eval's; ir_measures' nDCG@k has it)")


def metric_of(args, name=None):
    """The :class:`~dfrank.metrics.registry.Metric` --metric names (``name``: one of a
    repeated --metric), with --gain: resolved once, here, and passed down as an object (an
    unknown name is an error before any data is read)."""
    name = args.metric if name is None else name
    from ..metrics.registry import get_metric, is_ir_measure

    if args.gain is None:
        return get_metric(name)
    if is_ir_measure(name):
        raise UsageError(f"--gain is for dfrank's metric names; ir_measures' {name} has its "
                         "own gain")
    return get_metric(name, gain=args.gain)


def add_json(p, what):
    p.add_argument("--json", metavar="FILE", help=f"write {what} as JSON to FILE (- for "
                                                  "standard output)")


def add_output(p, what, required=False):
    p.add_argument("-o", "--output", metavar="FILE", required=required,
                   help=f"write {what} to FILE")


def add_ties(p):
    p.add_argument("--ties", default=DEFAULT_TIES,
                   choices=["pessimistic", "optimistic", "stable", "expected"],
                   help="how equal scores are ordered (default: pessimistic, worst label "
                        "first)")


def add_quiet(p):
    p.add_argument("--quiet", action="store_true", help="no progress bar or notes")


def add_significance(p, against):
    p.add_argument("--significance", default="randomization", choices=SIGNIFICANCE_TESTS,
                   help=f"the paired test over queries against {against} (default "
                        "randomization)")


def add_data(p, valid_help, test_help):
    """TRAIN, --valid, --test and how files are read (fit, compare)."""
    p.add_argument("train", help="LETOR/SVMlight file (plain or .gz; - for standard input)")
    p.add_argument("--valid", metavar="FILE", help=valid_help)
    p.add_argument("--test", metavar="FILE", help=test_help)
    add_reading(p, "TRAIN")


def add_scheduler(p, which):
    """--scheduler: read ``which`` on a Dask cluster's workers (shard files) and work there."""
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run on the Dask cluster of this scheduler (tcp://host:8786): "
                        f"{which} is then a glob of LETOR/SVMlight shards, each holding whole "
                        "queries, that the workers read from a folder they share; the "
                        "features never leave them, and the model equals one process's on "
                        "the same rows. Default: DASK_SCHEDULER_ADDRESS, when set and "
                        f"{which} is a glob (pip install 'dfrank[dask]')")
    p.add_argument("--connect-timeout", type=positive_float, metavar="S",
                   help="seconds to wait for the scheduler's first answer (default 10)")


def cluster_data(args, path):
    """The :class:`~dfrank.cluster.ClusterData` of the shards ``path`` names when the command
    runs on a cluster (``--scheduler``, or DASK_SCHEDULER_ADDRESS and a glob), else None."""
    import glob

    address = getattr(args, "scheduler", None)
    if address is None and os.environ.get("DASK_SCHEDULER_ADDRESS") and glob.has_magic(path):
        address = os.environ["DASK_SCHEDULER_ADDRESS"]
    if address is None:
        return None
    from ..cluster import CONNECT_TIMEOUT, from_shards

    return from_shards(path, scheduler=address,
                       connect_timeout=args.connect_timeout or CONNECT_TIMEOUT)


def add_reading(p, which="the file"):
    """--query-file, --one-query and --max-features: how a LETOR/SVMlight file is read."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--query-file", metavar="FILE",
                       help=f"group sizes (one per line) for {which} when it has no qid: "
                            f"(default: {which}.query when it exists, as LightGBM)")
    group.add_argument("--one-query", action="store_true",
                       help=f"{which} has no qid: and all its rows are one query")
    p.add_argument("--max-features", type=positive_int, metavar="N",
                   help="largest feature id read (default 65536: the features become a "
                        "dense matrix)")


# ---------------------------------------------------------------- reading
LONGEST_VALUE = 10_000   # characters of one option's value: longer is no option's


def _short(item, value, flag):
    if len(value) > LONGEST_VALUE:
        raise UsageError(f"{flag} {item[:40]}...: a value of {len(value):,} characters; an "
                         f"option's value is at most {LONGEST_VALUE:,}")


def parse_options(pairs, flag="--option"):
    """``key=value`` strings into a dict; values are Python literals when they parse."""
    out = {}
    for item in pairs or []:
        if "=" not in item:
            raise UsageError(f"{flag} expects key=value, got {item!r}")
        k, v = item.split("=", 1)
        _short(item, v, flag)
        k = k.strip().replace("-", "_")
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            out[k] = v
    return out


def strategy_options(items, names, flag="--option"):
    """``--option`` items, ``KEY=VALUE`` or ``STRATEGY:KEY=VALUE``, as ``{name: {key:
    value}}`` for each of the strategies ``names`` a command runs: a prefix names one of
    them (by any of its registered names), none gives the option to every one. Each value
    is read as the kind its strategy declares."""
    return _options_of(items, {n: _registered(n) for n in names}, flag)


def strategies(items, names, flag="--option", **fixed):
    """The strategies ``names`` a command runs, each made once (:func:`dfrank.registry.resolve`)
    with its ``--option`` items (as :func:`strategy_options` reads them) and then the
    options ``fixed`` by the command's own flags: ``{name: instance}``."""
    from ..registry import resolve

    found = {n: _registered(n) for n in names}
    options = _options_of(items, found, flag)
    return {n: resolve(n if found[n] is None else found[n], **{**options[n], **fixed})
            for n in names}


def _registered(name):
    """What the registry holds under ``name`` (None for an unknown name, which
    :func:`dfrank.registry.resolve` then refuses with the known ones)."""
    from ..registry import get_strategy

    try:
        return get_strategy(name)
    except ValueError:
        return None


def _options_of(items, found, flag):
    out = {n: {} for n in found}
    for item in items or []:
        left, eq, value = item.partition("=")
        name, sep, key = left.rpartition(":")   # names may hold ':' (cma:es:sigma0=0.3)
        if not (eq and key):
            raise UsageError(f"{flag} expects [STRATEGY:]KEY=VALUE, got {item!r}")
        key = key.strip().replace("-", "_")
        if not sep:
            for n in found:
                out[n][key] = _option_value(found[n], key, value, item, flag)
            continue
        match = [n for n in found if name == n or (
            found[n] is not None and _registered(name) is found[n])]
        if not match:
            raise UsageError(f"{flag} {item}: {name!r} is not a strategy this command runs "
                             f"({', '.join(found)})")
        n = match[0]
        out[n][key] = _option_value(found[n], key, value, item, flag)
    return out


def _option_value(found, key, text, item, flag):
    """``text`` read as the kind the strategy ``found`` (what the registry holds for its
    name, or None) declares for option ``key`` (:mod:`dfrank.hyperparams`); a Python
    literal (else the text) where it declares none (an unknown option is refused where the
    strategy is made, naming the known ones)."""
    from ..registry import Strategy

    cls = found if isinstance(found, type) else type(found)
    kind = cls.declared().get(key) if issubclass(cls, Strategy) else None
    _short(item, text, flag)
    if kind is None:
        return parse_options([f"{key}={text}"], flag)[key]
    try:
        value = kind.parse(text)
        kind.check(cls.__name__, key, value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise UsageError(f"{flag} {item}: {key} takes {kind.describe()}") from None
    return value


def parse_numbers(pairs, flag):
    """``NAME=VALUE`` strings into ``{name: float}`` (a model's parameter values)."""
    out = {}
    for item in pairs or []:
        name, _, val = item.partition("=")
        try:
            out[name] = float(val)
        except ValueError:
            raise UsageError(f"{flag} expects NAME=VALUE, got {item!r}") from None
    return out


def load(path, args, n_features=None, grouping=True, min_features=None):
    """A LETOR/SVMlight file, with the command's --max-features and (``grouping``: the
    command's main file) its --query-file / --one-query."""
    from ..io import load_svmlight
    from ..io.svmlight import MAX_FEATURES

    return load_svmlight(path, n_features=n_features, min_features=min_features,
                         query_file=args.query_file if grouping else None,
                         single_query=bool(args.one_query) if grouping else False,
                         max_features=args.max_features or MAX_FEATURES)


def load_sets(args):
    """TRAIN, and --valid/--test read with TRAIN's feature count (None when absent); a file
    without qids takes its sibling query file (FILE.query), as LightGBM does."""
    train = cluster_data(args, args.train) or load(args.train, args)
    valid = load(args.valid, args, train.n_features, False) if args.valid else None
    test = load(args.test, args, train.n_features, False) if args.test else None
    return train, valid, test


# ---------------------------------------------------------------- writing
FOLDER_OUTPUTS = ("cache",)   # outputs that are folders: a tune cache (a file per process)


def outputs_writable(args, *names, inputs=()):
    """Check now that the output files named by ``args`` can be written (before any work)
    and that none of them is one of the ``inputs``."""
    from ..files import check_not_input, check_writable

    given = {}
    for name in names:
        path = getattr(args, name, None)
        if not path:
            continue
        flag = f"--{name.replace('_', '-')}"
        same = next((f for f, p in given.items() if _same_output(p, path)), None)
        if same is not None:
            where = "standard output" if path == "-" else path
            raise UsageError(f"{same} and {flag} both write {where}: one would destroy the "
                             "other; give each its own file")
        given[flag] = path
        if path != "-":
            what = f"{flag} file"
            check_writable(path, what, folder_ok=name in FOLDER_OUTPUTS)
            check_not_input(path, [os.fspath(x) for x in inputs if x and x != "-"], what)


def _same_output(a, b):
    """Whether two output paths name one file (``-``: standard output)."""
    a, b = os.fspath(a), os.fspath(b)
    if a == "-" or b == "-":
        return a == b
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


class Outputs:
    """Writes a command's result files; a write that fails keeps its file elsewhere
    (:func:`dfrank.files.write_kept`), the others are still written, and :meth:`done`
    raises the failures once the command has printed its outcome."""

    def __init__(self):
        self.errors = []

    def write(self, path, write, what, suffix="", stdout=None):
        """``write(path)`` kept safe; whether the file was written."""
        from ..errors import OutputError
        from ..files import write_kept

        if not path:
            return False
        try:
            write_kept(path, write, what, suffix, stdout)
        except OutputError as e:
            self.errors.append(e)
            return False
        return True

    def json(self, path, obj, what):
        """``obj`` as JSON to ``path`` (``-``: standard output); whether a file was
        written."""
        from ..files import write_json_atomic

        if not path:
            return False
        if path == "-":
            print(json.dumps(obj))
            return False
        return self.write(path, lambda p: write_json_atomic(p, obj), what, ".json",
                          stdout=lambda: json.dumps(obj) + "\n")

    def done(self):
        from ..errors import OutputError

        if self.errors:
            raise OutputError("\n".join(str(e) for e in self.errors),
                              kept=self.errors[0].kept)


# ---------------------------------------------------------------- compiling
def show_progress(args):
    return not args.quiet and sys.stderr.isatty()


def prepare(args, metric=None, strategy=None, ties=DEFAULT_TIES):
    """The command's one call to the compile service: its messages as ``--quiet`` says,
    and, for a run on ``metric`` (of ``strategy``, an instance after :func:`chosen`), the
    kernels that run calls loaded or compiled now (:func:`dfrank.driver.api.kernels_for`), so that
    the run's time holds no compiling. Returns a :class:`CompileClock` started now."""
    from .. import _jit

    _jit.quiet(getattr(args, "quiet", False))
    before = _jit.compile_seconds()
    if metric is not None:
        from ..driver.api import kernels_for

        _jit.load(kernels_for(metric, strategy, ties))
    return CompileClock(_jit.compile_seconds() - before)


class CompileClock:
    """Seconds compiling numba kernels before a run (``before``: what :func:`prepare`
    loaded) and since (:meth:`line` says both)."""

    def __init__(self, before):
        from .._jit import compile_seconds

        self.before, self.start = before, compile_seconds()

    def within(self):
        from .._jit import compile_seconds

        return compile_seconds() - self.start

    def line(self):
        """The line saying how long numba compiled, or None when it did not."""
        return compiling_line(self.before, self.within())


def time_text(secs, digits=2):
    """A run's time as a table cell prints it: a number of seconds."""
    return f"{secs:.{digits}f} s"


def compiling_line(before=0.0, within=0.0):
    """The line that says how long numba compiled, within the run's time and before it
    (the warm-up), or None when it did not."""
    parts = ([f"{within:.1f} s within the time above"] if within >= 0.05 else []) + \
        ([f"{before:.1f} s before it"] if before >= 0.05 else [])
    return f"compiling numba kernels: {', '.join(parts)}" if parts else None


def chosen(strategy, data, metric, ties):
    """``strategy``, or for one that chooses by the data (``auto``) the strategy it picks
    for ``data`` (held here or by a cluster), picked once for the command."""
    if not strategy.chooses:
        return strategy
    if hasattr(data, "X"):
        from ..objectives.objective import LinearObjective

        return strategy.pick(LinearObjective(data, metric, ties=ties))
    from ..spaces import Simplex   # data on a cluster: auto picks by its size

    return strategy.pick(types.SimpleNamespace(space=Simplex(data.n_features), data=data,
                                               on_cluster=True))


# ---------------------------------------------------------------- the built-in engine
def add_collection(p, required=False):
    """--collection and --topics: the built-in engine's documents and queries (search,
    tune)."""
    p.add_argument("--collection", metavar="PATH", required=required,
                   help="built-in engine: a TSV / JSON-lines collection, or a Cranfield or "
                        "CISI folder")
    p.add_argument("--topics", metavar="FILE", help="built-in engine: TREC topics, TSV or "
                                                    "JSON lines")


def engine(args, need_qrels=True):
    """The built-in engine on --collection (a file, or a Cranfield / CISI folder)."""
    from .. import ir
    from ..io.forms import read_qrels

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
