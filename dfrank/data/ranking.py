"""`RankingData`: feature matrix, graded labels and query offsets in one flat layout.

Query ``i`` owns rows ``qptr[i]:qptr[i+1]`` of ``X`` and ``y`` (queries are contiguous runs of
rows). This is the layout every kernel in :mod:`dfrank.metrics` works on.
"""

import hashlib
import os

import numpy as np

from .npy_cache import ARRAYS, read_arrays, write_arrays
from ..errors import DataFormatError

__all__ = ["RankingData", "content_digest"]

_HASH_BYTES = 64 << 20      # rows of X hashed: evenly spaced, about this many bytes


def _as_features(X, dtype=None):
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataFormatError(f"X must be a 2-D array (n_docs, n_features), got shape {X.shape}")
    if dtype is None:
        dtype = np.float32 if X.dtype == np.float32 else np.float64
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
        raise DataFormatError(f"X must hold real numbers, got dtype {X.dtype}")
    return np.ascontiguousarray(X, dtype=dtype)


def _first_bad(mask):
    return int(np.flatnonzero(mask)[0])


class Derived:
    """What is computed from a :class:`RankingData` once and kept with it, by name (the
    arrays of a RankingData are never changed after it is made)."""

    __slots__ = ("XT", "XT_rows", "metrics", "coordinate_lines", "flat_coordinates",
                 "feature_scale", "ridge_starts", "planted_weights", "largest_feature")

    def __init__(self):
        self.XT = None                  # features transposed (n_features, n_docs)
        self.XT_rows = None             # the features nonzero for some document
        self.metrics = {}               # (metric key, ties) -> BoundMetric
        self.coordinate_lines = {}      # simplex coordinate -> (u, rows sorted by u)
        self.flat_coordinates = None    # coordinates whose line changes no ranking
        self.feature_scale = None       # standard deviation of every feature
        self.ridge_starts = {}          # ridge -> standardized ridge-regression weights
        self.planted_weights = None     # the hidden model of a generated set
        self.largest_feature = None     # (max |x|, its column)

    def __setstate__(self, state):
        """Unpickled (in a worker): the transposed features read-only again, as
        :func:`dfrank._kernels.scoring.features_T` makes them."""
        slots = state[1] if isinstance(state, tuple) else state
        for k, v in slots.items():
            setattr(self, k, v)
        if self.XT is not None:
            from .._kernels.scoring import read_only

            self.XT = read_only(self.XT)


class RankingData:
    """Learning-to-rank data: features, graded labels and contiguous queries.

    Parameters
    ----------
    X : ndarray of shape (n_docs, n_features), float64 or float32, C-contiguous
    y : ndarray of shape (n_docs,), float64 graded labels >= 0
    qptr : ndarray of shape (n_queries + 1,), int64 row offsets, ``qptr[0] == 0``,
        ``qptr[-1] == n_docs``, strictly increasing (no empty query).
    qids : ndarray of shape (n_queries,), the query ids as written in the source.
    docids : ndarray of shape (n_docs,) or None
    feature_ids : ndarray of shape (n_features,), int64 original (1-based LETOR) feature ids.
    unranked : (offsets, labels) or None
        The labels of judged documents that are not rows, per query (``labels[offsets[q]:
        offsets[q + 1]]``): documents no ranking retrieved. They are never ranked, but they
        count where trec_eval counts them: in R (MAP, recall, R-precision) and in the ideal
        DCG. None for LETOR data, whose rows are every judged document.
    source : str or None, where the data came from (used in messages).

    Use :meth:`from_arrays` or :func:`dfrank.load_svmlight` rather than this constructor,
    which only checks that the pieces fit together.
    """

    __slots__ = ("X", "y", "qptr", "qids", "docids", "feature_ids", "source", "derived",
                 "unranked")

    def __init__(self, X, y, qptr, qids, docids=None, feature_ids=None, source=None,
                 unranked=None):
        X = _as_features(X)
        y = np.ascontiguousarray(y, dtype=np.float64)
        qptr = np.ascontiguousarray(qptr, dtype=np.int64)
        qids = np.asarray(qids)
        n = X.shape[0]
        if y.shape != (n,):
            raise DataFormatError(f"y has shape {y.shape}, expected ({n},) to match X")
        if qptr.ndim != 1 or len(qptr) < 2 or qptr[0] != 0 or qptr[-1] != n:
            raise DataFormatError(
                f"qptr must run from 0 to n_docs={n} with at least one query")
        if np.any(np.diff(qptr) <= 0):
            i = _first_bad(np.diff(qptr) <= 0)
            raise DataFormatError(f"query {i} is empty (qptr must be strictly increasing)")
        if qids.shape != (len(qptr) - 1,):
            raise DataFormatError(
                f"qids has shape {qids.shape}, expected ({len(qptr) - 1},) (one id per query)")
        if docids is not None:
            docids = np.asarray(docids)
            if docids.shape != (n,):
                raise DataFormatError(f"docids has shape {docids.shape}, expected ({n},)")
        if feature_ids is None:
            feature_ids = np.arange(1, X.shape[1] + 1, dtype=np.int64)
        feature_ids = np.asarray(feature_ids, dtype=np.int64)
        if feature_ids.shape != (X.shape[1],):
            raise DataFormatError(
                f"feature_ids has shape {feature_ids.shape}, expected ({X.shape[1]},)")
        self.X, self.y, self.qptr, self.qids = X, y, qptr, qids
        self.docids, self.feature_ids, self.source = docids, feature_ids, source
        if unranked is not None:
            uptr = np.ascontiguousarray(unranked[0], dtype=np.int64)
            ulab = np.ascontiguousarray(unranked[1], dtype=np.float64)
            if uptr.shape != qptr.shape or uptr[0] != 0 or uptr[-1] != len(ulab) or \
                    np.any(np.diff(uptr) < 0) or np.any(~(ulab >= 0)):
                raise DataFormatError("unranked must be (offsets per query, labels >= 0), "
                                      f"offsets of shape {qptr.shape} from 0 to the number "
                                      "of labels")
            unranked = (uptr, ulab)
        self.unranked = unranked
        self.derived = Derived()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, X, y, qid, *, sort=False, docids=None, feature_ids=None,
                    dtype=None, source=None):
        """Build from a feature matrix, labels and one query id per row.

        Parameters
        ----------
        X : array-like (n_docs, n_features)
        y : array-like (n_docs,), finite labels >= 0
        qid : array-like (n_docs,), the query id of each row
        sort : bool, default False
            Rows of one query must form one contiguous run. A qid that reappears after
            another is an error unless ``sort=True``, which groups rows by qid in order of
            first appearance, keeping the order of rows inside each query (stable).
        docids, feature_ids : optional, see :class:`RankingData`
        dtype : numpy dtype, optional
            ``float64`` (default, or ``float32`` if X already is).
        """
        X = _as_features(X, dtype)
        n = X.shape[0]
        y = np.asarray(y)
        qid = np.asarray(qid)
        if n == 0:
            raise DataFormatError("X has no rows")
        if y.shape != (n,):
            raise DataFormatError(f"y has shape {y.shape}, expected ({n},) to match X")
        if qid.shape != (n,):
            raise DataFormatError(f"qid has shape {qid.shape}, expected ({n},) to match X")
        if not np.issubdtype(y.dtype, np.number):
            raise DataFormatError(f"y must hold numbers, got dtype {y.dtype}")
        y = y.astype(np.float64)
        bad = ~np.isfinite(X)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise DataFormatError(f"X[{r}, {c}] is {X[r, c]}: features must be finite")
        if not np.all(np.isfinite(y)) or np.any(y < 0):
            i = _first_bad(~np.isfinite(y) | (y < 0))
            raise DataFormatError(f"y[{i}] is {y[i]}: labels must be finite and >= 0")
        if docids is not None:
            docids = np.asarray(docids)
        if sort:
            _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
            group_rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")
            order = np.argsort(group_rank[inverse.ravel()], kind="stable")
            if np.any(order != np.arange(n)):
                X, y, qid = X[order], y[order], qid[order]
                X = np.ascontiguousarray(X)
                if docids is not None:
                    docids = docids[order]
        qptr, qids = group_runs(qid, row_name="row")
        return cls(X, y, qptr, qids, docids=docids, feature_ids=feature_ids, source=source)

    # ------------------------------------------------------------------ shape
    @property
    def n_docs(self):
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def n_queries(self):
        return len(self.qptr) - 1

    @property
    def query_sizes(self):
        return np.diff(self.qptr)

    def __len__(self):
        return self.n_queries

    def __repr__(self):
        src = f", source={self.source!r}" if self.source else ""
        return (f"RankingData(n_queries={self.n_queries}, n_docs={self.n_docs}, "
                f"n_features={self.n_features}, dtype={self.X.dtype.name}{src})")

    # ------------------------------------------------------------------ binary cache
    def save(self, path):
        """Write a binary cache (a directory of ``.npy`` files with a versioned JSON
        header, no pickle; see :mod:`dfrank.data.npy_cache`) that :meth:`load` maps back in a
        moment."""
        return write_arrays(path, {name: getattr(self, name) for name in ARRAYS
                                   if name != "XT"},   # written from X
                            {"n_docs": self.n_docs, "n_features": self.n_features,
                             "n_queries": self.n_queries, "source": self.source})

    @classmethod
    def load(cls, path, mmap=True):
        """Read a cache written by :meth:`save`; with ``mmap`` (default) the feature matrix
        is a read-only memory map, so loading costs no time and no memory up front, and
        so is its transposed copy that the kernels read (in caches since version 2)."""
        arrays, header = read_arrays(path, mmap=mmap)
        data = cls(arrays["X"], arrays["y"], arrays["qptr"], arrays["qids"],
                   docids=arrays.get("docids"), feature_ids=arrays.get("feature_ids"),
                   source=header.get("source") or os.fspath(path))
        if arrays.get("XT") is not None:   # the kernels' layout, mapped too: no copy made
            data.derived.XT = arrays["XT"]
        return data

    # ------------------------------------------------------------------ views
    def query_rows(self, i):
        """The row slice of query ``i`` (position, not qid)."""
        return slice(int(self.qptr[i]), int(self.qptr[i + 1]))

    def subset(self, queries):
        """A new RankingData with the queries at the given positions, in that order."""
        queries = np.asarray(queries, dtype=np.int64).ravel()
        if queries.size == 0:
            raise ValueError("subset needs at least one query")
        if queries.min() < 0 or queries.max() >= self.n_queries:
            raise IndexError(f"query positions must lie in [0, {self.n_queries})")
        sizes = self.query_sizes[queries]
        rows = _rows_of(self.qptr, queries)
        qptr = np.concatenate([[0], np.cumsum(sizes)])
        unranked = None
        if self.unranked is not None:
            uptr, ulab = self.unranked
            usizes = np.diff(uptr)[queries]
            unranked = (np.concatenate([[0], np.cumsum(usizes)]),
                        ulab[_rows_of(uptr, queries)] if usizes.sum() else ulab[:0])
        return RankingData(self.X[rows], self.y[rows], qptr, self.qids[queries],
                           docids=None if self.docids is None else self.docids[rows],
                           feature_ids=self.feature_ids, source=self.source,
                           unranked=unranked)

    def scores(self, weights):
        """The scores of the linear ranker ``weights`` (one per column, in the columns'
        order) for every document: what dfrank's kernels score a model with."""
        from .._kernels.scoring import features_T, linear_scores

        return linear_scores(features_T(self), np.asarray(weights, dtype=np.float64))

    def select_features(self, feature_ids):
        """A new RankingData with only the given original feature ids, in that order."""
        feature_ids = np.asarray(feature_ids, dtype=np.int64).ravel()
        pos = {int(f): j for j, f in enumerate(self.feature_ids)}
        missing = [int(f) for f in feature_ids if int(f) not in pos]
        if missing:
            raise ValueError(
                f"feature ids {missing} are not in this data (it has ids "
                f"{int(self.feature_ids.min())}..{int(self.feature_ids.max())})")
        cols = [pos[int(f)] for f in feature_ids]
        return RankingData(np.ascontiguousarray(self.X[:, cols]), self.y, self.qptr, self.qids,
                           docids=self.docids, feature_ids=feature_ids, source=self.source)


def _rows_of(qptr, queries):
    """Row indices of the given queries, concatenated (vectorised)."""
    starts = qptr[queries]
    sizes = qptr[queries + 1] - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    return np.arange(int(sizes.sum()), dtype=np.int64) + offsets


def group_runs(qid, *, row_name="row", row_numbers=None, path=None):
    """Query offsets from one qid per row; a qid that comes back after another is an error.

    Returns ``(qptr, qids)``. ``row_numbers`` (e.g. file line numbers) name rows in messages.
    """
    qid = np.asarray(qid)
    n = len(qid)
    change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    run_qids = qid[starts]
    uniq, first, counts = np.unique(run_qids, return_index=True, return_counts=True)
    if np.any(counts > 1):
        # the first run (in file order) whose qid already had a run
        seen_twice = np.zeros(len(run_qids), dtype=bool)
        order = np.argsort(run_qids, kind="stable")
        srt = run_qids[order]
        dup = np.concatenate([[False], srt[1:] == srt[:-1]])
        seen_twice[order[dup]] = True
        r = int(np.flatnonzero(seen_twice)[0])
        q = run_qids[r]
        earlier = int(np.flatnonzero(run_qids[:r] == q)[0])
        name = (lambda i: f"{row_name} {int(row_numbers[i])}") if row_numbers is not None \
            else (lambda i: f"{row_name} {i}")
        end_earlier = starts[earlier + 1] - 1
        raise DataFormatError(
            f"qid {q} is not contiguous: its rows start at {name(starts[earlier])} "
            f"(to {name(end_earlier)}) and it appears again at {name(starts[r])} after "
            f"qid {run_qids[r - 1]}; group each query's rows together "
            f"(RankingData.from_arrays(..., sort=True) does it)",
            path=path,
            line=None if row_numbers is None else int(row_numbers[starts[r]]))
    qptr = np.concatenate([starts, [n]]).astype(np.int64)
    return qptr, run_qids


def _digest(*arrays):
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
    return h.hexdigest()


def content_digest(data):
    """Digest of labels, query layout and evenly spaced rows of the features (all of them
    when X is below 64 MB): cheap on web-sized data, and any other data set differs (what
    a checkpoint records of its data)."""
    X = data.X
    step = max(1, X.nbytes // _HASH_BYTES)
    return _digest(data.y, data.qptr, X[::step], np.array(X.shape))
