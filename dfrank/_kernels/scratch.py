"""Work buffers kept from one call to the next, one set per thread.

Fresh memory costs a page fault at first touch, so the few MB of buffers of an exact line
search cost milliseconds whenever the allocator hands back new pages, which it can from one
call to the next. Kernels write into these buffers instead.
"""

import math
import sys
import threading

import numpy as np


def _references(buffers, name):
    """The references to ``buffers[name]`` (the dict's, this call's own among them)."""
    buf = buffers[name]
    return sys.getrefcount(buf)


# the references to a buffer that only its dict holds, as this interpreter counts them
_ALONE = _references({"x": np.empty(1)}, "x")


class Scratch:
    """Named buffers that grow (by at least a quarter) and are never shrunk or shared."""

    def __init__(self):
        self._buffers = {}
        self.views = {}  # callers' memo of views into the buffers (a view outlives a regrowth)

    def get(self, name, shape, dtype=np.float64):
        """An uninitialized C-contiguous array of ``shape`` (an int or a tuple), reusing the
        buffer ``name``. Plain Python arithmetic: it is called a score of times per line
        search, where numpy's reductions on tiny tuples would cost more than the lookup."""
        if not isinstance(shape, tuple):
            shape = (shape,)
        n = math.prod(shape)
        buf = self._buffers.get(name)
        if buf is None or buf.size < n or buf.dtype != dtype:
            grow = 0 if buf is None or buf.dtype != dtype else buf.size + buf.size // 4
            buf = self._buffers[name] = np.empty(max(n, grow, 1), dtype)
        return buf[:n].reshape(shape)

    def unheld(self, names, shape, dtype=np.float64):
        """:meth:`get` for arrays handed out beyond the call (a task's result, scores kept
        for later): the first of the buffers ``names`` that no array handed out earlier
        still views (a view holds its buffer's base), so a result still held elsewhere is
        never written over; when all are held, the first is replaced by a new buffer (the
        old one lives on with its holder)."""
        for name in names:
            if name not in self._buffers or _references(self._buffers, name) <= _ALONE:
                return self.get(name, shape, dtype)
        del self._buffers[names[0]]
        return self.get(names[0], shape, dtype)


class PerThread:
    """A :class:`Scratch` for each thread that asks (kernels write into the buffers, so two
    threads must never share them). Pickles as a new, empty holder."""

    def __init__(self):
        self._local = threading.local()

    def get(self):
        s = getattr(self._local, "scratch", None)
        if s is None:
            s = self._local.scratch = Scratch()
        return s

    def __reduce__(self):
        return PerThread, ()
