"""Helpers shared by the built-in strategies (not a strategy family)."""

import numbers

import numpy as np

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


def check_int(owner, name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value > high):
        bound = f">= {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"{owner}: {name} must be an integer {bound}, got {value!r}")


def check_float(owner, name, value, low=None, high=None, low_open=False):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        rng = f"{'>' if low_open else '>='} {low}" if low is not None else "finite"
        if high is not None:
            rng += f" and <= {high}"
        raise ValueError(f"{owner}: {name} must be a number {rng}, got {value!r}")


def check_choice(owner, name, value, choices):
    if value not in choices:
        raise ValueError(f"{owner}: {name} must be one of {list(choices)}, got {value!r}")


def is_box(space):
    return isinstance(space, Box)


def cube_to_space(space, Z):
    """Points of ``space`` from rows of unit-cube coordinates ``Z`` (P, D): a box's own
    scaling (log coordinates included), or lambda = z / sum(z) onto the simplex."""
    return space.from_unit(np.clip(np.atleast_2d(np.asarray(Z, dtype=np.float64)), 0.0, 1.0))
