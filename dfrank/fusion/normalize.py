"""Each run's scores normalized per query before they are fused: ranx's normalizations
(and OpenSearch's ``l2``), one query at a time (:func:`normalize`) or every query of a run
at once (:func:`normalize_groups`)."""

import math

import numpy as np

__all__ = ["NORMS", "normalize", "normalize_groups", "group_starts", "borda_missing",
           "check_missing"]

NORMS = ("minmax", "zscore", "sum", "max", "rank", "borda", "l2", "none")
_TINY = 1e-9   # the floor of a normalizer's denominator (ranx's)
_HUGE = 1e150  # scores beyond this are divided by their largest magnitude first
_SCALE_FREE = ("minmax", "zscore", "sum", "max", "l2")   # norm(c s) = norm(s) for c > 0


def normalize(scores, norm, n_candidates=None):
    """One run's scores for one query, normalized (``scores`` best first).

    ``minmax`` (s - min) / (max - min), ``zscore`` (s - mean) / sd, ``sum``
    (s - min) / sum(s - min), ``max`` s / max (ranx's definitions, denominators floored at
    1e-9); ``rank`` 1 / rank; ``borda`` 1 - (rank - 1) / n_candidates (ranx's); ``l2``
    s / ||s|| (OpenSearch's); ``none`` s."""
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    big = float(np.abs(s).max()) if n else 0.0
    if big > _HUGE and norm in _SCALE_FREE:   # differences or sums would overflow
        s = s / big
    if norm == "minmax":
        lo = s.min()
        return (s - lo) / max(s.max() - lo, _TINY)
    if norm == "zscore":
        return (s - s.mean()) / max(float(s.std()), _TINY)
    if norm == "sum":
        lo = s.min()
        return (s - lo) / max(float(s.sum()) - lo * n, _TINY)
    if norm == "max":
        return s / max(float(s.max()), _TINY)
    if norm == "rank":
        return 1.0 / np.arange(1.0, n + 1.0)
    if norm == "borda":
        return 1.0 - np.arange(n) / float(n_candidates)
    if norm == "l2":
        return s / max(float(np.sqrt((s * s).sum())), _TINY)
    if norm == "none":
        return s.copy()
    raise ValueError(f"unknown normalization {norm!r}; known: {', '.join(NORMS)}")


def borda_missing(n_results, n_candidates):
    """ranx's Borda value of a candidate a run did not retrieve: the mean of the places
    left below its results."""
    return 0.5 - (n_results - 1) / (2.0 * n_candidates)


def check_missing(norm, missing):
    if norm not in NORMS:
        raise ValueError(f"unknown normalization {norm!r}; known: {', '.join(NORMS)}")
    if not (missing in ("zero", "min") or (isinstance(missing, (int, float)) and
                                           not isinstance(missing, bool)
                                           and math.isfinite(missing))):
        raise ValueError(f"missing must be 'zero', 'min' or a finite number, got {missing!r}")


def group_starts(g):
    """Start of each run of equal values of sorted ``g`` (and its length)."""
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.empty(0, np.int64)
    return starts, np.diff(np.r_[starts, len(g)])


def normalize_groups(s, starts, counts, norm, m):
    """:func:`normalize` of every group of ``s`` (each group one run's scores for one
    query, best first; ``m`` its query's candidates) at once."""
    if norm in ("rank", "borda"):
        rank = np.arange(len(s)) - np.repeat(starts, counts)
        return 1.0 / (rank + 1.0) if norm == "rank" else 1.0 - rank / np.repeat(m, counts)
    if norm == "none":
        return s.copy()
    big = np.maximum.reduceat(np.abs(s), starts)
    scale = np.where((big > _HUGE) & (norm in _SCALE_FREE), big, 1.0)
    s = s / np.repeat(scale, counts)   # differences or sums would overflow
    lo = np.repeat(np.minimum.reduceat(s, starts), counts)
    if norm == "minmax":
        return (s - lo) / np.maximum(np.repeat(np.maximum.reduceat(s, starts), counts) - lo,
                                     _TINY)
    if norm == "max":
        return s / np.maximum(np.repeat(np.maximum.reduceat(s, starts), counts), _TINY)
    n = np.repeat(counts, counts).astype(np.float64)
    total = np.repeat(np.add.reduceat(s, starts), counts)
    if norm == "sum":
        return (s - lo) / np.maximum(total - lo * n, _TINY)
    if norm == "zscore":
        dev = s - total / n
        sd = np.sqrt(np.repeat(np.add.reduceat(dev * dev, starts), counts) / n)
        return dev / np.maximum(sd, _TINY)
    return s / np.maximum(np.sqrt(np.repeat(np.add.reduceat(s * s, starts), counts)), _TINY)
