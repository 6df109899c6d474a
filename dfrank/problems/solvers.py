"""Optimizers driving a :class:`~dfrank.problems.Problem`.

A solver is ``run(problem, seed) -> Outcome``. Two kinds:

* any name of dfrank's strategy registry runs through :func:`dfrank.maximize` on the
  problem's objective, exactly as ``maximize`` and ``compare`` run it (the same seed gives
  the same trace in all three): dfrank's own strategies (``ca``, ``es``, ``pso``, ...)
  search the problem's space, exact line searches included (each counted as
  :attr:`Problem.line_cost` evaluations); the adapters of other packages (``cma:es``,
  ``cma:ipop``, ``nevergrad:NAME``, ``optuna:tpe``, ``optuna:cmaes``; one adapter per
  package, in ``strategies/external.py``) search the unit cube;
* any callable ``fn(problem, seed)``, which drives the problem through its ask/tell loop
  (``x = opt.ask(); opt.tell(x, -problem(x))``) and returns its recommended point (of
  the cube) or None. On the command line such a function is named ``module:function``
  (an importable module; a registered name such as ``cma:es`` wins), or by the name an
  installed package gives it in the entry-point group ``dfrank.solvers``.

The recommendation is checked: a point the solver never evaluated is flagged in the report.
"""

from dataclasses import dataclass

import numpy as np

from ..objectives.objective import BudgetExhausted
from .provenance import seeds_of

__all__ = ["Outcome", "solver_of", "ENTRY_POINTS"]

ENTRY_POINTS = "dfrank.solvers"   # installed packages' solvers: name = "module:function"


@dataclass
class Outcome:
    """What a solver ran: its recommendation (a point of the problem's space, or None) and,
    when it searched copies of the objective (dfrank's restarts), their merged trace and
    count; otherwise the problem's own are used."""
    point: np.ndarray = None
    trace: dict = None
    n_evals: int = None
    status: str = ""
    seeds: list = None   # the seeds the solver received (provenance.seeds_of)


class DfrankSolver:
    """A strategy of dfrank's registry, through :func:`dfrank.maximize` (serial)."""

    def __init__(self, name, options=None):
        from ..registry import resolve

        self.name, self.options = name, dict(options or {})
        # made once (an unknown name or option fails here); every run starts from a copy
        self.strategy = resolve(name, **self.options)

    def run(self, problem, seed):
        import copy

        from ..driver.api import maximize

        res = maximize(problem.objective, strategy=copy.deepcopy(self.strategy), seed=seed,
                       n_jobs=1)
        return Outcome(point=res.point, trace=res.trace, n_evals=res.n_evals,
                       status=res.status, seeds=seeds_of(res.restarts))


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
        return Outcome(point=None if z is None else problem.to_space(z)[0],
                       seeds=seeds_of(argument=seed))


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
    try:
        return DfrankSolver(spec, options)
    except ValueError as unknown:
        fn = None if options else _function_of(spec)
        if fn is None:
            raise unknown from None
        return CallableSolver(fn, spec)


def _function_of(spec):
    """The solver function an installed package registers under ``spec`` (entry points
    :data:`ENTRY_POINTS`), or ``module:function`` imported; None when it is neither.

    ``module`` is found as Python finds a script's modules: on ``sys.path``, then in the
    working directory (the user named it; dfrank's own modules never come from there). An
    error inside the module, or inside a plugin's, is said with its own last line."""
    import importlib
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINTS):
        if ep.name == spec:
            try:
                return ep.load()
            except Exception as e:   # the plugin's code: its fault, said as such
                dist = getattr(getattr(ep, "dist", None), "name", None) or "a package"
                raise ValueError(f"solver {spec!r}: the plugin {ep.value!r} that {dist} "
                                 f"registers could not be loaded ({_where(e)}); fix or "
                                 "uninstall that package") from None
    module, sep, name = spec.partition(":")
    if not (sep and module and name):
        return None
    if not all(part.isidentifier() for part in module.split(".")) or \
            not name.isidentifier():
        raise ValueError(f"solver {spec!r}: module:function names a Python module (dotted "
                         "names, found on sys.path or in the working directory) and a "
                         f"function in it; {module!r}:{name!r} is not one")
    try:
        mod = _import_user_module(importlib, module)
    except ModuleNotFoundError as e:
        if e.name and module.split(".")[0] == e.name.split(".")[0]:
            return None          # no such module: an unknown solver
        raise ValueError(f"solver {spec!r}: importing {module!r} failed ({_where(e)})") \
            from None
    except Exception as e:
        raise ValueError(f"solver {spec!r}: importing {module!r} failed ({_where(e)})") \
            from None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise ValueError(f"solver {spec!r}: module {module!r} has no function {name!r}")
    return fn


def _import_user_module(importlib, module):
    """``module`` from ``sys.path``, else from the working directory (never dfrank's)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        if top == "dfrank" or e.name is None or e.name.split(".")[0] != top:
            raise
    import os
    import sys

    here = os.getcwd()
    sys.path.insert(0, here)
    try:
        return importlib.import_module(module)
    finally:
        if here in sys.path:
            sys.path.remove(here)


def _where(e):
    """An exception as its type, message and the last line of the traceback that raised
    it (the user's or the plugin's file and line)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(e).__name__}: {e}{at}"
