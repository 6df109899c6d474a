"""Parallel drivers: per-query metric values of P linear scorers, one entry point per family.

Every entry point computes ``out[p, q]``, the metric of query q under the scores
``W[p] . x`` of its documents (``XT`` holds the features transposed, (d, n_docs)). Plain
score vectors are the case d = 1, W = [[1.0]] (1.0 * s is exactly s), so there is one code
path for evaluating scores and for evaluating linear rankers.

Why one small cached entry point per metric family instead of one dispatching kernel: a
kernel that switches on the metric code compiles every family's code (tens of seconds
cold); numba's ``cache=True`` cannot persist a kernel that receives the family kernel as
a first-class argument. So the shared skeleton :func:`_drive` takes the family kernel as an
argument but is inlined (``inline="always"``) into each entry point, where the kernel is a
global constant: each entry point compiles only its own family, once, and is cached.
User-registered metrics do pass their function as an argument (:func:`batch_custom`), which
is compiled once per process.
"""

import numba
import numpy as np
from numba import prange

from .._jit import (ahead, arr, b1, declare, estimate, f8, first, i8, later, left, njit,
                    ready, ro, tup, wait_for)
from .._kernels.scoring import BLOCK, dot_block, dot_block4, read_only
from . import _kernels
from ._rank import EXPECTED, count_top, top_k


@njit(inline="always")
def _drive(fn, XT, rows, W, queries, metric, ws, out):
    """The shared skeleton: tasks (group of queries, four points), group-major, in chunks
    over the threads (one parallel region).

    A group is a run of consecutive queries with about the same estimated work as the
    others (:meth:`BoundMetric.groups`). A task scores the group's documents for its
    points (:func:`dot_block4`, each feature read once for the four) in
    blocks that cross query boundaries, so the dot products run over long contiguous
    stretches even when queries hold a handful of documents, then ranks its queries; the
    points of one group follow each other, so its features are reused from cache. Every
    score is summed by :func:`dot_block` in the same order, so a batch of points gets
    exactly the values of the same points one at a time. Each chunk keeps its
    scratch in its own row of ``fscr`` and ``iscr``.

    The arguments come grouped: ``queries`` = (qptr, groups, y, g, c0, empty), the layout
    and the judgments; ``metric`` = (code, k, ties, thr, norm, disc, empty_value), the
    rule; ``ws`` = (fscr, iscr), the scratch.
    """
    qptr, groups, y, g, c0, empty = queries
    code, k, ties, thr, norm, disc, empty_value = metric
    fscr, iscr = ws
    P = W.shape[0]
    n_groups = len(groups) - 1
    n_quads = (P + 3) // 4
    total = n_quads * n_groups
    nc = max(1, min(total, fscr.shape[0]))
    max_m = len(disc)
    for ch in prange(nc):
        fbuf = fscr[ch, :2 * max_m]
        sg = fscr[ch, 2 * max_m:]
        ibuf = iscr[ch, :max_m]
        jbuf = iscr[ch, max_m:]
        for t in range(ch * total // nc, (ch + 1) * total // nc):
            gi = t // n_quads
            p0 = 4 * (t - gi * n_quads)
            n_p = min(4, P - p0)
            first = qptr[groups[gi]]
            end = qptr[groups[gi + 1]]
            gd = end - first  # point j's scores at sg[j * gd:]
            for lo in range(first, end, BLOCK):
                hi = min(end, lo + BLOCK)
                o = lo - first
                if n_p == 4:
                    dot_block4(XT, rows, W, p0, lo, hi, sg[o:], sg[gd + o:],
                               sg[2 * gd + o:], sg[3 * gd + o:])
                else:
                    for j in range(n_p):
                        dot_block(XT, rows, W[p0 + j], lo, hi, sg[j * gd + o:])
            for j in range(n_p):
                p = p0 + j
                sp = sg[j * gd:(j + 1) * gd]
                for q in range(groups[gi], groups[gi + 1]):
                    if empty[q]:
                        out[p, q] = empty_value
                        continue
                    lo = qptr[q]
                    hi = qptr[q + 1]
                    out[p, q] = fn(code, sp[lo - first:hi - first], y[lo:hi], g[lo:hi], disc,
                                   hi - lo, k, ties, thr, norm, c0[q], ibuf, jbuf, fbuf)


# ------------------------------------------------------------------ family kernels
# uniform signature: (code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf)
# with s, y, g the query's own rows (positions 0..m-1).

@njit(cache=True, inline="always")
def _q_ndcg(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return _kernels._dcg(s, y, g, disc, 0, m, _kernels.cutoff(k, m), ties, ibuf, fbuf) / c0


@njit(cache=True, inline="always")
def _q_dcg(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return _kernels._dcg(s, y, g, disc, 0, m, _kernels.cutoff(k, m), ties, ibuf, fbuf)


@njit(cache=True, inline="always")
def _q_prec(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return count_top(s, y, 0, m, _kernels.cutoff(k, m), ties, thr, ibuf) / k


@njit(cache=True, inline="always")
def _q_recall(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return count_top(s, y, 0, m, _kernels.cutoff(k, m), ties, thr, ibuf) / c0


@njit(cache=True, inline="always")
def _q_rprec(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return count_top(s, y, 0, m, min(int(c0), m), ties, thr, ibuf) / c0


@njit(cache=True, inline="always")
def _q_rr(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return _kernels._rr(s, y, 0, m, _kernels.cutoff(k, m), ties, thr)


@njit(cache=True, inline="always")
def _q_ap(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    if k <= 0:
        return _kernels._ap_full(s, y, 0, m, ties, thr, c0, ibuf, jbuf, fbuf)
    return _kernels._ap_cut(s, y, 0, m, _kernels.cutoff(k, m), ties, thr, c0, ibuf)


@njit(cache=True, inline="always")
def _q_err(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return _kernels._err(s, y, g, 0, m, _kernels.cutoff(k, m), ties, norm, ibuf, fbuf)


@njit(cache=True, inline="always")
def _q_ktau(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    return _kernels._ktau(s, y, 0, m, ties, c0, ibuf, jbuf, fbuf)


@njit(cache=True, inline="always")
def _q_expected(code, s, y, g, disc, m, k, ties, thr, norm, c0, ibuf, jbuf, fbuf):
    kk = min(int(c0), m) if code == _kernels.RPREC else _kernels.cutoff(k, m)
    return _kernels._expected(code, s, y, g, disc, 0, m, k, kk, thr, c0, ibuf, jbuf)


# ------------------------------------------------------------------ entry points


@njit(cache=True, nogil=True, parallel=True)
def batch_ndcg(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ndcg, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_dcg(XT, rows, W, queries, metric, ws, out):
    _drive(_q_dcg, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_prec(XT, rows, W, queries, metric, ws, out):
    _drive(_q_prec, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_recall(XT, rows, W, queries, metric, ws, out):
    _drive(_q_recall, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_rprec(XT, rows, W, queries, metric, ws, out):
    _drive(_q_rprec, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_rr(XT, rows, W, queries, metric, ws, out):
    _drive(_q_rr, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_ap(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ap, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_err(XT, rows, W, queries, metric, ws, out):
    _drive(_q_err, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_ktau(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ktau, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True, parallel=True)
def batch_expected(XT, rows, W, queries, metric, ws, out):
    _drive(_q_expected, XT, rows, W, queries, metric, ws, out)


# ------------------------------------------------------------------ serial twins
# The same skeleton compiled without ``parallel`` (its ``prange`` runs as ``range``): the
# same values bit for bit, about 2 s less to compile. They serve a process with one numba
# thread, and any process while the parallel entry point is being compiled in the
# background (:mod:`dfrank._jit.background`).

@njit(cache=True, nogil=True)
def serial_ndcg(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ndcg, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_dcg(XT, rows, W, queries, metric, ws, out):
    _drive(_q_dcg, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_prec(XT, rows, W, queries, metric, ws, out):
    _drive(_q_prec, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_recall(XT, rows, W, queries, metric, ws, out):
    _drive(_q_recall, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_rprec(XT, rows, W, queries, metric, ws, out):
    _drive(_q_rprec, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_rr(XT, rows, W, queries, metric, ws, out):
    _drive(_q_rr, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_ap(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ap, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_err(XT, rows, W, queries, metric, ws, out):
    _drive(_q_err, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_ktau(XT, rows, W, queries, metric, ws, out):
    _drive(_q_ktau, XT, rows, W, queries, metric, ws, out)


@njit(cache=True, nogil=True)
def serial_expected(XT, rows, W, queries, metric, ws, out):
    _drive(_q_expected, XT, rows, W, queries, metric, ws, out)


DRIVERS = {_kernels.NDCG: batch_ndcg, _kernels.DCG: batch_dcg, _kernels.PREC: batch_prec,
           _kernels.RECALL: batch_recall, _kernels.RPREC: batch_rprec, _kernels.RR: batch_rr,
           _kernels.AP: batch_ap, _kernels.ERR: batch_err, _kernels.KTAU: batch_ktau}
SERIAL = {_kernels.NDCG: serial_ndcg, _kernels.DCG: serial_dcg, _kernels.PREC: serial_prec,
          _kernels.RECALL: serial_recall, _kernels.RPREC: serial_rprec, _kernels.RR: serial_rr,
          _kernels.AP: serial_ap, _kernels.ERR: serial_err, _kernels.KTAU: serial_ktau}

# the argument types of the entry points, compiled by the warm-up (dfrank._jit.examples):
# those BoundMetric.per_query_linear passes (read-only float64 features); the install compiles
# every family's evaluation, and the serial twins that one-thread workers (joblib's, Dask's)
# run for a first fit and for `dfrank evaluate`'s default metrics (ndcg@10, map)
_ARGS = (ro(f8, 2), arr(i8), arr(f8, 2), tup(arr(i8), arr(i8), arr(f8), arr(f8), arr(f8), arr(b1)),
         tup(i8, i8, i8, f8, f8, arr(f8), f8), tup(arr(f8, 2), arr(i8, 2)), arr(f8, 2))
_FIRST = {*DRIVERS.values(), batch_expected, serial_ndcg, serial_ap}


def _versions(*fns):
    return tuple((first if fn in _FIRST else later)(fn, *_ARGS) for fn in fns)


EXAMPLES = (declare("evaluate ndcg", _versions(batch_ndcg), phase=0)
            + declare("evaluate map, precision, rr", _versions(
                batch_ap, batch_prec, batch_recall, batch_rprec, batch_rr))
            + declare("evaluate dcg, err, tau, expected", _versions(
                batch_dcg, batch_err, batch_ktau, batch_expected))
            + declare("serial twins", _versions(*SERIAL.values(), serial_expected)))


def driver(code, ties_code, parallel=True):
    """The entry point for a metric family and tie policy (or its serial twin)."""
    if ties_code == EXPECTED and code != _kernels.KTAU:
        return batch_expected if parallel else serial_expected
    return (DRIVERS if parallel else SERIAL)[code]


_READY = {}   # (code, ties code, features dtype) -> True once its parallel entry point runs


def entry_point(code, ties_code, dtype):
    """The compiled entry point to call now for this family, tie rule and features dtype,
    while numba's cache may be cold. Both give the same values bit for bit, so:

    * a process with one numba thread (a joblib worker of a run with as many jobs as
      cores) runs the serial twin;
    * otherwise the parallel entry point runs when it is ready (loaded, or its cache on
      disk);
    * otherwise the first call starts a helper compiling it (on the core this process
      leaves idle) and the calls run the serial twin until the helper has ended; a call
      that comes when the helper should end sooner than the twin would compile here (by
      what this machine measured) waits for it instead. Where no helper can run
      (``DFRANK_BACKGROUND_COMPILE=0``, ``dfrank warmup``), the call compiles it here."""
    serial = driver(code, ties_code, parallel=False)
    if numba.get_num_threads() == 1:
        return serial
    key = (code, ties_code, np.dtype(dtype).str)
    fast = driver(code, ties_code)
    if _READY.get(key) or ready(fast):
        _READY[key] = True
        return fast
    if ahead(fast, lambda: tuple(numba.typeof(a) for a in
                                 example_arguments(code, ties_code, dtype))) is None:
        _READY[key] = True   # compiled here, by this call
        return fast
    remaining = left(fast)
    if remaining is None:    # the helper has ended: the kernel loads from the cache
        _READY[key] = True
        return fast
    if ready(serial) or remaining > estimate(serial):
        return serial
    if wait_for(fast, timeout=2 * estimate(serial)):
        _READY[key] = True
        return fast
    return serial


def versions(code, ties_code, dtype=np.float64):
    """The compiled versions an evaluation of a family calls: its entry point as a call
    would choose it now (:func:`entry_point`, with the types the calls pass), its serial
    twin (which sections of one thread call), and the per-query constants'."""
    types = tuple(numba.typeof(a) for a in example_arguments(code, ties_code, dtype))
    runs = dict.fromkeys((entry_point(code, ties_code, dtype),
                          driver(code, ties_code, parallel=False)))
    return [(run, types) for run in runs] + [(ex.kernel, ex.types) for ex in _kernels.EXAMPLES]


def prefetch(code, ties_code, dtype=np.float64):
    """Start the helper compiling the parallel entry point of a family now, if it is not
    ready (a command calls this before it reads its data, so that the two overlap)."""
    if numba.get_num_threads() > 1 and not ready(driver(code, ties_code)):
        ahead(driver(code, ties_code), lambda: tuple(
            numba.typeof(a) for a in example_arguments(code, ties_code, dtype)))


def example_arguments(code, ties_code, dtype):
    """The arguments the entry points are compiled (warmed) with: the types
    :meth:`BoundMetric.per_query_linear` passes (read-only features of ``dtype``), on one
    query of two documents with the relevant one first, cut-off 1; ``out[0, 0]`` (the last
    argument) receives the query's value."""
    XT = read_only(np.array([[1.0, 0.0]], dtype=dtype))
    queries = (np.array([0, 2], np.int64), np.array([0, 1], np.int64), np.array([1.0, 0.0]),
               np.array([1.0, 0.0]), np.ones(1), np.zeros(1, np.bool_))
    metric = (int(code), 1, int(ties_code), 1.0, 2.0, np.array([1.0, 1.0 / np.log2(3.0)]), 0.0)
    return (XT, np.zeros(1, np.int64), np.ones((1, 1)), queries, metric,
            (np.zeros((1, 6)), np.zeros((1, 5), np.int64)), np.empty((1, 1)))


# ------------------------------------------------------------------ user metrics
@njit(parallel=True)
def batch_custom(fn, XT, rows, W, qptr, y, k, ties, chunks, out):
    """User metric ``fn(labels_in_rank_order, k)`` of P linear scorers (not cached: numba
    cannot cache a function that takes another jitted function)."""
    P = W.shape[0]
    nq = len(qptr) - 1
    total = P * nq
    nc = max(1, min(total, chunks))
    max_m = 1
    for q in range(nq):
        max_m = max(max_m, qptr[q + 1] - qptr[q])
    for ch in prange(nc):
        sq = np.empty(max_m)
        ibuf = np.empty(max_m, np.int64)
        lab = np.empty(max_m)
        for t in range(ch * total // nc, (ch + 1) * total // nc):
            q = t // P
            p = t - q * P
            lo = qptr[q]
            hi = qptr[q + 1]
            m = hi - lo
            dot_block(XT, rows, W[p], lo, hi, sq)
            n = top_k(sq[:m], y[lo:hi], 0, m, m, ties, ibuf)
            for i in range(n):
                lab[i] = y[lo + ibuf[i]]
            out[p, q] = fn(lab[:n], k)
