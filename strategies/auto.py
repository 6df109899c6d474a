"""``auto``: the default for linear rankers, a strategy picked by the training data's size.

A direct maximizer of a piecewise-constant metric on a few hundred queries overfits, and
``smoothed_es`` (a smoothed metric, several runs averaged) generalizes better there, as
LETOR's folds show (docs/decisions.md). With many queries one exact maximum
generalizes: coordinate ascent with its exact line search then reaches higher values on
held-out queries in a fraction of the time (``benchmarks/choose_default_by_size.py``; the
table is in docs/decisions.md). So ``auto`` runs ``smoothed_es`` below
:data:`MANY_QUERIES` training queries and ``ca`` with one restart from there on, and
``pattern`` on a box of parameters. The result names the strategy that ran. On data held
by a cluster (:mod:`dfrank.cluster`) it runs ``ca`` whatever the size: ``smoothed_es``
reads the features in the driver's process.
"""

from dfrank.registry import BOX_STRATEGY, Strategy, register_strategy, resolve
from dfrank.spaces import Box

MANY_QUERIES = 1000  # training queries from which one exact maximum generalizes


def choice(objective):
    """``(strategy name, its options)`` that ``auto`` runs on ``objective``."""
    if isinstance(objective.space, Box):
        return BOX_STRATEGY, {}
    data = getattr(objective, "data", None)
    if data is not None and data.n_queries >= MANY_QUERIES:
        return "ca", {"restarts": 1}
    if getattr(objective, "on_cluster", False):   # smoothed_es reads the features here
        return "ca", {"restarts": 1}
    return "smoothed_es", {}


@register_strategy("auto")
class Auto(Strategy):
    """The default for linear rankers (``dfrank.registry.DEFAULT_STRATEGY``):
    ``smoothed_es`` below 1,000 training queries, ``ca`` with one restart from there on
    (``pattern`` on a box of parameters). Options go to the strategy it picks."""

    name = "auto"
    chooses = True

    def __init__(self, **options):
        self.options = options

    def get_params(self):
        return dict(self.options)

    def set_params(self, **params):
        self.options.update(params)
        return self

    def pick(self, objective):
        """The strategy to run on ``objective``, with the options given to ``auto``."""
        name, defaults = choice(objective)
        return resolve(name, **{**defaults, **self.options})

    def check(self, objective):
        self.pick(objective).check(objective)

    def run(self, objective, rng, *, restart=0):
        raise TypeError("auto runs the strategy pick(objective) returns (dfrank.maximize "
                        "does this)")
