"""evaluate_letor against a per-query port of the rules of LETOR's Eval-Score-3.0.pl and
Eval-Score-4.0.pl."""

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dfrank
from dfrank.metrics.letor_tool import MAX_CUTOFF, evaluate_letor

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
FOLD1_TEST = {"3.0": os.path.join(DATA, "ohsumed-letor3", "QueryLevelNorm", "Fold1", "test.txt.gz"),
              "4.0": os.path.join(DATA, "mq2008-letor4", "Fold1", "test.txt.gz")}


def _script_query(scores, labels, version):
    """One query as the script scores it: lists of P@k and NDCG@k for the k the script
    defines (3.0: up to min(16, m); 4.0: P@k up to 10, the ranks past the list's end
    irrelevant, NDCG@k up to min(10, m)), and AP."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])   # stable: data order
    rates = [labels[i] for i in order]
    gain = {0: 0, 1: 1, 2: 3}
    cut = MAX_CUTOFF[version]
    top = min(cut, len(rates))

    def dcg(r):
        out = [gain[r[0]]]
        for i in range(1, top):
            step = gain[r[i]] if i < 2 else gain[r[i]] * math.log(2.0) / math.log(i + 1.0)
            out.append(out[-1] + step)
        return out

    got, best = dcg(rates), dcg(sorted(rates, key=lambda v: -gain[v]))
    ndcg = [got[i] / best[i] if best[i] != 0 else 0.0 for i in range(top)]
    hits, ap = 0, 0.0
    for i, label in enumerate(rates):
        if label >= 1:
            hits += 1
            ap += hits / (i + 1)
    padded = rates + [0] * (cut - len(rates)) if version == "4.0" else rates
    prec = [sum(1 for v in padded[:i + 1] if v >= 1) / (i + 1)
            for i in range(min(cut, len(padded)))]
    return prec, ndcg, (ap / hits if hits else 0.0)


def _script(scores, data, version="3.0"):
    """The script's means: a query adds only the values it defines; all queries divide."""
    cut = MAX_CUTOFF[version]
    p, n, ap = np.zeros(cut), np.zeros(cut), 0.0
    for q in range(data.n_queries):
        rows = data.query_rows(q)
        prec, ndcg, a = _script_query(list(scores[rows]), [int(v) for v in data.y[rows]],
                                      version)
        p[:len(prec)] += prec
        n[:len(ndcg)] += ndcg
        ap += a
    nq = data.n_queries
    return {**{f"p@{k}": p[k - 1] / nq for k in range(1, cut + 1)},
            **{f"ndcg@{k}": n[k - 1] / nq for k in range(1, cut + 1)}, "map": ap / nq}


@st.composite
def letor_queries(draw):
    """Queries of 1 to 20 documents, labels 0-2, few score values (ties), some queries
    without a relevant document and shorter than the cut-offs."""
    nq = draw(st.integers(1, 5))
    sizes = [draw(st.integers(1, 20)) for _ in range(nq)]
    n = sum(sizes)
    labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    data = dfrank.RankingData.from_arrays(np.zeros((n, 1)), labels, np.repeat(np.arange(nq),
                                                                              sizes))
    return data, np.asarray(scores, dtype=float)


@pytest.mark.parametrize("version", ["3.0", "4.0"])
@settings(max_examples=200, deadline=None)
@given(case=letor_queries())
def test_matches_the_scripts_rules(case, version):
    data, scores = case
    got = evaluate_letor(scores, data, version=version)
    want = _script(scores, data, version)
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] == pytest.approx(want[name], abs=1e-12), name


def test_hand_computed_query():
    # ranked labels 1, 2, 0, 2 (the tie at 0.5 keeps data order: label 0 before label 2)
    data = dfrank.RankingData.from_arrays(np.zeros((4, 1)), [0, 2, 2, 1], [7, 7, 7, 7])
    out = evaluate_letor([0.5, 0.5, 0.9, 1.0], data, per_query=True)
    # DCG@3 = 1 + 3 + 0 / log2(3); ideal 3 + 3 + 1 / log2(3)
    assert out["ndcg@3"][0] == pytest.approx(4 / (6 + 1 / math.log2(3)))
    # DCG@4 adds 3 / log2(4); ideal adds 0
    assert out["ndcg@4"][0] == pytest.approx((4 + 1.5) / (6 + 1 / math.log2(3)))
    assert out["ndcg@5"][0] == 0.0              # 4 documents: undefined, counted 0
    assert out["p@2"][0] == 1.0 and out["p@3"][0] == pytest.approx(2 / 3)
    assert out["p@5"][0] == 0.0
    assert out["map"][0] == pytest.approx((1 + 1 + 3 / 4) / 3)
    four = evaluate_letor([0.5, 0.5, 0.9, 1.0], data, version="4.0", per_query=True)
    assert four["p@5"][0] == pytest.approx(3 / 5)  # 4.0: the missing rank is irrelevant
    assert four["ndcg@5"][0] == 0.0 and four["ndcg@4"][0] == out["ndcg@4"][0]
    assert "p@11" in out and "p@11" not in four


def test_rank_two_is_not_discounted_unlike_dfranks_ndcg():
    data = dfrank.RankingData.from_arrays(np.zeros((3, 1)), [0, 1, 2], [1, 1, 1])
    scores = np.array([3.0, 2.0, 1.0])                   # worst first, no ties
    letor = evaluate_letor(scores, data)["ndcg@3"]
    assert letor == pytest.approx((0 + 1 + 3 / math.log2(3)) / (3 + 1 + 0))
    assert letor != pytest.approx(dfrank.evaluate(scores, data, "ndcg@3"))


def test_bad_input_is_named():
    data = dfrank.RankingData.from_arrays(np.zeros((2, 1)), [0, 3], [5, 5])
    with pytest.raises(ValueError, match=r"label 3 of document 1 \(query 5\)"):
        evaluate_letor([1.0, 2.0], data)
    ok = dfrank.RankingData.from_arrays(np.zeros((2, 1)), [0, 1], [5, 5])
    with pytest.raises(ValueError, match="finite"):
        evaluate_letor([1.0, np.nan], ok)
    with pytest.raises(ValueError, match="one per document"):
        evaluate_letor([1.0], ok)
    with pytest.raises(TypeError, match="RankingData"):
        evaluate_letor([1.0, 2.0], None)
    with pytest.raises(ValueError, match="version must be one of"):
        evaluate_letor([1.0, 2.0], ok, version="5.0")


@pytest.mark.parametrize("version", ["3.0", "4.0"])
def test_letor_fold1_test_matches_the_scripts_rules(version):
    path = FOLD1_TEST[version]             # OHSUMED (LETOR 3.0), MQ2008 (4.0, short queries)
    if not os.path.exists(path):
        pytest.skip("../shared/data absent")
    data = dfrank.load_svmlight(path)
    scores = np.round(data.X[:, 10] * 4) / 4        # a coarse feature: many ties
    got, want = evaluate_letor(scores, data, version=version), _script(scores, data, version)
    for name in ("ndcg@1", "ndcg@10", "p@1", "p@10", "map"):
        assert got[name] == pytest.approx(want[name], abs=1e-12), name
