"""The compile lifecycle (:mod:`dfrank._jit`): helper processes that never take dfrank's code
from the working directory."""

import subprocess

import pytest

from dfrank._jit import helpers


@pytest.fixture
def hostile_cwd(tmp_path, monkeypatch):
    """A working directory holding a folder ``dfrank/`` whose import leaves a mark and
    fails; the test runs in it. Returns the mark's path."""
    mark = tmp_path / "imported-from-the-working-directory"
    (tmp_path / "dfrank").mkdir()
    (tmp_path / "dfrank" / "__init__.py").write_text(
        f"open({str(mark)!r}, 'w').close()\nraise SystemExit(7)\n")
    monkeypatch.chdir(tmp_path)
    return mark


def test_a_helper_runs_the_installed_dfrank_not_a_folder_in_the_working_directory(
        hostile_cwd):
    """A folder ``dfrank/`` in the working directory once ran in the background compile
    helpers (``python -m dfrank.metrics._background`` put it first on ``sys.path``)."""
    done = subprocess.run(helpers.argv("dfrank.cli", "--version"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dfrank ")
    assert not hostile_cwd.exists()


def test_the_background_compile_helpers_never_import_from_the_working_directory(
        hostile_cwd):
    """Both kinds of background compile (a metric's parallel entry point, a line-search
    kernel ahead of its call) start through the same bootstrap."""
    import json

    from dfrank.linesearch.compile_ahead import describe
    from dfrank.metrics import _background
    from dfrank.metrics.registry import get, tie_code
    from numba.core import types

    m = get("ndcg@10")
    procs = [_background.spawn("dfrank.metrics._background", str(m.code),
                               str(tie_code("pessimistic")), "<f8"),
             _background.spawn("dfrank.linesearch.compile_ahead", json.dumps(
                 ["dfrank.spaces", "_project_rows",
                  [describe(types.float64[:, ::1]), describe(types.float64[:, ::1])]]))]
    assert all(p is not None and p.wait(timeout=120) == 0 for p in procs)
    assert not hostile_cwd.exists()


def test_the_warm_up_processes_never_import_from_the_working_directory(hostile_cwd):
    from dfrank.warmup import warm

    seen = []
    warm(["demo", "files"], jobs=2, progress=lambda name, s: seen.append(name))
    assert sorted(seen) == ["demo", "files"]
    assert not hostile_cwd.exists()


def test_helpers_are_ended_with_the_process_that_started_them():
    proc = helpers.spawn("dfrank.cli", "--version")   # any helper: ended if still running
    helpers.end_all(grace=5.0)
    assert proc.poll() is not None and proc not in helpers.running()


def test_a_helper_runs_only_dfranks_own_modules():
    with pytest.raises(ValueError, match="dfrank's own modules"):
        helpers.argv("os", "x")
