"""The tasks that run where a part of the data lives (a Dask worker): reading the part,
binding the metric to it, and each step of a fit or an evaluation on its queries.

Every task is a plain function of its arguments, so Dask can run it again on another
worker from the same arguments: a part lost with its worker is read again, and its scores
made again from the same steps, bit for bit.
"""

import functools
import hashlib
import os
import threading
from collections import OrderedDict

import numpy as np

from ..data.ranking import RankingData
from ..errors import DataFormatError
from ..linesearch.split import rows_of_line
from ..objectives.objective import LinearObjective, moved_scores
from .._kernels.threads import numba_threads_within

__all__ = ["read_part", "summary", "bind", "group_scores", "group_line", "group_moved",
           "per_query", "flat", "predict", "values_of_scores", "step_state"]

# The scores a worker reached last for each group of parts it moves (a group: the parts of
# one objective held by one worker), by the state of the chain of moves that made them, so
# that a line's task moves them by the last step only instead of the chain from its start
# (the same moves in the same order: the same values). A few groups at most.
_REACHED = OrderedDict()
_REACHED_GROUPS = 4
_REACHED_LOCK = threading.Lock()


def _worker_threads(task):
    """Run ``task`` with numba's parallel loops on as many threads as the Dask worker has
    (its ``--nthreads``), so the worker processes of one machine share its cores instead of
    each taking all of them: a cap for the task's duration, the worker thread's own count
    restored after it (dfrank leaves the threads it does not start as it found them)."""
    @functools.wraps(task)
    def capped(*args, **kwargs):
        try:
            from distributed import get_worker

            n = max(1, int(get_worker().state.nthreads))
        except (ImportError, ValueError, AttributeError):
            return task(*args, **kwargs)
        with numba_threads_within(n):
            return task(*args, **kwargs)
    return capped


def _transposed_on_disk(data):
    """Keep the part's transposed features (what the kernels read) in a file of the
    worker's local directory, mapped, instead of a second copy in memory: its pages are
    the system's to drop and read again. The file is unlinked at once (the mapping
    keeps it until the part is gone)."""
    import tempfile

    from ..data.npy_cache import write_transposed

    if data.derived.XT is not None:   # mapped from a binary cache already
        return data
    try:
        from distributed import get_worker

        folder = get_worker().local_directory
    except (ImportError, ValueError, AttributeError):
        folder = None
    fd, path = tempfile.mkstemp(prefix="dfrank-XT-", suffix=".npy", dir=folder)
    os.close(fd)
    try:
        write_transposed(path, data.X)
        data.derived.XT = np.load(path, mmap_mode="r")
    finally:
        os.unlink(path)
    return data


@_worker_threads
def read_part(source, index, n_features=None):
    """The :class:`RankingData` of part ``index``: an SVMlight/LETOR file read here (a
    path; or a binary cache of :meth:`RankingData.save`, mapped), or arrays ``(X, y,
    qid)``, or a pandas DataFrame with ``(frame, qid column, label column)``, whose other
    columns are the features in their order."""
    return _transposed_on_disk(_read(source, index, n_features))


def _read(source, index, n_features):
    if isinstance(source, (str, os.PathLike)):
        if os.path.isdir(source):   # a binary cache (RankingData.save): mapped
            data = RankingData.load(source)
            if n_features is not None and n_features != data.n_features:
                raise DataFormatError(f"{source} has {data.n_features} features, other "
                                      f"parts {n_features}")
            return data
        from ..io import load_svmlight

        return load_svmlight(source, n_features=n_features)
    if len(source) == 3 and not isinstance(source[1], str):
        X, y, qid = source
        name = f"partition {index}"
    else:
        frame, qid_col, label_col = source
        if qid_col not in frame.columns and qid_col in (frame.index.names or ()):
            frame = frame.reset_index(qid_col)   # indexed by query (ddf.set_index("qid"))
        missing = [c for c in (qid_col, label_col) if c not in frame.columns]
        if missing:
            raise DataFormatError(f"partition {index} has no column {missing[0]!r} (columns: "
                                  f"{list(frame.columns)[:8]}...)")
        features = [c for c in frame.columns if c not in (qid_col, label_col)]
        X = frame[features].to_numpy(dtype=np.float64)
        y, qid = frame[label_col].to_numpy(), frame[qid_col].to_numpy()
        name = f"partition {index}"
    X, y, qid = np.asarray(X), np.asarray(y).ravel(), np.asarray(qid).ravel()
    if X.ndim == 1:
        X = X[:, None]
    if n_features is not None and X.shape[1] < n_features:
        X = np.hstack([X, np.zeros((X.shape[0], n_features - X.shape[1]), X.dtype)])
    return RankingData.from_arrays(X, y, qid, source=name)


def summary(data):
    """What the driver needs of a part: its query ids, sizes, feature ids, largest label
    and a digest of its content (for checkpoints)."""
    from ..data.ranking import content_digest
    from ..data.normalization import within_queries

    return {"qids": data.qids, "n_docs": data.n_docs, "n_features": data.n_features,
            "feature_ids": data.feature_ids, "max_label": float(data.y.max()),
            "digest": content_digest(data), "source": data.source,
            "within_queries": within_queries(data)}


@_worker_threads
def bind(data, metric, ties, options, share=1.0):
    """The part's :class:`~dfrank.objectives.objective.LinearObjective` (its features transposed,
    the metric bound to its queries, its line caches: ``share`` of one process's, the
    part's share of the documents; ``last_line``: what its last line search's u depends
    on, and that u, for moving its scores by that line's step, :func:`_moved`)."""
    part = LinearObjective(data, metric, ties=ties, **options)
    part.line_cache_share = share
    part.last_line = (None, None)
    return part


def step_state(state, lam, delta, j, t):
    """The state after moving the scores of ``state`` by a line's step (``lam``, ``delta``,
    ``j``, ``t``): a digest of the chain of moves since the scores were made at a point,
    so equal states hold equal scores."""
    h = hashlib.blake2b(state.encode(), digest_size=16)
    for a in (lam, delta, np.array([j, t], np.float64)):
        h.update(np.ascontiguousarray(a, np.float64).tobytes())
    return h.hexdigest()


def _keep(group, state, scores):
    with _REACHED_LOCK:
        _REACHED[group] = (state, scores)
        _REACHED.move_to_end(group)
        while len(_REACHED) > _REACHED_GROUPS:
            _REACHED.popitem(last=False)


def _along(parts, group, chain):
    """The scores of ``parts`` at the end of ``chain`` = (the scores at its start, one per
    part; their state; the steps since, each (lam, delta, j, t, the state after it)):
    from the scores this worker reached last on the chain (:data:`_REACHED`), else from
    the start, moved by the steps left."""
    start, state, steps = chain
    states = [state] + [s[4] for s in steps]
    with _REACHED_LOCK:
        held = _REACHED.get(group)
    done, scores = 0, start
    if held is not None and held[0] in states:
        done = states.index(held[0])
        scores = held[1]
    for lam, delta, j, t, _ in steps[done:]:
        scores = [_moved(p, lam, delta, j, t, s) for p, s in zip(parts, scores)]
    if done < len(steps):
        _keep(group, states[-1], scores)
    return scores


@_worker_threads
def group_scores(parts, group, lam, state):
    """The scores of ``parts`` at simplex point ``lam`` (one array per part), the start of
    a chain in state ``state``."""
    scores = [p.scores(lam) for p in parts]
    _keep(group, state, scores)
    return scores


@_worker_threads
def group_line(parts, group, lam, delta, j, chain=None):
    """The side of ``parts`` of the exact line search from ``lam`` along ``delta``: one
    :class:`~dfrank.linesearch.split.LineRows` per part. ``chain``: how the scores at
    lam were reached (:func:`_along`); None: they are made here."""
    s0 = [None] * len(parts) if chain is None else _along(parts, group, chain)
    rows = []
    for part, s in zip(parts, s0):
        s, u, u_order = part.line_start(lam, delta, j, s)
        part.last_line = (_line_key(delta, j), u)
        rows.append(rows_of_line(part.bound, part.classes, s, u, u_order,
                                 part._scratch.get()))
    return rows


@_worker_threads
def group_moved(parts, group, chain):
    """The scores of ``parts`` at the end of ``chain`` (:func:`_along`): a new start for
    the chains that go on from there, so that no chain grows without bound."""
    return _along(parts, group, chain)


def _line_key(delta, j):
    """What a line's scores along it (u) depend on: the coordinate (``j`` >= 0), else the
    direction."""
    return j if j >= 0 else np.ascontiguousarray(delta, np.float64).tobytes()


def _moved(part, lam, delta, j, t, s0):
    """The part's scores after a line search from ``lam`` along ``delta`` chose ``t``,
    from those at lam, as :meth:`LinearObjective.line` carries them: into one of two
    buffers of the part that nothing holds any more (s0 may be one of them), so that a
    worker moving its scores line after line reuses its pages. The line's u is the one
    the part's last line search used when it was this line (as a rule: the step is that
    line's), not made again (a coordinate's line outside the kept ones is a pass over the
    features)."""
    key, u = part.last_line
    if u is None or key != _line_key(delta, j):
        _, u, _ = part.line_start(lam, delta, j, s0)
    out = part._scratch.get().unheld(("moved_a", "moved_b"), len(s0))
    return moved_scores(s0, u, t, lam + t * delta, out)


@_worker_threads
def per_query(part, W):
    """The part's per-query values of the linear weights ``W`` (P, d): (P, its queries)."""
    return part.per_query_weights(W)


@_worker_threads
def values_of_scores(data, scores, metric, ties, options):
    """The part's per-query values of ``scores`` (one per document of the part)."""
    from ..metrics.evaluation import evaluate

    return evaluate(np.asarray(scores).ravel(), data, metric, ties=ties, per_query=True,
                    **options)


@_worker_threads
def flat(part):
    """The part's simplex coordinates whose line changes none of its rankings."""
    return part.flat_coordinates()


@_worker_threads
def predict(data, weights):
    """The scores of the part's documents under ``weights``."""
    from .._kernels.scoring import features_T, linear_scores, nonzero_rows

    return linear_scores(features_T(data), np.asarray(weights, np.float64),
                         nonzero_rows(data))


def digest(parts):
    """One digest of the parts' digests, in order."""
    h = hashlib.sha256()
    for d in parts:
        h.update(str(d).encode())
    return h.hexdigest()
