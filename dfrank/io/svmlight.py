"""LETOR / SVMlight ranking files: ``label qid:Q fid:val ... # comment``.

The file is read in blocks of whole lines; a numba kernel parses each block straight into
arrays (the dense rows go into a few large segments, usually one: see :class:`_Segments`),
so memory peaks well below twice the final arrays and no Python object is made per number.
Every malformed line raises :class:`dfrank.DataFormatError` with the path, the line number
and the offending token.
"""

import gzip
import math
import os
import sys
import zlib

import numpy as np

from ..data.ranking import RankingData, group_runs
from ..errors import DataFormatError, DataWarning
from . import _svmlight_kernel
from ._write_kernel import format_rows

__all__ = ["load_svmlight", "save_svmlight", "read_query_file", "open_maybe_gzip",
           "sibling_query_file", "DataWarning", "MAX_FEATURES"]

_MESSAGES = {
    _svmlight_kernel.BAD_LABEL: "the label is not a number",
    _svmlight_kernel.BAD_LABEL_VALUE: "the label must be a finite number >= 0",
    _svmlight_kernel.QID_MISSING:
        "this line has no 'qid:' but earlier lines do (every line needs one)",
    _svmlight_kernel.QID_UNEXPECTED:
        "this line has a 'qid:' but the file's first line has none (or a query file was "
        "given); use one or the other",
    _svmlight_kernel.BAD_QID: "the qid is not an integer (of at most 64 bits)",
    _svmlight_kernel.BAD_FEATURE_TOKEN: "expected 'feature_id:value'",
    _svmlight_kernel.BAD_FEATURE_ID: "the feature id must be an integer >= 1",
    _svmlight_kernel.BAD_VALUE: "the feature value is not a number",
    _svmlight_kernel.NONFINITE_VALUE: "the feature value is NaN or infinite",
    _svmlight_kernel.DUPLICATE_FEATURE: "the feature id appears twice on this line",
    _svmlight_kernel.FEATURE_TOO_LARGE: "the feature id exceeds n_features",
}


MAX_FEATURES = 1 << 16  # widest dense matrix read without being asked (max_features=)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


class _GzipFile(gzip.GzipFile):
    """A gzip file whose truncated or corrupt stream raises DataFormatError naming the
    file (gzip raises a bare EOFError or zlib.error)."""

    def _checked(self, method, *args):
        try:
            return method(*args)
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise DataFormatError(f"the gzip data is truncated or corrupt ({e}); "
                                  "decompress it again or fetch the file anew",
                                  path=self.name) from None

    def read(self, size=-1):
        return self._checked(super().read, size)

    def read1(self, size=-1):
        return self._checked(super().read1, size)

    def readline(self, size=-1):
        return self._checked(super().readline, size)


STDIN = "-"


def open_maybe_gzip(path):
    """Open ``path`` for binary reading, decompressing gzip transparently (by magic bytes).
    ``"-"`` is standard input; a pipe or a FIFO is read as it streams (the magic bytes
    are peeked, not consumed). A missing file raises FileNotFoundError naming it; a
    truncated or corrupt gzip stream DataFormatError."""
    path = os.fspath(path)
    if path == STDIN:
        f = open(sys.stdin.fileno(), "rb", closefd=False)
    else:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        if os.path.isdir(path):
            raise IsADirectoryError(f"{path}: is a folder, not a file")
        f = open(path, "rb")
    if f.peek(2)[:2] == b"\x1f\x8b":
        g = _GzipFile(fileobj=f, mode="rb", filename=path)
        g.myfileobj = f   # closed with it
        return g
    return f


def is_regular_file(path):
    """Whether ``path`` names a regular file (not standard input, a pipe or a device)."""
    return os.fspath(path) != STDIN and os.path.isfile(path)


def _blocks(f, block_size):
    """Yield uint8 arrays of whole lines (the last one may lack a final newline)."""
    rest = b""
    while True:
        chunk = f.read(block_size)
        if not chunk:
            if rest:
                yield np.frombuffer(rest, dtype=np.uint8)
            return
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            continue
        rest = data[cut + 1:]
        yield np.frombuffer(data, dtype=np.uint8, count=cut + 1)


class _Block:
    __slots__ = ("labels", "qids", "lines", "docids")


_SEGMENT_BYTES = 256 << 20


class _Segments:
    """The dense feature rows, filled block by block into a few large zeroed arrays.

    Why not one dense array per block, concatenated at the end: freed block arrays of a few
    MB stay in the C heap, so the process peaked at about twice the final matrix. Large
    segments are mapped pages the OS takes back, and the first one is sized from the file
    (plain text: its size over the bytes per row of the first block), so the usual result
    is one segment whose first rows *are* the matrix, without a final copy."""

    def __init__(self, dtype, rows_hint=0):
        self.dtype = dtype
        self.rows_hint = rows_hint
        self.parts = []          # [array, rows used]

    def fill(self, width, indptr, cols, vals, n_rows):
        seg = self.parts[-1] if self.parts else None
        if seg is None or seg[0].shape[1] < width or seg[1] + n_rows > seg[0].shape[0]:
            rows = max(n_rows, _SEGMENT_BYTES // (width * self.dtype.itemsize),
                       0 if self.parts else self.rows_hint)
            seg = [np.zeros((rows, width), dtype=self.dtype), 0]
            self.parts.append(seg)
        _svmlight_kernel.fill_dense(seg[0], seg[1], indptr, cols, vals, n_rows)
        seg[1] += n_rows

    def matrix(self, n, width):
        """The (n, width) matrix; each segment is freed once copied."""
        if len(self.parts) == 1 and self.parts[0][0].shape[1] == width:
            return self.parts.pop()[0][:n]
        X = np.empty((n, width), dtype=self.dtype)
        r = 0
        while self.parts:
            a, m = self.parts.pop(0)
            w = a.shape[1]
            X[r:r + m, :w] = a[:m]
            X[r:r + m, w:] = 0
            r += m
            del a
        return X


def load_svmlight(path, n_features=None, *, dtype=np.float64, query_file=None,
                  single_query=False, docids=True, max_features=MAX_FEATURES,
                  min_features=None, block_size=1 << 25):
    """Load a LETOR/SVMlight ranking file into :class:`RankingData`.

    Parameters
    ----------
    path : str or path-like
        A text file, plain or gzip-compressed (detected from its first bytes). Each line is
        ``label qid:Q fid:val fid:val ... # comment``; blank lines and lines that start with
        ``#`` are skipped. Feature ids are 1-based; a missing feature is 0. The docid is taken
        from ``#docid = X`` in the comment, else the comment's first token.
    n_features : int, optional
        Number of feature columns. Defaults to the largest feature id in the file; give it
        to make train and test files agree (a larger id in the file is an error).
    dtype : numpy dtype, default float64
        ``float64`` or ``float32`` (half the memory; the metric kernels accumulate in float64).
    query_file : str or path-like, optional
        For SVMlight files without ``qid:`` (LightGBM style): a file with one integer per
        line, the number of consecutive rows of each query. The queries get ids 0, 1, ...
        Without it, a file without ``qid:`` takes its sibling query file as LightGBM does
        (``FILE.query``, or ``rank.test.query`` for ``rank.test.gz``); with none, reading
        it is an error (its queries cannot be told apart) unless ``single_query``.
    single_query : bool, default False
        The file has no ``qid:`` and all its rows are one query (``--one-query``).
    docids : bool, default True
        Keep the docids from the comments (``RankingData.docids``, or None when the file has
        none).
    max_features : int, default 65536
        The largest feature id read when ``n_features`` is not given: the features become
        a dense matrix, so a stray huge id (``2147483648:1``) would allocate gigabytes; it
        is an error naming the line instead. Raise it for files that really are that wide.
    min_features : int, optional
        At least this many feature columns, where ``n_features`` is not given (the file's
        larger ids widen it): the width a model that reads ids up to it needs.
    block_size : int
        Bytes read per block.

    Returns
    -------
    RankingData

    Raises
    ------
    DataFormatError
        A malformed line (with path, line number and token), an empty file, a qid that is
        not contiguous, or a query file whose sizes do not add up to the number of rows.
    """
    path = os.fspath(path)
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    asked, cap = _widths(n_features, min_features, max_features, path)
    if single_query and query_file is not None:
        raise ValueError("give query_file or single_query, not both")
    expect_qid = -1 if query_file is None and not single_query else 0
    blocks = []
    line_offset = 0
    width = 0 if asked is None else int(asked)
    listed = -1   # the largest id while every line lists each id up to it (None: not so)
    segments = None
    with open_maybe_gzip(path) as f:
        compressed = isinstance(f, gzip.GzipFile)
        for buf in _blocks(f, block_size):
            (n_rows, labels, qids, row_line, indptr, cols, vals, doc_start, doc_end,
             slow_idx, slow_start, slow_end, n_slow, expect_qid, n_lines,
             err, err_line, err_s, err_e, max_fid) = _svmlight_kernel.parse_block(
                 buf, expect_qid, cap)
            if err != _svmlight_kernel.OK:
                token = bytes(buf[err_s:err_e]).decode("utf-8", "replace")
                raise DataFormatError(_error_message(err, token, n_features, cap),
                                      path=path, line=line_offset + err_line + 1, token=token)
            for j in range(n_slow):  # values outside the exact fast path
                text = bytes(buf[slow_start[j]:slow_end[j]])
                v = float(text)
                label = slow_idx[j] < 0
                row = -1 - slow_idx[j] if label else \
                    int(np.searchsorted(indptr[:n_rows + 1], slow_idx[j], side="right")) - 1
                limit = _FLOAT32_MAX if (dtype == np.float32 and not label) else math.inf
                if not abs(v) < limit:
                    what = "label" if label else "feature value"
                    kind = "float32" if limit < math.inf else "float64"
                    raise DataFormatError(
                        f"the {what} overflows {kind} (its largest value is "
                        f"{limit if limit < math.inf else np.finfo(np.float64).max:.4g})",
                        path=path, line=line_offset + int(row_line[row]) + 1,
                        token=text.decode("utf-8", "replace"))
                if label:
                    labels[row] = v
                else:
                    vals[slow_idx[j]] = v
            if n_rows:
                width = max(width, int(max_fid))
                # no id twice on a line and none above max_fid: a block of max_fid tokens
                # a line lists every id up to it on each line
                full = indptr[n_rows] - indptr[0] == n_rows * int(max_fid)
                listed = int(max_fid) if full and listed in (-1, int(max_fid)) else None
                if segments is None:   # rows expected in the file, from this block
                    hint = 0 if compressed or not is_regular_file(path) else \
                        int(1.05 * os.path.getsize(path) * n_rows / max(len(buf), 1)) + 16
                    segments = _Segments(dtype, hint)
                segments.fill(max(width, 1), indptr, cols, vals, n_rows)
                b = _Block()
                b.labels = labels[:n_rows].copy()
                b.qids = qids[:n_rows].copy()
                b.lines = row_line[:n_rows] + (line_offset + 1)
                b.docids = _docids_of(buf, doc_start[:n_rows], doc_end[:n_rows]) \
                    if docids else None
                blocks.append(b)
            line_offset += n_lines
            del labels, qids, row_line, indptr, cols, vals
    if not blocks:
        raise DataFormatError("the file holds no data line", path=path)
    if asked is not None and listed is not None and 0 < listed < asked:
        _warn_short(path, listed, int(asked))
    width = max(width, 1)
    n = sum(len(b.labels) for b in blocks)
    X = segments.matrix(n, width)
    y = np.concatenate([b.labels for b in blocks])
    lines = np.concatenate([b.lines for b in blocks])
    doc = _merge_docids([(b.docids, len(b.labels)) for b in blocks]) if docids else None
    qptr, qid_out = _queries(blocks, lines, path, query_file, single_query, expect_qid == 1)
    return RankingData(X, y, qptr, qid_out, docids=doc, source=path)


def _queries(blocks, lines, path, query_file, single_query, has_qids):
    """(qptr, query ids) of the rows read: from their qids, the query file (given, or
    LightGBM's sibling of a file without qids), or one query."""
    n = len(lines)
    if query_file is None and not has_qids and not single_query:
        query_file = sibling_query_file(path)   # no qid: LightGBM's sibling query file
        if query_file is None and n > 1:
            raise DataFormatError(
                f"no 'qid:' and no query file ({path}.query), so its queries cannot be told "
                "apart: give query_file= (--query-file FILE: one group size per line, as "
                f"LightGBM), or single_query=True (--one-query) if all its {n} rows are one "
                "query", path=path)
    if single_query:
        return np.array([0, n], dtype=np.int64), np.zeros(1, dtype=np.int64)
    if query_file is not None:
        sizes = read_query_file(query_file, n_rows=n, data_path=path)
        return (np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                np.arange(len(sizes), dtype=np.int64))
    qid = np.concatenate([b.qids for b in blocks])
    return group_runs(qid, row_name="line", row_numbers=lines, path=path)


def _widths(n_features, min_features, max_features, path):
    """(the feature columns asked for or None, the largest feature id allowed) of
    :func:`load_svmlight`'s arguments, checked."""
    for name, value in (("n_features", n_features), ("min_features", min_features)):
        if value is not None and (int(value) != value or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if n_features is not None and min_features is not None:
        raise ValueError("give n_features or min_features, not both")
    if int(max_features) != max_features or max_features < 1:
        raise ValueError(f"max_features must be a positive integer, got {max_features!r}")
    asked = n_features if n_features is not None else min_features
    if asked is not None and asked > max_features:
        raise DataFormatError(
            f"{int(asked):,} feature columns asked for, more than the cap "
            f"max_features={int(max_features):,}: the features become a dense matrix of "
            f"rows x {int(asked):,}; raise max_features (--max-features) if the data "
            "really is that wide", path=path)
    return asked, int(max_features) if n_features is None else int(n_features)


def _warn_short(path, listed, asked):
    """Every line of ``path`` lists each feature id from 1 to ``listed`` (zeros too, as
    LETOR's files do), yet ``asked`` columns were asked for: a file written that way leaves
    no feature out, so it likely holds another feature set than the training data's or the
    model's it is read for."""
    import warnings

    rest = f"feature {asked} is" if asked == listed + 1 else \
        f"features {listed + 1}-{asked} are"
    warnings.warn(f"{path}: every line lists features 1-{listed} and none above, but {asked} "
                  f"feature columns were asked for: {rest} read as 0 in every document. "
                  "A file that lists its zeros leaves no feature out, so it may hold another "
                  "feature set than the training data's or the model's", DataWarning,
                  stacklevel=3)


def sibling_query_file(path):
    """LightGBM's query file beside a data file without qids: ``FILE.query``, or for a
    compressed ``FILE.gz`` also ``FILE.query``; None if there is none."""
    path = os.fspath(path)
    stems = [path] + ([path[:-3]] if path.endswith(".gz") else [])
    for stem in stems:
        if os.path.isfile(stem + ".query"):
            return stem + ".query"
    return None


def _error_message(err, token, n_features, cap):
    """The message of a parse error; a feature id too large for the dense matrix says
    which bound it broke and how to raise it."""
    fid = token.split(":", 1)[0].lstrip("+")
    if err == _svmlight_kernel.BAD_FEATURE_ID and fid.isdigit() and int(fid) > 0:
        err = _svmlight_kernel.FEATURE_TOO_LARGE
    if err == _svmlight_kernel.FEATURE_TOO_LARGE:
        if n_features is not None:
            return (f"the feature id exceeds n_features={n_features} (the feature count "
                    "of the training data or model)")
        return (f"the feature id exceeds max_features={cap}: the features are read into a "
                f"dense matrix of that many columns; pass max_features (--max-features) "
                "if the file really is that wide")
    return _MESSAGES[err]


def _docids_of(buf, start, end):
    has = start >= 0
    if not has.any():
        return None
    width = int((end - start)[has].max())
    out = np.zeros((len(start), max(width, 1)), dtype=np.uint8)
    _svmlight_kernel.gather_docids(buf, start, end, len(start), width, out, 0)
    return out.view(f"S{max(width, 1)}").ravel()


def _merge_docids(parts):
    """The docids of the blocks (``(docids or None, rows)`` each) in one array; the rows of
    a block without any docid get an empty one."""
    if all(p is None for p, _ in parts):
        return None
    width = max(p.dtype.itemsize for p, _ in parts if p is not None)
    full = np.concatenate([np.zeros(n, dtype=f"S{width}") if p is None
                           else p.astype(f"S{width}") for p, n in parts])
    if not (full.view(np.uint8) >= 0x80).any():
        return full.astype(f"U{width}")
    # UTF-8, as the TREC readers take docnos; bytes that are not UTF-8 kept as they are
    # (surrogateescape), so that a run written from them names the same documents
    return np.char.decode(full, "utf-8", "surrogateescape").astype(f"U{width}")


def read_query_file(path, n_rows=None, data_path=None):
    """Read a LightGBM-style query file: one positive integer (a group size) per line.

    If ``n_rows`` is given the sizes must add up to it.
    """
    path = os.fspath(path)
    sizes = []
    with open_maybe_gzip(path) as f:
        for lineno, raw in enumerate(f, 1):
            text = raw.strip()
            if not text:
                continue
            try:
                v = int(text)
            except ValueError:
                raise DataFormatError("a query size must be an integer", path=path,
                                      line=lineno, token=text.decode("utf-8", "replace"))
            if v < 1:
                raise DataFormatError("a query size must be >= 1", path=path, line=lineno,
                                      token=text.decode("utf-8", "replace"))
            sizes.append(v)
    if not sizes:
        raise DataFormatError("the query file is empty", path=path)
    sizes = np.asarray(sizes, dtype=np.int64)
    if n_rows is not None and int(sizes.sum()) != n_rows:
        raise DataFormatError(
            f"the query sizes add up to {int(sizes.sum())} rows but "
            f"{data_path or 'the data file'} has {n_rows}", path=path)
    return sizes


def save_svmlight(data, path, *, precision=6, chunk_rows=None):
    """Write ``data`` as a LETOR/SVMlight file (``.gz`` compresses): every feature of every
    row, ``label qid:Q 1:v ... #docid = D``, values in fixed point with ``precision``
    decimals. Written through a temporary file and renamed, so a reader never sees half a
    file. Integer qids only (LETOR's)."""
    if not isinstance(precision, (int, np.integer)) or not 0 <= precision <= 9:
        raise ValueError(f"precision must be an integer in [0, 9], got {precision!r}")
    if not np.issubdtype(np.asarray(data.qids).dtype, np.integer):
        raise ValueError(f"save_svmlight writes integer qids; these are "
                         f"{np.asarray(data.qids).dtype}")
    limit = 9.0e18 / 10.0 ** precision
    for name, a in (("features", data.X), ("labels", data.y)):
        big = float(np.abs(a).max()) if a.size else 0.0
        if big >= limit:
            raise ValueError(f"{name} reach {big:g}: too large for {precision} decimals in "
                             f"fixed point (below {limit:g})")
    qid_of_row = np.repeat(np.asarray(data.qids, dtype=np.int64), data.query_sizes)
    fids = np.asarray(data.feature_ids, dtype=np.int64)
    has_docids = data.docids is not None
    if has_docids:
        doc = np.char.encode(np.asarray(data.docids, dtype=str), "utf-8", "surrogateescape")
        if doc.dtype.itemsize == 0:
            doc = doc.astype("S1")
        docs = doc.view(np.uint8).reshape(len(doc), doc.dtype.itemsize)
        if np.any((docs == 10) | (docs == 13)):
            raise ValueError("a docid holds a line break")
    else:
        docs = np.zeros((1, 1), dtype=np.uint8)
    d = data.n_features
    # worst case per row: label and qid (22 + 26), each feature (' ' + 19-digit id + ':'
    # + sign, 19 digits, '.', decimals), the comment, the newline
    row_bytes = 48 + d * (22 + 21 + precision) + 10 + docs.shape[1] + 1
    chunk = chunk_rows or max(1, (64 << 20) // row_bytes)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".dfrank-", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(tmp, "wb") as f:
            buf = np.empty(min(chunk, data.n_docs) * row_bytes, dtype=np.uint8)
            for a in range(0, data.n_docs, chunk):
                b = min(a + chunk, data.n_docs)
                used = format_rows(data.X[a:b], data.y[a:b], qid_of_row[a:b], fids,
                                   docs[a:b] if has_docids else docs, has_docids,
                                   int(precision), buf)
                f.write(buf[:used].tobytes())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
