"""Reference values: the best value known for each problem and fold, with how it was found.

A reference is the best value any strategy reached in a documented long run
(:func:`compute`: exact coordinate ascent with many restarts and ``es`` with a large
budget on a simplex; a fine grid and pattern search in a box), stored with the command
that produced it, its run time and a fingerprint of the data it was computed on. The
suite's references ship in ``dfrank/resources/problem_references.json``; targets are
relative to them (:func:`dfrank.problems.problem.targets_of`).

Each entry also holds the problem's line cost: how many single evaluations an exact line
search is worth in time (:func:`dfrank.objectives.objective.line_search_cost`, rounded up), measured
with the references, so that benches on any machine charge dfrank's line searches the
same and repeat exactly; ``line_cost="measured"`` measures it on the machine instead.
"""

import datetime
import math
import os
import time

import numpy as np

from ..files import VERSION, read_json, write_json_atomic

__all__ = ["load", "check", "lookup", "line_cost_of", "measure_line_costs", "compute",
           "add_line_costs", "merge", "from_runs", "describe", "save", "REFERENCES_FORMAT",
           "SHIPPED"]

REFERENCES_FORMAT = "dfrank.problem_references"
SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "resources", "problem_references.json")

# the long run: (strategy, options, evaluations) per kind of space
LONG_RUN = {"simplex": [("ca", {"restarts": 20}, None), ("es", {}, 20000)],
            "box": [("grid", {"resolution": 21}, None), ("pattern", {}, 400)]}


def load(path=None):
    """The references file as a dict (the shipped one by default), every field checked
    against its domain (:func:`check`)."""
    path = SHIPPED if path is None else path
    return check(read_json(path, REFERENCES_FORMAT), path)


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check(refs, path=None):
    """``refs`` itself, or a DataFormatError naming the first field of it that is not what
    a references file holds: ``runs`` a list of records, ``values`` problem -> fold ->
    an entry with a finite ``value``, a ``fingerprint`` of three numbers, and where present
    a ``line_cost`` (an integer >= 1) and a non-negative ``run``."""
    from ..errors import DataFormatError

    def bad(where, what):
        raise DataFormatError(f"references: {where} must be {what}", path=path)

    runs = refs.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        bad("'runs'", "a list of run records")
    values = refs.get("values")
    if not isinstance(values, dict) or not values:
        bad("'values'", "an object of problems (none is empty)")
    for problem, folds in values.items():
        if not isinstance(folds, dict) or not folds:
            bad(f"values[{problem!r}]", "an object of folds")
        for fold, e in folds.items():
            where = f"values[{problem!r}][{fold!r}]"
            if not str(fold).isdigit():
                bad(f"{where}'s fold", "a fold number")
            if not isinstance(e, dict) or not _number(e.get("value")):
                bad(f"{where}['value']", "a finite number")
            fp = e.get("fingerprint")
            if not (isinstance(fp, list) and len(fp) == 3 and all(map(_number, fp))):
                bad(f"{where}['fingerprint']", "three numbers")
            cost = e.get("line_cost", 1)
            if isinstance(cost, bool) or not isinstance(cost, int) or cost < 1:
                bad(f"{where}['line_cost']", "an integer >= 1")
            run = e.get("run", 0)
            if isinstance(run, bool) or not isinstance(run, int) or run < 0:
                bad(f"{where}['run']", "a run number >= 0")
    return refs


def lookup(refs, spec, root, fold):
    """The reference value of ``spec``'s fold, checked against the data under ``root``."""
    entry = refs.get("values", {}).get(spec.id, {}).get(str(fold))
    if entry is None:
        raise ValueError(f"no reference value for {spec.id} fold {fold}: measure one with "
                         f"'dfrank bench reference {root} --problems {spec.id} -o REFS.json' "
                         f"and pass --references REFS.json")
    got = spec.fingerprint(root, fold)
    if not np.allclose(got, entry["fingerprint"]):
        raise ValueError(f"the data of {spec.id} fold {fold} under {root} differ from the "
                         f"data its reference was measured on (queries, documents, label "
                         f"sum: {got} against {entry['fingerprint']}): measure a reference "
                         f"for these data with 'dfrank bench reference'")
    return float(entry["value"])


def line_cost_of(refs, spec, fold):
    """The line cost stored for ``spec``'s fold (1 where the problem has no exact line
    search); a clear error where the references lack it."""
    entry = refs.get("values", {}).get(spec.id, {}).get(str(fold), {})
    if "line_cost" not in entry:
        raise ValueError(f"the references have no line cost for {spec.id} fold {fold}: "
                         "pass line_cost='measured' (--line-cost measured) or a number, or "
                         "measure them with 'dfrank bench reference DATA --line-costs-only "
                         "--merge REFS.json -o REFS.json'")
    return int(entry["line_cost"])


def measure_line_costs(root, instances):
    """``[(line_cost, worth), ...]`` of each ``(spec, fold)``: an exact line search's time
    in single evaluations on this machine (``worth``) and its rounded-up charge; ``(1,
    None)`` without a line search. Measured as parallel bench runs run: in joblib's worker
    processes, numba on one thread each, one per core."""
    from joblib import Parallel, delayed

    from ..driver.parallel import one_thread_each

    with one_thread_each():
        return Parallel(n_jobs=-1)(delayed(_line_cost)(spec, root, fold)
                                   for spec, fold in instances)


def _line_cost(spec, root, fold):
    from ..objectives.objective import line_search_cost

    objective = spec.objective(root, fold)
    if not getattr(objective, "exact_line", False):
        return 1, None
    worth = line_search_cost(objective, repeats=31)
    return max(1, math.ceil(worth)), round(worth, 3)


def _run_record(command, seconds):
    return {"command": command, "date": datetime.date.today().isoformat(),
            "seconds": round(seconds, 1), "dfrank_format": VERSION}


def add_line_costs(refs, root, instances, *, command=""):
    """``refs`` with the line cost of each ``(spec, fold)`` measured here (the
    values untouched; a new run records the command)."""
    t0 = time.perf_counter()
    values = {k: {f: dict(e) for f, e in v.items()} for k, v in refs.get("values", {}).items()}
    run = len(refs.get("runs", []))
    for spec, fold in instances:
        if values.get(spec.id, {}).get(str(fold)) is None:
            raise ValueError(f"no reference value for {spec.id} fold {fold} to add a line "
                             "cost to")
    for (spec, fold), (cost, worth) in zip(instances, measure_line_costs(root, instances)):
        values[spec.id][str(fold)].update(line_cost=cost, line_worth=worth,
                                          line_cost_run=run)
    return dict(refs, runs=list(refs.get("runs", [])) +
                [_run_record(command, time.perf_counter() - t0)], values=values)


def compute(root, instances, *, command="", n_jobs=1, progress=None):
    """The long run's best value of each ``(spec, fold)``: a references dict (JSON-ready)
    whose one run (``runs[0]``) records the command, date and seconds."""
    from ..driver.api import maximize

    values = {}
    t_all = time.perf_counter()
    for spec, fold in instances:
        t0 = time.perf_counter()
        obj = spec.objective(root, fold)
        kind = "box" if obj.space.kind == "box" else "simplex"
        best, by = float(obj.fresh()(obj.space.center())), "center"
        for name, opts, budget in LONG_RUN[kind]:
            res = maximize(obj, strategy=name, seed=0, budget=budget, n_jobs=n_jobs,
                           **opts)
            top = max(float(res.value), float(np.max(res.trace["values"])))
            if top > best:
                best, by = top, name
        values.setdefault(spec.id, {})[str(fold)] = {
            "value": best, "by": by, "seconds": round(time.perf_counter() - t0, 2),
            "fingerprint": spec.fingerprint(root, fold), "run": 0}
        if progress is not None:
            progress(spec.id, fold, best, by)
    for (spec, fold), (cost, worth) in zip(instances, measure_line_costs(root, instances)):
        values[spec.id][str(fold)].update(line_cost=cost, line_worth=worth, line_cost_run=0)
    return {"format": REFERENCES_FORMAT, "version": VERSION,
            "runs": [_run_record(command, time.perf_counter() - t_all)], "values": values}


def merge(old, new):
    """``old`` with the values of ``new`` added or replaced (each value keeps the index of
    the run that measured it)."""
    runs = list(old.get("runs", []))
    shift = len(runs)
    values = {k: dict(v) for k, v in old.get("values", {}).items()}
    for pid, folds in new["values"].items():
        for fold, entry in folds.items():
            entry = dict(entry, run=entry["run"] + shift)
            if "line_cost_run" in entry:
                entry["line_cost_run"] += shift
            values.setdefault(pid, {})[fold] = entry
    return dict(old, runs=runs + list(new["runs"]), values=values)


def from_runs(refs, benches, *, command=""):
    """``refs`` with each value that a bench run beat replaced by that run's best value:
    ``(new refs, changes)``. ``benches``: :class:`~dfrank.problems.experiment.BenchResult`
    objects; only runs measured against these very references count (their ``reference``
    is the entry's value: the bench checked the data's fingerprint against it). Each new
    value names the solver, seed and bench file that found it (``by``) and keeps the
    value it replaced (``previous``); ``changes`` lists ``(problem, fold, old, new, by)``."""
    values = {k: {f: dict(e) for f, e in v.items()} for k, v in refs.get("values", {}).items()}
    run = len(refs.get("runs", []))
    best = {}
    for res in benches:
        for r in res.runs:
            if r.get("error") is not None or r.get("repeat"):
                continue
            entry = values.get(r["problem"], {}).get(str(r["fold"]))
            if entry is None or r["reference"] != entry["value"] or \
                    not r["best_value"] > entry["value"]:
                continue
            key = (r["problem"], str(r["fold"]))
            if key not in best or r["best_value"] > best[key][0]:
                by = f"{r['solver']} seed {r['seed']} in {os.path.basename(str(res.path))}"
                best[key] = (r["best_value"], by)
    changes = []
    for (pid, fold), (value, by) in sorted(best.items()):
        old = values[pid][fold]
        changes.append((pid, int(fold), old["value"], value, by))
        values[pid][fold] = dict(old, value=value, by=by, previous=old["value"], run=run,
                                 seconds=None)
    record = dict(_run_record(command, 0.0), benches=[str(b.path) for b in benches])
    return dict(refs, runs=list(refs.get("runs", [])) + [record], values=values), changes


def describe(refs, path=None):
    """Which references a bench used (for its file and report): the file (``shipped``
    for dfrank's own), its number of runs, the date of the last, and a digest of its
    values (the same file edited is other references)."""
    import hashlib
    import json

    runs = refs.get("runs", [])
    digest = hashlib.sha256(json.dumps(refs.get("values"), sort_keys=True).encode())
    return {"file": "shipped" if path is None else os.path.abspath(path),
            "runs": len(runs), "date": runs[-1].get("date") if runs else None,
            "digest": digest.hexdigest()[:16]}


def save(refs, path):
    """Write ``refs`` atomically."""
    write_json_atomic(path, refs)
    return path
