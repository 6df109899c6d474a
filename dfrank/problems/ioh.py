"""A bench's runs in IOHprofiler's format, which IOHanalyzer reads (the JSON meta-data and
``.dat`` raw data that ``ioh.logger.Analyzer`` writes, version 0.4).

One folder per solver (the algorithm), holding for each problem:

* ``IOHprofiler_f{ID}_{NAME}.json``: suite, function id and name, ``maximization: true``,
  the algorithm, the logged attributes, and per dimension a scenario listing its runs
  (instance, evaluations, best evaluation, value and point);
* ``data_f{ID}_{NAME}/IOHprofiler_f{ID}_DIM{D}.dat``: per run a header line
  ``evaluations raw_y reference start_value``, then a line per improvement of the
  best-so-far value (the evaluation's number and value, from evaluation 1), and the last
  evaluation when it was no improvement; every line carries the instance's reference and
  start value, from which dfrank's targets are made (:func:`dfrank.problems.targets_of`),
  so that a reader such as ``iohinspector`` rebuilds them. Each run's meta-data in the JSON
  file holds them too.

Function ids are the problems' positions in :data:`dfrank.problems.SPECS` (from 1), names
the problem ids with ``@`` and ``-`` written ``_``. A fold is an instance and its seeds are
independent runs (IOHprofiler's and COCO's trials) of that instance. ``x`` is the cube
point of the run's best evaluation, the space the optimizers searched.

Runs that failed or stopped early are written with the evaluations they made. A run that
made none cannot be written in this format (IOHprofiler's own logger writes no run for it
either): they are named in ``no_evaluations.tsv`` beside the solvers' folders, and
dfrank's report counts them as runs that reached nothing.
"""

import hashlib
import json
import os
import re

from ..errors import DataFormatError
from .suite import SPECS

__all__ = ["export", "IOH_VERSION", "function_of", "instance_of"]

IOH_VERSION = "0.4.2"   # the ioh release whose Analyzer output this format follows
SUITE = "dfrank"


def function_of(problem_id):
    """(IOHprofiler function id, function name) of a problem id."""
    ids = list(SPECS)
    if problem_id not in ids:
        raise DataFormatError(f"the bench names a problem {problem_id!r} that this dfrank does "
                              f"not know (it knows {', '.join(ids)})")
    return ids.index(problem_id) + 1, re.sub(r"[^A-Za-z0-9]+", "_", problem_id).strip("_")


def instance_of(fold):
    """The IOHprofiler instance of a fold: the fold (its seeds are runs of it)."""
    return int(fold)


def _folder_name(solver):
    """A solver's folder: its name with what a file name cannot hold replaced, and no
    leading dot (``..`` would leave the export's folder)."""
    return re.sub(r"^\.", "_", re.sub(r"[^A-Za-z0-9._-]+", "_", str(solver))) or "_"


def _folder_names(solvers):
    """The folders of ``solvers``, distinct also where the file system ignores case: names
    that would share one (``my/solver``, ``my:solver``) each get a digest of the name as
    given after it."""
    plain = {s: _folder_name(s) for s in solvers}
    count = {}
    for name in plain.values():
        count[name.lower()] = count.get(name.lower(), 0) + 1
    names = {s: name if count[name.lower()] == 1 else
             f"{name}-{hashlib.sha256(str(s).encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
             for s, name in plain.items()}
    if len({n.lower() for n in names.values()}) < len(names):
        raise ValueError(f"the solvers' names {sorted(map(str, solvers))} give no distinct "
                         "folders: rename one")
    return names


ATTRIBUTES = ["evaluations", "raw_y", "reference", "start_value"]
# beside the solvers' folders (not .json: readers of the format load every .json file)
NO_EVALUATIONS = "no_evaluations.tsv"
_EMPTY_FIELDS = ("solver", "problem", "fold", "seed", "status", "error")


def _dat_lines(run):
    evals, values = run["trace"]["evals"], run["trace"]["values"]
    if not len(evals) or int(evals[0]) != 1:
        raise DataFormatError(f"a run of {run['solver']} on {run['problem']} (fold "
                              f"{run['fold']}, seed {run['seed']}) does not start at "
                              "evaluation 1: written by a dfrank that recorded a batch's "
                              "improvements at its best point (bench file version 1); run "
                              "it again to export it")
    same = f" {float(run['reference']):.10f} {float(run['start_value']):.10f}\n"
    lines = [" ".join(ATTRIBUTES) + "\n"]
    lines += [f"{int(e)} {float(v):.10f}{same}" for e, v in zip(evals, values)]
    last = run.get("last_value")
    if last is not None and run["n_evals"] > int(evals[-1]):
        lines.append(f"{int(run['n_evals'])} {float(last):.10f}{same}")
    return lines


def _run_meta(run):
    evals, values = run["trace"]["evals"], run["trace"]["values"]
    x = run.get("best_x", run.get("best_point")) or []   # (files before best_x: the point)
    return {"instance": instance_of(run["fold"]), "evals": int(run["n_evals"]),
            "best": {"evals": int(evals[-1]), "y": float(values[-1]),
                     "x": [float(v) for v in x]},
            "reference": float(run["reference"]), "start_value": float(run["start_value"])}


def exported(runs):
    """The runs an export writes, grouped: ``([(solver, problem, folder name, {dim: runs in
    fold and seed order}), ...] in solver and function order, runs that made no
    evaluation)``. The repeats of the reproducibility check are not runs of the bench and
    are left out. Shared by this export and COCO's (:mod:`.cocodata`)."""
    groups, empty = {}, []
    for r in runs:
        if r.get("repeat"):
            continue
        if not len((r.get("trace") or {}).get("evals", [])):
            empty.append(r)
            continue
        groups.setdefault((r["solver"], r["problem"]), []).append(r)
    out = []
    folders = _folder_names(sorted({solver for solver, _ in groups}))
    for (solver, pid), rs in sorted(groups.items(), key=lambda kv: (
            kv[0][0], function_of(kv[0][1])[0])):
        by_dim = {}
        for r in sorted(rs, key=lambda r: (r["dim"], r["fold"], r["seed"])):
            by_dim.setdefault(int(r["dim"]), []).append(r)
        out.append((solver, pid, folders[solver], by_dim))
    return out, empty


def write_no_evaluations(folder, empty, fmt):
    """Name the runs that made no evaluation in ``folder/no_evaluations.tsv`` (``fmt``'s
    format cannot hold them); the file's path, or None when there were none."""
    if not empty:
        return None
    path = os.path.join(folder, NO_EVALUATIONS)
    os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        f.write(f"# runs that made no evaluation, which {fmt} format cannot hold; dfrank "
                "counts them as runs that reached nothing\n")
        f.write("\t".join(_EMPTY_FIELDS) + "\n")
        f.writelines("\t".join(" ".join(str(r.get(k)).split()) for k in _EMPTY_FIELDS)
                     + "\n" for r in empty)
    return path


def export(runs, folder):
    """Write ``runs`` (bench records) under ``folder``, failed and early-stopped ones
    included: ``(files written, in order; runs that made no evaluation, left out and named
    in no_evaluations.tsv)``. The repeats of the reproducibility check are not runs of
    the bench and are left out."""
    groups, empty = exported(runs)
    written = []
    for solver, pid, folder_name, by_dim in groups:
        fid, name = function_of(pid)
        base = os.path.join(folder, folder_name)
        data_dir = f"data_f{fid}_{name}"
        os.makedirs(os.path.join(base, data_dir), exist_ok=True)
        scenarios = []
        for dim, drs in by_dim.items():
            rel = f"{data_dir}/IOHprofiler_f{fid}_DIM{dim}.dat"
            with open(os.path.join(base, rel), "w") as f:
                for r in drs:
                    f.writelines(_dat_lines(r))
            written.append(os.path.join(base, rel))
            scenarios.append({"dimension": dim, "path": rel,
                              "runs": [_run_meta(r) for r in drs]})
        meta = {"version": IOH_VERSION, "suite": SUITE, "function_id": fid,
                "function_name": name, "maximization": True,
                "algorithm": {"name": solver, "info": "dfrank bench"},
                "attributes": ATTRIBUTES, "scenarios": scenarios}
        path = os.path.join(base, f"IOHprofiler_f{fid}_{name}.json")
        with open(path, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        written.append(path)
    named = write_no_evaluations(folder, empty, "IOHprofiler's")
    return written + ([named] if named else []), empty
