"""TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score runid``).

Files (plain or gzip) are parsed in parallel by :mod:`._trec_kernel`; qids and docnos stay
byte spans with 64-bit hashes (confirmed byte for byte) until the few distinct qids are
decoded for printing. Extra trailing columns are tolerated, as trec_eval does; a line with
too few columns, a score that is not a number (or NaN/inf) or a relevance that is not an
integer raises :class:`dfrank.DataFormatError` with the path, line and token.
"""

import gzip
import os

import numba
import numpy as np

from ..errors import DataFormatError
from . import _trec_kernel
from .svmlight import is_regular_file, open_maybe_gzip

__all__ = ["Qrels", "Run", "load_qrels", "load_run", "write_run", "run_from_scores"]

_MESSAGES = {_trec_kernel.TOO_FEW_COLUMNS: "too few columns",
             _trec_kernel.BAD_NUMBER: "the score is not a number",
             _trec_kernel.NONFINITE: "the score is NaN or infinite",
             _trec_kernel.BAD_INTEGER: "the relevance is not an integer (of at most 64 bits)"}


_BOM = b"\xef\xbb\xbf"


def _read(path):
    """The file's bytes (gzip decompressed); regular files straight into an array, pipes
    and standard input ("-") as they stream."""
    with open_maybe_gzip(path) as f:  # a missing file or a broken gzip: a clear error
        if isinstance(f, gzip.GzipFile) or not is_regular_file(path):
            return np.frombuffer(f.read(), dtype=np.uint8)
    return np.fromfile(path, dtype=np.uint8)


class _TrecFile:
    """Rows of a TREC file: qid/docno byte spans with hashes, one number per row."""

    kind = None
    what = None
    need = None

    def __init__(self, path, *, text=None):
        """Read ``path``; or parse ``text`` (bytes in the file's format), ``path`` then only
        naming where it came from in messages."""
        path = os.fspath(path)
        self.path = path
        buf = _read(path) if text is None else np.frombuffer(text, dtype=np.uint8)
        if len(buf) >= 3 and bytes(buf[:3]) == _BOM:   # a UTF-8 byte-order mark
            buf = buf[3:]
        if buf.flags.writeable:   # one type for the kernels, whatever the source
            buf = buf.view()
            buf.flags.writeable = False
        self.buf = buf
        n_chunks = max(1, min(8 * numba.get_num_threads(), len(buf) // 65536 + 1))
        bounds = _trec_kernel.line_starts(buf, n_chunks)
        counts = np.empty(n_chunks, np.int64)
        newlines = np.empty(n_chunks, np.int64)
        _trec_kernel.count_lines(buf, bounds, counts, newlines)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cap = int(offsets[-1])
        self.q_span = np.empty((cap, 2), np.int64)
        self.d_span = np.empty((cap, 2), np.int64)
        self.q_hash = np.empty(cap, np.uint64)
        self.d_hash = np.empty(cap, np.uint64)
        score = np.empty(cap if self.kind == 0 else 0)
        rel = np.empty(0 if self.kind == 0 else cap, np.int64)
        value = score if self.kind == 0 else rel
        self.line_no = np.empty(cap, np.int64)
        err = np.zeros((n_chunks, 4), np.int64)
        n_rows = np.zeros(n_chunks, np.int64)
        _trec_kernel.parse_lines(buf, bounds, offsets, self.kind, self.q_span, self.d_span,
                                 self.q_hash, self.d_hash, score, rel, self.line_no, err,
                                 n_rows)
        line_base = np.concatenate([[0], np.cumsum(newlines)[:-1]])
        bad = np.flatnonzero(err[:, 0] != _trec_kernel.OK)
        if bad.size:
            c = int(bad[0])
            code, row, a, b = (int(x) for x in err[c])
            line = int(line_base[c] + self.line_no[row])
            token = bytes(buf[a:b]).decode("utf-8", "replace")
            msg = _MESSAGES[code]
            if code == _trec_kernel.TOO_FEW_COLUMNS:
                msg += f": a {self.what} line is {self.need}"
            raise DataFormatError(msg, path=path, line=line, token=token)
        n = int(n_rows.sum())
        if n == 0:
            raise DataFormatError(f"the {self.what} file holds no line", path=path)
        self.line_no[:cap] += np.repeat(line_base, counts)
        if n < cap:  # blank lines: drop the unused slots
            keep = np.concatenate([np.arange(offsets[c], offsets[c] + n_rows[c])
                                   for c in range(n_chunks)])
            self.q_span, self.d_span = self.q_span[keep], self.d_span[keep]
            self.q_hash, self.d_hash = self.q_hash[keep], self.d_hash[keep]
            value, self.line_no = value[keep], self.line_no[keep]
        if self.kind == 0:
            slow = np.flatnonzero(np.isnan(value))
            for r in slow:  # long mantissas: Python's correctly rounded float
                token = self._line_tokens(r)[4]
                v = float(token)
                if not np.isfinite(v):
                    raise DataFormatError(_MESSAGES[_trec_kernel.NONFINITE], path=path,
                                          line=int(self.line_no[r]),
                                          token=token.decode("utf-8", "replace"))
                value[r] = v
        self.value = value
        self.n = n
        self._queries = None

    def _line_tokens(self, r):
        a = int(self.q_span[r, 0])
        b = a
        buf = self.buf
        while b < len(buf) and buf[b] != 10:
            b += 1
        return bytes(buf[a:b]).split()

    def text(self, span_row, spans):
        a, b = spans[span_row]
        return bytes(self.buf[a:b]).decode("utf-8", "replace")

    # ------------------------------------------------------------ queries
    def queries(self):
        """(qids as str, query index of every row), qids in first-appearance order.

        Rows of one query need not be contiguous. Equal hashes are confirmed byte by byte.
        """
        if self._queries is None:
            qh = self.q_hash
            change = np.flatnonzero(qh[1:] != qh[:-1]) + 1
            starts = np.concatenate([[0], change]).astype(np.int64)
            uniq, first, inv = np.unique(qh[starts], return_index=True, return_inverse=True)
            # index queries by first appearance
            appear = np.argsort(first, kind="stable")
            rank = np.empty(len(uniq), np.int64)
            rank[appear] = np.arange(len(uniq))
            run_q = rank[inv.ravel()]
            lengths = np.diff(np.concatenate([starts, [self.n]]))
            row_q = np.repeat(run_q, lengths)
            rep_row = starts[first[appear]]          # a representative row per query
            bad = np.empty(self.n, np.bool_)
            _trec_kernel.check_same(self.buf, self.q_span, rep_row[row_q], bad)
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise DataFormatError(
                    "two different qids share a 64-bit hash (a collision dfrank does not "
                    "handle); please report it", path=self.path, line=int(self.line_no[r]))
            qids = [self.text(int(r), self.q_span) for r in rep_row]
            self._queries = (qids, row_q, rep_row)
        return self._queries[0], self._queries[1]


class Qrels(_TrecFile):
    """Relevance judgments: ``qid iter docno rel`` per line (``rel`` an integer)."""

    kind = 1
    what = "qrels"
    need = "'qid iter docno rel'"

    def __init__(self, path, *, text=None):
        super().__init__(path, text=text)
        self._check_unique()

    @property
    def rel(self):
        return self.value

    def _check_unique(self):
        """A (qid, docno) judged twice is an error naming both lines: which judgment
        counts would depend on their order."""
        key = np.empty(self.n, np.uint64)
        _keys(self.q_hash, self.d_hash, key)
        order = np.argsort(key, kind="stable")
        same = np.flatnonzero(key[order[1:]] == key[order[:-1]])
        for i in same:
            a, b = int(order[i]), int(order[i + 1])
            if self.text(a, self.q_span) == self.text(b, self.q_span) and \
                    self.text(a, self.d_span) == self.text(b, self.d_span):
                a, b = sorted((a, b))
                raise DataFormatError(
                    f"query {self.text(a, self.q_span)!r} judges docno "
                    f"{self.text(a, self.d_span)!r} twice (lines {int(self.line_no[a])} and "
                    f"{int(self.line_no[b])}); which judgment counts would depend on their "
                    "order: keep one", path=self.path, line=int(self.line_no[b]))

    def __repr__(self):
        return f"Qrels({self.path!r}, {self.n} judgments, {len(self.queries()[0])} queries)"


class Run(_TrecFile):
    """A ranked list per query: ``qid Q0 docno rank score runid`` (rank ignored)."""

    kind = 0
    what = "run"
    need = "'qid Q0 docno rank score runid'"

    @property
    def score(self):
        return self.value

    @property
    def runid(self):
        """The run id (sixth column of the first line)."""
        if getattr(self, "_runid", None) is None:
            toks = self._line_tokens(0)
            self._runid = toks[5].decode("utf-8", "replace") if len(toks) > 5 else ""
        return self._runid

    def __repr__(self):
        return f"Run({self.path!r}, {self.n} lines, {len(self.queries()[0])} queries)"


def load_qrels(path):
    """Read a TREC qrels file (plain or .gz)."""
    return Qrels(path)


def load_run(path):
    """Read a TREC run file (plain or .gz)."""
    return Run(path)


def judge(run, qrels):
    """Relevance of every run row in ``qrels`` and whether it was judged."""
    key_r = np.empty(run.n, np.uint64)
    key_q = np.empty(qrels.n, np.uint64)
    _keys(run.q_hash, run.d_hash, key_r)
    _keys(qrels.q_hash, qrels.d_hash, key_q)
    table = _trec_kernel.build_table(key_q)
    rel = np.empty(run.n, np.int64)
    judged = np.empty(run.n, np.bool_)
    _trec_kernel.join(run.buf, run.q_span, run.d_span, key_r, qrels.buf, qrels.q_span,
                      qrels.d_span, key_q, table, qrels.rel, np.iinfo(np.int64).min, rel, judged)
    return rel, judged


def _keys(qh, dh, out):
    out[:] = (qh * np.uint64(0x9E3779B97F4A7C15)) ^ dh


def run_from_scores(data, scores, runid="dfrank"):
    """TREC run lines (a list of str) for the scores of ``data``'s documents, ranked by
    score within each query (docids from the data, or row numbers)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (data.n_docs,):
        raise ValueError(f"scores must have shape ({data.n_docs},), got {scores.shape}")
    docids = data.docids if data.docids is not None else np.arange(data.n_docs).astype(str)
    lines = []
    for q in range(data.n_queries):
        lo, hi = int(data.qptr[q]), int(data.qptr[q + 1])
        order = np.argsort(-scores[lo:hi], kind="stable")
        for rank, i in enumerate(order, 1):
            lines.append(f"{data.qids[q]} Q0 {docids[lo + i]} {rank} {float(scores[lo + i])!r} "
                         f"{runid}\n")
    return lines


def write_run(path, data, scores, runid="dfrank"):
    """Write the scores of ``data``'s documents as a TREC run file."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.writelines(run_from_scores(data, scores, runid))
