"""dfrank inside PyTerrier pipelines (the ``pyterrier`` extra; nothing here needs Java), a
module per concern.

* :class:`Retriever` -- dfrank's built-in engine (:mod:`dfrank.ir`: BM25, Dirichlet query
  likelihood, SDM) as a retriever, or as a re-ranker of a result frame (what ``**``, a
  feature union, needs); its parameters (``k1``, ``b``, ``mu``, ``w_t``...) are
  PyTerrier parameters, so ``pt.GridSearch`` and :func:`tune` set them.
* :class:`LearnedStage` -- a learned linear ranker (:class:`dfrank.DirectRanker`) fitted on
  a result frame with a ``features`` column, grouped by ``qid``, the validation topics
  choosing among restarts as dfrank uses them. :func:`ltr` makes one, and refuses
  PyTerrier's ``form="regression"``, which would pass no query groups.
* :func:`GridSearch` -- a drop-in for ``pt.GridSearch``: the same pipeline, parameter map,
  topics, qrels and measure, searched by dfrank's strategies (:func:`dfrank.tune`: budget,
  seed, parallel runs, a cache, cross-validation).
* :class:`Fusion` -- the linear fusion of several pipelines' results, learned by
  :func:`dfrank.fuse` (normalizations, non-negative weights) and applied at ``transform``.

Result frames hold ``qid, docno, score, rank`` (and ``query``); qrels ``qid, docno, label``.
"""

from .._optional import need

# first, so that a missing PyTerrier is named before scikit-learn (the estimator's need)
need("pyterrier", "dfrank.pyterrier")

from .fused import FUSION_STAGE_FORMAT, Fusion  # noqa: E402
from .gridsearch import GridSearch, KFoldGridSearch  # noqa: E402
from .retriever import Retriever, index_of  # noqa: E402
from .stage import STAGE_FORMAT, LearnedStage, ltr  # noqa: E402

__all__ = ["Retriever", "LearnedStage", "ltr", "GridSearch", "KFoldGridSearch", "Fusion",
           "index_of", "STAGE_FORMAT", "FUSION_STAGE_FORMAT"]
