"""Pattern search from a space-filling start: the strategy for a few parameters whose
every evaluation is expensive (a retrieval run), ``dfrank tune``'s default.

A Latin hypercube of ``n_init`` points spreads the first evaluations over the whole
space (a grid spends most of its points where they teach nothing). From the best of them,
a compass search (Kolda, Lewis and Torczon 2003, "Optimization by direct search") polls
the 2D points one step away along each coordinate, all in one batch (a parallel run fills
the workers): it moves to the best poll point that improves, or else halves the step, and
stops when the step falls below ``min_step``. Coordinates are those of the unit cube
(log-scaled where the box is; on the simplex lambda = z / sum z).
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Int, Real

from ._common import check_float, cube_to_space, start_in_cube


@register_strategy("pattern", aliases=("compass",))
class PatternSearch(Strategy):
    """A Latin hypercube start, then a compass search from its best point.

    Parameters
    ----------
    n_init : int or None
        Points of the start (default 4 D + 4 for D coordinates), the objective's
        ``initial_point`` among them where it has one.
    step : float, default 0.25
        The first poll step (unit-cube units).
    min_step : float, default 1e-3
        The search stops when the step is smaller.
    restarts : int, default 1
        Independent searches (each its own start), splitting a budget evenly.
    """

    hyperparameters = {"n_init": Int(1, none=True), "step": Real(0.0, 1.0, low_open=True),
                       "min_step": Real(0.0, low_open=True)}

    def __init__(self, *, n_init=None, step=0.25, min_step=1e-3, restarts=1):
        self.n_init = n_init
        self.step = step
        self.min_step = min_step
        self.restarts = restarts

    def check(self, objective):
        super().check(objective)
        check_float(self.label, "min_step", self.min_step, 0.0, self.step, low_open=True)

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        space = objective.space
        D = space.dim
        n = self.n_init if self.n_init is not None else 4 * D + 4
        from scipy.stats import qmc   # imported where used: scipy.stats is slow to import

        Z = qmc.LatinHypercube(d=D, rng=np.random.default_rng(rng.integers(2 ** 63))
                               ).random(n)
        z0 = start_in_cube(objective) if restart == 0 else None
        if z0 is not None:      # the objective's initial point is one of the start's
            Z[0] = z0
        vals = objective.batch(cube_to_space(space, Z))
        i = int(np.argmax(vals))
        z, best = Z[i].copy(), float(vals[i])
        step, polls, moves = float(self.step), 0, 0
        eye = np.eye(D)
        while step >= self.min_step:
            P = np.clip(np.vstack([z + step * eye, z - step * eye]), 0.0, 1.0)
            P = P[np.any(P != z, axis=1)]     # a bound already reached: no poll there
            if len(P) == 0:
                step /= 2.0
                continue
            pv = objective.batch(cube_to_space(space, P))
            polls += 1
            j = int(np.argmax(pv))
            if pv[j] > best:
                z, best = P[j].copy(), float(pv[j])
                moves += 1
            else:
                step /= 2.0
        return {"n_init": n, "polls": polls, "moves": moves, "final_step": step}
