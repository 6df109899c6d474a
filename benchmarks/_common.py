"""Helpers shared by the benchmark scripts: data paths, timing with the machine's load,
ratios that refuse to compare figures measured under different loads, tables.

Every timing is a :class:`Timing`: the seconds, plus what else the machine did meanwhile:
``others``, the cores kept busy by other processes while it ran (from /proc/stat, less this
process's own CPU time), and ``load``, the 1-minute load average when it ended. Scripts
print them next to each figure (:func:`load_cell`), and :func:`ratio` declines to divide
two timings whose ``others`` differ by more than :data:`LOAD_TOLERANCE` cores.
"""

import os
import statistics
import time

from dfrank.text import format_table

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
LOAD_TOLERANCE = 0.3   # cores busy elsewhere: figures further apart are not compared
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def shared_path(*parts):
    """Path under ../shared/data, or None when it is absent (a fresh clone)."""
    p = os.path.join(SHARED, *parts)
    return p if os.path.exists(p) else None


def _busy_seconds():
    """CPU seconds the whole machine has spent busy (None where /proc/stat is missing)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    # user nice system idle iowait irq softirq steal (guest is inside user)
    return (sum(v[:8]) - v[3] - v[4]) / _TICK


def _own_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Timing(float):
    """Seconds, with ``others`` (cores busy in other processes meanwhile; None if unknown)
    and ``load`` (1-minute load average at the end)."""

    def __new__(cls, seconds, others=None, load=None):
        obj = super().__new__(cls, seconds)
        obj.others = others
        obj.load = load
        return obj


class measure:
    """Context manager timing its block: ``with measure() as m: ...; m.timing``."""

    def __enter__(self):
        self._busy, self._own, self._t = _busy_seconds(), _own_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self._t
        busy = _busy_seconds()
        others = None
        if busy is not None and self._busy is not None and wall > 0:
            others = max(0.0, (busy - self._busy - (_own_seconds() - self._own)) / wall)
        self.timing = Timing(wall, others, _load1())
        return False


def _load1():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def median_time(fn, inputs, repeat=None):
    """Median wall time of ``fn(x)`` over ``inputs`` (a different input each repetition,
    so branch predictors and caches are not flattered by one input), as a :class:`Timing`
    whose load covers all the repetitions."""
    times = []
    with measure() as m:
        for x in inputs if repeat is None else [inputs[i % len(inputs)]
                                                for i in range(repeat)]:
            t = time.perf_counter()
            fn(x)
            times.append(time.perf_counter() - t)
    return Timing(statistics.median(times), m.timing.others, m.timing.load)


def timed(fn, *args, **kw):
    """``(fn(*args, **kw), Timing)``."""
    with measure() as m:
        out = fn(*args, **kw)
    return out, m.timing


def median_of(timings):
    """The median of several timings, with the highest load any of them saw."""
    others = [t.others for t in timings if getattr(t, "others", None) is not None]
    loads = [t.load for t in timings if getattr(t, "load", None) is not None]
    return Timing(statistics.median(timings), max(others) if others else None,
                  max(loads) if loads else None)


def comparable(*timings):
    """True if every timing was measured with about the same load elsewhere."""
    others = [t.others for t in timings if getattr(t, "others", None) is not None]
    return not others or max(others) - min(others) <= LOAD_TOLERANCE


def ratio(num, den, fmt="{:.1f}x"):
    """``num / den`` formatted, or a refusal naming both loads when they differ."""
    if not comparable(num, den):
        return f"n/a (load {num.others:.2f} vs {den.others:.2f} cores)"
    return fmt.format(num / den)


def load_cell(*timings):
    """'others X cores, load Y': the worst of the given timings, for a table column."""
    others = [t.others for t in timings if getattr(t, "others", None) is not None]
    loads = [t.load for t in timings if getattr(t, "load", None) is not None]
    if not others and not loads:
        return "?"
    parts = []
    if others:
        parts.append(f"{max(others):.2f}")
    if loads:
        parts.append(f"{max(loads):.2f}")
    return " / ".join(parts)


LOAD_HEADER = "busy elsewhere / load1"
LOAD_NOTE = ("busy elsewhere: cores other processes kept busy while the row was measured "
             "(/proc/stat less this process); load1: the 1-minute load average then "
             f"(this process included). Ratios between figures whose 'busy elsewhere' "
             f"differ by more than {LOAD_TOLERANCE} cores are not computed.")


def load_warning():
    """A line about the machine's load before the run (ratios are measured side by side
    anyway, and every figure carries its own load)."""
    with measure() as m:
        time.sleep(0.5)
    t = m.timing
    n = os.cpu_count() or 1
    busy = "?" if t.others is None else f"{t.others:.2f}"
    line = f"before the run: {busy} of {n} cores busy elsewhere, load average {t.load:.2f}"
    if t.others is not None and t.others > LOAD_TOLERANCE:
        line += " -- other work may skew times"
    return line


table = format_table   # the project's one table layout


def fmt_ms(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"
