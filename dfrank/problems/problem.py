"""One instance of a rank-metric problem, usable by any optimizer's own loop (ask/tell).

    p = suite.problem("letor-ohsumed-ndcg@10", fold=1, seed=0, budget=2000)
    while not p.done:
        z = opt.ask()                   # a point of the unit cube [0, 1]^dim
        opt.tell(z, -p(z))              # the metric (to maximize), counted
    p.trace, p.best_value, p.hit(p.targets)

A problem is a maximization over the unit cube: ``p(z)`` maps z to the problem's own space
(``Simplex.from_unit`` / ``Box.from_unit``) and evaluates it through a dfrank objective,
which counts evaluations, keeps the best-so-far trace and stops at the budget
(:class:`~dfrank.objectives.objective.BudgetExhausted`). dfrank's strategies search the same
objective in its own space (:attr:`Problem.objective`), where an exact line search counts
:attr:`Problem.line_cost` evaluations.

Targets follow the fixed-target view of COCO and IOHprofiler, relative to the instance:
``reference - eps * (reference - start_value)`` for eps in :data:`EPSILONS`, where
``reference`` is the best value known for the problem and fold (see
:mod:`dfrank.problems.references`) and ``start_value`` the value at the instance's start
point ``x0`` (the cube's center for seed 0, a uniform cube point drawn from the seed
otherwise).
"""

import numpy as np

from ..objectives.objective import check_budget

__all__ = ["Problem", "EPSILONS", "targets_of", "start_of", "first_hits"]

EPSILONS = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)


def targets_of(reference, start_value, eps=EPSILONS):
    """``reference - eps * (reference - start_value)`` for each eps (increasing targets for
    decreasing eps). A start at or above the reference leaves one target, the reference."""
    gap = reference - start_value
    if not gap > 0:
        return np.array([float(reference)])
    return reference - np.asarray(eps, dtype=np.float64) * gap


def start_of(dim, seed):
    """The instance's start in the unit cube: the center for seed 0 (the simplex's center,
    the box's middle), a uniform point drawn from ``seed`` otherwise."""
    if seed == 0:
        return np.full(dim, 0.5)
    return np.random.default_rng([int(seed), 0x5EED]).random(dim)


def _key(point):
    return np.ascontiguousarray(point, dtype=np.float64).tobytes()


class Problem:
    """An instance (fold, seed) of a suite problem, with its budget and targets.

    Attributes
    ----------
    id, fold, seed : the problem's name and the instance
    dim : int
        Coordinates searched (the unit cube's dimension; the simplex's d + 1).
    lower, upper : arrays of 0 and 1 (the bounds generic optimizers ask for)
    x0 : the instance's start point in the cube; ``start_value`` its value
    reference : the best value known for the problem and fold
    targets : the instance's targets (see :func:`targets_of`)
    objective : the dfrank objective in the problem's own space (a Simplex or a Box)
    budget, max_seconds : the allowance (None: unbounded)
    line_cost : evaluations an exact line search counts
    """

    def __init__(self, spec, objective, *, fold, seed, reference, budget=None,
                 max_seconds=None, line_cost=1):
        budget, max_seconds = check_budget(budget, max_seconds, "budget")
        self.spec = spec
        self.id, self.fold, self.seed = spec.id, int(fold), int(seed)
        self.space = objective.space
        self.dim = self.space.dim
        self.lower, self.upper = np.zeros(self.dim), np.ones(self.dim)
        self.x0 = start_of(self.dim, self.seed)
        self.start_value = float(objective.fresh()(self.to_space(self.x0)[0]))
        self.reference = float(reference)
        self.targets = targets_of(self.reference, self.start_value)
        self.budget, self.max_seconds = budget, max_seconds
        objective = objective.fresh(max_evals=budget, max_seconds=max_seconds)
        if line_cost != 1:
            objective.set_line_cost(line_cost)
        self.line_cost = objective.line_cost
        objective.initial_point = self.to_space(self.x0)[0]   # where dfrank's runs start
        self.objective = objective
        self._seen = set()
        self.last_value = None
        self._best_cube, self._best_seen = None, -np.inf
        objective.recorder = self._saw

    def __repr__(self):
        return (f"Problem({self.id!r}, fold={self.fold}, seed={self.seed}, dim={self.dim}, "
                f"budget={self.budget}, reference={self.reference:.4f})")

    # ------------------------------------------------------------------ ask/tell
    def to_space(self, Z):
        """Rows of the problem's space of rows of cube points (clipped to the cube)."""
        Z = np.clip(np.atleast_2d(np.asarray(Z, dtype=np.float64)), 0.0, 1.0)
        return self.space.from_unit(Z)

    def __call__(self, z):
        """The metric at cube point ``z`` (one evaluation; raises BudgetExhausted past the
        budget)."""
        return float(self._evaluate(z)[0])

    def batch(self, Z):
        """The metric at each row of ``Z`` (evaluations in order; at the budget the allowed
        prefix is evaluated and recorded, then BudgetExhausted is raised)."""
        return self._evaluate(Z)

    def _evaluate(self, Z):
        Z = np.clip(np.atleast_2d(np.asarray(Z, dtype=np.float64)), 0.0, 1.0)
        return self.objective.batch(self.space.from_unit(Z), cube=Z)

    @property
    def done(self):
        """Whether the budget (evaluations or seconds) is spent (the first evaluation is
        always allowed: see :meth:`dfrank.Objective.batch`)."""
        o = self.objective
        return (self.budget is not None and o.n_evals >= self.budget) or \
            (self.max_seconds is not None and o.n_evals > 0 and o.elapsed >= self.max_seconds)

    @property
    def remaining(self):
        """Evaluations left (None without an evaluation budget)."""
        return None if self.budget is None else max(0, self.budget - self.objective.n_evals)

    @property
    def n_evals(self):
        return self.objective.n_evals

    @property
    def best_value(self):
        return float(self.objective.best_value)

    @property
    def best_point(self):
        """The best evaluated point, in the problem's space."""
        return self.objective.best_point

    @property
    def best_cube(self):
        """The best evaluated point in the unit cube: the one the optimizer asked for (an
        ask/tell loop on the problem, or a strategy that searches the cube, such as
        ``cma:es``), or, for a run that searched the problem's space itself (dfrank's own
        strategies), the cube point that maps to it (:meth:`~dfrank.spaces.Simplex.to_unit`)."""
        if self._best_cube is not None:
            return self._best_cube
        p = self.best_point
        return None if p is None else self.space.to_unit(p)

    @property
    def best_cube_asked(self):
        """The cube point of the best evaluation asked for in the cube (None when every
        evaluation was of the problem's own space): also through copies of the objective,
        such as a strategy's restarts."""
        return self._best_cube

    @property
    def trace(self):
        """Best-so-far after each improvement: ``evals``, ``seconds``, ``values``."""
        return self.objective.trace

    # ------------------------------------------------------------------ bookkeeping
    def _saw(self, points, values, cube=None):
        for p in points:
            self._seen.add(_key(p))
        if len(values):
            self.last_value = float(values[-1])
            i = int(np.argmax(values))
            if values[i] > self._best_seen:   # (the first of equals, as the objective)
                self._best_seen = float(values[i])
                self._best_cube = None if cube is None else np.array(cube[i])

    def evaluated(self, point, cube=False):
        """Whether ``point`` (of the problem's space, or of the cube with ``cube=True``)
        was evaluated on this problem."""
        p = self.to_space(point)[0] if cube else np.asarray(point, dtype=np.float64)
        return _key(p) in self._seen

    def hit(self, targets=None, trace=None):
        """Evaluations at which ``trace`` (default: this problem's) first reached each
        target (inf where it never did)."""
        targets = self.targets if targets is None else np.asarray(targets)
        return first_hits(self.trace if trace is None else trace, targets)


def first_hits(trace, targets):
    """Evaluations at which a best-so-far trace first reached each target (inf: never)."""
    vals, evals = np.asarray(trace["values"]), np.asarray(trace["evals"], dtype=np.float64)
    # the trace's values increase: the first value >= target, by binary search
    i = np.searchsorted(vals, np.asarray(targets, dtype=np.float64), side="left")
    out = np.full(len(i), np.inf)
    ok = i < len(vals)
    out[ok] = evals[i[ok]]
    return out
