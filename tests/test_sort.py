"""The line search's sorts against numpy's stable argsort, and its reusable work buffers."""

import pickle
import threading

import numpy as np
from hypothesis import given, settings, strategies as st

from dfrank._kernels import sort as _sort
from dfrank._kernels.scratch import PerThread, Scratch

# keys that tie exactly, that differ but round to the same float32 (1 + k 1e-12), signed
# zeros, infinities, and magnitudes float32 cannot hold
SPECIAL = [0.0, -0.0, 1.0, 2.0, np.inf, -np.inf, 1e300, -1e300, 1e-300, -1e-300,
           1.0 + 1e-12, 1.0 + 2e-12, 1.0 - 1e-12, 3.4e38, 3.5e38, -3.5e38]
keys = st.lists(st.one_of(st.sampled_from(SPECIAL),
                          st.floats(allow_nan=False, width=64),
                          st.integers(-3, 3).map(float)),
                min_size=0, max_size=300)


@settings(max_examples=200, deadline=None)
@given(keys)
def test_sorts_are_stable_and_exact(k):
    """Every path (merge sort below _RADIX_FROM keys, radix sorts on float32-rounded keys
    with an insertion step above: 8-bit digits, then from _WIDE_FROM 11-bit, for crossing
    times on the top 22 bits only): same order as numpy's stable argsort."""
    k = np.array(k, dtype=np.float64)
    n = max(len(k), 1)
    for kk in (k, np.tile(k, max(1, 2 * _sort._RADIX_FROM // n)),
               np.tile(k, max(1, 2 * _sort._WIDE_FROM // n))):
        m = len(kk)
        want = np.argsort(kk, kind="stable")
        got_k, got_v = kk.copy(), np.arange(m)
        _sort.sort_pairs(got_k, got_v, np.empty(m), np.empty(m, np.int64))
        assert np.array_equal(got_v, want)
        assert np.array_equal(got_k, kk[want])
        out_k, out_v = np.empty(m), np.empty(m, np.int64)
        keep = kk.copy()
        _sort.sort_pairs_into(kk, np.arange(m), np.empty(m, np.uint64), np.empty(m, np.uint64),
                              out_k, out_v)
        assert np.array_equal(out_v, want)
        assert np.array_equal(kk, keep)  # the input is left alone


def test_crossing_sort_falls_back_to_every_bit():
    """Keys that agree on their top 22 bits in a shuffled run would take the insertion step
    quadratic time: past _EVENT_MOVES moves a key the event sort makes its third pass (and
    still sorts exactly)."""
    rng = np.random.default_rng(3)
    n = 4 * _sort._WIDE_FROM
    k = rng.permutation(1.0 + np.arange(n) * 1e-9)
    want = np.argsort(k, kind="stable")
    ka, kb = np.empty(n, np.uint64), np.empty(n, np.uint64)
    out_k, out_v = np.empty(n), np.empty(n, np.int64)
    count = _sort._radix_keys(k, ka, _sort._BITS, 2, 64 - 2 * _sort._BITS)
    srt = _sort.radix_passes(ka, kb, count, _sort._BITS, 2, 64 - 2 * _sort._BITS)[0]
    assert not _sort._gather_bounded(srt, k, np.arange(n), out_k, out_v,
                                     _sort._EVENT_MOVES * n)  # would be quadratic
    _sort.sort_pairs_into(k, np.arange(n), ka, kb, out_k, out_v)
    assert np.array_equal(out_v, want) and np.array_equal(out_k, k[want])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=6), st.integers(0, 2**31))
def test_rows_sorted_within_queries(sizes, seed):
    """Each query's rows by u, stable (ties by row): numpy's lexsort on (query, u)."""
    from dfrank.linesearch import sort_within_queries
    rng = np.random.default_rng(seed)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    u = np.round(rng.normal(size=qptr[-1]), 1)  # many ties
    q_of_row = np.repeat(np.arange(len(sizes)), sizes)
    assert np.array_equal(sort_within_queries(u, qptr), np.lexsort((u, q_of_row)))


def test_scratch_reuses_and_grows():
    s = Scratch()
    a = s.get("x", (3, 4))
    a[:] = 7
    b = s.get("x", 10)  # smaller: the same memory
    assert np.shares_memory(a, b) and b.shape == (10,)
    c = s.get("x", 100)  # larger: a new buffer, grown by at least a quarter next time
    assert c.shape == (100,) and not np.shares_memory(a, c)
    assert s.get("x", 120).size == 120 and s.get("y", 5, np.int64).dtype == np.int64


def test_scratch_never_writes_over_an_array_handed_out_and_still_held():
    s = Scratch()
    a = s.unheld(("a", "b"), 10)
    a[:] = 1
    b = s.unheld(("a", "b"), 10)   # a is held: the second buffer
    assert not np.shares_memory(a, b)
    c = s.unheld(("a", "b"), 10)   # both held: a new first buffer, a untouched
    assert not np.shares_memory(c, a) and not np.shares_memory(c, b)
    c[:] = 2
    assert np.all(a == 1)
    del a, c
    view = b[2:5]
    del b
    d = s.unheld(("a", "b"), 10)   # the first is free again (a view of the second is not)
    e = s.unheld(("a", "b"), 4)
    assert not np.shares_memory(d, view) and not np.shares_memory(e, view)
    del d, e
    f = s.unheld(("a",), 10)
    assert f.shape == (10,) and s.unheld(("a",), 10).shape == (10,)


def test_scratch_is_per_thread_and_pickles_empty():
    holder = PerThread()
    mine = holder.get()
    other = []
    t = threading.Thread(target=lambda: other.append(holder.get()))
    t.start()
    t.join()
    assert holder.get() is mine and other[0] is not mine
    mine.get("x", 10)
    copy = pickle.loads(pickle.dumps(holder))
    assert copy.get()._buffers == {}


@settings(max_examples=200, deadline=None)
@given(keys)
def test_heapsort_sorts_like_numpy(k):
    """The small heap sort of per-query constants (ties, signed zeros, infinities): the
    values of numpy's sort (signed zeros compare equal, so only their count is checked)."""
    k = np.array(k, dtype=np.float64)
    got = k.copy()
    _sort.heapsort(got)
    assert np.array_equal(got, np.sort(k))
    assert np.count_nonzero(np.signbit(got) & (got == 0)) == \
        np.count_nonzero(np.signbit(k) & (k == 0))
