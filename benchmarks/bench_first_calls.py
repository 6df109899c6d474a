"""A new user's first calls, in a fresh install (issue #52): first run, warm run, extra.

    python benchmarks/bench_first_calls.py [--test-command]

1. A clone of HEAD, a fresh virtualenv, README's user install (``pip install .``, timed:
   it compiles the first commands' kernels, see setup.py), and no numba cache outside the
   installed package (``NUMBA_CACHE_DIR`` unset).
2. Each first command of benchmarks/first_tasks.py, on real data where the tasks use it:
   run once from the install's state (its kernel cache as the install left it, restored
   before each command, so no command profits from another's compiling), then again
   (warm); extra = first - warm.
3. ``dfrank warmup`` from the install's state: the kernels the install did not compile.
4. With ``--test-command``: README's contributor commands from a fresh clone (``git
   clone``, a fresh venv, ``pip install -e ".[dev]"`` (timed apart), then ``python -m
   pytest``, timed), ../shared beside the clone.

Each figure is printed with the tasks other processes had ready to run meanwhile.
"""

import argparse
import os
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
    """numba's cache files under the installed package."""
    out = []
    for folder, _, files in os.walk(os.path.join(site, "dfrank")):
        out += [os.path.join(folder, f) for f in files if f.endswith((".nbi", ".nbc"))]
    return out


def restore(site, saved):
    """Put the installed package's kernel cache back as the install left it."""
    for path in caches(site):
        os.unlink(path)
    for rel, data in saved.items():
        with open(os.path.join(site, rel), "wb") as f:
            f.write(data)


def fresh_install(tmp):
    """A clone of this repository's HEAD installed as README says, in a new venv."""
    clone = os.path.join(tmp, "clone")
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    venv = os.path.join(tmp, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
    install = timed([py, "-m", "pip", "install", "-q", "."], env, cwd=clone)
    site = subprocess.run([py, "-c", "import os, dfrank; print(os.path.dirname(os.path."
                           "dirname(dfrank.__file__)))"], env=env, capture_output=True,
                          text=True, check=True, cwd=tmp).stdout.strip()
    return py, env, site, install


def first_calls(tmp, py, env, site):
    saved = {os.path.relpath(p, site): open(p, "rb").read() for p in caches(site)}
    folder = os.path.join(tmp, "inputs")
    first_tasks.write_inputs(folder)
    rows = []
    for name, argv in first_tasks.tasks(folder):
        restore(site, saved)
        cmd = [py, "-m", "dfrank.cli", *argv, "--quiet"] if argv[0] != "demo" else \
            [py, "-m", "dfrank.cli", *argv]
        first = timed(cmd, env, cwd=tmp)
        warm = timed(cmd, env, cwd=tmp)
        extra = first - warm
        rows.append([name, f"{first:.1f} s", f"{warm:.1f} s",
                     f"{extra:+.1f} s", "yes" if extra <= GOAL else "NO",
                     load_cell(first, warm)])
    restore(site, saved)
    warmup = timed([py, "-m", "dfrank.cli", "warmup", "--quiet"], env, cwd=tmp)
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
    args = ap.parse_args()
    if shared_path() is None:
        sys.exit("needs ../shared/data (OHSUMED, CISI)")
    print(f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
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
        rows, warmup = first_calls(tmp, py, env, site)
        print(table(rows, ["first call", "first", "warm", "extra", f"<= {GOAL:g} s",
                           "load"]))
        print(f"dfrank warmup from the install's state: {warmup:.0f} s "
              f"({load_cell(warmup)})")
        if args.test_command:
            install, tests = test_command(tmp)
            print(f"contributor install (pip install -e .[dev]): {install:.0f} s "
                  f"({load_cell(install)}); README's test command: {tests:.0f} s "
                  f"({load_cell(tests)})")


if __name__ == "__main__":
    main()
