"""dfrank: direct maximization of rank-based metrics.

Learn linear rankers and tune few-parameter retrieval models by maximizing exactly the
metric you report (MAP, NDCG@k, P@k, MRR, ERR@k, ...), over Metzler's multinomial manifold.
"""

from . import callbacks, datasets, metrics
from .api import evaluate, maximize
from .compare import Comparison, compare
from .data import RankingData
from .errors import DataFormatError
from .io import load_qrels, load_run, load_svmlight
from .metrics.trec import evaluate_run
from .objective import (BudgetExhausted, FunctionObjective, LinearObjective,
                        ScoringObjective)
from .result import LinearRanker, Result
from .spaces import Box, Simplex
from .stats import significance

__version__ = "0.1.0"

__all__ = ["evaluate", "maximize", "compare", "Comparison", "significance",
           "metrics", "datasets", "callbacks", "LinearRanker", "Result", "RankingData",
           "DataFormatError", "load_svmlight", "load_qrels", "load_run", "evaluate_run",
           "Simplex", "Box", "LinearObjective", "ScoringObjective", "FunctionObjective",
           "BudgetExhausted", "__version__"]
