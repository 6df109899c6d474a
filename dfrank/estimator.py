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

import numpy as np
from sklearn.base import BaseEstimator

from .api import maximize
from .data import RankingData
from .metrics.evaluation import evaluate
from . import normalization
from .result import LinearRanker

__all__ = ["DirectRanker"]

_PARAMS = ("metric", "strategy", "restarts", "seed", "n_jobs", "ties", "normalize",
           "budget", "max_seconds")


class DirectRanker(BaseEstimator):
    """A linear ranker that maximizes a rank metric directly (:func:`dfrank.maximize`).

    Parameters
    ----------
    metric : str, default "ndcg@10"
    strategy : str, default "ca"
        A registered strategy (``dfrank strategies``); its options go as keyword arguments
        (``DirectRanker(strategy="pso", swarm_size=40)``).
    restarts : int, optional
        The strategy's restarts (its default when None).
    seed : int, default 0
    n_jobs : int, default 1
    ties : the tie policy of the metric, default "pessimistic"
    normalize : {None, "standard", "minmax"}
        Normalize each feature with constants fitted on the training rows; they are kept in
        the model (``ranker_``) and exported with it.
    budget, max_seconds : optional allowances of the search.

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

    def __init__(self, metric="ndcg@10", strategy="ca", restarts=None, seed=0, n_jobs=1,
                 ties="pessimistic", normalize=None, budget=None, max_seconds=None,
                 **strategy_options):
        self.metric = metric
        self.strategy = strategy
        self.restarts = restarts
        self.seed = seed
        self.n_jobs = n_jobs
        self.ties = ties
        self.normalize = normalize
        self.budget = budget
        self.max_seconds = max_seconds
        for k, v in strategy_options.items():   # each option an attribute, as sklearn asks
            setattr(self, k, v)

    # -------------------------------------------------------------- parameters
    @property
    def _options(self):
        """The strategy's options: the attributes that are not the named parameters nor
        fitted (trailing ``_``) nor private."""
        return {k: v for k, v in vars(self).items()
                if k not in _PARAMS and not k.endswith("_") and not k.startswith("_")}

    def get_params(self, deep=True):
        params = {k: getattr(self, k) for k in _PARAMS}
        params.update(self._options)
        return params

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

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
        names = getattr(X, "columns", None)
        data = self._data(X, y, group, qid)
        if data.n_docs and np.all(data.y == data.y[0]):
            import warnings

            warnings.warn(f"every label (y) is {data.y[0]:g}: no document is more relevant "
                          "than another, so every ranking scores the same and the weights "
                          "learned mean nothing", UserWarning, stacklevel=2)
        self.n_features_in_ = data.n_features
        if names is not None:
            self.feature_names_in_ = np.asarray([str(c) for c in names], dtype=object)
        self.norm_ = None
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
        options = self._options
        if self.restarts is not None:
            options["restarts"] = self.restarts
        res = maximize(data, self.metric, self.strategy, seed=self.seed, n_jobs=self.n_jobs,
                       budget=self.budget, max_seconds=self.max_seconds, valid=valid,
                       ties=self.ties, **options)
        self.result_ = res
        self.coef_ = np.asarray(res.weights, dtype=np.float64)
        self.best_score_ = float(res.valid_value if valid is not None else res.value)
        meta = {"metric": res.metric, "strategy": res.strategy, "train": res.value}
        if names is not None:
            meta["feature_names"] = list(self.feature_names_in_)
        self.ranker_ = LinearRanker(self.coef_, meta=meta, normalization=self.norm_)
        return self

    def _check_fitted(self, X):
        from sklearn.utils.validation import check_array, check_is_fitted

        check_is_fitted(self, "ranker_")
        X = check_array(X, dtype=np.float64, estimator="DirectRanker")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but DirectRanker is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def predict(self, X):
        """One score per row (higher ranks first): :meth:`LinearRanker.predict`."""
        X = self._check_fitted(X)
        return self.ranker_.predict(X)

    def score(self, X, y, group=None, qid=None):
        """The metric (``self.metric``, ``self.ties``) of the predictions."""
        X = self._check_fitted(X)
        data = self._data(X, y, group, qid)
        return float(evaluate(self.ranker_.predict(X), data, self.metric, ties=self.ties))
