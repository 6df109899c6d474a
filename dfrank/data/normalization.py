"""Feature normalizations a linear model carries with it, so that it ranks the same
wherever it is applied.

A model stores its normalization as a plain dict (saved in its JSON):

* ``{"kind": "standard", "mean": m, "std": s}`` -- x' = (x - m) / s per feature (the LTR
  plugin's ``standard``, Solr's ``StandardNormalizer``);
* ``{"kind": "minmax", "min": a, "max": b}`` -- x' = (x - a) / (b - a) (the plugin's
  ``min_max``, Solr's ``MinMaxNormalizer``);
* ``{"kind": "query"}`` -- the features were normalized within each query (LETOR's
  QueryLevelNorm sets, MQ2008; decided from the data by :func:`within_queries`). Such a
  model expects its input normalized already, and no engine that scores documents one at
  a time can apply it;
* ``{"kind": "none"}`` -- the features are as they were read, not normalized within
  queries: an engine that computes them applies the model as it is.

A model without one (``None``: made by hand, read from RankLib's format, saved by an older
dfrank) does not say how its features were normalized.

The constants are fitted on the training rows (:func:`fit`) and applied to every set the
model scores (:func:`apply`), never refitted on test data.
"""

import numpy as np

from .ranking import RankingData

__all__ = ["KINDS", "check", "affine", "fit", "apply", "has_constants", "within_queries",
           "of_data"]

KINDS = ("none", "standard", "minmax", "query")
_CONSTANTS = {"none": (), "standard": ("mean", "std"), "minmax": ("min", "max"), "query": ()}
SPANNED = 0.8   # the share of queries in which a feature must span [0, 1] (within_queries)


def check(norm, d):
    """``norm`` validated for ``d`` features: None, or a dict with its constants as float
    arrays of length d."""
    if norm is None:
        return None
    if not isinstance(norm, dict) or norm.get("kind") not in KINDS:
        raise ValueError("normalization must be None or a dict with kind 'none', 'standard' "
                         f"(mean, std), 'minmax' (min, max) or 'query'; got {norm!r}")
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


def has_constants(norm):
    """Whether ``norm`` maps each feature by constants (standard or minmax)."""
    return norm is not None and norm["kind"] in ("standard", "minmax")


def apply(data, norm):
    """``data`` (RankingData or an (n, d) array) with ``norm`` applied; any normalization
    without constants (none, query) or None leaves it as it is."""
    if not has_constants(norm):
        return data
    shift, scale = affine(norm)
    if not isinstance(data, RankingData):
        return (np.asarray(data, dtype=np.float64) - shift) / scale
    return RankingData((data.X - shift) / scale, data.y, data.qptr, data.qids,
                       docids=data.docids, feature_ids=data.feature_ids, source=data.source,
                       unranked=data.unranked)


def within_queries(data, spanned=SPANNED):
    """Whether the features of ``data`` (RankingData) were normalized within each query,
    as LETOR's QueryLevelNorm sets and MQ2008 are (x' = (x - min_q) / (max_q - min_q), 0 for
    a feature constant in the query). The rule: every value lies in [0, 1], some feature
    is not binary (0/1 only), and every feature that is not binary spans exactly [0, 1], or
    is constant, in at least ``spanned`` of the queries of two or more documents (not all:
    a sample of a query's documents, as in dfrank's demo data, may miss its extremes).
    Raw features (scores, counts) leave [0, 1]; features scaled by constants over the
    whole set span [0, 1] in few queries; binary features are left out of the test."""
    X = np.asarray(data.X)
    sizes = np.diff(data.qptr)
    if X.size == 0 or not (sizes > 1).any() or X.min() < 0 or X.max() > 1:
        return False
    shares, inner = [], []
    for j in range(0, X.shape[1], 32):    # a block of columns at a time: small temporaries
        B = X[:, j:j + 32]
        inner.append(((B > 0) & (B < 1)).any(axis=0))      # not binary
        lo = np.minimum.reduceat(B, data.qptr[:-1], axis=0)[sizes > 1]
        hi = np.maximum.reduceat(B, data.qptr[:-1], axis=0)[sizes > 1]
        shares.append((((lo == 0) & (hi == 1)) | (lo == hi)).mean(axis=0))
    inner, shares = np.concatenate(inner), np.concatenate(shares)
    return bool(inner.any() and np.all(shares[inner] >= spanned))


def of_data(data):
    """The normalization a model learned on ``data`` records: ``{"kind": "query"}`` when
    :func:`within_queries`, else ``{"kind": "none"}``."""
    within = getattr(data, "within_queries", None)   # data on a cluster: its parts said
    within = within_queries(data) if within is None else within
    return {"kind": "query"} if within else {"kind": "none"}
