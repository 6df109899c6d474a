"""What the shipped kernels cost a process that starts: copying them to where numba reads
them (once per install) and checking that folder (once per process).

    python benchmarks/bench_kernel_check.py [--rounds 5]

Each round starts a fresh process that imports dfrank and every module with kernels,
with ``NUMBA_CACHE_DIR`` set to a folder of its own: first empty (the copy and the check,
as a first import after installing), then again (the check alone, as every later
process), and prints the seconds spent in dfrank._jit.store's preparation, the median of
the rounds, with the tasks other processes had ready to run.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_now  # noqa: E402

PROBE = """
import time
from dfrank._jit import store
spent = [0.0]
prepare = store._prepare
def timed(kernel):
    t = time.perf_counter()
    prepare(kernel)
    spent[0] += time.perf_counter() - t
store._prepare = timed
import dfrank, dfrank.linesearch, dfrank.io, dfrank.ir._kernels, dfrank.metrics.trec_eval
import dfrank.metrics._smoothed, dfrank.spaces
print(spent[0], len(store._seeded))
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
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            for out in (first, later):
                others.append(load_now().others)
                done = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True,
                                      capture_output=True, text=True).stdout.split()
                out.append(float(done[0]))
    print(f"{len(m['files'])} shipped files, {size / 1e6:.1f} MB, {done[1]} packages; "
          f"median of {args.rounds} rounds (others ready to run: {max(others):.2f})")
    print(f"  first import (copy and check): {statistics.median(first):.3f} s")
    print(f"  every later process (check):   {statistics.median(later):.3f} s")


if __name__ == "__main__":
    main()
