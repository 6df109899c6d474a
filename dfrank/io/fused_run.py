"""A fused run as arrays, read as the mapping ``{qid: {docno: score}}`` and written as a
TREC run one block of lines at a time (:func:`write_fused_run`), with the other writers of
:mod:`dfrank.io`."""

from collections.abc import Mapping

import numpy as np

from ..files import write_text_atomic

__all__ = ["FusedRun", "write_fused_run"]


class FusedRun(Mapping):
    """A fused run as arrays: each query's documents (docno-descending) and their scores.
    Read as a mapping it is the run ``{qid: {docno: score}}``, one query built at a time."""

    def __init__(self, qids, qptr, docnos, scores):
        self.qids, self.qptr, self.docnos, self.scores = list(qids), qptr, docnos, scores
        self._where = None

    def __getitem__(self, qid):
        if self._where is None:
            self._where = {q: i for i, q in enumerate(self.qids)}
        i = self._where[qid]
        a, b = self.qptr[i], self.qptr[i + 1]
        docs = np.char.decode(self.docnos[a:b], "utf-8", errors="replace").tolist()
        return dict(zip(docs, self.scores[a:b].tolist()))

    def __iter__(self):
        return iter(self.qids)

    def __len__(self):
        return len(self.qids)

    def _text(self, rows=None):
        """The docnos (of ``rows``, or all) as str (an object array; bytes.decode per
        docno, which costs less than np.char.decode)."""
        docnos = self.docnos if rows is None else self.docnos[rows]
        out = np.empty(len(docnos), dtype=object)
        out[:] = [d.decode("utf-8", "replace") for d in docnos.tolist()]
        return out

    def to_dict(self):
        """``{qid: {docno: score}}``."""
        docs, s = self._text().tolist(), self.scores.tolist()
        return {q: dict(zip(docs[a:b], s[a:b]))
                for q, a, b in zip(self.qids, self.qptr[:-1], self.qptr[1:])}

    def ranking(self):
        """(query index, row) of every document, each query ranked as trec_eval ranks
        (score descending, then docno descending: the rows' order)."""
        q = np.repeat(np.arange(len(self.qids)), np.diff(self.qptr))
        order = np.lexsort((np.arange(len(q)), -self.scores, q))
        return q[order], order

    def lines(self, tag):
        """TREC run lines, each query ranked (scores written exactly: ``repr``)."""
        return [line for block in self.blocks(tag) for line in block]

    def blocks(self, tag, size=1 << 16):
        """:meth:`lines` in lists of ``size`` lines (or fewer, the last): a file is written
        one block at a time, without every line in memory at once."""
        q, order = self.ranking()
        qids = np.asarray(self.qids, dtype=object)
        for a in range(0, len(order), size):
            rows, qb = order[a:a + size], q[a:a + size]
            rank = (np.arange(a, a + len(rows)) - self.qptr[qb] + 1).tolist()
            yield [f"{x} Q0 {d} {r} {v!r} {tag}\n" for x, d, r, v in zip(
                qids[qb].tolist(), self._text(rows).tolist(), rank,
                self.scores[rows].tolist())]

    def to_dataframe(self):
        """A pandas DataFrame ``qid, docno, score, rank`` (PyTerrier's layout; rank from
        0)."""
        from .._optional import need

        pd = need("pandas", "to_dataframe")
        q, order = self.ranking()
        return pd.DataFrame({"qid": np.asarray(self.qids, dtype=object)[q],
                             "docno": self._text()[order], "score": self.scores[order],
                             "rank": np.arange(len(order)) - self.qptr[q]})


def write_fused_run(path, fused, tag):
    """Write ``fused`` (a :class:`FusedRun`) as a TREC run file, atomically."""
    write_text_atomic(path, ("".join(b) for b in fused.blocks(tag)))
    return path
