"""Numba kernel that formats LETOR/SVMlight lines into a byte buffer (the writer's hot loop).

Values are written in fixed point with ``precision`` decimals (trailing zeros dropped),
rounded half away from zero; the caller checks that |value| * 10**precision fits an int64.
"""

import numpy as np

from .._jit import arr, b1, declare, f8, first, i8, njit, u1


@njit(cache=True, inline="always")
def _put_uint(buf, pos, v):
    """Decimal digits of the non-negative int ``v`` at ``buf[pos:]``; returns the new pos."""
    if v == 0:
        buf[pos] = 48
        return pos + 1
    n = 0
    t = v
    while t > 0:
        t //= 10
        n += 1
    for k in range(n - 1, -1, -1):
        buf[pos + k] = 48 + v % 10
        v //= 10
    return pos + n


@njit(cache=True, inline="always")
def _put_fixed(buf, pos, x, scale, precision):
    """``x`` in fixed point with at most ``precision`` decimals."""
    neg = x < 0
    ax = -x if neg else x
    q = np.int64(np.floor(ax * scale + 0.5))
    if q == 0:
        buf[pos] = 48
        return pos + 1
    if neg:
        buf[pos] = 45   # '-'
        pos += 1
    ip = q // np.int64(scale)
    fp = q - ip * np.int64(scale)
    pos = _put_uint(buf, pos, ip)
    if fp > 0:
        digits = precision
        while fp % 10 == 0:
            fp //= 10
            digits -= 1
        buf[pos] = 46   # '.'
        pos += 1
        for k in range(digits - 1, -1, -1):
            buf[pos + k] = 48 + fp % 10
            fp //= 10
        pos += digits
    return pos


@njit(cache=True, nogil=True)
def format_rows(X, y, qid_of_row, feature_ids, docids, has_docids, precision, out):
    """Write rows ``label qid:Q f:v ... [#docid = D]\\n`` into ``out``; returns the bytes
    used. ``out`` must hold the worst case (the caller sizes it)."""
    scale = 10.0 ** precision
    pos = 0
    n, d = X.shape
    for i in range(n):
        pos = _put_fixed(out, pos, y[i], scale, precision)
        for c in (32, 113, 105, 100, 58):          # " qid:"
            out[pos] = c
            pos += 1
        q = qid_of_row[i]
        if q < 0:
            out[pos] = 45
            pos += 1
            q = -q
        pos = _put_uint(out, pos, q)
        for j in range(d):
            out[pos] = 32
            pos += 1
            pos = _put_uint(out, pos, feature_ids[j])
            out[pos] = 58
            pos += 1
            pos = _put_fixed(out, pos, np.float64(X[i, j]), scale, precision)
        if has_docids:
            for c in (32, 35, 100, 111, 99, 105, 100, 32, 61, 32):   # " #docid = "
                out[pos] = c
                pos += 1
            for k in range(docids.shape[1]):
                b = docids[i, k]
                if b == 0:
                    break
                out[pos] = b
                pos += 1
        out[pos] = 10
        pos += 1
    return pos


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("files", (
    first(format_rows, arr(f8, 2), arr(f8), arr(i8), arr(i8), arr(u1, 2), b1, i8, arr(u1)),
), phase=0)
