"""Build step of dfrank: the package is built with its numba kernels compiled.

A first command of a new install would otherwise spend a minute compiling the kernels it
needs (numba compiles on first use and caches on disk). So building dfrank from a source
checkout (``pip install .``, ``pip wheel .``) runs ``python -m dfrank._jit.build``, which
compiles the versions of the kernels that each module declares for a new user's first
commands and every metric's evaluation (``pip install -e .`` for a source checkout: every
declared version); it ships
them in ``dfrank/_jit/kernels/`` with a manifest of what they were built with and a digest
of each file (see dfrank/_jit/). A wheel that carries kernels is tagged for this Python and
platform (numba loads a kernel only for the numba, Python and CPU it was compiled for, and
dfrank says in one line when they do not fit and compiles instead).

A build from the source distribution (``python -m build``: the sdist, then the wheel
from it; a release) makes a wheel for any machine instead: ``py3-none-any``, with no
kernels (numba's kernels serve only the CPU they were compiled for); they compile on first
use, with progress lines, or all at once with ``dfrank warmup``.

The build never fails for this: without numba, or when compiling fails or takes longer
than KERNEL_TIMEOUT seconds, the package is built without compiled kernels (they compile
on first use) and its manifest says so. ``DFRANK_BUILD_KERNELS=0`` skips the step,
``DFRANK_BUILD_KERNELS=1`` compiles also from the source distribution. ``pip install -v
.`` shows its progress.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ENV = "DFRANK_BUILD_KERNELS"
HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_TIMEOUT = 900
KERNELS = os.path.join("dfrank", "_jit", "kernels")


def ship_nothing(root, why):
    """The tree ``root`` ships no kernels: whatever an earlier build left is removed, and
    the manifest says why (dfrank._jit.manifest.ship_nothing, without importing dfrank)."""
    shutil.rmtree(os.path.join(root, KERNELS), ignore_errors=True)
    for path in glob.glob(os.path.join(root, "dfrank", "**", "*.nb[ic]"), recursive=True):
        os.unlink(path)
    os.makedirs(os.path.join(root, KERNELS))
    with open(os.path.join(root, KERNELS, "manifest.json"), "w") as f:
        json.dump({"format": "dfrank.prebuilt", "version": 2, "built": False,
                   "reason": why}, f)
    print(f"dfrank: the build ships no compiled kernels ({why}); they compile on first "
          "use", file=sys.stderr, flush=True)


def follow_parent(parent):
    """End this build at once when its parent (pip) ends: pip ended by a signal leaves its
    build running on its own, compiling for minutes for nobody (the compile ends with this
    process: its lifeline)."""
    while os.getppid() == parent:
        time.sleep(0.25)
    os._exit(1)


def kernels_skipped():
    """Why this build compiles no kernels (None: it compiles them): ``DFRANK_BUILD_KERNELS=0``,
    or a build from the source distribution (its ``PKG-INFO`` beside this file), whose wheel
    is for any machine."""
    setting = os.environ.get(ENV)
    if setting == "0":
        return f"{ENV}=0"
    if setting is None and os.path.exists(os.path.join(HERE, "PKG-INFO")):
        return ("a wheel built from the source distribution is for any machine; kernels "
                "compile on first use, or all at once with 'dfrank warmup'")
    return None


def compile_kernels(root, group="install"):
    """Compile the kernels of ``group`` into the tree ``root`` (of the installed layout) and
    ship them there; never raises. Returns whether it shipped kernels."""
    root = os.path.abspath(root)
    if kernels_skipped():
        ship_nothing(root, kernels_skipped())
        return False
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p]),
               DFRANK_QUIET_COMPILE="1", DFRANK_BACKGROUND_COMPILE="0")
    t = time.time()
    print(f"dfrank: compiling numba kernels ({group}; about two minutes on 2 cores, "
          f"{'five' if group == 'all' else 'ten'} on a busy machine; {ENV}=0 skips it)",
          file=sys.stderr, flush=True)
    lines = []

    def forward(stream):   # its progress lines, as they come: pip install -v shows them
        for line in stream:
            lines.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()

    read, write = os.pipe()   # its lifeline: closed when this process ends, it ends too
    env["DFRANK_LIFELINE"] = str(read)
    try:
        try:
            proc = subprocess.Popen([sys.executable, "-m", "dfrank._jit.build", root, group],
                                    env=env, cwd=root, text=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, pass_fds=(read,))
        finally:
            os.close(read)
        reader = threading.Thread(target=forward, args=(proc.stdout,), daemon=True)
        reader.start()
        threading.Thread(target=follow_parent, args=(os.getppid(),), daemon=True).start()
        try:
            code = proc.wait(timeout=KERNEL_TIMEOUT)
            reader.join(10)
            why = None if code == 0 else ("".join(lines).strip().splitlines() or
                                          [f"exit {code}"])[-1]
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            why = f"compiling took longer than {KERNEL_TIMEOUT} s"
    except OSError as e:
        why = str(e)
    finally:
        os.close(write)
    if why is not None:
        ship_nothing(root, why)
        return False
    print(f"dfrank: kernels compiled in {time.time() - t:.0f} s", file=sys.stderr,
          flush=True)
    return True


class BuildPyWithKernels(build_py):
    """``build_py``, then the install's kernels compiled into the built tree (a wheel ships
    them); in an editable install (a contributor's checkout, whose tests use every kernel),
    all of them, compiled in a copy of the tree, their kernels folder put into the source
    tree."""

    def run(self):
        editable = self.editable_mode
        if not editable:
            super().run()
            self.distribution.kernels = compile_kernels(self.build_lib)
            return
        with tempfile.TemporaryDirectory(prefix="dfrank-build-") as tmp:
            self.editable_mode, self.build_lib = False, tmp
            try:
                super().run()
            finally:
                self.editable_mode = True
            self.distribution.kernels = compile_kernels(tmp, "all")
            shutil.rmtree(KERNELS, ignore_errors=True)
            shutil.copytree(os.path.join(tmp, KERNELS), KERNELS)


class WheelTaggedByKernels(bdist_wheel):
    """A wheel with compiled kernels serves one Python and platform: it is tagged so
    (``cp311-cp311-linux_x86_64``); one without them is ``py3-none-any``."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = kernels_skipped() is not None

    def get_tag(self):
        if getattr(self.distribution, "kernels", False):
            return super().get_tag()
        return "py3", "none", "any"


setup(cmdclass={"build_py": BuildPyWithKernels, "bdist_wheel": WheelTaggedByKernels})
