"""What the PyTerrier stages share: result and topic frames checked and made, the
judgments of the topics run."""

import numpy as np

__all__ = ["empty_result", "need_columns", "with_ranks", "topics_qrels"]


def empty_result(inp, drop=()):
    """The empty result frame of an empty input (its columns' types kept, as PyTerrier's
    inspection of a pipeline needs)."""
    import pandas as pd

    kinds = {"docno": object, "score": np.float64, "rank": np.int64}
    return pd.DataFrame({c: (inp[c] if c in inp.columns else pd.Series(dtype=kinds[c]))
                         for c in with_ranks([c for c in inp.columns if c not in drop])})


def need_columns(frame, columns, what):
    """Refuse a frame that lacks one of ``columns``, naming the frame and what it has."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: no {' or '.join(map(repr, missing))} column (the "
                         f"columns: {', '.join(map(str, frame.columns)) or 'none'})")


def with_ranks(columns, base=("qid", "docno", "score", "rank")):
    """The columns of a result frame made from ``columns`` (PyTerrier's inspection)."""
    return list(base) + [c for c in columns if c not in base]


# the collections indexed in this process: a digest of their content -> their Index


def topics_qrels(qrels, topics, who):
    """The judgments of ``topics``' queries only, with a note when the qrels judge others
    (they would count as queries the pipeline never ran, scoring 0)."""
    import warnings

    import pandas as pd

    if not isinstance(qrels, pd.DataFrame):
        return qrels
    need_columns(qrels, ("qid",), "the qrels")
    given = set(topics["qid"].astype(str))
    keep = qrels["qid"].astype(str).isin(given)
    others = qrels.loc[~keep, "qid"].astype(str).nunique()
    if others:
        also = (" (pt.GridSearch counts them as 0: the result's qrels_value is its mean)"
                if who == "tune" else "")
        warnings.warn(f"{who} scores the {len(given)} topics given; the qrels' {others} "
                      f"other topics are left out{also}", UserWarning, stacklevel=3)
    return qrels[keep]
