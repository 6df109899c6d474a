"""Helpers shared by the built-in strategies (not a strategy family)."""

import numpy as np

from dfrank.hyperparams import check_choice, check_float, check_int  # noqa: F401
from dfrank.spaces import Box


def start_point(objective, rng, restart):
    """The first restart starts from the objective's initial point if it has one, else
    from the center (Metzler); the others from a uniform sample of the space (Dirichlet
    on the simplex)."""
    sp = objective.space
    if restart:
        return sp.sample(rng)
    start = getattr(objective, "initial_point", None)
    return sp.center() if start is None else np.array(start, dtype=np.float64)


def start_in_cube(objective):
    """The unit-cube coordinates of the objective's initial point, or None."""
    start = getattr(objective, "initial_point", None)
    return None if start is None else objective.space.to_unit(start)


def is_box(space):
    return isinstance(space, Box)


def cube_to_space(space, Z):
    """Points of ``space`` from rows of unit-cube coordinates ``Z`` (P, D): a box's own
    scaling (log coordinates included), or lambda = z / sum(z) onto the simplex."""
    return space.from_unit(np.clip(np.atleast_2d(np.asarray(Z, dtype=np.float64)), 0.0, 1.0))
