"""Checkpoints of long runs: the restarts :func:`dfrank.maximize` has finished, written
atomically as JSON, so that a run killed part-way (Ctrl-C, SIGKILL, a lost node) resumes
where it stopped and ends with the same result as an uninterrupted run.

What makes the resumed result identical: restart ``r`` depends only on its own seed (the
r-th child of the run's SeedSequence) and its own share of the evaluation budget, so the
finished restarts are read back as they were and the others run as they would have.
(A ``max_seconds`` limit makes any run time-dependent, resumed or not.)

What makes a wrong resume impossible: the file carries a fingerprint of the run (strategy
and its hyperparameters, seed, budget, restarts, the objective's metric and ties, and a
digest of the data); a file whose fingerprint differs, that is not valid JSON, or that is
not a dfrank checkpoint is refused with the reason.

Granularity: finished restarts always; inside a restart, strategies that can resume
(``resumable = True``: the particle swarm, the grid) save their state between steps through
:meth:`dfrank.objectives.objective.Objective.save_progress` when the run is in this process
(n_jobs = 1), and continue from it. A restart of any other strategy, or one running in a
worker, runs again from its start.
"""

import os
import time

import numpy as np

from ..data.ranking import content_digest
from ..errors import DataFormatError, UsageError
from ..files import jsonable, read_json, write_json_atomic
from .result import RestartResult

__all__ = ["CHECKPOINT_FORMAT", "fingerprint", "Checkpoint", "write_record", "read_record",
           "differing"]

CHECKPOINT_FORMAT = "dfrank.driver.checkpoint"
# 2: the traces of finished restarts hold each improvement at its own evaluation number;
# 1: at the number of its batch's best point
CHECKPOINT_VERSION = 2


def fingerprint(objective, strategy, root, budget, n_restarts):
    """What a checkpoint must match to be resumed (JSON-able)."""
    metric = getattr(objective, "metric", None)
    fp = {"objective": type(objective).__name__,
          "space": repr(objective.space),
          "metric": getattr(metric, "name", None) if metric is not None else None,
          "ties": getattr(objective, "ties", None),
          "strategy": strategy.label,
          "params": {k: repr(v) for k, v in strategy.get_params().items()},
          "seed": {"entropy": str(root.entropy), "spawn_key": list(root.spawn_key)},
          "budget": budget, "restarts": int(n_restarts)}
    data = getattr(objective, "data", None)
    if data is not None:
        # data on a cluster: the digest of its parts' digests, made where they are
        fp["data"] = data.digest if not hasattr(data, "X") else content_digest(data)
    return jsonable(fp)


def write_record(path, fingerprint, **body):
    """Write a file in the checkpoint format, atomically: the format tag and version, the
    ``fingerprint`` of the work it belongs to, when it was written, and ``body`` (a
    maximize run's restarts; a tune's evaluated points, :mod:`dfrank.tuning.tuner`)."""
    write_json_atomic(path, {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
                             "fingerprint": fingerprint,
                             "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **body})


def read_record(path):
    """A file of :func:`write_record`, its fingerprint checked to be a dict."""
    d = read_json(path, CHECKPOINT_FORMAT, newest=CHECKPOINT_VERSION)
    if not isinstance(d.get("fingerprint"), dict):
        raise DataFormatError("the checkpoint has no fingerprint", path=path)
    return d


def differing(theirs, ours):
    """The keys whose values differ between two fingerprints, sorted."""
    return sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))


def _restart_to_dict(r):
    d = r.to_dict()
    d["trace"] = jsonable(r.trace)
    d["info"] = jsonable({k: v for k, v in (r.info or {}).items() if k != "values"})
    return d


def _restart_from_dict(d):
    tr = d.get("trace")
    trace = None if tr is None else {
        "evals": np.asarray(tr["evals"], dtype=np.int64),
        "seconds": np.asarray(tr["seconds"], dtype=np.float64),
        "values": np.asarray(tr["values"], dtype=np.float64)}
    info = dict(d.get("info") or {})
    if isinstance(info.get("plateau"), list):
        info["plateau"] = np.asarray(info["plateau"], dtype=np.float64)
    point = d.get("point")
    return RestartResult(index=int(d["index"]), seed=d["seed"], value=float(d["value"]),
                         point=None if point is None else np.asarray(point, np.float64),
                         n_evals=int(d["n_evals"]),
                         seconds=float(d["seconds"]),
                         status=d["status"], valid_value=d.get("valid_value"), trace=trace,
                         info=info)


class Checkpoint:
    """Reads and writes one run's checkpoint file.

    Parameters
    ----------
    path : str
        The JSON file.
    fingerprint : dict
        :func:`fingerprint` of the run.
    every : float
        Seconds between two writes at least (the last restart and an interruption are
        always written).
    """

    def __init__(self, path, fingerprint, every=5.0):
        if not (isinstance(every, (int, float)) and every >= 0):
            raise ValueError(f"checkpoint_every must be a number of seconds >= 0, got "
                             f"{every!r}")
        self.path = os.fspath(path)
        self.fingerprint = fingerprint
        self.every = float(every)
        self._last = -np.inf
        self.current = None      # the state of a restart in progress, if its strategy can resume

    def check_replaceable(self):
        """Refuse, before any work, to write over a file at :attr:`path` that is not a
        checkpoint of a run (a user's file, a tune's cache): it is left as it is."""
        if not os.path.isfile(self.path) or os.path.getsize(self.path) == 0:
            return
        try:
            d = read_record(self.path)
            if d["fingerprint"].get("kind") is not None:
                raise DataFormatError(f"a checkpoint of a {d['fingerprint']['kind']}",
                                      path=self.path)
        except DataFormatError as e:
            raise UsageError(f"{self.path}: a file that is not a dfrank run's checkpoint is "
                             f"there ({e}); it is left as it is: choose another checkpoint "
                             "path") from None

    def restore(self):
        """The finished restarts of a checkpoint written for this very run."""
        d = read_record(self.path)
        theirs = d["fingerprint"]
        differ = differing(theirs, self.fingerprint)
        if differ:
            detail = "; ".join(f"{k}: checkpoint {theirs.get(k)!r}, this run "
                               f"{self.fingerprint.get(k)!r}" for k in differ[:3])
            raise DataFormatError(f"the checkpoint was written by a different run "
                                  f"({', '.join(differ)} differ: {detail})", path=self.path)
        if d["version"] < CHECKPOINT_VERSION and d.get("restarts"):
            import warnings

            warnings.warn(f"{self.path}: its finished restarts' traces are of version 1, "
                          "where an improvement found inside a batch of points is recorded "
                          "at the batch's best point (their hitting times can be late by up "
                          "to a batch); the restarts run now record each at its own "
                          "evaluation", UserWarning, stacklevel=2)
        try:
            done = [_restart_from_dict(r) for r in d["restarts"]]
        except (KeyError, TypeError, ValueError) as e:
            raise DataFormatError(f"the checkpoint's restarts are damaged ({e!r})",
                                  path=self.path) from None
        idx = [r.index for r in done]
        if len(set(idx)) != len(idx) or any(not 0 <= i < theirs["restarts"] for i in idx):
            raise DataFormatError(f"the checkpoint's restart indices are damaged ({idx})",
                                  path=self.path)
        current = d.get("current")
        if current is not None:
            if not isinstance(current, dict) or \
                    not {"index", "objective", "strategy"} <= set(current) or \
                    current["index"] in idx or not 0 <= current["index"] < theirs["restarts"]:
                raise DataFormatError("the checkpoint's restart in progress is damaged",
                                      path=self.path)
            self.current = current
        return done, current

    def progress(self, done, index, objective, state_fn):
        """A resumable strategy's state in restart ``index`` (written when ``every``
        seconds have passed since the last write)."""
        if time.monotonic() - self._last < self.every:
            return
        self.current = {"index": int(index), "objective": objective.get_state(),
                        "strategy": jsonable(state_fn())}
        self.write(done, force=True)

    def finished(self, index):
        """Restart ``index`` ended on its own: its mid-way state is no longer needed."""
        if self.current is not None and self.current["index"] == index:
            self.current = None

    def write(self, done, force=False):
        """Write the finished restarts when ``every`` seconds have passed (or ``force``)."""
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return False
        write_record(self.path, self.fingerprint,
                     restarts=[_restart_to_dict(r) for r in done], current=self.current)
        self._last = now
        return True
