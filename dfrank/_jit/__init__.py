"""The compile lifecycle of dfrank's numba kernels, as one service: its front door.

What the service knows is kernels, never what they compute: a module of kernels makes them
with :func:`njit` and declares, with :func:`declare`, the argument types Python calls them
with (:func:`first`, :func:`later` and the type vocabulary); the service compiles those
versions ahead on every core (:func:`warm`: the build and ``dfrank warmup``), ships them
(the build, :mod:`.build`, :mod:`.manifest`), puts them where numba reads them, compiles
one version in a helper process (:func:`ahead`, :func:`ready`, :func:`left`,
:func:`wait_for`), says when a compile takes long (:func:`watch_compiles`, :func:`quiet`,
:func:`waiting`) and counts its seconds (:func:`compile_seconds`), by what this machine
measured (:func:`estimate`). It imports nothing else of dfrank: no module outside it
imports its submodules."""

from .background import ENV as BACKGROUND_ENV
from .background import ahead, in_process, left, ready, wait_for
from .examples import (Example, arr, b1, declare, declared, f8, first, i4, i8, later,
                       omitted, ro, tup, u1, u8)
from .helpers import end_all
from .layout import source_without_install
from .progress import install as watch_compiles
from .progress import quiet, waiting
from .progress import seconds as compile_seconds
from .store import in_memory, load, njit, off_main_thread
from .timing import estimate
from .pool import GROUPS, warm

__all__ = ["njit", "declare", "declared", "Example", "first", "later", "arr", "ro", "omitted",
           "tup", "i4", "i8", "u1", "u8", "f8", "b1", "warm", "GROUPS", "load", "ahead",
           "ready", "left", "wait_for", "in_process", "BACKGROUND_ENV", "estimate",
           "watch_compiles", "quiet", "waiting", "compile_seconds", "end_all", "in_memory",
           "off_main_thread", "source_without_install"]
