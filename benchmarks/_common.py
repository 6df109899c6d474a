"""Helpers shared by the benchmark scripts: data paths, timing with the machine's load,
ratios that refuse to compare figures measured under different loads, tables.

Every timing is a :class:`Timing`: the seconds, plus what else the machine did meanwhile:
``others``, the mean number of other processes' tasks ready to run while it ran (from
/proc/stat, less this process's own threads), and ``load``, the 1-minute load average when
it ended. Scripts print them next to each figure (:func:`load_cell`), and :func:`ratio`
declines to divide two timings whose ``others`` differ by more than :data:`LOAD_TOLERANCE`.
"""

import os
import statistics
import time

from dfrank.text import format_table

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
LOAD_TOLERANCE = 0.5   # tasks ready elsewhere: figures further apart are not compared
MIN_WINDOW = 0.3       # seconds the load is watched at least, around a short timing


def shared_path(*parts):
    """Path under ../shared/data, or None when it is absent (a fresh clone)."""
    p = os.path.join(SHARED, *parts)
    return p if os.path.exists(p) else None


LETOR_FOLDS = {"OHSUMED": "ohsumed-letor3/QueryLevelNorm/Fold{f}/{p}.txt.gz",
               "MQ2008": "mq2008-letor4/Fold{f}/{p}.txt.gz"}


def letor_folds(name, parts=("train", "vali")):
    """``[(fold, [RankingData of each part]), ...]`` for the 5 folds of a LETOR set under
    ../shared/data (``name`` in LETOR_FOLDS); folds with a part missing are left out."""
    import dfrank

    folds = []
    for f in range(1, 6):
        paths = [shared_path(LETOR_FOLDS[name].format(f=f, p=p)) for p in parts]
        if None not in paths:
            folds.append((f, [dfrank.load_svmlight(p) for p in paths]))
    return folds


def _runnable_elsewhere():
    """Tasks of other processes ready to run now: /proc/stat's procs_running less this
    process's running threads (None where /proc is missing)."""
    try:
        with open("/proc/stat") as f:
            total = next(int(line.split()[1]) for line in f
                         if line.startswith("procs_running"))
        own = 0
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/stat") as f:
                own += f.read().rsplit(")", 1)[1].split()[0] == "R"
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return max(0, total - own)


class Timing(float):
    """Seconds, with ``others`` (tasks of other processes ready to run meanwhile; None if
    unknown) and ``load`` (1-minute load average at the end)."""

    def __new__(cls, seconds, others=None, load=None):
        obj = super().__new__(cls, seconds)
        obj.others = others
        obj.load = load
        return obj

    def per(self, n):
        """This time divided by ``n`` (per item), with the same load."""
        return Timing(self / n, self.others, self.load)


class measure:
    """Context manager timing its block: ``with measure() as m: ...; m.timing``. A thread
    counts the tasks of other processes ready to run every 50 ms meanwhile (and a
    block shorter than MIN_WINDOW is watched that long): their mean is the timing's
    ``others``, the demand for the cores from elsewhere, whatever share it gets."""

    def __enter__(self):
        import threading

        self._samples = []
        self._stop = threading.Event()
        first = _runnable_elsewhere()
        if first is not None:
            self._samples.append(first)
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        self._t = time.perf_counter()
        return self

    def _watch(self):
        while not self._stop.wait(0.05):
            v = _runnable_elsewhere()
            if v is not None:
                self._samples.append(v)

    def __exit__(self, *exc):
        wall = time.perf_counter() - self._t
        if wall < MIN_WINDOW:
            time.sleep(MIN_WINDOW - wall)
        self._stop.set()
        self._thread.join()
        last = _runnable_elsewhere()
        if last is not None:
            self._samples.append(last)
        others = statistics.mean(self._samples) if self._samples else None
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
        return f"n/a (load {num.others:.1f} vs {den.others:.1f} elsewhere)"
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


LOAD_HEADER = "elsewhere / load1"
LOAD_NOTE = ("elsewhere: tasks of other processes ready to run while the row was measured "
             "(mean of /proc/stat's procs_running less this process's, every 50 ms); "
             "load1: the 1-minute load average then (this process included). Ratios "
             f"between figures whose 'elsewhere' differ by more than {LOAD_TOLERANCE} are "
             "not computed.")


def load_now():
    """The load right now (watched for MIN_WINDOW), as a zero Timing for :func:`load_cell`."""
    with measure() as m:
        pass
    return m.timing


def load_warning():
    """A line about the machine's load before the run (ratios are measured side by side
    anyway, and every figure carries its own load)."""
    with measure() as m:
        time.sleep(0.5)
    t = m.timing
    n = os.cpu_count() or 1
    busy = "?" if t.others is None else f"{t.others:.1f}"
    line = (f"before the run: {busy} tasks of other processes ready to run on {n} cores, "
            f"load average {t.load:.2f}")
    if t.others is not None and t.others > LOAD_TOLERANCE:
        line += " -- other work may skew times"
    return line


table = format_table   # the project's one table layout


def fmt_ms(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"


class busy:
    """Context manager: ``n`` processes spinning on the CPU (``while True: pass``) in this
    session, the competing load of a shared machine, for the block's duration."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        import subprocess
        import sys

        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(self.n)]
        if self.n:
            time.sleep(1.0)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()
        return False


def rss_anon():
    """This process's anonymous resident memory in bytes (RssAnon: the pages only swap
    could free; mapped files' pages, which the system drops and reads again, are left out)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise OSError("no RssAnon in /proc/self/status (Linux only)")


class AnonPeak:
    """The peak of :func:`rss_anon` from ``start()`` to ``stop()``, sampled every
    ``every`` seconds by a thread (an allocation is faulted in page by page, so one that
    matters lives for many samples)."""

    def __init__(self, every=0.002):
        import threading

        self.every, self.peak, self._stop = every, 0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_anon())
            time.sleep(self.every)

    def start(self):
        self.peak = rss_anon()
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_anon())
        return self.peak
