"""What a bench's runs say together: runtime-to-target ECDFs, data profiles, honesty flags.

* The runtime of a run to a target is the number of evaluations after which its
  best-so-far value first reached the target (infinite if it never did within its budget).
* The aggregated ECDF of a solver (COCO's view) at a budget B is the fraction of its
  (run, target) pairs reached within B evaluations, each run weighing the same (the mean
  over runs of the fraction of the run's targets reached).
* The data profile of a solver for one eps (Moré and Wild 2009) at kappa is the fraction of
  its runs that reached that eps's target within kappa (dim + 1) evaluations (kappa
  "simplex gradients").
* A run that failed counts in every curve and column as one that reached no target
  (final gap 1), so that a solver that crashes on a problem is not judged on the others.
* Honesty flags: a solver whose runs on an instance are identical across seeds
  (deterministic, or it ignored the seed), one whose run repeated with the same seed differs
  (seeded from the clock), a run that went past its budget (evaluations, or its time limit
  by more than 25% + 1 s), a recommendation the solver never evaluated, a run that failed,
  a run that stopped before its budget, a run that beat its problem's reference.
"""

from collections import defaultdict

import numpy as np

from ..text import format_table
from .problem import EPSILONS, first_hits

__all__ = ["Profiles", "OVERTIME"]

OVERTIME = (1.25, 1.0)   # a run flagged over its time limit: seconds > 1.25 limit + 1 s
EPS_SHOWN = 0.1          # the eps of the summary's "evaluations to target" column
COLUMNS = (100, 1000)    # the summary's ECDF columns, those a run could reach


class Profiles:
    """The runs of a bench (records as :func:`dfrank.problems.bench` writes them)."""

    def __init__(self, runs):
        self.repeats = [r for r in runs if r.get("repeat") and r.get("error") is None]
        runs = [r for r in runs if not r.get("repeat")]
        self.runs = [r for r in runs if r.get("error") is None]
        self.failed = [r for r in runs if r.get("error") is not None]
        self.hits = [first_hits(r["trace"], r["targets"]) for r in self.runs]

    @property
    def solvers(self):
        seen = []
        for r in self.runs + self.failed:
            if r["solver"] not in seen:
                seen.append(r["solver"])
        return seen

    def indices_of(self, solver):
        """Positions in :attr:`runs` of the successful runs of ``solver``."""
        return [i for i, r in enumerate(self.runs) if r["solver"] == solver]

    # ------------------------------------------------------------------ curves
    def n_failed(self, solver):
        return sum(r["solver"] == solver for r in self.failed)

    def ecdf(self, solver, budgets):
        """The aggregated ECDF of ``solver`` at each of ``budgets`` (evaluations)."""
        idx = self.indices_of(solver)
        budgets = np.asarray(budgets, dtype=np.float64)
        if not idx and not self.n_failed(solver):
            return np.full(len(budgets), np.nan)
        fr = [np.mean(self.hits[i][None, :] <= budgets[:, None], axis=1) for i in idx]
        fr += [np.zeros(len(budgets))] * self.n_failed(solver)
        return np.mean(fr, axis=0)

    def data_profile(self, solver, kappas, eps=EPS_SHOWN):
        """The fraction of ``solver``'s runs that reached the ``eps`` target within
        kappa (dim + 1) evaluations, for each kappa."""
        idx = self.indices_of(solver)
        kappas = np.asarray(kappas, dtype=np.float64)
        if not idx and not self.n_failed(solver):
            return np.full(len(kappas), np.nan)
        k = _eps_index(eps)
        out = []
        for i in idx:
            r = self.runs[i]
            h = self.hits[i]
            hit = h[min(k, len(h) - 1)]
            out.append(hit <= kappas * (r["dim"] + 1))
        out += [np.zeros(len(kappas), dtype=bool)] * self.n_failed(solver)
        return np.mean(out, axis=0)

    @property
    def reachable(self):
        """The most evaluations a run of the bench could make: the largest budget (or, for
        runs with only a time limit, the most evaluations made)."""
        return max([r["budget"] if r.get("budget") is not None else r["n_evals"]
                    for r in self.runs] + [0])

    def columns(self):
        """The ECDF columns of the summary: :data:`COLUMNS` within :attr:`reachable`."""
        return [b for b in COLUMNS if b <= self.reachable]

    def budget_grid(self, n=60):
        """Log-spaced budgets from 1 to the largest number of evaluations of any run."""
        top = max([r["n_evals"] for r in self.runs] + [1])
        return np.unique(np.round(np.logspace(0, np.log10(max(top, 1)), n)))

    # ------------------------------------------------------------------ flags
    def flags(self):
        """``{solver: [message, ...]}`` of the honesty checks that failed."""
        out = defaultdict(list)
        groups = defaultdict(list)
        for r in self.runs:
            groups[(r["solver"], r["problem"], r["fold"])].append(r)
        same = defaultdict(int)
        total = defaultdict(int)
        for (s, _, _), rs in groups.items():
            if len({r["seed"] for r in rs}) < 2:
                continue
            total[s] += 1
            first = rs[0]["trace"]
            if all(_same_trace(first, r["trace"]) for r in rs[1:]):
                same[s] += 1
        for s, n in same.items():
            out[s].append(f"identical runs across seeds on {n} of {total[s]} instances "
                          "(deterministic, or the seed is ignored)")
        first = {(r["solver"], r["problem"], r["fold"], r["seed"]): r for r in self.runs}
        for rep in self.repeats:
            orig = first.get((rep["solver"], rep["problem"], rep["fold"], rep["seed"]))
            if orig is not None and not _same_trace(orig["trace"], rep["trace"]):
                out[rep["solver"]].append(
                    f"the same seed gave another run on {rep['problem']} fold {rep['fold']} "
                    f"(best {orig['best_value']:.4f} then {rep['best_value']:.4f}): not "
                    "reproducible (seeded from the clock?)")
        over = defaultdict(int)
        unevaluated = defaultdict(int)
        for r in self.runs:
            if _over_budget(r):
                over[r["solver"]] += 1
            if r.get("recommended_evaluated") is False:
                unevaluated[r["solver"]] += 1
        for s, n in over.items():
            out[s].append(f"{n} runs past their budget")
        for s, n in unevaluated.items():
            out[s].append(f"{n} runs recommended a point they never evaluated")
        early = defaultdict(list)
        for r in self.runs:   # ended on its own (converged, or its loop stopped) early
            if r.get("budget") is not None and r["n_evals"] < r["budget"] and \
                    r["status"] not in ("budget", "time", "interrupted"):
                early[r["solver"]].append(r["n_evals"] / r["budget"])
        for s, used in early.items():
            out[s].append(f"{len(used)} runs stopped before their budget (median "
                          f"{np.median(used):.0%} of it used): its ECDF stays flat past them")
        above = defaultdict(list)
        for r in self.runs:
            if r["best_value"] > r["reference"]:
                above[r["solver"]].append(r)
        for s, rs in above.items():
            worst = max(rs, key=lambda r: r["best_value"] - r["reference"])
            out[s].append(
                f"{len(rs)} runs beat their problem's reference (by up to "
                f"{worst['best_value'] - worst['reference']:.4g}, {worst['problem']} fold "
                f"{worst['fold']} seed {worst['seed']}): the targets near the reference are "
                "too easy there; 'dfrank bench reference --from-runs BENCH' takes the "
                "better values")
        failed = defaultdict(list)
        for r in self.failed:
            failed[r["solver"]].append(r["error"])
        for s, errs in failed.items():
            out[s].append(f"{len(errs)} runs failed (first: {errs[0]})")
        return dict(out)

    # ------------------------------------------------------------------ table
    def summary_rows(self):
        """One dict per solver: runs, the ECDF at 100 and 1000 evaluations (None where no
        run could make that many) and at the end,
        the median evaluations to the eps = 0.1 target (over the runs that reached it),
        the median final gap (reference - best) / (reference - start), flags."""
        flags = self.flags()
        rows = []
        k = _eps_index(EPS_SHOWN)
        for s in self.solvers:
            idx = self.indices_of(s)
            failed = self.n_failed(s)
            row = {"solver": s, "runs": len(idx) + failed, "failed": failed,
                   "flags": flags.get(s, [])}
            if not idx:   # every run failed: each one reached nothing
                row.update(ecdf_100=0.0, ecdf_1000=0.0, ecdf_end=0.0, reached_eps=0,
                           evals_to_eps=None, gap=1.0, evals=None, seconds=None)
            else:
                row["ecdf_100"], row["ecdf_1000"] = self.ecdf(s, [100, 1000])
                row["ecdf_end"] = float(np.mean([np.mean(np.isfinite(self.hits[i]))
                                                 for i in idx] + [0.0] * failed))
                reach = [self.hits[i][min(k, len(self.hits[i]) - 1)] for i in idx]
                ok = [h for h in reach if np.isfinite(h)]
                row["reached_eps"] = len(ok)
                row["evals_to_eps"] = float(np.median(ok)) if ok else None
                row["gap"] = float(np.median([_gap(self.runs[i]) for i in idx]
                                             + [1.0] * failed))
                row["evals"] = float(np.median([self.runs[i]["n_evals"] for i in idx]))
                row["seconds"] = float(np.median([self.runs[i]["seconds"] for i in idx]))
            for b in COLUMNS:
                if b > self.reachable:
                    row[f"ecdf_{b}"] = None
            rows.append(row)
        return rows

    def summary(self):
        rows = self.summary_rows()
        cols = self.columns()
        head = ["solver", "runs"] + [f"ECDF@{b}" for b in cols] + [
            "ECDF end", f"evals to eps={EPS_SHOWN:g}", "final gap", "evals", "seconds"]
        table = []
        for r in rows:
            to = "-" if r["evals_to_eps"] is None else f"{r['evals_to_eps']:.0f}"
            if r["reached_eps"] != r["runs"]:
                to += f" ({r['reached_eps']}/{r['runs']})"
            ecdfs = [f"{r[f'ecdf_{b}']:.3f}" for b in cols]
            table.append([r["solver"], str(r["runs"])] + ecdfs + [
                f"{r['ecdf_end']:.3f}", to, f"{r['gap']:.3f}",
                "-" if r["evals"] is None else f"{r['evals']:.0f}",
                "-" if r["seconds"] is None else f"{r['seconds']:.2f}"])
        text = format_table(table, head)
        instances = {(r["problem"], r["fold"]) for r in self.runs + self.failed}
        seeds = {r["seed"] for r in self.runs + self.failed}
        text += (f"\n{len(instances)} instances (problem folds) x {len(seeds)} runs each "
                 "(seeds: independent trials)")
        text += ("\nECDF: fraction of (run, target) pairs reached within that many "
                 f"evaluations, targets reference - eps (reference - start), eps in "
                 f"{', '.join(f'{e:g}' for e in EPSILONS)}; final gap: median "
                 "(reference - best) / (reference - start)")
        flags = [(r["solver"], f) for r in rows for f in r["flags"]]
        if flags:
            text += "\nflags:\n" + "\n".join(f"  {s}: {f}" for s, f in flags)
        return text

    def by_problem(self, budgets=(100, 1000)):
        """Where each solver wins: for every problem (in the runs' order) and budget, the
        ECDF of each solver on that problem's runs alone. A list of dicts ``problem, dim,
        budget, ecdf`` (``ecdf``: ``{solver: fraction}``, NaN for a solver without runs
        there). Budgets beyond the runs' (:attr:`reachable`) are left out, for the runs'
        own budget where none is within."""
        budgets = [b for b in budgets if b <= self.reachable] or [self.reachable]
        problems, dims = [], {}
        for r in self.runs + self.failed:
            if r["problem"] not in dims:
                problems.append(r["problem"])
                dims[r["problem"]] = r.get("dim")
        rows = []
        for pid in problems:
            alone = Profiles([r for r in self.runs + self.failed + self.repeats
                              if r["problem"] == pid])
            for b in budgets:
                rows.append({"problem": pid, "dim": dims[pid], "budget": int(b),
                             "ecdf": {s: float(alone.ecdf(s, [b])[0]) for s in self.solvers}})
        return rows

    def by_problem_table(self, budgets=(100, 1000)):
        """:meth:`by_problem` as text: a row per problem and budget, a column per solver, the
        best of each row marked with ``*``."""
        rows = []
        for r in self.by_problem(budgets):
            vals = [r["ecdf"][s] for s in self.solvers]
            top = np.nanmax(vals) if not np.all(np.isnan(vals)) else np.nan
            cells = ["-" if np.isnan(v) else f"{v:.2f}" + ("*" if v >= top - 1e-12 else "")
                     for v in vals]
            dim = "" if r["dim"] is None else f" ({r['dim']})"
            rows.append([f"{r['problem']}{dim}", str(r["budget"])] + cells)
        return (format_table(rows, ["problem (dim)", "evals"] + self.solvers) +
                "\nECDF of each solver on each problem's runs within that many evaluations "
                "(* the best of the row)")

    def plot(self, path=None, **kwargs):
        """The aggregated ECDFs and data profiles (see :func:`dfrank.plot.profiles`)."""
        from ..plot import profiles

        return profiles(self, path, **kwargs)


def _eps_index(eps):
    if eps not in EPSILONS:
        raise ValueError(f"eps must be one of {EPSILONS}, got {eps!r}")
    return EPSILONS.index(eps)


def _same_trace(a, b):
    return np.array_equal(np.asarray(a["evals"]), np.asarray(b["evals"])) and \
        np.array_equal(np.asarray(a["values"]), np.asarray(b["values"]))


def _over_budget(r):
    if r.get("budget") is not None and r["n_evals"] > r["budget"]:
        return True
    limit = r.get("max_seconds")
    return limit is not None and r["seconds"] > OVERTIME[0] * limit + OVERTIME[1]


def _gap(r):
    span = r["reference"] - r["start_value"]
    if not span > 0:
        return 0.0 if r["best_value"] >= r["reference"] else 1.0
    return float(max(0.0, r["reference"] - r["best_value"]) / span)
