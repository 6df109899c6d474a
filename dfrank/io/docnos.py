"""Docnos as arrays: the rows of TREC files read by :mod:`.trec` keyed by (query, docno)
without a Python object per line.

A docno becomes a fixed-width byte string (numpy ``S`` dtype: compared byte by byte, as
trec_eval compares docnos with strcmp); a *key* is a 4-byte code of the query's index
(base 255, no zero byte, so the order is the indices' order) followed by the docno, so that
sorting keys sorts by query, then docno, and ``np.unique`` / ``np.searchsorted`` join the
rows of several files.
"""

import numpy as np

__all__ = ["docno_bytes", "keys", "key_queries", "key_docnos", "PREFIX"]

PREFIX = 4          # bytes of a key's query code
_CHUNK = 1 << 16    # rows gathered at a time (bounds the index matrix's memory)


def docno_bytes(f, rows=None, width=None):
    """The docnos of rows ``rows`` (default all) of a read TREC file ``f`` as an ``S``
    array of ``width`` bytes (default: the longest)."""
    spans = f.d_span if rows is None else f.d_span[rows]
    lengths = spans[:, 1] - spans[:, 0]
    width = int(max(lengths.max(initial=0), 1)) if width is None else int(width)
    out = np.zeros((len(spans), width), np.uint8)
    cols = np.arange(width)
    for a in range(0, len(spans), _CHUNK):
        s = spans[a:a + _CHUNK]
        idx = s[:, :1] + cols
        inside = cols < (s[:, 1:] - s[:, :1])
        out[a:a + _CHUNK][inside] = f.buf[idx[inside]]
    return out.view(f"S{width}").ravel()


def keys(query_index, docnos):
    """Keys of rows whose query index is ``query_index`` (int, >= 0) and docno ``docnos``
    (an ``S`` array)."""
    q = np.asarray(query_index, dtype=np.int64)
    if len(q) and (q.min() < 0 or q.max() >= 255 ** PREFIX):
        raise ValueError("query indices must be in [0, 255^4)")
    width = docnos.dtype.itemsize
    out = np.empty((len(q), PREFIX + width), np.uint8)
    for i in range(PREFIX):
        out[:, PREFIX - 1 - i] = (q // 255 ** i) % 255 + 1
    out[:, PREFIX:] = docnos.view(np.uint8).reshape(len(q), width)
    return out.view(f"S{PREFIX + width}").ravel()


def key_queries(k):
    """The query index of each key."""
    b = k.view(np.uint8).reshape(len(k), k.dtype.itemsize)[:, :PREFIX].astype(np.int64) - 1
    q = np.zeros(len(k), np.int64)
    for i in range(PREFIX):
        q = q * 255 + b[:, i]
    return q


def key_docnos(k):
    """The docno of each key, as an ``S`` array."""
    width = k.dtype.itemsize - PREFIX
    raw = k.view(np.uint8).reshape(len(k), k.dtype.itemsize)[:, PREFIX:]
    return np.ascontiguousarray(raw).view(f"S{max(width, 1)}").ravel()
