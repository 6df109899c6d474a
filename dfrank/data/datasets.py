"""Synthetic learning-to-rank data and the small demo set shipped with dfrank.

:func:`make_letor_like` draws queries whose graded labels (0-4) come from a hidden linear
model of the features plus noise, with LETOR-like quirks: features normalized per query to
[0, 1], a few constant features, and duplicated documents (ties). :func:`load_demo`
returns the train / valid / test splits of such a set, generated once by
``python -m dfrank.data.datasets`` and stored in the package (no download, ever).
"""

import os

import numpy as np

from .ranking import RankingData

__all__ = ["make_letor_like", "load_demo", "DEMO_PATH"]

DEMO_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources",
                         "demo.npz")
_DEMO_FORMAT = "dfrank.demo"


def make_letor_like(n_queries=100, docs_per_query=30, n_features=10, seed=0, *,
                    noise=1.0, constant_features=0, duplicate_rate=0.0,
                    dtype=np.float64):
    """A synthetic ranking dataset with a planted linear model.

    Parameters
    ----------
    n_queries, docs_per_query, n_features : int
        ``docs_per_query`` may be an int or a (low, high) range (uniform per query).
    seed : int
    noise : float
        Standard deviation of the noise added to the planted scores before grading.
    constant_features : int
        How many of the features are 0 everywhere (as several LETOR features are).
    duplicate_rate : float
        Fraction of documents replaced by a copy of another document of the same query
        with a possibly different label (identical feature vectors: ties).
    dtype : float64 or float32

    Returns
    -------
    RankingData, with the planted weights in ``data.derived.planted_weights``.
    """
    rng = np.random.default_rng(seed)
    if np.ndim(docs_per_query) == 0:
        sizes = np.full(n_queries, int(docs_per_query))
    else:
        lo, hi = docs_per_query
        sizes = rng.integers(int(lo), int(hi) + 1, n_queries)
    n = int(sizes.sum())
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    w = rng.normal(size=n_features)
    if constant_features:
        w[-constant_features:] = 0.0
    X = np.empty((n, n_features), dtype=dtype)
    y = np.empty(n)
    start = 0
    block = 1 << 16  # rows per block: bounded memory for web-sized sets
    qptr = np.concatenate([[0], np.cumsum(sizes)])
    q0 = 0
    while q0 < n_queries:
        q1 = int(np.searchsorted(qptr, qptr[q0] + block, side="right")) - 1
        q1 = max(q1, q0 + 1)
        rows = slice(int(qptr[q0]), int(qptr[q1]))
        m = rows.stop - rows.start
        raw = rng.normal(size=(m, n_features)) + rng.normal(size=(q1 - q0, 1)).repeat(
            sizes[q0:q1], axis=0)
        s = raw @ w + noise * rng.normal(size=m)
        # grade within each query: top ~5% label 4, next 10% 3, 15% 2, 20% 1
        local_q = np.repeat(np.arange(q1 - q0), sizes[q0:q1])
        order = np.lexsort((-s, local_q))
        rank = np.empty(m)
        rank[order] = np.arange(m) - np.repeat(qptr[q0:q1] - qptr[q0], sizes[q0:q1])
        frac = rank / np.repeat(sizes[q0:q1], sizes[q0:q1])
        lab = np.digitize(frac, [0.05, 0.15, 0.30, 0.50])
        y[rows] = 4 - lab
        # per-query min-max normalization (LETOR's QueryLevelNorm)
        mn = np.minimum.reduceat(raw, qptr[q0:q1] - qptr[q0], axis=0)
        mx = np.maximum.reduceat(raw, qptr[q0:q1] - qptr[q0], axis=0)
        span = np.where(mx > mn, mx - mn, 1.0)
        Xb = (raw - np.repeat(mn, sizes[q0:q1], axis=0)) / np.repeat(span, sizes[q0:q1],
                                                                      axis=0)
        Xb = np.round(Xb, 6)
        if constant_features:
            Xb[:, -constant_features:] = 0.0
        if duplicate_rate > 0:
            dup = np.flatnonzero(rng.random(m) < duplicate_rate)
            if dup.size:
                # copy a random document of the same query
                qs = local_q[dup]
                src = (qptr[q0 + qs] - qptr[q0] +
                       (rng.random(dup.size) * sizes[q0 + qs]).astype(np.int64))
                Xb[dup] = Xb[src]
        X[rows] = Xb
        start = rows.stop
        q0 = q1
    del start
    data = RankingData.from_arrays(X, y, qid, dtype=dtype, source="make_letor_like")
    data.derived.planted_weights = w
    return data


def _demo_splits():
    data = make_letor_like(n_queries=150, docs_per_query=(15, 40), n_features=12, seed=2024,
                           noise=1.5, constant_features=1, duplicate_rate=0.03)
    return data.subset(np.arange(90)), data.subset(np.arange(90, 120)), \
        data.subset(np.arange(120, 150))


def write_demo(path=DEMO_PATH):
    """Write the demo splits (done once by the developers; the file ships in the
    package)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    arrays = {"format": np.array(_DEMO_FORMAT), "version": np.array(1)}
    for name, d in zip(("train", "valid", "test"), _demo_splits()):
        arrays[f"{name}_X"] = d.X
        arrays[f"{name}_y"] = d.y
        arrays[f"{name}_qid"] = np.repeat(d.qids, d.query_sizes)
    np.savez_compressed(path, **arrays)
    return path


def load_demo():
    """The demo set: ``(train, valid, test)`` RankingData (12 features, graded labels
    0-4, planted linear model with noise; 90 / 30 / 30 queries)."""
    if not os.path.exists(DEMO_PATH):
        raise FileNotFoundError(f"the demo data {DEMO_PATH} is missing from this "
                                "installation; reinstall dfrank")
    with np.load(DEMO_PATH, allow_pickle=False) as z:
        if str(z["format"]) != _DEMO_FORMAT:
            raise ValueError(f"{DEMO_PATH} is not dfrank's demo data")
        out = []
        for name in ("train", "valid", "test"):
            out.append(RankingData.from_arrays(z[f"{name}_X"], z[f"{name}_y"],
                                               z[f"{name}_qid"], source=f"demo/{name}"))
    return tuple(out)


if __name__ == "__main__":
    print(write_demo())
