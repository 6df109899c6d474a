"""What a hostile user and two expert users found (issue #47), each closed by a test named
after its item: nothing silently wrong, nothing lost, clear errors on valid and invalid
input.

The command line runs in this process (``cli.main``): exit 1 is a data error, 2 a usage
error, 130 an interruption."""

import json
import os

import numpy as np
import pytest

import dfrank
from dfrank import LinearRanker, cli
from dfrank.datasets import make_letor_like
from dfrank.io.svmlight import save_svmlight


def _data():
    return make_letor_like(n_queries=12, docs_per_query=9, n_features=4, seed=3)


# ------------------------------------------------------------------ silently wrong
def test_47_1_a_model_reads_its_features_by_id(tmp_path, capsys):
    path = str(tmp_path / "test.txt")
    save_svmlight(_data(), path)
    data = dfrank.load_svmlight(path)
    picked = data.select_features([3, 1, 2])
    model = dfrank.maximize(picked, "ndcg@10", "ca", seed=0, restarts=1).ranker
    assert model.feature_ids.tolist() == [3, 1, 2]
    want = model.evaluate(picked, "ndcg@10")
    # the whole data set: its columns are found by feature id, in the model's order
    assert model.evaluate(data, "ndcg@10") == want
    np.testing.assert_array_equal(model.predict(data), model.predict(picked))
    # a bare array: the model's columns in its order, or every feature id from 1
    np.testing.assert_array_equal(model.predict(picked.X), model.predict(data))
    two = LinearRanker([1.0, -2.0], feature_ids=[4, 2])
    np.testing.assert_array_equal(two.predict(data.X), two.predict(data.X[:, [3, 1]]))
    with pytest.raises(ValueError, match="X has 4 columns"):
        LinearRanker([1.0, 2.0], feature_ids=[1, 3]).predict(data.X)
    with pytest.raises(ValueError, match="feature ids 5"):
        LinearRanker([1.0, 2.0], feature_ids=[1, 5]).evaluate(data)
    # dfrank evaluate reads the file by feature id, as Python does
    model.save(tmp_path / "m.json")
    assert cli.main(["evaluate", str(tmp_path / "m.json"), path, "--metric", "ndcg@10",
                     "--json", "-", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["ndcg@10"] == pytest.approx(want, abs=0)
    # a hand-edited order is another model
    edited = json.loads((tmp_path / "m.json").read_text())
    edited["feature_ids"] = [3, 2, 1]
    (tmp_path / "e.json").write_text(json.dumps(edited))
    other = LinearRanker.load(tmp_path / "e.json")
    assert not np.array_equal(other.predict(data), model.predict(data))


def test_47_2_a_frame_with_its_columns_reordered_is_refused():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    data = _data()
    names = ["bm25", "tfidf", "pagerank", "length"]
    frame = pd.DataFrame(data.X, columns=names)
    qid = np.repeat(np.arange(data.n_queries), np.diff(data.qptr))
    ranker = dfrank.DirectRanker(strategy="ca", restarts=1).fit(frame, data.y, qid=qid)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(ranker.predict(frame), ranker.predict(data.X))
    with pytest.raises(ValueError, match="same order"):
        ranker.predict(frame[names[::-1]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        ranker.predict(frame.rename(columns={"bm25": "bm25f"}))


def _trec_files(tmp_path, qrels, run):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text("".join(f"{qid} 0 {d} {v}\n" for qid, js in qrels.items()
                         for d, v in js.items()))
    r.write_text("".join(f"{qid} Q0 {d} {i + 1} {s!r} r\n" for qid, ds in run.items()
                         for i, (d, s) in enumerate(ds.items())))
    return str(q), str(r)


def test_47_3_negative_judgments_are_unjudged_as_in_trec_eval(tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"a": 1, "b": -2, "c": 0, "d": -1, "e": 2},
             "2": {"a": -2, "b": 1, "c": -1, "d": 0}}
    run = {"1": {"b": 5.0, "d": 4.0, "a": 3.0, "c": 2.0, "e": 1.0},
           "2": {"a": 4.0, "c": 3.0, "d": 2.0, "b": 1.0}}
    q, r = _trec_files(tmp_path, qrels, run)
    measures = {"bpref", "map", "ndcg", "num_rel", "P"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = dfrank.evaluate_run(q, r, sorted(measures))
    for qid, vals in theirs.items():
        for name, v in vals.items():
            assert ours.per_query[qid][name] == pytest.approx(v, abs=1e-12), (qid, name)
    assert ours.per_query["1"]["bpref"] == 0.5   # 0 when the negatives counted
    # a level below 0 would count trec_eval's markers for unjudged documents as relevant
    assert cli.main(["trec-eval", "-l", "-1", q, r]) == 2
    assert "rel_level must be an integer >= 0" in capsys.readouterr().err


def test_47_4_scores_are_compared_as_trec_eval_reads_them(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"a": 0, "b": 1}, "2": {"a": 0, "b": 1}}
    # one C float: the docno b > a ranks b first
    run = {"1": {"a": 0.1 + 0.2, "b": 0.3}, "2": {"a": 0.1 + 0.2, "b": 0.3}}
    q, r = _trec_files(tmp_path, qrels, run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    ours = dfrank.evaluate_run(q, r, ["recip_rank"])
    assert ours.per_query["1"]["recip_rank"] == theirs["1"]["recip_rank"] == 1.0
    # tune scores an engine's run as trec_eval reads its file
    from dfrank.tuning import RunEvaluator

    ev = RunEvaluator(lambda p: run, qrels, "mrr")
    assert ev({}).tolist() == [1.0, 1.0]
    # fuse reports trec_eval's values of the runs it reads and of the run it writes
    res = dfrank.fuse(qrels, {"x": run, "y": run}, "mrr", norm="none")
    assert res.value == 1.0 and res.baselines["run x"]["value"] == 1.0


def test_47_5_a_qid_with_two_query_texts_is_refused():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyterrier")
    from dfrank.pyterrier import Retriever

    docs = {"d1": "apple pie recipe", "d2": "banana bread", "d3": "apple tart"}
    retriever = Retriever(docs)
    topics = pd.DataFrame({"qid": ["1", "1"], "query": ["apple", "banana"]})
    with pytest.raises(ValueError, match="qid '1' has 2 query texts"):
        retriever.transform(topics)
    # the same text twice is one topic
    one = retriever.transform(pd.DataFrame({"qid": ["1", "1"], "query": ["apple"] * 2}))
    assert set(one["docno"]) == {"d1", "d3"}


def _model_file(tmp_path):
    path = tmp_path / "m.json"
    LinearRanker([0.5, 0.25, 0.25]).save(path)
    return str(path)


def test_47_6_a_names_file_that_is_missing_is_an_error(tmp_path, capsys):
    model = _model_file(tmp_path)
    assert cli.main(["export", model, "--format", "es-ltr", "--names", "names.txt"]) == 2
    assert "--names names.txt: no such file" in capsys.readouterr().err
    assert cli.main(["export", model, "--format", "es-ltr", "--names", "features"]) == 2
    assert "no file of that name exists" in capsys.readouterr().err
    (tmp_path / "names.txt").write_text("a\nb\nc\n")
    assert cli.main(["export", model, "--format", "es-ltr", "--names",
                     str(tmp_path / "names.txt")]) == 0
    assert '\\"a\\": 0.5' in capsys.readouterr().out


@pytest.mark.parametrize("strategy", ["es", "ca", "pso", "random", "cma:es"])
def test_47_7_every_strategy_evaluates_its_start_within_no_time(strategy):
    if ":" in strategy:
        pytest.importorskip(strategy.split(":")[0])
    data = _data()
    res = dfrank.maximize(data, strategy=strategy, max_seconds=0, seed=0)
    assert res.status == "time" and res.n_evals >= 1 and np.isfinite(res.value)
    assert res.value == dfrank.maximize(data, strategy=strategy, max_seconds=0,
                                        seed=0).value
