"""What a strategy's options may be, declared once per strategy class.

A :class:`~dfrank.registry.Strategy` lists its options in ``hyperparameters`` (name -> one
of the kinds below); that one declaration checks the values (``Strategy.check_options``,
which :func:`dfrank.maximize` and ``DirectRanker`` call), reads them from the command line
(``--option KEY=VALUE`` parses VALUE as the option's kind), and says what each takes in
``dfrank strategies NAME``. Constraints between options or on the objective (a step below
another, a resolution that fits a box) stay in the strategy's ``check``. The same kinds
check the command line's flags (:func:`flag_type`) and a run's budget
(:func:`dfrank.objectives.objective.check_budget`).
"""

import ast
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Int", "Count", "Workers", "Real", "Span", "Name", "Choice", "Flag", "AsIs",
           "flag_type", "check_int", "check_float", "check_choice"]


def _who(owner, name):
    """The start of a message about option ``name`` of ``owner`` (either may be empty)."""
    return ": ".join(x for x in (owner, name) if x)


def check_int(owner, name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value > high):
        bound = f">= {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"{_who(owner, name)} must be an integer {bound}, got {value!r}")


def check_float(owner, name, value, low=None, high=None, low_open=False):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        raise ValueError(f"{_who(owner, name)} must be a number "
                         f"{_range(low, high, low_open)}, got {value!r}")


def check_choice(owner, name, value, choices):
    if value not in choices:
        raise ValueError(f"{_who(owner, name)} must be one of {list(choices)}, got {value!r}")


def _range(low, high, low_open):
    out = f"{'>' if low_open else '>='} {low}" if low is not None else "finite"
    return out + (f" and <= {high}" if high is not None else "")


class _Kind:
    """An option's kind: ``check`` a value, ``parse`` the command line's text, ``describe``
    what it takes; ``none``: None is allowed too (the strategy then chooses)."""
    none = False

    def check(self, owner, name, value):
        if value is None and self.none:
            return
        self._check(owner, name, value)

    def parse(self, text):
        if self.none and text.strip() == "None":
            return None
        return self._parse(text.strip())

    def describe(self):
        return self._describe() + (", or None" if self.none else "")


@dataclass(frozen=True)
class Int(_Kind):
    """An integer in [low, high]; ``words``: names taken as well (``"auto"``)."""
    low: int
    high: int = None
    none: bool = False
    words: tuple = ()

    def _check(self, owner, name, value):
        if not (isinstance(value, str) and value in self.words):
            check_int(owner, name, value, self.low, self.high)

    def _parse(self, text):
        return text if text in self.words else int(text)

    def _describe(self):
        return (f"an integer >= {self.low}" + (f" and <= {self.high}" if self.high is not None
                                                else "")
                + "".join(f", or {w}" for w in self.words))


@dataclass(frozen=True)
class Count(_Kind):
    """A whole number >= low, as an integer or a float without a fraction (``1e6``
    evaluations); :meth:`value` gives it as an int."""
    low: int
    none: bool = False

    def _check(self, owner, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                not np.isfinite(value) or int(value) != value or value < self.low:
            raise ValueError(f"{_who(owner, name)} must be {self._describe()}, got {value!r}")

    def _parse(self, text):
        value = float(text)
        return int(value) if np.isfinite(value) and int(value) == value else value

    def _describe(self):
        return f"an integer >= {self.low}"

    def value(self, owner, name, value):
        """``value`` checked, as an int (None stays None where allowed)."""
        self.check(owner, name, value)
        return None if value is None else int(value)


@dataclass(frozen=True)
class Workers(_Kind):
    """A number of parallel workers: an integer >= 1, or -1 for every core (joblib's)."""

    def _check(self, owner, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
                not (value >= 1 or value == -1):
            raise ValueError(f"{_who(owner, name)} must be {self._describe()}, got {value!r}")

    def _parse(self, text):
        return int(text)

    def _describe(self):
        return "an integer >= 1, or -1 (every core)"


@dataclass(frozen=True)
class Real(_Kind):
    low: float = None
    high: float = None
    low_open: bool = False
    none: bool = False

    def _check(self, owner, name, value):
        check_float(owner, name, value, self.low, self.high, self.low_open)

    def _parse(self, text):
        return float(text)

    def _describe(self):
        return f"a number {_range(self.low, self.high, self.low_open)}"


@dataclass(frozen=True)
class Span(_Kind):
    """A number in [low, high], or a ``(low, high)`` pair of them with low <= high (a
    library's range option, such as differential evolution's mutation)."""
    low: float
    high: float

    def _check(self, owner, name, value):
        if isinstance(value, (tuple, list)):
            ok = len(value) == 2 and all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)
                and self.low <= v <= self.high for v in value) and value[0] <= value[1]
            if not ok:
                raise ValueError(f"{owner}: {name} must be {self._describe()}, got {value!r}")
            return
        check_float(owner, name, value, self.low, self.high)

    def _parse(self, text):
        value = ast.literal_eval(text)
        self._check("", "", value)      # ValueError: the command line names the option
        return tuple(value) if isinstance(value, list) else value

    def _describe(self):
        return (f"a number >= {self.low} and <= {self.high}, or a (low, high) pair of them "
                "with low <= high")


@dataclass(frozen=True)
class Name(_Kind):
    """A name (text) that a library looks up, such as an optimizer of its registry."""
    what: str = "a name"

    def _check(self, owner, name, value):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{owner}: {name} must be {self.what}, got {value!r}")

    def _parse(self, text):
        return text

    def _describe(self):
        return self.what


@dataclass(frozen=True, init=False)
class Choice(_Kind):
    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", tuple(values))

    def _check(self, owner, name, value):
        check_choice(owner, name, value, self.values)

    def _parse(self, text):
        return text

    def _describe(self):
        return "one of " + ", ".join(map(str, self.values))


@dataclass(frozen=True)
class Flag(_Kind):
    def _check(self, owner, name, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{owner}: {name} must be True or False, got {value!r}")

    def _parse(self, text):
        word = text.lower()
        if word not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"expected true or false, got {text!r}")
        return word in ("true", "1", "yes")

    def _describe(self):
        return "true or false"


@dataclass(frozen=True)
class AsIs(_Kind):
    """A value the strategy passes on as it is (a library's own option): a Python literal
    from the command line, else the text."""
    what: str = "a Python literal"

    def _check(self, owner, name, value):
        return None

    def _parse(self, text):
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text

    def _describe(self):
        return self.what


def flag_type(kind, name):
    """An argparse ``type=`` named ``name`` that reads a command-line flag's text as
    ``kind`` and checks it: the flags go through the same kinds as the strategies'
    options."""
    import argparse

    def parse(text):
        try:
            value = kind.parse(text)
            kind.check("", "", value)
        except (ValueError, SyntaxError, TypeError):
            raise argparse.ArgumentTypeError(f"takes {kind.describe()}, got {text!r}") from None
        return value

    parse.__name__ = name   # argparse names the type by it
    return parse
