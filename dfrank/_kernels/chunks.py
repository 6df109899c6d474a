"""How numba hands out the iterations of a parallel loop: a chunk at a time.

By default numba cuts a ``prange`` into one contiguous block per thread, fixed when the
loop starts. On a busy machine a thread that has lost its core then holds up half the
loop while the others wait at its end. Kernels whose loop runs over a few pieces of work
per thread (chunks of queries, blocks of documents, parts of a profile) are called inside
:func:`one_at_a_time`: numba's chunk size 1, so the threads take the pieces as they come
free and a thread that lost its core holds up one piece.

Only for such loops: numba also turns a parallel kernel's array expressions (``a.sum()``,
``np.zeros``) into parallel loops over elements, which would then be handed out one
element at a time; the kernels called this way have none (their ``parallel`` option
leaves numpy calls serial, :data:`PRANGE_ONLY`, or they contain none).
"""

import contextlib

import numba

__all__ = ["one_at_a_time", "PRANGE_ONLY"]

# numba's parallel option: prange loops only, numpy calls and array expressions serial
PRANGE_ONLY = {"prange": True, "comprehension": False, "numpy": False, "reduction": False,
               "inplace_binop": False, "setitem": False, "stencil": False, "fusion": False}


@contextlib.contextmanager
def one_at_a_time(threads=None):
    """numba's chunk size 1 for the parallel loops started in this block (this thread).
    Nothing is set where the caller knows this thread's loops run on one thread
    (``threads=1``, a restart's thread in :func:`~dfrank.driver.parallel.run_in_threads`): that
    thread takes every piece either way, and each setting is a call into numba's library
    that lets go of Python's lock."""
    if threads == 1:
        yield
        return
    old = numba.set_parallel_chunksize(1)
    try:
        yield
    finally:
        numba.set_parallel_chunksize(old)
