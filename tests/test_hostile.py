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
from tests.test_reliability import _cranfield_like, _tune, wait_gone


def _data():
    return make_letor_like(n_queries=12, docs_per_query=9, n_features=4, seed=3)


# ------------------------------------------------------------------ silently wrong
def test_a_model_reads_its_features_by_id(tmp_path, capsys):
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
    # a bare array: the model's columns in its order, or every feature id from 1; where
    # both fit and differ (ids 3, 1, 2 of a 3-feature array) the caller says which
    np.testing.assert_array_equal(model.predict(picked.X, columns="model"),
                                  model.predict(data))
    np.testing.assert_array_equal(model.predict(data.X[:, :3], columns="ids"),
                                  model.predict(data))
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


def test_a_frame_with_its_columns_reordered_is_refused():
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


def test_negative_judgments_are_unjudged_as_in_trec_eval(tmp_path, capsys):
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


def test_scores_are_compared_as_trec_eval_reads_them(tmp_path):
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


def test_a_qid_with_two_query_texts_is_refused():
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


@pytest.mark.parametrize("strategy", ["es", "ca", "pso", "random", "cma:es"])
def test_every_strategy_evaluates_its_start_within_no_time(strategy):
    if ":" in strategy:
        pytest.importorskip(strategy.split(":")[0])
    data = _data()
    res = dfrank.maximize(data, strategy=strategy, max_seconds=0, seed=0)
    assert res.status == "time" and res.n_evals >= 1 and np.isfinite(res.value)
    assert res.value == dfrank.maximize(data, strategy=strategy, max_seconds=0,
                                        seed=0).value


# ------------------------------------------------------------------ lost
def _bench_kw(toy_suite, **kw):
    root, refs = toy_suite
    return dict(dict(problems=["letor-mq2008-map"], folds=[1], seeds=range(3), budget=30,
                     references=refs, line_cost=3, n_jobs=1, repeat=False), **kw)


def test_a_cut_last_bench_line_is_repaired_before_appending(toy_suite, tmp_path):
    from dfrank.problems import bench, read_runs

    out = tmp_path / "b.jsonl"
    root = toy_suite[0]
    bench(root, ["random"], output=out, **_bench_kw(toy_suite))
    text = out.read_text()
    out.write_text(text[:-40])                      # killed while writing the last run
    with pytest.warns(UserWarning, match="cut short"):
        res = bench(root, ["random"], output=out, **_bench_kw(toy_suite))
    assert len(res.runs) == 3
    lines = out.read_text().splitlines()
    assert all(json.loads(ln) for ln in lines)      # every line whole again
    redone, first = json.loads(lines[-1]), json.loads(text.splitlines()[-1])
    assert redone["trace"]["values"] == first["trace"]["values"]   # the cut run, redone
    assert len(read_runs(out).runs) == 3


def test_ctrl_c_in_a_run_stops_the_bench_and_the_run_is_redone(toy_suite, tmp_path,
                                                                     monkeypatch, capsys):
    from dfrank.problems import bench, read_runs
    from dfrank.registry import resolve

    out = tmp_path / "b.jsonl"
    root = toy_suite[0]
    cls = type(resolve("random"))
    real = cls.run
    calls = []

    def cut(self, objective, rng, **kw):            # Ctrl-C during the second run
        calls.append(1)
        if len(calls) == 2:
            objective.batch(objective.space.sample(rng, 2))
            raise KeyboardInterrupt
        return real(self, objective, rng, **kw)

    monkeypatch.setattr(cls, "run", cut)
    with pytest.raises(KeyboardInterrupt):
        bench(root, ["random"], output=out, **_bench_kw(toy_suite))
    runs = read_runs(out).runs
    assert [r["seed"] for r in runs] == [0, 1] and runs[1]["status"] == "interrupted"
    # on the command line: exit 130
    calls.clear()
    args = ["bench", "run", root, "--solvers", "random", "--problems", "letor-mq2008-map",
            "--folds", "1", "--seeds", "3", "--budget", "30", "--line-cost", "3",
            "--n-jobs", "1", "--references", toy_suite[1], "-o", str(tmp_path / "c.jsonl"),
            "--quiet"]
    assert cli.main(args) == 130
    monkeypatch.setattr(cls, "run", real)
    res = bench(root, ["random"], output=out, **_bench_kw(toy_suite))
    assert sorted(r["seed"] for r in res.runs) == [0, 1, 2]
    assert all(r["status"] != "interrupted" for r in read_runs(out).runs)


def test_two_outputs_on_one_path_are_refused(tmp_path, capsys, toy_suite):
    data = str(tmp_path / "train.txt")
    save_svmlight(_data(), data)
    m = str(tmp_path / "m.json")
    assert cli.main(["fit", data, "--strategy", "ca", "--quiet", "-o", m, "--json", m]) == 2
    assert "--output and --json both write" in capsys.readouterr().err
    assert not os.path.exists(m)
    b = str(tmp_path / "b.jsonl")
    assert cli.main(["bench", "run", toy_suite[0], "--solvers", "random", "--budget", "10",
                     "-o", b, "--json", b, "--quiet"]) == 2
    assert "--output and --json both write" in capsys.readouterr().err
    _cranfield_like(tmp_path)
    c = tmp_path / "c.jsonl"
    assert cli.main(_tune(tmp_path, "--budget", "3", "--cache", str(c), "--json", str(c))) \
        == 2
    assert "--json and --cache both write" in capsys.readouterr().err
    assert not c.exists()


ENGINE = """\
import os, subprocess, sys, time
k, run, calls = float(sys.argv[1]), sys.argv[2], sys.argv[3]
n = len(os.listdir(calls))
open(os.path.join(calls, str(n)), "w").close()
if n == 2:   # the third run hangs, with a process of its own in the background
    child = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[4], "w") as f:
        f.write(str(child.pid))
    time.sleep(300)
with open(run, "w") as f:
    f.write(f"1 Q0 a 1 {k} r\\n1 Q0 b 2 {1 - k} r\\n2 Q0 a 1 {1 - k} r\\n2 Q0 b 2 {k} r\\n")
"""


@pytest.mark.parametrize("sig, code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_stops_tune_its_engine_and_keeps_the_best(tmp_path, sig, code):
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 a 0\n2 0 b 1\n")
    calls, tmp = tmp_path / "calls", tmp_path / "tmp"
    calls.mkdir()
    tmp.mkdir()
    pidfile = tmp_path / "child.pid"
    out = tmp_path / "out.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dfrank.cli", "tune", "--qrels", str(tmp_path / "qrels.txt"),
         "--param", "k=0:1", "--budget", "10", "--json", str(out), "--quiet", "--",
         sys.executable, str(tmp_path / "engine.py"), "{k}", "{run}", str(calls),
         str(pidfile)], env=dict(os.environ, TMPDIR=str(tmp)), stderr=subprocess.PIPE,
        # a shell runs background jobs with SIGINT ignored, and a child inherits that: the
        # command gets the default, as from a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(timeout=60) == code
    result = json.loads(out.read_text())
    assert result["status"] == "interrupted" and result["n_runs"] == 2
    done = [h["value"] for h in result["history"] if h["status"] == "ok"]
    assert len(done) == 2 and result["value"] == max(done)   # the best of the two, kept
    wait_gone(int(pidfile.read_text()), "the engine's background process outlived the tune")
    assert os.listdir(tmp) == []    # no dfrank-tune-* folder left


def test_failed_points_of_the_cache_are_run_again(tmp_path):
    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 1}}
    broken = {"now": True}
    calls = []

    def run_fn(p):
        calls.append(p)
        if broken["now"] and len(calls) % 2 == 0:   # every second run times out
            raise RuntimeError("the engine timed out")
        return {"1": {"a": p["k"], "b": 1 - p["k"]}, "2": {"a": 1 - p["k"], "b": p["k"]}}

    cache = tmp_path / "c.jsonl"
    with pytest.warns(UserWarning, match="timed out"):
        first = dfrank.tune(run_fn, {"k": (0.0, 1.0)}, qrels, "map", budget=8, cache=cache)
    assert first.n_failed > 0
    kept = dfrank.tune(run_fn, {"k": (0.0, 1.0)}, qrels, "map", budget=8, cache=cache,
                       keep_failed=True)
    assert kept.n_runs == 0 and kept.n_failed == first.n_failed
    broken["now"] = False   # the engine is fixed: its failed points are run again
    again = dfrank.tune(run_fn, {"k": (0.0, 1.0)}, qrels, "map", budget=8, cache=cache)
    assert again.n_runs == first.n_failed and again.n_failed == 0


# ------------------------------------------------------------------ valid input, clear errors
def test_reserved_names_are_no_parameters():
    from dfrank.command import CommandRun

    for name in ("run", "cwd"):
        with pytest.raises(ValueError, match=f"cannot be named '{name}'"):
            CommandRun(["engine", f"{{{name}}}", "{run}"], [name])


LETOR = (b"2 qid:1 1:0.5 2:1 3:0 #docid = a1\n"
         b"0 qid:1 1:0.25 2:0.5 3:1 #docid = a2\n"
         b"1 qid:1 1:1 2:0 3:0.5 #docid = a3\n"
         b"0 qid:2 1:0 2:0.75 3:0.5 #docid = b1\n"
         b"1 qid:2 1:0.5 2:0.5 3:0.5\n")


def test_plain_text_on_standard_input(tmp_path):
    import subprocess
    import sys

    model = _model_file(tmp_path)
    for cmd in (["info", "-"], ["evaluate", model, "-", "--metric", "map"],
                ["fit", "-", "--strategy", "ca", "--restarts", "1", "--quiet"]):
        out = subprocess.run([sys.executable, "-m", "dfrank.cli", *cmd], input=LETOR,
                             capture_output=True)
        assert out.returncode == 0, (cmd, out.stderr)
    out = subprocess.run([sys.executable, "-m", "dfrank.cli", "info", "-"],
                         input=LETOR.decode(), capture_output=True, text=True)
    assert "queries     2" in out.stdout


def test_a_last_line_without_newline_or_comment(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(LETOR.rstrip(b"\n"))
    data = dfrank.load_svmlight(path)
    assert data.docids.tolist() == ["a1", "a2", "a3", "b1", ""]
    assert data.n_docs == 5 and data.X[4].tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("name", ['bm25("}")', 'query("{")', 'x("a{b}c")'])
def test_vespa_names_with_braces_are_refused(name):
    from dfrank.export import ExportError

    with pytest.raises(ExportError, match="without braces"):
        LinearRanker([1.0, 2.0]).export(format="vespa", names=[name, "bm25(title)"])


def test_pyterrier_stages_name_the_frame_and_column():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyterrier")
    from dfrank.pyterrier import Fusion, LearnedStage, Retriever

    with pytest.raises(ValueError, match="the Retriever's input: no 'query' column"):
        Retriever({"d1": "apple"}).transform(pd.DataFrame({"qid": ["1"], "text": ["a"]}))
    res = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"],
                        "features": [np.ones(2), np.zeros(2)]})
    stage = LearnedStage(strategy="ca", restarts=1)
    with pytest.raises(ValueError, match="the training results have no rows"):
        stage.fit(res.iloc[:0], pd.DataFrame({"qid": [], "docno": [], "label": []}))
    with pytest.raises(ValueError, match="differ in length from row to row"):
        stage.fit(res.assign(features=[np.ones(2), np.ones(3)]),
                  pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}))
    with pytest.raises(ValueError, match="no 'label' .or 'relevance'. column"):
        stage.fit(res, pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [1]}))
    with pytest.raises(ValueError, match="the validation results have 3 features"):
        stage.fit(res, pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}),
                  res.assign(features=[np.ones(3)] * 2),
                  pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}))

    class NoScore:
        def transform(self, topics):
            return pd.DataFrame({"qid": ["1"], "docno": ["a"]})

    with pytest.raises(ValueError, match="the results of pipeline 'x': no 'score' column"):
        Fusion({"x": NoScore(), "y": NoScore()}).fit(
            pd.DataFrame({"qid": ["1"], "query": ["a"]}),
            pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}))


def test_a_hand_edited_bench_file(toy_suite, tmp_path, capsys):
    from dfrank.problems import bench

    out = tmp_path / "b.jsonl"
    bench(toy_suite[0], ["random"], output=out, **_bench_kw(toy_suite, seeds=range(1)))
    lines = out.read_text().splitlines()
    run = json.loads(lines[-1])
    edited = tmp_path / "e.jsonl"
    edited.write_text("\n".join(lines[:-1] + [json.dumps(dict(run, solver=".."))]) + "\n")
    export = tmp_path / "export" / "D"
    export.parent.mkdir()
    assert cli.main(["bench", "export", str(edited), "-o", str(export)]) == 0
    assert os.listdir(export.parent) == ["D"]          # nothing written beside D
    edited.write_text("\n".join(lines[:-1] + [json.dumps(dict(
        run, problem="letor-mq2009-map"))]) + "\n")
    assert cli.main(["bench", "export", str(edited), "-o", str(export)]) == 1
    assert "problem 'letor-mq2009-map' that this dfrank does not know" in \
        capsys.readouterr().err
    head = json.loads(lines[0])
    edited.write_text("\n".join([json.dumps(dict(head, version=7))] + lines[1:]) + "\n")
    assert cli.main(["bench", "report", str(edited)]) == 1
    assert "bench file version 7" in capsys.readouterr().err
    from dfrank.problems import bench as run_bench

    with pytest.raises(dfrank.DataFormatError, match="version 7"):
        run_bench(toy_suite[0], ["random"], output=edited, **_bench_kw(toy_suite))


def test_data_errors_exit_1(tmp_path, capsys):
    q, r = _trec_files(tmp_path, {"1": {"a": 1}}, {"2": {"a": 1.0}})
    assert cli.main(["trec-eval", q, r]) == 1
    assert "share no query" in capsys.readouterr().err
    cut = tmp_path / "b.jsonl"
    cut.write_text('{"type": "header"\n{"type": "run"}\n')
    assert cli.main(["bench", "report", str(cut)]) == 1
    assert "line 1" in capsys.readouterr().err
    model = _model_file(tmp_path)
    m = json.loads(open(model).read())
    big = tmp_path / "big.json"
    big.write_text(json.dumps(dict(m, weights=[1e308, 1e308, 1e308])))
    data = tmp_path / "d.txt"
    data.write_bytes(LETOR.replace(b"1:0.5 2:1", b"1:1e308 2:1e308"))
    assert cli.main(["evaluate", str(big), str(data), "--quiet"]) == 1
    assert "scores must be finite" in capsys.readouterr().err


def test_stdout_once_and_typed_model_files(tmp_path, capsys):
    q, r = _trec_files(tmp_path, {"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 1}},
                       {"1": {"a": 1.0, "b": 0.5}, "2": {"a": 1.0, "b": 0.5}})
    r2 = tmp_path / "run2.txt"
    r2.write_text(open(r).read().replace("1.0", "0.2"))
    assert cli.main(["fuse", "--qrels", q, r, str(r2), "--json", "-", "--export", "ranx",
                     "--quiet"]) == 2
    assert "both print on standard output" in capsys.readouterr().err
    # weights and ids of a model file are numbers
    for field, value in (("weights", [1, "2", 3]), ("weights", [1, True, 3]),
                         ("feature_ids", [1, 2.5, 3]), ("weights", "1,2,3")):
        m = {"format": "dfrank.linear_ranker", "version": 1, "weights": [1, 2, 3],
             "feature_ids": [1, 2, 3], field: value}
        (tmp_path / "e.json").write_text(json.dumps(m))
        with pytest.raises(dfrank.DataFormatError, match=f"{field} must be a list of"):
            LinearRanker.load(tmp_path / "e.json")
