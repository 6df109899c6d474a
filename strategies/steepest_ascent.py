"""Steepest ascent with a finite-difference gradient (Metzler, *Direct Maximization of
Rank-based Metrics*, §4.3).

The gradient of the metric is estimated by forward or central differences of width ``h``
(one batch of d + 1 or 2(d + 1) evaluations), projected onto the tangent space of the
simplex (coordinates summing to 0), and followed with the exact line search on a linear
ranker (or a batch of steps otherwise, or inside a box). Rank metrics are piecewise
constant, so the estimated gradient is often exactly zero on a plateau; the run then says
so (``zero_gradient`` in the restart's info) instead of stopping silently.
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Choice, Int, Real

from ._common import is_box, start_point


@register_strategy("steepest_ascent", aliases=("fdsa",))
class SteepestAscent(Strategy):
    """Finite-difference steepest ascent.

    Parameters
    ----------
    restarts : int, default 10
    h : float, default 0.01
        Difference width (simplex units, or unit-cube units in a box).
    scheme : {"forward", "central"}
    max_iter : int, default 100
    tol : float, default 1e-4
        Stop when an iteration improves the metric by less than this.
    rule : {"best", "plateau"}
        Choice rule of the exact line search.
    n_steps : int
        Steps tried along the gradient when no exact line search is available
        (h * 2^i, i < n_steps).
    """

    default_restarts = 10
    makes_line_searches = True
    concurrent_restarts = True

    hyperparameters = {"h": Real(0.0, 1.0, low_open=True),
                       "scheme": Choice("forward", "central"), "max_iter": Int(1),
                       "tol": Real(0.0), "rule": Choice("best", "plateau"),
                       "n_steps": Int(1, 60)}

    def __init__(self, *, restarts=10, h=0.01, scheme="forward", max_iter=100, tol=1e-4,
                 rule="best", n_steps=20):
        self.restarts = restarts
        self.h = h
        self.scheme = scheme
        self.max_iter = max_iter
        self.tol = tol
        self.rule = rule
        self.n_steps = n_steps

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        space = objective.space
        box = is_box(space)
        exact = objective.exact_line
        if exact:
            objective.expect_lines()
        x = start_point(objective, rng, restart)
        u = space.to_unit(x) if box else x
        value = objective(x)
        zero_gradient = False
        gain = np.inf
        it = 0
        for it in range(1, self.max_iter + 1):
            before = value
            g = self._gradient(objective, u, value, box)
            if not np.any(g):
                zero_gradient = True
                break
            direction = g / np.abs(g).max()
            if exact:
                res = objective.line(u, direction, rule=self.rule, floor=value)
                u, value = res.point, res.value
            else:
                u, value = self._steps(objective, u, value, direction, box)
            gain = value - before
            if gain < self.tol:
                break
        return {"iterations": it, "zero_gradient": zero_gradient,
                "converged": bool(zero_gradient or gain < self.tol)}

    def _points(self, u, deltas, box, space):
        cand = u[None, :] + deltas
        if box:
            return space.from_unit(np.clip(cand, 0.0, 1.0)), cand
        return space.project(cand), cand

    def _gradient(self, objective, u, value, box):
        """Finite differences along every coordinate, projected to sum 0 on the simplex."""
        space = objective.space
        dim = space.dim
        eye = np.eye(dim) * self.h
        if self.scheme == "forward":
            pts, _ = self._points(u, eye, box, space)
            g = (objective.batch(pts) - value) / self.h
        else:
            pts, _ = self._points(u, np.vstack([eye, -eye]), box, space)
            v = objective.batch(pts)
            g = (v[:dim] - v[dim:]) / (2 * self.h)
        if not box:
            g = g - g.mean()  # tangent space of the simplex
            g[np.abs(g) < 1e-12 * max(1.0, np.abs(g).max())] = 0.0
        return g

    def _steps(self, objective, u, value, direction, box):
        space = objective.space
        steps = self.h * 2.0 ** np.arange(self.n_steps)
        pts, cand = self._points(u, steps[:, None] * direction[None, :], box, space)
        vals = objective.batch(pts)
        i = int(np.argmax(vals))
        if vals[i] > value:
            return (np.clip(cand[i], 0.0, 1.0) if box else pts[i]), float(vals[i])
        return u, value
