"""Exceptions raised by dfrank.

Every error names what the user gave and what would have been right.
"""

__all__ = ["DataFormatError", "DataWarning", "NoEvaluationError", "TuneError",
           "OutputError", "UsageError", "MissingExtra", "deprecated"]


class DataFormatError(ValueError):
    """A data file or array does not follow the expected format.

    Parameters
    ----------
    message : str
        What was wrong.
    path : str, optional
        The file being read.
    line : int, optional
        The 1-based line number of the offending line.
    token : str, optional
        The offending token as written in the file.
    """

    def __init__(self, message, *, path=None, line=None, token=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.token = token
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"line {line}")
        prefix = ":".join(where[:1]) + (f", {where[1]}" if len(where) > 1 else "")
        text = message if token is None else f"{message} (token {token!r})"
        super().__init__(f"{prefix}: {text}" if prefix else text)


class DataWarning(UserWarning):
    """A data file was read, but perhaps not as its author meant (the message says why)."""


class NoEvaluationError(RuntimeError):
    """A run ended before it evaluated a single point (the budget or the time limit was
    too small for the strategy to start)."""


class TuneError(RuntimeError):
    """A run of the system being tuned failed (or gave no usable run) at a parameter
    point, before any run had succeeded."""


class OutputError(OSError):
    """A result could not be written where asked (a full disk, a read-only place, an
    output that is one of the inputs). ``kept`` is where the result was saved instead
    (None when nothing needed saving)."""

    def __init__(self, message, kept=None):
        super().__init__(message)
        self.kept = kept


class UsageError(ValueError):
    """What was asked cannot be done as asked: a value, path or setting the user gave is
    wrong (a folder that is a file, a budget of 0, a cache of another system, a scheduler
    that does not answer). The message names it and what would be right; the command line
    exits with 2."""


class MissingExtra(ImportError):
    """An integration's package is not installed; the message says which extra of dfrank
    (or which package) installs it. The command line exits with 2."""


def deprecated(old, new, removed_in):
    """Warn that ``old`` (a name, an option, a module) is deprecated in favour of ``new``
    and goes in dfrank ``removed_in``: the one way dfrank deprecates something, each
    deprecation naming the release that removes it (CHANGELOG.md lists them)."""
    import warnings

    warnings.warn(f"{old} is deprecated: use {new}; it goes in dfrank {removed_in}",
                  DeprecationWarning, stacklevel=3)
