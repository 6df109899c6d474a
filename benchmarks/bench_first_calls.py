"""A new user's first calls, in a fresh install: first run, warm run, extra, in each setup.

    python benchmarks/bench_first_calls.py [--test-command] [--setups plain,cache-dir,...]
        [--other-numba 0.67.0] [--release-wheel]

1. A clone of HEAD, a fresh virtualenv, README's user install (``pip install .``, timed:
   it compiles the first commands' kernels, see setup.py and dfrank/_jit/).
2. Each first command of benchmarks/first_tasks.py, on real data where the tasks use it,
   in each setup (a column group each): ``plain`` (no numba cache outside the installed
   package), ``cache-dir`` (``NUMBA_CACHE_DIR`` set to an empty folder, as clusters and CI
   set it), ``read-only`` (site-packages mounted read-only, as in a container image run as
   another user, with a writable, empty user cache folder; needs ``unshare -m``, root),
   ``read-only-all`` (the user cache folder read-only too: kernels compile in memory),
   ``another-cpu`` (``NUMBA_CPU_NAME=generic``), and with the options ``another-numba``
   (the same install with another numba of the range) and ``release-wheel`` (the wheel
   ``python -m build`` makes, ``py3-none-any``, no kernels).
   Each command runs once from the install's state (the kernels as the install left them,
   restored before each command, and the setup's cache folder emptied, so that no command
   profits from another's compiling), then again (warm); extra = first - warm.
3. ``dfrank warmup`` from the install's state: the kernels the install did not compile.
4. With ``--test-command``: README's contributor commands from a fresh clone (``git
   clone``, a fresh venv, ``pip install -e ".[dev]"`` (timed apart), then ``python -m
   pytest``, timed), ../shared beside the clone.

Each figure is printed with the tasks other processes had ready to run meanwhile.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_cell, load_now, shared_path, table, Timing  # noqa: E402
import first_tasks  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL = 10.0   # seconds a first call may spend beyond its warm run


def timed(argv, env, cwd=None, check=True):
    """Timing of ``argv`` with the others' ready tasks before it and the load after."""
    before = load_now()
    t = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}")
    return Timing(wall, before.others, os.getloadavg()[0])


def caches(site):
    """numba's cache files under the installed package, and the stamps of the folders
    the shipped kernels were copied to."""
    out = []
    for folder, _, files in os.walk(os.path.join(site, "dfrank")):
        out += [os.path.join(folder, f) for f in files
                if f.endswith((".nbi", ".nbc")) or f == "dfrank-kernels.json"]
    return out


def restore(site, saved):
    """Put the installed package's kernel cache back as the install left it."""
    for path in caches(site):
        os.unlink(path)
    for rel, data in saved.items():
        with open(os.path.join(site, rel), "wb") as f:
            f.write(data)


COMMIT = {"rev": None}   # --commit: the commit cloned (default: HEAD)


def fresh_install(tmp, kind="source", numba=None):
    """A clone of this repository's HEAD installed in a new venv: as README says
    (``source``: ``pip install .``), or the release's wheel (``release``: ``python -m
    build``'s, from the sdist); ``numba``: that version installed after it."""
    clone = os.path.join(tmp, "clone")
    if not os.path.isdir(clone):
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        if COMMIT["rev"]:
            subprocess.run(["git", "-C", clone, "checkout", "-q", COMMIT["rev"]], check=True)
    venv = os.path.join(tmp, f"venv-{kind}-{numba}")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
    if kind == "release":
        dist = os.path.join(tmp, "dist")
        timed([sys.executable, "-m", "build", "--outdir", dist, clone], env)
        [whl] = [f for f in os.listdir(dist) if f.endswith(".whl")]
        install = timed([py, "-m", "pip", "install", "-q", os.path.join(dist, whl)], env)
    else:
        install = timed([py, "-m", "pip", "install", "-q", "."], env, cwd=clone)
    if numba:
        timed([py, "-m", "pip", "install", "-q", f"numba=={numba}"], env)
    site = subprocess.run([py, "-c", "import os, dfrank; print(os.path.dirname(os.path."
                           "dirname(dfrank.__file__)))"], env=env, capture_output=True,
                          text=True, check=True, cwd=tmp).stdout.strip()
    return py, env, site, install


SETUPS = ("plain", "cache-dir", "read-only", "read-only-all", "another-cpu")


def _read_only(folders, py):
    """A command prefix running ``py`` with ``folders`` mounted read-only."""
    mounts = " && ".join(f"mount --bind '{d}' '{d}' && mount -o remount,ro,bind '{d}' '{d}'"
                         for d in folders)
    return ["unshare", "-m", "sh", "-c", f"{mounts} && exec \"$@\"", "sh", py]


def setup_of(name, tmp, py, env, site):
    """(command prefix, environment, folder emptied before each first call) of a setup:
    ``plain``; ``cache-dir`` (NUMBA_CACHE_DIR); ``read-only`` (site-packages, with a
    writable user cache); ``read-only-all`` (site-packages and the user cache: kernels
    compile in memory, in every process); ``another-cpu`` (numba told to target a generic
    x86-64, NUMBA_CPU_NAME=generic: the install's kernels do not serve)."""
    cache = os.path.join(tmp, f"cache-{name}")
    if name in ("plain", "another-numba", "release-wheel"):
        return [py], env, None
    if name == "cache-dir":
        return [py], dict(env, NUMBA_CACHE_DIR=cache), cache
    if name == "another-cpu":
        return [py], dict(env, NUMBA_CPU_NAME="generic"), None
    if name == "read-only-all":
        os.makedirs(cache, exist_ok=True)
        return (_read_only([os.path.join(site, "dfrank"), cache], py),
                dict(env, XDG_CACHE_HOME=cache), None)
    return (_read_only([os.path.join(site, "dfrank")], py), dict(env, XDG_CACHE_HOME=cache),
            cache)


def first_calls(tmp, py, env, site, setup="plain"):
    saved = {os.path.relpath(p, site): open(p, "rb").read() for p in caches(site)}
    folder = os.path.join(tmp, "inputs")
    first_tasks.write_inputs(folder)
    prefix, env, cache = setup_of(setup, tmp, py, env, site)
    rows = []
    for name, argv in first_tasks.tasks(folder):
        restore(site, saved)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
        cmd = [*prefix, "-m", "dfrank.cli", *argv, "--quiet"] if argv[0] != "demo" else \
            [*prefix, "-m", "dfrank.cli", *argv]
        first = timed(cmd, env, cwd=tmp)
        warm = timed(cmd, env, cwd=tmp)
        extra = first - warm
        rows.append([name, f"{first:.1f} s", f"{warm:.1f} s",
                     f"{extra:+.1f} s", "yes" if extra <= GOAL else "NO",
                     load_cell(first, warm)])
    restore(site, saved)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    warmup = timed([*prefix, "-m", "dfrank.cli", "warmup", "--quiet"], env, cwd=tmp)
    restore(site, saved)
    return rows, warmup


def test_command(tmp):
    clone = os.path.join(tmp, "contributor")
    subprocess.run(["git", "clone", "-q", ROOT, os.path.join(clone, "dfrank")], check=True)
    shared = shared_path()
    if shared:
        os.symlink(os.path.dirname(shared), os.path.join(clone, "shared"))
    src = os.path.join(clone, "dfrank")
    venv = os.path.join(clone, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV", "CI")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
    py = os.path.join(venv, "bin", "python")
    install = timed([py, "-m", "pip", "install", "-q", "-e", ".[dev]"], env, cwd=src)
    tests = timed([py, "-m", "pytest", "-q", "-p", "no:cacheprovider"], env, cwd=src)
    return install, tests


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test-command", action="store_true",
                    help="also time README's contributor install and test command")
    ap.add_argument("--only-test-command", action="store_true",
                    help="time README's contributor install and test command only")
    ap.add_argument("--setups", default=",".join(SETUPS),
                    help=f"the setups of the first calls, of {', '.join(SETUPS)}")
    ap.add_argument("--other-numba", metavar="VERSION",
                    help="also a setup 'another-numba': the same install with this numba of "
                         "the declared range installed after it")
    ap.add_argument("--commit", metavar="REV",
                    help="install this commit of the repository instead of HEAD (to measure "
                         "the code before a change beside it)")
    ap.add_argument("--release-wheel", action="store_true",
                    help="also a setup 'release-wheel': the wheel python -m build makes "
                         "(py3-none-any, no kernels) installed in a venv of its own")
    args = ap.parse_args()
    COMMIT["rev"] = args.commit
    if shared_path() is None:
        sys.exit("needs ../shared/data (OHSUMED, CISI)")
    print(f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"commit {args.commit or 'HEAD'}")
    with tempfile.TemporaryDirectory(prefix="dfrank-first-") as tmp:
        if args.only_test_command:
            install, tests = test_command(tmp)
            print(f"contributor install (pip install -e .[dev]): {install:.0f} s "
                  f"({load_cell(install)}); README's test command: {tests:.0f} s "
                  f"({load_cell(tests)})")
            return
        py, env, site, install = fresh_install(tmp)
        print(f"README's user install (pip install .): {install:.0f} s "
              f"({load_cell(install)})")
        setups = [(s, (py, env, site)) for s in args.setups.split(",")]
        if args.other_numba:
            *other, took = fresh_install(tmp, numba=args.other_numba)
            print(f"install with numba {args.other_numba} after it: {took:.0f} s")
            setups.append(("another-numba", tuple(other)))
        if args.release_wheel:
            *release, took = fresh_install(tmp, kind="release")
            print(f"the release wheel (python -m build, then pip install): {took:.0f} s")
            setups.append(("release-wheel", tuple(release)))
        for setup, (py, env, site) in setups:
            rows, warmup = first_calls(tmp, py, env, site, setup)
            print(f"\nsetup: {setup}")
            print(table(rows, ["first call", "first", "warm", "extra", f"<= {GOAL:g} s",
                               "load"]))
            print(f"dfrank warmup from the install's state ({setup}): {warmup:.0f} s "
                  f"({load_cell(warmup)})")
        if args.test_command:
            install, tests = test_command(tmp)
            print(f"contributor install (pip install -e .[dev]): {install:.0f} s "
                  f"({load_cell(install)}); README's test command: {tests:.0f} s "
                  f"({load_cell(tests)})")


if __name__ == "__main__":
    main()
