"""``dfrank warmup``: compile every numba kernel ahead of use."""

import os
import sys

from . import options as o

DESCRIPTION = ("Compile dfrank's numba kernels now, split over processes (one per core by "
               "default), instead of on their first use: they are cached on disk, so every "
               "later run loads them in a fraction of a second. Run it once after installing "
               "(or after upgrading) dfrank.")
EPILOG = """\
examples:
  dfrank warmup
  dfrank warmup first --n-jobs 1"""


def add_arguments(p):
    p.add_argument("what", nargs="?", default="all", choices=["all", "first"],
                   help="which kernels: all (default), or those of a new user's first "
                        "commands and every metric's evaluation (what the install compiles)")
    o.add_n_jobs(p, "processes (-1 or default: one per core)")
    p.set_defaults(n_jobs=None)
    o.add_quiet(p)


def run(args):
    from .._jit import in_memory, warm

    if in_memory():   # nothing a warm-up compiles would be kept
        print(f"dfrank warmup: nothing to do here: {in_memory()}, so kernels compile in "
              "memory in every process; set NUMBA_CACHE_DIR to a writable folder, then run "
              "dfrank warmup", file=sys.stderr)
        return 0
    jobs = None if args.n_jobs in (None, -1) else args.n_jobs
    print(f"compiling dfrank's numba kernels ({args.what}) on "
          f"{jobs or os.cpu_count()} processes; they are cached on disk for every "
          "later run", file=sys.stderr)
    secs = warm("install" if args.what == "first" else "all", jobs, progress=None if args.quiet else
                lambda name, s: print(f"  {name:36s} {s:6.1f} s", file=sys.stderr),
                still=None if args.quiet else
                lambda names, s: print(f"  ... {s:.0f} s: compiling {', '.join(names)}",
                                       file=sys.stderr))
    print(f"kernels ready in {secs:.1f} s")
    return 0
