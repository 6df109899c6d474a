"""Stable sorts of float64 keys for the line search's event lists (no index indirection).

Sorting crossing times dominated the exact line search (comparison sorts of 10^2-10^6
floats per line). Very short lists use insertion sort on runs of 24 then bottom-up
merges; longer ones an LSD radix sort on 32 bits: each key's float32 rounding (monotone, so
it never inverts two keys) with the row's position in the low word, four 8-bit or three
11-bit passes instead of the six a float64 key needs (two for one query's crossing times,
see :func:`rows_sorted_into`), then an insertion step that orders rows whose keys differ
but round alike. Both are stable, which keeps the global merge of all queries'
breakpoints deterministic (equal t stay in query order), and both avoid numba's generic
``np.argsort``, which is slow to compile.
"""

import numpy as np

from .._jit import declare, njit

_BITS = 11  # digits of the radix sorts of long lists (three passes over the float32 word)
_SMALL_BITS = 8  # and of short ones (four passes, but 257 counts a pass to clear and sum)
LOW_BITS = np.uint64(0xFFFFFFFF)
_TOP32 = np.uint64(0x80000000)
SHIFT32 = np.uint64(32)
_RUN = 24
_MAX_RADIX = 1 << 32  # positions must fit the low word of the radix keys
# where 8-bit radix passes overtake the merge sort, and 11-bit passes the 8-bit ones (keys
# with ties, one thread)
_RADIX_FROM = 40
_WIDE_FROM = 640
# the event sort's 11-bit passes over the top 22 bits only (sign, exponent, 13 bits of
# mantissa); the insertion step then orders keys that agree there, unless that takes more
# than this many moves per key, when the third pass is made after all
_EVENT_MOVES = 4


@njit(cache=True, nogil=True)
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
def insert(keys, vals, lo, r, kv, vv):
    """Put (kv, vv) at row r of keys/vals, whose rows lo..r-1 are sorted: after the last
    of them with a key <= kv (stable), shifting the greater ones down."""
    j = r - 1
    while j >= lo and keys[np.uint64(j)] > kv:  # unsigned: no negative-index check
        keys[np.uint64(j + 1)] = keys[np.uint64(j)]
        vals[np.uint64(j + 1)] = vals[np.uint64(j)]
        j -= 1
    keys[np.uint64(j + 1)] = kv
    vals[np.uint64(j + 1)] = vv


@njit(cache=True, nogil=True)
def _merge_pairs(keys, vals, k_tmp, v_tmp):
    n = len(keys)
    for a in range(0, n, _RUN):
        for i in range(a + 1, min(a + _RUN, n)):
            insert(keys, vals, a, i, keys[i], vals[i])
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
def key32(x):
    """The float32 rounding of ``x`` as an unsigned integer in the same order (rounding is
    monotone, so a <= b gives key32(a) <= key32(b)); + 0.0 turns -0.0 into 0.0."""
    b = np.uint64(np.float32(x + 0.0).view(np.uint32))
    return (b ^ LOW_BITS) if b & _TOP32 else (b | _TOP32)


@njit(cache=True, nogil=True)
def radix_passes(a, b, count, width, passes, low):
    """Stable LSD radix sort of uint64 ``a`` by ``passes`` digits of ``width`` bits from
    bit ``low`` up, given ``count[d, digit + 1]``, the number of keys with that digit in
    pass d (a pass where every key has the same digit is skipped); ``b`` is scratch of the
    same length. Returns ``(sorted, spare)``: the array holding the result and the other."""
    n = len(a)
    radix = 1 << width
    mask = np.uint64(radix - 1)
    for d in range(passes):
        shift = np.uint64(low + width * d)
        c = count[d]
        if n == 0 or c[((a[0] >> shift) & mask) + 1] == n:
            continue
        for r in range(radix):
            c[r + 1] += c[r]
        for i in range(n):
            x = a[i]
            dgt = (x >> shift) & mask
            p = c[dgt]
            c[dgt] = p + 1
            b[np.uint64(p)] = x  # unsigned: no check for a negative index
        a, b = b, a
    return a, b


@njit(cache=True, inline="always")
def count_digits(a, width, passes, low):
    """The digits of each of the ``passes`` passes over uint64 ``a`` counted in one read
    (one read of ``a`` for every pass, not a loop over the passes inside it):
    ``count[d, digit + 1]``."""
    count = np.zeros((passes, (1 << width) + 1), np.int64)
    mask = np.uint64((1 << width) - 1)
    s0 = np.uint64(low)
    s1 = np.uint64(low + width)
    s2 = np.uint64(low + 2 * width)
    s3 = np.uint64(low + 3 * width)
    for i in range(len(a)):  # passes is a constant at every call: the tests fold away
        x = a[i]
        count[0, ((x >> s0) & mask) + 1] += 1
        count[1, ((x >> s1) & mask) + 1] += 1
        if passes > 2:
            count[2, ((x >> s2) & mask) + 1] += 1
        if passes > 3:
            count[3, ((x >> s3) & mask) + 1] += 1
    return count


@njit(cache=True, nogil=True)
def _radix_high(a, b):
    """Stable LSD radix sort of uint64 ``a`` by its high 32 bits (11, 11 and 10 bits per
    pass); ``b`` is scratch of the same length. Returns ``(sorted, spare)``."""
    return radix_passes(a, b, count_digits(a, _BITS, 3, 32), _BITS, 3, 32)


@njit(cache=True, inline="always")
def _float32_keys(keys, a):
    """Each key's float32 rounding (high word) and its position (low word), into ``a``."""
    for i in range(len(keys)):
        a[i] = (key32(keys[i]) << SHIFT32) | np.uint64(i)


@njit(cache=True, inline="always")
def _radix_keys(keys, a, width, passes, low):
    """:func:`_float32_keys`, returning the digit counts of the passes
    (:func:`count_digits`)."""
    _float32_keys(keys, a)
    return count_digits(a, width, passes, low)


@njit(cache=True, nogil=True)
def _radix_by_float32(keys, a, b):
    """``keys``' positions sorted stably by their float32 rounding, in the low words of
    the first returned array (``a`` or ``b``, uint64 scratch as long as keys; the other is
    returned second): 8-bit digits for short lists, 11-bit for long ones."""
    if len(keys) < _WIDE_FROM:
        count = _radix_keys(keys, a, _SMALL_BITS, 4, 32)
        return radix_passes(a, b, count, _SMALL_BITS, 4, 32)
    count = _radix_keys(keys, a, _BITS, 3, 32)
    return radix_passes(a, b, count, _BITS, 3, 32)


@njit(cache=True, nogil=True)
def _radix_pairs(keys, vals, k_tmp, v_tmp):
    """Radix sort on 32-bit keys, then exact order: each key's float32 rounding and its
    position form one uint64, sorted in three or four passes instead of the six a float64
    key needs; the rows are gathered by position, and an insertion step puts rows whose
    float64 keys differ but round alike back in order (such runs are short, so it is
    linear in practice). Stable: equal keys keep their positions' order. The scratch
    ``k_tmp``/``v_tmp`` holds the uint64 keys: nothing is allocated but the counts."""
    n = len(keys)
    srt, spare = _radix_by_float32(keys, k_tmp[:n].view(np.uint64),
                                   v_tmp[:n].view(np.uint64))
    sv = spare.view(np.int64)
    for r in range(n):
        sv[r] = vals[srt[r] & LOW_BITS]
    for r in range(n):
        vals[r] = sv[r]
    sk = spare.view(np.float64)
    for r in range(n):
        sk[r] = keys[srt[r] & LOW_BITS]
    for r in range(n):  # back into keys, inserting rows the rounding left out of order
        insert(keys, vals, 0, r, sk[r], vals[r])


@njit(cache=True, nogil=True)
def sort_pairs(keys, vals, k_tmp, v_tmp):
    """Sort float64 ``keys`` ascending in place, moving int64 ``vals`` along; stable.
    ``k_tmp``/``v_tmp`` are scratch at least as long."""
    if _RADIX_FROM <= len(keys) < _MAX_RADIX:
        _radix_pairs(keys, vals, k_tmp, v_tmp)
    else:
        _merge_pairs(keys, vals, k_tmp, v_tmp)


@njit(cache=True, nogil=True)
def gather_sorted(srt, keys, vals, out_k, out_v):
    """``keys``/``vals`` in the order of the positions in ``srt``'s low words, into
    ``out_k``/``out_v``, an insertion step ordering rows whose keys differ but whose sort
    keys agree (rounded alike). (:func:`_gather_bounded` counts its moves, which costs
    time in assemble, so the steps that must finish do not.)"""
    for r in range(len(srt)):
        i = srt[r] & LOW_BITS
        insert(out_k, out_v, 0, r, keys[i], vals[i])


@njit(cache=True, nogil=True)
def _gather_bounded(srt, keys, vals, out_k, out_v, max_moves):
    """:func:`gather_sorted` that gives up (returns False) after ``max_moves`` moves."""
    moves = 0
    for r in range(len(srt)):
        i = srt[r] & LOW_BITS
        kv = keys[i]
        j = r - 1
        while j >= 0 and out_k[np.uint64(j)] > kv:  # unsigned: no negative-index check
            out_k[np.uint64(j + 1)] = out_k[np.uint64(j)]
            out_v[np.uint64(j + 1)] = out_v[np.uint64(j)]
            j -= 1
        moves += r - 1 - j
        if moves > max_moves:
            return False
        out_k[np.uint64(j + 1)] = kv
        out_v[np.uint64(j + 1)] = vals[i]
    return True


@njit(cache=True, nogil=True)
def rows_sorted_into(a, b, keys, vals, out_k, out_v):
    """Rows of ``keys``/``vals`` into ``out_k``/``out_v`` in stable order of their keys,
    given ``a``: for each row, its key's float32 rounding (high word) and its row (low
    word), in the order that breaks ties; ``b`` is uint64 scratch as long. Made for one
    query's crossing times: radix sorted on the top 22 bits (sign, exponent, 13 bits of
    mantissa; two passes, not three, as a line's crossings rarely agree there), the
    insertion step ordering the keys that agree there; if it would take more than
    _EVENT_MOVES a key, the last ten bits are sorted too. (Not for all queries'
    breakpoints at once, which crowd more: there two passes lose to three.)"""
    n = len(a)
    low = 64 - 2 * _BITS
    srt, spare = radix_passes(a, b, count_digits(a, _BITS, 2, low), _BITS, 2, low)
    if _gather_bounded(srt, keys, vals, out_k, out_v, _EVENT_MOVES * n):
        return
    # all 32 bits: ties (equal keys) stay in the order of a, so the result is stable
    gather_sorted(_radix_high(srt, spare)[0], keys, vals, out_k, out_v)


@njit(cache=True, nogil=True)
def sort_pairs_into(keys, vals, ka, kb, out_k, out_v):
    """``keys`` (float64) sorted stably into ``out_k``, ``vals`` (int64) along into
    ``out_v``, leaving both unchanged (saves the copies back of :func:`sort_pairs`);
    ``ka``, ``kb``: uint64 scratch at least as long. Long lists by
    :func:`rows_sorted_into`."""
    n = len(keys)
    if _WIDE_FROM <= n < _MAX_RADIX:
        _float32_keys(keys, ka[:n])
        rows_sorted_into(ka[:n], kb[:n], keys, vals, out_k, out_v)
    elif _RADIX_FROM <= n < _MAX_RADIX:
        gather_sorted(_radix_by_float32(keys, ka[:n], kb[:n])[0], keys, vals, out_k, out_v)
    else:
        for i in range(n):
            out_k[i] = keys[i]
            out_v[i] = vals[i]
        _merge_pairs(out_k[:n], out_v[:n], ka[:n].view(np.float64), kb[:n].view(np.int64))


@njit(cache=True, nogil=True)
def radix_argsort(keys):
    """Indices that sort ``keys`` (float64, no NaN) ascending; stable."""
    n = len(keys)
    k = keys.copy()
    idx = np.arange(n)
    sort_pairs(k, idx, np.empty(n), np.empty(n, np.int64))
    return idx


@njit(cache=True, nogil=True)
def sorted_copy(x):
    """An ascending sorted copy of float64 ``x`` (instead of ``np.sort``, whose generic
    implementation is slow to compile)."""
    n = len(x)
    k = np.empty(n)
    for i in range(n):
        k[i] = x[i]
    sort_pairs(k, np.zeros(n, np.int64), np.empty(n), np.empty(n, np.int64))
    return k


@njit(cache=True, inline="always")
def _sift(a, root, end):
    """Move ``a[root]`` down the max-heap ``a[:end]``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@njit(cache=True, nogil=True)
def heapsort(a):
    """Sort float64 ``a`` ascending in place: a small heap sort, O(n log n), for work done
    once per dataset (a query's labels), where :func:`sorted_copy`'s radix machinery would
    cost seconds of compiling for no measurable gain."""
    n = len(a)
    for root in range(n // 2 - 1, -1, -1):
        _sift(a, root, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


# no kernel here is called from Python: each compiles within the kernels that call it
EXAMPLES = declare("evaluate ndcg", (), phase=0)
