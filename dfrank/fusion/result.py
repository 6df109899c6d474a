"""What :func:`~dfrank.fusion.fuse` returns (:class:`FusionResult`), and its file."""

import math
from dataclasses import dataclass, field

import numpy as np

from ..driver.crossval import CrossValidation
from ..errors import DataFormatError
from ..files import jsonable, read_json, write_json_atomic
from ..io.fused_run import FusedRun, write_fused_run
from ..driver.result import QueryResult
from .features import build, fused_run, read_runs
from .normalize import check_missing

__all__ = ["FusionResult", "FUSION_FORMAT", "FUSION_VERSION"]

FUSION_FORMAT = "dfrank.fusion"
# 2: the cross-validation block "cv" (version 1 wrote folds, cv_value and fold_weights
# at the top level; both are read)
FUSION_VERSION = 2


@dataclass
class FusionResult(QueryResult):
    """What :func:`fuse` learned and how it compares.

    Attributes
    ----------
    weights : dict
        Run name -> weight (sum 1; >= 0 unless ``signed``).
    value : float
        The metric of the fused run on the training queries, as trec_eval computes it.
    per_query : dict
        qid -> the fused run's value.
    baselines : dict
        name -> {"value", "per_query", "p_value"} for each run alone, CombSUM (equal
        weights) and reciprocal-rank fusion (k = 60); ``p_value`` of the paired test of the
        learned fusion against it: on the fusion's held-out values with ``folds`` (each
        query valued by weights learned without it), else on its training values
        (``tested`` says which).
    cv : CrossValidation or None
        With ``folds``: the value of the run assembled from each fold's fusion learned on
        the other folds (``cv.value``), per query, and each fold's weights
        (``cv.per_fold``); ``folds`` and ``cv_value`` read them.
    status : str
        Why the search ended: ``converged``, ``completed``, ``budget``, ``time``,
        ``stopped`` or ``interrupted``.
    seconds : float
        Wall-clock seconds of the whole fusion (reading included).
    fused : FusedRun
        The fused run as arrays; a mapping ``qid -> {docno: score}``.
    """
    weights: dict
    metric: str
    norm: str
    missing: object
    signed: bool
    runs: list
    fused: FusedRun = field(repr=False)
    baselines: dict = field(default_factory=dict, repr=False)
    n_queries: int = 0
    left_out: dict = field(default_factory=dict)
    significance: str = "randomization"
    tested: str = "train"     # the learned fusion's values the baselines are tested against

    @property
    def cv_per_query(self):
        """qid -> held-out value (``cv.per_query``), or None without ``folds``."""
        return None if self.cv is None else self.cv.per_query

    @property
    def fold_weights(self):
        """Each fold's weights and held-out qids (from ``cv.per_fold``), or None."""
        return None if self.cv is None else [
            {"weights": f["weights"], "held_out": f["held_out"]} for f in self.cv.per_fold]

    def _fused(self):
        if self.fused is None:
            raise ValueError("this fusion was loaded from its file, which keeps the weights "
                             "but not the fused run: apply(runs) fuses runs with them")
        return self.fused

    def run(self):
        """The fused run as ``{qid: {docno: score}}``."""
        return self._fused().to_dict()

    def to_trec(self, path, tag="dfrank-fusion"):
        """Write the fused run as a TREC run file (atomically)."""
        return write_fused_run(path, self._fused(), tag)

    def to_dataframe(self):
        """The fused run as a pandas DataFrame (``qid, docno, score, rank``)."""
        return self._fused().to_dataframe()

    def apply(self, runs):
        """The fused run of other runs of the same systems (a dict name -> run, the names
        of :attr:`runs`), with this fusion's normalization, missing-document rule and
        weights: the learned fusion applied to new queries. A :class:`FusedRun`: read as
        the mapping ``{qid: {docno: score}}``, written with ``to_trec``-style lines or
        ``to_dataframe``."""
        if not hasattr(runs, "items") or sorted(runs) != sorted(self.runs):
            raise ValueError(f"apply takes a dict of the runs {self.runs}, got "
                             f"{sorted(runs) if hasattr(runs, 'items') else type(runs)}")
        fu = build(None, read_runs({n: runs[n] for n in self.runs}), self.norm,
                   self.missing, False)
        return fused_run(fu, np.array([self.weights[n] for n in self.runs]))

    def summary_rows(self):
        rows = [{"name": "learned fusion (train)", "value": self.value, "p_value": None}]
        if self.cv_value is not None:
            rows.append({"name": f"learned fusion ({self.folds}-fold held out)",
                         "value": self.cv_value, "p_value": None})
        for name, b in self.baselines.items():
            rows.append({"name": name, "value": b["value"], "p_value": b["p_value"]})
        return rows

    def summary(self):
        """The table ``dfrank fuse`` prints."""
        from ..text import counted, format_table

        rows = [[r["name"], f"{r['value']:.4f}",
                 "" if r["p_value"] is None else f"{r['p_value']:.3g}" +
                 (" *" if r["p_value"] < 0.05 else "")] for r in self.summary_rows()]
        weights = ", ".join(f"{n} {w:+.4f}" if self.signed else f"{n} {w:.4f}"
                            for n, w in self.weights.items())
        notes = [f"{self.metric} over {counted(self.n_queries, 'query', 'queries')}; "
                 f"weights: {weights}",
                 f"p: paired {self.significance} test of the learned fusion against each row, "
                 + (f"on its held-out values ({self.folds}-fold cross-validation: each query "
                    "valued by weights learned without it)" if self.tested == "held out"
                    else "on its training values (in-sample; --folds tests held-out values)")
                 + "; * = p < 0.05"]
        lo = self.left_out
        if lo.get("run_only"):
            n = lo["run_only"]
            notes.append(f"{counted(n, 'query', 'queries')} of the runs "
                         f"{'has' if n == 1 else 'have'} no judgments: left out")
        if lo.get("unretrieved"):
            notes.append(f"{counted(lo['unretrieved'], 'judged query', 'judged queries')} "
                         "no run retrieved: "
                         + ("counted as 0 (complete)" if lo.get("complete") else
                            "left out (as trec_eval without -c)"))
        head = "p vs held out" if self.tested == "held out" else "p vs learned"
        return format_table(rows, ["", self.metric, head]) + "\n" + "\n".join(notes)

    def to_dict(self):
        """The result as a JSON-ready dict (``format``, ``version``, weights, values,
        baselines, the cross-validation block ``cv``); :meth:`run` is the fused run."""
        return jsonable({
            "format": FUSION_FORMAT, "version": FUSION_VERSION, "metric": self.metric,
            "norm": self.norm, "missing": self.missing, "signed": self.signed,
            "weights": self.weights, "value": self.value, "n_queries": self.n_queries,
            "cv": None if self.cv is None else self.cv.to_dict(),
            "left_out": self.left_out,
            "baselines": {k: {"value": v["value"], "p_value": v["p_value"]}
                          for k, v in self.baselines.items()},
            "per_query": self.per_query, "significance": self.significance,
            "tested": self.tested, "status": self.status, "seconds": self.seconds})

    def to_json(self, path=None):
        """:meth:`to_dict`, also written atomically to ``path``; :meth:`load` reads it
        back."""
        d = self.to_dict()
        if path is not None:
            write_json_atomic(path, d)
        return d

    @classmethod
    def load(cls, path):
        """A fusion written by :meth:`to_json`: what :meth:`apply` needs (weights,
        normalization, missing-document rule) and the values it reported; the fused run
        itself is not in the file (``fused`` is None)."""
        return cls.from_dict(read_json(path, FUSION_FORMAT, newest=FUSION_VERSION), path)

    @classmethod
    def from_dict(cls, obj, path=None):
        """:meth:`load` of a dict of :meth:`to_dict` (``path`` names it in errors)."""
        weights = obj.get("weights")
        if not isinstance(weights, dict) or not weights or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
                for w in weights.values()):
            raise DataFormatError(f"a {FUSION_FORMAT} file needs 'weights': run name -> "
                                  "finite number", path=path)
        missing = obj.get("missing", "zero")
        try:
            check_missing(obj.get("norm"), missing)
        except (ValueError, TypeError) as e:
            raise DataFormatError(f"a corrupt {FUSION_FORMAT} file: {e}", path=path) from None
        base = obj.get("baselines") or {}
        return cls(weights={str(k): float(v) for k, v in weights.items()},
                   value=float(obj.get("value", math.nan)),
                   per_query=dict(obj.get("per_query") or {}),
                   metric=str(obj.get("metric", "")), norm=obj["norm"], missing=missing,
                   signed=bool(obj.get("signed", False)), runs=[str(k) for k in weights],
                   fused=None, baselines={k: dict(v, per_query={}) for k, v in base.items()
                                          if isinstance(v, dict)},
                   cv=_cv_of(obj, path), n_queries=obj.get("n_queries", 0),
                   left_out=obj.get("left_out") or {},
                   significance=obj.get("significance", "randomization"),
                   tested="held out" if obj.get("tested") == "held out" else "train",
                   status=obj.get("status", "completed"), seconds=obj.get("seconds", 0.0))

    def export(self, format):
        """The weights where fusion runs in production: ``"ranx"`` (arguments of ranx's
        ``fuse``), ``"opensearch"`` (a normalization-processor search pipeline),
        ``"elasticsearch"`` (a ``linear`` retriever). A normalization, a missing-document
        rule or a negative weight the target cannot express is refused with the reason."""
        from ..formats import fusion_export

        return fusion_export(self, format)


def _cv_of(obj, path):
    """The cross-validation block of a fusion file of either version (None without)."""
    try:
        if obj.get("cv") is not None:
            return CrossValidation.from_dict(obj["cv"])
        if obj.get("folds") is None:
            return None
        return CrossValidation(   # version 1: the held-out values per query were not kept
            folds=int(obj["folds"]), value=float(obj["cv_value"]), per_query={},
            per_fold=[dict(f) for f in obj.get("fold_weights") or []])
    except (KeyError, TypeError, ValueError) as e:
        raise DataFormatError(f"a corrupt {FUSION_FORMAT} file: its cross-validation "
                              f"block ({e!r})", path=path) from None
