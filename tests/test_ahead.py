"""The sweep compiles in a background process while the candidates compile here."""

import importlib
import json

import numba
import numpy as np
import pytest

import dfrank.linesearch.runner as ls
from dfrank import _jit
from dfrank.objectives.objective import LinearObjective

ahead_mod = importlib.import_module("dfrank._jit.background")


def _tiny():
    """Three queries of six documents, three features, grades 0-2."""
    from dfrank.data.ranking import RankingData

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(18, 3)), 1)
    return RankingData.from_arrays(X, rng.integers(0, 3, 18).astype(float),
                                   np.repeat(np.arange(3), 6))


@pytest.mark.parametrize("metric,ties", [("ndcg@3", "pessimistic"), ("map", "optimistic"),
                                         ("ndcg@3", "expected"), ("err@3", "pessimistic")])
def test_the_types_compiled_ahead_are_those_the_calls_use(metric, ties, monkeypatch):
    """A compile ahead for other types than the call's would be wasted: the call would
    compile its own."""
    asked, meanwhile = [], []
    monkeypatch.setattr(ls, "ahead", lambda kernel, types: asked.append((kernel, types())))
    monkeypatch.setattr(ls, "wait_for",
                        lambda kernel, then=None: meanwhile.append((then[0], then[1]())))
    obj = LinearObjective(_tiny(), metric, ties=ties)
    obj.expect_lines()
    assert len(asked) == 1  # before any line
    centre = obj.space.center()
    obj.line(centre, np.eye(obj.space.dim)[0])                   # a coordinate
    obj.line(centre, np.linspace(-1.0, 1.0, obj.space.dim), rule="plateau")  # assembled
    assert len(asked) == 3 and meanwhile
    for kernel, types in asked + meanwhile:
        assert types in kernel.signatures, (kernel, types)
        # as the background process reads them from its command line
        sent = json.loads(json.dumps([ahead_mod.describe(t) for t in types]))
        assert tuple(ahead_mod.numba_type(d) for d in sent) == types
    assert asked[0][0] is asked[1][0]  # the family's sweep, whichever asked


def _sweep(code, s0):
    pass


class _Kernel:
    py_func = staticmethod(_sweep)

    def __init__(self, signatures=()):
        self.signatures = list(signatures)
        self.compiled = []

    def compile(self, types):
        self.compiled.append(types)


class _Process:
    def __init__(self, running):
        self.running = running
        self.waited = 0

    def poll(self):
        return None if self.running else 0

    def wait(self, timeout=None):
        self.waited += 1
        self.running = False
        return 0


@pytest.fixture
def cold(monkeypatch):
    """Two threads, nothing on disk, background compiling allowed, no process started."""
    monkeypatch.setattr(ahead_mod.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(ahead_mod, "on_disk", lambda d: False)
    monkeypatch.setattr(ahead_mod, "_procs", {})
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "1")
    started = []
    proc = _Process(running=True)
    monkeypatch.setattr("dfrank._jit.helpers.spawn", lambda module, spec, env=None,
                        detach=False: started.append((module, json.loads(spec))) or proc)
    return started, proc


INT = numba.typeof(1)
INTS = numba.typeof(np.zeros(2, np.int64))


def test_one_process_a_kernel_and_the_next_kernel_compiles_while_it_runs(cold):
    started, proc = cold
    sweep, after = _Kernel(), _Kernel()
    ahead_mod.ahead(sweep, lambda: (INT, INTS))
    ahead_mod.ahead(sweep, lambda: pytest.fail("asked twice"))
    assert started == [("dfrank._jit.background",
                        [__name__, "_sweep", [{"scalar": "int64"},
                                              ahead_mod.describe(INTS)]])]
    ahead_mod.wait_for(sweep, (after, lambda: ("after",)))
    assert after.compiled == [("after",)] and proc.waited == 1
    ahead_mod.wait_for(sweep, (after, lambda: pytest.fail("waited twice")))
    assert proc.waited == 1
    ahead_mod.wait_for(_Kernel())  # nothing compiling it: returns at once


def test_the_next_kernel_is_left_to_its_call_once_the_process_has_ended(cold):
    started, proc = cold
    sweep, after = _Kernel(), _Kernel()
    ahead_mod.ahead(sweep, lambda: (INT,))
    proc.running = False
    ahead_mod.wait_for(sweep, (after, lambda: ("after",)))
    assert after.compiled == []


def test_no_process_when_loaded_cached_disabled_or_one_thread(cold, monkeypatch):
    started, _ = cold
    ahead_mod.ahead(_Kernel(signatures=["loaded"]), lambda: ())
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "0")
    ahead_mod.ahead(_Kernel(), lambda: ())
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "1")
    with _jit.in_process():  # dfrank warmup
        ahead_mod.ahead(_Kernel(), lambda: ())
    monkeypatch.setattr(ahead_mod.numba, "get_num_threads", lambda: 1)
    ahead_mod.ahead(_Kernel(), lambda: ())
    monkeypatch.setattr(ahead_mod.numba, "get_num_threads", lambda: 2)
    monkeypatch.setattr(ahead_mod, "on_disk", lambda d: True)
    ahead_mod.ahead(_Kernel(), lambda: ())
    assert started == []


def test_the_background_process_fills_the_cache(tmp_path, monkeypatch):
    """``python -m dfrank._jit.background`` compiles a kernel for the types on
    its command line into numba's disk cache."""
    kernel = importlib.import_module("dfrank.linesearch.candidates").flat_within_queries
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("DFRANK_SHIPPED_KERNELS", "0")
    monkeypatch.setattr(ahead_mod, "_procs", {})
    monkeypatch.setattr(ahead_mod, "on_disk", lambda d: False)
    monkeypatch.setattr(ahead_mod.numba, "get_num_threads", lambda: 2)
    monkeypatch.setenv(_jit.BACKGROUND_ENV, "1")

    class Unloaded(_Kernel):  # the kernel, as in a process that has not called it
        py_func = staticmethod(kernel.py_func)

    unloaded = Unloaded()
    ahead_mod.ahead(unloaded, lambda: (numba.typeof(np.zeros(3)), INTS))
    proc = ahead_mod._procs[unloaded]
    assert proc.wait(timeout=300) == 0
    assert len(list(tmp_path.rglob("*flat_within_queries*.nbi"))) == 1
    assert list(tmp_path.rglob("*flat_within_queries*.nbc"))


def test_describe_refuses_what_it_cannot_send():
    with pytest.raises(TypeError, match="no description"):
        ahead_mod.describe(numba.typeof("text"))
    with pytest.raises(ValueError, match="not a numeric scalar"):
        ahead_mod.numba_type({"scalar": "pyobject"})
