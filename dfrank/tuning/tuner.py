"""Tuning a retrieval system's parameters directly on a metric: :func:`tune`.

Each evaluation is one run of the system at one parameter point, scored with trec_eval's
conventions for runs (scores read in single precision, ties by docno, judged documents the
run lacks counted in R, a query the run lacks scoring 0: ``trec_eval -c``); the built-in
engine's scores, which no file carries, are compared in double precision. A metric's name
means what it means everywhere (``nDCG@10``: trec_eval's linear gain; ``ndcg@10``:
dfrank's 2^l - 1). The
parameters live in a :class:`Box` (names, log scales, whole numbers); any strategy of the
registry searches it, and the runs
of a batch go through joblib (``joblib.parallel_config(backend="dask")`` sends them to a
cluster).

Every point evaluated is kept: in the result's history and, with ``cache=``, in a folder
that several tunes may share (a file per process), so an interrupted or extended tune
never repeats a run. Cross-validation
needs no further run: a run covers every query, so each fold's parameters are chosen on
the other folds' queries among the points already evaluated.
"""

import hashlib
import math
import json
import os
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..driver.api import maximize
from ..driver.crossval import check_folds, cross_validate
from ..errors import DataFormatError, TuneError, UsageError
from ..io.forms import read_qrels, read_run, run_as_data
from ..metrics import registry as metric_registry
from ..metrics.registry import RUN_METRIC, RUN_TIES
from ..registry import BOX_STRATEGY
from ..metrics.evaluation import bind_metric
from ..metrics.trec_measures import as_trec_eval_reads
from ..objectives.objective import Objective
from ..driver.parallel import effective_n_jobs, seed_sequence
from ..files import OWNER, VERSION, jsonable, write_json_atomic
from ..driver.result import QueryResult
from ..spaces import Box
from ..stats import significance as paired_test

__all__ = ["tune", "TuneResult", "TuneError", "space_of",
           "DEFAULT_BUDGET"]

CACHE_FORMAT = "dfrank.tune_cache"
RESULT_FORMAT = "dfrank.tune"
DEFAULT_BUDGET = 40
FAILED = -1.0        # what a strategy sees for a failed run: below any metric value


# ---------------------------------------------------------------- the space
def space_of(spec):
    """A :class:`Box` from ``{name: (low, high[, "log" | "int"])}`` (a Box as it is)."""
    if isinstance(spec, Box):
        if spec.names is None:
            raise ValueError("the Box needs names= (the parameters' names)")
        return spec
    if not isinstance(spec, dict) or not spec:
        raise TypeError("space must be a named Box or a dict {name: (low, high[, 'log' | "
                        "'int'])}")
    lo, hi, log, integer = [], [], [], []
    for name, bounds in spec.items():
        kinds = [b for b in bounds[2:]]
        bad = [k for k in kinds if k not in ("log", "int")]
        if len(bounds) < 2 or bad:
            raise ValueError(f"parameter {name!r}: expected (low, high[, 'log' | 'int']), "
                             f"got {bounds!r}")
        lo.append(float(bounds[0]))
        hi.append(float(bounds[1]))
        log.append("log" in kinds)
        integer.append("int" in kinds)
    return Box(lo, hi, log=log, names=list(spec), integer=integer)


def _params(space, x):
    """The named parameters of point ``x`` (whole numbers as int)."""
    x = space.rounded(x)
    return {n: (int(v) if it else float(v)) for n, v, it in zip(space.names, x,
                                                                  space.integer)}


def _key(params):
    return json.dumps(params, sort_keys=True)


# ---------------------------------------------------------------- evaluators
class RunEvaluator:
    """Per-query values of the run ``run_fn(params)`` returns (any form
    :func:`dfrank.io.forms.read_run` takes), over the judged queries of ``qrels``;
    ``metric`` a resolved :class:`~dfrank.metrics.registry.Metric`."""

    def __init__(self, run_fn, qrels, metric):
        if not callable(run_fn):
            raise TypeError("run_fn must be callable: params (a dict) -> a run")
        self.run_fn = run_fn
        self.qrels = read_qrels(qrels)
        self.qids = [q for q, j in self.qrels.items() if j]
        if not self.qids:
            raise DataFormatError("the qrels judge no document")
        self.metric = metric

    def __call__(self, params):
        run = read_run(self.run_fn(dict(params)), name=f"at {params}")
        if not any(q in run for q in self.qids):
            raise DataFormatError(f"the run shares no query with the qrels (its queries: "
                                  f"{_some(list(run))}; the qrels': {_some(self.qids)})")
        data = run_as_data(run, self.qrels, self.qids)
        bound = bind_metric(data, self.metric, RUN_TIES)
        # the run's scores as trec_eval reads them (single precision), so that tune's values
        # are trec_eval's on the engine's run file
        return bound.per_query(as_trec_eval_reads(data.X[:, 0]))

    def fingerprint(self):
        return _digest(self.qrels)


class EngineEvaluator:
    """Per-query values of a model of :class:`dfrank.ir.Engine` (no run is written)."""

    def __init__(self, engine, model, metric):
        engine.params_of(model, {})
        if engine.qrels is None:
            raise ValueError("the engine was built without qrels")
        self.engine, self.model, self.metric = engine, model, metric
        self.qids = list(engine.qids)
        engine.bound(metric)

    def __call__(self, params):
        return self.engine.per_query(self.model, params, self.metric)

    def fingerprint(self):
        return _digest({"qrels": self.engine.qrels, "engine": self.engine.digest()})


def _some(names, n=3):
    """The first ``n`` of ``names``, for a message."""
    return (", ".join(map(str, names[:n])) or "none") + (", ..." if len(names) > n else "")


def _digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _evaluate_point(evaluator, params):
    """(per-query values or None, seconds, error text) of one point; never raises."""
    t0 = time.perf_counter()
    try:
        values = np.asarray(evaluator(params), dtype=np.float64)
        if values.shape != (len(evaluator.qids),) or not np.all(np.isfinite(values)):
            raise ValueError(f"expected {len(evaluator.qids)} finite per-query values")
        return values, time.perf_counter() - t0, None
    except Exception as e:   # recorded as a failed point, with the reason
        return None, time.perf_counter() - t0, f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------- the cache
# what a tune cache's values are made of, as its fingerprint names them, in the order a
# refusal names the first that differs
_CACHE_FILE = re.compile(r"^" + OWNER + r"-[0-9a-f]{8}\.json$")   # a process's file
_DETERMINANTS = (("system", "system"), ("space", "space of parameters"),
                 ("metric", "metric"), ("queries", "set of queries, judgments or collection"))
class _Cache:
    """Evaluated points, kept in a folder that several processes, hosts and users may share
    (a user running two seeds at once, a cluster's NFS): each process writes its own file
    of checkpoint's format (:func:`~dfrank.driver.checkpoint.write_record`), ``PATH/WRITER.json``
    (WRITER: :func:`dfrank.files.owner` and a random part), and reads them all, so no
    writer ever rewrites another's points (appends and locks are not reliable on NFS). A
    file's fingerprint names what its points belong to (the space, metric, system and
    queries); its body holds them (``points``). This process's file is written again,
    atomically, when ``every`` seconds have passed since it last was, and when the tune
    ends or is interrupted (:meth:`flush`), so an interruption loses no point and a kill at
    most ``every`` seconds of them.

    Every point read is checked against this tune (its parameters, one finite value per
    query within the metric's range, a known status): a cache is trusted only for what it
    can be checked to be. A cache file of a former layout at ``PATH`` (one checkpoint
    record, or JSON lines after a header of format :data:`CACHE_FORMAT`) is read and left
    as it is; this process's points then go to the folder ``PATH.d``."""

    def __init__(self, path, fingerprint, names, n_queries, bounds, keep_failed=False,
                 every=5.0):
        self.path, self.fingerprint, self.entries = path, fingerprint, {}
        self.names, self.n_queries, self.bounds = list(names), n_queries, bounds
        self.keep_failed, self.every = keep_failed, every
        self.points = []      # the points this process ran, in order (failed ones too)
        self._last, self._unwritten = time.monotonic(), False
        if path is None:
            return
        path = os.fspath(path)
        self.folder = path + ".d" if os.path.isfile(path) else path
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            self._take(path, self._read(path))
        if os.path.isdir(self.folder):
            for name in sorted(os.listdir(self.folder)):
                file = os.path.join(self.folder, name)
                if name.startswith(".") or os.path.isdir(file):
                    continue
                if not _CACHE_FILE.match(name):
                    raise UsageError(f"{self.folder}: the folder holds {name}, which is no "
                                     "file of a dfrank tune cache; it is left as it is: give "
                                     "the cache a folder of its own (a new or an empty one)")
                self._take(file, self._read_record(file))
        from ..files import check_writable, owner

        os.makedirs(self.folder, exist_ok=True)
        self.path = os.path.join(self.folder, f"{owner()}-{os.urandom(4).hex()}.json")
        check_writable(self.path, "cache file")

    def _read(self, path):
        """The points of a cache file at ``path``: a former single file of checkpoint's
        format, or JSON lines after a header."""
        with open(path, "rb") as f:
            first = f.readline()
        try:
            head = json.loads(first)
        except (json.JSONDecodeError, UnicodeDecodeError):
            head = None
        if isinstance(head, dict) and head.get("format") == CACHE_FORMAT:
            return self._read_lines(path, head)
        return self._read_record(path)

    def _take(self, path, records):
        for i, (line, e) in enumerate(records):
            why = self._invalid(e)
            if why:
                raise DataFormatError(f"cached point {i + 1} does not belong to this tune: "
                                      f"{why} (use another cache)", path=path, line=line)
            key = _key(e["params"])
            if e["status"] == "ok" or (self.keep_failed and key not in self.entries):
                self.entries[key] = e     # a failed point is run again

    def _check(self, theirs, path, line=None):
        """Refuse a cache file made by another tune: what differs first, of what makes the
        runs, the space searched, the metric and the queries with their judgments."""
        for k, what in _DETERMINANTS:
            if theirs.get(k) != self.fingerprint[k]:
                where = f"{path}, line {line}" if line else path
                raise UsageError(
                    f"{where}: the cache holds runs of another {what} ({theirs.get(k)!r}; "
                    f"this tune: {self.fingerprint[k]!r}); give this tune another cache, or "
                    "the same settings")

    def _read_record(self, path):
        from ..driver.checkpoint import read_record

        try:
            d = read_record(path)
        except DataFormatError as e:
            raise DataFormatError(f"not a dfrank tune cache ({e.args[0]})", path=path) \
                from None
        if d["fingerprint"].get("kind") != "tune" or not isinstance(d.get("points"), list):
            raise DataFormatError("not a dfrank tune cache (a checkpoint of another kind of "
                                  "run)", path=path)
        self._check(d["fingerprint"], path)
        return [(None, e) for e in d["points"]]

    def _read_lines(self, path, head):
        """The points of a cache of the former layout, its header checked."""
        from ..files import read_json_lines

        if not isinstance(head.get("version"), int) or head["version"] > VERSION:
            raise DataFormatError(f"tune cache version {head.get('version')!r}; this dfrank "
                                  f"reads versions up to {VERSION}", path=path, line=1)
        self._check(head, path, line=1)
        return read_json_lines(path, "tune cache")[1:]

    def _invalid(self, e):
        """Why entry ``e`` cannot be a point of this tune (None if it can)."""
        if not isinstance(e, dict):
            return "not a JSON object"
        params = e.get("params")
        if not isinstance(params, dict) or sorted(params) != sorted(self.names):
            return f"its params are not {{{', '.join(self.names)}}}"
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   and math.isfinite(v) for v in params.values()):
            return "a parameter value is not a finite number"
        status = e.get("status")
        if status == "failed":
            return None if isinstance(e.get("error"), str) else "a failed run without error"
        if status != "ok":
            return f"status {status!r} (expected 'ok' or 'failed')"
        values = e.get("per_query")
        if not isinstance(values, list) or len(values) != self.n_queries:
            return (f"{len(values) if isinstance(values, list) else 'no'} per-query values "
                    f"for {self.n_queries} queries")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return "a per-query value is not a number"
        v = np.asarray(values, dtype=np.float64)
        lo, hi = self.bounds
        if not np.all(np.isfinite(v)) or v.min() < lo or v.max() > hi:
            return f"a per-query value is not finite or outside the metric's range [{lo:g}, {hi:g}]"
        return None

    def add(self, entry):
        self.entries[_key(entry["params"])] = entry
        self.points.append(entry)
        self._unwritten = True
        self.flush()

    def flush(self, force=False):
        """Write this process's points to its own file, if there is a cache and something
        new for it, when ``every`` seconds have passed since the last write (or at once:
        ``force``)."""
        if self.path is None or not self._unwritten or \
                (not force and time.monotonic() - self._last < self.every):
            return
        from ..driver.checkpoint import write_record

        write_record(self.path, self.fingerprint, points=jsonable(self.points))
        self._last, self._unwritten = time.monotonic(), False


# ---------------------------------------------------------------- the objective
class TuneObjective(Objective):
    """Mean metric over the training queries of the run at a point of the Box; every point
    is evaluated once (history and cache)."""

    def __init__(self, evaluator, space, cache, n_jobs=1, train=None):
        self.evaluator, self.cache, self.n_jobs = evaluator, cache, n_jobs
        self.train = train          # query positions the value averages (None: all)
        self.history = []           # every point asked, in order, with its outcome
        self.ran = set()            # keys of the points run by this objective
        super().__init__(space)

    def _entry(self, key):
        return self.cache.entries.get(key)

    def _values(self, pts):
        params = [_params(self.space, x) for x in pts]
        todo = []
        for p in params:
            k = _key(p)
            if self._entry(k) is None and k not in {_key(t) for t in todo}:
                todo.append(p)
        if todo:
            if effective_n_jobs(self.n_jobs) == 1 or len(todo) == 1:
                # each kept as it finishes: Ctrl-C loses only the run in progress
                entries = [self._keep(p, _evaluate_point(self.evaluator, p)) for p in todo]
            else:
                from joblib import Parallel, delayed

                outs = Parallel(n_jobs=self.n_jobs)(
                    delayed(_evaluate_point)(self.evaluator, p) for p in todo)
                entries = [self._keep(p, out) for p, out in zip(todo, outs)]
            self._judge(entries)
        out = np.empty(len(params))
        for i, p in enumerate(params):
            e = self._entry(_key(p))
            self.history.append(e)
            if e["status"] != "ok":
                out[i] = FAILED
            else:
                v = np.asarray(e["per_query"])
                out[i] = float(np.mean(v if self.train is None else v[self.train]))
        return out

    def _keep(self, params, outcome):
        """Record one point's outcome in the cache as it arrives; the entry."""
        values, secs, err = outcome
        self.ran.add(_key(params))
        entry = {"params": params, "status": "ok" if err is None else "failed",
                 "per_query": None if values is None else values.tolist(),
                 "seconds": secs, "error": err}
        self.cache.add(entry)
        return entry

    def _judge(self, entries):
        """A batch's failures: one before any run has succeeded stops the tune (the system
        is likely broken); a later one is recorded and the search goes on."""
        failed = [e for e in entries if e["status"] != "ok"]
        if not failed:
            return
        first = failed[0]
        if not any(e["status"] == "ok" for e in self.cache.entries.values()):
            raise TuneError(f"the run at {first['params']} failed, before any run succeeded "
                            f"(so the system or its command is likely broken):\n"
                            f"{first['error']}")
        for e in failed:
            warnings.warn(f"the run at {e['params']} failed; it is recorded as failed and "
                          f"the search goes on:\n{e['error']}", stacklevel=6)


# ---------------------------------------------------------------- the result
@dataclass
class TuneResult(QueryResult):
    """The outcome of :func:`tune`.

    Attributes
    ----------
    best_params : dict
        The parameters with the highest mean metric over the queries.
    value : float
        That mean (the training value).
    per_query : dict
        qid -> the best point's value on that query (``qids`` order).
    n_runs : int
        Runs made by this call (cached points are not run again); ``n_cached`` were read
        from the cache, ``n_failed`` failed.
    default_params, default_value, default_per_query
        The given default point and its values (None without ``default``;
        ``default_per_query`` a dict as ``per_query``).
    cv : CrossValidation or None
        With ``folds`` (:class:`~dfrank.driver.crossval.CrossValidation`): ``cv.value`` the mean
        over all queries of the held-out values (each query scored by the parameters
        chosen without it; also ``cv_value``), ``cv.per_fold`` per fold the held-out
        queries, the parameters chosen on the other folds' queries (``params``), their
        training and held-out values. ``cv_default`` is the default's mean over the same
        queries, and ``cv_test`` the paired significance test of the two.
    history : list of dict
        Every point evaluated: params, status, per_query, seconds, error.
    """

    best_params: dict
    qids: list
    metric: str
    strategy: str
    n_runs: int
    n_cached: int
    n_failed: int
    history: list
    default_params: dict = None
    default_value: float = None
    default_per_query: dict = None
    cv_default: float = None
    cv_test: object = None
    space: Box = field(default=None, repr=False)
    # PyTerrier's tune: the best point's mean over every topic of the qrels it was given
    # (those not in its topics count 0), as pt.GridSearch reports it
    qrels_value: float = None

    def to_dict(self):
        d = {"format": RESULT_FORMAT, "version": VERSION, "metric": self.metric,
             "strategy": self.strategy, "best_params": self.best_params,
             "value": self.value, "n_runs": self.n_runs, "n_cached": self.n_cached,
             "n_failed": self.n_failed, "seconds": self.seconds,
             "status": self.status, "qids": self.qids,
             "per_query": self.per_query,
             "default_params": self.default_params, "default_value": self.default_value,
             "default_per_query": self.default_per_query,
             "history": [{k: e[k] for k in ("params", "status", "seconds", "error")} |
                         {"value": None if e["per_query"] is None
                          else float(np.mean(e["per_query"]))} for e in self.history]}
        if self.cv is not None:
            d.update({"cv": self.cv.to_dict(), "cv_default": self.cv_default,
                      "cv_p_value": None if self.cv_test is None else self.cv_test.p_value})
        return jsonable(d)

    def to_json(self, path=None):
        d = self.to_dict()
        if path is not None:
            write_json_atomic(path, d)
        return json.dumps(d)

    def summary_rows(self):
        """(setting, parameters, value) rows: the best point, the default, and with folds
        the cross-validated values."""
        fmt = ", ".join
        rows = [["tuned (all queries)", fmt(f"{k}={v:g}" for k, v in self.best_params.items()),
                 f"{self.value:.4f}"]]
        if self.qrels_value is not None and self.qrels_value != self.value:
            rows.append(["  over every qrels topic (pt.GridSearch's mean)", "the same",
                         f"{self.qrels_value:.4f}"])
        if self.default_params is not None:
            rows.append(["default", fmt(f"{k}={v:g}" for k, v in self.default_params.items()),
                         f"{self.default_value:.4f}"])
        if self.cv is not None:
            rows.append([f"tuned, {self.folds}-fold held out", "chosen per fold",
                         f"{self.cv_value:.4f}"])
            if self.cv_test is not None:
                rows.append(["  vs default", f"p = {self.cv_test.p_value:.3g} "
                             f"({self.cv_test.test})",
                             f"{self.cv_value - self.cv_default:+.4f}"])
        return rows

    def summary(self):
        from ..text import format_table

        head = (f"{self.strategy}: {self.n_runs} runs ({self.n_cached} from the cache, "
                f"{self.n_failed} failed) in {self.seconds:.1f} s, {len(self.qids)} queries")
        return head + "\n" + format_table(self.summary_rows(), ["", "parameters",
                                                                  self.metric])


# ---------------------------------------------------------------- tune
def _search(obj, space, strategy, seed, budget, progress, default, options):
    """The search, then the default point: (status, strategy label, default params)."""
    try:
        res = maximize(obj, strategy=strategy, seed=seed, budget=budget, progress=progress,
                       **options)
        status, strategy_label = res.status, res.strategy
    except KeyboardInterrupt:   # the runs that finished make the result
        if not obj.ran:
            raise
        status, strategy_label = "interrupted", str(strategy)
    default_params = None
    if default is not None and status != "interrupted":
        # evaluated like any point (and a candidate for the best)
        x = space.rounded([default[n] for n in space.names])
        default_params = _params(space, x)
        obj._values(x[None, :])
        e = obj.cache.entries[_key(default_params)]
        if e["status"] != "ok":
            raise TuneError(f"the run at the default {default_params} failed:\n{e['error']}")
    return status, strategy_label, default_params


def tune(run_fn, space, qrels=None, metric=RUN_METRIC, *, strategy=BOX_STRATEGY,
         budget=DEFAULT_BUDGET, folds=None, n_jobs=1, cache=None, seed=0, default=None,
         significance="randomization",
         progress=False, system=None, keep_failed=False, **options):
    """Tune the parameters of a retrieval system to maximize ``metric``.

    Parameters
    ----------
    run_fn : callable or (Engine, model)
        ``run_fn(params)`` (params a dict name -> value) returns the system's run at that
        point in any form dfrank reads (a TREC run file path, ``{qid: {docno: score}}``, a
        pandas DataFrame ``qid, docno, score``, a ranx Run). Or a pair ``(engine, model)``
        of :class:`dfrank.ir.Engine` and one of its models (no run is written: a point
        costs milliseconds).
    space : Box with names, or dict ``{name: (low, high[, "log" | "int"])}``
    qrels : judgments in any form dfrank reads (not with an engine, which has its own).
        The queries evaluated are those with some judgment.
    metric : dfrank's metric name (map, ndcg@10, p@10, recall@100, mrr, rprec, ...),
        computed as trec_eval computes it.
    strategy : a registered strategy (default :data:`~dfrank.registry.BOX_STRATEGY`);
        ``**options`` its
        options.
    budget : int
        Evaluations (runs) the search makes, including those the cache answers; the
        ``default`` point is one run more where the search did not reach it.
    folds : int, optional
        Cross-validate: queries split in ``folds`` (seeded), each fold's parameters chosen
        on the other folds among the evaluated points, and the held-out values compared
        with ``default`` by the paired ``significance`` test.
    n_jobs : int
        Runs of one batch in parallel (joblib).
    cache : path, optional
        A folder of evaluated points, read first: a point in it is not run again. Each
        process writes its own file there (checkpoint's format, written atomically at least
        every 5 s while points come, and at the end or on Ctrl-C), so tunes running at once
        on one cache (two seeds, several hosts on NFS) keep every point. A point whose run
        failed (a timeout, an error) is run again, unless ``keep_failed``. A cache file of
        a former layout at ``cache`` is read, and the new points go to ``cache + ".d"``.
    keep_failed : bool
        Take the cache's failed points as failed, without running them again.
    default : dict, optional
        A reference point (e.g. ``{"k1": 1.2, "b": 0.75}``), evaluated and reported.
    system : str, optional
        What makes the runs (e.g. the command line), stored in the cache's fingerprint so that
        a cache of another system is refused (default: the built-in engine's model, or
        ``run_fn``'s module and qualified name: name anything else that changes its runs
        here, such as its index).

    Returns
    -------
    TuneResult
    """
    space = space_of(space)
    spec = metric_registry.get_metric(metric)
    if isinstance(run_fn, tuple):
        engine, model = run_fn
        if qrels is not None:
            raise ValueError("an engine evaluates with its own qrels; leave qrels out")
        evaluator = EngineEvaluator(engine, model, spec)
        system = system or f"dfrank.ir.Engine:{model}"
    else:
        if qrels is None:
            raise ValueError("qrels are needed to evaluate the runs")
        evaluator = RunEvaluator(run_fn, qrels, spec)
    if folds is not None:
        folds = check_folds(folds, len(evaluator.qids))
    if default is not None:
        unknown = set(default) - set(space.names)
        if unknown or set(default) != set(space.names):
            raise ValueError(f"default must give every parameter ({', '.join(space.names)}),"
                             f" got {sorted(default)}")
    if system is None and cache is not None:
        system = _name_of(run_fn)
    fingerprint = {"kind": "tune", "space": repr(space), "metric": _metric_of(spec),
                   "system": system, "queries": evaluator.fingerprint()}
    store = _Cache(cache, fingerprint, space.names, len(evaluator.qids),
                   spec.bounds, keep_failed=keep_failed)
    obj = TuneObjective(evaluator, space, store, n_jobs=n_jobs)
    t0 = time.perf_counter()
    try:
        status, strategy_label, default_params = _search(obj, space, strategy, seed, budget,
                                                         progress, default, options)
    finally:   # every point run is in the cache, also after an error or Ctrl-C
        store.flush(force=True)
    seen = {}
    for e in obj.history:
        seen.setdefault(_key(e["params"]), e)
    for k in obj.ran:   # a batch that Ctrl-C cut short: its finished runs
        seen.setdefault(k, store.entries[k])
    evaluated = list(seen.values())
    ok = [e for e in evaluated if e["status"] == "ok"]
    if not ok:
        if status == "interrupted":
            raise KeyboardInterrupt
        raise TuneError("no run succeeded")
    best = ok[_first_best([e["per_query"] for e in ok])]
    out = TuneResult(
        best_params=dict(best["params"]), value=float(np.mean(best["per_query"])),
        per_query=dict(zip(evaluator.qids, map(float, best["per_query"]))),
        qids=list(evaluator.qids),
        metric=spec.label,
        strategy=strategy_label, n_runs=len(obj.ran),
        n_cached=sum(1 for k in seen if k not in obj.ran),
        n_failed=sum(1 for e in evaluated if e["status"] != "ok"),
        seconds=time.perf_counter() - t0, history=evaluated,
        status=status, space=space)
    if default_params is not None:
        e = store.entries[_key(default_params)]
        out.default_params = default_params
        out.default_per_query = dict(zip(out.qids, map(float, e["per_query"])))
        out.default_value = float(np.mean(e["per_query"]))
    if folds is not None:
        _cross_validate(out, ok, folds, seed, significance)
    return out


def _name_of(run_fn):
    """What a tune cache knows of a run function given without ``system``: its module and
    qualified name (what it computes is the caller's to name, with ``system``)."""
    return (f"{getattr(run_fn, '__module__', None) or '?'}."
            f"{getattr(run_fn, '__qualname__', type(run_fn).__qualname__)}")


def _metric_of(spec):
    """The metric as a tune cache knows it: its label, and each setting that is not its
    default (a relevance threshold, the value of a query it cannot score, ERR's top
    grade), since each changes the values."""
    settings = {k: getattr(spec, k) for k, default in (("rel_threshold", 1.0),
                                                        ("empty", "zero"), ("max_grade", None))
                if getattr(spec, k) != default}
    return spec.label + "".join(f", {k}={v!r}" for k, v in settings.items())


def _first_best(values):
    """The index of the row of ``values`` (points x queries, in the order the points were
    evaluated) with the highest mean, its sum taken exactly (``math.fsum``: no rounding
    splits a tie); among equals, the first evaluated (a grid's first setting, as
    ``pt.GridSearch`` takes the first of equal values)."""
    sums = [math.fsum(row) for row in values]
    return max(range(len(sums)), key=lambda j: (sums[j], -j))


def _cross_validate(out, ok, k, seed, test):
    """Each fold's parameters: the evaluated point best on the other folds' queries."""
    P = np.array([e["per_query"] for e in ok])

    def fold(train, test_q):
        i = _first_best(P[:, train])
        return P[i, test_q], P[i, train].mean(), {"params": dict(ok[i]["params"])}

    rng = np.random.default_rng(seed_sequence(seed).spawn(1)[0])
    out.cv = cross_validate(out.qids, k, rng, fold)
    if out.default_per_query is not None:
        default = np.array(list(out.default_per_query.values()))
        out.cv_default = float(default.mean())
        out.cv_test = paired_test(np.array(list(out.cv.per_query.values())), default,
                                  test=test, seed=seed)
