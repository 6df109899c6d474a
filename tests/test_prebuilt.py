"""Kernels compiled at install (setup.py, :mod:`dfrank._jit`): the manifest says what they were
built with, a mismatch is said in one line, a compile in progress is shown, and a kernel gives
the same values whether it was loaded from the install's cache or compiled in the process."""

import json
import os
import subprocess
import sys
import time

import pytest

from dfrank._jit import manifest as _prebuilt
from dfrank._jit import progress as _compiling


def _manifest(tmp_path, **change):
    m = {"format": _prebuilt.FORMAT, "version": _prebuilt.VERSION, "built": True,
         "seconds": 1.0, "group": "install", "files": {}, **_prebuilt.describe()}
    m.update(change)
    path = tmp_path / "_prebuilt.json"
    path.write_text(json.dumps(m))
    return str(path)


def test_a_mismatch_is_said_in_words(tmp_path):
    assert _prebuilt.mismatch(_manifest(tmp_path)) is None
    assert _prebuilt.mismatch(str(tmp_path / "none.json")) is None   # a source checkout
    assert "numba 0.1.0, and this is" in _prebuilt.mismatch(_manifest(tmp_path,
                                                                      numba="0.1.0"))
    assert "python 2.7" in _prebuilt.mismatch(_manifest(tmp_path, python="2.7"))
    other = list(_prebuilt.describe()["cpu"])
    other[1] = "k6-3"
    assert "another CPU (k6-3" in _prebuilt.mismatch(_manifest(tmp_path, cpu=other))
    other[1], other[2] = _prebuilt.describe()["cpu"][1], "+sse2"
    assert "with other features" in _prebuilt.mismatch(_manifest(tmp_path, cpu=other))
    why = _prebuilt.mismatch(_manifest(tmp_path, built=False, reason="no numba"))
    assert "did not compile them (no numba)" in why


def test_a_long_compile_says_why_and_shows_progress(monkeypatch, capsys, tmp_path):
    """A kernel of dfrank compiling for long: the first line says why it compiles, then
    progress lines name it with the time so far."""
    from dfrank._jit import njit

    monkeypatch.setattr(_compiling, "DELAY", 0.05)
    monkeypatch.setattr(_compiling, "EVERY", 0.1)
    monkeypatch.setattr(_prebuilt, "MANIFEST", _manifest(tmp_path, numba="0.1.0"))
    monkeypatch.setitem(_compiling._state, "said", False)
    monkeypatch.setitem(_compiling._state, "quiet", False)
    monkeypatch.delenv("DFRANK_QUIET_COMPILE", raising=False)
    _compiling.install()

    def slow_kernel(x):
        return x + 1

    slow_kernel.__module__ = "dfrank.fake"
    from numba.core import event

    dispatcher = njit(slow_kernel)
    with event.trigger_event("numba:compile", data={"dispatcher": dispatcher, "args": ()}):
        time.sleep(0.4)
    err = capsys.readouterr().err
    assert "the install's compiled kernels do not serve here (they were compiled for " \
           "numba 0.1.0" in err
    assert "kernels done, now dfrank.fake.slow_kernel" in err     # progress, after it


JIT_VALUES = """
import hashlib, sys
import numpy as np
import dfrank
from dfrank._jit.background import in_process
from dfrank.objectives.objective import LinearObjective

part, path, qrels, run, metrics = sys.argv[1:6]
data = dfrank.load_svmlight(path)
h = hashlib.sha256(data.X.tobytes() + data.y.tobytes() + data.qptr.tobytes())
with in_process():
    if part == "metrics":
        scores = np.round(np.random.default_rng(0).normal(size=data.n_docs), 1)   # ties
        for m in metrics.split(","):
            h.update(dfrank.evaluate(scores, data, m, per_query=True).tobytes())
        from dfrank.io.forms import as_run

        r = as_run(run)
        h.update(r.score.tobytes() + r.buf.tobytes())
    else:
        obj = LinearObjective(data, "ndcg@10")
        res = obj.line(obj.space.center(), np.eye(obj.space.dim)[0])
        h.update(np.asarray(res.point).tobytes() + np.float64(res.value).tobytes())
print(h.hexdigest())
"""


# a metric of each family
METRIC_FAMILIES = ("ndcg@10", "dcg@5", "map", "map@5", "p@5", "recall@5", "mrr", "rr@5",
                   "err@5", "rprec", "kendall_tau")


def _same_values(tmp_path, part, metrics=("ndcg@10",)):
    """The digest of ``part``'s values (with ``metrics``' per-query values) in a process
    that loads the kernels compiled at install (or by the test session's warm-up), in one
    with an empty cache, which compiles them anew, and in one that reads the shipped
    kernels copied into NUMBA_CACHE_DIR."""
    from dfrank.data.datasets import make_letor_like
    from dfrank.io import save_svmlight

    data = make_letor_like(n_queries=12, docs_per_query=15, n_features=5, seed=2)
    path = str(tmp_path / "d.txt.gz")
    save_svmlight(data, path)
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("".join(f"1 0 d{i} {i % 3}\n" for i in range(20)))
    run.write_text("".join(f"1 Q0 d{i} {i + 1} {(i * 7) % 5 / 4!r} r\n" for i in range(25)))
    script = tmp_path / "values.py"
    script.write_text(JIT_VALUES)
    argv = [sys.executable, str(script), part, path, str(qrels), str(run), ",".join(metrics)]
    env = dict(os.environ, DFRANK_QUIET_COMPILE="1")
    here = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    jit = subprocess.run(argv, env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
                                        DFRANK_SHIPPED_KERNELS="0"),
                         capture_output=True, text=True, check=True).stdout
    # the shipped kernels copied where numba reads them (a cluster's NUMBA_CACHE_DIR)
    copied = subprocess.run(argv, env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / "copied")),
                            capture_output=True, text=True, check=True).stdout
    assert here == jit == copied and len(here.strip()) == 64


def test_ndcg_and_the_readers_give_the_same_values_compiled_anew(tmp_path):
    """NDCG's entry point (the values of each query, with ties), the LETOR (gzip) and TREC
    readers: loaded from the install's cache or compiled in a fresh process, bit for bit
    the same (20 s of compiling; every metric family: the next test)."""
    _same_values(tmp_path, "metrics")


@pytest.mark.jit
def test_every_metric_family_gives_the_same_values_compiled_anew(tmp_path):
    """Every metric family's entry point, as above (a minute and a half of compiling:
    ``python -m pytest -m jit``)."""
    _same_values(tmp_path, "metrics", METRIC_FAMILIES)


@pytest.mark.jit
def test_the_line_search_gives_the_same_values_compiled_anew(tmp_path):
    """The exact line search (one minute of compiling: ``python -m pytest -m jit``)."""
    _same_values(tmp_path, "line")


def _source_tree(tmp_path):
    """A checkout's layout in ``tmp_path``: ``dfrank/`` and ``strategies/`` side by side."""
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    skip = shutil.ignore_patterns("__pycache__", "kernels")
    for name in ("dfrank", "strategies"):
        shutil.copytree(os.path.join(root, name), tmp_path / name, ignore=skip)
    return tmp_path


def test_importing_dfrank_in_a_clones_root_says_why_in_one_line(tmp_path):
    """In the clone's root, where README's install runs, the source folder shadowed the
    installed package and ``import dfrank`` failed with "cannot import name 'strategies'
    from partially initialized module 'dfrank' (most likely due to a circular import)"
    (or, beside an editable install of another checkout, took that one's strategies)."""
    tree = _source_tree(tmp_path)
    out = subprocess.run([sys.executable, "-c", "import dfrank"], cwd=tree,
                         capture_output=True, text=True)
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and last.startswith("ImportError: ")
    assert "dfrank's source, not an install" in last and "pip install -e ." in last
    assert "circular import" not in out.stderr


def test_side_by_side_runs_another_checkout_with_its_own_strategies(tmp_path):
    """benchmarks/side_by_side.py put the other checkout first on PYTHONPATH, where its
    ``dfrank`` imported this checkout's ``strategies``: it runs a copy laid out as an
    install lays it out."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "benchmarks"))
    try:
        from side_by_side import importable
    finally:
        sys.path.pop(0)
    tree = _source_tree(tmp_path / "other")
    import shutil

    folder = importable(str(tree))
    env = dict(os.environ, PYTHONPATH=folder, DFRANK_QUIET_COMPILE="1")
    try:
        out = subprocess.run([sys.executable, "-c", "import dfrank.strategies as s; "
                              "print(s.__file__)"], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
    finally:
        shutil.rmtree(folder)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == os.path.join(folder, "dfrank", "strategies", "__init__.py")
