"""One benchmark script run against two checkouts of dfrank in turn, to compare their speed
on the same machine under the same load.

    python benchmarks/side_by_side.py OTHER_CHECKOUT SCRIPT [--rounds 5] [-- SCRIPT_ARGS]

Each round runs ``SCRIPT`` (a file of this benchmarks/ folder) once with this checkout's
dfrank (the installed one) and once with ``OTHER_CHECKOUT``'s (a copy laid out as an install
lays it out, its own strategies inside, first on PYTHONPATH), the
order alternating from round to round, so a drift of the machine's speed falls on both.
Every time the script prints (a number followed by s, ms or us) is read in the order
printed; the table gives, for each, the median over the rounds of this checkout's and the
other's, and their ratio; the last line is the median of the ratios of the times that
differ between runs (a fixed time limit, printed as it is, does not). The other checkout's
kernels compile on its first run: give it ``dfrank warmup`` first (with its PYTHONPATH).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import load_cell, load_now, table  # noqa: E402

TIME = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) (s|ms|us)\b")
UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def times(text):
    """The times a benchmark printed, in seconds, in the order printed."""
    return [float(v) * UNIT[u] for v, u in TIME.findall(text)]


def importable(other):
    """A folder from which ``import dfrank`` gives the checkout ``other`` as an install lays
    it out: its ``dfrank/`` with its own ``strategies/`` inside (a checkout holds them side
    by side, and only an install maps one into the other). Copied, times kept, into a
    folder of the temporary directory named after the checkout, so that numba's cache of
    that copy serves the next run."""
    import hashlib
    import shutil
    import tempfile

    other = os.path.abspath(other)
    tag = hashlib.sha256(other.encode()).hexdigest()[:12]
    folder = os.path.join(tempfile.gettempdir(), f"dfrank-side-by-side-{tag}")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "kernels")
    shutil.copytree(os.path.join(other, "dfrank"), os.path.join(folder, "dfrank"),
                    ignore=skip, dirs_exist_ok=True)
    if os.path.isdir(os.path.join(other, "strategies")):
        shutil.copytree(os.path.join(other, "strategies"),
                        os.path.join(folder, "dfrank", "strategies"), ignore=skip,
                        dirs_exist_ok=True)
    return folder


def run(script, args, other):
    env = dict(os.environ)
    if other:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [importable(other),
                                                          env.get("PYTHONPATH")]))
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, script), *args], env=env,
                         capture_output=True, text=True, check=True)
    return times(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("other", help="the other checkout (its root, holding dfrank/)")
    ap.add_argument("script", help="a benchmark of this folder, e.g. bench_ca.py")
    ap.add_argument("--rounds", type=int, default=5)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]   # the script's own arguments
    this, other = [], []
    for r in range(a.rounds):
        order = (None, a.other) if r % 2 == 0 else (a.other, None)
        for checkout in order:
            (other if checkout else this).append(run(a.script, args, checkout))
        print(f"round {r + 1}: {load_cell(load_now())}", flush=True)
    n = min(len(t) for t in this + other)
    rows, ratios = [], []
    for i in range(n):
        mine = statistics.median(t[i] for t in this)
        theirs = statistics.median(t[i] for t in other)
        varies = len({t[i] for t in this + other}) > 1
        ratio = mine / theirs if theirs > 0 else float("nan")
        if varies and theirs > 0:
            ratios.append(ratio)
        rows.append([i + 1, f"{mine:.4g} s", f"{theirs:.4g} s",
                     f"{ratio:.3f}" if theirs > 0 else "", "" if varies else "fixed"])
    print(table(rows, ["time #", "this checkout", "other", "this / other", ""]))
    if ratios:
        print(f"{a.script}: median of {len(ratios)} ratios this / other = "
              f"{statistics.median(ratios):.3f} ({a.rounds} rounds, alternated)")


if __name__ == "__main__":
    main()
