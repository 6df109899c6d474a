"""Numba kernels for TREC qrels and run files: parallel tokenizing, hashing, joining.

A file is one ``uint8`` buffer split into chunks at line boundaries; chunks are parsed in
parallel into preallocated arrays (a first pass counts the lines). Identifiers (qid, docno)
never become Python objects: each is kept as a byte span plus a 64-bit FNV-1a hash; equal
hashes are always confirmed by comparing the bytes, so a hash collision can never merge two
identifiers.
"""

import numpy as np
from numba import prange

from .._jit import arr, b1, declare, f8, first, i8, njit, ro, u1, u8
from ._svmlight_kernel import F_BAD, F_NONFINITE, F_OK, parse_float, parse_int

OK = 0
TOO_FEW_COLUMNS = 1
BAD_NUMBER = 2
NONFINITE = 3
BAD_INTEGER = 4

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True, inline="always")
def _space(c):
    return c == 32 or c == 9 or c == 13


@njit(cache=True, nogil=True)
def fnv1a(buf, a, b):
    h = _FNV_OFFSET
    for i in range(a, b):
        h ^= np.uint64(buf[i])
        h *= _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def line_starts(buf, n_chunks):
    """Chunk boundaries at line starts, and the number of non-blank lines per chunk."""
    n = len(buf)
    bounds = np.empty(n_chunks + 1, np.int64)
    bounds[0] = 0
    for c in range(1, n_chunks):
        p = c * n // n_chunks
        while p < n and buf[p - 1] != 10:
            p += 1
        bounds[c] = max(p, bounds[c - 1])
    bounds[n_chunks] = n
    return bounds


@njit(cache=True, nogil=True, parallel=True)
def count_lines(buf, bounds, counts, newlines):
    """Upper bound of the rows of each chunk (its newlines, plus one for a last line
    without one) and its newline count; a simple loop that vectorizes."""
    for c in prange(len(bounds) - 1):
        nl = 0
        for p in range(bounds[c], bounds[c + 1]):
            nl += 1 if buf[p] == 10 else 0
        newlines[c] = nl
        last_open = bounds[c + 1] > bounds[c] and buf[bounds[c + 1] - 1] != 10
        counts[c] = nl + (1 if last_open else 0)


@njit(cache=True, nogil=True)
def _parse_chunk(buf, start, end, r0, kind, q_span, d_span, q_hash, d_hash, score, rel,
                 line_no, err):
    """Parse the lines of buf[start:end] into rows r0, r0 + 1, ...; returns the row count.
    One pass per line: the tokens a row needs are delimited, the rest of the line skipped."""
    need = 6 if kind == 0 else 4
    starts = np.empty(6, np.int64)
    stops = np.empty(6, np.int64)
    r = r0
    p = start
    line = 0
    err[0] = OK
    while p < end:
        line += 1
        nt = 0
        i = p
        while i < end and buf[i] != 10:
            if _space(buf[i]):
                i += 1
                continue
            j = i
            while j < end and buf[j] != 10 and not _space(buf[j]):
                j += 1
            starts[nt] = i
            stops[nt] = j
            nt += 1
            i = j
            if nt == need:  # the remaining columns are not used
                while i < end and buf[i] != 10:
                    i += 1
                break
        e = i
        if nt == 0:
            p = e + 1
            continue
        line_no[r] = line
        if nt < need:
            err[0] = TOO_FEW_COLUMNS
            err[1] = r
            err[2] = p
            err[3] = e
            return r - r0
        q_span[r, 0] = starts[0]
        q_span[r, 1] = stops[0]
        d_span[r, 0] = starts[2]
        d_span[r, 1] = stops[2]
        q_hash[r] = fnv1a(buf, starts[0], stops[0])
        d_hash[r] = fnv1a(buf, starts[2], stops[2])
        if kind == 0:
            st, v = parse_float(buf, starts[4], stops[4])
            if st == F_BAD:
                err[0] = BAD_NUMBER
            elif st == F_NONFINITE:
                err[0] = NONFINITE
            elif st != F_OK:  # a long mantissa: flagged for Python's float
                v = np.nan
            score[r] = v
            tok = 4
        else:
            ok, iv = parse_int(buf, starts[3], stops[3])
            if not ok:
                err[0] = BAD_INTEGER
            rel[r] = iv
            tok = 3
        if err[0] != OK:
            err[1] = r
            err[2] = starts[tok]
            err[3] = stops[tok]
            return r - r0
        r += 1
        p = e + 1
    return r - r0


@njit(cache=True, nogil=True, parallel=True)
def parse_lines(buf, bounds, offsets, kind, q_span, d_span, q_hash, d_hash, score, rel,
                line_no, err, n_rows):
    """Parse run (kind 0: ``qid Q0 docno rank score runid``) or qrels (kind 1:
    ``qid iter docno rel``) lines, one chunk per task. Row r gets its qid / docno byte spans
    and hashes, its score (run, into ``score``) or relevance (qrels, into ``rel``; the other
    array is unused, so both kinds share one compiled kernel) and its 1-based line number
    within its chunk (fixed up by the caller). ``err[c] = (code, row, token start, token end)`` of
    chunk c's first error; ``n_rows[c]`` its row count."""
    for c in prange(len(bounds) - 1):
        n_rows[c] = _parse_chunk(buf, bounds[c], bounds[c + 1], offsets[c], kind, q_span,
                                 d_span, q_hash, d_hash, score, rel, line_no, err[c])


@njit(cache=True, nogil=True, parallel=True)
def check_same(buf, span, rep, out_bad):
    """out_bad[r] = True if row r's bytes differ from those of row rep[r] (equal hashes that
    are not equal strings: a hash collision)."""
    for r in prange(len(rep)):
        s = rep[r]
        out_bad[r] = not same_bytes(buf, span[r, 0], span[r, 1], buf, span[s, 0], span[s, 1])


@njit(cache=True, nogil=True)
def same_bytes(buf_a, a0, a1, buf_b, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for i in range(a1 - a0):
        if buf_a[a0 + i] != buf_b[b0 + i]:
            return False
    return True


@njit(cache=True, nogil=True)
def build_table(keys):
    """Open-addressing hash table of ``keys`` (power-of-two size, -1 = empty) → row."""
    size = 1
    while size < 2 * len(keys) + 1:
        size *= 2
    table = np.full(size, -1, np.int64)
    mask = np.uint64(size - 1)
    for r in range(len(keys)):
        h = keys[r] & mask
        while table[h] >= 0:
            h = (h + np.uint64(1)) & mask
        table[h] = r
    return table


@njit(cache=True, nogil=True, parallel=True)
def join(run_buf, run_q, run_d, run_key, qrel_buf, qrel_q, qrel_d, qrel_key, table, rel,
         unjudged, out_rel, out_judged):
    """For every run row, its relevance in the qrels (``unjudged`` if absent): a hash-table
    probe, confirmed by comparing the qid and docno bytes."""
    mask = np.uint64(len(table) - 1)
    for r in prange(len(run_key)):
        k = run_key[r]
        h = k & mask
        found = -1
        while table[h] >= 0:
            s = table[h]
            if qrel_key[s] == k and \
                    same_bytes(run_buf, run_d[r, 0], run_d[r, 1], qrel_buf, qrel_d[s, 0],
                               qrel_d[s, 1]) and \
                    same_bytes(run_buf, run_q[r, 0], run_q[r, 1], qrel_buf, qrel_q[s, 0],
                               qrel_q[s, 1]):
                found = s
                break
            h = (h + np.uint64(1)) & mask
        if found >= 0:
            out_rel[r] = rel[found]
            out_judged[r] = True
        else:
            out_rel[r] = unjudged
            out_judged[r] = False


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("files", (
    first(check_same, ro(u1), arr(i8, 2), arr(i8), arr(b1)),
    first(count_lines, ro(u1), arr(i8), arr(i8), arr(i8)),
    first(line_starts, ro(u1), i8),
    first(parse_lines, ro(u1), arr(i8), arr(i8), i8, arr(i8, 2), arr(i8, 2), arr(u8), arr(u8),
          arr(f8), arr(i8), arr(i8), arr(i8, 2), arr(i8)),
), phase=0)
