"""What ``maximize`` returns (:class:`Result`) and the model it learns (:class:`LinearRanker`).

Plain objects with named fields and a readable ``repr``, in the spirit of
``scipy.optimize.OptimizeResult``. Model and result files are JSON with a format tag and a
version, written atomically (a temporary file in the same folder, then ``os.replace``), so
an interrupted write never leaves a half file; nothing is ever pickled.
"""

import os
from dataclasses import dataclass, field

import numpy as np

from .._kernels.scoring import features_T, linear_scores, transpose_features
from ..data.ranking import RankingData
from ..errors import DataFormatError
from ..files import VERSION, jsonable, read_json, write_json_atomic, write_text_atomic
from ..metrics.evaluation import evaluate, evaluate_linear
from ..metrics.registry import DEFAULT_METRIC
from ..data.normalization import affine, has_constants
from ..data.normalization import check as normalization_check

__all__ = ["Result", "RestartResult", "QueryResult", "LinearRanker", "write_json_atomic",
           "read_json"]

RANKER_FORMAT = "dfrank.linear_ranker"
RESULT_FORMAT = "dfrank.driver.result"


class LinearRanker:
    """A linear scoring function s(x) = w . x over the original features.

    Parameters
    ----------
    weights : array-like (n_features,)
    feature_ids : array-like of int, optional
        The original (1-based LETOR) ids of the features the weights apply to.
    meta : dict, optional
        Free-form provenance (metric, strategy, train value, ...), saved with the model.
    normalization : dict, optional
        How the features were normalized before the weights apply, kept with the model:
        ``{"kind": "standard", "mean": [...], "std": [...]}`` (x - mean) / std,
        ``{"kind": "minmax", "min": [...], "max": [...]}`` (x - min) / (max - min), both
        applied by :meth:`predict` and exportable; or ``{"kind": "query"}``: the features
        were normalized within each query (LETOR's QueryLevelNorm), which :meth:`predict`
        expects already done and no search engine can apply.
    """

    def __init__(self, weights, feature_ids=None, meta=None, normalization=None):
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)):
            raise ValueError(f"weights must be a non-empty 1-D array of finite numbers, "
                             f"got {w!r}")
        self.weights = w
        if feature_ids is None:
            ids = np.arange(1, w.size + 1)
        else:
            raw = np.asarray(feature_ids)
            if raw.ndim != 1 or not (np.issubdtype(raw.dtype, np.integer) or raw.size == 0):
                raise ValueError(f"feature_ids must be a list of integers, got {feature_ids!r}")
            ids = raw.astype(np.int64)
        if ids.shape != w.shape:
            raise ValueError(f"feature_ids and weights differ in length ({ids.size} ids, "
                             f"{w.size} weights)")
        if ids.size and ids.min() < 1:
            raise ValueError(f"feature ids are LETOR's 1-based ids (>= 1), got {ids.min()}")
        uniq, counts = np.unique(ids, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"feature id {uniq[counts > 1][0]} appears twice in feature_ids")
        self.feature_ids = ids
        if meta is not None and not isinstance(meta, dict):
            raise ValueError(f"meta must be a dict, got {type(meta).__name__}")
        self.meta = dict(meta or {})
        self.normalization = normalization_check(normalization, w.size)

    @property
    def n_features(self):
        return self.weights.size

    def __repr__(self):
        return f"LinearRanker(n_features={self.n_features}, meta={self.meta})"

    def _columns(self, data):
        """``data`` with the model's features in the model's order, found by feature id
        (the data's own columns when they already are)."""
        if np.array_equal(data.feature_ids, self.feature_ids):
            return data
        have = set(data.feature_ids.tolist())
        missing = [int(f) for f in self.feature_ids if int(f) not in have]
        if missing:
            raise ValueError(f"the model uses feature ids {_ids(missing)} that the data"
                             f"{_src(data)} does not have (its ids run "
                             f"{int(data.feature_ids.min())}..{int(data.feature_ids.max())}); "
                             f"load it with n_features={int(self.feature_ids.max())}")
        return data.select_features(self.feature_ids)

    def _array_columns(self, X, columns=None):
        """The columns of a bare array that the weights apply to, in the model's order: the
        array holds the model's features in ``feature_ids`` order (``columns="model"``, its
        width is ``n_features``), or every feature id from 1 (``columns="ids"``, its width
        is the largest id). Where both widths are the same and the ids are not 1..n in
        order, the two readings differ, and ``columns`` must say which."""
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n, n_features), got shape {X.shape}")
        if columns not in (None, "model", "ids"):
            raise ValueError(f"columns must be 'model' or 'ids', got {columns!r}")
        width, largest = X.shape[1], int(self.feature_ids.max())
        in_order = np.array_equal(self.feature_ids, np.arange(1, self.n_features + 1))
        if columns is None and width == self.n_features == largest and not in_order:
            raise ValueError(
                f"X has {width} columns, and the model's feature ids "
                f"{_ids(self.feature_ids)} are 1..{largest} in another order: say whether "
                "column j holds the model's j-th feature (columns='model') or feature id "
                "j + 1 (columns='ids'); a RankingData is read by its feature ids")
        if columns == "model" or (columns is None and width == self.n_features):
            if width != self.n_features:
                raise ValueError(f"X has {width} columns; columns='model' reads the model's "
                                 f"{self.n_features} features in its order")
            return X
        if width == largest:
            return X[:, self.feature_ids - 1]
        raise ValueError(f"X has {width} columns; the model reads either its "
                         f"{self.n_features} features in its order (feature ids "
                         f"{_ids(self.feature_ids)}) or every feature id 1..{largest}")

    def predict(self, X, columns=None):
        """Scores of the rows of ``X``: a RankingData (its columns found by feature id), or
        an array holding the model's features in ``feature_ids`` order
        (``columns="model"``) or every feature id from 1 up to the largest
        (``columns="ids"``); ``columns`` is needed only where both readings fit ``X`` and
        differ."""
        if isinstance(X, RankingData):
            XT = features_T(self._columns(X))
        else:
            XT = transpose_features(self._array_columns(np.asarray(X), columns))
        if not has_constants(self.normalization):
            return linear_scores(XT, self.weights)
        shift, scale = affine(self.normalization)
        # w . ((x - shift) / scale) as a sum over the features: normalized copies, so the
        # rounding is that of scoring normalized features
        return linear_scores(np.ascontiguousarray((XT - shift[:, None]) / scale[:, None]),
                             self.weights)

    def evaluate(self, data, metrics=DEFAULT_METRIC, **kwargs):
        """``dfrank.evaluate`` of this model's scores on ``data`` (its columns found by
        feature id)."""
        plain = not has_constants(self.normalization)
        if plain and isinstance(data, RankingData):
            return evaluate_linear(self.weights, self._columns(data), metrics, **kwargs)
        return evaluate(self.predict(data), data, metrics, **kwargs)

    def to_dict(self):
        d = {"format": RANKER_FORMAT, "version": VERSION,
             "weights": self.weights.tolist(), "feature_ids": self.feature_ids.tolist(),
             "meta": jsonable(self.meta)}
        if self.normalization is not None:
            d["normalization"] = jsonable(self.normalization)
        return d

    def export(self, path=None, format="ranklib", names=None):
        """The model in the format of the system that applies it, written to ``path`` when
        given: ``"ranklib"`` (RankLib's Coordinate Ascent model), ``"es-ltr"`` /
        ``"opensearch-ltr"`` (the LTR plugin's ``model/linear``), ``"solr-ltr"``
        (``LinearModel``), ``"vespa"`` (a rank expression). ``names``: the engine's name of
        each feature (a list, or a dict feature id -> name). See :mod:`dfrank.formats`."""
        from ..formats import ranker_export

        text = ranker_export(self, format, names)
        if path is not None:
            write_text_atomic(path, text)
        return text

    @classmethod
    def load_ranklib(cls, path, *, raw_features=False, max_features=None):
        """A RankLib Coordinate Ascent model file as a ranker (other RankLib models, linear
        regression included, are refused: they are not a weights line).

        RankLib's model file does not record how its features were normalized (``-norm
        sum|zscore|linear``, within each query): the ranker scores the features as given,
        and a warning says so unless ``raw_features=True`` declares the model was trained
        without ``-norm``. For a model trained with ``-norm``, normalize each query's
        features as RankLib did before scoring them. ``max_features`` caps the feature ids
        read (default 65,536)."""
        import warnings

        from ..formats import read_ranklib

        ids, weights, kind = read_ranklib(path, max_features=max_features)
        if not raw_features:
            warnings.warn(f"{os.fspath(path)}: RankLib's model file does not record whether "
                          "it was trained with -norm (sum, zscore or linear, within each "
                          "query); dfrank scores the features as given. If it was, normalize "
                          "each query's features the same way before scoring; give "
                          "raw_features=True to say it was not", UserWarning, stacklevel=2)
        return cls(weights, ids, meta={"source": f"RankLib model {os.fspath(path)}",
                                       "ranklib": kind})

    def save(self, path):
        """Write the model as JSON (atomically)."""
        write_json_atomic(path, self.to_dict())

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; a clear error on a wrong or corrupt file."""
        return cls.from_dict(read_json(path, RANKER_FORMAT), path)

    @classmethod
    def from_dict(cls, obj, path=None):
        """The model of a dict of :meth:`to_dict` (``path`` names it in errors)."""
        if not isinstance(obj, dict) or "weights" not in obj:
            raise DataFormatError(f"a {RANKER_FORMAT} file without its 'weights' field",
                                  path=path)
        _json_numbers(obj["weights"], "weights", path)
        if obj.get("feature_ids") is not None:
            _json_numbers(obj["feature_ids"], "feature_ids", path, integer=True)
        try:
            return cls(obj["weights"], obj.get("feature_ids"), obj.get("meta"),
                       obj.get("normalization"))
        except (TypeError, ValueError) as e:
            raise DataFormatError(f"a corrupt {RANKER_FORMAT} file: {e}", path=path) \
                from None


def _json_numbers(values, field, path, integer=False):
    """Refuse a model file's list that holds anything but numbers (integers for ids): a
    string or a boolean there is an edit gone wrong, not a weight."""
    kinds = (int,) if integer else (int, float)
    if not isinstance(values, list) or not all(
            isinstance(v, kinds) and not isinstance(v, bool) for v in values):
        bad = values if not isinstance(values, list) else next(
            v for v in values if not isinstance(v, kinds) or isinstance(v, bool))
        raise DataFormatError(f"a corrupt {RANKER_FORMAT} file: {field} must be a list of "
                              f"{'integers' if integer else 'numbers'}, and it holds {bad!r}",
                              path=path)


def _ids(ids, n=8):
    """Feature ids for a message (the first ``n``)."""
    ids = [int(i) for i in ids]
    return ", ".join(map(str, ids[:n])) + (", ..." if len(ids) > n else "")


def _src(data):
    return f" ({data.source})" if getattr(data, "source", None) else ""


STATUSES = ("converged", "completed", "budget", "time", "stopped", "interrupted")


def overall_status(statuses):
    """Why a run of several parts (restarts, folds) ended, as one of :data:`STATUSES`: the
    first of interrupted, time, budget, stopped that some part reports; else converged
    when every part converged, else completed."""
    statuses = list(statuses)
    for s in ("interrupted", "time", "budget", "stopped"):
        if s in statuses:
            return s
    return "converged" if statuses and all(s == "converged" for s in statuses) \
        else "completed"


@dataclass(kw_only=True)
class QueryResult:
    """What every result over queries holds, under the same names: a fusion's
    (:class:`dfrank.fusion.FusionResult`) and a tune's (:class:`dfrank.tuning.tuner.TuneResult`).

    Attributes
    ----------
    value : float
        The mean metric over the queries (the training value).
    per_query : dict
        qid -> that query's value.
    cv : CrossValidation or None
        With ``folds``: the held-out block (:class:`dfrank.driver.crossval.CrossValidation`:
        ``folds``, ``value``, ``per_query``, ``per_fold``).
    status : str
        Why the search ended (one of :data:`STATUSES`).
    seconds : float
        Wall-clock seconds of the whole call.
    """
    value: float
    per_query: dict = field(repr=False)
    cv: object = field(default=None, repr=False)
    status: str = "completed"
    seconds: float = 0.0

    @property
    def folds(self):
        """How many folds the queries were cross-validated in (None without ``folds``)."""
        return None if self.cv is None else self.cv.folds

    @property
    def cv_value(self):
        """The cross-validated (held-out) value: ``cv.value``, or None."""
        return None if self.cv is None else self.cv.value


@dataclass
class RestartResult:
    """One restart: where it started from (its seed), where it ended, how it ended."""
    index: int
    seed: dict                      # {"entropy": ..., "spawn_key": [...]} to replay it
    value: float
    point: np.ndarray
    n_evals: int
    seconds: float
    status: str                     # one of STATUSES (or "running", for a callback)
    valid_value: float = None
    trace: dict = None
    info: dict = field(default_factory=dict)

    def to_dict(self):
        return jsonable({"index": self.index, "seed": self.seed, "value": self.value,
                         "valid_value": self.valid_value, "point": self.point,
                         "n_evals": self.n_evals, "seconds": self.seconds,
                         "status": self.status,
                         "info": {k: v for k, v in self.info.items() if k != "values"}})


@dataclass
class Result:
    """The outcome of :func:`dfrank.maximize`.

    Attributes
    ----------
    value : float
        Training metric at ``point`` (the chosen restart's best).
    point : ndarray
        The simplex point lambda (or the box point x).
    weights : ndarray or None
        Linear weights in the original feature space (simplex searches).
    valid_value : float or None
        Validation metric of the chosen point, when ``valid`` was given (the restart with
        the best validation value is chosen).
    n_evals : int
        Objective evaluations over all restarts (one per exact line search).
    seconds : float
        Wall-clock seconds of the whole run.
    trace : dict of arrays
        Best value after each improvement vs ``evals`` and ``seconds``, restarts laid end
        to end in restart order.
    restarts : list of RestartResult
    strategy, params, metric, seed
        What ran, with which hyperparameters, on which metric, from which seed.
    status : str
        Why the run ended (:func:`overall_status` of the restarts'): ``converged`` (every
        restart met its stopping rule), ``completed`` (ran its course), ``budget``,
        ``time``, ``stopped`` (a callback) or ``interrupted`` (Ctrl-C). ``interrupted`` is
        ``status == "interrupted"``.
    plateau : ndarray or None
        Exact line searches: width of the winning interval per coordinate on the chosen
        restart's last sweep (wide = robust).
    message : str
    normalization : dict or None
        How the training features were normalized (see :mod:`dfrank.data.normalization`); the
        ranker keeps it.
    """

    value: float
    point: np.ndarray
    weights: np.ndarray
    n_evals: int
    seconds: float
    trace: dict
    restarts: list
    strategy: str
    params: dict
    metric: str
    seed: object
    status: str = "completed"
    valid_value: float = None
    plateau: np.ndarray = None
    message: str = ""
    feature_ids: np.ndarray = None
    space: str = "simplex"
    normalization: dict = None

    @property
    def ranker(self):
        """The learned :class:`LinearRanker` (simplex searches only)."""
        if self.weights is None:
            raise ValueError("this result comes from a box search; it has no linear ranker "
                             "(its parameters are result.point)")
        meta = {"metric": self.metric, "strategy": self.strategy, "train_value": self.value,
                "valid_value": self.valid_value, "seed": self.seed}
        return LinearRanker(self.weights, self.feature_ids, meta, self.normalization)

    @property
    def interrupted(self):
        """Whether Ctrl-C ended the run (a budget or a time limit that ran out is not an
        interruption: see :attr:`status`)."""
        return self.status == "interrupted"

    @property
    def best_restart(self):
        return next(r for r in self.restarts if r.point is not None and
                    np.array_equal(r.point, self.point))

    def __repr__(self):
        lines = [f"  value: {self.value:.6f} ({self.metric})"]
        if self.valid_value is not None:
            lines.append(f"  valid_value: {self.valid_value:.6f}")
        lines += [f"  strategy: {self.strategy} {self.params}",
                  f"  n_evals: {self.n_evals}",
                  f"  seconds: {self.seconds:.3f}",
                  f"  restarts: {len(self.restarts)} "
                  f"({', '.join(sorted({r.status for r in self.restarts}))})",
                  f"  seed: {self.seed}",
                  f"  status: {self.status}"]
        if self.message:
            lines.append(f"  message: {self.message}")
        pt = np.array2string(np.asarray(self.point), precision=4, threshold=8)
        lines.append(f"  point: {pt}")
        return "Result(\n" + "\n".join(lines) + "\n)"

    def to_dict(self):
        return jsonable({
            "format": RESULT_FORMAT, "version": VERSION, "value": self.value,
            "valid_value": self.valid_value, "point": self.point, "weights": self.weights,
            "feature_ids": self.feature_ids, "n_evals": self.n_evals,
            "seconds": self.seconds, "trace": self.trace, "strategy": self.strategy,
            "params": {k: v for k, v in self.params.items()
                       if isinstance(v, (int, float, str, bool, type(None)))},
            "metric": self.metric, "seed": self.seed if isinstance(self.seed, (int, type(None)))
            else repr(self.seed), "status": self.status, "plateau": self.plateau,
            "message": self.message, "space": self.space,
            "normalization": self.normalization,
            "restarts": [r.to_dict() for r in self.restarts]})

    def save(self, path):
        """Write the result as JSON (atomically)."""
        write_json_atomic(path, self.to_dict())
