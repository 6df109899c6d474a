"""dfrank: direct maximization of rank-based metrics.

Learn linear rankers and tune few-parameter retrieval models by maximizing exactly the
metric you report (MAP, NDCG@k, P@k, MRR, ERR@k, ...), over Metzler's multinomial manifold.
"""

from ._jit import source_without_install as _source

if _source(__name__, __file__, "strategies"):   # a checkout's dfrank/ beside its strategies/
    raise ImportError(_source(__name__, __file__, "strategies"))

from ._kernels import threads as _threads  # noqa: E402
from ._jit import watch_compiles as _watch_compiles  # noqa: E402

_threads.choose_defaults()   # before any numba pool starts; the user's environment wins
_watch_compiles()            # one line on stderr when a first use compiles for long

from . import cluster, ir, metrics  # noqa: E402
from .data import datasets  # noqa: E402
from .driver import callbacks  # noqa: E402
from .driver.api import evaluate, evaluate_linear, maximize  # noqa: E402
from .comparison import Comparison, compare  # noqa: E402
from .data.ranking import RankingData  # noqa: E402
from .errors import DataFormatError, DataWarning, TuneError, UsageError  # noqa: E402
from .fusion import FusionResult, fuse  # noqa: E402
from .tuning.tuner import TuneResult, tune  # noqa: E402
from .io import load_qrels, load_run, load_svmlight  # noqa: E402
from .metrics.letor_tool import evaluate_letor  # noqa: E402
from .metrics.trec_measures import evaluate_run  # noqa: E402
from .objectives.objective import (BudgetExhausted, FunctionObjective, LinearObjective,  # noqa: E402
                        ScoringObjective)
from .driver.result import LinearRanker, Result  # noqa: E402
from .spaces import Box, Simplex  # noqa: E402
from .stats import significance  # noqa: E402
from . import strategies  # noqa: E402,F401  (the built-in strategies register themselves)

__version__ = "0.1.0"


def __getattr__(name):
    """``DirectRanker`` imports scikit-learn, so it is loaded on first use only."""
    if name == "DirectRanker":
        from .estimator import DirectRanker

        return DirectRanker
    raise AttributeError(f"module 'dfrank' has no attribute {name!r}")


__all__ = ["evaluate", "evaluate_linear", "maximize", "compare", "Comparison", "significance",
           "fuse", "FusionResult", "tune", "TuneResult", "TuneError",
           "metrics", "datasets", "callbacks", "cluster", "ir", "LinearRanker", "Result",
           "RankingData", "DataFormatError", "DataWarning", "UsageError", "load_svmlight",
           "load_qrels", "load_run", "evaluate_run", "evaluate_letor",
           "Simplex", "Box", "LinearObjective", "ScoringObjective", "FunctionObjective",
           "BudgetExhausted", "DirectRanker", "__version__"]
