"""CMA-ES with increasing populations (IPOP), written for dfrank's batched objective.

The covariance matrix adaptation evolution strategy samples lambda points around a mean
m from N(m, sigma^2 C), moves m toward the best half (weighted recombination), and adapts
C (rank-one update along the evolution path p_c, rank-mu update from the selected steps)
and sigma (cumulative step-size adaptation along p_sigma); the formulas and default
constants are those of Hansen, "The CMA Evolution Strategy: A Tutorial" (2016), Table 1
and Eqs. 39-47. When the best value of a generation has not changed for
``10 + 30 n / lambda`` generations (a metric of rankings is piecewise constant, so a
converged search stalls exactly), the search restarts with twice the population (Auger and
Hansen 2005, IPOP), keeping the best point found.

A linear ranker is searched in standardized weight space v (w = v / feature_scale),
which the rankings see only through its direction, starting from the relevance-balanced
ridge regression (the smoothed baselines' start) and from random directions at the
restarts; each generation is one batch of the objective (one matrix product). A box is
searched in its unit cube (clipped), any other simplex objective through z / sum(z).
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy
from dfrank.objectives.surrogates import feature_scale, mean_direction, ridge_start
from dfrank.spaces import Simplex

from dfrank.hyperparams import Choice, Int, Real

from ._common import cube_to_space


class _Codec:
    """Search coordinates -> points of the objective's space, and the start."""

    def __init__(self, objective, start):
        self.space = objective.space
        data = getattr(objective, "data", None)
        self.linear = isinstance(self.space, Simplex) and getattr(objective, "is_linear",
                                                                  False)
        if self.linear:
            self.scale = feature_scale(data)
            self.n = data.n_features
            if start == "ridge":
                v = ridge_start(data)
                self.m0 = v / max(np.linalg.norm(v), 1e-300)
            else:
                self.m0 = np.full(self.n, 1.0 / np.sqrt(self.n))
            self.sigma0 = 0.3
        else:
            self.n = self.space.dim
            self.m0 = np.full(self.n, 0.5)
            self.sigma0 = 0.3
        start = getattr(objective, "initial_point", None)
        if start is not None:   # the objective's initial point, in search coordinates
            self.m0 = (self.space.to_weights(start) * self.scale if self.linear
                       else self.space.to_unit(start))

    def points(self, X):
        if not self.linear:
            return cube_to_space(self.space, X)
        W = X / self.scale
        zero = ~np.any(W != 0, axis=1)
        W[zero, 0] = 1.0            # all-zero weights rank nothing: any other point
        return self.space.from_weights(W)

    def random_mean(self, rng):
        if self.linear:
            v = rng.standard_normal(self.n)
            return v / np.linalg.norm(v)
        return rng.random(self.n)


@register_strategy("ipop_cmaes", aliases=("cmaes", "es"))
class IPOPCMAES(Strategy):
    """CMA-ES with restarts of increasing population, on batched evaluations.

    Parameters
    ----------
    popsize : int or None
        The first population lambda (default 4 + floor(3 ln n)); each restart doubles it.
    sigma0 : float or None
        The first step size (default 0.3: in standardized weights of unit norm, or the unit
        cube).
    start : {"ridge", "uniform"}
        The first mean of a linear ranker: the ridge regression's direction, or equal
        standardized weights (the objective's ``initial_point`` instead, where it has one).
    stall : int or None
        Generations without a change of the generation's best value before a restart
        (default 10 + 30 n / lambda).
    max_restarts : int, default 9
        IPOP restarts within one run (each doubles the population).
    evals : int or None, default 4000
        Evaluations of one run (a generation that crosses it is its last); None: until
        the IPOP restarts are spent or a budget given to ``maximize`` stops it.
    restarts : int, default 10
        Independent runs (the budget is split evenly); the first starts from the ridge
        direction, the others from random directions. With ``valid=`` the run with the
        best validation value is kept.
    smoothing : int, default 0
        K > 0 climbs the metric smoothed by K Gaussian perturbations: a candidate's value
        is the mean of the metric at x + s ||x|| e_k, k = 1..K (one draw of the e_k per
        generation, shared by its candidates; s = ``smoothing_scale``, absolute in the
        unit cube of a box). A run returns its best smoothed centre
        (:meth:`~dfrank.objectives.objective.Objective.settle`), which sits inside a wide region of
        high values rather than on a narrow peak. Every perturbed point counts as one
        evaluation. A budget that ends a run mid-way keeps its best evaluated point.
    smoothing_scale : float, default 0.05
        s above: the perturbations' size relative to the norm of the standardized weights.
    ensemble : {"best", "average"}
        "average" (linear rankers only) returns one ranker whose direction is the mean of
        the runs' unit standardized weights, whatever ``valid=``; its values are computed
        once at the end (not counted in the budget). "best" keeps the best run.
    """

    reads_features = True   # its coordinates are scaled by each feature's deviation
    smoothed_kernels = "ridge"  # its start: the ridge regression of dfrank.objectives.surrogates

    default_restarts = 10

    hyperparameters = {"popsize": Int(4, none=True),
                       "sigma0": Real(0.0, low_open=True, none=True),
                       "start": Choice("ridge", "uniform"), "stall": Int(1, none=True),
                       "max_restarts": Int(0), "evals": Int(1, none=True),
                       "smoothing": Int(0), "smoothing_scale": Real(0.0, low_open=True),
                       "ensemble": Choice("best", "average")}

    def __init__(self, *, popsize=None, sigma0=None, start="ridge", stall=None,
                 max_restarts=9, evals=4000, restarts=10, smoothing=0,
                 smoothing_scale=0.05, ensemble="best"):
        self.popsize = popsize
        self.sigma0 = sigma0
        self.start = start
        self.stall = stall
        self.max_restarts = max_restarts
        self.evals = evals
        self.restarts = restarts
        self.smoothing = smoothing
        self.smoothing_scale = smoothing_scale
        self.ensemble = ensemble

    def check(self, objective):
        super().check(objective)
        name = self.label
        if self.ensemble == "average" and not getattr(objective, "is_linear", False):
            raise TypeError(f"{name}: ensemble='average' averages linear rankers; got "
                            f"{type(objective).__name__} over {objective.space!r}")

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        codec = _Codec(objective, self.start)
        n = codec.n
        lam = self.popsize or 4 + int(3 * np.log(n))
        m = codec.m0 if restart == 0 else codec.random_mean(rng)
        sigma0 = self.sigma0 or codec.sigma0
        end = np.inf if self.evals is None else objective.n_evals + self.evals
        generations, runs = 0, 0
        centre = [-np.inf, None]    # the best smoothed value and its search coordinates
        while True:
            g = self._one_run(objective, codec, rng, m, sigma0, lam, end, centre)
            generations += g
            runs += 1
            if runs > self.max_restarts or objective.n_evals >= end:
                break
            lam *= 2
            m = codec.random_mean(rng)
        info = {"generations": generations, "ipop_runs": runs, "last_popsize": lam}
        if centre[1] is not None:
            objective.settle(codec.points(centre[1][None, :])[0])
            info["smoothed_value"] = centre[0]
        return info

    def combine(self, objective, points):
        """With ``ensemble="average"``: the mean direction of the runs' unit standardized
        weights, as a point of the simplex."""
        if self.ensemble != "average" or not points:
            return None
        space = objective.space
        w = mean_direction([space.to_weights(p) for p in points],
                           feature_scale(objective.data))
        return None if w is None else space.from_weights(w)

    def _values(self, objective, codec, rng, X, centre):
        """The generation's values at the rows of X: the metric, or with ``smoothing``
        its mean over K shared perturbations (``centre`` keeps the best)."""
        if not self.smoothing:
            return objective.batch(codec.points(X))
        lam, n = X.shape
        E = rng.standard_normal((self.smoothing, n))
        size = self.smoothing_scale * (np.linalg.norm(X, axis=1) if codec.linear
                                       else np.ones(lam))
        P = (X[:, None, :] + size[:, None, None] * E[None, :, :]).reshape(-1, n)
        f = objective.batch(codec.points(P)).reshape(lam, self.smoothing).mean(axis=1)
        i = int(np.argmax(f))
        if f[i] > centre[0]:
            centre[0], centre[1] = float(f[i]), X[i].copy()
        return f

    def _one_run(self, objective, codec, rng, m, sigma, lam, end, centre):
        """One CMA-ES run until its best value stalls or the objective has counted ``end``
        evaluations; returns its generations."""
        n = len(m)
        mu = lam // 2
        w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        w /= w.sum()
        mueff = 1.0 / np.sum(w ** 2)
        cs = (mueff + 2) / (n + mueff + 5)
        ds = 1 + 2 * max(0.0, np.sqrt((mueff - 1) / (n + 1)) - 1) + cs
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        c1 = 2 / ((n + 1.3) ** 2 + mueff)
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
        chi = np.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
        stall = self.stall or int(10 + 30 * n / lam)
        m = np.array(m, dtype=np.float64)
        C, B, D = np.eye(n), np.eye(n), np.ones(n)
        ps, pc = np.zeros(n), np.zeros(n)
        bests = []
        g = 0
        while True:
            Y = (rng.standard_normal((lam, n)) * D) @ B.T      # y ~ N(0, C)
            f = self._values(objective, codec, rng, m + sigma * Y, centre)
            order = np.argsort(-f, kind="stable")
            Ysel = Y[order[:mu]]
            yw = w @ Ysel
            m = m + sigma * yw
            ps = (1 - cs) * ps + np.sqrt(cs * (2 - cs) * mueff) * (B @ ((B.T @ yw) / D))
            hs = np.linalg.norm(ps) / np.sqrt(1 - (1 - cs) ** (2 * (g + 1))) < \
                (1.4 + 2 / (n + 1)) * chi
            pc = (1 - cc) * pc + hs * np.sqrt(cc * (2 - cc) * mueff) * yw
            C = (1 - c1 - cmu) * C + c1 * (np.outer(pc, pc) + (1 - hs) * cc * (2 - cc) * C) \
                + cmu * (Ysel.T * w) @ Ysel
            sigma *= np.exp((cs / ds) * (np.linalg.norm(ps) / chi - 1))
            d2, B = np.linalg.eigh((C + C.T) / 2)
            D = np.sqrt(np.maximum(d2, 1e-300))
            g += 1
            bests.append(float(f[order[0]]))
            if len(bests) > stall and bests[-1] == min(bests[-stall:]) == max(bests[-stall:]):
                return g
            if not np.isfinite(sigma) or sigma * D.max() < 1e-12 or objective.n_evals >= end:
                return g


@register_strategy("smoothed_es", aliases=("ses",))
class SmoothedES(IPOPCMAES):
    """The default for linear rankers below 1,000 training queries (``auto``, see
    strategies/auto.py): :class:`IPOPCMAES` on the metric smoothed by 4 perturbations
    (``smoothing=4``), 5 runs of 5,000 evaluations, whose unit standardized weights are
    averaged into one linear ranker (``ensemble="average"``).

    A direct maximizer of a piecewise-constant metric on a few dozen queries overfits: its
    runs differ more on unseen queries than validation queries can tell apart. Smoothing
    moves each run into a wide region of high values, and averaging the runs cancels
    their differences. Chosen on validation queries only, by training time and quality
    (``benchmarks/choose_fit_default.py``, docs/decisions.md; until then its budget was 8
    perturbations and 10 runs of 16,000). The options are those of :class:`IPOPCMAES`.
    """

    name = "smoothed_es"     # its own, not the inherited one
    supports_box = False

    def __init__(self, *, popsize=None, sigma0=None, start="ridge", stall=None,
                 max_restarts=9, evals=5000, restarts=5, smoothing=4,
                 smoothing_scale=0.05, ensemble="average"):
        super().__init__(popsize=popsize, sigma0=sigma0, start=start, stall=stall,
                         max_restarts=max_restarts, evals=evals, restarts=restarts,
                         smoothing=smoothing, smoothing_scale=smoothing_scale,
                         ensemble=ensemble)
