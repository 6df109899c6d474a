"""``DirectRanker``: dfrank as a scikit-learn estimator, with the learning-to-rank signature
of LightGBM's and XGBoost's rankers.

    from dfrank import DirectRanker
    ranker = DirectRanker(metric="ndcg@10", restarts=5).fit(X, y, qid=qid)
    scores = ranker.predict(X_test)

The queries come as ``group`` (the number of consecutive rows of each query, LightGBM's
form) or ``qid`` (one query id per row, XGBoost's; a query's rows must be contiguous).
``score(X, y, qid=...)`` is the metric. In scikit-learn's model selection the query ids
reach ``fit`` and ``score`` through metadata routing
(``sklearn.set_config(enable_metadata_routing=True)``, ``ranker.set_fit_request(qid=True)``,
``ranker.set_score_request(qid=True)``). Importing dfrank does not import scikit-learn;
``dfrank.DirectRanker`` does.
"""

import numbers

import numpy as np

from ._optional import need
from .driver.api import evaluate_linear, maximize
from .data.ranking import RankingData
from .metrics._rank import TIES
from .metrics.evaluation import evaluate
from .metrics.registry import DEFAULT_METRIC, DEFAULT_TIES
from .metrics.registry import get_metric
from .data import normalization
from .hyperparams import Int, Real
from .registry import DEFAULT_STRATEGY, resolve
from .driver.result import LinearRanker

BaseEstimator = need("sklearn.base", "DirectRanker").BaseEstimator
validate_data = need("sklearn.utils.validation", "DirectRanker").validate_data

__all__ = ["DirectRanker"]

# the kinds of the parameters that strategies' options and the command line share
_COUNT = Int(1, none=True)
_SECONDS = Real(0, low_open=True, none=True)


class DirectRanker(BaseEstimator):
    """A linear ranker that maximizes a rank metric directly (:func:`dfrank.maximize`).

    Parameters
    ----------
    metric : str, default :data:`~dfrank.metrics.DEFAULT_METRIC`
    strategy : str, default :data:`~dfrank.registry.DEFAULT_STRATEGY`
        A registered strategy (``dfrank strategies``).
    strategy_options : dict, optional
        The strategy's options (``{"swarm_size": 40}`` for ``"pso"``), one parameter so
        that a search over ``strategy`` keeps working (``GridSearchCV`` sets ``strategy``
        and ``strategy_options`` together, or leaves the options empty).
    restarts : int, optional
        The strategy's restarts (its default when None).
    seed : int, default 0
    n_jobs : int, default 1
    ties : the tie policy of the metric, default "pessimistic"
    normalize : {None, "standard", "minmax"}
        Normalize each feature with constants fitted on the training rows; they are kept in
        the model (``ranker_``) and exported with it.
    budget, max_seconds : optional allowances of the search.

    Every parameter is checked at :meth:`fit` (a constructor only stores them).

    Attributes
    ----------
    coef_ : ndarray (n_features,)
        The weights (of the normalized features when ``normalize``).
    best_score_ : float
        The metric on the training data (on ``eval_set`` when given: the restart chosen).
    ranker_ : LinearRanker
    result_ : dfrank.Result
    n_features_in_, feature_names_in_
    """

    def __init__(self, metric=DEFAULT_METRIC, strategy=DEFAULT_STRATEGY,
                 strategy_options=None, restarts=None, seed=0, n_jobs=1,
                 ties=DEFAULT_TIES, normalize=None, budget=None, max_seconds=None):
        self.metric = metric
        self.strategy = strategy
        self.strategy_options = strategy_options
        self.restarts = restarts
        self.seed = seed
        self.n_jobs = n_jobs
        self.ties = ties
        self.normalize = normalize
        self.budget = budget
        self.max_seconds = max_seconds

    # -------------------------------------------------------------- parameters
    def _validated_strategy(self):
        """Check every parameter (ValueError / TypeError naming it); the strategy that runs,
        made once (:func:`dfrank.registry.resolve`) with its options."""
        get_metric(self.metric)   # an unknown metric names the known ones
        if self.strategy_options is not None and not isinstance(self.strategy_options, dict):
            raise TypeError(f"strategy_options must be a dict or None, got "
                            f"{type(self.strategy_options).__name__}")
        options = dict(self.strategy_options or {})
        _COUNT.check("", "restarts", self.restarts)   # the kinds strategies' options use
        if self.restarts is not None:
            options["restarts"] = int(self.restarts)
        # an unknown strategy or option says so; each option checked against its kind
        # (declared once: Strategy.hyperparameters)
        strategy = resolve(self.strategy, **options)
        strategy.check_options()
        if self.seed is not None and not _is_int(self.seed):
            raise TypeError(f"seed must be an integer or None, got {self.seed!r}")
        if not _is_int(self.n_jobs) or self.n_jobs == 0:
            raise ValueError(f"n_jobs must be a nonzero integer, got {self.n_jobs!r}")
        if self.ties not in TIES:
            raise ValueError(f"ties must be one of {', '.join(TIES)}, got {self.ties!r}")
        if self.normalize not in (None, "standard", "minmax"):
            raise ValueError(f"normalize must be None, 'standard' or 'minmax', got "
                             f"{self.normalize!r}")
        _COUNT.check("", "budget", self.budget)
        _SECONDS.check("", "max_seconds", self.max_seconds)
        return strategy

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        return tags

    # -------------------------------------------------------------- data
    @staticmethod
    def _data(X, y, group, qid, what="X"):
        from sklearn.utils.validation import check_X_y

        y_in = np.asarray(y)
        if y_in.dtype.kind in "USVb":
            raise ValueError(f"the labels (y) of {what} must be numbers (graded relevances "
                             f">= 0), got dtype {y_in.dtype}")
        X, y = check_X_y(X, y, dtype=np.float64, y_numeric=True,
                         estimator="DirectRanker")
        if np.any(y < 0):
            raise ValueError(f"the labels (y) of {what} are graded relevances >= 0; got "
                             f"{y.min():g}")
        if group is not None and qid is not None:
            raise ValueError("give group (query sizes) or qid (one id per row), not both")
        if group is not None:
            sizes = np.asarray(group, dtype=np.int64).ravel()
            if np.any(sizes < 1) or sizes.sum() != X.shape[0]:
                raise ValueError(f"group must be positive query sizes adding up to the "
                                 f"{X.shape[0]} rows, got sizes adding up to {sizes.sum()}")
            qid = np.repeat(np.arange(len(sizes)), sizes)
        elif qid is None:
            import warnings

            warnings.warn("no qid or group: all rows are ranked as one query. Pass qid= (one "
                          "id per row) or group= (query sizes); in scikit-learn's model "
                          "selection route it with sklearn.set_config("
                          "enable_metadata_routing=True) and set_fit_request(qid=True) / "
                          "set_score_request(qid=True)", UserWarning, stacklevel=3)
            qid = np.zeros(X.shape[0], np.int64)
        return RankingData.from_arrays(X, y, np.asarray(qid).ravel())

    # -------------------------------------------------------------- fitting
    def fit(self, X, y, group=None, qid=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Learn the weights on (X, y) grouped by ``group`` or ``qid``; ``eval_set`` (a list
        of (X, y) pairs, the first used) chooses among the restarts, with ``eval_group`` /
        ``eval_qid`` (lists, one per pair)."""
        strategy = self._validated_strategy()
        if _on_cluster(X):
            data, valid = self._cluster_data(X, y, group, qid, eval_set)
            return self._fitted(maximize(
                data, self.metric, strategy, seed=self.seed, budget=self.budget,
                max_seconds=self.max_seconds, ties=self.ties), None,
                normalization.of_data(data))
        # feature_names_in_ and n_features_in_, as scikit-learn records them
        validate_data(self, X, reset=True, skip_check_array=True)
        data = self._data(X, y, group, qid)
        if data.n_docs and np.all(data.y == data.y[0]):
            import warnings

            warnings.warn(f"every label (y) is {data.y[0]:g}: no document is more relevant "
                          "than another, so every ranking scores the same and the weights "
                          "learned mean nothing", UserWarning, stacklevel=2)
        self.n_features_in_ = data.n_features
        self.norm_ = normalization.of_data(data)     # none, or within each query
        if self.normalize is not None:
            self.norm_ = normalization.fit(data.X, self.normalize)
            data = normalization.apply(data, self.norm_)
        valid = None
        if eval_set:
            Xv, yv = eval_set[0]
            gv = eval_group[0] if eval_group else None
            qv = eval_qid[0] if eval_qid else None
            valid = self._data(Xv, yv, gv, qv, "eval_set[0]")
            if valid.n_features != data.n_features:
                raise ValueError(f"eval_set[0] has {valid.n_features} features, X has "
                                 f"{data.n_features}")
            valid = normalization.apply(valid, self.norm_)
        res = maximize(data, self.metric, strategy, seed=self.seed, n_jobs=self.n_jobs,
                       budget=self.budget, max_seconds=self.max_seconds, valid=valid,
                       ties=self.ties)
        return self._fitted(res, valid, self.norm_)

    def _cluster_data(self, X, y, group, qid, eval_set):
        """The :class:`~dfrank.cluster.ClusterData` of Dask collections X, y and qid
        (partitioned by query), for a fit where the data lie."""
        from .cluster import from_dask

        for name, given in (("group", group), ("eval_set", eval_set),
                            ("normalize", self.normalize)):
            if given:
                raise ValueError(f"{name}= is not available for data on a Dask cluster "
                                 "(pass qid=, a Dask array or Series of one id per row; "
                                 "normalize the features where they are)")
        if qid is None or y is None:
            raise ValueError("a fit on Dask collections needs y and qid= (one id per row)")
        arrays = [a.to_dask_array(lengths=True) if hasattr(a, "to_dask_array") else a
                  for a in (X, y, qid)]
        data = from_dask(*arrays)
        self.n_features_in_ = data.n_features
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        return data, None

    def _fitted(self, res, valid, norm):
        """Record the result ``res`` of a fit as the fitted attributes; returns self."""
        self.norm_ = norm
        self.result_ = res
        self.coef_ = np.asarray(res.weights, dtype=np.float64)
        self.best_score_ = float(res.valid_value if valid is not None else res.value)
        meta = {"metric": res.metric, "strategy": res.strategy, "train": res.value}
        if hasattr(self, "feature_names_in_"):
            meta["feature_names"] = list(self.feature_names_in_)
        self.ranker_ = LinearRanker(self.coef_, meta=meta, normalization=self.norm_)
        return self

    @classmethod
    def from_ranker(cls, ranker, **params):
        """A fitted DirectRanker that predicts and scores with ``ranker`` (a
        :class:`LinearRanker`, e.g. read by :meth:`LinearRanker.load`): a model learned
        before, used where scikit-learn expects an estimator; ``params`` as the
        constructor's (the metric of :meth:`score`, ...)."""
        if not isinstance(ranker, LinearRanker):
            raise TypeError(f"ranker must be a LinearRanker, got {type(ranker).__name__}")
        est = cls(**params)
        est.ranker_ = ranker
        est.coef_ = np.asarray(ranker.weights, dtype=np.float64)
        est.n_features_in_ = ranker.n_features
        est.norm_ = ranker.normalization
        names = ranker.meta.get("feature_names")
        if names:
            est.feature_names_in_ = np.asarray([str(n) for n in names], dtype=object)
        est.best_score_ = ranker.meta.get("train")
        return est

    def _check_fitted(self, X):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "ranker_")
        # a frame's columns are checked against those seen at fit, by name and order
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X):
        """One score per row (higher ranks first): :meth:`LinearRanker.predict`; of a Dask
        array or DataFrame, a Dask array computed where its partitions are."""
        if _on_cluster(X):
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(self, "ranker_")
            arr = X.to_dask_array(lengths=True) if hasattr(X, "to_dask_array") else X
            if arr.ndim != 2 or arr.shape[1] != self.n_features_in_:
                raise ValueError(f"X has shape {arr.shape}; the model takes "
                                 f"{self.n_features_in_} features")
            return arr.rechunk({1: -1}).map_blocks(self.ranker_.predict, drop_axis=1,
                                                   dtype=np.float64)
        X = self._check_fitted(X)
        return self.ranker_.predict(X)

    def score(self, X, y, group=None, qid=None):
        """The metric (``self.metric``, ``self.ties``) of the predictions."""
        if _on_cluster(X):
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(self, "ranker_")
            data = self._cluster_data(X, y, group, qid, None)[0]
            return float(evaluate_linear(self.ranker_.weights, data, self.metric,
                                         ties=self.ties))
        X = self._check_fitted(X)
        data = self._data(X, y, group, qid)
        return float(evaluate(self.ranker_.predict(X), data, self.metric, ties=self.ties))


def _on_cluster(X):
    """Whether X is a Dask collection (checked without importing Dask)."""
    import sys

    dask = sys.modules.get("dask")
    return dask is not None and dask.is_dask_collection(X)


def _is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)
