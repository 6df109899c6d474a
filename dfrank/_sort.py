"""A stable LSD radix argsort of float64 keys, for the line search's event lists.

Sorting crossing times dominated the exact line search (comparison sorts of 10^4-10^6
floats per line); a radix sort on the IEEE bit patterns is several times faster and stable,
which keeps the global merge of all queries' breakpoints deterministic (equal t stay in
query order).
"""

import numpy as np
from numba import njit

_BITS = 11
_RADIX = 1 << _BITS
_MASK = np.uint64(_RADIX - 1)
_SIGN = np.uint64(1 << 63)


@njit(cache=True)
def _sortable(keys, out):
    """Map float64 keys to uint64 whose unsigned order is the float order (no NaN)."""
    v = (keys + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0
    for i in range(len(keys)):
        b = v[i]
        out[i] = ~b if b & _SIGN else b | _SIGN


@njit(cache=True)
def radix_argsort(keys):
    """Indices that sort ``keys`` (float64, no NaN) ascending; stable."""
    n = len(keys)
    idx = np.arange(n)
    if n < 1500:  # below this the 2048-bucket histograms cost more than a merge sort
        return np.argsort(keys, kind="mergesort")
    u = np.empty(n, np.uint64)
    _sortable(keys, u)
    u2 = np.empty(n, np.uint64)
    idx2 = np.empty(n, np.int64)
    count = np.empty(_RADIX + 1, np.int64)
    shift = np.uint64(0)
    while shift < 64:
        count[:] = 0
        for i in range(n):
            count[((u[i] >> shift) & _MASK) + 1] += 1
        if count[((u[0] >> shift) & _MASK) + 1] == n:  # every key has this digit
            shift += np.uint64(_BITS)
            continue
        for r in range(_RADIX):
            count[r + 1] += count[r]
        for i in range(n):
            dgt = (u[i] >> shift) & _MASK
            p = count[dgt]
            count[dgt] = p + 1
            u2[p] = u[i]
            idx2[p] = idx[i]
        u, u2 = u2, u
        idx, idx2 = idx2, idx
        shift += np.uint64(_BITS)
    return idx


_RUN = 24


@njit(cache=True)
def sort_pairs(keys, vals, k_tmp, v_tmp):
    """Sort float64 ``keys`` ascending in place, moving int64 ``vals`` along; stable.

    Insertion sort on runs of 24, then bottom-up merges between the arrays and the scratch
    ``k_tmp``/``v_tmp`` (at least as long): no index indirection, sequential memory, no
    allocation. Large inputs go through :func:`radix_argsort`.
    """
    n = len(keys)
    if n >= 4096:
        order = radix_argsort(keys)
        k2 = keys[order]
        v2 = vals[order]
        keys[:] = k2
        vals[:] = v2
        return
    for a in range(0, n, _RUN):
        b = min(a + _RUN, n)
        for i in range(a + 1, b):
            kv = keys[i]
            vv = vals[i]
            j = i - 1
            while j >= a and keys[j] > kv:
                keys[j + 1] = keys[j]
                vals[j + 1] = vals[j]
                j -= 1
            keys[j + 1] = kv
            vals[j + 1] = vv
    if n <= _RUN:
        return
    width = _RUN
    in_tmp = False
    while width < n:
        ks = k_tmp if in_tmp else keys
        vs = v_tmp if in_tmp else vals
        kd = keys if in_tmp else k_tmp
        vd = vals if in_tmp else v_tmp
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            i, j, t = a, mid, a
            while i < mid and j < b:
                if ks[j] < ks[i]:
                    kd[t] = ks[j]
                    vd[t] = vs[j]
                    j += 1
                else:
                    kd[t] = ks[i]
                    vd[t] = vs[i]
                    i += 1
                t += 1
            while i < mid:
                kd[t] = ks[i]
                vd[t] = vs[i]
                i += 1
                t += 1
            while j < b:
                kd[t] = ks[j]
                vd[t] = vs[j]
                j += 1
                t += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        keys[:] = k_tmp[:n]
        vals[:] = v_tmp[:n]
