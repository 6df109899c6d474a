"""Grid search over the simplex (Metzler, *Direct Maximization of Rank-based Metrics*,
§4.1) or a box lattice.

Every point k/K of the simplex with integer k >= 0 summing to K (``resolution`` = K) is
evaluated, streamed in batches from :meth:`dfrank.Simplex.grid`, so the best grid point is
found exactly and the global maximum is approached as K grows. There are C(K + d, d) points:
a grid above ``max_points`` is refused with its size. All values are kept (in grid order)
so a surface can be plotted.
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Flag, Int

from ._common import check_int, is_box


@register_strategy("grid", aliases=("grid_search",))
class Grid(Strategy):
    """Exhaustive grid.

    Parameters
    ----------
    resolution : int or None
        K for the simplex (points k/K); points per coordinate in a box. Default: the
        largest K whose grid fits in ``max_points`` and in the evaluation budget.
    max_points : int, default 1_000_000
    batch_size : int, default 4096
    keep_values : bool, default True
        Keep every value (``info["values"]``, in grid order).
    """

    restarts = 1

    hyperparameters = {"resolution": Int(1, none=True), "max_points": Int(1),
                       "batch_size": Int(1), "keep_values": Flag()}

    def __init__(self, *, resolution=None, max_points=1_000_000, batch_size=4096,
                 keep_values=True):
        self.resolution = resolution
        self.max_points = max_points
        self.batch_size = batch_size
        self.keep_values = keep_values

    def check(self, objective):
        super().check(objective)
        if self.resolution is not None and is_box(objective.space):
            check_int(self.label, "resolution", self.resolution, 2)
        K = self.resolution_for(objective)
        size = objective.space.grid_size(K)
        if size > self.max_points:
            raise ValueError(
                f"{self.label}: resolution {K} over {objective.space!r} makes {size:,} "
                f"points, more than max_points={self.max_points:,}; lower the resolution, "
                "select fewer features (RankingData.select_features), or raise max_points")

    def resolution_for(self, objective):
        """The given resolution, or the finest whose grid fits in max_points and in the
        objective's evaluation budget."""
        if self.resolution is not None:
            return int(self.resolution)
        space = objective.space
        cap = self.max_points
        if objective.max_evals is not None:
            cap = min(cap, max(objective.max_evals, 1))
        k = 2 if is_box(space) else 1
        while space.grid_size(k + 1) <= cap and k < 10_000:
            k += 1
        return k

    resumable = True    # a checkpoint can hold the grid position

    def run(self, objective, rng, *, restart=0, start=0, resume=None):
        self.check(objective)
        space = objective.space
        K = self.resolution_for(objective)
        total = space.grid_size(K)
        if resume is not None:     # the points before the saved position are done; their
            start = int(resume["done"])   # values (for plots) are not kept: NaN
        values = np.full(total, np.nan) if self.keep_values else None
        done = start
        for chunk in space.grid(K, chunk_size=self.batch_size, start=start):
            vals = objective.batch(chunk)
            if values is not None:
                values[done:done + len(vals)] = vals
            done += len(vals)
            objective.save_progress(lambda: {"done": done})
        return {"resolution": K, "n_points": total,
                "values": values}
