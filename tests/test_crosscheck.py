"""dfrank's metrics against trec_eval (through pytrec_eval) on tie-free generated runs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dfrank

pytrec_eval = pytest.importorskip("pytrec_eval")

PAIRS = [  # dfrank name, options, trec_eval measure, result key
    ("ndcg@5", {"gain": "linear"}, "ndcg_cut.5", "ndcg_cut_5"),
    ("ndcg", {"gain": "linear"}, "ndcg", "ndcg"),
    ("map", {}, "map", "map"),
    ("map@5", {}, "map_cut.5", "map_cut_5"),
    ("p@5", {}, "P.5", "P_5"),
    ("recall@5", {}, "recall.5", "recall_5"),
    ("mrr", {}, "recip_rank", "recip_rank"),
    ("rprec", {}, "Rprec", "Rprec"),
]


@settings(max_examples=50, deadline=None)
@given(sizes=st.lists(st.integers(1, 20), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1))
def test_agrees_with_trec_eval(sizes, seed):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    y = rng.integers(0, 4, n).astype(float)
    y[rng.random(n) < 0.5] = 0
    s = rng.permutation(n).astype(float)  # distinct scores: no tie rule involved
    qid = np.repeat(np.arange(len(sizes)), sizes)
    data = dfrank.RankingData.from_arrays(np.zeros((n, 1)), y, qid)
    qrels = {str(q): {f"d{i}": int(y[i]) for i in range(n) if qid[i] == q}
             for q in range(len(sizes))}
    run = {str(q): {f"d{i}": float(s[i]) for i in range(n) if qid[i] == q}
           for q in range(len(sizes))}
    for name, opts, measure, key in PAIRS:
        per = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
        want = [per[str(q)][key] for q in range(len(sizes))]
        got = dfrank.evaluate(s, data, name, per_query=True, **opts)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
