"""Built-in strategies, installed as ``dfrank.strategies``, and the strategy registry.

    from dfrank import strategies
    strategies.available()            # every registered name and alias
    strategies.get("ca")              # the class behind a name
    @strategies.register("mine")      # add your own
    class Mine(strategies.Strategy): ...

One strategy family per module; each registers itself on import.
"""

from dfrank.registry import (FunctionStrategy, Strategy, get_strategy, register_strategy,
                             resolve, strategy_names)

from .coordinate_ascent import CoordinateAscent
from .evolution import IPOPCMAES, SmoothedES
from .grid import Grid
from .pattern import PatternSearch
from .pso import ParticleSwarm
from .random_search import RandomSearch
from .smoothed import ApproxAP, ApproxNDCG, SmoothAP, SmoothNDCG
from . import external  # noqa: E402,F401  (adapters of installed optimizer packages)
from .steepest_ascent import SteepestAscent
from .auto import Auto

# in this package's namespace the short names say which registry
get, available, register = get_strategy, strategy_names, register_strategy

__all__ = ["Strategy", "FunctionStrategy", "register", "get", "available", "resolve",
           "get_strategy", "strategy_names", "register_strategy",
           "CoordinateAscent", "SteepestAscent", "ParticleSwarm", "RandomSearch",
           "Grid", "PatternSearch", "IPOPCMAES", "SmoothedES", "ApproxNDCG", "ApproxAP",
           "SmoothNDCG", "SmoothAP", "Auto"]
