"""The compile lifecycle (:mod:`dfrank._jit`): helper processes that never take dfrank's code
from the working directory; the shipped kernels copied where numba reads them, checked, or
compiled in memory; compiles that Ctrl-C and SIGTERM stop; the build's manifest."""

import glob
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time

import pytest

from dfrank._jit import helpers, manifest, store


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
    helpers (``python -m dfrank._jit.background`` put it first on ``sys.path``)."""
    done = subprocess.run(helpers.argv("dfrank.cli", "--version"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dfrank ")
    assert not hostile_cwd.exists()


def test_the_background_compile_helpers_never_import_from_the_working_directory(
        hostile_cwd):
    """A background compile (a metric's parallel entry point, a line-search kernel ahead of
    its call: one kind of helper) starts through the bootstrap."""
    import json

    from dfrank._jit.background import describe
    from dfrank._jit.helpers import spawn
    from numba.core import types

    procs = [spawn("dfrank._jit.background", json.dumps(
                 ["dfrank.spaces", "_project_rows",
                  [describe(types.float64[:, ::1]), describe(types.float64[:, ::1])]]))]
    assert all(p is not None and p.wait(timeout=120) == 0 for p in procs)
    assert not hostile_cwd.exists()


def test_the_warm_up_processes_never_import_from_the_working_directory(hostile_cwd):
    from dfrank._jit import warm

    seen = []
    warm(jobs=2, progress=lambda name, s: seen.append(name),
         names=["retrieval, spaces, smoothed", "files"])
    assert sorted(seen) == ["files", "retrieval, spaces, smoothed"]
    assert not hostile_cwd.exists()


def test_end_all_ends_every_helper_still_running():
    proc = helpers.spawn("dfrank.cli", "--version")   # any helper: ended if still running
    helpers.end_all(grace=5.0)
    assert proc.poll() is not None and proc not in helpers.running()


PARENT = """
import os, sys, time
from dfrank.metrics import _drivers
from dfrank._jit import ahead
proc = ahead(_drivers.batch_ndcg, lambda: tuple(__import__("numba").typeof(a) for a in
                                                _drivers.example_arguments(0, 0, "<f8")))
print(proc.pid, flush=True)
if sys.argv[1] == "wait":
    time.sleep(300)
"""


def _gone_within(pid, seconds):
    """Whether process ``pid`` ends (or is left a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_helper_ends_when_its_parent_is_killed_and_goes_on_after_a_normal_exit(tmp_path):
    """Helpers ran in sessions of their own and outlived their parent, compiling for a
    minute for nobody (65 s and more after a build was stopped): a helper holds a lifeline
    to its parent and ends within 5 s of a SIGKILL; a background compile that the parent
    leaves by a normal exit goes on, to fill the cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), DFRANK_SHIPPED_KERNELS="0")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, "wait"], env=env,
                              stdout=subprocess.PIPE, text=True)
    helper = int(parent.stdout.readline())
    time.sleep(1.0)
    assert not _gone_within(helper, 0.1)                     # compiling
    parent.kill()
    parent.wait()
    assert _gone_within(helper, 5.0)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache2")
    done = subprocess.run([sys.executable, "-c", PARENT, "exit"], env=env,
                          capture_output=True, text=True, timeout=60)
    helper = int(done.stdout.split()[0])
    try:
        assert not _gone_within(helper, 2.0)                 # goes on alone
    finally:
        try:
            os.kill(helper, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_helper_runs_only_dfranks_own_modules():
    with pytest.raises(ValueError, match="dfrank's own modules"):
        helpers.argv("os", "x")


# ------------------------------------------------------------------ the shipped kernels


SHIPPED = manifest.manifest()


def _locate(rel):
    """The file of a path of the installed layout, in this install or checkout."""
    import dfrank
    import dfrank.strategies

    if rel.startswith("dfrank/strategies/"):
        return os.path.join(os.path.dirname(dfrank.strategies.__file__), rel.split("/")[-1])
    return os.path.join(os.path.dirname(os.path.dirname(dfrank.__file__)), rel)


needs_shipped = pytest.mark.skipif(
    not (SHIPPED and SHIPPED.get("built")) or bool(manifest.changed_sources(SHIPPED, _locate)),
    reason="this checkout was not built with its kernels, or was edited since "
           "(pip install -e . builds them)")

EVALUATE = """
import dfrank, numpy as np
from dfrank.data.datasets import make_letor_like
data = make_letor_like(n_queries=8, docs_per_query=12, n_features=4, seed=3)
scores = np.round(np.random.default_rng(0).normal(size=data.n_docs), 1)
print(repr(dfrank.evaluate(scores, data, "ndcg@10")), repr(dfrank.evaluate(scores, data, "err@10")))
"""


def _run(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",
                                                               "DFRANK_QUIET_COMPILE")}
    full.update(DFRANK_DEBUG_COMPILE="1", **env)
    done = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def _compiled(err):
    return [line for line in err.splitlines() if line.startswith("dfrank: compiling ")]


def test_numba_cache_names_the_folder_and_index_numba_writes(tmp_path, monkeypatch):
    """dfrank reads numba's private attributes in one place: this fails when numba
    changes them."""
    (tmp_path / "jit_probe.py").write_text(
        "from dfrank._jit.store import njit\n\n@njit(cache=True)\ndef twice(x):\n"
        "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import jit_probe

    assert jit_probe.twice(21) == 42
    folder, index = store.numba_cache(jit_probe.twice)
    assert os.path.isfile(index) and os.path.dirname(index) == folder
    assert store.on_disk(jit_probe.twice)


def _probe_with_shipped(tmp_path, monkeypatch, name, stamp=None):
    """A module ``name`` of one cached kernel, whose package the install (a fake manifest
    serving another numba) ships ``shipped.nbc`` for; ``stamp``: a stamp an earlier
    process left in numba's folder, naming that file. Returns numba's folder."""
    import importlib

    kernels = tmp_path / "kernels"
    (kernels / name).mkdir(parents=True)
    (kernels / name / "shipped.nbc").write_bytes(b"shipped")
    m = {"built": True, "id": "install-1", "numba": "0.1.0",
         "files": {f"{name}/shipped.nbc": manifest.digest(kernels / name / "shipped.nbc")}}
    monkeypatch.setattr(manifest, "KERNELS", str(kernels))
    for key, value in (("manifest", m), ("serves", None), ("edited", False)):
        monkeypatch.setitem(store._memory, key, value)
    del store._memory["serves"]
    monkeypatch.setattr(manifest, "mismatch", lambda path=None, m=None: "numba differs")
    monkeypatch.delenv("DFRANK_QUIET_COMPILE", raising=False)
    folder = tmp_path / "__pycache__"
    if stamp is not None:
        folder.mkdir()
        (folder / "shipped.nbc").write_bytes(pickle.dumps("numba's own, compiled anew"))
        (folder / store.STAMP).write_text(json.dumps(stamp))
    (tmp_path / f"{name}.py").write_text(
        "from dfrank._jit.store import njit\n\n@njit(cache=True)\ndef twice(x):\n"
        "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(name)
    return folder


def test_shipped_kernels_that_do_not_serve_this_numba_are_never_copied(tmp_path,
                                                                       monkeypatch, capsys):
    """With another numba of the declared range, the install's kernels were copied where
    numba reads them; numba compiled each anew into those files, and the next process
    took them for shipped files tampered with ("does not match what was compiled") and
    compiled everything again. Kernels that do not serve this process are not copied."""
    folder = _probe_with_shipped(tmp_path, monkeypatch, "jit_probe_other_numba")
    assert not (folder / "shipped.nbc").exists()
    assert "does not match" not in capsys.readouterr().err


def test_copies_an_earlier_numba_made_are_numbas_own_under_another(tmp_path, monkeypatch,
                                                                   capsys):
    """Copies made while the install's numba ran, then rewritten by another numba of the
    range, are numba's files from then on: kept, and nothing said."""
    stamp = {"manifest": "install-1", "files": {"shipped.nbc": "0" * 64}}
    folder = _probe_with_shipped(tmp_path, monkeypatch, "jit_probe_rewritten", stamp)
    assert pickle.loads((folder / "shipped.nbc").read_bytes()) == "numba's own, compiled anew"
    assert json.loads((folder / store.STAMP).read_text())["files"] == {}
    assert "does not match" not in capsys.readouterr().err


@needs_shipped
def test_with_numba_cache_dir_set_the_shipped_kernels_serve_the_first_call(tmp_path):
    """NUMBA_CACHE_DIR set (clusters and CI set it): the kernels the install shipped are
    copied there once, so the first evaluate compiles nothing."""
    cache = tmp_path / "cache"
    out, err = _run(EVALUATE, NUMBA_CACHE_DIR=str(cache))
    assert _compiled(err) == [], err
    stamps = glob.glob(str(cache / "*" / store.STAMP))
    assert stamps and all(json.load(open(s))["manifest"] == SHIPPED["id"] for s in stamps)
    again, err = _run(EVALUATE, NUMBA_CACHE_DIR=str(cache))
    assert again == out and _compiled(err) == []


@needs_shipped
def test_a_swapped_or_truncated_kernel_file_is_named_and_compiled_again(tmp_path):
    """An ``.nbc`` of one kernel copied over another's made ``evaluate --metric ndcg@10``
    print the ERR value; a truncated ``.nbi`` stopped the run with an UnpicklingError that
    named no file. Both are found when the process starts, removed, named, and their
    kernels compiled again: the values stay right."""
    cache = tmp_path / "cache"
    want, _ = _run(EVALUATE, NUMBA_CACHE_DIR=str(cache))
    folder = os.path.dirname(glob.glob(str(cache / "metrics_*" / store.STAMP))[0])
    seeded = json.load(open(os.path.join(folder, store.STAMP)))["files"]
    data = sorted(n for n in seeded if n.endswith(".nbc"))
    first = open(os.path.join(folder, data[0]), "rb").read()
    for a, b in zip(data, data[1:]):      # every data file now holds the next one's code
        shutil.copyfile(os.path.join(folder, b), os.path.join(folder, a))
    open(os.path.join(folder, data[-1]), "wb").write(first)
    index = sorted(n for n in seeded if n.endswith(".nbi"))[0]
    raw = open(os.path.join(folder, index), "rb").read()
    open(os.path.join(folder, index), "wb").write(raw[:len(raw) // 2])
    got, err = _run(EVALUATE, NUMBA_CACHE_DIR=str(cache))
    assert got == want
    assert f"{os.path.join(folder, index)} does not match" in err
    assert f"{os.path.join(folder, data[0])} does not match" in err
    again, err = _run(EVALUATE, NUMBA_CACHE_DIR=str(cache))   # healed: nothing said
    assert again == want and "does not match" not in err


@needs_shipped
def test_a_shipped_file_that_does_not_match_its_digest_is_not_copied(tmp_path, monkeypatch,
                                                                     capsys):
    package = "dfrank.metrics"
    names = {k.split("/", 1)[1]: d for k, d in SHIPPED["files"].items()
             if k.startswith(package + "/")}
    kernels = tmp_path / "kernels"
    shutil.copytree(os.path.join(manifest.KERNELS, package), kernels / package)
    bad = sorted(n for n in names if n.endswith(".nbc"))[0]
    (kernels / package / bad).write_bytes(b"edited")
    monkeypatch.setattr(manifest, "KERNELS", str(kernels))
    monkeypatch.delenv("DFRANK_QUIET_COMPILE", raising=False)
    live = tmp_path / "live"
    live.mkdir()
    stamp = store._seed(package, str(live), names, "some-id")
    assert bad not in stamp["files"] and not (live / bad).exists()
    assert len(stamp["files"]) == len(names) - 1
    assert f"{kernels / package / bad} does not match the digest" in capsys.readouterr().err


def _unshare_works():
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def _read_only(folders, code, *args, **env):
    """Run ``code`` with ``folders`` mounted read-only (a private mount namespace, as a
    container image presents site-packages)."""
    mounts = " && ".join(f"mount --bind '{d}' '{d}' && mount -o remount,ro,bind '{d}' '{d}'"
                         for d in folders)
    full = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    full.update(DFRANK_DEBUG_COMPILE="1", **env)
    return subprocess.run(["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh",
                           sys.executable, "-c", code, *args], env=full,
                          capture_output=True, text=True, timeout=300)


def _package_folders():
    import dfrank
    import dfrank.strategies

    return sorted({os.path.dirname(dfrank.__file__),
                   os.path.dirname(dfrank.strategies.__file__)})


needs_unshare = pytest.mark.skipif(not _unshare_works(),
                                   reason="needs unshare -m (root) to mount read-only")


@needs_shipped
@needs_unshare
def test_a_read_only_install_serves_its_kernels_from_the_users_cache(tmp_path):
    """site-packages read-only (a container run as another user), HOME writable: the
    shipped kernels once went unused and everything compiled into ~/.cache."""
    done = _read_only(_package_folders(), EVALUATE, XDG_CACHE_HOME=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert _compiled(done.stderr) == [], done.stderr
    assert glob.glob(str(tmp_path / "numba" / "metrics_*" / store.STAMP))


@needs_unshare
def test_with_no_writable_cache_folder_dfrank_compiles_in_memory_and_says_so(tmp_path):
    """site-packages and HOME read-only: ``import dfrank`` failed with 'cannot cache
    function ...: no locator available'."""
    code = ("import numpy as np; from dfrank.spaces import Simplex; "
            "print(Simplex(2).project(np.array([[0.2, 0.5, 0.3]])).sum())")
    (tmp_path / "numba").mkdir()
    done = _read_only(_package_folders() + [str(tmp_path)], code,
                      XDG_CACHE_HOME=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(1.0)
    assert done.stderr.count("kernels compile in memory") == 1


BANNER_PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
from dfrank._jit import progress
progress.DELAY = 0.0
import dfrank_banner_probe as probe
print(probe.sorted_sum(3000))
"""


@needs_unshare
@pytest.mark.parametrize("setup", ["writable", "NUMBA_CACHE_DIR", "read-only install",
                                   "read-only everything", "another CPU"])
def test_what_the_compile_banner_claims_holds_in_every_setup(tmp_path, setup):
    """With site-packages and HOME read-only the banner said the kernels were "cached on
    disk", "0 of 143" not compiled, and suggested 'dfrank warmup', none of which held:
    in each setup, what it says is checked against what happened."""
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "dfrank_banner_probe.py").write_text(
        "import numpy as np\nfrom dfrank._jit.store import njit\n\n@njit(cache=True)\n"
        "def sorted_sum(n):\n    a = np.sort(np.arange(n)[::-1].astype(np.float64))\n"
        "    return a.sum() + np.searchsorted(a, 10.0)\n")
    env = {"DFRANK_QUIET_COMPILE": "", "XDG_CACHE_HOME": str(tmp_path / "home-cache")}
    read_only = {"read-only install": _package_folders() + [str(probe)],
                 "read-only everything": _package_folders() + [str(probe), str(tmp_path)]}
    if setup == "NUMBA_CACHE_DIR":
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    if setup == "another CPU":
        env["NUMBA_CPU_NAME"] = "generic"
    (tmp_path / "home-cache").mkdir()
    done = _read_only(read_only[setup], BANNER_PROBE, str(probe), **env) \
        if setup in read_only else _run_probe(BANNER_PROBE, str(probe), **env)
    err = done.stderr
    assert done.returncode == 0, err
    [banner] = [line for line in err.splitlines() if line.startswith("dfrank: compiling numba")]
    cached = glob.glob(str(tmp_path / "**" / "*sorted_sum*.nbi"), recursive=True)
    if setup == "read-only everything":
        assert "in memory" in banner and not cached
        assert "cached" not in banner and "warmup" not in banner and " of dfrank's " not in banner
    else:
        assert "cached" in banner and "'dfrank warmup'" in banner and len(cached) == 1
        assert (setup == "another CPU") == ("another CPU" in banner)
        where = {"NUMBA_CACHE_DIR": "numba-cache", "read-only install": "home-cache"}
        assert os.sep + where.get(setup, "probe") + os.sep in cached[0]


def _run_probe(code, folder, **env):
    full = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    full.update(**env)
    return subprocess.run([sys.executable, "-c", code, folder], env=full,
                          capture_output=True, text=True, timeout=300)


# ------------------------------------------------------------------ interrupts and silence


def _helpers_with(marker):
    """PIDs of live processes whose environment holds ``marker`` (Linux's /proc)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker.encode() in open(f"/proc/{pid}/environ", "rb").read():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_during_a_first_use_compile_stops_the_command_at_once(tmp_path, signum,
                                                                        code):
    """Ctrl-C or SIGTERM while ``fit`` compiled its kernels was taken by the warm-up's tiny
    run for its own interrupt: ``fit --restarts 20 --metric err@10`` ran 45 s more and exited
    0. Now the command ends within 5 s with 130 / 143, its helper processes with it."""
    from dfrank.data.datasets import make_letor_like
    from dfrank.io import save_svmlight

    path = str(tmp_path / "train.txt")
    save_svmlight(make_letor_like(n_queries=6, docs_per_query=8, n_features=3, seed=1), path)
    cache = str(tmp_path / "empty-cache")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, DFRANK_SHIPPED_KERNELS="0",
               DFRANK_DEBUG_COMPILE="1")
    env.pop("DFRANK_QUIET_COMPILE", None)
    proc = subprocess.Popen([sys.executable, "-m", "dfrank.cli", "fit", path, "--strategy",
                             "ca", "--metric", "err@10", "--restarts", "20"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a background job's SIGINT is ignored, and a child inherits
                            # that: the command gets the default, as from a terminal
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    while "dfrank: compiling dfrank." not in seen:
        line = proc.stderr.readline()
        assert line, f"fit ended before compiling: {seen}"
        seen += line
    time.sleep(1.0)    # inside a compile
    t = time.monotonic()
    proc.send_signal(signum)
    assert proc.wait(timeout=30) == code
    assert time.monotonic() - t <= 5.0
    deadline = time.monotonic() + 5
    while _helpers_with(cache) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _helpers_with(cache) == []


def _tree(root, stale=True):
    """A tree of the installed layout with two modules' cache files beside them, and what
    an earlier build left in its kernels folder."""
    for package, names in (("dfrank", ["a.f-3.py311.nbi", "a.f-3.py311.1.nbc"]),
                           ("dfrank/metrics", ["k.g-9.py311.nbi"])):
        (root / package / "__pycache__").mkdir(parents=True)
        (root / package / "mod.py").write_text("x = 1\n")
        for n in names:
            (root / package / "__pycache__" / n).write_bytes(n.encode())
    if stale:
        (root / "dfrank" / "_jit" / "kernels" / "dfrank.io").mkdir(parents=True)
        (root / "dfrank" / "_jit" / "kernels" / "dfrank.io" / "old.nbc").write_bytes(b"old")


def test_the_build_ships_every_cache_file_with_its_digest(tmp_path):
    _tree(tmp_path)
    manifest.ship(str(tmp_path), 12.5, "install")
    m = manifest.manifest(str(tmp_path / "dfrank" / "_jit" / "kernels" / "manifest.json"))
    assert m["built"] and sorted(m["files"]) == [
        "dfrank.metrics/k.g-9.py311.nbi", "dfrank/a.f-3.py311.1.nbc", "dfrank/a.f-3.py311.nbi"]
    kernels = tmp_path / "dfrank" / "_jit" / "kernels"
    assert m["files"]["dfrank.metrics/k.g-9.py311.nbi"] == manifest.digest(
        str(kernels / "dfrank.metrics" / "k.g-9.py311.nbi"))
    assert not (kernels / "dfrank.io").exists()                      # the earlier build's
    assert not list(tmp_path.rglob("__pycache__/*.nb?"))             # moved, not copied
    assert manifest.changed_sources(m, lambda rel: str(tmp_path / rel)) == []
    (tmp_path / "dfrank" / "metrics" / "mod.py").write_text("x = 2\n")
    assert manifest.changed_sources(m, lambda rel: str(tmp_path / rel)) == [
        "dfrank/metrics/mod.py"]


def test_a_build_without_kernels_ships_none_whatever_an_earlier_build_left(tmp_path):
    """DFRANK_BUILD_KERNELS=0 (or a failed compile) ships no kernels and says so in its
    manifest, even where an earlier build left some in the tree."""
    _tree(tmp_path)
    manifest.ship_nothing(str(tmp_path), "DFRANK_BUILD_KERNELS=0")
    m = manifest.manifest(str(tmp_path / "dfrank" / "_jit" / "kernels" / "manifest.json"))
    assert m["built"] is False and m["reason"] == "DFRANK_BUILD_KERNELS=0"
    assert not list(tmp_path.rglob("*.nb?"))
    assert "did not compile them (DFRANK_BUILD_KERNELS=0)" in manifest.mismatch(
        str(tmp_path / "dfrank" / "_jit" / "kernels" / "manifest.json"))


def test_a_wait_for_a_helper_says_what_it_waits_for_and_counts_as_compiling(monkeypatch,
                                                                              capsys):
    """The first use of the err line search once waited 37 s for its helper in silence,
    and a run's printed time hid its compiling."""
    from dfrank._jit import progress
    from dfrank.cli.options import compiling_line, time_text

    monkeypatch.setattr(progress, "DELAY", 0.05)
    monkeypatch.setattr(progress, "EVERY", 0.1)
    monkeypatch.setitem(progress._state, "quiet", False)
    monkeypatch.delenv("DFRANK_QUIET_COMPILE", raising=False)
    before = progress.seconds()
    with progress.waiting("the sweep, compiling in a helper process"):
        time.sleep(0.3)
    assert progress.seconds() - before >= 0.3
    err = capsys.readouterr().err
    assert "now the sweep, compiling in a helper process" in err
    assert time_text(3.0) == "3.00 s" and compiling_line(0.0, 0.01) is None
    assert compiling_line(before=81.2, within=0.25) == \
        "compiling numba kernels: 0.2 s within the time above, 81.2 s before it"


def test_a_compile_asked_for_on_the_main_thread_runs_in_a_thread_of_its_own():
    """store.njit replaces a kernel's ``compile``, which numba's dispatcher calls when a
    call finds no compiled signature: this fails when numba changes that."""
    import threading

    from numba.core import event

    threads = []

    class Seen(event.Listener):
        def on_start(self, ev):
            threads.append(threading.current_thread().name)

        def on_end(self, ev):
            pass

    @store.njit
    def plus_one(x):
        return x + 1

    listener = Seen()
    event.register("numba:compile", listener)
    try:
        assert plus_one(41) == 42
    finally:
        event.unregister("numba:compile", listener)
    assert threads and set(threads) == {"dfrank-compile"}


def test_describe_names_what_numba_keys_its_cache_with():
    """The manifest's CPU is numba's codegen key, read in one function
    (manifest.describe): this fails when numba changes it."""
    d = manifest.describe()
    assert len(d["cpu"]) == 3 and all(isinstance(x, str) for x in d["cpu"])
    assert d["cpu"][1]                      # the CPU model numba compiles for
    import numba

    assert d["numba"] == numba.__version__


def test_a_checkout_edited_since_its_build_copies_no_shipped_kernel(tmp_path, monkeypatch):
    """numba checks a kernel against its own module only: a shipped kernel that inlines
    one from an edited module would run the old code, so an edited checkout (a module's
    digest off the manifest's) compiles instead of copying."""
    (tmp_path / "jit_probe2.py").write_text(
        "from dfrank._jit.store import njit\n\n@njit(cache=True)\ndef thrice(x):\n"
        "    return 3 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fake = {"built": True, "id": "x" * 64, "files": {"jit_probe2/a.nbi": "0" * 64},
            "sources": {"dfrank/nothing_here.py": "0" * 64}, **manifest.describe()}
    monkeypatch.setattr(store, "_memory", {"why": None, "manifest": fake})
    seeded = []
    monkeypatch.setattr(store, "_seed", lambda *a: seeded.append(a) or {"files": {}})
    import jit_probe2

    assert jit_probe2.thrice(2) == 6 and seeded == [] and store._memory["edited"] is True


# ---------------------------------------------------------------- the declared versions
def _kernel_modules():
    """dfrank's modules that define kernels with :func:`dfrank._jit.njit`."""
    import re

    root = os.path.join(os.path.dirname(__file__), "..", "dfrank")
    found = set()
    for folder, _, names in os.walk(root):
        for n in names:
            path = os.path.join(folder, n)
            if n.endswith(".py") and re.search(r"^@njit", open(path).read(), re.M) and \
                    os.sep + "_jit" + os.sep not in path:
                rel = os.path.relpath(path, os.path.join(root, ".."))[:-3]
                found.add(rel.replace(os.sep, "."))
    return found


def test_every_module_of_kernels_declares_its_versions_when_dfrank_is_imported():
    """A module of kernels registers its versions with the compile service
    (``_jit.declare``) as ``import dfrank`` imports it: the warm-up compiles what is
    declared, and a new module of kernels touches no file of the service."""
    import importlib
    import inspect
    import sys

    import dfrank  # noqa: F401
    from dfrank import _jit

    declared = _jit.declared()
    assert _kernel_modules() <= set(sys.modules)
    for name in _kernel_modules():
        module = importlib.import_module(name)
        assert all(ex in declared for ex in module.EXAMPLES), name
        for ex in module.EXAMPLES:
            assert ex.when in ("first", "later") and ex.task
            assert getattr(module, ex.kernel.py_func.__name__) is ex.kernel, (name, ex)
            n_params = len(inspect.signature(ex.kernel.py_func).parameters)
            assert len(ex.types) == n_params, (name, ex.kernel.py_func.__name__)
    assert {ex.kernel.py_func.__module__ for ex in declared} <= _kernel_modules()


def _command_inputs(tmp):
    """Tiny inputs of a new user's first commands, shaped as the real ones (gzipped LETOR
    with docids, TREC runs and qrels, a tab-separated collection, two shards of whole
    queries)."""
    import numpy as np

    from dfrank import io
    from dfrank.data.datasets import make_letor_like
    from dfrank.driver.result import LinearRanker

    f = {k: os.path.join(tmp, k) for k in ("train.txt.gz", "test.txt.gz", "model.json",
                                           "qrels.txt", "a.run", "b.run", "docs.tsv",
                                           "topics.tsv", "out", "shard0.txt",
                                           "shard1.txt")}
    for name, seed in (("train.txt.gz", 0), ("test.txt.gz", 1), ("shard0.txt", 0),
                       ("shard1.txt", 1)):
        data = make_letor_like(n_queries=6, docs_per_query=8, n_features=4, seed=seed)
        data.docids = np.array([f"doc{i}" for i in range(data.n_docs)])
        if name == "shard1.txt":   # other queries than shard0's
            data.qids = data.qids + 100
        io.save_svmlight(data, f[name])
    LinearRanker([0.5, -0.25, 1.0, 0.125]).save(f["model.json"])
    rng = np.random.default_rng(0)
    with open(f["qrels.txt"], "w") as q, open(f["a.run"], "w") as a, \
            open(f["b.run"], "w") as b:
        for qid in range(4):
            for d in range(6):
                q.write(f"{qid} 0 d{d} {int(rng.integers(0, 3))}\n")
                a.write(f"{qid} Q0 d{d} {d + 1} {rng.random()!r} a\n")
                b.write(f"{qid} Q0 d{d} {d + 1} {rng.random()!r} b\n")
    words = ["apple", "pear", "fig", "plum", "kiwi"]
    with open(f["docs.tsv"], "w") as d:
        d.writelines(f"d{i}\t{' '.join(words[(i + j) % 5] for j in range(1 + i % 4))}\n"
                     for i in range(6))
    with open(f["topics.tsv"], "w") as t:
        t.writelines(f"{q}\t{words[q]} {words[q + 1]}\n" for q in range(4))
    return f


_FIRST_COMMANDS = """
import contextlib, importlib, io, json, os, sys
from dfrank.cli import main
from dfrank._jit import store

called, depth = set(), [0]


def recording(kernel):
    compile_before = kernel.compile

    def compile(sig):   # a call from Python asks at depth 0, a caller's typing deeper
        if depth[0] == 0:
            fn = kernel.py_func
            called.add((f"{fn.__module__}:{fn.__name__}", repr(tuple(sig))))
        depth[0] += 1
        try:
            return compile_before(sig)
        finally:
            depth[0] -= 1
    kernel.compile = compile

for kernel in store.KERNELS:
    recording(kernel)
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv + ["--quiet"])
        except SystemExit as e:
            assert not e.code, (argv, e.code)
if len(sys.argv) > 2:   # a saved model's scores of plain arrays (sklearn, PyTerrier)
    import numpy as np
    from dfrank import LinearRanker

    model = LinearRanker.load(sys.argv[2])
    X = np.random.default_rng(0).random((7, model.n_features))
    model.predict(X, columns="model")
    model.predict(np.asfortranarray(X), columns="model")
    model.weights.setflags(write=False)   # as a model unpickled from a read-only map
    model.predict(X, columns="model")
if len(sys.argv) > 3:   # the default fit and evaluate on a cluster (its workers: threads here)
    import dfrank
    from distributed import Client, LocalCluster
    from dfrank.cluster import from_shards

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with contextlib.redirect_stderr(io.StringIO()):
            dfrank.maximize(from_shards(sys.argv[3:], client=client), seed=0)
        with contextlib.redirect_stdout(io.StringIO()):   # its default metrics
            glob = os.path.join(os.path.dirname(sys.argv[3]), "shard*.txt")
            assert main(["evaluate", sys.argv[2], glob, "--scheduler",
                         cluster.scheduler_address, "--quiet"]) == 0
print(json.dumps(sorted(called)))
"""


def test_the_first_commands_call_only_the_versions_the_install_compiles(tmp_path):
    """The install compiles the declared ``first`` versions without running a command: a
    caller passing other types (a dtype, a read-only flag, a layout), or a kernel called
    from Python and not declared, would compile on a user's first call, and this fails
    naming it (whatever the cache holds: the calls from Python are recorded). The commands
    include the engine's three models, a saved model's scores of plain arrays and, with
    the dask extra, the default fit and ``evaluate`` on a cluster (its driver and its
    workers, one thread each)."""
    import importlib.util

    from dfrank import _jit

    f = _command_inputs(str(tmp_path))
    commands = [["demo"],
                ["fit", f["train.txt.gz"], "--valid", f["test.txt.gz"], "--test",
                 f["test.txt.gz"], "-o", f["model.json"]],
                ["fit", f["train.txt.gz"], "--strategy", "ca", "--restarts", "1"],
                ["evaluate", f["model.json"], f["test.txt.gz"]],
                ["trec-eval", f["qrels.txt"], f["a.run"]],
                ["fuse", "--qrels", f["qrels.txt"], f["a.run"], f["b.run"], "--metric", "map",
                 "-o", f["out"]],
                ["tune", "--collection", f["docs.tsv"], "--topics", f["topics.tsv"],
                 "--qrels", f["qrels.txt"], "--model", "bm25", "--budget", "6", "--folds",
                 "2"],
                ["compare", f["train.txt.gz"], "--strategies", "ca,pso,random", "--budget",
                 "60", "--seeds", "1"]]
    commands += [["search", "--collection", f["docs.tsv"], "--topics", f["topics.tsv"],
                  "--model", model] for model in ("ql", "sdm")]
    shards = ([f["shard0.txt"], f["shard1.txt"]]
              if importlib.util.find_spec("distributed") is not None else [])   # dask extra
    env = dict(os.environ, DFRANK_BACKGROUND_COMPILE="0", DFRANK_QUIET_COMPILE="1")
    done = subprocess.run([sys.executable, "-c", _FIRST_COMMANDS, json.dumps(commands),
                           f["model.json"], *shards],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    called = {tuple(x) for x in json.loads(done.stdout.splitlines()[-1])}
    first = {(f"{ex.kernel.py_func.__module__}:{ex.kernel.py_func.__name__}",
              repr(ex.types)) for ex in _jit.declared() if ex.when == "first"}
    assert len(called) > 20 and called <= first, sorted(called - first)
