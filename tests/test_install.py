"""What a user's install does, from a build of this checkout into fresh venvs: minutes each,
so left out by default (``python -m pytest -m install``); each skips cleanly where the
package index lacks what it needs."""

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.install]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OTHER_NUMBA = "0.67.0"   # in the declared range, not the one the build uses


def _pip(python, *args, timeout=900):
    return subprocess.run([python, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel of this checkout, built as pip builds it (its kernels compiled)."""
    out = tmp_path_factory.mktemp("wheel")
    done = _pip(sys.executable, "wheel", "--no-deps", "-w", str(out), ROOT, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    [name] = [n for n in os.listdir(out) if n.endswith(".whl")]
    return str(out / name)


def _venv(path, *requirements):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = str(path / "bin" / "python")
    done = _pip(python, "install", *requirements)
    if done.returncode != 0 and "No matching distribution" in done.stderr:
        pytest.skip(f"the package index lacks {requirements[1:]}: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return python


FIRST_CALLS = [["demo"], ["fit", "TRAIN", "--strategy", "ca", "--restarts", "1", "--budget",
                          "200"], ["evaluate", "MODEL", "TRAIN"]]


def _first_calls(python, tmp_path):
    """Each first-calls command in ``python``'s venv: the lines that say a kernel compiled
    or a cache file was refused."""
    if not (tmp_path / "train.txt").exists():
        from dfrank.io import save_svmlight
        from dfrank.testing import planted_data

        save_svmlight(planted_data(n_queries=20, seed=0), str(tmp_path / "train.txt"))
        from dfrank import LinearRanker

        LinearRanker([1.0] * 8).save(tmp_path / "model.json")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",
                                                            "DFRANK_QUIET_COMPILE")}
    env.update(DFRANK_DEBUG_COMPILE="1", DFRANK_BACKGROUND_COMPILE="0")
    said = []
    for argv in FIRST_CALLS:
        argv = [str(tmp_path / "train.txt") if a == "TRAIN" else
                str(tmp_path / "model.json") if a == "MODEL" else a for a in argv]
        done = subprocess.run([python, "-m", "dfrank", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        said += [line for line in done.stderr.splitlines()
                 if line.startswith("dfrank: compiling ") or "does not match" in line]
    return said


def test_under_another_numba_of_the_range_each_kernel_compiles_once(wheel, tmp_path):
    """With numba 0.67 beside a build made with 0.68, the second run of the first commands
    compiled everything again, after 72 lines taking numba's own files for shipped ones
    tampered with: the shipped kernels are not copied where they do not serve, and the
    second run compiles nothing and says nothing."""
    python = _venv(tmp_path / "venv", wheel, f"numba=={OTHER_NUMBA}")
    version = subprocess.run([python, "-c", "import numba; print(numba.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    assert version == OTHER_NUMBA
    first = _first_calls(python, tmp_path)
    assert any(line.startswith("dfrank: compiling ") for line in first)
    assert not [line for line in first if "does not match" in line], first
    assert _first_calls(python, tmp_path) == []


def _with_mark(mark):
    """PIDs of live processes whose environment holds ``mark`` (Linux's /proc); zombies
    are not live."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            if pid.isdigit() and mark.encode() in open(f"/proc/{pid}/environ", "rb").read():
                found.append(int(pid))
        except OSError:
            pass
    return found


def _helpers(mark):
    """The build's compile helpers (warm-up processes) among the marked processes."""
    out = []
    for pid in _with_mark(mark):
        try:
            if b"dfrank._jit.pool" in open(f"/proc/{pid}/cmdline", "rb").read():
                out.append(pid)
        except OSError:
            pass
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm-pip", "sigkill-pip"])
def test_a_build_stopped_in_any_way_leaves_no_compile_helper(tmp_path, how):
    """After pip and the build process had ended, the build's two helpers went on
    compiling, orphaned (65 s and more), in process groups a terminal's Ctrl-C does not
    reach: within 5 s of Ctrl-C (SIGINT to the foreground group), SIGTERM to pip or
    SIGKILL of pip, no process of the build is left."""
    import signal
    import time
    import uuid

    mark = f"dfrank-build-{uuid.uuid4().hex}"
    env = dict(os.environ, DFRANK_TEST_MARK=mark)
    pip = subprocess.Popen([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w",
                            str(tmp_path), ROOT], env=env, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not _helpers(mark) and time.monotonic() < deadline and pip.poll() is None:
        time.sleep(0.2)
    assert _helpers(mark), "the build started no compile helper"
    time.sleep(1.0)
    if how == "ctrl-c":
        os.killpg(pip.pid, signal.SIGINT)
    else:
        pip.send_signal(signal.SIGTERM if how == "sigterm-pip" else signal.SIGKILL)
    pip.wait(timeout=60)
    t = time.monotonic()
    while _with_mark(mark) and time.monotonic() - t < 5.0:
        time.sleep(0.1)
    left = _with_mark(mark)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"{len(left)} processes of the build left after {how}"


def test_the_release_wheel_serves_any_machine_and_its_tag_says_so(tmp_path):
    """The wheel carried 247 kernel files compiled for the build machine's CPU under a
    plain ``linux_x86_64`` tag, which a package index refuses and another machine cannot
    use. ``python -m build`` (the sdist, then the wheel from it) makes a ``py3-none-any``
    wheel with no kernels, whose first call compiles with progress lines, and a checkout's
    ``pip wheel .`` keeps its native kernels (see ``wheel``)."""
    import zipfile

    pytest.importorskip("build")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"),
                           ROOT], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    [whl] = [n for n in os.listdir(tmp_path / "dist") if n.endswith(".whl")]
    assert whl.endswith("-py3-none-any.whl"), whl
    names = zipfile.ZipFile(tmp_path / "dist" / whl).namelist()
    assert not [n for n in names if n.endswith((".nbi", ".nbc"))]
    python = _venv(tmp_path / "venv", str(tmp_path / "dist" / whl))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",
                                                            "DFRANK_QUIET_COMPILE")}
    demo = subprocess.run([python, "-m", "dfrank", "demo"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "the install did not compile them (a wheel built from the source distribution" \
        in demo.stderr


def test_a_checkouts_wheel_carries_native_kernels_tagged_for_its_platform(wheel):
    import zipfile

    assert "-cp3" in os.path.basename(wheel) and not wheel.endswith("-none-any.whl")
    assert [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".nbc")]
