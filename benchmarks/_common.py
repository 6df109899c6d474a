"""Helpers shared by the benchmark scripts: data paths, timing, tables."""

import os
import statistics
import time

from dfrank.text import format_table

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))


def shared_path(*parts):
    """Path under ../shared/data, or None when it is absent (a fresh clone)."""
    p = os.path.join(SHARED, *parts)
    return p if os.path.exists(p) else None


def median_time(fn, inputs, repeat=None):
    """Median wall time of ``fn(x)`` over ``inputs`` (a different input each repetition,
    so branch predictors and caches are not flattered by one input)."""
    times = []
    for x in inputs if repeat is None else [inputs[i % len(inputs)] for i in range(repeat)]:
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def load_warning():
    """A line warning that the machine is busy (ratios are measured side by side anyway)."""
    try:
        one, _, _ = os.getloadavg()
    except OSError:
        return ""
    n = os.cpu_count() or 1
    if one > 0.5:
        return (f"note: load average {one:.2f} on {n} cores before the run; other work may "
                "skew times")
    return f"load average {one:.2f} on {n} cores before the run"


table = format_table   # the project's one table layout


def fmt_ms(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"
