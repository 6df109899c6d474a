"""A metric's entry point, chosen where the metric is bound (dfrank.metrics._drivers): the
serial twin runs while the parallel entry point compiles in a helper (the compile service's
dfrank._jit.background), by what this machine measured of their compile times."""

import importlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from dfrank import _jit
from dfrank.metrics import _drivers


def _entry():
    pass


class _Dispatcher:
    py_func = staticmethod(_entry)

    def __init__(self, name, signatures=()):
        self.name = name
        self.signatures = list(signatures)


class _Compiling:
    """A helper started ``age`` seconds ago that ends after ``running`` polls (or when
    waited for)."""

    def __init__(self, running, age=0.0):
        self.running = running
        self.polls = 0
        self.waited = 0
        self.started = time.monotonic() - age

    def poll(self):
        self.polls += 1
        return None if self.polls <= self.running else 0

    def wait(self, timeout=None):
        self.waited += 1
        self.running = 0
        return 0


@pytest.fixture
def cold(monkeypatch):
    """Two threads, no entry point loaded or on disk, helpers allowed; the parallel entry
    point takes 12 s to compile here, its serial twin 6 s (as measured)."""
    service = importlib.import_module("dfrank._jit.background")

    fast, slow = _Dispatcher("parallel"), _Dispatcher("serial")
    monkeypatch.setattr(_drivers, "driver",
                        lambda code, ties, parallel=True: fast if parallel else slow)
    monkeypatch.setattr(_drivers.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(service.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(service, "on_disk", lambda d: False)
    monkeypatch.setattr(service, "_procs", {})
    monkeypatch.setattr(_drivers, "_READY", {})
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "1")
    seconds = {"parallel": 12.0, "serial": 6.0}
    monkeypatch.setattr(service.timing, "estimate", lambda k, types=None: seconds[k.name])
    monkeypatch.setattr(_drivers, "estimate", lambda k, types=None: seconds[k.name])
    monkeypatch.setattr(_drivers, "example_arguments", lambda code, ties, dtype: (
        np.zeros((1, 2), dtype),))
    started, queued = [], []
    proc = _Compiling(running=2)

    def spawn(module, spec, env=None, detach=False):
        started.append(spec)
        return queued.pop(0) if queued else proc

    monkeypatch.setattr("dfrank._jit.helpers.spawn", spawn)
    return fast, slow, started, proc, queued


def test_serial_until_the_helper_ends_then_parallel(cold):
    fast, slow, started, proc, _ = cold
    got = [_drivers.entry_point(0, 0, np.float64).name for _ in range(5)]
    assert got == ["serial", "serial", "parallel", "parallel", "parallel"]
    assert len(started) == 1            # one helper per entry point
    assert proc.polls == 3              # no polling once it has ended


def test_waits_for_a_helper_that_ends_sooner_than_the_twin_compiles(cold):
    fast, slow, started, _, queued = cold
    old = _Compiling(running=100, age=11.0)        # 1 s left, the twin would take 6
    queued.append(old)
    assert _drivers.entry_point(0, 0, np.float64) is fast
    assert old.waited == 1
    young = _Compiling(running=100, age=0.0)       # 12 s left
    queued.append(young)
    importlib.import_module("dfrank._jit.background")._procs.clear()   # (another family's kernel)
    assert _drivers.entry_point(1, 0, np.float64) is slow
    young.started -= 11.0
    slow.signatures.append("loaded")
    assert _drivers.entry_point(1, 0, np.float64) is slow   # the twin costs nothing
    assert young.waited == 0


def test_no_helper_when_cached_loaded_disabled_or_one_thread(cold, monkeypatch):
    fast, slow, started, _, queued = cold
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "0")
    assert _drivers.entry_point(0, 0, np.float64) is fast
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "1")
    fast.signatures.append("loaded")
    assert _drivers.entry_point(1, 0, np.float64) is fast
    monkeypatch.setattr(_drivers.numba, "get_num_threads", lambda: 1)
    assert _drivers.entry_point(3, 0, np.float64) is slow
    assert started == []


def test_in_process_compiles_here(cold):
    fast, slow, started, _, queued = cold
    with _jit.in_process():   # dfrank warmup
        assert _drivers.entry_point(0, 0, np.float64) is fast
    assert started == []


def test_a_commands_one_call_loads_what_its_run_calls(cold, monkeypatch, tmp_path):
    """A command asks the compile service once for the kernels its run needs (the
    metric's entry point as the call would choose it, the line search's for a strategy
    that makes line searches); none runs a search to warm them."""
    from dfrank import cli
    from dfrank.driver.api import kernels_for

    fast, slow, started, _, queued = cold
    loaded = []
    monkeypatch.setattr(_jit, "load", lambda versions: loaded.append(list(versions)))
    monkeypatch.setattr("dfrank.driver.api.maximize", lambda *a, **k: (_ for _ in ()).throw(
        KeyboardInterrupt))
    from tests.inputs import letor_data, write_letor

    path = write_letor(tmp_path / "t.txt", letor_data())
    assert cli.main(["fit", str(path), "--strategy", "ca", "--metric", "map",
                     "--quiet"]) == 130
    [versions] = loaded
    kernels = [k for k, _ in versions]
    assert slow in kernels and fast not in kernels   # the twin runs while fast compiles
    from dfrank.linesearch import versions as line_versions

    assert set(line_versions(2, 0)) <= set(versions)
    assert kernels_for("map", None)[:1] == versions[:1]


@pytest.mark.slow
def test_the_helper_fills_the_cache(tmp_path):
    """A helper compiles the parallel entry point into an empty cache, where a fresh
    process finds it on disk and loads it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), DFRANK_SHIPPED_KERNELS="0")
    start = ("import importlib; from dfrank.metrics import _drivers; "
             "ahead = importlib.import_module('dfrank._jit.background'); "
             "_drivers.prefetch(0, 0); ahead._procs[_drivers.batch_ndcg].wait()")
    subprocess.run([sys.executable, "-c", start], env=env, check=True, timeout=600)
    code = ("from dfrank.metrics import _drivers; from dfrank import _jit; "
            "args = _drivers.example_arguments(0, 0, 'float64'); "
            "print(_jit.ready(_drivers.batch_ndcg)); _drivers.batch_ndcg(*args); "
            "print(args[-1][0, 0], sum(_drivers.batch_ndcg.stats.cache_hits.values()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "True"
    assert float(out[1]) == 1.0  # NDCG of one query ranked right
    assert out[2] == "1"         # loaded from the cache, not compiled
