"""The smoothed-metric baselines: ApproxNDCG/ApproxAP (Qin, Liu & Li 2010) and
SmoothNDCG/SmoothAP (Chapelle & Wu 2010), climbing a differentiable stand-in of the metric
with analytic gradients (:class:`dfrank.objectives.surrogates.SmoothedMetric`).

They search unconstrained weights, in standardized coordinates v (w = v / feature_scale).
Each accepted iterate is mapped onto the simplex (``Simplex.from_weights``) and evaluated
with the objective's **true** metric, so budgets, traces and ``Result.point``/``value`` mean
the same as for every other strategy: the result is the visited point of best true metric.
The surrogate's own value is reported in the restart's ``info``.
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy
from dfrank.objectives.surrogates import SmoothedMetric, feature_scale, ridge_start

from dfrank.hyperparams import Int, Real, check_float


class _Smoothed(Strategy):
    """Shared plumbing: binding the surrogate to the objective's data and metric."""

    reads_features = True
    smoothed_kernels = "gradient"
    kind = None
    needs_linear_objective = True
    linear_reason = "to differentiate its scores"
    supports_box = False
    hyperparameters = {"k": Int(1, none=True, words=("auto",)),
                       "ridge": Real(0.0, low_open=True)}

    def _surrogate(self, objective):
        m = objective.metric
        k = self.k
        if k == "auto":
            k = m.k if (self.kind.endswith("ndcg") and m.family == "ndcg" and m.k > 0) else None
        gain = m.gain if m.family == "ndcg" else "exp"
        thr = m.rel_threshold if m.binary else 1.0
        return SmoothedMetric(objective.data, self.kind, k=k, gain=gain, rel_threshold=thr,
                              **self._smoothing())

    @staticmethod
    def _evaluate(objective, v, scale):
        """The true metric of weights v / scale (counted; keeps the best point)."""
        return objective(objective.space.from_weights(v / scale))

    @staticmethod
    def _random_start(rng, v0):
        v = rng.standard_normal(len(v0))
        return v * (np.linalg.norm(v0) / np.linalg.norm(v))


class _Approx(_Smoothed):
    """Projected gradient ascent of an Approx surrogate on the unit sphere.

    The surrogate grows sharper as ||w|| grows, so the search keeps ||v|| = 1 (standardized
    coordinates) and ``alpha`` keeps one meaning: the logistic slope per unit of score.
    Full-batch steps along the tangent gradient with backtracking: a step that does not
    raise the surrogate is halved, an accepted one doubled (at most ``max_step`` radians).
    Restart 0 starts from the relevance-balanced ridge solution, the others from random
    directions.

    Parameters
    ----------
    restarts : int, default 3
    alpha : float, default 10
        Slope of the position sigmoid (Qin et al.'s alpha).
    beta : float, default 10
        Slope of the truncation (NDCG@k) / precedence (AP) sigmoid.
    k : "auto", int or None
        NDCG cutoff of the surrogate; "auto" takes the objective's (ndcg@k) or none.
    learning_rate : float, default 0.1
        First step, in radians on the sphere.
    max_iter : int, default 200
    tol : float, default 1e-5
        Stop when an accepted step raises the surrogate by less than this (delta).
    ridge : float
        Regularization of the ridge start.
    """

    default_restarts = 3

    hyperparameters = {"alpha": Real(0.0, low_open=True), "beta": Real(0.0, low_open=True),
                       "learning_rate": Real(0.0, low_open=True),
                       "max_step": Real(0.0, float(np.pi), low_open=True),
                       "max_iter": Int(1), "tol": Real(0.0)}

    def __init__(self, *, restarts=3, alpha=10.0, beta=10.0, k="auto", learning_rate=0.1,
                 max_iter=200, tol=1e-5, ridge=1e-3, max_step=1.0):
        self.restarts = restarts
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge
        self.max_step = max_step

    def _smoothing(self):
        return {"alpha": self.alpha, "beta": self.beta}

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        sm = self._surrogate(objective)
        scale = feature_scale(objective.data)
        v0 = ridge_start(objective.data, self.ridge)
        v = v0 if restart == 0 else self._random_start(rng, v0)
        v = v / np.linalg.norm(v)

        def f(v):
            val, gw = sm.value_and_grad(v / scale)
            return val, gw / scale

        val, g = f(v)
        self._evaluate(objective, v, scale)
        step = min(self.learning_rate, self.max_step)
        converged = False
        it = 0
        for it in range(1, self.max_iter + 1):
            gt = g - np.dot(g, v) * v          # tangent to the sphere at v
            gn = np.linalg.norm(gt)
            if not gn > 0:
                converged = True
                break
            while step > 1e-12:
                cand = v + step * gt / gn
                cand /= np.linalg.norm(cand)
                cval, cg = f(cand)
                if cval > val:
                    break
                step /= 2
            else:
                converged = True                # no step raises the surrogate
                break
            gain = cval - val
            v, val, g = cand, cval, cg
            step = min(2 * step, self.max_step)
            self._evaluate(objective, v, scale)
            if gain < self.tol:
                converged = True
                break
        return {"iterations": it, "surrogate": val, "converged": converged}


@register_strategy("approx_ndcg")
class ApproxNDCG(_Approx):
    __doc__ = "ApproxNDCG (Qin, Liu & Li 2010). " + _Approx.__doc__
    kind = "approx_ndcg"


@register_strategy("approx_ap")
class ApproxAP(_Approx):
    __doc__ = "ApproxAP (Qin, Liu & Li 2010). " + _Approx.__doc__
    kind = "approx_ap"


class _Smooth(_Smoothed):
    """Chapelle & Wu's annealed minimization of lam ||v - v0||^2 - mean_q A_q(v, sigma).

    v0 is the relevance-balanced ridge regression (standardized coordinates), which also
    puts the scores on the scale of the labels, where the sigma schedule means something.
    sigma runs from ``sigma_start`` down to ``sigma_end``, halving; at each sigma, L-BFGS
    (scipy) minimizes from the previous solution. Restart 0 starts at v0, the others at a
    random point of the same norm (the anchor stays v0).

    Parameters
    ----------
    restarts : int, default 1
    lam : float, default 1e-3
        Weight of the pull towards v0 (the paper's lambda, for the mean over queries).
    sigma_start, sigma_end : float, default 2^6, 2^-6
    k : "auto", int or None
        NDCG cutoff of the surrogate; "auto" takes the objective's (ndcg@k) or none.
    max_iter : int, default 50
        L-BFGS iterations per sigma.
    ridge : float
        Regularization of the ridge start.
    """

    default_restarts = 1

    hyperparameters = {"lam": Real(0.0), "sigma_start": Real(0.0, low_open=True),
                       "sigma_end": Real(0.0, low_open=True), "max_iter": Int(1)}

    def __init__(self, *, restarts=1, lam=1e-3, sigma_start=64.0, sigma_end=1.0 / 64,
                 k="auto", max_iter=50, ridge=1e-3):
        self.restarts = restarts
        self.lam = lam
        self.sigma_start = sigma_start
        self.sigma_end = sigma_end
        self.k = k
        self.max_iter = max_iter
        self.ridge = ridge

    def _smoothing(self):
        return {"sigma": self.sigma_start}

    def check(self, objective):
        super().check(objective)
        check_float(self.label, "sigma_end", self.sigma_end, 0.0, self.sigma_start,
                    low_open=True)

    def sigmas(self):
        """The annealing schedule: sigma_start, sigma_start / 2, ... down to sigma_end."""
        n = int(np.floor(np.log2(self.sigma_start / self.sigma_end) + 1e-9)) + 1
        return self.sigma_start * 0.5 ** np.arange(n)

    def run(self, objective, rng, *, restart=0):
        from scipy.optimize import minimize

        self.check(objective)
        sm = self._surrogate(objective)
        scale = feature_scale(objective.data)
        v0 = ridge_start(objective.data, self.ridge)
        v = v0.copy() if restart == 0 else self._random_start(rng, v0)
        lam = self.lam

        def fun(v):
            val, gw = sm.value_and_grad(v / scale)
            diff = v - v0
            return lam * float(diff @ diff) - val, 2 * lam * diff - gw / scale

        def each_iteration(xk):
            self._evaluate(objective, xk, scale)

        self._evaluate(objective, v, scale)
        stages = []
        for sigma in self.sigmas():
            sm.sigma = float(sigma)
            res = minimize(fun, v, jac=True, method="L-BFGS-B", callback=each_iteration,
                           options={"maxiter": self.max_iter})
            v = res.x
            stages.append({"sigma": float(sigma), "iterations": int(res.nit),
                           "objective": float(res.fun)})
        return {"surrogate": sm.value(v / scale), "stages": stages, "converged": True}


@register_strategy("smooth_ndcg")
class SmoothNDCG(_Smooth):
    __doc__ = "SmoothNDCG (Chapelle & Wu 2010). " + _Smooth.__doc__
    kind = "smooth_ndcg"


@register_strategy("smooth_ap")
class SmoothAP(_Smooth):
    __doc__ = "SmoothAP (Chapelle & Wu 2010). " + _Smooth.__doc__
    kind = "smooth_ap"
