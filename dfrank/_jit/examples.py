"""How a kernel module declares the argument types its kernels are warmed with.

Each module of kernels ends with ``EXAMPLES = declare(TASK, (...))``: one :func:`first` or
:func:`later` entry per kernel that Python code calls, with the types its callers pass
(numba compiles, and caches, one version of a kernel per tuple of argument types; a kernel
called only from other kernels is compiled within them). The warm-up (:mod:`.pool`) compiles those
versions with numba's public ``dispatcher.compile(types)``, which reads and writes the
same cache as a call with arguments of those types, and runs nothing. ``first`` marks the
versions a new user's first commands need (the install compiles them); ``later`` the rest
(``dfrank warmup``).

The vocabulary: scalars :data:`i8`, :data:`f8`, :data:`b1`; arrays :func:`arr` (C-ordered,
writable) and :func:`ro` (C-ordered, read-only: the features dfrank maps or shares);
:func:`omitted` for an argument a caller leaves to its default; :func:`tup` for a tuple.
"""

from typing import NamedTuple

from numba import types

__all__ = ["Example", "first", "later", "declare", "declared", "arr", "ro", "omitted", "tup",
           "i4", "i8", "u1", "u8", "f8", "b1"]

i4, i8, u1, u8, f8, b1 = (types.int32, types.int64, types.uint8, types.uint64, types.float64,
                          types.boolean)


class Example(NamedTuple):
    """One version of a kernel to compile: the kernel (a dispatcher), its argument types,
    when (``"first"``: by the install; ``"later"``: by ``dfrank warmup``), and the warm-up
    task and phase it is compiled in (:func:`declare`)."""

    kernel: object
    types: tuple
    when: str
    task: str = ""
    phase: int = 1


_DECLARED = {}   # (kernel, types) -> its Example, in the order declared


def declare(task, examples, phase=1):
    """Declare a kernel module's versions to the warm-up: compiled in the task ``task`` (a
    name the build's progress shows; the versions of one task compile in one process, one
    after the other), in ``phase`` (0: versions that later tasks' kernels share, compiled
    before any of those, so that no two processes compile them at once). Each module of
    kernels declares its versions when it is imported; returns them."""
    out = tuple(ex._replace(task=task, phase=phase) for ex in examples)
    for ex in out:
        _DECLARED[ex.kernel, ex.types] = ex
    return out


def declared():
    """Every version declared so far (by the modules of kernels imported), in order."""
    return list(_DECLARED.values())


def first(kernel, *arg_types):
    """A version that a new user's first commands call: the install compiles it."""
    return Example(kernel, tuple(arg_types), "first")


def later(kernel, *arg_types):
    """A version that other commands and options call: ``dfrank warmup`` compiles it."""
    return Example(kernel, tuple(arg_types), "later")


def arr(dtype, ndim=1):
    """A C-ordered writable array of ``dtype`` (one of the scalars) and ``ndim`` dimensions."""
    return types.Array(dtype, ndim, "C")


def ro(dtype, ndim=1):
    """A C-ordered read-only array (numba compiles those apart from writable ones)."""
    return types.Array(dtype, ndim, "C", readonly=True)


def omitted(default):
    """An argument the callers leave to its default ``default``."""
    return types.Omitted(default)


def tup(*item_types):
    """A tuple of the given types."""
    return types.Tuple(item_types)
