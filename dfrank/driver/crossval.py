"""Query-level cross-validation: the one way ``fuse`` and ``tune`` hold queries out.

The queries are dealt into ``folds`` folds by a seeded permutation (query ``perm[i]`` goes
to fold ``i mod folds``); for each fold, what is learned or chosen on the other folds'
queries scores the fold's own queries. The value reported is the mean of those held-out
values over all queries: every query scored by something that never saw it. A
:class:`CrossValidation` is that block of a result (``result.cv``).
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["CrossValidation", "check_folds", "fold_of", "cross_validate"]


@dataclass
class CrossValidation:
    """The held-out block of a result.

    Attributes
    ----------
    folds : int
        How many folds the queries were dealt into.
    value : float
        The mean held-out value over the queries.
    per_query : dict
        qid -> the query's value under what its fold's other folds chose.
    per_fold : list of dict
        Per fold: ``held_out`` (its qids), ``train_value`` and ``held_out_value`` (the
        mean over the other folds' and over its own queries), and what was chosen on the
        other folds (``weights`` for a fusion, ``params`` for a tune).
    """
    folds: int
    value: float
    per_query: dict = field(repr=False)
    per_fold: list = field(repr=False)

    def to_dict(self):
        return {"folds": self.folds, "value": self.value, "per_query": self.per_query,
                "per_fold": self.per_fold}

    @classmethod
    def from_dict(cls, d):
        return cls(folds=int(d["folds"]), value=float(d["value"]),
                   per_query=dict(d.get("per_query") or {}), per_fold=list(d["per_fold"]))


def check_folds(folds, n_queries):
    """``folds`` as an int, or a ValueError saying why it cannot deal ``n_queries``."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    if folds > n_queries:
        raise ValueError(f"{folds} folds need at least {folds} queries; there are "
                         f"{n_queries}")
    return int(folds)


def fold_of(n_queries, folds, rng):
    """Each query's fold: ``rng``'s permutation dealt round-robin (sizes differ by <= 1)."""
    out = np.empty(n_queries, np.int64)
    out[rng.permutation(n_queries)] = np.arange(n_queries) % folds
    return out


def cross_validate(qids, folds, rng, fold_fn, n_extra=0):
    """Run ``fold_fn(train, test)`` on each fold (index arrays into ``qids``); it returns
    ``(held, train_value, chosen)``: the held-out values of the ``test`` queries, the
    mean over ``train`` of what it chose, and a dict naming it. ``n_extra`` queries that
    count as 0 in every mean (judged queries no run retrieved, under trec_eval -c) join
    the overall value's denominator."""
    n = len(qids)
    folds = check_folds(folds, n)
    where = fold_of(n, folds, rng)
    held = np.empty(n)
    per_fold = []
    for f in range(folds):
        train, test = np.flatnonzero(where != f), np.flatnonzero(where == f)
        values, train_value, chosen = fold_fn(train, test)
        held[test] = values
        per_fold.append({"held_out": [qids[i] for i in test], **chosen,
                         "train_value": float(train_value),
                         "held_out_value": float(np.mean(values))})
    return CrossValidation(folds=folds, value=float(np.sum(held) / (n + n_extra)),
                           per_query=dict(zip(qids, map(float, held))), per_fold=per_fold)
