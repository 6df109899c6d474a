"""The comparison harness: several strategies, several seeds, one objective, one budget.

    cmp = dfrank.compare(train, ["ca", "pso", "random"], seeds=range(5), budget=2000,
                         metric="ndcg@10", valid=vali, test=test)
    print(cmp.summary())
    cmp.plot("anytime.png")

Every (strategy, seed) run is one :func:`dfrank.maximize` on a fresh copy of the same
objective with the same allowance (``budget`` evaluations and/or ``max_seconds``), counted
by the objective, never by the strategy. On the test set, the strategies are compared with
the best one by a paired test over queries (:func:`dfrank.stats.significance`) of their
per-query values averaged over seeds.
"""

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from .driver.api import maximize
from .data.ranking import RankingData
from .errors import NoEvaluationError
from .objectives.objective import check_allowance, make_objective
from .driver.parallel import gather, run_tasks
from .registry import resolve
from .files import VERSION, jsonable, write_json_atomic
from .stats import TESTS
from .stats import significance as paired_test
from .text import format_table

__all__ = ["compare", "Comparison", "Run", "COMPARISON_FORMAT"]

COMPARISON_FORMAT = "dfrank.comparison"
FRACTIONS = (0.95, 0.99)


@dataclass
class Run:
    """One (strategy, seed) run of a comparison."""
    strategy: str
    seed: int
    train: float                  # best training value the run found (any restart)
    valid: float = None           # of the final ranker, when valid data was given
    test: float = None            # of the final ranker, when test data was given
    n_evals: int = 0
    seconds: float = 0.0
    trace: dict = None            # best value vs evals and seconds
    status: str = ""
    point: np.ndarray = None
    test_per_query: np.ndarray = field(default=None, repr=False)

    def to_dict(self):
        return jsonable({"strategy": self.strategy, "seed": self.seed, "train": self.train,
                          "valid": self.valid, "test": self.test, "n_evals": self.n_evals,
                          "seconds": self.seconds, "status": self.status,
                          "point": self.point, "trace": self.trace})

    def reach(self, target):
        """(evaluations, seconds) at which the trace first reached ``target``, or None."""
        if self.trace is None:
            return None
        vals = self.trace["values"]
        hit = np.flatnonzero(vals >= target)
        if hit.size == 0:
            return None
        i = int(hit[0])
        return int(self.trace["evals"][i]), float(self.trace["seconds"][i])


@dataclass
class Comparison:
    """The runs of :func:`compare` and what they say together."""
    runs: list
    metric: str
    budget: int = None
    max_seconds: float = None
    significance: str = "randomization"          # the paired test against the best
    tests: dict = field(default_factory=dict)    # strategy -> SignificanceResult
    line_cost: int = 1   # evaluations an exact line search counted

    @property
    def strategies(self):
        seen = []
        for r in self.runs:
            if r.strategy not in seen:
                seen.append(r.strategy)
        return seen

    def runs_of(self, strategy):
        return [r for r in self.runs if r.strategy == strategy]

    @property
    def best_value(self):
        """The best training value any run found (the reference of the reach columns)."""
        vals = [r.train for r in self.runs if np.isfinite(r.train)]
        return max(vals) if vals else float("nan")

    def summary_rows(self):
        """One dict per strategy: mean and sd of train/valid/test, evaluations, seconds,
        and the median evaluations/seconds to reach 95% and 99% of :attr:`best_value`
        (with how many runs got there)."""
        best = self.best_value
        rows = []
        for s in self.strategies:
            rs = self.runs_of(s)
            row = {"strategy": s, "runs": len(rs)}
            row["failed"] = sum(r.trace is None for r in rs)   # nothing evaluated in time
            for key in ("train", "valid", "test"):
                vals = [getattr(r, key) for r in rs
                        if getattr(r, key) is not None and np.isfinite(getattr(r, key))]
                if vals:
                    row[key] = float(np.mean(vals))
                    row[key + "_sd"] = float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
            row["evals"] = float(np.median([r.n_evals for r in rs]))
            row["seconds"] = float(np.median([r.seconds for r in rs]))
            for f in FRACTIONS:
                hits = [r.reach(f * best) for r in rs]
                hits = [h for h in hits if h is not None]
                pct = int(round(100 * f))
                row[f"reached_{pct}"] = len(hits)
                row[f"evals_to_{pct}"] = float(np.median([h[0] for h in hits])) if hits else None
                row[f"seconds_to_{pct}"] = float(np.median([h[1] for h in hits])) if hits \
                    else None
            sig = self.tests.get(s)
            if sig is not None:
                row["p_vs_best"] = sig.p_value
            rows.append(row)
        return rows

    def summary(self):
        """The summary as a printable table."""
        rows = self.summary_rows()
        has = {k: any(k in r for r in rows) for k in ("valid", "test", "p_vs_best")}
        headers = ["strategy", "train"]
        headers += ["valid"] * has["valid"] + ["test"] * has["test"]
        headers += ["evals", "seconds", "evals to 95%", "evals to 99%", "s to 95%", "s to 99%"]
        if has["p_vs_best"]:
            headers.append(f"p vs best ({self.significance})")
        table = []
        for r in rows:
            line = [r["strategy"], _pm(r, "train") + (f" ({r['failed']} runs evaluated "
                                                       f"nothing)" if r["failed"] else "")]
            if has["valid"]:
                line.append(_pm(r, "valid"))
            if has["test"]:
                line.append(_pm(r, "test"))
            line += [f"{r['evals']:.0f}", f"{r['seconds']:.2f}"]
            for key in ("evals_to_95", "evals_to_99", "seconds_to_95", "seconds_to_99"):
                v = r[key]
                pct = key[-2:]
                n = r[f"reached_{pct}"]
                if v is None:
                    line.append(f"- (0/{r['runs']})")
                else:
                    txt = f"{v:.0f}" if key.startswith("evals") else f"{v:.2f}"
                    line.append(txt if n == r["runs"] else f"{txt} ({n}/{r['runs']})")
            if has["p_vs_best"]:
                p = r.get("p_vs_best")
                line.append("best" if p is None else f"{p:.3g}" + (" *" if p < 0.05 else ""))
            table.append(line)
        note = (f"{self.metric}; mean ± sd over seeds; reach columns: median over the runs "
                f"that reached that fraction of the best train value any run found "
                f"({self.best_value:.4f})")
        if has["p_vs_best"]:
            note += "; * = differs from the best strategy on test (p < 0.05)"
        return format_table(table, headers) + "\n" + note

    def to_dict(self):
        return jsonable({
            "format": COMPARISON_FORMAT, "version": VERSION, "metric": self.metric,
            "budget": self.budget, "max_seconds": self.max_seconds,
            "line_cost": self.line_cost, "best_value": self.best_value,
            "summary": self.summary_rows(),
            "significance": self.significance,
            "tests": {k: v.to_dict() for k, v in self.tests.items()},
            "runs": [r.to_dict() for r in self.runs]})

    def to_json(self, path=None):
        """The comparison as a JSON-ready dict, also written (atomically) to ``path``."""
        d = self.to_dict()
        if path is not None:
            write_json_atomic(path, d)
        return d

    def plot(self, path=None, **kwargs):
        """Anytime curves (best train value vs evaluations and vs seconds; median over
        seeds with the interquartile band). See :func:`dfrank.plot.comparison`."""
        from .plot import comparison

        return comparison(self, path, **kwargs)


def _pm(row, key):
    if key not in row:
        return ""
    return f"{row[key]:.4f} ± {row[key + '_sd']:.4f}"


def _label(spec):
    if isinstance(spec, str):
        return spec
    if isinstance(spec, tuple):
        return _label(spec[0])
    return getattr(spec, "label", None) or getattr(spec, "__name__", None) or repr(spec)


def _one_run(task, objective, valid, test):
    """One (strategy, seed) run; module level so that joblib can send it to a worker (the
    objective and the data go as separate arguments: a cluster receives them once)."""
    label, strat, seed, budget, max_seconds = task
    t0 = time.perf_counter()
    try:
        res = maximize(objective.fresh(), strategy=copy.deepcopy(strat), seed=seed,
                       budget=budget, max_seconds=max_seconds, valid=valid, n_jobs=1)
    except NoEvaluationError as e:   # a strategy too slow to start within the allowance
        return Run(strategy=label, seed=seed, train=float("nan"),
                   seconds=time.perf_counter() - t0, status=f"no evaluation: {e}")
    seconds = time.perf_counter() - t0
    test_value, per_query = None, None
    if test is not None and res.weights is not None:
        per_query = res.ranker.evaluate(test, objective.metric, per_query=True,
                                        ties=objective.ties)
        per_query = np.asarray(per_query, dtype=np.float64)
        test_value = float(np.nanmean(per_query)) if per_query.size else None
    statuses = sorted({r.status for r in res.restarts})
    # with valid data the final ranker is the restart best on valid, not always the best
    # training point: "train" is the best the run found, as its anytime trace says
    best_train = max(res.value, float(np.max(res.trace["values"])))
    return Run(strategy=label, seed=seed, train=best_train, valid=res.valid_value,
               test=test_value, n_evals=res.n_evals, seconds=seconds, trace=res.trace,
               status=",".join(statuses), point=res.point, test_per_query=per_query)


def compare(objective_or_data, strategies=("coordinate_ascent", "pso", "random"),
            seeds=range(5), *, budget=None, max_seconds=None, metric=None, valid=None,
            test=None, n_jobs=1, options=None, significance="randomization",
            ties=None, progress=False, line_cost=1):
    """Run every strategy with every seed on the same objective and budget.

    Parameters
    ----------
    objective_or_data : RankingData or Objective
        Training data (then ``metric`` and ``ties`` build the objective) or an objective.
    strategies : list
        Names (``dfrank.strategies.available()``), Strategy instances, or
        ``(name, {option: value})`` pairs.
    seeds : iterable of int
    budget : int, optional
        Objective evaluations per run (all restarts together).
    max_seconds : float, optional
        Wall-clock limit per run. Time budgets are only fair when runs do not share the
        cores: with ``max_seconds`` keep ``n_jobs=1``.
    valid, test : RankingData, optional
        Validation data picks each run's restart; test data is reported per run and
        used for the significance tests.
    n_jobs : int
        (strategy, seed) runs in parallel through joblib; each run itself is serial, so
        the results are the same for any n_jobs.
    options : dict, optional
        ``{strategy name: {option: value}}`` for names given as plain strings.
    significance : {"randomization", "t", "wilcoxon", "sign"}
        The paired test of each strategy against the best on test.
    line_cost : int
        Evaluations an exact line search counts against ``budget``: 1, or what its time
        is worth (:func:`dfrank.objectives.objective.line_search_cost`, rounded up), so that
        strategies with and without line searches get the same allowance.

    Returns
    -------
    Comparison
    """
    budget, max_seconds = check_allowance(budget, max_seconds, "strategies")
    objective = make_objective(objective_or_data, metric, ties)
    if line_cost != 1:
        objective = objective.fresh()  # the caller's objective keeps its own count
        objective.set_line_cost(line_cost)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty")
    for name, data in (("valid", valid), ("test", test)):
        if data is not None and not isinstance(data, RankingData):
            raise TypeError(f"{name} must be a RankingData, got {type(data).__name__}")
        if data is not None and getattr(objective, "data", None) is not None and \
                data.n_features != objective.data.n_features:
            raise ValueError(f"{name} has {data.n_features} features but the training data "
                             f"has {objective.data.n_features}")
    options = dict(options or {})
    specs = []
    for spec in strategies:
        opts = {}
        if isinstance(spec, tuple):
            spec, opts = spec
        elif isinstance(spec, str):
            opts = options.get(spec, {})
        strat = resolve(spec, **opts)   # made once: every run of it starts from a copy
        strat.check(objective)          # fail before any run starts
        specs.append((_label(spec), strat))
    if significance not in TESTS:
        raise ValueError(f"unknown significance test {significance!r}; known: "
                         f"{', '.join(TESTS)}")
    tasks = [(label, strat, seed, budget, max_seconds) for label, strat in specs for seed in seeds]
    runs = gather(run_tasks(_one_run, tasks, n_jobs, shared=(objective, valid, test)),
                  len(tasks), "compare", progress)
    name = getattr(getattr(objective, "metric", None), "name", None)
    cmp = Comparison(runs=runs, metric=name or "objective", budget=budget,
                     max_seconds=max_seconds, significance=significance,
                     line_cost=objective.line_cost)
    if test is not None:
        cmp.tests = _against_best(cmp, significance)
    return cmp


def _against_best(cmp, test_name):
    """Paired test over test queries of each strategy against the best one (by mean test
    value); per-query values are averaged over the strategy's seeds first."""
    means = {}
    for s in cmp.strategies:
        pq = [r.test_per_query for r in cmp.runs_of(s) if r.test_per_query is not None]
        if pq:
            means[s] = np.mean(pq, axis=0)
    if len(means) < 2:
        return {}
    best = max(means, key=lambda s: float(np.nanmean(means[s])))
    out = {}
    for s, pq in means.items():
        if s == best:
            continue
        a, b = means[best], pq
        if np.array_equal(a, b, equal_nan=True):
            continue
        out[s] = paired_test(a, b, test_name)
        out[s].a, out[s].b = best, s      # the test line names both
    return out
