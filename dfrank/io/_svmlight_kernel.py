"""Numba kernel that parses a block of SVMlight/LETOR lines straight into arrays.

A block is a ``uint8`` buffer holding whole lines. Numbers are parsed in place (no Python
string per token); a value whose decimal mantissa does not fit the exact fast path is
flagged for Python's ``float`` so every value is correctly rounded. Errors come back as a
code with the relative line number and the byte span of the offending token; the Python
layer turns them into :class:`dfrank.DataFormatError`.
"""

import numpy as np

from .._jit import arr, declare, f8, first, i4, i8, njit, ro, u1

# error codes (see _MESSAGES in svmlight.py)
OK = 0
BAD_LABEL = 1
BAD_LABEL_VALUE = 2
QID_MISSING = 3
QID_UNEXPECTED = 4
BAD_QID = 5
BAD_FEATURE_TOKEN = 6
BAD_FEATURE_ID = 7
BAD_VALUE = 8
NONFINITE_VALUE = 9
DUPLICATE_FEATURE = 10
FEATURE_TOO_LARGE = 11

# parse_float status
F_OK = 0
F_BAD = 1
F_SLOW = 2
F_NONFINITE = 3

_POW10 = np.array([10.0 ** i for i in range(23)])
_SPACE, _TAB, _CR, _NL, _HASH, _COLON = 32, 9, 13, 10, 35, 58


@njit(cache=True, inline="always")
def _is_space(c):
    return c == _SPACE or c == _TAB or c == _CR


@njit(cache=True, nogil=True)
def _lower(c):
    return c + 32 if 65 <= c <= 90 else c


@njit(cache=True, nogil=True)
def _word_is(buf, s, e, word):
    if e - s != len(word):
        return False
    for i in range(e - s):
        if _lower(buf[s + i]) != word[i]:
            return False
    return True


_NAN = np.frombuffer(b"nan", dtype=np.uint8).copy()
_INF = np.frombuffer(b"inf", dtype=np.uint8).copy()
_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).copy()
_QID = np.frombuffer(b"qid:", dtype=np.uint8).copy()
_DOCID = np.frombuffer(b"docid", dtype=np.uint8).copy()


@njit(cache=True, nogil=True)
def parse_float(buf, s, e):
    """Parse buf[s:e] as a decimal float. Returns (status, value).

    Fast path: mantissa < 2**53 and |decimal exponent| <= 22, where one IEEE multiply or
    divide of two exact doubles is correctly rounded. Anything else valid is F_SLOW.
    """
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    if i >= e:
        return F_BAD, 0.0
    # nan / inf spelled out
    c = _lower(buf[i])
    if c == 110 or c == 105:
        if _word_is(buf, i, e, _NAN) or _word_is(buf, i, e, _INF) or \
                _word_is(buf, i, e, _INFINITY):
            return F_NONFINITE, 0.0
        return F_BAD, 0.0
    mant = 0
    ndig = 0
    frac = 0
    seen_digit = False
    slow = False
    while i < e and 48 <= buf[i] <= 57:
        seen_digit = True
        if mant == 0 and buf[i] == 48:
            i += 1
            continue
        if ndig < 18:
            mant = mant * 10 + (buf[i] - 48)
            ndig += 1
        else:
            slow = True
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            seen_digit = True
            if mant == 0 and buf[i] == 48:
                frac += 1
                i += 1
                continue
            if ndig < 18:
                mant = mant * 10 + (buf[i] - 48)
                ndig += 1
                frac += 1
            else:
                slow = True
            i += 1
    if not seen_digit:
        return F_BAD, 0.0
    exp = 0
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            eneg = buf[i] == 45
            i += 1
        if i >= e:
            return F_BAD, 0.0
        while i < e and 48 <= buf[i] <= 57:
            if exp < 100000:
                exp = exp * 10 + (buf[i] - 48)
            i += 1
        if eneg:
            exp = -exp
    if i != e:
        return F_BAD, 0.0
    if slow:
        return F_SLOW, 0.0
    e10 = exp - frac
    if mant == 0:
        v = 0.0
    elif mant >= 9007199254740992 or e10 > 22 or e10 < -22:
        return F_SLOW, 0.0
    elif e10 >= 0:
        v = float(mant) * _POW10[e10]
    else:
        v = float(mant) / _POW10[-e10]
    return F_OK, -v if neg else v


@njit(cache=True, nogil=True)
def parse_int(buf, s, e):
    """Parse buf[s:e] as a signed decimal integer. Returns (ok, value)."""
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    if i >= e or e - i > 18:
        return False, 0
    v = 0
    while i < e:
        c = buf[i]
        if c < 48 or c > 57:
            return False, 0
        v = v * 10 + (c - 48)
        i += 1
    return True, -v if neg else v


@njit(cache=True, nogil=True)
def _docid_span(buf, s, e):
    """Docid from a comment buf[s:e] (after '#'): the token after ``docid =`` if present,
    else the first token of the comment. Returns (start, end), (-1, -1) if none."""
    i = s
    while i < e:
        # look for "docid"
        if i + 5 <= e and _word_is(buf, i, i + 5, _DOCID):
            j = i + 5
            while j < e and _is_space(buf[j]):
                j += 1
            if j < e and buf[j] == 61:  # '='
                j += 1
                while j < e and _is_space(buf[j]):
                    j += 1
                k = j
                while k < e and not _is_space(buf[k]):
                    k += 1
                if k > j:
                    return j, k
        i += 1
    i = s
    while i < e and _is_space(buf[i]):
        i += 1
    k = i
    while k < e and not _is_space(buf[k]):
        k += 1
    if k > i:
        return i, k
    return -1, -1


@njit(cache=True, nogil=True)
def _parse_features(buf, i, de, row, n_features_cap, seen, cols, vals, nnz, slow, n_slow,
                    max_fid):
    """The ``fid:value`` pairs of one line (``buf[i:de]``, data row ``row``) into ``cols`` and
    ``vals`` from ``nnz`` on. ``seen`` holds each feature id's last row + 1 (duplicates);
    ``slow`` = (slow_idx, slow_start, slow_end), the values that need Python's float.
    Returns (error code, error start, error end, seen, nnz, slow, n_slow, max_fid), the
    arrays grown where needed; one return, as in :func:`parse_block`."""
    err_code = OK
    err_start = 0
    err_end = 0
    while True:
        while i < de and _is_space(buf[i]):
            i += 1
        if i >= de:
            break
        ts = i
        colon = -1
        while i < de and not _is_space(buf[i]):
            if buf[i] == _COLON and colon < 0:
                colon = i
            i += 1
        if colon < 0:
            err_code, err_start, err_end = BAD_FEATURE_TOKEN, ts, i
            break
        ok, fid = parse_int(buf, ts, colon)
        if not ok or fid <= 0:
            err_code, err_start, err_end = BAD_FEATURE_ID, ts, i
            break
        if n_features_cap > 0 and fid > n_features_cap:
            err_code, err_start, err_end = FEATURE_TOO_LARGE, ts, i
            break
        if fid >= len(seen):
            bigger = np.empty(max(2 * len(seen), fid + 1), np.int64)
            for f in range(len(bigger)):
                bigger[f] = seen[f] if f < len(seen) else 0
            seen = bigger
        if seen[fid] == row + 1:
            err_code, err_start, err_end = DUPLICATE_FEATURE, ts, i
            break
        seen[fid] = row + 1
        st, v = parse_float(buf, colon + 1, i)
        if st == F_BAD:
            err_code, err_start, err_end = BAD_VALUE, ts, i
            break
        if st == F_NONFINITE:
            err_code, err_start, err_end = NONFINITE_VALUE, ts, i
            break
        if st == F_SLOW:
            slow = _note_slow(slow, n_slow, nnz, colon + 1, i)
            n_slow += 1
            v = 0.0
        if fid > max_fid:
            max_fid = fid
        cols[nnz] = fid - 1
        vals[nnz] = v
        nnz += 1
    return err_code, err_start, err_end, seen, nnz, slow, n_slow, max_fid


@njit(cache=True, nogil=True)
def _note_slow(slow, n_slow, at, start, end):
    """Record the value at ``at`` (``buf[start:end]``) as the ``n_slow``-th that needs
    Python's float, in ``slow`` = (slow_idx, slow_start, slow_end), grown when full."""
    slow_idx, slow_start, slow_end = slow
    if n_slow == len(slow_idx):
        slow_idx = _grow(slow_idx)
        slow_start = _grow(slow_start)
        slow_end = _grow(slow_end)
    slow_idx[n_slow] = at
    slow_start[n_slow] = start
    slow_end[n_slow] = end
    return slow_idx, slow_start, slow_end


@njit(cache=True, nogil=True)
def _count_lines_and_colons(buf):
    """The newlines and colons in ``buf``: at most the rows and values it holds."""
    n_nl = 0
    n_colon = 0
    for i in range(len(buf)):
        c = buf[i]
        if c == _NL:
            n_nl += 1
        elif c == _COLON:
            n_colon += 1
    return n_nl, n_colon


@njit(cache=True, nogil=True)
def _parse_qid(buf, i, pos, de, qid_mode):
    """The ``qid:Q`` token at ``buf[i:]``, if any, of the line ``buf[pos:de]``; the file's
    ``qid_mode`` (-1: not known yet, 0: no qid, 1: qids) decided by its first line.
    Returns (error code, error start, error end, qid_mode, Q or 0, the position after it)."""
    has_qid = i + 4 <= de and _word_is(buf, i, i + 4, _QID)
    if qid_mode == -1:
        qid_mode = 1 if has_qid else 0
    err_code, err_start, err_end, q = OK, 0, 0, 0
    if has_qid and qid_mode == 0:
        ts = i
        while i < de and not _is_space(buf[i]):
            i += 1
        err_code, err_start, err_end = QID_UNEXPECTED, ts, i
    elif not has_qid and qid_mode == 1:
        err_code, err_start, err_end = QID_MISSING, pos, de
    elif has_qid:
        ts = i + 4
        i = ts
        while i < de and not _is_space(buf[i]):
            i += 1
        ok, q = parse_int(buf, ts, i)
        if not ok:
            err_code, err_start, err_end = BAD_QID, ts - 4, i
    return err_code, err_start, err_end, qid_mode, q, i


@njit(cache=True, nogil=True)
def parse_block(buf, expect_qid, n_features_cap):
    """Parse whole lines in ``buf``.

    Parameters
    ----------
    buf : uint8 array of whole lines.
    expect_qid : -1 (decide on the first data line), 0 (no qid allowed), 1 (qid required).
    n_features_cap : largest allowed feature id, or 0 for no limit.

    Returns
    -------
    tuple: (n_rows, labels, qids, row_line, indptr, cols, vals, doc_start, doc_end,
    slow_idx, slow_start, slow_end, n_slow, qid_mode, n_lines,
    err_code, err_line, err_start, err_end, max_fid)
    ``slow_idx`` is the position in ``vals`` (or ``-1 - row`` for a label) of each value
    that needs Python's float. Line numbers are 0-based within the block. Parsing stops
    at the first error (``err_code != OK``), and the other values are then partial. Every
    error leaves the loops by ``break`` to the one ``return``: a return per error made
    numba infer the result tuple's type a dozen times (seconds of compiling).
    """
    n = len(buf)
    n_nl, n_colon = _count_lines_and_colons(buf)
    cap_rows = n_nl + 1
    labels = np.empty(cap_rows, np.float64)
    qids = np.empty(cap_rows, np.int64)
    row_line = np.empty(cap_rows, np.int64)
    indptr = np.empty(cap_rows + 1, np.int64)  # [0], then one entry per row
    indptr[0] = 0
    cols = np.empty(max(n_colon, 1), np.int32)
    vals = np.empty(max(n_colon, 1), np.float64)
    doc_start = np.empty(cap_rows, np.int64)  # written for every row, -1 without a docid
    doc_end = np.empty(cap_rows, np.int64)
    slow = (np.empty(16, np.int64), np.empty(16, np.int64), np.empty(16, np.int64))
    n_slow = 0
    seen = np.empty(1024, np.int64)  # line stamp per feature id, for duplicates
    for f in range(len(seen)):
        seen[f] = 0
    qid_mode = expect_qid
    max_fid = 0
    nnz = 0
    row = 0
    line = 0
    pos = 0
    err_code = OK
    err_line = 0
    err_start = 0
    err_end = 0
    while pos < n:
        # bounds of this line and of its data part (before '#')
        le = pos
        while le < n and buf[le] != _NL:
            le += 1
        de = pos
        while de < le and buf[de] != _HASH:
            de += 1
        i = pos
        while i < de and _is_space(buf[i]):
            i += 1
        if i == de:  # blank or comment-only line
            pos = le + 1
            line += 1
            continue
        # ---- label
        ts = i
        while i < de and not _is_space(buf[i]):
            i += 1
        st, v = parse_float(buf, ts, i)
        if st == F_BAD:
            err_code, err_line, err_start, err_end = BAD_LABEL, line, ts, i
            break
        if st == F_NONFINITE or (st == F_OK and v < 0):
            err_code, err_line, err_start, err_end = BAD_LABEL_VALUE, line, ts, i
            break
        if st == F_SLOW:
            if buf[ts] == 45:
                err_code, err_line, err_start, err_end = BAD_LABEL_VALUE, line, ts, i
                break
            slow = _note_slow(slow, n_slow, -1 - row, ts, i)
            n_slow += 1
            v = 0.0
        labels[row] = v
        row_line[row] = line
        while i < de and _is_space(buf[i]):
            i += 1
        # ---- qid
        err_code, err_start, err_end, qid_mode, q, i = _parse_qid(buf, i, pos, de, qid_mode)
        if err_code != OK:
            err_line = line
            break
        qids[row] = q
        # ---- features
        err_code, err_start, err_end, seen, nnz, slow, n_slow, max_fid = _parse_features(
            buf, i, de, row, n_features_cap, seen, cols, vals, nnz, slow, n_slow, max_fid)
        if err_code != OK:
            err_line = line
            break
        indptr[row + 1] = nnz
        a, b = -1, -1
        if de < le:
            a, b = _docid_span(buf, de + 1, le)
        doc_start[row] = a
        doc_end[row] = b
        row += 1
        pos = le + 1
        line += 1
    return (row, labels, qids, row_line, indptr, cols, vals, doc_start, doc_end,
            slow[0], slow[1], slow[2], n_slow, qid_mode, line,
            err_code, err_line, err_start, err_end, max_fid)


@njit(cache=True, nogil=True)
def _grow(a):
    """``a`` in an array twice as long (an element loop: a slice assignment would compile
    numba's shape-error path, about a second)."""
    b = np.empty(2 * len(a), a.dtype)
    for i in range(len(a)):
        b[i] = a[i]
    return b


@njit(cache=True, nogil=True)
def fill_dense(X, row0, indptr, cols, vals, n_rows):
    """Scatter CSR rows into dense rows ``X[row0:row0+n_rows]`` (missing features stay 0)."""
    for r in range(n_rows):
        for p in range(indptr[r], indptr[r + 1]):
            X[row0 + r, cols[p]] = vals[p]


@njit(cache=True, nogil=True)
def gather_docids(buf, doc_start, doc_end, n_rows, width, out, row0):
    """Copy docid bytes into a fixed-width byte matrix (rows without docid stay empty)."""
    for r in range(n_rows):
        a = doc_start[r]
        if a < 0:
            continue
        m = doc_end[r] - a
        for j in range(m):
            out[row0 + r, j] = buf[a + j]


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("files", (
    first(fill_dense, arr(f8, 2), i8, arr(i8), arr(i4), arr(f8), i8),
    first(gather_docids, ro(u1), arr(i8), arr(i8), i8, i8, arr(u1, 2), i8),
    first(parse_block, ro(u1), i8, i8),
), phase=0)
