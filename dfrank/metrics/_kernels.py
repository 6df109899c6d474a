"""Per-query metric kernels and their parallel drivers.

Every kernel reads the flat layout (``s`` scores, ``y`` labels, rows ``lo:hi`` of one query)
and returns one float. Positions are 0-based inside the kernels (rank = position + 1).
The parallel drivers that call them live in :mod:`dfrank.metrics._drivers`.
"""

import numpy as np

from .._jit import arr, b1, declare, f8, first, i8, njit
from .._kernels.sort import heapsort, sorted_copy
from ._rank import (EXPECTED, OPTIMISTIC, PESSIMISTIC, STABLE, better, full_rank, sort_rows,
                    top_gains, top_k)

# metric family codes
NDCG = 0
DCG = 1
AP = 2
PREC = 3
RECALL = 4
RR = 5
ERR = 6
RPREC = 7
KTAU = 8

GAIN_EXP = 0
GAIN_LINEAR = 1


@njit(cache=True, inline="always")
def gain(label, gain_type):
    """Graded gain: 2**label - 1 (``exp``) or label (``linear``)."""
    if gain_type == GAIN_EXP:
        return 2.0 ** label - 1.0
    return label


@njit(cache=True, inline="always")
def discount(pos):
    """DCG discount of 0-based position ``pos``: 1 / log2(2 + pos)."""
    return 1.0 / np.log2(pos + 2.0)


@njit(cache=True, nogil=True)
def cutoff(k, m):
    return m if k <= 0 else min(k, m)


# ---------------------------------------------------------------------------- deterministic
@njit(cache=True, inline="always")
def _dcg(s, y, g, disc, lo, hi, kk, ties, ibuf, at):
    n = min(kk, hi - lo)
    top_gains(s, y, g, lo, hi, n, ties, ibuf, at)
    v = 0.0
    for p in range(n):  # rank order, rows without gain adding 0.0
        v += at[p] * disc[p]
    return v


@njit(cache=True, inline="always")
def _rr(s, y, lo, hi, kk, ties, thr):
    """Reciprocal rank of the best-ranked relevant document (0 if beyond the cut-off).

    O(m): find the best relevant row, then count the rows ranked above it.
    """
    best = -1
    for d in range(lo, hi):
        if y[d] >= thr and (best < 0 or better(s, y, d, best, ties)):
            best = d
    if best < 0:
        return 0.0
    above = 0
    for d in range(lo, hi):
        if d != best and better(s, y, d, best, ties):
            above += 1
    if above + 1 > kk:
        return 0.0
    return 1.0 / (above + 1.0)


COUNT_PAIRS = 1 << 24  # relevant x non-relevant pairs: counting (vectorized) up to this


@njit(cache=True, nogil=True)
def _ap_full(s, y, lo, hi, ties, thr, n_rel, ibuf, jbuf, fbuf):
    """Average precision without sorting the list.

    AP = (1/R) sum_{relevant d} (1 + A_d) / (1 + A_d + N_d), A_d and N_d the relevant and
    non-relevant rows ranked above d. A_d is d's rank among the relevant rows, and N_d
    never falls as that rank grows, so only N_d is counted: the relevant rows are taken by
    N_d (a counting sort), in rank order, A_d = 0, 1, ..., R - 1 (a third of the
    comparisons on OHSUMED went to A_d). The scores are split into contiguous relevant /
    non-relevant scratch (branch-free) and N_d counted with branch-free loops that
    vectorize (`x += 1 if c else 0`; `x += c` does not). A non-relevant row tied with a
    relevant one is above it when pessimistic, below when optimistic; ``stable`` falls
    back to :func:`_ap_counting` on such ties. The counting sort scatters instead of
    walking the histogram: that walk branched on each count and cost OHSUMED a third of
    its AP time in mispredictions. Only lists with more than COUNT_PAIRS relevant /
    non-relevant pairs use :func:`_ap_sorted` (binary searches branch on every step: on
    OHSUMED's four lists of 262-320 rows they took ten times as long as counting).
    """
    m = hi - lo
    n_rel_rows = 0
    for t in range(lo, hi):
        n_rel_rows += 1 if y[t] >= thr else 0
    if n_rel_rows * (m - n_rel_rows) > COUNT_PAIRS:
        return _ap_sorted(s, y, lo, hi, ties, thr, n_rel, ibuf, jbuf)
    n_non = 0
    r = 0
    for t in range(m):
        v = s[lo + t]
        is_rel = 1 if y[lo + t] >= thr else 0
        fbuf[m + r] = v
        fbuf[n_non] = v
        r += is_rel
        n_non += 1 - is_rel
    rel = fbuf[m:m + r]
    non = fbuf[:n_non]
    hist = jbuf[:n_non + 1]  # relevant rows by the number of non-relevant rows above them
    hist[:] = 0
    above_of = ibuf[:r]
    for i in range(r):
        sr = rel[i]
        above = 0
        if ties == PESSIMISTIC:  # one count per policy: the loop does half the work
            for t in range(n_non):
                above += 1 if non[t] >= sr else 0
        elif ties == OPTIMISTIC:
            for t in range(n_non):
                above += 1 if non[t] > sr else 0
        else:
            ge = 0
            for t in range(n_non):
                above += 1 if non[t] > sr else 0
                ge += 1 if non[t] >= sr else 0
            if ge != above:
                return _ap_counting(s, y, lo, hi, ties, thr, n_rel, jbuf, fbuf)
        hist[above] += 1
        above_of[i] = above
    acc = 0
    for a in range(n_non + 1):  # hist[a]: where rows with a non-relevant rows above start
        h = hist[a]
        hist[a] = acc
        acc += h
    ranked = jbuf[n_non + 1:n_non + 1 + r]  # N_d in rank order: N_d never falls as it grows
    for i in range(r):
        a = above_of[i]
        ranked[hist[a]] = a
        hist[a] += 1
    v = 0.0
    for j in range(r):  # A_d = j relevant rows above
        v += (1.0 + j) / (1.0 + j + ranked[j])
    return v / n_rel


@njit(cache=True, nogil=True)
def _ap_counting(s, y, lo, hi, ties, thr, n_rel, jbuf, fbuf):
    """AP = (1/R) sum_{relevant d} (1 + relevant above d) / (1 + all above d), counted
    directly with the tie policy deciding between rows of equal score (O(m R))."""
    m = hi - lo
    sq = fbuf[:m]
    relq = jbuf[:m]
    for t in range(m):
        sq[t] = s[lo + t]
        relq[t] = 1 if y[lo + t] >= thr else 0
    v = 0.0
    for r in range(m):
        if relq[r] == 0:
            continue
        sr = sq[r]
        above = 0
        above_rel = 0
        tied = 0
        for t in range(m):
            gt = 1 if sq[t] > sr else 0
            above += gt
            above_rel += gt * relq[t]
            tied += 1 if sq[t] == sr else 0
        if tied > 1:  # rows with the same score: the tie policy decides
            for t in range(m):
                if t != r and sq[t] == sr and better(s, y, lo + t, lo + r, ties):
                    above += 1
                    above_rel += relq[t]
        v += (1.0 + above_rel) / (1.0 + above)
    return v / n_rel


@njit(cache=True, nogil=True)
def _ap_sorted(s, y, lo, hi, ties, thr, n_rel, ibuf, jbuf):
    """AP for long lists: sort only the relevant rows, then binary-search how many relevant
    rows each non-relevant row precedes; AP = (1/R) sum_i i / (i + above_i)."""
    r = 0
    for d in range(lo, hi):
        if y[d] >= thr:
            ibuf[r] = d
            r += 1
    if r == 0:
        return 0.0
    rel = ibuf[:r]
    sort_rows(s, y, rel, ties, jbuf)
    hist = jbuf[:r + 1]
    hist[:] = 0
    for d in range(lo, hi):
        if y[d] >= thr:
            continue
        a, b = 0, r  # first j with better(d, rel[j])
        while a < b:
            mid = (a + b) // 2
            if better(s, y, d, rel[mid], ties):
                b = mid
            else:
                a = mid + 1
        hist[a] += 1
    above = 0
    v = 0.0
    for i in range(r):
        above += hist[i]
        v += (i + 1.0) / (i + 1.0 + above)
    return v / n_rel


@njit(cache=True, nogil=True)
def _ap_cut(s, y, lo, hi, kk, ties, thr, n_rel, ibuf):
    """AP@k as trec_eval's map_cut: (1/R) sum over relevant rows at rank <= k of precision."""
    n = top_k(s, y, lo, hi, kk, ties, ibuf)
    c = 0
    v = 0.0
    for p in range(n):
        if y[ibuf[p]] >= thr:
            c += 1
            v += c / (p + 1.0)
    return v / n_rel


@njit(cache=True, inline="always")
def _err(s, y, g, lo, hi, kk, ties, norm, ibuf, at):
    """Expected reciprocal rank: sum_r R_r / r prod_{i<r} (1 - R_i), R = gain / norm."""
    n = min(kk, hi - lo)
    top_gains(s, y, g, lo, hi, n, ties, ibuf, at)
    v = 0.0
    stay = 1.0
    for p in range(n):
        rp = at[p] / norm
        v += stay * rp / (p + 1.0)
        stay *= 1.0 - rp
    return v


@njit(cache=True, nogil=True)
def _discordant(lab, tmp):
    """Number of pairs i < j with lab[i] < lab[j] (a lower label ranked above a higher one).

    Bottom-up merge sort into descending order, counting inversions. ``lab`` is sorted.
    """
    n = len(lab)
    count = 0
    width = 1
    src = lab
    dst = tmp
    while width < n:
        for a in range(0, n, 2 * width):
            mid = min(a + width, n)
            b = min(a + 2 * width, n)
            i, j, t = a, mid, a
            while i < mid and j < b:
                if src[i] >= src[j]:
                    dst[t] = src[i]
                    i += 1
                else:  # src[j] > every remaining src[i..mid)
                    dst[t] = src[j]
                    count += mid - i
                    j += 1
                t += 1
            while i < mid:
                dst[t] = src[i]
                i += 1
                t += 1
            while j < b:
                dst[t] = src[j]
                j += 1
                t += 1
        src, dst = dst, src
        width *= 2
    if src is not lab:
        for i in range(n):
            lab[i] = src[i]
    return count


@njit(cache=True, nogil=True)
def _ktau(s, y, lo, hi, ties, n_pairs, ibuf, jbuf, fbuf):
    m = full_rank(s, y, lo, hi, ties, ibuf, jbuf)
    lab = fbuf[:m]
    for p in range(m):
        lab[p] = y[ibuf[p]]
    tied = 0.0
    if ties == EXPECTED:  # tied pairs count half concordant, half discordant
        a = 0
        while a < m:
            b = a + 1
            while b < m and s[ibuf[b]] == s[ibuf[a]]:
                b += 1
            if b - a > 1:
                grp = lab[a:b]
                srt = sorted_copy(grp)
                for i in range(b - a):  # descending
                    grp[i] = srt[b - a - 1 - i]
                g = b - a
                same = 0.0
                t = 0
                while t < g:
                    u = t + 1
                    while u < g and grp[u] == grp[t]:
                        u += 1
                    same += (u - t) * (u - t - 1) / 2.0
                    t = u
                tied += g * (g - 1) / 2.0 - same
            a = b
    disc = _discordant(lab, fbuf[m:2 * m])
    return (n_pairs - tied - 2.0 * disc) / n_pairs


# ---------------------------------------------------------------------------- expected ties
@njit(cache=True, nogil=True)
def _expected(code, s, y, g, disc, lo, hi, k, kk, thr, c0, ibuf, jbuf):
    """Metric value averaged exactly over all orderings of each group of tied scores.

    McSherry & Najork (ECIR 2008). A group at 0-based positions a..b-1 spreads each member
    uniformly over its positions, so a gain meets the mean discount of those positions,
    a relevant document counts in the top k with probability overlap/size, and the first
    relevant document of a group lands at offset j with a hypergeometric probability.
    """
    m = full_rank(s, y, lo, hi, STABLE, ibuf, jbuf)
    v = 0.0
    rel_above = 0.0
    a = 0
    while a < m:
        b = a + 1
        while b < m and s[ibuf[b]] == s[ibuf[a]]:
            b += 1
        gsz = b - a
        r = 0
        gs = 0.0
        for p in range(a, b):
            if y[ibuf[p]] >= thr:
                r += 1
            gs += g[ibuf[p]]
        end = min(b, kk)
        if code == NDCG or code == DCG:
            if a < kk:
                dsum = 0.0
                for p in range(a, end):
                    dsum += disc[p]
                v += gs * dsum / gsz
        elif code == PREC or code == RECALL or code == RPREC:
            if a < kk:
                v += r * (end - a) / gsz
        elif code == RR:
            if r > 0:
                stay = 1.0  # P(none of the first j-1 slots of the group is relevant)
                for j in range(1, gsz - r + 2):
                    if a + j > kk:
                        break
                    v += stay * r / (gsz - j + 1.0) / (a + j)
                    stay *= (gsz - r - j + 1.0) / (gsz - j + 1.0)
                return v
        elif code == AP:
            if r > 0 and a < kk:
                tot = 0.0
                for j in range(1, end - a + 1):
                    extra = 0.0 if gsz == 1 else (j - 1.0) * (r - 1.0) / (gsz - 1.0)
                    tot += (rel_above + 1.0 + extra) / (a + j)
                v += r * tot / gsz
        rel_above += r
        a = b
    if code == NDCG:
        return v / c0
    if code == PREC:
        return v / k  # P@k divides by k even when the list is shorter (trec_eval)
    if code == RECALL or code == AP or code == RPREC:
        return v / c0
    return v


# ---------------------------------------------------------------------------- constants
@njit(cache=True, nogil=True)
def query_constants(code, y, qptr, k, gain_type, thr, uptr, ulab, c0, empty):
    """Per-query constants, computed once per dataset and metric.

    NDCG: ideal DCG@k (labels sorted descending); binary metrics: number of relevant
    documents (label >= thr); Kendall's tau: number of pairs with different labels; ERR and
    DCG: 1. ``ulab[uptr[q]:uptr[q + 1]]`` are the labels of query q's judged documents that
    are not rows (none for LETOR data): they count in the ideal DCG and in the relevant
    count, as trec_eval counts them. ``empty[q]`` marks queries the metric cannot score (no
    gain, no relevant document, no pair).
    """
    nq = len(qptr) - 1
    for q in range(nq):
        lo, hi = qptr[q], qptr[q + 1]
        m = hi - lo
        ua, ub = uptr[q], uptr[q + 1]
        if code == NDCG or code == DCG or code == ERR:
            # element loops, not slice assignments: those compile numba's shape-error path
            lab = np.empty(m + (ub - ua if code != ERR else 0))
            for d in range(m):
                lab[d] = y[lo + d]
            for d in range(m, len(lab)):
                lab[d] = ulab[ua + d - m]
            heapsort(lab)
            lab = lab[::-1]
            kk = cutoff(k, len(lab))
            ideal = 0.0
            for p in range(kk):
                ideal += gain(lab[p], gain_type) * discount(p)
            c0[q] = ideal if code == NDCG else 1.0
            empty[q] = lab[0] <= 0.0
        elif code == KTAU:
            lab = y[lo:hi].copy()
            heapsort(lab)
            same = 0.0
            a = 0
            while a < m:
                b = a + 1
                while b < m and lab[b] == lab[a]:
                    b += 1
                same += (b - a) * (b - a - 1) / 2.0
                a = b
            pairs = m * (m - 1) / 2.0 - same
            c0[q] = pairs
            empty[q] = pairs == 0.0
        else:
            r = 0
            for d in range(lo, hi):
                if y[d] >= thr:
                    r += 1
            for d in range(ua, ub):
                if ulab[d] >= thr:
                    r += 1
            c0[q] = r
            empty[q] = r == 0


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("evaluate ndcg", (
    first(query_constants, i8, arr(f8), arr(i8), i8, i8, f8, arr(i8), arr(f8), arr(f8), arr(b1)),
), phase=0)
