"""Learned fusion: the fused run's metric is trec_eval's, the weights are a point of the
simplex, folds keep held-out queries out of their own weights, every input form gives the
same fusion, exports reproduce it (ranx) or say why not, bad inputs are clear errors."""

import json

import numpy as np
import pytest

import dfrank
from dfrank import DataFormatError, cli
from dfrank.fusion import NORMS, fuse, normalize
from dfrank.io.forms import run_to_trec_lines
from tests.inputs import QRELS, RUN_A, RUN_B, big_runs, make_runs, run, write_file

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture(scope="module")
def case():
    return make_runs()


TREC = {"map": "map", "nDCG@10": "ndcg_cut_10", "p@5": "P_5", "mrr": "recip_rank",
        "recall@20": "recall_20", "rprec": "Rprec", "nDCG": "ndcg"}


@pytest.mark.parametrize("metric", list(TREC))
def test_fused_value_is_trec_evals(case, metric):
    qrels, runs = case
    res = fuse(qrels, runs, metric, restarts=2)
    per = pytrec_eval.RelevanceEvaluator(qrels, {TREC[metric]}).evaluate(res.run())
    for q, v in res.per_query.items():
        assert v == pytest.approx(per[q][TREC[metric]], abs=1e-12), q
    assert res.value == pytest.approx(np.mean([per[q][TREC[metric]] for q in per]),
                                      abs=1e-12)
    w = np.array(list(res.weights.values()))
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-12)
    # the learned fusion is at least as good as the equal weights it starts from
    assert res.value >= res.baselines["CombSUM (equal weights)"]["value"] - 1e-12
    for name in runs:
        single = pytrec_eval.RelevanceEvaluator(qrels, {TREC[metric]}).evaluate(runs[name])
        assert res.baselines[f"run {name}"]["value"] == pytest.approx(
            np.mean([single[q][TREC[metric]] for q in res.per_query]), abs=1e-12)


@pytest.mark.parametrize("norm", NORMS)
def test_every_normalization_and_the_ranx_export(norm):
    """ranx, given the exported arguments, fuses to the same scores. (Borda and rank read
    positions: with tied scores dfrank orders by docno, as trec_eval, and ranx by its
    input order; these runs have no ties.)"""
    qrels, runs = make_runs(decimals=12)
    res = fuse(qrels, runs, "map", norm=norm, restarts=1)
    assert sum(res.weights.values()) == pytest.approx(1.0)
    ranx = pytest.importorskip("ranx")
    try:
        ex = res.export("ranx")
    except ValueError as e:
        assert norm in ("rank", "l2", "none") and "no normalization" in str(e)
        return
    fused = ranx.fuse([ranx.Run(runs[n], name=n) for n in ex["runs"]], norm=ex["norm"],
                      method="wsum", params=ex["params"]).to_dict()
    ours = res.run()
    for q in ours:
        assert set(fused[q]) == set(ours[q])
        for d, s in ours[q].items():
            assert fused[q][d] == pytest.approx(s, abs=1e-12)


def test_normalizations_by_their_formulas():
    s = np.array([3.0, 1.0, 1.0, -1.0])
    np.testing.assert_allclose(normalize(s, "minmax"), [1, 0.5, 0.5, 0])
    np.testing.assert_allclose(normalize(s, "max"), s / 3)
    np.testing.assert_allclose(normalize(s, "sum"), (s + 1) / 8)
    np.testing.assert_allclose(normalize(s, "zscore"), (s - 1) / np.sqrt(2))
    np.testing.assert_allclose(normalize(s, "rank"), [1, 1 / 2, 1 / 3, 1 / 4])
    np.testing.assert_allclose(normalize(s, "borda", 8), [1, 7 / 8, 6 / 8, 5 / 8])
    np.testing.assert_allclose(normalize(s, "l2"), s / np.sqrt(12))
    np.testing.assert_allclose(normalize([2.0, 2.0], "minmax"), [0, 0])
    with pytest.raises(ValueError, match="unknown normalization"):
        normalize(s, "softmax")


def test_folds_never_let_a_held_out_query_choose_its_own_weights(case):
    qrels, runs = case
    res = fuse(qrels, runs, "map", folds=3, restarts=2)
    assert res.folds == 3 and len(res.fold_weights) == 3
    assert res.cv_value <= res.value + 0.05
    # rewrite the judgments of fold 0's held-out queries: fold 0's weights cannot change
    held = set(res.fold_weights[0]["held_out"])
    rng = np.random.default_rng(9)
    other = {q: ({d: int(rng.integers(0, 3)) for d in js} if q in held else js)
             for q, js in qrels.items()}
    res2 = fuse(other, runs, "map", folds=3, restarts=2)
    assert res2.fold_weights[0] == res.fold_weights[0]
    assert res2.fold_weights[1] != res.fold_weights[1] or \
        res2.fold_weights[2] != res.fold_weights[2]


def test_every_input_form_gives_the_same_fusion(case, tmp_path):
    qrels, runs = case
    want = fuse(qrels, runs, "ndcg@10", restarts=1)
    qp = tmp_path / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, js in qrels.items()
                          for d, r in js.items()))
    paths = {}
    for n, r in runs.items():
        paths[n] = tmp_path / f"{n}.run"
        paths[n].write_text("".join(run_to_trec_lines(r, n)))
    forms = [(str(qp), {n: str(p) for n, p in paths.items()})]
    pd = pytest.importorskip("pandas")
    df = {n: pd.DataFrame([(q, d, s) for q, ds in r.items() for d, s in ds.items()],
                          columns=["qid", "docno", "score"]) for n, r in runs.items()}
    qdf = pd.DataFrame([(q, d, r) for q, js in qrels.items() for d, r in js.items()],
                       columns=["qid", "docno", "label"])
    forms.append((qdf, df))
    ranx = pytest.importorskip("ranx")
    forms.append((ranx.Qrels(qrels), {n: ranx.Run(r, name=n) for n, r in runs.items()}))
    for q, r in forms:
        got = fuse(q, r, "ndcg@10", restarts=1)
        assert got.weights == pytest.approx(want.weights, abs=1e-12)
        assert got.value == pytest.approx(want.value, abs=1e-12)
    run = want.run()
    assert dict(want.fused) == run and len(want.fused) == len(run)
    q = next(iter(run))
    assert want.fused[q] == run[q] and list(want.fused) == list(run)


def test_signed_weights_on_the_augmented_simplex(case):
    qrels, runs = case
    res = fuse(qrels, runs, "map", signed=True, strategy="ca", restarts=2)
    assert res.signed and sum(res.weights.values()) == pytest.approx(1.0)
    per = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(res.run())
    assert res.value == pytest.approx(np.mean([per[q]["map"] for q in per]), abs=1e-12)
    with pytest.raises(ValueError, match="signed=True"):
        fuse(qrels, runs, "map", strategy="pso")


def test_an_alias_of_the_default_search_keeps_its_presets(case, monkeypatch):
    # "coordinate_ascent" and the class are "ca": fuse's 5 restarts, tol and rule apply
    import dfrank.fusion as F
    from dfrank.registry import get_strategy as get

    CoordinateAscent = get("coordinate_ascent")
    seen = []

    def spy(*args, **kwargs):   # the options of the strategy fuse resolved, once
        params = kwargs["strategy"].get_params()
        seen.append({k: params.get(k) for k in F.FUSE_OPTIONS})
        return maximize(*args, **kwargs)

    from dfrank.fusion import learn

    maximize = learn.maximize
    monkeypatch.setattr(learn, "maximize", spy)
    qrels, runs = case
    default = fuse(qrels, runs, "map", seed=3)
    for spec in ("coordinate_ascent", CoordinateAscent):
        res = fuse(qrels, runs, "map", seed=3, strategy=spec)
        assert res.weights == default.weights and res.value == default.value
    assert seen == [F.FUSE_OPTIONS] * 3
    fuse(qrels, runs, "map", seed=3, strategy=CoordinateAscent(restarts=2))
    own = CoordinateAscent(restarts=2).get_params()   # an instance keeps its own options
    assert seen[-1] == {k: own[k] for k in F.FUSE_OPTIONS}


def test_mismatched_queries_are_counted(case):
    qrels, runs = case
    runs = {n: dict(r, extra={"d1": 1.0}) for n, r in runs.items()}   # not judged
    qrels = dict(qrels, lonely={"d1": 1, "d2": 2})                      # not retrieved
    plain = fuse(qrels, runs, "map", restarts=1)
    full = fuse(qrels, runs, "map", restarts=1, complete=True)
    assert plain.left_out == {"run_only": 1, "unretrieved": 1, "complete": False}
    assert plain.n_queries == 24 and full.n_queries == 25
    assert full.value == pytest.approx(plain.value * 24 / 25)
    assert "extra" not in plain.per_query and "lonely" not in plain.per_query
    assert "1 query of the runs has no judgments: left out" in plain.summary()
    assert "1 judged query no run retrieved: left out" in plain.summary()


def test_bad_inputs_are_clear_errors(case, tmp_path):
    qrels, runs = case
    bad = tmp_path / "dup.run"
    bad.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.4 r\nq1 Q0 d1 3 0.3 r\n")
    with pytest.raises(DataFormatError, match=r"docno 'd1' twice for query 'q1' \(lines 1 "
                                              r"and 3\)"):
        fuse(qrels, {"a": str(bad), "b": runs["r1"]}, "map")
    with pytest.raises(DataFormatError, match="score is nan"):
        fuse(qrels, {"a": {"q1": {"d1": float("nan")}}, "b": runs["r1"]}, "map")
    empty = tmp_path / "empty.run"
    empty.write_text("")
    with pytest.raises(DataFormatError, match="holds no line"):
        fuse(qrels, {"a": str(empty), "b": runs["r1"]}, "map")
    with pytest.raises(ValueError, match="at least two runs"):
        fuse(qrels, {"a": runs["r0"]}, "map")
    with pytest.raises(ValueError, match="missing"):
        fuse(qrels, runs, "map", missing="mean")


def test_exports_as_documented_and_refusals(case):
    qrels, runs = case
    res = fuse(qrels, runs, "map", restarts=1)
    w = [res.weights[n] for n in runs]
    assert res.export("opensearch")["phase_results_processors"] == [{
        "normalization-processor": {
            "normalization": {"technique": "min_max"},
            "combination": {"technique": "arithmetic_mean", "parameters": {"weights": w}}}}]
    lin = res.export("elasticsearch")["retriever"]["linear"]["retrievers"]
    assert [(r["weight"], r["normalizer"]) for r in lin] == [(x, "minmax") for x in w]
    assert json.loads(json.dumps(res.export("ranx"))) == {
        "method": "wsum", "norm": "min-max", "runs": list(runs), "params": {"weights": w}}
    for kw, target, why in [({"norm": "rank"}, "opensearch", "no normalization 'rank'"),
                            ({"missing": "min"}, "elasticsearch", "missing='min'"),
                            ({"signed": True}, "opensearch", None)]:
        r = fuse(qrels, runs, "map", restarts=1, **kw)
        if why is None:
            if min(r.weights.values()) >= 0:
                continue
            why = "must be >= 0"
        with pytest.raises(ValueError, match=why):
            r.export(target)


def test_command_line(case, tmp_path, capsys):
    qrels, runs = case
    qp = tmp_path / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, js in qrels.items()
                          for d, r in js.items()))
    paths = []
    for n, r in runs.items():
        p = tmp_path / f"{n}.run"
        p.write_text("".join(run_to_trec_lines(r, n)))
        paths.append(str(p))
    out, js = tmp_path / "fused.run", tmp_path / "fusion.json"
    assert cli.main(["fuse", "--qrels", str(qp), *paths, "--metric", "map", "--folds", "3",
                     "-o", str(out), "--json", str(js), "--export", "ranx", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "CombSUM" in text and "RRF" in text and "3-fold held out" in text
    d = json.loads(js.read_text())
    assert d["format"] == "dfrank.fusion" and set(d["weights"]) == set(runs)
    assert d["cv"]["folds"] == 3 and d["norm"] == "minmax" and d["metric"] == "map"
    ours = dfrank.evaluate_run(str(qp), str(out), ["map"])
    assert ours.all["map"] == pytest.approx(d["value"], abs=1e-12)
    assert cli.main(["fuse", "--qrels", str(qp), paths[0], paths[0]]) == 2
    assert "same name" in capsys.readouterr().err
    assert cli.main(["fuse", *paths[:2]]) == 2
    assert "the judgments are missing" in capsys.readouterr().err


def test_fuse_without_qrels_is_refused_with_the_way_to_write_it(tmp_path, capsys):
    """``dfrank fuse a.run b.run c.run`` (--qrels forgotten) once read a.run as the
    judgments, its rank column as grades, and printed a fusion with only a note: the
    positional form had its release."""
    paths = []
    for name in ("a", "b", "c"):
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"1 Q0 d{i} {i + 1} {1.0 / (i + 1)!r} {name}\n"
                             for i in range(5)))
        paths.append(str(p))
    out = tmp_path / "fused.run"
    assert cli.main(["fuse", *paths, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--qrels {paths[0]} {paths[1]} {paths[2]}" in err and "judgments are missing" in err
    assert not out.exists()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", ["map", "nDCG@10", "p@5"])
def test_two_runs_one_restart_gives_the_five_restarts_weights(seed, metric):
    """With two runs the non-negative weights are one segment, which the first line search
    sweeps whole: fuse runs one restart, and five give the same weights and value."""
    qrels, runs = make_runs(seed=seed, n_runs=2, decimals=seed % 3)
    one = fuse(qrels, runs, metric)
    five = fuse(qrels, runs, metric, restarts=5)
    assert one.weights == five.weights and one.value == five.value
    # and it is the segment's best: no weight of a fine grid does better
    from dfrank.fusion import fusion_data
    from dfrank.objectives.objective import LinearObjective

    obj = LinearObjective(fusion_data(qrels, runs, "minmax"), metric, ties="stable")
    w = np.array([one.weights[n] for n in runs])
    assert obj(np.append(w, 0.0)) == pytest.approx(one.value, abs=1e-12)
    for a in np.linspace(0.0, 1.0, 201):
        grid_value = obj(np.array([a, 1.0 - a, 0.0]))
        assert grid_value <= one.value + 1e-12


@pytest.mark.parametrize("score", ["1e400", "-1e400"])
def test_an_overflowing_score_is_an_error(tmp_path, capsys, score):
    """A score of 1e400 in a run was read as infinity and fused to NaN: an error naming the
    line."""
    qrels = write_file(tmp_path, "qrels.txt", QRELS)
    a = write_file(tmp_path, "a.run", RUN_A.replace("3.0", score, 1))
    b = write_file(tmp_path, "b.run", RUN_B)
    assert cli.main(["fuse", "--qrels", qrels, a, b, "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "NaN or infinite" in err and "line 1" in err and score in err


def test_huge_finite_scores_fuse_to_finite_scores(tmp_path):
    """Finite scores near the float range (1e308) overflowed in every normalization: they fuse
    to finite scores."""
    qrels = write_file(tmp_path, "qrels.txt", QRELS)
    a = write_file(tmp_path, "a.run", run([("1", "a1", 1e308), ("1", "a3", -1e308),
                                      ("1", "a2", 0.0), ("2", "b2", 1.0),
                                      ("2", "b1", -1e308)]))
    b = write_file(tmp_path, "b.run", RUN_B)
    for norm in ("minmax", "zscore", "sum", "max", "l2"):
        res = dfrank.fuse(qrels, {"a": a, "b": b}, norm=norm)
        scores = [s for docs in res.run().values() for s in docs.values()]
        assert np.all(np.isfinite(scores)) and 0.0 <= res.value <= 1.0, norm


def test_fuse_memory_per_line_stays_within_the_budget(tmp_path, monkeypatch):
    """Two runs of 2,000,000 lines must fuse in 1 GB, 250 bytes a line with the
    interpreter: here 120,000 lines, with lines of more than 16,384 crossings swept in
    parts as web-sized lines are (PART_CROSSINGS scaled down with the input), peak
    allocations per line measured by tracemalloc (numpy's arrays; 1,240 bytes before),
    and the same weights as the line searched whole."""
    import tracemalloc
    from dfrank.linesearch import runner as search
    qrels, runs, n_lines = big_runs(tmp_path)
    whole = dfrank.fuse(qrels, runs, "map")
    monkeypatch.setattr(search, "PART_CROSSINGS", 1 << 14)
    dfrank.fuse(qrels, runs, "map")   # the kernels of parts loaded before measuring
    tracemalloc.start()
    try:
        res = dfrank.fuse(qrels, runs, "map")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.weights == whole.weights and res.value == whole.value
    assert peak / n_lines < 250


def test_with_folds_the_baselines_are_tested_against_the_held_out_fusion():
    """``fuse --folds 5`` tested the fusion fitted on all queries against each run: an
    in-sample test, though the held-out per-query values exist (issue #64)."""
    from dfrank.stats import significance

    qrels, runs = make_runs(decimals=12)
    res = dfrank.fuse(qrels, runs, "map", norm="minmax", folds=5)
    assert res.tested == "held out"
    qids = list(res.per_query)
    held = np.array([res.cv.per_query[q] for q in qids])
    for name, b in res.baselines.items():
        pq = np.array([b["per_query"][q] for q in qids])
        assert b["p_value"] == significance(held, pq, ci=False).p_value, name
    text = res.summary()
    assert "p vs held out" in text and "on its held-out values (5-fold" in text
    plain = dfrank.fuse(qrels, runs, "map", norm="minmax")
    assert plain.tested == "train" and "in-sample" in plain.summary()
    assert dfrank.FusionResult.from_dict(res.to_dict()).tested == "held out"
