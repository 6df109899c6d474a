"""What a line search returns: the profile of the mean metric along the line
(:class:`LineProfile`, or a :class:`DeferredProfile` built on first use) and the chosen
point (:class:`LineResult`)."""

from dataclasses import dataclass

import numpy as np

__all__ = ["LineProfile", "DeferredProfile", "LineResult", "safe_point"]

MIN_WIDTH = 1e-9   # intervals narrower than this (relative) are never chosen


@dataclass(frozen=True)
class LineProfile:
    """The mean metric on each interval of the line: ``values[i]`` on
    ``(lower[i], upper[i])``; the first interval starts at -inf, the last ends at +inf.

    Breakpoints are where the metric changes. ``hazards`` are meetings of several
    documents near the top whose value is the same on both sides but may differ exactly
    at the meeting (ties); :meth:`safe_point` steers a chosen t away from them.
    """
    lower: np.ndarray
    upper: np.ndarray
    values: np.ndarray
    hazards: np.ndarray = None  # sorted t of meetings to keep away from

    def value_at(self, t):
        """The mean metric at ``t`` (inside an interval)."""
        i = int(np.searchsorted(self.upper, t, side="left"))
        return float(self.values[min(i, len(self.values) - 1)])

    def within(self, lo, hi):
        """The profile on [lo, hi] only (a segment of the line: the intervals meeting it,
        the first and last cut at its ends)."""
        keep = (self.upper > lo) & (self.lower < hi)
        return LineProfile(np.maximum(self.lower[keep], lo), np.minimum(self.upper[keep], hi),
                           self.values[keep], self.hazards)

    def safe_point(self, lo, hi, t):
        """``t`` if no hazard (a meeting of several documents near the top, where the
        value depends on how ties fall) lies near it inside (lo, hi); else the middle of
        the widest hazard-free stretch (nearest t among equals). For an unbounded interval
        the stretch considered runs from its finite end to t and as far again."""
        return safe_point(self.hazards, lo, hi, t)


def safe_point(hazards, lo, hi, t):
    """:meth:`LineProfile.safe_point` with the sorted hazard times ``hazards`` (or None)."""
    if hazards is None or hazards.size == 0:
        return t
    a = lo if np.isfinite(lo) else t - 2 * (hi - t)
    b = hi if np.isfinite(hi) else t + 2 * (t - lo)
    i, j = np.searchsorted(hazards, [a, b], side="right")
    inside = hazards[i:j]
    inside = inside[(inside > a) & (inside < b)]
    if inside.size == 0:
        return t
    margin = max(MIN_WIDTH * max(1.0, abs(t)), 1e-3 * (b - a))
    if np.abs(inside - t).min() > margin:
        return t
    edges = np.concatenate([[a], inside, [b]])
    gaps = np.diff(edges)
    mids = 0.5 * (edges[1:] + edges[:-1])
    best = np.flatnonzero(gaps >= gaps.max() * (1 - 1e-12))
    return float(mids[best[np.argmin(np.abs(mids[best] - t))]])


class DeferredProfile:
    """A :class:`LineProfile` built on first use (by ``make()``), with the same
    attributes and methods: a line search that chose its point without the whole profile
    leaves this in its result, and pays for the profile only if it is read."""

    def __init__(self, make):
        self._make = make
        self._profile = None

    def get(self):
        """The :class:`LineProfile` itself."""
        if self._profile is None:
            self._profile = self._make()
            self._make = None
        return self._profile

    def __getattr__(self, name):  # only for names not set in __init__
        return getattr(self.get(), name)

    def __reduce__(self):  # pickles (to another process) as the profile itself
        p = self.get()
        return LineProfile, (p.lower, p.upper, p.values, p.hazards)


@dataclass(frozen=True)
class LineResult:
    """Outcome of an exact line search.

    Attributes
    ----------
    value : float
        The mean metric on the chosen interval.
    t : float
        The chosen step: the middle of the chosen interval, or past the finite end of an
        unbounded one by the median interval width -- moved to the middle of the widest
        stretch free of crossings if documents that leave the metric unchanged cross near
        it (at a crossing scores tie and the value would depend on rounding).
    lower, upper : float
        The chosen interval (±inf when unbounded).
    n_crossings : int
        Crossings of differently labelled documents swept (after pruning).
    profile : LineProfile or DeferredProfile
        The whole piecewise-constant profile, for other choice rules (built when first
        read if the search did not need it).
    point : ndarray or None
        The new point (filled in by :meth:`~dfrank.LinearObjective.line`).
    scores : ndarray or None
        The scores at the new point, when the caller gave those at the start
        (:meth:`~dfrank.LinearObjective.line`'s ``scores``).
    """
    value: float
    t: float
    lower: float
    upper: float
    n_crossings: int
    profile: LineProfile
    point: np.ndarray = None
    scores: np.ndarray = None

    @property
    def width(self):
        return self.upper - self.lower
