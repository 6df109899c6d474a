"""Feature normalizations a linear model carries with it, so that it ranks the same
wherever it is applied.

A model stores its normalization as a plain dict (saved in its JSON):

* ``{"kind": "standard", "mean": m, "std": s}`` -- x' = (x - m) / s per feature (the LTR
  plugin's ``standard``, Solr's ``StandardNormalizer``);
* ``{"kind": "minmax", "min": a, "max": b}`` -- x' = (x - a) / (b - a) (the plugin's
  ``min_max``, Solr's ``MinMaxNormalizer``);
* ``{"kind": "query"}`` -- the features were normalized within each query (LETOR's
  QueryLevelNorm sets). Such a model expects its input normalized already, and no engine
  that scores documents one at a time can apply it.

The constants are fitted on the training rows (:func:`fit`) and applied to every set the
model scores (:func:`apply`), never refitted on test data.
"""

import os

import numpy as np

from .data import RankingData

__all__ = ["KINDS", "check", "affine", "fit", "apply", "query_level_source"]

KINDS = ("standard", "minmax", "query")
_CONSTANTS = {"standard": ("mean", "std"), "minmax": ("min", "max"), "query": ()}


def check(norm, d):
    """``norm`` validated for ``d`` features: None, or a dict with its constants as float
    arrays of length d."""
    if norm is None:
        return None
    if not isinstance(norm, dict) or norm.get("kind") not in KINDS:
        raise ValueError("normalization must be None or a dict with kind 'standard' (mean, "
                         f"std), 'minmax' (min, max) or 'query'; got {norm!r}")
    out = {"kind": norm["kind"]}
    for k in _CONSTANTS[norm["kind"]]:
        try:
            v = np.asarray(norm.get(k), dtype=np.float64)
        except (TypeError, ValueError):
            v = None
        if v is None or v.shape != (d,) or not np.all(np.isfinite(v)):
            raise ValueError(f"normalization {k!r} must be {d} finite numbers, got "
                             f"{norm.get(k)!r}")
        out[k] = v
    if out["kind"] == "standard" and np.any(out["std"] <= 0):
        raise ValueError("normalization 'std' must be > 0 (1 for a constant feature)")
    if out["kind"] == "minmax" and np.any(out["max"] <= out["min"]):
        raise ValueError("normalization needs max > min for every feature (min + 1 for a "
                         "constant feature)")
    return out


def affine(norm):
    """``(shift, scale)`` with x' = (x - shift) / scale, for standard and minmax."""
    if norm["kind"] == "standard":
        return norm["mean"], norm["std"]
    if norm["kind"] == "minmax":
        return norm["min"], norm["max"] - norm["min"]
    raise ValueError(f"a {norm['kind']!r} normalization has no per-feature constants")


def fit(X, kind):
    """The constants of ``kind`` ("standard" or "minmax") from the rows of ``X`` (n, d).
    A constant feature gets std 1 (standard) or the range [min, min + 1] (minmax), so it
    maps to 0 instead of dividing by zero."""
    X = np.asarray(X, dtype=np.float64)
    if kind == "standard":
        sd = X.std(axis=0)
        return {"kind": "standard", "mean": X.mean(axis=0), "std": np.where(sd > 0, sd, 1.0)}
    if kind == "minmax":
        lo, hi = X.min(axis=0), X.max(axis=0)
        return {"kind": "minmax", "min": lo, "max": np.where(hi > lo, hi, lo + 1.0)}
    raise ValueError(f"a fitted normalization is 'standard' or 'minmax', got {kind!r}")


def apply(data, norm):
    """``data`` (RankingData or an (n, d) array) with ``norm`` applied; a ``query``
    normalization or None leaves it as it is."""
    if norm is None or norm["kind"] == "query":
        return data
    shift, scale = affine(norm)
    if not isinstance(data, RankingData):
        return (np.asarray(data, dtype=np.float64) - shift) / scale
    return RankingData((data.X - shift) / scale, data.y, data.qptr, data.qids,
                       docids=data.docids, feature_ids=data.feature_ids, source=data.source,
                       unranked=data.unranked)


def query_level_source(path):
    """True when ``path`` lies in a LETOR ``QueryLevelNorm`` folder (features normalized
    within each query by the collection's makers)."""
    return path is not None and "querylevelnorm" in \
        [p.lower() for p in os.path.normpath(os.fspath(path)).split(os.sep)]
