"""The linear fusion of several pipelines' results, learned by :func:`dfrank.fuse`, as a
PyTerrier stage (:class:`Fusion`)."""

import math

import numpy as np

from .._optional import need

pt = need("pyterrier", "dfrank.pyterrier")

from ..fusion import FusionResult, fuse, fusion_values  # noqa: E402
from ..metrics.registry import RUN_METRIC  # noqa: E402
from ..metrics.registry import get_metric  # noqa: E402
from ..errors import DataFormatError  # noqa: E402
from ..files import VERSION, jsonable, read_json, write_json_atomic  # noqa: E402
from .frames import empty_result, need_columns, topics_qrels, with_ranks  # noqa: E402

FUSION_STAGE_FORMAT = "dfrank.pyterrier.fusion"

__all__ = ["Fusion", "FUSION_STAGE_FORMAT"]


def _frame(fused, topics=None):
    """A PyTerrier result frame of a :class:`~dfrank.fusion.FusedRun` (ranks from 0, each
    query ranked as trec_eval ranks it; the topics' other columns kept)."""
    res = fused.to_dataframe()
    if topics is not None:
        extra = [c for c in topics.columns if c not in res.columns]
        if extra:
            res = res.merge(topics[["qid"] + extra].astype({"qid": str}), on="qid",
                            how="left")
    return res


# ------------------------------------------------------------------ fusion
class Fusion(pt.Estimator):
    """The linear fusion of several pipelines' results, learned by :func:`dfrank.fuse`.

    ``pipelines``: a dict name -> transformer (or a list, named r0, r1, ...). ``fit(topics,
    qrels)`` runs each pipeline on the topics and learns the weights (``metric``, ``norm``,
    ``missing``, ``signed``, ``strategy`` and ``**options`` as :func:`dfrank.fuse`; the
    result is ``self.result``); ``transform(topics)`` runs them and fuses their results
    with those weights (each query's results normalized as in training).
    """

    def __init__(self, pipelines, metric=RUN_METRIC, *, norm="minmax", missing="zero",
                 signed=False, strategy=None, seed=0, **options):
        if not hasattr(pipelines, "items"):
            pipelines = {f"r{i}": p for i, p in enumerate(pipelines)}
        self.pipelines = dict(pipelines)
        get_metric(metric)   # a name dfrank does not compute is refused here, with the reason
        self.metric, self.norm, self.missing, self.signed = metric, norm, missing, signed
        self.strategy, self.seed, self.options = strategy, seed, options
        self.result = None
        self.weights = None   # what transform applies: the learned weights, or equal ones
        self.choice = None

    def __repr__(self):
        """The runs fused and the settings, so that fusions of other settings have other
        names (``pt.Experiment(save_dir=...)`` saves each under its own)."""
        opts = "".join(f", {k}={v!r}" for k, v in sorted(self.options.items()))
        return (f"dfrank.pyterrier.Fusion({'+'.join(self.pipelines)}, {self.metric}, "
                f"{self.norm}, missing={self.missing!r}"
                + (", signed" if self.signed else "")
                + (f", {self.strategy}" if self.strategy else "") + f", seed={self.seed}{opts})")

    def save(self, path):
        """Write the fitted fusion as a small versioned JSON (its settings and the learned
        weights, :meth:`dfrank.fusion.FusionResult.to_dict`); the pipelines it fuses are
        not in it: :meth:`load` takes them again, by name."""
        if self.result is None:
            raise ValueError("fit the fusion first (fit(topics, qrels))")
        settings = {"metric": str(self.metric), "norm": self.norm, "missing": self.missing,
                    "signed": self.signed, "strategy": self.strategy, "seed": self.seed,
                    "options": self.options}
        write_json_atomic(path, {"format": FUSION_STAGE_FORMAT, "version": VERSION,
                                 "settings": jsonable(settings),
                                 "weights": self.weights, "choice": self.choice,
                                 "result": self.result.to_dict()})

    @classmethod
    def load(cls, path, pipelines):
        """A fusion written by :meth:`save`, fusing ``pipelines`` (a dict name ->
        transformer with the names it was fitted with, or a list in that order)."""
        obj = read_json(path, FUSION_STAGE_FORMAT)
        settings, result = obj.get("settings"), obj.get("result")
        if not isinstance(settings, dict) or not isinstance(result, dict):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file needs 'settings' and "
                                  "'result'", path=path)
        res = FusionResult.from_dict(result, path)
        if not hasattr(pipelines, "items"):
            pipelines = dict(zip(res.runs, pipelines))
        if sorted(pipelines) != sorted(res.runs):
            raise ValueError(f"the fusion was fitted on pipelines {res.runs}, and these are "
                             f"{sorted(pipelines)}")
        options = settings.pop("options", None) or {}
        if not isinstance(options, dict) or set(options) & set(settings):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's 'options' must be an object "
                                  "of strategy options apart from its settings (it names "
                                  f"{sorted(set(options) & set(settings)) or options!r})",
                                  path=path)
        try:
            fusion = cls(pipelines, **settings, **options)
        except TypeError as e:
            raise DataFormatError(f"a corrupt {FUSION_STAGE_FORMAT} file: {e}",
                                  path=path) from None
        fusion.result = res
        weights = obj.get("weights") or res.weights
        if not isinstance(weights, dict) or sorted(weights) != sorted(res.runs):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's weights must name the "
                                  f"runs {res.runs}", path=path)
        bad = {k: v for k, v in weights.items()
               if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)}
        if bad:
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's weights must be finite "
                                  f"numbers, and these are not: {bad}", path=path)
        fusion.weights = {str(k): float(v) for k, v in weights.items()}
        fusion.choice = obj.get("choice")
        return fusion

    def _runs(self, topics):
        runs = {}
        for name, p in self.pipelines.items():
            res = p.transform(topics)
            need_columns(res, ("qid", "docno", "score"), f"the results of pipeline {name!r}")
            runs[name] = res[["qid", "docno", "score"]]
        return runs

    def fit(self, topics, qrels, topics_va=None, qrels_va=None):
        """Learn the weights on ``topics`` (their judgments only), then keep them only if
        they beat the equal-weight sum of the same normalized runs where that can be
        judged: on the validation topics when given, else on the held-out folds when the
        fusion cross-validates (``folds=k``). Otherwise the equal weights are kept
        (:attr:`choice` says which and why; :attr:`result` stays what was learned)."""
        kwargs = dict(self.options)
        if self.strategy is not None:
            kwargs["strategy"] = self.strategy
        qrels = topics_qrels(qrels, topics, "the fusion")
        self.result = fuse(qrels, self._runs(topics), self.metric, norm=self.norm,
                           missing=self.missing, signed=self.signed, seed=self.seed, **kwargs)
        self.weights = dict(self.result.weights)
        equal = {n: 1.0 / len(self.weights) for n in self.weights}
        learned = held = None
        if topics_va is not None and qrels_va is not None:
            runs = self._runs(topics_va)
            qrels_va = topics_qrels(qrels_va, topics_va, "the fusion's validation")
            learned, held = (float(np.mean(list(fusion_values(
                qrels_va, runs, w, self.metric, self.norm, self.missing).values())))
                for w in (self.weights, equal))
            where = "the validation topics"
        elif self.result.cv_value is not None:
            learned = self.result.cv_value
            held = self.result.baselines["CombSUM (equal weights)"]["value"]
            where = f"the {self.result.folds} held-out folds"
        self.choice = "learned weights"
        if learned is not None:
            if learned < held:
                self.weights = equal
                self.choice = (f"equal weights: the learned ones score {learned:.4f} on "
                               f"{where}, the equal ones {held:.4f}")
            else:
                self.choice = (f"learned weights: {learned:.4f} on {where}, the equal ones "
                               f"{held:.4f}")
        return self

    def transform_inputs(self):
        return [["qid", "query"]]

    def transform_outputs(self, input_columns):
        return with_ranks(c for c in input_columns if c != "features")

    def transform(self, topics):
        if len(topics) == 0:
            return empty_result(topics, drop=("features",))
        if self.result is None:
            raise ValueError("fit the fusion first (fit(topics, qrels))")
        src = topics.drop_duplicates("qid") if "query" in topics.columns else None
        import dataclasses

        applied = dataclasses.replace(self.result, weights=self.weights or self.result.weights)
        return _frame(applied.apply(self._runs(topics)), src)
