"""Runs and judgments in the forms people pass around, read into one form.

A run is ``{qid: {docno: score}}`` and qrels are ``{qid: {docno: relevance}}`` once read.
Each reader takes a TREC file path (plain or .gz), a dict of that shape, a pandas DataFrame
(PyTerrier's columns ``qid, docno, score`` / ``qid, docno, label``), a ranx ``Run`` or
``Qrels``, and (for qrels) an iterable of ir_datasets qrels records (``query_id, doc_id,
relevance``). pandas, ranx and ir_datasets are never imported here: an object of theirs is
recognised by what it has. Every problem is a :class:`~dfrank.DataFormatError` naming
where it is: a file and its lines, or the dict's query and document.
"""

import math
import os

import numpy as np

from ..data.ranking import RankingData
from ..errors import DataFormatError
from .trec import Qrels, Run

__all__ = ["read_run", "read_qrels", "run_to_trec_lines", "run_to_dataframe", "as_qrels",
           "as_run", "run_as_data", "ranked", "DocnoDesc"]


def _is_path(x):
    return isinstance(x, (str, bytes, os.PathLike))


def _from_trec_file(cls, path, what):
    return trec_mapping(cls(path), what)


def trec_mapping(f, what):
    """``{qid: {docno: value}}`` of a read TREC file (a Qrels or a Run)."""
    path = f.path
    qids = [f.text(int(r), f.q_span) for r in range(f.n)]
    docs = [f.text(int(r), f.d_span) for r in range(f.n)]
    out, where = {}, {}
    for r, (q, d) in enumerate(zip(qids, docs)):
        per = out.setdefault(q, {})
        if d in per:
            raise DataFormatError(
                f"{what} holds docno {d!r} twice for query {q!r} (lines "
                f"{int(f.line_no[where[q, d]])} and {int(f.line_no[r])})", path=path,
                line=int(f.line_no[r]))
        where[q, d] = r
        per[d] = f.value[r].item()
    return out


def _check_mapping(obj, what, value_kind):
    """A dict ``{qid: {docno: value}}`` checked and copied (str keys, finite values)."""
    out = {}
    for q, docs in obj.items():
        if not hasattr(docs, "items"):
            raise DataFormatError(f"{what}: query {q!r} maps to {type(docs).__name__}, "
                                  f"expected a dict {{docno: {value_kind}}}")
        per = {}
        for d, v in docs.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise DataFormatError(f"{what}: query {q!r}, docno {d!r}: the {value_kind} "
                                      f"{v!r} is not a number")
            if value_kind == "score" and not math.isfinite(v):
                raise DataFormatError(f"{what}: query {q!r}, docno {d!r}: the score is {v}")
            if value_kind == "relevance" and (not math.isfinite(v) or int(v) != v):
                raise DataFormatError(f"{what}: query {q!r}, docno {d!r}: the relevance "
                                      f"{v!r} is not an integer")
            per[str(d)] = float(v) if value_kind == "score" else int(v)
        out[str(q)] = per
    return out


def _from_dataframe(df, what, value_col, value_kind):
    cols = [str(c) for c in df.columns]
    need = ["qid", "docno", value_col]
    missing = [c for c in need if c not in cols]
    if missing:
        raise DataFormatError(f"{what}: the DataFrame has no column {missing[0]!r} (it "
                              f"needs {', '.join(need)}; it has {', '.join(cols)})")
    out = {}
    for i, (q, d, v) in enumerate(zip(df["qid"].tolist(), df["docno"].tolist(),
                                      df[value_col].tolist())):
        per = out.setdefault(str(q), {})
        if str(d) in per:
            raise DataFormatError(f"{what}: docno {d!r} appears twice for query {q!r} "
                                  f"(DataFrame row {i})")
        per[str(d)] = v
    return _check_mapping(out, what, value_kind)


def _dataframe_like(x):
    return hasattr(x, "columns") and hasattr(x, "__getitem__") and hasattr(x, "iterrows")


def read_run(run, name="run"):
    """``{qid: {docno: score}}`` from a TREC run file, a dict, a DataFrame (``qid, docno,
    score``) or a ranx Run. An empty run, a docno twice for one query, a score that is not
    a finite number are errors naming where."""
    if _is_path(run):
        out = _from_trec_file(Run, run, f"run {name!r}")
    elif _dataframe_like(run):
        out = _from_dataframe(run, f"run {name!r}", "score", "score")
    elif hasattr(run, "to_dict") and type(run).__module__.startswith("ranx"):
        out = _check_mapping(run.to_dict(), f"run {name!r}", "score")
    elif hasattr(run, "items"):
        out = _check_mapping(run, f"run {name!r}", "score")
    else:
        raise TypeError(f"run {name!r}: expected a TREC file path, a dict {{qid: {{docno: "
                        f"score}}}}, a pandas DataFrame or a ranx Run; got "
                        f"{type(run).__name__}")
    if not any(out.values()):
        raise DataFormatError(f"run {name!r} holds no document")
    return out


def read_qrels(qrels):
    """``{qid: {docno: relevance}}`` from a TREC qrels file, a dict, a DataFrame (``qid,
    docno, label``), a ranx Qrels or an iterable of ir_datasets qrels records."""
    if _is_path(qrels):
        return _from_trec_file(Qrels, qrels, "qrels")
    if _dataframe_like(qrels):
        col = "label" if "label" in [str(c) for c in qrels.columns] else "relevance"
        return _from_dataframe(qrels, "qrels", col, "relevance")
    if hasattr(qrels, "to_dict") and type(qrels).__module__.startswith("ranx"):
        return _check_mapping(qrels.to_dict(), "qrels", "relevance")
    if hasattr(qrels, "items"):
        return _check_mapping(qrels, "qrels", "relevance")
    if hasattr(qrels, "__iter__"):
        out = {}
        for i, rec in enumerate(qrels):
            try:
                q, d, r = rec.query_id, rec.doc_id, rec.relevance
            except AttributeError:
                raise TypeError(f"qrels record {i} has no query_id, doc_id and relevance "
                                f"(ir_datasets' qrels records do): {rec!r}") from None
            per = out.setdefault(str(q), {})
            if str(d) in per:
                raise DataFormatError(f"qrels: docno {d!r} judged twice for query {q!r} "
                                      f"(records up to {i})")
            per[str(d)] = r
        return _check_mapping(out, "qrels", "relevance")
    raise TypeError(f"qrels: expected a TREC file path, a dict, a pandas DataFrame, a ranx "
                    f"Qrels or ir_datasets qrels records; got {type(qrels).__name__}")


def ranked(docs):
    """A query's (docno, score) pairs best first, ties by docno descending (trec_eval)."""
    return sorted(docs.items(), key=lambda kv: (-kv[1], DocnoDesc(kv[0])))


class DocnoDesc(str):
    """A docno that sorts descending (trec_eval's order among equal scores)."""

    def __lt__(self, other):
        return str.__gt__(self, other)


def run_as_data(run, qrels, qids):
    """The :class:`~dfrank.RankingData` of ``run`` (``{qid: {docno: score}}``) judged by
    ``qrels``, laid out so that dfrank's metrics with ``ties="stable"`` and linear gains
    give trec_eval's values: one feature (the score); each query's rows in docno-descending
    order (trec_eval's order among equal scores); labels the judgments (negative ones as
    0); judged documents the run lacks kept in ``unranked`` (they count in R and the ideal
    DCG). A query of ``qids`` that the run lacks gets one unjudged row, so it scores 0 (as
    ``trec_eval -c``)."""
    X, y, sizes, docids, uptr, ulab = [], [], [], [], [0], []
    for q in qids:
        docs = run.get(q, {})
        judged = qrels.get(q, {})
        cands = sorted(docs, key=DocnoDesc) or ["\0"]
        X.extend(docs.get(d, 0.0) for d in cands)
        y.extend(max(judged.get(d, 0), 0) for d in cands)
        sizes.append(len(cands))
        docids.extend(cands)
        extra = [max(r, 0) for d, r in judged.items() if d not in docs]
        ulab.extend(extra)
        uptr.append(uptr[-1] + len(extra))
    return RankingData(np.asarray(X, dtype=np.float64)[:, None],
                       np.asarray(y, dtype=np.float64), np.concatenate([[0], np.cumsum(sizes)]),
                       np.asarray(qids, dtype=object), docids=np.asarray(docids, dtype=object),
                       unranked=(np.asarray(uptr), np.asarray(ulab, dtype=np.float64)))


def run_to_trec_lines(run, tag="dfrank"):
    """TREC run lines of ``{qid: {docno: score}}``, each query ranked as trec_eval ranks
    it (scores written exactly: ``repr`` of the float)."""
    lines = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(ranked(docs), 1):
            lines.append(f"{q} Q0 {d} {rank} {float(s)!r} {tag}\n")
    return lines


def run_to_dataframe(run):
    """A pandas DataFrame ``qid, docno, score, rank`` (PyTerrier's layout; rank from 0)."""
    from .._optional import need

    pd = need("pandas", "to_dataframe")
    rows = [(q, d, s, r) for q, docs in run.items()
            for r, (d, s) in enumerate(ranked(docs))]
    return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])


def _trec_text(mapping, what, line):
    """The TREC lines of a checked mapping, refusing ids a TREC line cannot hold."""
    out = []
    for q, docs in mapping.items():
        for d, v in docs.items():
            for name, x in (("qid", q), ("docno", d)):
                if not x or any(c.isspace() for c in x):
                    raise DataFormatError(f"{what}: the {name} {x!r} is empty or holds "
                                          "white space, which TREC files cannot hold")
            out.append(line(q, d, v))
    return "".join(out).encode("utf-8", "surrogateescape")


def as_qrels(qrels):
    """A :class:`~dfrank.io.trec.Qrels` from any form :func:`read_qrels` takes (a Qrels
    or a path is read as it is)."""
    if isinstance(qrels, Qrels):
        return qrels
    if _is_path(qrels):
        return Qrels(qrels)
    text = _trec_text(read_qrels(qrels), "qrels", lambda q, d, r: f"{q} 0 {d} {r}\n")
    return Qrels(f"<qrels {type(qrels).__name__}>", text=text)


def as_run(run, name="run"):
    """A :class:`~dfrank.io.trec.Run` from any form :func:`read_run` takes (scores written
    exactly, ``repr`` of each float)."""
    if isinstance(run, Run):
        return run
    if _is_path(run):
        return Run(run)
    text = _trec_text(read_run(run, name), f"run {name!r}",
                      lambda q, d, s: f"{q} Q0 {d} 0 {s!r} {name}\n")
    return Run(f"<run {type(run).__name__}>", text=text)
