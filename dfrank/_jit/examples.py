"""How a kernel module declares the argument types its kernels are warmed with.

Each module of kernels ends with ``EXAMPLES``: one :func:`first` or :func:`later` entry per
kernel that Python code calls, with the types its callers pass (numba compiles, and
caches, one version of a kernel per tuple of argument types; a kernel called only from
other kernels is compiled within them). The warm-up (:mod:`.warm`) compiles those
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

__all__ = ["Example", "first", "later", "arr", "ro", "omitted", "tup", "i4", "i8", "u1", "u8",
           "f8", "b1"]

i4, i8, u1, u8, f8, b1 = (types.int32, types.int64, types.uint8, types.uint64, types.float64,
                          types.boolean)


class Example(NamedTuple):
    """One version of a kernel to compile: the kernel (a dispatcher), its argument types,
    and when (``"first"``: by the install; ``"later"``: by ``dfrank warmup``)."""

    kernel: object
    types: tuple
    when: str


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
