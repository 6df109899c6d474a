"""The serial twin runs while the parallel entry point compiles in the background."""

import os
import subprocess
import sys
import time

import numba
import numpy as np
import pytest

from dfrank._jit import background as _background


class _Dispatcher:
    def __init__(self, name, signatures=()):
        self.name = name
        self.signatures = list(signatures)


class _Compiling:
    """A background process started ``age`` seconds ago that ends after ``running`` polls
    (or when waited for)."""

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
    """Two threads, no entry point loaded or on disk, background compiling allowed."""
    fast, slow = _Dispatcher("parallel"), _Dispatcher("serial")
    monkeypatch.setattr(_background._drivers, "driver",
                        lambda code, ties, parallel=True: fast if parallel else slow)
    monkeypatch.setattr(_background.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(_background, "on_disk", lambda d: False)
    monkeypatch.setattr(_background, "_helpers", {})
    monkeypatch.setenv(_background.ENV, "1")
    started = []
    proc = _Compiling(running=2)
    monkeypatch.setattr(_background, "_start", lambda key: started.append(key) or proc)
    return fast, slow, started, proc


def test_serial_until_the_background_process_ends_then_parallel(cold):
    fast, slow, started, proc = cold
    got = [_background.entry_point(0, 0, np.float64).name for _ in range(5)]
    assert got == ["serial", "serial", "parallel", "parallel", "parallel"]
    assert started == [(0, 0, "<f8")]  # one process per entry point
    assert proc.polls == 3             # no polling once it has ended
    _background.entry_point(0, 0, np.float32)
    assert started[-1] == (0, 0, "<f4")  # float32 features are another signature


def test_waits_for_a_process_that_ends_sooner_than_the_twin_compiles(cold, monkeypatch):
    fast, slow, started, _ = cold
    old = _Compiling(running=100, age=_background.PARALLEL_SECONDS)
    monkeypatch.setattr(_background, "_start", lambda key: started.append(key) or old)
    assert _background.entry_point(0, 0, np.float64) is fast
    assert old.waited == 1
    young = _Compiling(running=100, age=0.0)
    monkeypatch.setattr(_background, "_start", lambda key: young)
    assert _background.entry_point(1, 0, np.float64) is slow  # too far from done
    young.started -= _background.PARALLEL_SECONDS
    slow.signatures.append("loaded")
    assert _background.entry_point(1, 0, np.float64) is slow  # the twin costs nothing
    assert young.waited == 0


def test_no_background_process_when_cached_loaded_disabled_or_one_thread(cold, monkeypatch):
    fast, slow, started, _ = cold
    monkeypatch.setenv(_background.ENV, "0")
    assert _background.entry_point(0, 0, np.float64) is fast
    monkeypatch.setenv(_background.ENV, "1")
    fast.signatures.append("loaded")
    assert _background.entry_point(1, 0, np.float64) is fast
    fast.signatures.clear()
    monkeypatch.setattr(_background, "on_disk", lambda d: True)
    assert _background.entry_point(2, 0, np.float64) is fast
    monkeypatch.setattr(_background.numba, "get_num_threads", lambda: 1)
    assert _background.entry_point(3, 0, np.float64) is slow
    assert started == []


def test_in_process_compiles_here_and_restores(cold):
    fast, slow, started, _ = cold
    with _background.in_process():
        assert _background.entry_point(0, 0, np.float64) is fast
    _background.entry_point(1, 0, np.float64)
    assert started == [(1, 0, "<f8")]  # outside the block, the background again


def test_prefetch_starts_the_process_before_the_first_call(cold):
    fast, slow, started, _ = cold
    _background.prefetch("ndcg@10")
    _background.prefetch("map", "optimistic")
    assert started == [(0, 0, "<f8"), (2, 1, "<f8")]
    _background.prefetch(numba.njit(lambda labels, k: 0.0))  # a user metric: no parallel kernel
    assert len(started) == 2


@pytest.mark.slow
def test_the_background_process_fills_the_cache(tmp_path):
    """``python -m dfrank._jit.background`` compiles the parallel entry point into an
    empty cache, where a fresh process finds it on disk and loads it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), DFRANK_SHIPPED_KERNELS="0")
    subprocess.run([sys.executable, "-m", "dfrank._jit.background", "0", "0", "<f8"],
                   env=env, check=True, timeout=600)
    code = ("from dfrank.metrics import _drivers; "
            "from dfrank._jit import background as _background; "
            "print(_background.on_disk(_drivers.batch_ndcg), "
            "_background.compile_entry(0, 0, 'float64'), "
            "sum(_drivers.batch_ndcg.stats.cache_hits.values()))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[0] == "True"
    assert float(out[1]) == 1.0  # NDCG of one query ranked right
    assert out[2] == "1"         # loaded from the cache, not compiled


@pytest.mark.parametrize("argv, key", [
    (["fit", "{missing}", "--metric", "map"], (2, 0, "<f8")),
    (["compare", "{missing}", "--metric", "ndcg@10", "--ties", "optimistic",
      "--budget", "100"], (0, 1, "<f8")),
    (["grid", "{missing}", "--features", "1,2", "--metric", "ndcg@10"], (0, 0, "<f8")),
    (["fuse", "--qrels", "{missing}", "{missing}", "{missing}", "--metric", "map"], (2, 2, "<f8")),
])
def test_commands_start_the_metric_compile_before_reading_their_files(cold, tmp_path, argv,
                                                                      key):
    """A command that knows its metric starts its background compile first, so reading
    the data overlaps it; fuse's with trec_eval's tie rule (stable), which it scores with."""
    from dfrank import cli

    fast, slow, started, _ = cold
    missing = str(tmp_path / "absent.txt")
    code = cli.main([a.format(missing=missing) for a in argv] + ["--quiet"])
    assert code != 0  # the file is missing
    assert started == [key]
