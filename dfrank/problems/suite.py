"""The suite of rank-metric problems: what each problem is and how it is built from data.

Three families, each built from the public data sets laid out under one folder ``root``
as they are distributed (nothing is downloaded):

* ``letor-SET-METRIC``: the linear ranker of a LETOR training set maximizing a metric, on
  Metzler's simplex (dimension: features + 1). SET is ``ohsumed``
  (``ohsumed-letor3/QueryLevelNorm/FoldF/train.txt.gz``), ``mq2008``
  (``mq2008-letor4/FoldF/train.txt.gz``) or ``lightgbm`` (LightGBM's lambdarank example,
  ``lightgbm-lambdarank/rank.train.gz`` with ``rank.train.query``; one fold); METRIC is
  ``ndcg@10``, ``map``, ``p@5`` or ``err@10`` (dfrank's conventions, ties pessimistic).
* ``tune-COLLECTION-MODEL-METRIC``: the parameters of a model of dfrank's built-in engine
  (``bm25``: k1, b; ``ql``: Dirichlet mu, log scale; ``sdm``: the three SDM weights) on
  Cranfield (``cranfield/``) or CISI (``cisi/``), METRIC ``map`` or ``nDCG@10`` with
  trec_eval's conventions. Fold F trains on the queries outside the F-th of five seeded
  query folds.
* ``fusion-mq2008-METRIC``: the weights (Metzler's augmented simplex: any sign) of a
  min-max fusion of five runs, each ranking every document of MQ2008 FoldF's training set
  by one feature: the five features with the best training MAP. METRIC ``map`` or
  ``nDCG@10``, trec_eval's conventions.
"""

import functools
import os
from dataclasses import dataclass

import numpy as np

from ..metrics.registry import RUN_TIES
from ..objectives.objective import LinearObjective, Objective
from ..spaces import Box
from . import references as refs
from .problem import Problem

__all__ = ["Suite", "ProblemSpec", "SPECS", "LETOR_SETS", "COLLECTIONS", "SUBSETS",
           "spec_of"]

FOLDS = (1, 2, 3, 4, 5)
LETOR_SETS = {
    "ohsumed": ("ohsumed-letor3/QueryLevelNorm/Fold{fold}/train.txt.gz", None, FOLDS),
    "mq2008": ("mq2008-letor4/Fold{fold}/train.txt.gz", None, FOLDS),
    "lightgbm": ("lightgbm-lambdarank/rank.train.gz", "lightgbm-lambdarank/rank.train.query",
                 (1,)),
}
LETOR_METRICS = ("ndcg@10", "map", "p@5", "err@10")
COLLECTIONS = {"cranfield": "cranfield", "cisi": "cisi"}
TUNE_MODELS = ("bm25", "ql", "sdm")
RUN_METRICS = ("map", "nDCG@10")
FUSION_RUNS = 5


@dataclass(frozen=True)
class ProblemSpec:
    """What a problem is: its id, family, data set, metric (and model, for tuning)."""
    id: str
    family: str
    source: str
    metric: str
    model: str = None
    folds: tuple = FOLDS

    def paths(self, root):
        """The files or folder under ``root`` the problem is built from, for ``fold``=1's
        pattern (the others differ by their fold number)."""
        if self.family == "tune":
            return [os.path.join(root, COLLECTIONS[self.source])]
        pattern, query, _ = LETOR_SETS[self.source]
        return [os.path.join(root, p.format(fold="{fold}")) for p in (pattern, query) if p]

    def missing(self, root):
        """The first file the problem needs that ``root`` lacks, or None."""
        for p in self.paths(root):
            for f in self.folds:
                path = p.format(fold=f)
                if not os.path.exists(path):
                    return path
        return None

    def objective(self, root, fold):
        """The problem's objective for ``fold`` (data read once per process)."""
        if fold not in self.folds:
            raise ValueError(f"{self.id} has folds {list(self.folds)}, not {fold!r}")
        if self.family == "letor":
            return LinearObjective(_letor_data(root, self.source, fold), self.metric)
        if self.family == "fusion":
            return LinearObjective(_fusion_data(root, fold), self.metric, ties=RUN_TIES)
        engine, train = _engine(root, self.source), _train_queries(root, self.source, fold)
        return EngineObjective(engine, self.model, self.metric, train)

    def fingerprint(self, root, fold):
        """A few numbers of the data a fold's problem is built from (to tell the data a
        reference was computed on from other data under the same name)."""
        if self.family == "tune":
            engine = _engine(root, self.source)
            train = _train_queries(root, self.source, fold)
            return [len(engine.docnos), len(train), int(sum(
                sum(1 for r in engine.qrels[engine.qids[i]].values() if r > 0)
                for i in train))]
        data = _letor_data(root, self.source, fold) if self.family == "letor" \
            else _fusion_data(root, fold)
        return [int(data.n_queries), int(data.n_docs), float(np.round(data.y.sum(), 6))]


class EngineObjective(Objective):
    """The mean metric, over a fold's training queries, of a model of the built-in engine
    at the parameters of a point of its Box (:data:`dfrank.ir.MODELS`' ranges)."""

    def __init__(self, engine, model, metric, train):
        from ..ir import MODELS

        spec = MODELS[model]
        self.engine, self.model, self.metric, self.train = engine, model, metric, train
        self.names = list(spec)
        space = Box([v[1] for v in spec.values()], [v[2] for v in spec.values()],
                    log=[v[3] for v in spec.values()], names=self.names)
        engine.bound(metric)
        super().__init__(space)

    def _values(self, pts):
        out = np.empty(len(pts))
        for i, x in enumerate(pts):   # one pass over the candidate rows per point
            pq = self.engine.per_query(self.model, dict(zip(self.names, x)), self.metric)
            out[i] = float(np.mean(pq[self.train]))
        return out


def _specs():
    out = []
    for name, (_, _, folds) in LETOR_SETS.items():
        out += [ProblemSpec(f"letor-{name}-{m}", "letor", name, m, folds=folds)
                for m in LETOR_METRICS]
    out += [ProblemSpec(f"tune-{c}-{model}-{m.lower()}", "tune", c, m, model=model)
            for c in COLLECTIONS for model in TUNE_MODELS for m in RUN_METRICS]
    out += [ProblemSpec(f"fusion-mq2008-{m.lower()}", "fusion", "mq2008", m)
            for m in RUN_METRICS]
    return {s.id: s for s in out}


SPECS = _specs()

# named subsets: (problem ids, folds); "small" is the one docs/benchmarks.md publishes
SUBSETS = {
    "small": (("letor-ohsumed-ndcg@10", "letor-mq2008-map", "tune-cranfield-bm25-map",
               "tune-cisi-sdm-map", "tune-cisi-ql-ndcg@10", "fusion-mq2008-map"), (1, 2)),
    "full": (tuple(SPECS), FOLDS),
}


def spec_of(problem_id):
    """The spec of a problem id, or a ValueError naming the close ones."""
    try:
        return SPECS[problem_id]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(str(problem_id), list(SPECS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else \
            f"; 'dfrank bench list' shows the {len(SPECS)} problems"
        raise ValueError(f"unknown problem {problem_id!r}{hint}") from None


class Suite:
    """The problems whose data lie under ``root`` (laid out as the data sets are
    distributed; see the module's docstring), with their reference values.

    Parameters
    ----------
    root : folder holding ``ohsumed-letor3/``, ``mq2008-letor4/``, ``lightgbm-lambdarank/``,
        ``cranfield/``, ``cisi/`` (any of them: problems without their data are listed in
        :attr:`missing`)
    references : path of a references file (default: the suite's own, shipped with dfrank)
    """

    def __init__(self, root, references=None):
        root = os.fspath(root)
        if not os.path.isdir(root):
            raise FileNotFoundError(f"{root}: no such folder (the folder of the data sets)")
        self.root = root
        self._references, self._references_path = None, references
        self.missing = {}
        self.specs = {}
        for pid, spec in SPECS.items():
            lacks = spec.missing(root)
            if lacks is None:
                self.specs[pid] = spec
            else:
                self.missing[pid] = lacks

    def __repr__(self):
        return f"Suite({self.root!r}: {len(self.specs)} problems, {len(self.missing)} missing)"

    def select(self, problems=None, folds=None):
        """``[(spec, fold), ...]`` of problem ids or a subset name (default: every problem
        with data), restricted to ``folds`` where given."""
        if problems is None:
            ids, sub_folds = list(self.specs), None
        elif isinstance(problems, str) and problems in SUBSETS:
            ids, sub_folds = SUBSETS[problems]
        else:
            ids, sub_folds = [problems] if isinstance(problems, str) else list(problems), None
        out = []
        for pid in ids:
            spec = spec_of(pid)
            if pid not in self.specs:
                raise FileNotFoundError(f"{pid} needs {self.missing[pid]}, which is absent")
            want = folds if folds is not None else sub_folds
            for f in spec.folds:
                if want is None or f in want:
                    out.append((spec, f))
        if not out:
            raise ValueError(f"no problem instance selected (problems {problems!r}, folds "
                             f"{folds!r})")
        return out

    @property
    def references(self):
        """The references file's contents (read when first needed)."""
        if self._references is None:
            self._references = refs.load(self._references_path)
        return self._references

    def reference(self, problem_id, fold):
        return refs.lookup(self.references, spec_of(problem_id), self.root, fold)

    def line_cost(self, problem_id, fold):
        """The evaluations an exact line search counts on this problem and fold, as the
        references file stores it (measured with the references)."""
        return refs.line_cost_of(self.references, spec_of(problem_id), fold)

    def problem(self, problem_id, fold=1, seed=0, *, budget=None, max_seconds=None,
                line_cost="reference"):
        """The instance (``fold``, ``seed``) of a problem, ready for an ask/tell loop.

        ``line_cost``: the evaluations an exact line search counts (dfrank's strategies on
        :attr:`Problem.objective`): ``"reference"`` (the references file's, measured with
        them), ``"measured"`` (on this machine, now) or an int."""
        spec = spec_of(problem_id)
        if problem_id not in self.specs:
            raise FileNotFoundError(f"{problem_id} needs {self.missing[problem_id]}, which "
                                    "is absent")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        objective = spec.objective(self.root, fold)
        reference = self.reference(problem_id, fold)
        if line_cost == "reference":
            line_cost = self.line_cost(problem_id, fold)
        elif line_cost == "measured":
            line_cost = refs.measure_line_costs(self.root, [(spec, fold)])[0][0]
        return Problem(spec, objective, fold=fold, seed=seed,
                       reference=reference, budget=budget,
                       max_seconds=max_seconds, line_cost=line_cost)


# ---------------------------------------------------------------- data, once per process
@functools.lru_cache(maxsize=8)
def _letor_data(root, name, fold):
    from ..io import load_svmlight

    pattern, query, _ = LETOR_SETS[name]
    return load_svmlight(os.path.join(root, pattern.format(fold=fold)),
                         query_file=os.path.join(root, query) if query else None)


@functools.lru_cache(maxsize=2)
def _engine(root, collection):
    from .. import ir

    load = {"cranfield": ir.load_cranfield, "cisi": ir.load_cisi}[collection]
    docs, topics, qrels = load(os.path.join(root, COLLECTIONS[collection]))
    return ir.Engine(docs, topics, qrels)


def _train_queries(root, collection, fold):
    """Positions (in the engine's query order) of the queries outside the fold-th of five
    query folds (a permutation seeded by 0)."""
    n = len(_engine(root, collection).qids)
    order = np.random.default_rng(0).permutation(n)
    held = np.array_split(order, len(FOLDS))[fold - 1]
    return np.setdiff1d(np.arange(n), held)


@functools.lru_cache(maxsize=5)
def _fusion_data(root, fold):
    """Five feature runs of MQ2008 FoldF's training set, min-max fused (as RankingData)."""
    from ..fusion import fusion_data
    from ..metrics.evaluation import evaluate

    data = _letor_data(root, "mq2008", fold)
    qids = [str(q) for q in data.qids]
    docs = np.asarray(data.docids if data.docids is not None else
                      np.arange(data.n_docs)).astype(str)
    worth = [evaluate(data.X[:, j], data, "map", ties=RUN_TIES)
             if np.ptp(data.X[:, j]) > 0 else -1.0 for j in range(data.n_features)]
    best = np.argsort(worth, kind="stable")[::-1][:FUSION_RUNS]
    qrels, runs = {}, {f"f{data.feature_ids[j]}": {} for j in best}
    for i, q in enumerate(qids):
        lo, hi = data.qptr[i], data.qptr[i + 1]
        qrels[q] = dict(zip(docs[lo:hi], data.y[lo:hi].astype(int).tolist()))
        for j in best:
            runs[f"f{data.feature_ids[j]}"][q] = dict(zip(docs[lo:hi],
                                                          data.X[lo:hi, j].tolist()))
    return fusion_data(qrels, runs, "minmax")
