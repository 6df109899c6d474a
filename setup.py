"""Build step of dfrank: the package is built with its numba kernels compiled.

A first command of a new install would otherwise spend a minute compiling the kernels it
needs (numba compiles on first use and caches on disk). So building dfrank (``pip install
.``, ``pip wheel .``) runs the first commands of a new user's tasks on tiny inputs and
every metric's evaluation (``python -m dfrank.warmup install``; ``pip install -e .`` for a
source checkout runs every warm-up task, ``all``), which compiles their kernels into
numba's cache beside the modules, and ships that cache with
the package, with a manifest of what it was built with (``dfrank/_prebuilt.json``: numba,
llvmlite, Python, the CPU). numba loads a cached kernel only for the same numba version,
Python and CPU, and dfrank says in one line when the install's kernels do not fit and it
compiles instead.

The build never fails for this: without numba, or when compiling fails or takes longer
than KERNEL_TIMEOUT seconds, the package is built without compiled kernels (they compile
on first use, as before). ``DFRANK_BUILD_KERNELS=0`` skips the step.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from setuptools import setup
from setuptools.command.build_py import build_py

ENV = "DFRANK_BUILD_KERNELS"
KERNEL_TIMEOUT = 600
MANIFEST = os.path.join("dfrank", "_prebuilt.json")


def compile_kernels(root, group="install"):
    """Compile the kernels of ``group`` (``python -m dfrank.warmup GROUP``) into numba's
    cache under ``root`` (a tree of the installed layout) and write the manifest there;
    never raises."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p]),
               DFRANK_QUIET_COMPILE="1", DFRANK_BACKGROUND_COMPILE="0")
    t = time.time()
    print(f"dfrank: compiling numba kernels ({group}: two minutes or more on 2 cores; "
          "DFRANK_BUILD_KERNELS=0 skips it)", file=sys.stderr, flush=True)
    try:
        done = subprocess.run([sys.executable, "-m", "dfrank.warmup", group,
                               "--manifest"], env=env, cwd=root, timeout=KERNEL_TIMEOUT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        why = None if done.returncode == 0 else (done.stdout.strip().splitlines() or
                                                 ["failed"])[-1]
    except subprocess.TimeoutExpired:
        why = f"compiling took longer than {KERNEL_TIMEOUT} s"
    except OSError as e:
        why = str(e)
    if why is not None:
        print(f"dfrank: the kernels were not compiled at build ({why}); they compile on "
              "first use", file=sys.stderr, flush=True)
        for path in glob.glob(os.path.join(root, "**", "*.nb[ic]"), recursive=True):
            os.unlink(path)
        with open(os.path.join(root, MANIFEST), "w") as f:
            json.dump({"format": "dfrank.prebuilt", "version": 1, "built": False,
                       "reason": why}, f)
    else:
        print(f"dfrank: kernels compiled in {time.time() - t:.0f} s", file=sys.stderr,
              flush=True)


class BuildPyWithKernels(build_py):
    """``build_py``, then the install's kernels compiled into the built tree (a wheel ships
    them); in an editable install (a contributor's checkout, whose tests use every kernel),
    all of them, compiled in a copy of the tree, their cache files put beside the source
    modules (where numba looks for them)."""

    def run(self):
        editable = self.editable_mode
        if not editable:
            super().run()
        if os.environ.get(ENV, "1") == "0":
            return
        if not editable:
            compile_kernels(self.build_lib)
            return
        with tempfile.TemporaryDirectory(prefix="dfrank-build-") as tmp:
            self.editable_mode, self.build_lib = False, tmp
            try:
                super().run()
            finally:
                self.editable_mode = True
            compile_kernels(tmp, "all")   # a contributor's checkout: the tests use them all
            for package in self.packages:
                built = os.path.join(tmp, *package.split("."))
                source = self.get_package_dir(package)
                for path in glob.glob(os.path.join(built, "__pycache__", "*.nb[ic]")):
                    os.makedirs(os.path.join(source, "__pycache__"), exist_ok=True)
                    shutil.copy2(path, os.path.join(source, "__pycache__"))
            shutil.copy2(os.path.join(tmp, MANIFEST), MANIFEST)


setup(cmdclass={"build_py": BuildPyWithKernels})
