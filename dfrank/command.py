"""The former name of :mod:`dfrank.engine_command` (a retrieval system's command line as a
run function), which stood beside ``dfrank.cli`` as if it were part of it; kept one
release, with a warning naming the new one."""

import warnings

from .engine_command import CommandError, CommandRun, end_group, sweep_stale_folders

__all__ = ["CommandRun", "CommandError", "end_group", "sweep_stale_folders"]

warnings.warn("dfrank.command is now dfrank.engine_command; the old name goes in the next "
              "release", DeprecationWarning, stacklevel=2)
