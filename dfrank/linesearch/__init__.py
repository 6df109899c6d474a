"""The exact line search: the global maximum of the mean metric along a line of scores.

Scores move as s(t) = s0 + t u. Each query's metric is piecewise constant in t, so the mean
is too; :func:`line_profile` returns it whole (every breakpoint and the value on every
interval) and :func:`choose` picks a point from it. :func:`line_search` does both, and for
the ``"best"`` rule (on the whole line or a segment of it) finds the chosen interval without
assembling the whole profile; the profile is then built only if asked for. See DESIGN.md,
"Exact line search".

The stages, a module each, run in turn by :mod:`.search`:

* :mod:`.candidates` -- per query, the rows that can matter, in their order at t -> -inf;
* :mod:`.sweep` -- each query's sweep over its crossings: breakpoints, summed by bin;
* :mod:`.assemble` -- the profile (or only the best interval) from the breakpoints;
* :mod:`.choice` -- a point of the profile, by the ``"best"`` or ``"plateau"`` rule;

with :mod:`.classes` (how a metric sees the documents) and :mod:`.profile` (what a line
search returns).
"""

from .candidates import direction_kind, flat_within_queries
from .choice import RULES, TOL, choose
from .classes import LineClasses, unsupported
from .profile import MIN_WIDTH, DeferredProfile, LineProfile, LineResult, safe_point
from .runner import (EPS, compile_sweep_ahead, line_profile, line_search, sort_within_queries,
                     versions)

__all__ = ["LineResult", "LineProfile", "LineClasses", "line_profile", "line_search", "choose",
           "RULES", "unsupported", "sort_within_queries", "flat_within_queries",
           "direction_kind", "compile_sweep_ahead", "DeferredProfile", "safe_point", "EPS",
           "MIN_WIDTH", "TOL", "versions"]
