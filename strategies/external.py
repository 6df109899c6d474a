"""Thin adapters that let general-purpose black-box optimizers search a dfrank objective:
``scipy:nelder-mead``, ``scipy:powell``, ``scipy:differential_evolution`` (scipy),
``cma:es`` (pycma), ``nevergrad:NAME`` (any nevergrad optimizer, e.g. ``nevergrad:NGOpt``),
``optuna:tpe`` and ``optuna:cmaes`` (optuna). Each is registered only when its package is
installed (``pip install "dfrank[compare]"``).

The map. Every optimizer searches the unit cube z in [0, 1]^D, D = ``space.dim``:
on a simplex, lambda = z / sum(z) (the center when z = 0), which reaches every point of
the simplex and keeps rank-equivalent rankers (scaled z) on one ray; in a box,
x = ``Box.from_unit(z)`` (log scale where the box says so). Points outside the cube are
clipped first.

The sign. The optimizers minimize; :meth:`_External.loss` is the one place where the metric
is negated. Evaluations go through the objective, which counts them and raises
``BudgetExhausted`` at the budget, ending the optimizer's loop wherever it is.
"""

import importlib.util
import warnings

import numpy as np

from dfrank.registry import Strategy, register_family, register_strategy

from dfrank.hyperparams import Choice, Int, Name, Real, Span

from ._common import cube_to_space, start_in_cube

_MAX_EVALS_DEFAULT = 1000


def _installed(name):
    return importlib.util.find_spec(name) is not None


class _External(Strategy):
    """Shared plumbing: the cube-to-space map, the sign flip, seeds and the start."""

    package = None
    default_restarts = 1

    def _seed(self, rng, objective, offset=0):
        """The seed the package is given (drawn from the restart's generator, plus
        ``offset``), noted on the objective so that a bench records it."""
        seed = int(rng.integers(0, 2 ** 31 - 1)) + offset
        objective.package_seed = seed
        return seed

    to_points = staticmethod(cube_to_space)

    def loss(self, objective, z):
        """Minus the metric at one cube point (the only sign flip)."""
        return float(self.losses(objective, np.asarray(z, dtype=np.float64)[None, :])[0])

    def losses(self, objective, Z):
        """Minus the metric at rows of cube points, as one batch (the cube rows go along:
        a bench records the cube point of a run's best evaluation)."""
        Z = np.clip(np.atleast_2d(np.asarray(Z, dtype=np.float64)), 0.0, 1.0)
        return -objective.batch(self.to_points(objective.space, Z), cube=Z)

    @staticmethod
    def start(objective, rng, restart):
        """The objective's initial point or else the cube's center first (the simplex's
        center, the box's middle), then random."""
        d = objective.space.dim
        if restart:
            return rng.random(d)
        z = start_in_cube(objective)
        return np.full(d, 0.5) if z is None else z

    @staticmethod
    def eval_cap(objective, default=_MAX_EVALS_DEFAULT):
        """The optimizer's own evaluation limit: the objective's budget if any."""
        return int(objective.max_evals) if objective.max_evals is not None else default

    def check(self, objective):
        super().check(objective)
        if not _installed(self.package):
            raise ImportError(f"{self.label} needs the {self.package!r} package: "
                              f"pip install \"dfrank[compare]\"")


class ScipyLocal(_External):
    """scipy's local derivative-free methods (``scipy:nelder-mead``, ``scipy:powell``) in
    the unit cube (bounded), started from the cube's center.

    Parameters: method ("Nelder-Mead" or "Powell"), restarts (1), xtol (1e-4, in cube
    units), ftol (1e-7): scipy's xatol/fatol for Nelder-Mead, xtol/ftol for Powell.
    """

    package = "scipy"
    _TOL_NAMES = {"Nelder-Mead": ("xatol", "fatol"), "Powell": ("xtol", "ftol")}

    hyperparameters = {"method": Choice("Nelder-Mead", "Powell"),
                       "xtol": Real(0.0, low_open=True), "ftol": Real(0.0, low_open=True)}

    def __init__(self, *, method="Nelder-Mead", restarts=1, xtol=1e-4, ftol=1e-7):
        self.method = method
        self.restarts = restarts
        self.xtol = xtol
        self.ftol = ftol

    @property
    def label(self):
        return f"scipy:{self.method.lower()}"

    def run(self, objective, rng, *, restart=0):
        from scipy.optimize import minimize

        self.check(objective)
        d = objective.space.dim
        xname, fname = self._TOL_NAMES[self.method]
        res = minimize(lambda z: self.loss(objective, z), self.start(objective, rng, restart),
                       method=self.method, bounds=[(0.0, 1.0)] * d,
                       options={"maxfev": self.eval_cap(objective, 200 * d),
                                xname: self.xtol, fname: self.ftol})
        return {"iterations": int(res.nit), "converged": bool(res.success)}


class ScipyDifferentialEvolution(_External):
    """scipy's differential evolution in the unit cube, each generation one batch.

    Parameters: restarts (1), popsize (15, times the dimension), mutation ((0.5, 1)),
    recombination (0.7), tol (1e-6), maxiter (1000).
    """

    package = "scipy"

    hyperparameters = {"popsize": Int(1), "mutation": Span(0.0, 2.0),
                       "recombination": Real(0.0, 1.0), "tol": Real(0.0),
                       "maxiter": Int(1)}

    def __init__(self, *, restarts=1, popsize=15, mutation=(0.5, 1.0), recombination=0.7,
                 tol=1e-6, maxiter=1000):
        self.restarts = restarts
        self.popsize = popsize
        self.mutation = mutation
        self.recombination = recombination
        self.tol = tol
        self.maxiter = maxiter

    def run(self, objective, rng, *, restart=0):
        from scipy.optimize import differential_evolution

        self.check(objective)
        d = objective.space.dim
        res = differential_evolution(
            lambda Z: self.losses(objective, np.asarray(Z).T), [(0.0, 1.0)] * d,
            vectorized=True, updating="deferred", popsize=self.popsize,
            mutation=self.mutation, recombination=self.recombination, tol=self.tol,
            maxiter=self.maxiter, polish=False, rng=self._seed(rng, objective))
        return {"iterations": int(res.nit), "converged": bool(res.success)}


def _at_least_2d(z0):
    """pycma's start in two dimensions at least: pycma refuses one ("not yet initialized
    (dimension needed)"), so a one-dimensional problem gets a second coordinate that the
    objective never reads (only the first column of each point is evaluated)."""
    z0 = np.asarray(z0, dtype=np.float64)
    return np.append(z0, 0.5) if len(z0) == 1 else z0


class CMAES(_External):
    """pycma's CMA-ES in the unit cube (bounded), each generation one batch.

    Parameters: restarts (1), sigma0 (0.25, in cube units), popsize (None: pycma's
    4 + 3 ln D), tolfun (1e-9).
    """

    package = "cma"

    hyperparameters = {"sigma0": Real(0.0, low_open=True), "popsize": Int(2, none=True),
                       "tolfun": Real(0.0)}

    def __init__(self, *, restarts=1, sigma0=0.25, popsize=None, tolfun=1e-9):
        self.restarts = restarts
        self.sigma0 = sigma0
        self.popsize = popsize
        self.tolfun = tolfun

    def run(self, objective, rng, *, restart=0):
        import cma

        self.check(objective)
        opts = {"bounds": [0.0, 1.0], "seed": self._seed(rng, objective, 1), "verbose": -9,
                "maxfevals": self.eval_cap(objective, 10 ** 9), "tolfun": self.tolfun}
        if self.popsize is not None:
            opts["popsize"] = self.popsize
        z0 = self.start(objective, rng, restart)
        es = cma.CMAEvolutionStrategy(_at_least_2d(z0), self.sigma0, opts)
        self.loss(objective, z0)   # the start first: a run out of time still returns it
        d = objective.space.dim
        while not es.stop():
            Z = np.array(es.ask())
            es.tell(list(Z), list(self.losses(objective, Z[:, :d])))
        return {"iterations": int(es.countiter), "converged": True}


class CMAIPOP(_External):
    """pycma's IPOP-CMA-ES as its ``fmin2`` runs it (``cma:ipop``): after each run that
    stops, another from the start with twice the population, until the budget is spent
    (or ``max_restarts`` more runs); each generation one batch.

    Parameters: restarts (1, dfrank's independent runs), sigma0 (0.25, in cube units),
    max_restarts (None: 100 with an evaluation budget, pycma's 9 without one).
    """

    package = "cma"

    hyperparameters = {"sigma0": Real(0.0, low_open=True),
                       "max_restarts": Int(0, none=True)}

    def __init__(self, *, restarts=1, sigma0=0.25, max_restarts=None):
        self.restarts = restarts
        self.sigma0 = sigma0
        self.max_restarts = max_restarts

    def run(self, objective, rng, *, restart=0):
        import cma

        self.check(objective)
        more = self.max_restarts
        if more is None:
            more = 100 if objective.max_evals is not None else 9
        z0 = self.start(objective, rng, restart)
        self.loss(objective, z0)   # the start first: a run out of time still returns it
        d = objective.space.dim
        _, es = cma.fmin2(None, _at_least_2d(z0), self.sigma0,
                          {"bounds": [0.0, 1.0], "seed": self._seed(rng, objective, 1),
                           "verbose": -9},
                          restarts=more, incpopsize=2,
                          parallel_objective=lambda Z: list(
                              self.losses(objective, np.asarray(Z)[:, :d])))
        return {"iterations": int(es.countiter), "converged": True}


class Nevergrad(_External):
    """Any nevergrad optimizer (``nevergrad:NAME``) over the unit cube, ask/tell in batches
    of ``num_workers`` candidates.

    Parameters: optimizer ("NGOpt"), restarts (1), num_workers (1), max_evals (used when the
    objective has no budget: nevergrad needs one).
    """

    package = "nevergrad"

    hyperparameters = {"optimizer": Name("an optimizer of nevergrad's registry"),
                       "num_workers": Int(1), "max_evals": Int(1)}

    def __init__(self, *, optimizer="NGOpt", restarts=1, num_workers=1,
                 max_evals=_MAX_EVALS_DEFAULT):
        self.optimizer = optimizer
        self.restarts = restarts
        self.num_workers = num_workers
        self.max_evals = max_evals

    @property
    def label(self):
        return f"nevergrad:{self.optimizer}"

    def check(self, objective):
        super().check(objective)
        import nevergrad as ng

        if self.optimizer not in ng.optimizers.registry:
            import difflib

            close = difflib.get_close_matches(str(self.optimizer),
                                              list(ng.optimizers.registry), n=3)
            raise ValueError(f"nevergrad has no optimizer {self.optimizer!r}"
                             + (f"; did you mean {', '.join(close)}?" if close else ""))

    def run(self, objective, rng, *, restart=0):
        import nevergrad as ng

        self.check(objective)
        tolerate_nevergrad_metamodel()
        d = objective.space.dim
        param = ng.p.Array(init=self.start(objective, rng, restart))
        param.set_mutation(sigma=0.25).set_bounds(0.0, 1.0)
        param.random_state = np.random.RandomState(self._seed(rng, objective))
        budget = self.eval_cap(objective, self.max_evals)
        opt = ng.optimizers.registry[self.optimizer](parametrization=param, budget=budget,
                                                     num_workers=self.num_workers)
        with warnings.catch_warnings():   # nevergrad's inner optimizers' advice to users
            warnings.simplefilter("ignore")
            self._loop(objective, opt, budget, d)
        return {"converged": False}

    def _loop(self, objective, opt, budget, d):
        told = 0
        while told < budget:
            cands = [opt.ask() for _ in range(min(self.num_workers, budget - told))]
            losses = self.losses(objective, np.array([c.value for c in cands]).reshape(-1, d))
            for c, v in zip(cands, losses):
                opt.tell(c, float(v))
            told += len(cands)


def tolerate_nevergrad_metamodel():
    """nevergrad 1.0.12's meta-model step (used by NGOpt and others in few dimensions)
    calls ``float()`` on a one-element array, a TypeError under numpy >= 2.4. nevergrad
    already treats a failing meta-model as "no proposal" (``MetaModelFailure``) and falls
    back to its base optimizer; this shim turns that TypeError into the same failure.
    Installed once, on nevergrad's module, only when a nevergrad strategy runs."""
    from nevergrad.optimization import metamodel, optimizerlib

    inner = optimizerlib.learn_on_k_best
    if getattr(inner, "_dfrank_tolerant", False):
        return

    def learn_on_k_best(*args, **kwargs):
        try:
            return inner(*args, **kwargs)
        except TypeError as e:
            raise metamodel.MetaModelFailure(f"meta-model failed: {e}") from None

    learn_on_k_best._dfrank_tolerant = True
    optimizerlib.learn_on_k_best = learn_on_k_best


class Optuna(_External):
    """optuna's samplers (``optuna:tpe``, ``optuna:cmaes``): one trial per evaluation, each
    of the D cube coordinates a float in [0, 1].

    Parameters: sampler ("tpe" or "cmaes"), restarts (1), n_trials (used when the objective
    has no budget).
    """

    package = "optuna"

    hyperparameters = {"sampler": Choice("tpe", "cmaes"), "n_trials": Int(1)}

    def __init__(self, *, sampler="tpe", restarts=1, n_trials=200):
        self.sampler = sampler
        self.restarts = restarts
        self.n_trials = n_trials

    @property
    def label(self):
        return f"optuna:{self.sampler}"

    def run(self, objective, rng, *, restart=0):
        import optuna

        self.check(objective)
        d = objective.space.dim
        seed = self._seed(rng, objective)
        x0 = self.start(objective, rng, restart)
        if self.sampler == "tpe":
            sampler = optuna.samplers.TPESampler(seed=seed)
        else:   # its mean starts at the cube's center; the start below is its first trial
            sampler = optuna.samplers.CmaEsSampler(seed=seed)

        def trial_loss(trial):
            z = np.array([trial.suggest_float(f"z{i}", 0.0, 1.0) for i in range(d)])
            return self.loss(objective, z)

        # optuna logs the study and every trial at INFO and the trial the budget ends
        # (BudgetExhausted goes through) at WARNING: dfrank's bookkeeping, not the user's
        verbosity = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        try:
            study = optuna.create_study(direction="minimize", sampler=sampler)
            study.enqueue_trial({f"z{i}": float(v) for i, v in enumerate(x0)})
            study.optimize(trial_loss, n_trials=self.eval_cap(objective, self.n_trials))
        finally:
            optuna.logging.set_verbosity(verbosity)
        return {"converged": False}


def _register_all():
    if _installed("scipy"):
        register_strategy("scipy:nelder-mead")(ScipyLocal(method="Nelder-Mead"))
        register_strategy("scipy:powell")(ScipyLocal(method="Powell"))
        register_strategy("scipy:differential_evolution")(ScipyDifferentialEvolution)
    if _installed("cma"):
        register_strategy("cma:es")(CMAES)
        register_strategy("cma:ipop")(CMAIPOP)
    if _installed("nevergrad"):
        register_strategy("nevergrad:NGOpt")(Nevergrad(optimizer="NGOpt"))
        register_family("nevergrad")(lambda name: Nevergrad(optimizer=name))
    if _installed("optuna"):
        register_strategy("optuna:tpe")(Optuna(sampler="tpe"))
        if _installed("cmaes"):   # optuna's CMA-ES sampler runs on the cmaes package
            register_strategy("optuna:cmaes")(Optuna(sampler="cmaes"))


_register_all()
