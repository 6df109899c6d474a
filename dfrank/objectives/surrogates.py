"""Smoothed rank metrics of a linear ranker: differentiable stand-ins for NDCG and AP.

The baselines of the direct-optimization literature that dfrank compares itself with:

* ``approx_ndcg`` / ``approx_ap`` — Qin, Liu & Li, *A general approximation framework for
  direct optimization of information retrieval measures*, Inf. Retrieval 13 (2010): logistic
  approximation of positions (sharpness ``alpha``) and of the truncation / precedence
  indicators (``beta``);
* ``smooth_ndcg`` / ``smooth_ap`` — Chapelle & Wu, *Gradient descent optimization of smoothed
  information retrieval metrics*, Inf. Retrieval 13 (2010): soft rank indicators of width
  ``sigma``.

:class:`SmoothedMetric` binds one to a dataset and returns the mean over queries and its
gradient with respect to the weights of ``scores = X w`` (the kernels are in
:mod:`dfrank.metrics._smoothed`). The strategies that climb them are in
``dfrank.strategies.smoothed``.
"""

import numpy as np

from .._kernels.scoring import features_T, linear_scores
from ..data.ranking import RankingData
from ..metrics import _smoothed
from ..metrics.evaluation import bind_metric

__all__ = ["SmoothedMetric", "KINDS", "feature_scale", "ridge_start", "mean_direction",
           "versions"]

KINDS = {"approx_ndcg": _smoothed.APPROX_NDCG, "approx_ap": _smoothed.APPROX_AP,
         "smooth_ndcg": _smoothed.SMOOTH_NDCG, "smooth_ap": _smoothed.SMOOTH_AP}


class SmoothedMetric:
    """A smoothed metric bound to ``data``.

    Parameters
    ----------
    data : RankingData
    kind : {"approx_ndcg", "approx_ap", "smooth_ndcg", "smooth_ap"}
    k : int or None
        Cutoff of the NDCG kinds (None: the whole list).
    gain : {"exp", "linear"}
        NDCG gain, 2^l - 1 or l.
    rel_threshold : float
        AP counts a document relevant when its label is >= this.
    alpha, beta : float
        Approx: sharpness of the position and of the truncation/precedence sigmoids.
    sigma : float
        Smooth: width of the soft rank indicators (may be changed between calls; the
        strategies anneal it).

    ``value(w)`` is the mean over the queries that have something relevant (the others are
    constant under any w).
    """

    def __init__(self, data, kind, *, k=None, gain="exp", rel_threshold=1.0, alpha=10.0,
                 beta=10.0, sigma=1.0):
        if not isinstance(data, RankingData):
            raise TypeError(f"data must be a RankingData, got {type(data).__name__}")
        if kind not in KINDS:
            raise ValueError(f"unknown smoothed metric {kind!r}; known: {sorted(KINDS)}")
        if k is not None and (isinstance(k, bool) or int(k) != k or k < 1):
            raise ValueError(f"k must be a positive integer or None, got {k!r}")
        for name, v in (("alpha", alpha), ("beta", beta), ("sigma", sigma)):
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        self.data = data
        self.kind = kind
        self.code = KINDS[kind]
        self.k = None if k is None else int(k)
        self.alpha, self.beta, self.sigma = float(alpha), float(beta), float(sigma)
        if kind.endswith("ndcg"):
            name = "ndcg" if self.k is None else f"ndcg@{self.k}"
            self.bound = bind_metric(data, name, gain=gain)
            self.labels = self.bound.gains
        else:
            self.bound = bind_metric(data, "map", rel_threshold=rel_threshold)
            self.labels = (data.y >= rel_threshold).astype(np.float64)
        self.XT = features_T(data)
        self.n_live = int((~self.bound.empty).sum())

    def __repr__(self):
        p = (f"alpha={self.alpha}, beta={self.beta}" if self.kind.startswith("approx")
             else f"sigma={self.sigma}")
        return f"SmoothedMetric({self.kind!r}, k={self.k}, {p})"

    def scores(self, w):
        return linear_scores(self.XT, np.asarray(w, dtype=np.float64))

    def per_query_and_grad_scores(self, s):
        """Per-query values and the gradient of their sum with respect to the scores."""
        s = np.ascontiguousarray(s, dtype=np.float64)
        b = self.bound
        values = np.empty(b.n_queries)
        grad = np.empty(len(s))
        _smoothed.value_and_grad(self.code, s, self.labels, b.qptr, b.query_order(), b.c0,
                                 b.empty, self.alpha, self.beta, self.sigma,
                                 0 if self.k is None else self.k, b.disc, values, grad)
        return values, grad

    def value_and_grad(self, w):
        """The mean smoothed metric at weights ``w`` and its gradient (d,)."""
        values, gs = self.per_query_and_grad_scores(self.scores(w))
        n = max(self.n_live, 1)
        gw = np.empty(self.XT.shape[0])
        _smoothed.features_dot(self.XT, gs, gw)
        return float(values.sum()) / n, gw / n

    def value(self, w):
        return self.value_and_grad(w)[0]


def versions(which="gradient"):
    """The compiled versions (numba kernels and argument types) of this module's kernels
    that a strategy calls: ``"ridge"``, the ridge start's; ``"gradient"``, a smoothed
    metric's value and gradient too. What a command loads before the run."""
    ridge = (_smoothed.features_dot, _smoothed.weighted_gram)
    return [(ex.kernel, ex.types) for ex in _smoothed.EXAMPLES
            if which == "gradient" or ex.kernel in ridge]


def feature_scale(data):
    """Standard deviation of every feature (1 for constant ones): the strategies climb in
    standardized coordinates v = w * scale, where one step size fits every feature."""
    sc = data.derived.feature_scale
    if sc is None:
        XT = features_T(data)
        sc = np.array([float(np.std(row, dtype=np.float64)) for row in XT])
        sc[~(sc > 0)] = 1.0
        data.derived.feature_scale = sc
    return sc


def mean_direction(weights, scale):
    """Weights whose direction is the mean of the unit standardized ``weights``
    (u = w * scale / ||w * scale||): one linear ranker averaging several, each counted
    once whatever its norm. None when the mean is zero."""
    units = [w * scale / np.linalg.norm(w * scale) for w in weights]
    mean = np.mean(units, axis=0)
    if not np.any(mean != 0):
        return None
    return mean / scale


def ridge_start(data, ridge=1e-3):
    """Relevance-balanced ridge regression of labels on standardized features (Chapelle &
    Wu's w0): every label value carries the same total weight, so the rare relevant grades
    are not drowned by the non-relevant documents. Returns v0 in standardized coordinates
    (weights ``v0 / feature_scale(data)``); ``ridge`` is relative to the mean feature
    variance under those weights."""
    v0 = data.derived.ridge_starts.get(float(ridge))
    if v0 is not None:
        return v0.copy()
    XT = features_T(data)
    y = data.y
    values, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    omega = 1.0 / (len(values) * counts[inverse.ravel()])
    mean = np.array([float(np.dot(row, omega)) for row in XT])
    ybar = float(np.dot(omega, y))
    d = XT.shape[0]
    gram = np.empty((d, d))
    _smoothed.weighted_gram(XT, mean, omega, gram)
    rhs = np.empty(d)
    _smoothed.features_dot(XT, omega * (y - ybar), rhs)
    scale = feature_scale(data)
    gram = gram / np.outer(scale, scale)
    rhs = rhs / scale
    mu = ridge * max(float(np.trace(gram)) / d, 1e-12)
    v0 = np.linalg.solve(gram + mu * np.eye(d), rhs)
    if not np.any(v0):
        v0 = np.ones(d)
    data.derived.ridge_starts[float(ridge)] = v0
    return v0.copy()
