"""What a run of :func:`dfrank.maximize` knows as it goes, and who is told.

:class:`RunState` holds the restarts finished so far and makes the intermediate
:class:`~dfrank.Result` from them; its observers are told of every evaluation of the running
restart (in this process) and of every restart that finishes: a progress bar
(:class:`ProgressBar`), a checkpoint file (:class:`CheckpointWriter`) and the user's
callback (:class:`CallbackCaller`). None of them changes what the run computes.
"""

import time

import numpy as np

from .result import RestartResult

__all__ = ["RunState", "ProgressBar", "CheckpointWriter", "CallbackCaller", "partial_restart"]

ENDED_EARLY = ("stopped", "interrupted")   # restarts a checkpoint does not keep as done


def partial_restart(obj):
    """A RestartResult for a restart still running (for callbacks)."""
    return RestartResult(index=-1, seed={}, value=float(obj.best_value), point=obj.best_point,
                         n_evals=obj.n_evals, seconds=obj.elapsed, status="running",
                         trace=obj.trace)


class RunState:
    """The restarts of a run finished so far (``done``), its result at any moment
    (:meth:`snapshot`, made by ``assemble(restarts, seconds)``), and its observers."""

    def __init__(self, restored, assemble, observers=(), t_start=None):
        self.done = sorted(restored, key=lambda r: r.index)
        self.assemble = assemble
        self.observers = [o for o in observers if o is not None]
        self.t_start = time.perf_counter() if t_start is None else t_start

    @property
    def n_evals(self):
        return sum(r.n_evals for r in self.done)

    @property
    def best_value(self):
        return max((r.value for r in self.done), default=-np.inf)

    @property
    def wants_evaluations(self):
        """Whether an observer follows the running restart's evaluations."""
        return any(o.follows_evaluations for o in self.observers)

    def snapshot(self, current=None):
        """The Result of the restarts done (and of ``current``, a running restart)."""
        rs = self.done + ([current] if current is not None else [])
        return self.assemble(rs, time.perf_counter() - self.t_start)

    def evaluated(self, obj):
        """The running restart's objective ``obj`` made an evaluation."""
        for o in self.observers:
            if o.follows_evaluations:
                o.evaluated(self, obj)

    def finished(self, restart):
        """A restart ended; an observer may raise StopIteration to end the run."""
        self.done.append(restart)
        for o in self.observers:
            o.finished(self, restart)

    def close(self):
        for o in self.observers:
            o.close(self)


class Observer:
    """Base: told nothing unless it overrides."""
    follows_evaluations = False

    def evaluated(self, state, obj):
        pass

    def finished(self, state, restart):
        pass

    def close(self, state):
        pass


class ProgressBar(Observer):
    """Restarts done of how many (tqdm, with its estimate of the time left), and the
    evaluations and the best value so far beside them (and the sweep and line a coordinate
    ascent is at: a single restart on large data, or on a cluster, takes a while)."""
    follows_evaluations = True

    def __init__(self, n_restarts, n_done, label):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=n_restarts, initial=n_done, desc=label, unit="restart",
                        leave=False, dynamic_ncols=True)

    def _note(self, n_evals, best, where=""):
        self.bar.set_postfix_str(f"{where}{n_evals} evals, best {best:.4f}", refresh=False)
        self.bar.update(0)   # redraws when tqdm's refresh interval has passed

    def evaluated(self, state, obj):
        # a coordinate ascent says where its sweep is (one long restart still moves)
        sweep, line, lines = getattr(obj, "position", None) or (0, 0, 0)
        where = f"sweep {sweep}, line {line + 1}/{lines}, " if sweep else ""
        self._note(state.n_evals + obj.n_evals, max(state.best_value, obj.best_value), where)

    def finished(self, state, restart):
        self.bar.update(1)
        self._note(state.n_evals, state.best_value)

    def close(self, state):
        self.bar.close()


class CheckpointWriter(Observer):
    """Writes the restarts that ended on their own to a
    :class:`~dfrank.driver.checkpoint.Checkpoint` as they finish (at most every few
    seconds) and at the end; a resumable strategy's mid-restart states go through
    :meth:`progress`."""

    def __init__(self, saver):
        self.saver = saver

    def progress(self, state, index, obj, state_fn):
        self.saver.progress(state.done, index, obj, state_fn)

    def finished(self, state, restart):
        if restart.status not in ENDED_EARLY:
            self.saver.finished(restart.index)
            self.saver.write(state.done)

    def close(self, state):
        self.saver.write([r for r in state.done if r.status not in ENDED_EARLY], force=True)


class CallbackCaller(Observer):
    """Calls ``callback(intermediate Result)`` after every evaluation of a restart run in
    this process, or after every restart when restarts run in workers (``per_restart``);
    with validation data, the best point's validation value is computed once per point."""

    def __init__(self, callback, per_restart, objective, valid):
        self.callback, self.per_restart = callback, per_restart
        self.follows_evaluations = not per_restart
        self.objective, self.valid = objective, valid
        self.last_valid = {}   # the running restart's best point -> its validation value

    def evaluated(self, state, obj):
        part = partial_restart(obj)
        key = None if part.point is None else part.point.tobytes()
        part.valid_value = self.last_valid.get(key)
        result = state.snapshot(part)
        if self.valid is not None and key is not None:
            self.last_valid.clear()
            self.last_valid[key] = part.valid_value
        self.callback(result)

    def finished(self, state, restart):
        if self.per_restart:
            self.callback(state.snapshot())
