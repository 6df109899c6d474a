"""What the shipped kernels cost a process that starts: copying them to where numba reads
them (once per install) and checking that folder (once per process).

    python benchmarks/bench_kernel_check.py [--rounds 5]

Each round starts a fresh process that does, for every package with shipped kernels,
what dfrank._jit.store does where numba reads them: copy the shipped files into an empty
folder and check it (a first import after installing), then check it again (every later
process); it prints the seconds of each, the median of the rounds, with the tasks other
processes had ready to run. Run it after dropping the page cache for a cold disk.
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_now  # noqa: E402

PROBE = """
import os, sys, tempfile, time
from dfrank._jit import manifest, store
m = manifest.manifest()
packages = sorted({k.split("/", 1)[0] for k in m["files"]})
first = later = 0.0
with tempfile.TemporaryDirectory() as root:
    for package in packages:
        shipped = {k.split("/", 1)[1]: d for k, d in m["files"].items()
                   if k.split("/", 1)[0] == package}
        folder = os.path.join(root, package)
        os.makedirs(folder)
        t = time.perf_counter()
        stamp = store._seed(package, folder, shipped, m["id"])
        store._check(folder, stamp)
        first += time.perf_counter() - t
        t = time.perf_counter()
        store._check(folder, store._read_stamp(folder))
        later += time.perf_counter() - t
print(first, later, len(packages))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from dfrank._jit import manifest

    m = manifest.manifest()
    if not (m and m.get("built")):
        sys.exit("this dfrank ships no kernels (pip install . builds them)")
    size = sum(os.path.getsize(os.path.join(manifest.KERNELS, *k.split("/")))
               for k in m["files"])
    first, later, others = [], [], []
    for _ in range(args.rounds):
        others.append(load_now().others)
        done = subprocess.run([sys.executable, "-c", PROBE], check=True,
                              capture_output=True, text=True).stdout.split()
        first.append(float(done[0]))
        later.append(float(done[1]))
    print(f"{len(m['files'])} shipped files, {size / 1e6:.1f} MB, {done[2]} packages; "
          f"median of {args.rounds} rounds (others ready to run: {max(others):.2f})")
    print(f"  first import (copy and check): {statistics.median(first):.3f} s")
    print(f"  every later process (check):   {statistics.median(later):.3f} s")


if __name__ == "__main__":
    main()
