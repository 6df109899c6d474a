"""A learned linear ranker as a PyTerrier stage (:class:`LearnedStage`, :func:`ltr`)."""

import numpy as np

from .._optional import need

pt = need("pyterrier", "dfrank.pyterrier")

from ..estimator import DirectRanker  # noqa: E402
from ..errors import DataFormatError  # noqa: E402
from ..files import VERSION, jsonable, read_json, write_json_atomic  # noqa: E402
from ..driver.result import LinearRanker  # noqa: E402
from .frames import empty_result, need_columns, with_ranks  # noqa: E402

STAGE_FORMAT = "dfrank.pyterrier.stage"

__all__ = ["LearnedStage", "ltr", "STAGE_FORMAT"]


# ------------------------------------------------------------------ learned stage
def _labelled(res, qrels, what="the results"):
    """Features, labels (unjudged 0) and query ids of a result frame, its rows grouped by
    query (stable)."""
    if "features" not in res.columns:
        raise ValueError(f"{what} have no 'features' column, which a learned stage needs: "
                         "put a feature union (a ** b ** c) before it")
    need_columns(res, ("qid", "docno"), what)
    if len(res) == 0:
        raise ValueError(f"{what} have no rows: the pipeline retrieved nothing")
    res = res.copy()
    res["qid"] = res["qid"].astype(str)
    res = res.sort_values("qid", kind="stable")
    rows = [np.atleast_1d(np.asarray(f, dtype=np.float64)) for f in res["features"]]
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ValueError(f"the 'features' of {what} differ in length from row to row "
                         f"({', '.join(map(str, sorted(widths)))} values)")
    X = np.stack(rows)
    if qrels is None:
        return res, X, None
    what_q = f"the qrels of {what}"
    need_columns(qrels, ("qid", "docno"), what_q)
    col = "label" if "label" in qrels.columns else "relevance"
    if col not in qrels.columns:
        raise ValueError(f"{what_q} have no 'label' (or 'relevance') column (their columns: "
                         f"{', '.join(map(str, qrels.columns))})")
    q = qrels.copy()
    q["qid"], q["docno"] = q["qid"].astype(str), q["docno"].astype(str)
    lab = res[["qid", "docno"]].astype(str).merge(q[["qid", "docno", col]], how="left",
                                                  on=["qid", "docno"])[col]
    y = np.maximum(lab.fillna(0).to_numpy(dtype=np.float64), 0.0)
    return res, X, y


class LearnedStage(pt.Estimator):
    """A linear ranker learned by dfrank on a result frame's ``features``.

    ``fit(res_train, qrels_train, res_valid=None, qrels_valid=None)``: the rows grouped by
    ``qid`` are the queries (no glue needed); with validation results the restart best on
    them is kept (``DirectRanker``'s ``eval_set``). ``transform`` scores and ranks.
    ``ranker`` is a :class:`dfrank.DirectRanker` (one is made from ``params`` if not given).
    """

    def __init__(self, ranker=None, **params):
        if ranker is not None and params:
            raise ValueError("give a DirectRanker or its parameters, not both")
        self.ranker = ranker if ranker is not None else DirectRanker(**params)

    def __repr__(self):
        return f"dfrank.pyterrier.LearnedStage({self.ranker!r})"

    def save(self, path):
        """Write the fitted stage as a small versioned JSON (the learned weights and the
        ranker's settings); :meth:`load` reads it back into a stage that transforms
        identically."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self.ranker, "ranker_")
        params = {k: v for k, v in self.ranker.get_params().items()
                  if v is None or isinstance(v, (str, int, float, bool, dict))}
        write_json_atomic(path, {"format": STAGE_FORMAT, "version": VERSION,
                                 "params": jsonable(params),
                                 "model": self.ranker.ranker_.to_dict()})

    @classmethod
    def load(cls, path):
        """A stage written by :meth:`save`."""
        obj = read_json(path, STAGE_FORMAT)
        params = obj.get("params") or {}
        if not isinstance(params, dict) or not isinstance(obj.get("model"), dict):
            raise DataFormatError(f"a {STAGE_FORMAT} file needs 'params' and 'model'",
                                  path=path)
        ranker = LinearRanker.from_dict(obj["model"], path)
        try:
            return cls(DirectRanker.from_ranker(ranker, **params))
        except TypeError as e:
            raise DataFormatError(f"a corrupt {STAGE_FORMAT} file: {e}", path=path) from None

    def fit(self, topics_or_res_tr, qrels_tr, topics_or_res_va=None, qrels_va=None):
        res, X, y = _labelled(topics_or_res_tr, qrels_tr, "the training results")
        kwargs = {}
        if topics_or_res_va is not None and qrels_va is not None:
            vres, Xv, yv = _labelled(topics_or_res_va, qrels_va, "the validation results")
            if Xv.shape[1] != X.shape[1]:
                raise ValueError(f"the validation results have {Xv.shape[1]} features, the "
                                 f"training results {X.shape[1]}")
            kwargs = {"eval_set": [(Xv, yv)], "eval_qid": [vres["qid"].to_numpy()]}
        self.ranker.fit(X, y, qid=res["qid"].to_numpy(), **kwargs)
        return self

    def transform_inputs(self):
        return [["qid", "docno", "features"]]

    def transform_outputs(self, input_columns):
        return with_ranks(input_columns)

    def transform(self, res):
        if len(res) == 0:
            return empty_result(res)
        out, X, _ = _labelled(res, None, "the stage's input")
        out["score"] = self.ranker.predict(X)
        return pt.model.add_ranks(out)


def ltr(learner=None, form="ltr", **params):
    """The learned stage of a pipeline: :class:`LearnedStage` of ``learner`` (a
    :class:`dfrank.DirectRanker`, or one made from ``params``). ``form`` is PyTerrier's
    ``apply_learned_model`` form: only ``"ltr"`` passes query groups; ``"regression"``
    would fit every row as one query, and is refused with the fix."""
    if form != "ltr":
        raise ValueError(f"form={form!r} gives the learner no query groups, so dfrank would "
                         "rank all rows as one query; use form='ltr' (the default here: "
                         "dfrank.pyterrier.ltr(...) or pt.ltr.apply_learned_model(ranker, "
                         "form='ltr'))")
    return LearnedStage(learner, **params)
