"""Slow, obviously-correct pure-Python references for the metric kernels.

Every function here works on plain lists and follows the textbook definition; the tests
compare the numba kernels against them on generated inputs.
"""

import itertools
import math


def rank(scores, labels, ties):
    """Row positions in rank order (best first) under a deterministic tie policy."""
    idx = range(len(scores))
    if ties == "pessimistic":
        return sorted(idx, key=lambda i: (-scores[i], labels[i], i))
    if ties == "optimistic":
        return sorted(idx, key=lambda i: (-scores[i], -labels[i], i))
    return sorted(idx, key=lambda i: (-scores[i], i))


def gain(l, kind="exp"):
    return 2.0 ** l - 1.0 if kind == "exp" else float(l)


def dcg(ranked, k=0, kind="exp"):
    n = len(ranked) if k <= 0 else min(k, len(ranked))
    return sum(gain(ranked[r], kind) / math.log2(r + 2) for r in range(n))


def ndcg(ranked, k=0, kind="exp"):
    ideal = dcg(sorted(ranked, reverse=True), k, kind)
    return dcg(ranked, k, kind) / ideal


def precision(ranked, k, thr=1):
    return sum(1 for l in ranked[:k] if l >= thr) / k


def recall(ranked, k, thr=1):
    return sum(1 for l in ranked[:k] if l >= thr) / sum(1 for l in ranked if l >= thr)


def average_precision(ranked, k=0, thr=1):
    n_rel = sum(1 for l in ranked if l >= thr)
    n = len(ranked) if k <= 0 else min(k, len(ranked))
    hits, total = 0, 0.0
    for r in range(n):
        if ranked[r] >= thr:
            hits += 1
            total += hits / (r + 1)
    return total / n_rel


def reciprocal_rank(ranked, k=0, thr=1):
    n = len(ranked) if k <= 0 else min(k, len(ranked))
    for r in range(n):
        if ranked[r] >= thr:
            return 1.0 / (r + 1)
    return 0.0


def r_precision(ranked, thr=1):
    n_rel = sum(1 for l in ranked if l >= thr)
    return sum(1 for l in ranked[:n_rel] if l >= thr) / n_rel


def err(ranked, k=0, gmax=4, kind="exp"):
    n = len(ranked) if k <= 0 else min(k, len(ranked))
    norm = 2.0 ** gmax if kind == "exp" else (gmax or 1.0)
    total, stay = 0.0, 1.0
    for r in range(n):
        p = gain(ranked[r], kind) / norm
        total += stay * p / (r + 1)
        stay *= 1 - p
    return total


def kendall_tau(ranked):
    """(concordant - discordant) / pairs over pairs with different labels."""
    c = d = 0
    for i in range(len(ranked)):
        for j in range(i + 1, len(ranked)):
            if ranked[i] > ranked[j]:
                c += 1
            elif ranked[i] < ranked[j]:
                d += 1
    return (c - d) / (c + d)


def tied_orderings(scores):
    """Every ranking (list of row positions) that orders scores descending, ties any way."""
    values = sorted(set(scores), reverse=True)
    groups = [[i for i in range(len(scores)) if scores[i] == v] for v in values]
    for combo in itertools.product(*[itertools.permutations(g) for g in groups]):
        yield [i for g in combo for i in g]


def is_empty(family, labels, thr=1):
    if family in ("ndcg", "dcg", "err"):
        return max(labels) <= 0
    if family == "kendall_tau":
        return len(set(labels)) < 2
    return sum(1 for l in labels if l >= thr) == 0


def metric_of_ranked(family, ranked, k, gmax, kind="exp", thr=1):
    if family == "ndcg":
        return ndcg(ranked, k, kind)
    if family == "dcg":
        return dcg(ranked, k, kind)
    if family == "map":
        return average_precision(ranked, k, thr)
    if family == "p":
        return precision(ranked, k, thr)
    if family == "recall":
        return recall(ranked, k, thr)
    if family == "rr":
        return reciprocal_rank(ranked, k, thr)
    if family == "rprec":
        return r_precision(ranked, thr)
    if family == "err":
        return err(ranked, k, gmax, kind)
    if family == "kendall_tau":
        return kendall_tau(ranked)
    raise ValueError(family)


def query_metric(family, scores, labels, k, ties, gmax, kind="exp", thr=1, empty=0.0):
    """One query's metric under a tie policy; ``expected`` enumerates all tie orderings."""
    if is_empty(family, labels, thr):
        return empty
    if ties == "expected":
        vals = [metric_of_ranked(family, [labels[i] for i in order], k, gmax, kind, thr)
                for order in tied_orderings(scores)]
        return sum(vals) / len(vals)
    order = rank(scores, labels, ties)
    return metric_of_ranked(family, [labels[i] for i in order], k, gmax, kind, thr)
