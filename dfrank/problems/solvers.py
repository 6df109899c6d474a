"""Optimizers driving a :class:`~dfrank.problems.Problem`.

A solver is ``run(problem, seed) -> Outcome``. Two kinds:

* dfrank's strategies (any name of the registry: ``ca``, ``es``, ``pso``, ``random``, ...)
  search the problem's objective in its own space through :func:`dfrank.maximize`, exact
  line searches included (each counted as :attr:`Problem.line_cost` evaluations);
* pycma (``cma:es``), nevergrad (``nevergrad:NAME``) and optuna (``optuna:tpe``,
  ``optuna:cmaes``) drive the problem through their own ask/tell loops over the unit cube,
  as any user's optimizer would (``x = opt.ask(); opt.tell(x, -problem(x))``);
  ``cma:ipop`` is pycma's ``fmin2`` with IPOP restarts until the budget is spent.

Any callable ``fn(problem, seed)`` is a solver too; it returns its recommended point (of
the cube) or None. On the command line such a function is named ``module:function`` (an
importable module; a registered name such as ``cma:es`` wins), or by the name an installed
package gives it in the entry-point group ``dfrank.solvers``. The recommendation is
checked: a point the solver never evaluated is flagged in the report.
"""

from dataclasses import dataclass

import numpy as np

from ..objective import BudgetExhausted

__all__ = ["Outcome", "solver_of", "ASK_TELL", "ENTRY_POINTS"]

ENTRY_POINTS = "dfrank.solvers"   # installed packages' solvers: name = "module:function"

_NO_BUDGET = 1000   # what nevergrad is told when the problem has only a time limit


@dataclass
class Outcome:
    """What a solver ran: its recommendation (a point of the problem's space, or None) and,
    when it searched copies of the objective (dfrank's restarts), their merged trace and
    count; otherwise the problem's own are used."""
    point: np.ndarray = None
    trace: dict = None
    n_evals: int = None
    status: str = ""


class DfrankSolver:
    """A strategy of dfrank's registry, through :func:`dfrank.maximize` (serial)."""

    def __init__(self, name, options=None):
        from ..registry import resolve

        self.name, self.options = name, dict(options or {})
        resolve(name, **self.options)   # an unknown name or option fails here

    def run(self, problem, seed):
        from ..api import maximize

        res = maximize(problem.objective, strategy=self.name, seed=seed, n_jobs=1,
                       **self.options)
        return Outcome(point=res.point, trace=res.trace, n_evals=res.n_evals,
                       status=res.status)


class PycmaSolver:
    """pycma's CMA-ES by ask/tell: a generation asked, evaluated as one batch, told."""

    name = "cma:es"

    def run(self, problem, seed):
        import cma

        cap = problem.remaining if problem.remaining is not None else 10 ** 9
        es = cma.CMAEvolutionStrategy(problem.x0, 0.25, {
            "bounds": [0.0, 1.0], "seed": seed + 1, "verbose": -9, "maxfevals": cap})
        try:
            while not problem.done and not es.stop():
                X = es.ask()
                es.tell(X, list(-problem.batch(np.array(X))))
        except BudgetExhausted:
            pass
        best = es.result.xbest
        return Outcome(point=None if best is None else problem.to_space(best)[0])


class PycmaIpopSolver:
    """pycma's IPOP-CMA-ES as its ``fmin2`` runs it: restarts with a population twice the
    last one's until the budget is spent (or pycma's own restart limit, 100 here), each
    generation evaluated as one batch (``parallel_objective``); its recommendation is the
    best point evaluated."""

    name = "cma:ipop"

    def run(self, problem, seed):
        import cma

        def negated(X):
            return list(-problem.batch(np.array(X)))

        try:
            cma.fmin2(None, problem.x0, 0.25, {"bounds": [0.0, 1.0], "seed": seed + 1,
                                                "verbose": -9},
                      restarts=100, incpopsize=2, parallel_objective=negated)
        except BudgetExhausted:
            pass
        return Outcome(point=problem.best_point)


class NevergradSolver:
    """A nevergrad optimizer by ask/tell, one candidate at a time; its recommendation is
    ``provide_recommendation()``."""

    def __init__(self, optimizer):
        import nevergrad as ng

        if optimizer not in ng.optimizers.registry:
            raise ValueError(f"nevergrad has no optimizer {optimizer!r}")
        self.optimizer = optimizer
        self.name = f"nevergrad:{optimizer}"

    def run(self, problem, seed):
        import warnings

        import nevergrad as ng

        from ..strategies.external import tolerate_nevergrad_metamodel

        tolerate_nevergrad_metamodel()
        budget = problem.remaining if problem.remaining is not None else _NO_BUDGET
        with warnings.catch_warnings():   # nevergrad's advice to its users
            warnings.simplefilter("ignore")
            param = ng.p.Array(init=problem.x0).set_bounds(0.0, 1.0)
            param.set_mutation(sigma=0.25)
            param.random_state = np.random.RandomState(seed)
            opt = ng.optimizers.registry[self.optimizer](parametrization=param,
                                                         budget=budget, num_workers=1)
            try:
                while not problem.done:
                    cand = opt.ask()
                    opt.tell(cand, -problem(cand.value))
            except BudgetExhausted:
                pass
            rec = opt.provide_recommendation()
        return Outcome(point=problem.to_space(rec.value)[0])


class OptunaSolver:
    """optuna by ask/tell (``study.ask`` / ``study.tell``), the instance's start as the
    first trial; its recommendation is the best trial."""

    def __init__(self, sampler):
        if sampler not in ("tpe", "cmaes"):
            raise ValueError(f"optuna: sampler must be 'tpe' or 'cmaes', got {sampler!r}")
        self.sampler = sampler
        self.name = f"optuna:{sampler}"

    def run(self, problem, seed):
        import optuna

        samplers = {"tpe": optuna.samplers.TPESampler, "cmaes": optuna.samplers.CmaEsSampler}
        names = [f"z{i}" for i in range(problem.dim)]
        dists = {n: optuna.distributions.FloatDistribution(0.0, 1.0) for n in names}
        verbosity = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        try:
            study = optuna.create_study(direction="maximize",
                                        sampler=samplers[self.sampler](seed=seed))
            study.enqueue_trial(dict(zip(names, map(float, problem.x0))))
            while not problem.done:
                trial = study.ask(dists)
                z = np.array([trial.params[n] for n in names])
                try:
                    value = problem(z)
                except BudgetExhausted:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    break
                study.tell(trial, value)
            done = [t for t in study.trials if t.value is not None]
        finally:
            optuna.logging.set_verbosity(verbosity)
        if not done:
            return Outcome()
        best = study.best_trial.params
        return Outcome(point=problem.to_space([best[n] for n in names])[0])


class CallableSolver:
    """A user's ``fn(problem, seed)`` returning a cube point (or None)."""

    def __init__(self, fn, name=None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or repr(fn)

    def run(self, problem, seed):
        try:
            z = self.fn(problem, seed)
        except BudgetExhausted:
            z = None
        return Outcome(point=None if z is None else problem.to_space(z)[0])


ASK_TELL = {"cma:es": lambda: PycmaSolver(), "cma:ipop": lambda: PycmaIpopSolver(),
            "optuna:tpe": lambda: OptunaSolver("tpe"),
            "optuna:cmaes": lambda: OptunaSolver("cmaes")}


def solver_of(spec):
    """A solver from a name (``ca``, ``cma:es``, ``nevergrad:NGOpt``, ...), a
    ``(name, {option: value})`` pair for dfrank's strategies, or a callable."""
    if callable(spec) and not isinstance(spec, str):
        return CallableSolver(spec)
    options = None
    if isinstance(spec, tuple):
        spec, options = spec
    if not isinstance(spec, str):
        raise TypeError(f"a solver is a name, a (name, options) pair or a callable, got "
                        f"{spec!r}")
    from .._optional import strategy_extra

    missing = strategy_extra(spec)
    if missing:
        raise ValueError(f"unknown solver {spec!r}: {missing}")
    if spec in ASK_TELL and not options:
        return ASK_TELL[spec]()
    if spec.startswith("nevergrad:") and not options:
        return NevergradSolver(spec.split(":", 1)[1])
    try:
        return DfrankSolver(spec, options)
    except ValueError as unknown:
        fn = None if options else _function_of(spec)
        if fn is None:
            raise unknown from None
        return CallableSolver(fn, spec)


def _function_of(spec):
    """The solver function an installed package registers under ``spec`` (entry points
    :data:`ENTRY_POINTS`), or ``module:function`` imported; None when it is neither."""
    import importlib
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINTS):
        if ep.name == spec:
            return ep.load()
    module, sep, name = spec.partition(":")
    if not (sep and module and name):
        return None
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise ValueError(f"solver {spec!r}: module {module!r} has no function {name!r}")
    return fn
