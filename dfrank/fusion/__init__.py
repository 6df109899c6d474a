"""Learned fusion of retrieval runs: the weights of a linear fusion that maximize a metric.

    res = dfrank.fuse("qrels.txt", {"bm25": "bm25.run", "dense": "dense.run"}, metric="map")
    res.weights            # {"bm25": 0.38, "dense": 0.62}: non-negative, summing to 1
    res.to_trec("fused.run")

Each run's scores are normalized per query (:data:`NORMS`); a document a run did not
retrieve gets ``missing`` (0, the run's lowest normalized score, or a given value). The
candidates of a query are the union of the runs' documents; they become a
:class:`~dfrank.RankingData` with one feature per run and the judgments as labels, so the
metric is dfrank's own, computed with trec_eval's conventions for runs: ties broken by
docno descending (the rows are in that order and ties are ``stable``), and judged documents
no run retrieved counted in R and in the ideal DCG (``RankingData.unranked``). The search
compares fused scores in double precision; every value reported (the fusion's, the
baselines', the held-out folds') is computed on scores rounded as trec_eval reads a run
(single precision), so it is trec_eval's value of the run written. The runs stay
arrays from the compiled reader to the fused run (:mod:`dfrank.io.docnos`): no Python
object per line.

The weights live on the simplex over the runs (w >= 0, sum w = 1), the space ranx,
OpenSearch and Elasticsearch accept. Coordinate ascent there moves along the segment from
the current weights to a vertex (all weight on one run) and back past the start, as far as
every weight stays >= 0: an exact line search restricted to that segment
(:meth:`~dfrank.linesearch.LineProfile.within`). ``signed=True`` searches Metzler's
augmented simplex instead (any registered strategy; a run may get a negative weight).

The package, a module per concern:

* :mod:`.normalize` -- the per-query normalizations (:data:`NORMS`);
* :mod:`.build` -- runs and qrels made into the data searched, and the values of weights;
* :mod:`.baselines` -- each run alone, CombSUM and RRF, with the paired tests;
* :mod:`.learn` -- :func:`fuse` (the search, through :func:`dfrank.maximize`, and the
  cross-validation of :mod:`dfrank.driver.crossval`) and :func:`fusion_values`;
* :mod:`.result` -- :class:`FusionResult` and its file;

the fused run itself, as arrays and as a TREC run file, is :mod:`dfrank.io.fused_run`.
"""

from ..io.fused_run import FusedRun
from .features import fusion_data
from .learn import FUSE_OPTIONS, FUSE_STRATEGY, fuse, fusion_values
from .normalize import NORMS, normalize
from .result import FUSION_FORMAT, FusionResult

__all__ = ["fuse", "fusion_data", "fusion_values", "FusionResult", "FusedRun", "NORMS",
           "FUSION_FORMAT", "FUSE_STRATEGY", "FUSE_OPTIONS", "normalize"]
