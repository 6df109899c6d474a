"""Coordinate ascent on the simplex (Metzler, *Direct Maximization of Rank-based
Metrics*, §4.2), and on a box of parameters.

Each sweep visits the d + 1 simplex coordinates in a seeded random order and maximizes the
metric along each: exactly with the line search of :mod:`dfrank.linesearch` on a linear
ranker, or over a RankLib-style schedule of steps 0.001 * 2^i (i < 25, both directions)
otherwise. It stops when a sweep gains less than ``tol``. On a :class:`~dfrank.Box` each
coordinate gets an evenly spaced batch of points then a golden-section refinement around
the best one (the metric is piecewise constant, so no derivative is used anywhere).
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Choice, Flag, Int, Real

from ._common import is_box, start_point

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


@register_strategy("coordinate_ascent", aliases=("ca",))
class CoordinateAscent(Strategy):
    """Cycle through the coordinates, maximizing along each.

    Parameters
    ----------
    restarts : int, default 10
        Independent runs (Metzler used 10); the first starts from the center, the others
        from uniform samples; the best one wins.
    line_search : {"auto", "exact", "steps"}
        ``exact`` needs a linear-ranker objective with a built-in metric and a tie policy
        it keeps exact (``ties="expected"`` with MAP, MRR or Kendall's tau is not); ``auto``
        uses it whenever possible and ``steps`` otherwise (the result's ``info`` says which).
    rule : {"best", "plateau"}, default "plateau"
        How the exact line search picks a point from the line's profile (see
        :func:`dfrank.linesearch.choose`): ``plateau`` takes, among the points that do not
        lower the metric, the one in the widest stretch of high values. Chosen on
        validation data over the 5 folds of OHSUMED and MQ2008
        (``benchmarks/choose_ca_defaults.py``): mean validation NDCG@10 0.4528 vs 0.4417
        (OHSUMED) and 0.5048 vs 0.5023 (MQ2008) for ``best``.
    window : float or None
        Window of the ``plateau`` rule (default: the line's median interval width).
    tol : float, default 1e-3
        Stop when a sweep improves the metric by less than this (RankLib's default; 1e-4
        gave the same validation values at several times the cost).
    max_sweeps : int, default 100
    shuffle : bool, default True
        Visit the coordinates in a seeded random order each sweep.
    n_steps, step_base : int, float
        The ``steps`` schedule: step_base * 2^i for i < n_steps, both directions.
    line_points, refine : int
        On a box: evenly spaced points per coordinate, then golden-section evaluations.
    nonnegative : bool, default False
        Search only the face of the simplex where every weight is >= 0 (the last simplex
        coordinate 0: weights summing to 1, as :func:`dfrank.fuse` learns them): the first
        restart starts from equal weights, the others from uniform samples of the face;
        each move runs along the segment from the point to a vertex (one per weight, in a
        seeded order each sweep), searched exactly within the segment, and the point
        moves only when the line's value is at least the current one.
    """

    default_restarts = 10
    makes_line_searches = True
    concurrent_restarts = True
    searches_nonnegative = True
    hyperparameters = {
        "line_search": Choice("auto", "exact", "steps"), "rule": Choice("best", "plateau"),
        "window": Real(0.0, low_open=True, none=True), "tol": Real(0.0),
        "max_sweeps": Int(1), "shuffle": Flag(), "n_steps": Int(1, 60),
        "step_base": Real(0.0, low_open=True), "line_points": Int(3), "refine": Int(0),
        "nonnegative": Flag()}

    def __init__(self, *, restarts=10, line_search="auto", rule="plateau", window=None,
                 tol=1e-3, max_sweeps=100, shuffle=True, n_steps=25, step_base=0.001,
                 line_points=11, refine=8, nonnegative=False):
        self.restarts = restarts
        self.line_search = line_search
        self.rule = rule
        self.window = window
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.shuffle = shuffle
        self.n_steps = n_steps
        self.step_base = step_base
        self.line_points = line_points
        self.refine = refine
        self.nonnegative = nonnegative

    def check(self, objective):
        super().check(objective)
        name = self.label
        if (self.line_search == "exact" or self.nonnegative) and not objective.exact_line:
            reason = getattr(objective, "exact_line_reason", None) or \
                "it needs a LinearObjective (a linear ranker over the simplex)"
            what = "nonnegative=True" if self.nonnegative else "line_search='exact'"
            raise TypeError(f"{name}: {what} needs the exact line search, which is not "
                            f"available: {reason}")
        if self.nonnegative and self.line_search == "steps":
            raise ValueError(f"{name}: nonnegative=True searches each segment exactly; "
                             "line_search='steps' cannot be combined with it")

    def run(self, objective, rng, *, restart=0):
        self.check(objective)
        space = objective.space
        if is_box(space):
            return self._run_box(objective, rng, restart)
        if self.nonnegative:
            return self._run_face(objective, rng, restart)
        exact = self.line_search != "steps" and objective.exact_line
        if exact:
            objective.expect_lines()
        point = start_point(objective, rng, restart)
        value = objective(point)
        # the scores at the point, carried from one exact line to the next
        scores = objective.scores(point) if exact else None
        dim = space.dim
        eye = np.eye(dim)
        widths = np.full(dim, np.nan)
        # coordinates whose line changes no ranking (constant features) are skipped
        skip = objective.flat_coordinates() if getattr(objective, "is_linear", False) \
            else np.zeros(dim, dtype=bool)
        widths[skip] = np.inf
        gain = np.inf
        sweep = 0
        n_lines = int((~skip).sum())
        for sweep in range(1, self.max_sweeps + 1):
            before = value
            order = rng.permutation(dim) if self.shuffle else np.arange(dim)
            done = 0
            for j in order:
                if skip[j]:
                    continue
                objective.position = (sweep, done, n_lines)   # for a progress bar
                done += 1
                if exact:
                    res = objective.line(point, eye[j], rule=self.rule, window=self.window,
                                         floor=value, scores=scores)
                    point, value, scores = res.point, res.value, res.scores
                    widths[j] = res.width
                else:
                    point, value = self._steps(objective, point, value, eye[j])
            gain = value - before
            if gain < self.tol:
                break
        return {"sweeps": sweep, "converged": bool(gain < self.tol),
                "line_search": "exact" if exact else "steps",
                "plateau": widths if exact else None}

    def _run_face(self, objective, rng, restart):
        """Coordinate ascent on the face lambda_{d+1} = 0 (non-negative weights, sum 1).
        The point after each move is renormalized on the face (not projected), evaluated
        afresh, and is the run's answer (:meth:`~dfrank.objectives.objective.Objective.settle`).
        Each line is a segment of the face, whose two ends are evaluated too. With two
        weights the face is a segment: the first line sweeps it whole and ends the run."""
        d = objective.space.dim - 1
        objective.expect_lines()
        lam = np.zeros(d + 1)
        lam[:d] = np.full(d, 1.0 / d) if restart == 0 else rng.dirichlet(np.ones(d))
        value = objective(lam)
        s0 = objective.scores(lam)
        gain = np.inf
        sweep = 0
        for sweep in range(1, self.max_sweeps + 1):
            before = value
            for j in (rng.permutation(d) if self.shuffle else range(d)):
                delta = -lam   # toward vertex j, staying on the face
                delta[j] += 1.0
                delta[d] = 0.0
                if not np.any(delta):
                    continue
                lo = -lam[j] / (1.0 - lam[j]) if lam[j] < 1.0 else 0.0
                res = objective.line_scores(s0, objective.scores(delta), rule=self.rule,
                                            window=self.window, floor=value,
                                            within=(lo, 1.0))
                # the segment's ends, lambda_j = 0 and vertex j, are points of their own:
                # there ties among the other coordinates' scores are not broken by
                # coordinate j, and the line search's intervals leave them out
                ends = np.maximum(lam[None, :] + np.array([[lo], [1.0]]) * delta, 0.0)
                ends /= ends.sum(axis=1, keepdims=True)
                if res.t != 0.0 and res.value >= value:
                    lam = np.maximum(lam + res.t * delta, 0.0)
                    lam /= lam.sum()
                    value = objective(lam)
                    s0 = objective.scores(lam)
                at_ends = objective.batch(ends)
                k = int(np.argmax(at_ends))
                if at_ends[k] > value:
                    lam, value = ends[k].copy(), float(at_ends[k])
                    s0 = objective.scores(lam)
                if d == 2:   # the face is a segment, and that line swept it whole
                    break
            gain = value - before
            if d == 2:
                gain = 0.0
                break
            if gain < self.tol:
                break
        objective.settle(lam)
        return {"sweeps": sweep, "converged": bool(gain < self.tol), "line_search": "exact",
                "plateau": None}

    def _steps(self, objective, point, value, e):
        """RankLib's schedule: step_base * 2^i along +e and -e, evaluated as one batch."""
        steps = self.step_base * 2.0 ** np.arange(self.n_steps)
        moves = np.concatenate([steps, -steps])
        cand = point[None, :] + moves[:, None] * e[None, :]
        flat = np.all(cand == cand[:, :1], axis=1)  # would rank nothing: skip
        cand = objective.space.project(cand[~flat])
        vals = objective.batch(cand)
        i = int(np.argmax(vals))
        if vals[i] > value:
            return cand[i], float(vals[i])
        return point, value

    def _run_box(self, objective, rng, restart):
        space = objective.space
        u = space.to_unit(start_point(objective, rng, restart))
        value = objective(space.from_unit(u))
        grid = np.linspace(0.0, 1.0, self.line_points)
        gain = np.inf
        sweep = 0
        for sweep in range(1, self.max_sweeps + 1):
            before = value
            order = rng.permutation(space.dim) if self.shuffle else np.arange(space.dim)
            for j in order:
                u, value = self._box_line(objective, u, value, j, grid)
            gain = value - before
            if gain < self.tol:
                break
        return {"sweeps": sweep, "converged": bool(gain < self.tol),
                "line_search": "grid+golden", "plateau": None}

    def _box_line(self, objective, u, value, j, grid):
        space = objective.space
        cand = np.repeat(u[None, :], len(grid), axis=0)
        cand[:, j] = grid
        vals = objective.batch(space.from_unit(cand))
        b = int(np.argmax(vals))
        best_u, best_v = cand[b].copy(), float(vals[b])
        # golden-section refinement inside the bracket around the best grid point
        lo = grid[max(b - 1, 0)]
        hi = grid[min(b + 1, len(grid) - 1)]
        x1 = hi - _GOLDEN * (hi - lo)
        x2 = lo + _GOLDEN * (hi - lo)
        f = {}

        def at(x):
            if x not in f:
                c = best_u.copy()
                c[j] = x
                f[x] = objective(space.from_unit(c))
            return f[x]

        for _ in range(self.refine // 2):
            if at(x1) >= at(x2):
                hi, x2 = x2, x1
                x1 = hi - _GOLDEN * (hi - lo)
            else:
                lo, x1 = x1, x2
                x2 = lo + _GOLDEN * (hi - lo)
        for x, v in f.items():
            if v > best_v:
                best_v = v
                best_u = best_u.copy()
                best_u[j] = x
        if best_v > value:
            return best_u, best_v
        return u, value
