"""The build step: compile the install's kernels into a tree of the installed layout and
ship them (``python -m dfrank._jit.build ROOT GROUP``, run by setup.py).

ROOT is the tree being built (this process imports dfrank from it); GROUP a warm-up group
(:data:`.pool.GROUPS`: ``install`` for a wheel, ``all`` for a contributor's
editable checkout). Whatever an earlier build left in the tree is removed first; the
kernels compile into numba's cache beside the tree's modules, split over one process per
core, and :func:`.manifest.ship` moves them into the kernels folder with their digests.
The shipped kernels of an earlier build are never copied into the tree's caches meanwhile
(``DFRANK_SHIPPED_KERNELS=0``).
"""

import os
import sys

from . import manifest


def _follow(fd):
    """End this process at once when the pipe ``fd`` closes: the build that started it
    (setup.py) has ended, however it ended; the helpers it started end with it (their
    lifelines)."""
    import threading

    def watch():
        os.read(fd, 1)
        os._exit(143)

    threading.Thread(target=watch, daemon=True).start()


def main(argv=None):
    if os.environ.get("DFRANK_LIFELINE"):
        _follow(int(os.environ.pop("DFRANK_LIFELINE")))
    root, group = (argv if argv is not None else sys.argv[1:])
    root = os.path.abspath(root)
    manifest.ship_nothing(root, "the build did not finish")
    os.environ["DFRANK_SHIPPED_KERNELS"] = "0"   # inherited by the warm-up's processes
    from .pool import warm

    secs = warm(group, progress=lambda name, s: print(f"  {name:36s} {s:6.1f} s",
                                                      file=sys.stderr, flush=True),
                still=lambda names, s: print(f"  ... {s:.0f} s: compiling {', '.join(names)}",
                                             file=sys.stderr, flush=True))
    manifest.ship(root, secs, group)
    print(f"kernels ready in {secs:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
