"""Ready-made callbacks for :func:`dfrank.maximize` (``callback=...``).

A callback receives the intermediate :class:`~dfrank.Result` after every evaluation (with
``n_jobs=1``; after every restart otherwise) and stops the run by raising
``StopIteration``; the best point found so far is returned, marked ``interrupted``.
"""

import sys
import time

__all__ = ["EarlyStopping", "Logger", "chain"]


class EarlyStopping:
    """Stop when the best value has not improved by ``min_delta`` during the last
    ``patience`` evaluations.

    Parameters
    ----------
    patience : int
        Evaluations without improvement before stopping.
    min_delta : float
        Smallest gain that counts as an improvement.
    """

    def __init__(self, patience=500, min_delta=0.0):
        if int(patience) != patience or patience < 1:
            raise ValueError(f"patience must be an integer >= 1, got {patience!r}")
        if not min_delta >= 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta!r}")
        self.patience = int(patience)
        self.min_delta = float(min_delta)
        self._best = None
        self._at = 0

    def __call__(self, result):
        if self._best is None or result.value > self._best + self.min_delta:
            self._best = result.value
            self._at = result.n_evals
        elif result.n_evals - self._at >= self.patience:
            raise StopIteration


class Logger:
    """Print the best value every ``every`` seconds (to stderr by default)."""

    def __init__(self, every=1.0, file=None):
        self.every = float(every)
        self.file = file
        self._last = None

    def __call__(self, result):
        now = time.perf_counter()
        if self._last is None or now - self._last >= self.every:
            self._last = now
            print(f"[{result.seconds:8.2f} s] {result.n_evals:8d} evals  best "
                  f"{result.metric or 'value'} {result.value:.6f}",
                  file=self.file or sys.stderr, flush=True)


def chain(*callbacks):
    """One callback calling several in turn."""
    def call(result):
        for cb in callbacks:
            cb(result)
    return call
