"""Stable sorts of float64 keys for the line search's event lists (no index indirection).

Sorting crossing times dominated the exact line search (comparison sorts of 10^2-10^6
floats per line). Short lists use insertion sort on runs of 24 then bottom-up merges;
long ones an LSD radix sort on 32 bits: each key's float32 rounding (monotone, so it never
inverts two keys) with the row's position in the low word, three passes instead of the six
a float64 key needs, then an insertion step that orders rows whose keys differ but round
alike. Both are stable, which keeps the global merge of all queries' breakpoints
deterministic (equal t stay in query order), and both avoid numba's generic
``np.argsort``, which is slow to compile.
"""

import numpy as np
from numba import njit

_BITS = 11
_RADIX = 1 << _BITS
_MASK = np.uint64(_RADIX - 1)
_LOW = np.uint64(0xFFFFFFFF)
_TOP32 = np.uint64(0x80000000)
_SHIFT32 = np.uint64(32)
_SHIFT43 = np.uint64(32 + _BITS)
_SHIFT54 = np.uint64(32 + 2 * _BITS)
_RUN = 24
_MAX_RADIX = 1 << 32  # positions must fit the low word of the radix keys
_RADIX_FROM = 96  # measured crossover: 64 keys 2.0 us merge vs 2.7 radix; 96: 3.3 vs 2.9;
#                   256: 11.2 vs 3.7


@njit(cache=True)
def _merge_pass(ks, vs, kd, vd, n, width):
    """Merge the sorted runs of length ``width`` of (ks, vs) into (kd, vd)."""
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


@njit(cache=True, inline="always")
def _insert(keys, vals, lo, r, kv, vv):
    """Put (kv, vv) at row r of keys/vals, whose rows lo..r-1 are sorted: after the last
    of them with a key <= kv (stable), shifting the greater ones down."""
    j = r - 1
    while j >= lo and keys[j] > kv:
        keys[j + 1] = keys[j]
        vals[j + 1] = vals[j]
        j -= 1
    keys[j + 1] = kv
    vals[j + 1] = vv


@njit(cache=True)
def _merge_pairs(keys, vals, k_tmp, v_tmp):
    n = len(keys)
    for a in range(0, n, _RUN):
        for i in range(a + 1, min(a + _RUN, n)):
            _insert(keys, vals, a, i, keys[i], vals[i])
    width = _RUN
    in_tmp = False
    while width < n:  # passes alternate between the arrays and the scratch
        if in_tmp:
            _merge_pass(k_tmp, v_tmp, keys, vals, n, width)
        else:
            _merge_pass(keys, vals, k_tmp, v_tmp, n, width)
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:  # explicit loops: numba's array-to-slice assignment is slow to compile
        for i in range(n):
            keys[i] = k_tmp[i]
            vals[i] = v_tmp[i]


@njit(cache=True, inline="always")
def _key32(x):
    """The float32 rounding of ``x`` as an unsigned integer in the same order (rounding is
    monotone, so a <= b gives _key32(a) <= _key32(b)); + 0.0 turns -0.0 into 0.0."""
    b = np.uint64(np.float32(x + 0.0).view(np.uint32))
    return (b ^ _LOW) if b & _TOP32 else (b | _TOP32)


@njit(cache=True)
def _radix_high(a, b):
    """Stable LSD radix sort of uint64 ``a`` by its high 32 bits (11, 11 and 10 bits per
    pass; the three digits are counted in one read; a pass where every key has the same
    digit is skipped); ``b`` is scratch of the same length. Returns ``(sorted, spare)``:
    the array holding the result and the other."""
    n = len(a)
    count = np.zeros((3, _RADIX + 1), np.int64)
    for i in range(n):
        x = a[i]
        count[0, ((x >> _SHIFT32) & _MASK) + 1] += 1
        count[1, ((x >> _SHIFT43) & _MASK) + 1] += 1
        count[2, ((x >> _SHIFT54) & _MASK) + 1] += 1
    for d in range(3):
        shift = np.uint64(32 + _BITS * d)
        c = count[d]
        if n == 0 or c[((a[0] >> shift) & _MASK) + 1] == n:
            continue
        for r in range(_RADIX):
            c[r + 1] += c[r]
        for i in range(n):
            x = a[i]
            dgt = (x >> shift) & _MASK
            p = c[dgt]
            c[dgt] = p + 1
            b[p] = x
        a, b = b, a
    return a, b


@njit(cache=True, inline="always")
def _radix_keys(keys, a):
    """Each key's float32 rounding (high word) and its position (low word), into ``a``."""
    for i in range(len(keys)):
        a[i] = (_key32(keys[i]) << _SHIFT32) | np.uint64(i)


@njit(cache=True)
def _radix_pairs(keys, vals, k_tmp, v_tmp):
    """Radix sort on 32-bit keys, then exact order: each key's float32 rounding and its
    position form one uint64, sorted in three passes instead of the six a float64 key
    needs; the rows are gathered by position, and an insertion step puts rows whose
    float64 keys differ but round alike back in order (such runs are short, so it is
    linear in practice). Stable: equal keys keep their positions' order. The scratch
    ``k_tmp``/``v_tmp`` holds the uint64 keys: nothing is allocated."""
    n = len(keys)
    a = k_tmp[:n].view(np.uint64)
    _radix_keys(keys, a)
    srt, spare = _radix_high(a, v_tmp[:n].view(np.uint64))
    sv = spare.view(np.int64)
    for r in range(n):
        sv[r] = vals[srt[r] & _LOW]
    for r in range(n):
        vals[r] = sv[r]
    sk = spare.view(np.float64)
    for r in range(n):
        sk[r] = keys[srt[r] & _LOW]
    for r in range(n):  # back into keys, inserting rows the rounding left out of order
        _insert(keys, vals, 0, r, sk[r], vals[r])


@njit(cache=True)
def sort_pairs(keys, vals, k_tmp, v_tmp):
    """Sort float64 ``keys`` ascending in place, moving int64 ``vals`` along; stable.
    ``k_tmp``/``v_tmp`` are scratch at least as long."""
    if _RADIX_FROM <= len(keys) < _MAX_RADIX:
        _radix_pairs(keys, vals, k_tmp, v_tmp)
    else:
        _merge_pairs(keys, vals, k_tmp, v_tmp)


@njit(cache=True)
def sort_pairs_into(keys, vals, ka, kb, out_k, out_v):
    """``keys`` (float64) sorted stably into ``out_k``, ``vals`` (int64) along into
    ``out_v``, leaving both unchanged (saves the copies back of :func:`sort_pairs`);
    ``ka``, ``kb``: uint64 scratch at least as long."""
    n = len(keys)
    if _RADIX_FROM <= n < _MAX_RADIX:
        _radix_keys(keys, ka)
        srt = _radix_high(ka[:n], kb[:n])[0]
        for r in range(n):
            i = srt[r] & _LOW
            _insert(out_k, out_v, 0, r, keys[i], vals[i])
    else:
        for i in range(n):
            out_k[i] = keys[i]
            out_v[i] = vals[i]
        _merge_pairs(out_k[:n], out_v[:n], ka[:n].view(np.float64), kb[:n].view(np.int64))


@njit(cache=True)
def radix_argsort(keys):
    """Indices that sort ``keys`` (float64, no NaN) ascending; stable."""
    n = len(keys)
    k = keys.copy()
    idx = np.arange(n)
    sort_pairs(k, idx, np.empty(n), np.empty(n, np.int64))
    return idx


@njit(cache=True)
def sorted_copy(x):
    """An ascending sorted copy of float64 ``x`` (instead of ``np.sort``, whose generic
    implementation is slow to compile)."""
    n = len(x)
    k = np.empty(n)
    for i in range(n):
        k[i] = x[i]
    sort_pairs(k, np.zeros(n, np.int64), np.empty(n), np.empty(n, np.int64))
    return k
