"""Tuning a retrieval system's parameters directly on a metric (:func:`tune`, :mod:`.tuner`):
the built-in engine's models, any engine's command line (:mod:`.command`), or any function
that returns a run."""

from .command import CommandError, CommandRun
from .tuner import DEFAULT_BUDGET, TuneError, TuneResult, space_of, tune

__all__ = ["tune", "TuneResult", "TuneError", "space_of", "DEFAULT_BUDGET", "CommandRun",
           "CommandError"]
