"""Particle swarm optimization on the simplex: RankPSO (Alejo, Fernández-Luna, Huete and
Pérez-Vázquez, *Direct optimization of evaluation measures in learning to rank using
particle swarm*, DEXA workshops 2010).

Each particle keeps a velocity v and a position x; per iteration

    v <- w v + c1 r1 * (p_i - x) + c2 r2 * (g - x),   x <- project(x + v),

with r1, r2 uniform in [0, 1] per coordinate, p_i the particle's best position, g the
swarm's, |v| clamped to ``vmax`` per coordinate, and Metzler's projection keeping x on the
simplex (clipping in a box, where the swarm flies in unit-cube coordinates). The whole swarm
is evaluated as one batch per iteration.
"""

import numpy as np

from dfrank.registry import Strategy, register_strategy

from dfrank.hyperparams import Int, Real

from ._common import is_box


@register_strategy("pso", aliases=("rankpso",))
class ParticleSwarm(Strategy):
    """RankPSO.

    Parameters
    ----------
    swarm_size : int, default 30
    iterations : int, default 100
    inertia : float, default 0.7
    c1, c2 : float, default 1.5
        Pull towards each particle's best and the swarm's best.
    vmax : float, default 0.2
        Velocity clamp per coordinate (simplex / unit-cube units).
    restarts : int, default 1
        Independent swarms.
    """

    hyperparameters = {"swarm_size": Int(2), "iterations": Int(1), "inertia": Real(0.0),
                       "c1": Real(0.0), "c2": Real(0.0),
                       "vmax": Real(0.0, low_open=True)}

    def __init__(self, *, swarm_size=30, iterations=100, inertia=0.7, c1=1.5, c2=1.5,
                 vmax=0.2, restarts=1):
        self.swarm_size = swarm_size
        self.iterations = iterations
        self.inertia = inertia
        self.c1 = c1
        self.c2 = c2
        self.vmax = vmax
        self.restarts = restarts

    resumable = True    # a checkpoint can hold the swarm between two iterations

    def run(self, objective, rng, *, restart=0, resume=None):
        self.check(objective)
        space = objective.space
        box = is_box(space)
        n, dim = self.swarm_size, space.dim
        to_space = space.from_unit if box else (lambda pts: pts)
        if resume is None:
            x = rng.random((n, dim)) if box else space.sample(rng, n)
            v = rng.uniform(-self.vmax, self.vmax, (n, dim)) * 0.5
            vals = objective.batch(to_space(x))
            pbest, pval = x.copy(), vals.copy()
            first = 1
        else:       # the swarm and the generator as saved after iteration resume["it"]
            x, v, pbest, pval = (np.asarray(resume[k], dtype=np.float64)
                                 for k in ("x", "v", "pbest", "pval"))
            rng.bit_generator.state = resume["rng"]
            first = int(resume["it"]) + 1
        gi = int(np.argmax(pval))
        for it in range(first, self.iterations + 1):
            r1 = rng.random((n, dim))
            r2 = rng.random((n, dim))
            v = self.inertia * v + self.c1 * r1 * (pbest - x) + self.c2 * r2 * (pbest[gi] - x)
            np.clip(v, -self.vmax, self.vmax, out=v)
            x = self._move(space, x, v, box)
            vals = objective.batch(to_space(x))
            better = vals > pval
            pbest[better] = x[better]
            pval[better] = vals[better]
            gi = int(np.argmax(pval))
            objective.save_progress(lambda: {"it": it, "x": x, "v": v, "pbest": pbest,
                                             "pval": pval, "rng": rng.bit_generator.state})
        return {"iterations": self.iterations}

    @staticmethod
    def _move(space, x, v, box):
        new = x + v
        if box:
            return np.clip(new, 0.0, 1.0)
        flat = np.all(new == new[:, :1], axis=1)  # would rank nothing: stay
        new[flat] = x[flat]
        return space.project(new)
