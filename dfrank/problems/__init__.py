"""A suite of rank-metric problems for comparing black-box optimizers, as COCO, IOHprofiler
and nevergrad's benchmarks compare them: problems with instances, any optimizer plugged in
through ask/tell, runtime-to-target profiles, and IOHprofiler's file format.

    from dfrank.problems import Suite
    suite = Suite("data/")                       # the data sets, as distributed
    p = suite.problem("letor-ohsumed-ndcg@10", fold=1, seed=0, budget=1000)
    while not p.done:
        p(my_optimizer_ask())                    # maximize over the unit cube

* :mod:`.suite` -- the problems (:data:`SPECS`), how each is built, :class:`Suite`;
* :mod:`.problem` -- :class:`Problem`: evaluation counting, budget, best-so-far trace,
  targets relative to a reference;
* :mod:`.references` -- the reference values and the long run that measured them;
* :mod:`.solvers` -- optimizers driving a problem (dfrank's strategies; pycma, nevergrad
  and optuna through their ask/tell interfaces);
* :mod:`.experiment` -- :func:`bench`: optimizers x problems x instances, resumable, in
  parallel, and :func:`read_runs` of the file it writes;
* :mod:`.profiles` -- runtime-to-target ECDFs, data profiles, honesty flags;
* :mod:`.ioh` -- IOHprofiler's format (IOHanalyzer reads it).
"""

from ..objectives.objective import BudgetExhausted
from .experiment import bench, read_runs
from .problem import EPSILONS, Problem, first_hits, targets_of
from .suite import SPECS, SUBSETS, Suite, spec_of

__all__ = ["Suite", "Problem", "SPECS", "SUBSETS", "EPSILONS", "BudgetExhausted",
           "targets_of", "first_hits", "spec_of", "bench", "read_runs"]
