"""Runs of optimizers x problems x instances, resumable, in parallel: :func:`bench`.

Every run is one solver on one instance (problem, fold, seed) with one allowance. The runs
go to a JSON-lines file as they finish (a header line, the line costs measured, then one
line per run): an interrupted bench keeps what finished, and the same call continues it,
skipping the runs already there. Ctrl-C stops the bench (KeyboardInterrupt; exit 130 on the
command line): a run it cut short is written marked ``interrupted`` and is run again when
the bench is continued.

Parallel runs are processes (joblib), each with numba on one thread (joblib's inner thread
limit, :func:`dfrank.driver.parallel.one_thread_each`; dfrank sets no global thread state): with an
evaluation budget any number of them gives the same results; with a time budget keep at
most one per core (the default, ``n_jobs=-1``) so that runs do not slow each other. With
``n_jobs=1`` the runs take turns in this process, on its threads.
"""

import contextlib
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataFormatError
from ..files import jsonable, read_json_lines, sole_writer
from ..objectives.objective import BudgetExhausted, check_allowance
from ..driver.parallel import effective_n_jobs, gather, one_thread_each
from .provenance import provenance
from .references import describe, measure_line_costs
from .solvers import Outcome, solver_of
from .suite import SPECS, Suite

__all__ = ["bench", "BenchResult", "read_runs", "BENCH_FORMAT"]

BENCH_FORMAT = "dfrank.bench"
# 2: a run's trace holds each improvement at its own evaluation number; 1: at the number of
# its batch's best point (a solver evaluating in batches reached targets later there)
TRACES_BY_EVALUATION = 2
BENCH_VERSION = 3   # 3: the sessions' provenance, each run's seeds as its solver got them
BATCH_BEST = ("holds traces of version 1, where an improvement found inside a batch of "
              "points is recorded at the batch's best point: the hitting times of solvers "
              "that evaluate in batches (pso, es, cma, ...) can be late by up to a batch")
# must agree when a bench is continued: its allowance, and what its targets and line
# searches are counted against
SETTINGS = ("budget", "max_seconds", "budgets", "line_cost", "references")


@dataclass
class BenchResult:
    """The header and the runs of a bench (records: one dict per run)."""
    header: dict
    runs: list = field(default_factory=list)
    path: str = None

    def profiles(self):
        from .profiles import Profiles

        return Profiles(self.runs)

    def summary(self):
        return self.profiles().summary()

    def retargeted(self, refs, path=None):
        """The same runs measured against the references ``refs`` (a references file's
        contents, read from ``path``): each finished run's reference and targets anew from
        its start value, the header naming those references. The bench file is left as
        it is; the runs' data are not read, so their fingerprints are not checked."""
        from .problem import targets_of

        runs = []
        for r in self.runs:
            if r.get("error") is not None:
                runs.append(r)
                continue
            entry = refs["values"].get(r["problem"], {}).get(str(r["fold"]))
            if entry is None:
                raise ValueError(f"the references {path or '(shipped)'} have no value for "
                                 f"{r['problem']} fold {r['fold']}, which the bench ran")
            ref = float(entry["value"])
            runs.append(dict(r, reference=ref,
                             targets=targets_of(ref, r["start_value"]).tolist()))
        header = dict(self.header, references=dict(describe(refs, path), retargeted=True))
        return BenchResult(header, runs, self.path)

    def to_ioh(self, folder):
        """Write the runs in IOHprofiler's format (see :mod:`dfrank.problems.ioh`): the
        files written, and the runs that made no evaluation (left out)."""
        from .ioh import export

        return export(self.runs, folder)


def read_runs(path, repair=False):
    """A bench file read back: :class:`BenchResult`. A last line cut short (a bench killed
    while writing it) is left out, and with ``repair`` cut from the file before a bench
    appends to it; a run written twice (an interrupted run, then its redo) counts once, as
    its last record."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file (a file written by 'dfrank bench run')")
    header, runs, costs, sessions = None, {}, {}, []
    for line, rec in read_json_lines(path, "bench file", repair=repair,
                                     header=_bench_header):
        kind = rec.get("type") if isinstance(rec, dict) else None
        if kind == "header":
            if rec.get("format") != BENCH_FORMAT:
                raise DataFormatError("not a dfrank bench file (format tag "
                                      f"{rec.get('format')!r})", path=path, line=line)
            if not isinstance(rec.get("version"), int) or rec["version"] > BENCH_VERSION:
                raise DataFormatError(f"bench file version {rec.get('version')!r}; this "
                                      f"dfrank reads versions up to {BENCH_VERSION} (upgrade "
                                      "dfrank)", path=path, line=line)
            if rec["version"] < TRACES_BY_EVALUATION:
                import warnings

                warnings.warn(f"{path} {BATCH_BEST}", UserWarning, stacklevel=2)
            header = rec
            sessions.append(_provenance_of(rec, path, line))
        elif kind == "session":
            sessions.append(_provenance_of(rec, path, line))
        elif kind in ("line_cost", "run"):
            why = _malformed(rec)
            if why:
                raise DataFormatError(f"a {kind.replace('_', ' ')} line that dfrank did not "
                                      f"write: {why}", path=path, line=line)
            if kind == "line_cost":
                costs[(rec["problem"], rec["fold"])] = rec
            else:
                runs[_key_of(rec)] = rec
        else:
            raise DataFormatError("a line that is no header, session, line cost or run",
                                  path=path, line=line)
    if header is None:
        raise DataFormatError("no dfrank bench header (a file written by 'dfrank bench "
                              "run')", path=path)
    header["line_costs"] = costs
    header["sessions"] = sessions
    return BenchResult(header, list(runs.values()), path)


def _provenance_of(rec, path, line):
    """A header's or session line's provenance: a record of dicts, or None (not recorded)."""
    p = rec.get("provenance")
    if p is not None and not (isinstance(p, dict) and all(
            isinstance(p.get(k, {}), dict) for k in ("versions", "machine"))):
        raise DataFormatError(f"a provenance that dfrank did not write: {p!r}"[:200],
                              path=path, line=line)
    return p


def _bench_header(rec):
    """Raise unless ``rec`` is a bench file's header (its format, not yet its version)."""
    if not isinstance(rec, dict) or rec.get("type") != "header" or \
            rec.get("format") != BENCH_FORMAT:
        raise DataFormatError("not a dfrank bench file: its first line is no dfrank bench "
                              "header (a file written by 'dfrank bench run'); it is left as "
                              "it is")


def _is(kind, v):
    """Whether ``v`` is a JSON value of ``kind``: "int", "num" (finite), "str", "bool"."""
    if kind == "str":
        return isinstance(v, str)
    if kind == "bool":
        return isinstance(v, bool)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return isinstance(v, int) if kind == "int" else bool(np.isfinite(v))


# the fields every record of a kind holds, and those of a run that finished
_FIELDS = {"line_cost": {"problem": "str", "fold": "int", "line_cost": "int"},
           "run": {"solver": "str", "problem": "str", "fold": "int", "seed": "int"}}
_FINISHED = {"dim": "int", "reference": "num", "start_value": "num", "best_value": "num",
             "n_evals": "int", "seconds": "num", "status": "str"}


def _malformed(rec):
    """Why a line-cost or run record is not one dfrank writes (None if it is one): every
    field the report and the export read, of its type."""
    for name, kind in _FIELDS[rec["type"]].items():
        if not _is(kind, rec.get(name)):
            return f"its {name!r} is {rec.get(name)!r}, not a {kind} value"
    if rec["type"] == "line_cost":
        return None if rec["line_cost"] >= 1 else "a line cost below 1"
    if rec["problem"] not in SPECS:
        return (f"it names a problem {rec['problem']!r} that this dfrank does not know (it "
                f"knows {', '.join(SPECS)})")
    if not _is("bool", rec.get("repeat", False)):
        return f"its 'repeat' is {rec.get('repeat')!r}, not true or false"
    got = rec.get("seeds_received")
    if got is not None and not (isinstance(got, list) and got and all(
            isinstance(g, dict) and ("argument" in g or isinstance(g.get("seed_sequence"), dict))
            for g in got)):
        return f"its 'seeds_received' is {got!r}, not the seeds of its restarts"[:200]
    if rec.get("error") is not None:
        return None if _is("str", rec["error"]) else "its 'error' is no text"
    for name, kind in _FINISHED.items():
        if not _is(kind, rec.get(name)):
            return f"its {name!r} is {rec.get(name)!r}, not a {kind} value"
    targets, trace = rec.get("targets"), rec.get("trace")
    if not isinstance(targets, list) or not all(_is("num", t) for t in targets):
        return "its 'targets' are not a list of numbers"
    if not isinstance(trace, dict) or not all(
            isinstance(trace.get(k), list) and all(_is("num", v) for v in trace[k])
            for k in ("evals", "seconds", "values")) or \
            len({len(trace[k]) for k in ("evals", "seconds", "values")}) != 1:
        return "its 'trace' is not three lists of numbers of one length"
    return None


def _key(solver, problem, fold, seed, repeat=False):
    return (str(solver), str(problem), int(fold), int(seed), bool(repeat))


def _key_of(rec):
    return _key(rec["solver"], rec["problem"], rec["fold"], rec["seed"], rec.get("repeat"))


_SUITES = {}


def _suite(root, references):
    """The suite of this process (built once per worker and references file, keyed by the
    file's content: an edited file is read again)."""
    import hashlib

    digest = None
    if references is not None:
        try:
            with open(references, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            pass        # the suite says what is wrong with the path when it reads it
    key = (root, references, digest)
    if key not in _SUITES:
        _SUITES[key] = Suite(root, references)
    return _SUITES[key]


def _run_one(task, root, references):
    """One run in this process or a worker: the problem built, the solver run, the record
    returned (an error is recorded, not raised)."""
    solver_spec, pid, fold, seed, budget, max_seconds, line_cost, repeat = task
    t0 = time.perf_counter()
    rec = {"type": "run", "solver": _label(solver_spec), "problem": pid, "fold": fold,
           "seed": seed, "budget": budget, "max_seconds": max_seconds,
           "line_cost": line_cost, "repeat": repeat, "error": None}
    problem = None
    try:
        problem = _suite(root, references).problem(pid, fold, seed, budget=budget,
                                                   max_seconds=max_seconds,
                                                   line_cost=line_cost)
        rec.update(dim=problem.dim, reference=problem.reference,
                   start_value=problem.start_value, targets=problem.targets)
        solver = solver_of(solver_spec)
        problem.objective.start_clock()
        t0 = time.perf_counter()
        try:
            out = solver.run(problem, seed)
        except BudgetExhausted:
            out = Outcome()
        except KeyboardInterrupt:   # the run is kept, marked, and the bench stops
            out = Outcome(status="interrupted")
        seconds = time.perf_counter() - t0
        trace = out.trace if out.trace is not None else problem.trace
        if len(trace["values"]) < 2:
            if out.status == "interrupted":
                rec.update(seconds=seconds, status=out.status,
                           error="interrupted before its first evaluation")
                return jsonable(rec)
            raise RuntimeError("the solver evaluated nothing")
        best = int(np.argmax(trace["values"]))
        rec.update(
            seeds_received=out.seeds, seconds=seconds, status=out.status,
            n_evals=int(out.n_evals if out.n_evals is not None else problem.n_evals),
            trace={k: np.asarray(v)[1:] for k, v in trace.items()},   # without (0, -inf)
            best_value=float(trace["values"][best]), last_value=problem.last_value,
            best_point=problem.best_point if out.trace is None else out.point,
            best_x=_best_x(problem, out),
            recommended_evaluated=None if out.point is None else problem.evaluated(out.point))
    except Exception as e:   # recorded: one failing run must not end a long bench
        rec.update(seconds=time.perf_counter() - t0, error=f"{type(e).__name__}: {e}")
        if problem is not None and problem.n_evals:   # what it reached before it failed
            rec.update(n_evals=int(problem.n_evals), best_value=problem.best_value,
                       trace={k: np.asarray(v)[1:] for k, v in problem.trace.items()},
                       last_value=problem.last_value, best_point=problem.best_point,
                       best_x=problem.best_cube)
    return jsonable(rec)


def _best_x(problem, out):
    """The cube point of the run's best evaluation: the one the optimizer searched, or for
    dfrank's own strategies, which search the problem's space, the cube point that maps to
    their answer."""
    if problem.best_cube_asked is not None:
        return problem.best_cube_asked
    point = problem.best_point if out.trace is None else out.point
    return None if point is None else problem.space.to_unit(point)


def _label(spec):
    if isinstance(spec, tuple):
        return spec[0]
    if callable(spec) and not isinstance(spec, str):
        return getattr(spec, "__name__", repr(spec))
    return str(spec)


def bench(root, solvers, problems="small", *, folds=None, seeds=range(3), budget=None,
          max_seconds=None, budgets=None, line_cost="reference", n_jobs=-1, output=None,
          references=None, repeat=True, progress=False):
    """Run every solver on every instance (problem, fold, seed) of the selection.

    Parameters
    ----------
    root : folder of the data sets (see :class:`~dfrank.problems.Suite`)
    solvers : list of names (``ca``, ``es``, ``cma:es``, ``nevergrad:NGOpt``,
        ``optuna:tpe``, ...), ``(name, options)`` pairs or callables (see
        :mod:`dfrank.problems.solvers`)
    problems : a subset name (``small``, ``full``), a problem id or a list of ids
    folds, seeds : the instances (folds default to the subset's or every fold)
    budget, max_seconds : each run's allowance (evaluations and/or seconds)
    budgets : ``{solver: evaluations}``, a smaller budget for slow solvers (TPE)
    line_cost : evaluations an exact line search counts: ``"reference"`` (the default:
        what its time is worth on each problem and fold, as measured with the references,
        so that benches repeat on any machine), ``"measured"`` (measured here, once, and
        kept in the file) or an int
    n_jobs : runs in parallel (processes, -1: one per core)
    output : a JSON-lines file; when it exists, the bench continues it (the same budgets)
    references : a references file (default: the suite's own)
    repeat : run each solver's first run of each problem a second time with the same
        seed (with an evaluation budget): a solver that does not repeat its runs is
        flagged (whether it does can depend on the problem's dimension)

    Returns
    -------
    BenchResult
    """
    budget, max_seconds = check_allowance(budget, max_seconds, "solvers")
    budgets = {str(k): int(v) for k, v in (budgets or {}).items()}
    for name, b in budgets.items():
        check_allowance(b, None, "solvers", f"budgets[{name!r}]")
    if line_cost not in ("measured", "reference") and (
            isinstance(line_cost, bool) or not isinstance(line_cost, (int, np.integer)) or
            line_cost < 1):
        raise ValueError(f"line_cost must be an int >= 1, 'reference' or 'measured', got "
                         f"{line_cost!r}")
    seeds = [int(s) for s in seeds]
    if not seeds or min(seeds) < 0:
        raise ValueError(f"seeds must be ints >= 0, got {seeds}")
    labels = [_label(s) for s in solvers]
    if len(set(labels)) != len(labels) or not labels:
        raise ValueError(f"give each solver once (got {labels})")
    unknown = sorted(set(budgets) - set(labels))
    if unknown:
        raise ValueError(f"budgets names solvers that are not run: {unknown}")
    for s in solvers:
        solver_of(s)   # an unknown solver fails before any run
    root = os.fspath(root)
    suite = _suite(root, references)
    instances = suite.select(problems, folds)
    session = provenance(labels)
    header = {"type": "header", "format": BENCH_FORMAT, "version": BENCH_VERSION,
              "budget": budget, "max_seconds": max_seconds, "budgets": budgets,
              "root": os.path.abspath(root), "line_cost": line_cost,
              "references": describe(suite.references, references), "provenance": session}
    # this bench, the one writer of its file
    sole = sole_writer(output, "bench file") if output is not None else contextlib.nullcontext()
    with sole:
        done, costs = {}, {}
        if output is not None and os.path.exists(output) and os.path.getsize(output):
            old = read_runs(output, repair=True)
            if old.header["version"] < TRACES_BY_EVALUATION:
                raise ValueError(f"{output} {BATCH_BEST}; runs of this dfrank would not compare "
                                 "with them: write to another file")
            for k in SETTINGS:
                theirs, ours = old.header.get(k), header[k]
                if k == "references" and isinstance(theirs, dict) and "digest" not in theirs:
                    ours = {f: v for f, v in ours.items() if f != "digest"}   # a former file
                if theirs != ours:
                    raise ValueError(f"{output} was run with {k} = {theirs!r}, not {ours!r}: "
                                     "continue it with the same settings or write to another "
                                     "file")
            done = {_key_of(r): r for r in old.runs
                    if r.get("error") is None and r.get("status") != "interrupted"}
            costs = {k: v["line_cost"] for k, v in old.header["line_costs"].items()}
            _append(output, [{"type": "session", "provenance": session}])
            header["sessions"] = old.header["sessions"] + [session]
        else:
            _append(output, [header], fresh=True)
            header["sessions"] = [session]
        new = [(spec, fold) for spec, fold in instances if (spec.id, fold) not in costs]
        if line_cost == "measured":
            measured = measure_line_costs(root, new)
        elif line_cost == "reference":
            measured = [(suite.line_cost(spec.id, fold), None) for spec, fold in new]
        else:
            measured = [(int(line_cost), None)] * len(new)
        for (spec, fold), (cost, worth) in zip(new, measured):
            costs[(spec.id, fold)] = cost
        _append(output, [{"type": "line_cost", "problem": spec.id, "fold": fold,
                          "line_cost": cost, "worth": worth}
                         for (spec, fold), (cost, worth) in zip(new, measured)])
        tasks = [(s, spec.id, fold, seed, budgets.get(_label(s), budget), max_seconds,
                  costs[(spec.id, fold)], False)
                 for spec, fold in instances for seed in seeds for s in solvers]
        if repeat and max_seconds is None:   # each solver's first run of each problem again
            firsts = {}
            for t in tasks:
                firsts.setdefault((_label(t[0]), t[1]), t)
            tasks += [t[:-1] + (True,) for t in firsts.values()]
        tasks = [t for t in tasks if _key(_label(t[0]), *t[1:4], t[-1]) not in done]
        def save(rec):
            _append(output, [rec])
            if rec.get("status") == "interrupted":   # Ctrl-C in a run: the bench stops
                raise KeyboardInterrupt

        new = gather(_results(tasks, root, references, n_jobs), len(tasks), "bench", progress,
                     each=save, stop="raise")
        runs = list(done.values()) + new
        header["line_costs"] = costs
        return BenchResult(header, runs, output)


def _results(tasks, root, references, n_jobs):
    """The runs' records as they finish: in this process with ``n_jobs=1`` (numba's threads
    as the process has them), else in joblib's workers with one numba thread each."""
    if effective_n_jobs(n_jobs) == 1:
        for t in tasks:
            yield _run_one(t, root, references)
        return
    import warnings

    from joblib import Parallel, delayed

    # loky replaces a worker whose memory grew (the solvers' libraries and the suite's
    # data stay loaded in it) and warns; no run is lost, so the warning is not the user's
    warnings.filterwarnings("ignore", message="A worker stopped while some jobs",
                            category=UserWarning)
    with one_thread_each():   # the workers' environment is set as they start
        runs = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_run_one)(t, root, references) for t in tasks)
    yield from runs


def _append(path, records, fresh=False):
    """Append JSON lines (flushed: a run that finished is on disk)."""
    if path is None or not records:
        return
    with open(path, "w" if fresh else "a") as f:
        for r in records:
            f.write(json.dumps(jsonable(r), allow_nan=False) + "\n")
        f.flush()
