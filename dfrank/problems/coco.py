"""A bench's runs as COCO states its results: absolute targets, expected running time (ERT)
with bootstrap confidence intervals, ECDFs per dimension group over budgets per dimension,
and the virtual best solver.

* **Absolute targets** are fixed gaps to the reference, ``reference - 10^-k`` for k = 0.6,
  0.8, ..., 4 (:data:`GAPS`: COCO's f-target grid of five per decade, scaled to metrics in
  [0, 1]), the same for every run of a problem, where the start-relative targets of
  :mod:`.profiles` move with each run's start.
* **ERT** of a target over a set of runs (Hansen et al., COCO's "expected running time"):
  the evaluations of all runs until each reached the target or ended, divided by the
  number of runs that reached it (inf when none did); its confidence interval is the 2.5
  and 97.5 percentiles of the ERT of :data:`RESAMPLES` bootstrap resamples of the runs
  (seeded: the same runs give the same interval).
* **Dimension groups** (:data:`DIM_GROUPS`): the suite's dimensions 1-3, 6, 46-47 and 301;
  an ECDF there is over budgets in evaluations per dimension, so that problems of one group
  are read on one scale.
* **The virtual best run** (:data:`VBS`) of a (problem, fold, seed) reaches each target at
  the fewest evaluations of any solver's run on it: a bound no single solver beats.
* **The best solver per problem** (:data:`BEST`, COCO's virtual best solver): on each
  problem the runs of the solver whose ERT to the target is least there; ERTs are also
  given per problem (:meth:`Coco.problem_table`), where the groups pool the runs of
  problems of like dimension.

Failed runs count as runs that reached nothing; the repeats of the reproducibility check
are not runs of the bench.
"""

import numpy as np

from .problem import first_hits

__all__ = ["GAPS", "DIM_GROUPS", "RESAMPLES", "VBS", "BEST", "absolute_targets", "ert",
           "ert_interval", "group_of", "Coco"]

GAPS = 10.0 ** -np.arange(0.6, 4.0 + 1e-9, 0.2)
DIM_GROUPS = ((1, 3), (6, 6), (46, 47), (301, 301))
RESAMPLES = 1000
VBS = "virtual best run"      # per instance and seed, the fewest evaluations of any run
BEST = "best solver per problem"   # COCO's virtual best: per problem, the solver of least ERT


def absolute_targets(reference):
    """``reference - gap`` for each gap of :data:`GAPS` (increasing)."""
    return float(reference) - GAPS


def group_of(dim):
    """The dimension group (lo, hi) that holds ``dim`` (a group of its own otherwise)."""
    for lo, hi in DIM_GROUPS:
        if lo <= dim <= hi:
            return lo, hi
    return int(dim), int(dim)


def ert(hits, evals):
    """COCO's ERT of one target: ``hits`` (evaluations at which each run first reached it,
    inf where it never did) and ``evals`` (each run's evaluations)."""
    hits = np.asarray(hits, dtype=np.float64)
    ok = np.isfinite(hits)
    if not ok.any():
        return np.inf
    spent = np.where(ok, hits, np.asarray(evals, dtype=np.float64))
    return float(spent.sum() / ok.sum())


def ert_interval(hits, evals, resamples=RESAMPLES, seed=0):
    """The 2.5 and 97.5 percentiles of the ERT of ``resamples`` bootstrap resamples of the
    runs, as order statistics (the lower and the higher one at each rank: no interpolation
    between a finite ERT and the inf of a resample where no run reached the target)."""
    hits = np.asarray(hits, dtype=np.float64)
    evals = np.asarray(evals, dtype=np.float64)
    if not len(hits):
        return np.inf, np.inf
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(hits), size=(resamples, len(hits)))
    h = hits[idx]
    ok = np.isfinite(h)
    spent = np.where(ok, h, evals[idx]).sum(axis=1)
    n_ok = ok.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        erts = np.where(n_ok > 0, spent / np.maximum(n_ok, 1), np.inf)
    return (float(np.percentile(erts, 2.5, method="lower")),
            float(np.percentile(erts, 97.5, method="higher")))


class Coco:
    """The runs of a bench (records as :func:`dfrank.problems.bench` writes them) read as
    COCO reads its own."""

    vbs = VBS   # the virtual best solver's name among the solvers

    def __init__(self, runs):
        runs = [r for r in runs if not r.get("repeat")]
        self.runs = runs
        self.solvers = []
        for r in runs:
            if r["solver"] not in self.solvers:
                self.solvers.append(r["solver"])
        self.hits = [self._hits(r) for r in runs]

    @staticmethod
    def _hits(r):
        targets = absolute_targets(r["reference"]) if r.get("reference") is not None \
            else np.full(len(GAPS), np.inf)
        if r.get("error") is not None or not r.get("trace"):
            return np.full(len(GAPS), np.inf)
        return first_hits(r["trace"], targets)

    @staticmethod
    def _evals(r):
        return float(r.get("n_evals") or 0)

    def has_runs(self, solver, group):
        """Whether ``solver`` has runs in the dimension group."""
        return bool(self._selected(solver, group))

    def plot(self, path=None, **kwargs):
        """The ECDFs per dimension group (see :func:`dfrank.plot.ecdf_by_dimension`)."""
        from ..plot import ecdf_by_dimension

        return ecdf_by_dimension(self, path, **kwargs)

    def groups(self):
        """The dimension groups of the runs, in increasing order."""
        return sorted({group_of(int(r["dim"])) for r in self.runs if r.get("dim")})

    def _selected(self, solver, group):
        return [i for i, r in enumerate(self.runs)
                if r["solver"] == solver and r.get("dim") and group_of(int(r["dim"])) == group]

    def _vbs(self, group):
        """The virtual best solver's hits, evaluations and problem, per (problem, fold,
        seed) of ``group``: the fewest evaluations any solver's run took to each target."""
        best = {}
        for i, r in enumerate(self.runs):
            if not r.get("dim") or group_of(int(r["dim"])) != group:
                continue
            key = (r["problem"], r["fold"], r["seed"])
            h, e = self.hits[i], self._evals(r)
            if key in best:   # (where no run reached a target: the shortest run's count)
                h0, e0 = best[key]
                best[key] = (np.minimum(h0, h), min(e0, e))
            else:
                best[key] = (h, e)
        return [v[0] for v in best.values()], [v[1] for v in best.values()], \
            [k[0] for k in best]

    def _best_per_problem(self, group, gap=1e-2):
        """The run indices of :data:`BEST` in ``group``: on each problem, those of the
        solver whose ERT to ``reference - gap`` is least there (the first solver of
        equals)."""
        k = int(np.argmin(np.abs(GAPS - gap)))
        chosen = []
        problems = sorted({r["problem"] for r in self.runs
                           if r.get("dim") and group_of(int(r["dim"])) == group})
        for p in problems:
            best = None
            for s in self.solvers:
                idx = [i for i in self._selected(s, group) if self.runs[i]["problem"] == p]
                if idx:
                    e = ert([self.hits[i][k] for i in idx],
                            [self._evals(self.runs[i]) for i in idx])
                    if best is None or e < best[0]:
                        best = (e, idx)
            chosen += best[1] if best else []
        return chosen

    def _runs_of(self, solver, group):
        """(hits per run, evaluations per run, dimension per run) of a solver (or
        :data:`VBS`, :data:`BEST`) in a dimension group."""
        if solver == BEST:
            idx = self._best_per_problem(group)
            return ([self.hits[i] for i in idx], [self._evals(self.runs[i]) for i in idx],
                    [int(self.runs[i]["dim"]) for i in idx])
        if solver == VBS:
            hits, evals, problems = self._vbs(group)
            dims = {r["problem"]: int(r["dim"]) for r in self.runs if r.get("dim")}
            return hits, evals, [dims[p] for p in problems]
        idx = self._selected(solver, group)
        return ([self.hits[i] for i in idx], [self._evals(self.runs[i]) for i in idx],
                [int(self.runs[i]["dim"]) for i in idx])

    def ecdf(self, solver, group, per_dim_budgets):
        """The fraction of (run, absolute target) pairs of ``solver`` (or :data:`VBS`) in
        ``group`` reached within each budget given in evaluations per dimension (NaN
        without runs)."""
        hits, _, dims = self._runs_of(solver, group)
        b = np.asarray(per_dim_budgets, dtype=np.float64)
        if not hits:
            return np.full(len(b), np.nan)
        fr = [np.mean(h[None, :] <= b[:, None] * d, axis=1) for h, d in zip(hits, dims)]
        return np.mean(fr, axis=0)

    def ert_table(self, solver, group, gaps=None, resamples=RESAMPLES, seed=0):
        """``[(gap, ERT, (low, high)), ...]`` of ``solver`` (or :data:`VBS`) in ``group``
        for each gap (default :data:`GAPS`)."""
        hits, evals, _ = self._runs_of(solver, group)
        out = []
        for gap in (GAPS if gaps is None else gaps):
            k = int(np.argmin(np.abs(GAPS - gap)))
            h = [x[k] for x in hits]
            out.append((float(GAPS[k]), ert(h, evals),
                        ert_interval(h, evals, resamples, seed)))
        return out

    def reachable_per_dim(self, group):
        """The most evaluations per dimension a run of ``group`` could make."""
        vals = [(r["budget"] if r.get("budget") is not None else self._evals(r)) / int(r["dim"])
                for r in self.runs if r.get("dim") and group_of(int(r["dim"])) == group]
        return max(vals + [0.0])

    def report(self, per_dim_budgets=(1, 10, 100)):
        """The figures of :meth:`table` for JSON: per dimension group, each solver's (and
        the virtual best solver's) ECDF at the budgets per dimension a run could reach and
        its ERT to each absolute target with the bootstrap interval (None for inf)."""
        def num(x):
            return None if not np.isfinite(x) else float(x)

        out = []
        for group in self.groups():
            reach = self.reachable_per_dim(group)
            cols = [b for b in per_dim_budgets if b <= reach]
            solvers = {}
            for s in self.solvers + [BEST, VBS]:
                if s not in (BEST, VBS) and not self.has_runs(s, group):
                    continue
                solvers[s] = {
                    "ecdf": {f"{b:g}": float(v) for b, v in zip(cols, self.ecdf(s, group, cols))},
                    "ert": [{"gap": g, "ert": num(e), "low": num(lo), "high": num(hi)}
                            for g, e, (lo, hi) in self.ert_table(s, group)]}
            out.append({"dimensions": list(group), "solvers": solvers})
        return out

    def table(self, per_dim_budgets=(1, 10, 100), gap=1e-2):
        """The report's text: per dimension group, each solver's ECDF of the absolute
        targets at budgets per dimension (those a run could reach) and its ERT to
        ``reference - gap`` with the bootstrap interval, the virtual best solver last."""
        from ..text import format_table

        lines = []
        for group in self.groups():
            reach = self.reachable_per_dim(group)
            cols = [b for b in per_dim_budgets if b <= reach]
            rows = []
            for s in self.solvers + [BEST, VBS]:
                if s not in (BEST, VBS) and not self.has_runs(s, group):
                    continue
                e = self.ecdf(s, group, cols)
                (g, value, (lo, hi)), = self.ert_table(s, group, [gap])
                rows.append([s, str(len(self._runs_of(s, group)[0]))] +
                            [f"{x:.3f}" for x in e] + [_num(value) + f" [{_num(lo)}, "
                                                       f"{_num(hi)}]"])
            name = f"dimension {group[0]}" if group[0] == group[1] else \
                f"dimensions {group[0]}-{group[1]}"
            head = ["solver", "runs"] + [f"ECDF@{b:g}D" for b in cols] + \
                [f"ERT to ref - {gap:g} [95% CI]"]
            lines.append(name + "\n" + format_table(rows, head))
        lines.append(f"absolute targets: reference - 10^-k, k = 0.6, 0.8, ..., 4; ECDF@nD: "
                     f"within n evaluations per dimension; ERT: evaluations of all runs "
                     f"until each reached the target or ended, over the runs that reached "
                     f"it ({RESAMPLES} bootstrap resamples of the runs, seeded); "
                     f"{BEST} (COCO's virtual best solver): on each problem the runs of "
                     f"the solver of least ERT to ref - {gap:g} there; {VBS}: the fewest "
                     f"evaluations of any solver's run on each instance and seed")
        return "\n\n".join(lines)

    def problem_ert(self, solver, problem, gap=1e-2):
        """ERT of ``solver`` to ``reference - gap`` over its runs of ``problem`` (every
        fold and seed; NaN without runs)."""
        k = int(np.argmin(np.abs(GAPS - gap)))
        idx = [i for i, r in enumerate(self.runs)
               if r["solver"] == solver and r["problem"] == problem]
        if not idx:
            return np.nan
        return ert([self.hits[i][k] for i in idx], [self._evals(self.runs[i]) for i in idx])

    def problem_report(self, gap=1e-2):
        """:meth:`problem_ert` for JSON: problem -> solver -> ERT (None for inf or no
        runs)."""
        problems = dict.fromkeys(r["problem"] for r in self.runs)
        return {p: {s: (float(e) if np.isfinite(e := self.problem_ert(s, p, gap)) else None)
                    for s in self.solvers} for p in problems}

    def problem_table(self, gap=1e-2):
        """Per problem, each solver's ERT to ``reference - gap`` (COCO reports ERT per
        problem) and the best solver there, COCO's virtual best."""
        from ..text import format_table

        problems = []
        for r in self.runs:
            if r["problem"] not in problems:
                problems.append(r["problem"])
        rows = []
        for p in problems:
            erts = [self.problem_ert(s, p, gap) for s in self.solvers]
            finite = [(e, s) for e, s in zip(erts, self.solvers) if np.isfinite(e)]
            best = min(finite, key=lambda t: t[0]) if finite else None
            dim = next(int(r["dim"]) for r in self.runs if r["problem"] == p and r.get("dim"))
            rows.append([f"{p} ({dim})"] + ["" if np.isnan(e) else _num(e) for e in erts] +
                        [f"{_num(best[0])} {best[1]}" if best else "inf"])
        head = ["problem (dim)"] + list(self.solvers) + [BEST]
        return (f"ERT to ref - {gap:g} per problem (each solver's runs of the problem: every "
                "fold and seed)\n" + format_table(rows, head))


def _num(x):
    return "inf" if not np.isfinite(x) else f"{x:.0f}"
