"""Tuning retrieval systems: the built-in engine's values are trec_eval's, tune finds the
best evaluated point, caches, fails clearly, cross-validates from the runs it made, and
drives a real external engine (bm25s) from Python and from its command line."""

import json
import os
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dfrank
from dfrank import DataFormatError, TuneError, cli, ir
from dfrank.tuning.command import CommandRun
from dfrank.errors import UsageError
from dfrank.tuning.tuner import space_of, tune
from tests.inputs import (ENGINE, QRELS, EngineRun, small_collection, wait_gone,
                          write_file)

pytrec_eval = pytest.importorskip("pytrec_eval")

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
CRANFIELD = os.path.join(SHARED, "cranfield")
needs_cranfield = pytest.mark.skipif(not os.path.isdir(CRANFIELD), reason="../shared absent")


@pytest.fixture(scope="module")
def coll():
    return small_collection()


@pytest.fixture(scope="module")
def engine(coll):
    return ir.Engine(*coll)


def reference(engine, run, measures=("map", "ndcg_cut.10", "P.5", "recip_rank")):
    ev = pytrec_eval.RelevanceEvaluator({q: engine.qrels[q] for q in engine.qids},
                                        set(measures))
    res = ev.evaluate(run)
    return {m: np.array([res.get(q, {}).get(m.replace(".", "_"), 0.0) for q in engine.qids])
            for m in measures}


@pytest.mark.parametrize("model,params", [("bm25", {"k1": 0.9, "b": 0.4}),
                                          ("bm25", {"k1": 2.5, "b": 1.0}),
                                          ("ql", {"mu": 50.0}), ("ql", {"mu": 3000.0}),
                                          ("sdm", {"w_t": 0.8, "w_o": 0.15, "w_u": 0.05})])
def test_engine_values_are_trec_evals(engine, model, params):
    run = engine.run(model, params, depth=10 ** 9)
    ref = reference(engine, run)
    for ours, theirs in (("map", "map"), ("nDCG@10", "ndcg_cut.10"), ("p@5", "P.5"),
                         ("mrr", "recip_rank")):
        got = engine.per_query(model, params, ours)
        np.testing.assert_allclose(got, ref[theirs], atol=1e-12, err_msg=ours)


def test_engine_scores_follow_their_formulas(coll):
    docs, topics, qrels = coll
    e = ir.Engine(docs, {"q": "w1x w1x w3x"}, {"q": {"d001": 1}})
    s = e.scores("bm25", {"k1": 1.2, "b": 0.75})
    N = len(docs)
    avgdl = np.mean([len(ir.tokenize(t)) for t in docs.values()])
    for r in range(3):
        d = e.docnos[e.row_doc[r]]
        toks = ir.tokenize(docs[d])
        want = 0.0
        for t, qtf in (("w1x", 2), ("w3x", 1)):
            df = sum(t in ir.tokenize(x) for x in docs.values())
            tf = toks.count(t)
            idf = np.log(1 + (N - df + 0.5) / (df + 0.5))
            want += qtf * idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(toks) / avgdl))
        assert s[r] == pytest.approx(want, rel=1e-12)
    ql = e.scores("ql", {"mu": 100.0})
    C = sum(len(ir.tokenize(x)) for x in docs.values())
    d = e.docnos[e.row_doc[0]]
    toks = ir.tokenize(docs[d])
    want = sum(np.log((toks.count(t) + 100 * sum(ir.tokenize(x).count(t)
                                                  for x in docs.values()) / C)
                      / (len(toks) + 100)) for t in ("w1x", "w1x", "w3x"))
    assert ql[0] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="no parameter 'mu'"):
        e.scores("bm25", {"mu": 1.0})
    with pytest.raises(ValueError, match="unknown model 'bm26'"):
        e.scores("bm26", {})


def test_readers(tmp_path):
    (tmp_path / "c.tsv").write_text("d1\tfirst doc\nd2\tsecond\tdoc\n")
    assert ir.read_collection(tmp_path / "c.tsv") == {"d1": "first doc", "d2": "second doc"}
    (tmp_path / "c.jsonl").write_text('{"_id": "a", "title": "T", "text": "body"}\n'
                                      '{"id": "b", "contents": "pyserini"}\n')
    assert ir.read_collection(tmp_path / "c.jsonl") == {"a": "T body", "b": "pyserini"}
    (tmp_path / "t.txt").write_text(textwrap.dedent("""\
        <top>
        <num> Number: 301
        <title> International Organized Crime
        <desc> Description: ...
        </top>
        <top><num> 302 <title> poliomyelitis and post-polio </top>
        """))
    assert ir.read_topics(tmp_path / "t.txt") == {"301": "International Organized Crime",
                                                  "302": "poliomyelitis and post-polio"}
    (tmp_path / "dup.tsv").write_text("d1\ta\nd1\tb\n")
    with pytest.raises(DataFormatError, match="'d1' appears twice.*line 2|line 2"):
        ir.read_collection(tmp_path / "dup.tsv")
    (tmp_path / "bad.jsonl").write_text('{"_id": "a", "text": "x"}\n{oops\n')
    with pytest.raises(DataFormatError, match="line 2"):
        ir.read_collection(tmp_path / "bad.jsonl")
    with pytest.raises(DataFormatError, match="topics file is not a collection"):
        ir.read_collection(tmp_path / "t.txt")
    (tmp_path / "plain.txt").write_text("just some words\n")
    with pytest.raises(DataFormatError, match="format="):
        ir.read_collection(tmp_path / "plain.txt")


SPACE = {"k1": (0.1, 3.0), "b": (0.0, 1.0)}


def test_tune_finds_the_best_evaluated_point(engine):
    res = tune((engine, "bm25"), SPACE, metric="map", budget=30, seed=1,
               default={"k1": 1.2, "b": 0.75})
    ok = [e for e in res.history if e["status"] == "ok"]
    best = max(np.mean(e["per_query"]) for e in ok)
    assert res.value == best >= res.default_value
    assert res.value == pytest.approx(engine.evaluate("bm25", res.best_params, "map"),
                                      abs=1e-15)
    assert res.n_runs == len(ok) <= 31 and res.n_failed == 0
    # the same search through a run function: the same values, the same best point
    via_runs = tune(lambda p: engine.run("bm25", p, depth=10 ** 9), SPACE,
                    {q: engine.qrels[q] for q in engine.qids}, "map", budget=30, seed=1)
    assert via_runs.best_params == res.best_params
    assert via_runs.value == pytest.approx(res.value, abs=1e-12)


def test_same_result_for_any_n_jobs(engine):
    run_fn = EngineRun(engine)
    qrels = {q: engine.qrels[q] for q in engine.qids}
    a = tune(run_fn, SPACE, qrels, "ndcg@10", budget=16, seed=3, n_jobs=1)
    b = tune(run_fn, SPACE, qrels, "ndcg@10", budget=16, seed=3, n_jobs=2)
    assert a.best_params == b.best_params and a.value == b.value
    assert [e["params"] for e in a.history] == [e["params"] for e in b.history]


def _written(folder):
    """The files of a cache folder, one per process that ran points, as JSON."""
    return [json.loads(f.read_text()) for f in sorted(folder.iterdir())]


def test_cache_resumes_and_refuses_another_tune(engine, tmp_path):
    path = tmp_path / "c.json"
    first = tune((engine, "bm25"), SPACE, metric="map", budget=12, seed=0, cache=path)
    [d] = _written(path)   # checkpoint's format: a fingerprint, the points
    assert d["format"] == "dfrank.driver.checkpoint" and d["fingerprint"]["kind"] == "tune"
    assert len(d["points"]) == first.n_runs
    again = tune((engine, "bm25"), SPACE, metric="map", budget=12, seed=0, cache=path)
    assert first.n_runs > 0 and again.n_runs == 0 and again.n_cached == first.n_runs
    assert again.best_params == first.best_params and again.value == first.value
    more = tune((engine, "bm25"), SPACE, metric="map", budget=30, seed=0, cache=path)
    assert more.n_cached >= first.n_runs and more.value >= first.value
    with pytest.raises(UsageError, match="another metric"):
        tune((engine, "bm25"), SPACE, metric="ndcg@10", budget=5, cache=path)
    with pytest.raises(UsageError, match="another space"):
        tune((engine, "bm25"), {"k1": (0.1, 2.0), "b": (0, 1)}, metric="map", budget=5,
             cache=path)
    # a maximize checkpoint is not a tune cache
    other = tmp_path / "ckpt.json"
    dfrank.maximize(dfrank.data.datasets.make_letor_like(n_queries=6, seed=0), "ndcg@10", "ca",
                    restarts=1, checkpoint=other)
    with pytest.raises(DataFormatError, match="not a dfrank tune cache"):
        tune((engine, "bm25"), SPACE, metric="map", budget=5, cache=other)


def test_a_cache_of_another_model_is_a_usage_error_naming_the_model(coll, tmp_path, capsys):
    """A tune cache of ``--model bm25`` reused with ``--model ql`` was refused as holding
    "runs of another queries" (exit 1): the system differs first, and it is the user's
    mistake (exit 2)."""
    folder = tmp_path / "coll"
    folder.mkdir()
    docs, topics, qrels = coll
    (folder / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in docs.items()))
    (folder / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, js in qrels.items()
                                              for d, r in js.items()))
    base = ["tune", "--collection", str(folder / "docs.tsv"), "--topics",
            str(folder / "topics.tsv"), "--qrels", str(folder / "qrels.txt"), "--budget", "3",
            "--cache", str(tmp_path / "cache"), "--quiet"]
    assert cli.main(base + ["--model", "bm25"]) == 0
    capsys.readouterr()
    assert cli.main(base + ["--model", "ql"]) == 2
    err = capsys.readouterr().err
    assert "another system ('dfrank.ir.Engine:bm25'; this tune: 'dfrank.ir.Engine:ql')" in err
    assert len(err.strip().splitlines()) == 1


def _changed(coll, what):
    """The small collection with one determinant of a tune's values changed alone."""
    docs, topics, qrels = (dict(x) for x in coll)
    if what == "document text":     # same documents, same count, same vocabulary size
        d = sorted(docs)[5]
        docs[d] = " ".join(reversed(docs[d].split())) + " " + docs[d].split()[0]
    elif what == "topic text":
        q = sorted(topics)[0]
        topics[q] = topics[q] + " " + docs[sorted(docs)[0]].split()[0]
    elif what == "judgment":
        q = sorted(qrels)[0]
        d = sorted(qrels[q])[0]
        qrels[q] = dict(qrels[q], **{d: qrels[q][d] + 1})
    return docs, topics, qrels


@pytest.mark.parametrize("what", ["document text", "topic text", "judgment", "sdm window",
                                  "metric setting", "model"])
def test_a_tune_cache_answers_only_for_the_inputs_that_made_it(coll, tmp_path, what):
    """The built-in engine's cache was keyed on the documents' and terms' counts: a
    collection edited to the same counts, or other topic texts, were answered from the
    cache with the old runs' values. Each determinant changed alone is refused."""
    cache = tmp_path / "c"
    space = {"mu": (100.0, 3000.0, "log")} if what == "model" else SPACE
    tune((ir.Engine(*coll), "bm25"), SPACE, metric="map", budget=3, cache=cache)
    metric, model, kw = "map", "bm25", {}
    if what == "sdm window":
        kw = {"window": 4}
    if what == "metric setting":
        from dfrank.metrics.registry import get_metric

        metric = get_metric("map", rel_threshold=2)
    if what == "model":
        model = "ql"
    engine = ir.Engine(*_changed(coll, what), **kw)
    with pytest.raises(UsageError, match="the cache holds runs of another"):
        tune((engine, model), space, metric=metric, budget=3, cache=cache)
    again = tune((ir.Engine(*coll), "bm25"), SPACE, metric="map", budget=3, cache=cache)
    assert again.n_runs == 0


@pytest.mark.parametrize("kind", ["text", "json", "binary"])
def test_a_tune_cache_of_another_kind_is_refused_and_left_byte_identical(engine, tmp_path,
                                                                         kind):
    """A cache path that is a user's file, or a folder holding one, is refused before
    anything is written there; the file is left byte for byte."""
    from tests.inputs import users_file

    path, before = users_file(tmp_path, kind)
    with pytest.raises(DataFormatError, match="not a dfrank tune cache"):
        tune((engine, "bm25"), SPACE, metric="map", budget=3, cache=path)
    assert path.read_bytes() == before and not os.path.exists(f"{path}.d")
    folder = tmp_path / "mine"
    folder.mkdir()
    path, before = users_file(folder, kind)
    with pytest.raises(UsageError, match="no file of a dfrank tune cache"):
        tune((engine, "bm25"), SPACE, metric="map", budget=3, cache=folder)
    assert path.read_bytes() == before and os.listdir(folder) == [path.name]


@pytest.mark.parametrize("layout", ["lines", "record"])
def test_a_cache_file_of_a_former_layout_is_read_and_left_as_it_is(engine, tmp_path, layout):
    """JSON lines after a header, or one checkpoint record, as dfrank wrote a cache before:
    read (a last line cut short by a crash dropped, with a warning) and left as it is; the
    new points go to a folder beside it."""
    first = tune((engine, "bm25"), SPACE, metric="map", budget=12, seed=0,
                 cache=tmp_path / "new")
    [d] = _written(tmp_path / "new")
    path = tmp_path / "c.json"
    if layout == "lines":
        head = {"format": "dfrank.tune_cache", "version": 1,
                **{k: d["fingerprint"][k] for k in ("space", "metric", "system", "queries")}}
        path.write_text("".join(json.dumps(x) + "\n" for x in [head, *d["points"]]) +
                        '{"params": {"k1": 1.0, "b"')
        with pytest.warns(UserWarning, match="cut short"):
            again = tune((engine, "bm25"), SPACE, metric="map", budget=12, seed=0,
                         cache=path)
    else:
        path.write_text(json.dumps(d))
        again = tune((engine, "bm25"), SPACE, metric="map", budget=12, seed=0, cache=path)
    assert again.n_runs == 0 and again.value == first.value
    before = path.read_text()
    more = tune((engine, "bm25"), SPACE, metric="map", budget=20, seed=0, cache=path)
    assert path.read_text() == before and more.n_cached == 12
    assert sum(len(x["points"]) for x in _written(tmp_path / "c.json.d")) == more.n_runs


def test_two_tunes_on_one_cache_at_once_keep_every_run(tmp_path):
    """Two ``dfrank tune`` processes on one ``--cache`` at once (a user running two seeds):
    the cache was one file rewritten whole, and the last writer won (50 runs made, 25
    kept). Each process now writes a file of its own in the cache's folder."""
    import subprocess
    import sys

    docs = "".join(f"d{i}\t{' '.join(['apple', 'pear', 'fig', 'plum'][: 1 + i % 4])}\n"
                   for i in range(12))
    (tmp_path / "docs.tsv").write_text(docs)
    (tmp_path / "topics.tsv").write_text("1\tapple pear\n2\tfig\n3\tplum apple\n")
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 d{i} {(i + q) % 2}\n"
                                                for q in (1, 2, 3) for i in range(12)))
    cache = tmp_path / "cache"
    argv = [sys.executable, "-m", "dfrank.cli", "tune", "--collection",
            str(tmp_path / "docs.tsv"), "--topics", str(tmp_path / "topics.tsv"), "--qrels",
            str(tmp_path / "qrels.txt"), "--model", "bm25", "--strategy", "random",
            "--budget", "25", "--cache", str(cache), "--quiet"]
    procs = [subprocess.Popen([*argv, "--seed", str(seed)], stdout=subprocess.DEVNULL)
             for seed in (1, 2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    written = _written(cache)
    # 25 points each, and the default point, which the later one may find in the cache
    points = {json.dumps(p["params"], sort_keys=True) for w in written for p in w["points"]}
    assert len(written) == 2 and len(points) == 51
    again = subprocess.run([*argv, "--seed", "2"], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and "(26 from the cache" in again.stdout


def test_failed_runs(engine):
    qrels = {q: engine.qrels[q] for q in engine.qids}

    def broken(p):
        raise RuntimeError("index missing")

    with pytest.raises(TuneError, match="(?s)before any run succeeded.*index missing"):
        tune(broken, SPACE, qrels, budget=5)

    def flaky(p):
        if p["k1"] > 2.0:
            return {"q0": {"d001": "not a number"}}
        return engine.run("bm25", p)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = tune(flaky, SPACE, qrels, budget=20, seed=0, strategy="random")
    failed = [e for e in res.history if e["status"] == "failed"]
    assert res.n_failed == len(failed) > 0
    assert all(e["params"]["k1"] > 2.0 and e["per_query"] is None for e in failed)
    assert "not a number" in failed[0]["error"]
    assert res.best_params["k1"] <= 2.0
    assert any("recorded as failed" in str(w.message) for w in caught)


def test_integer_and_log_parameters(engine):
    seen = []

    def run_fn(p):
        seen.append(p)
        return engine.run("ql", {"mu": p["mu"] * p["scale"] / 10})

    res = tune(run_fn, {"mu": (50, 5000, "log"), "scale": (5, 15, "int")},
               {q: engine.qrels[q] for q in engine.qids}, budget=15, seed=0)
    assert all(isinstance(p["scale"], int) and 5 <= p["scale"] <= 15 for p in seen)
    assert all(50 <= p["mu"] <= 5000 for p in seen)
    assert isinstance(res.best_params["scale"], int)
    with pytest.raises(ValueError, match="expected \\(low, high"):
        space_of({"mu": (1, 2, "logg")})


def test_cross_validation_chooses_on_other_folds(engine):
    res = tune((engine, "bm25"), SPACE, metric="map", budget=25, seed=2, folds=4,
               default={"k1": 1.2, "b": 0.75})
    ok = [e for e in res.history if e["status"] == "ok"]
    P = np.array([e["per_query"] for e in ok])
    held = {}
    assert res.folds == 4 and len(res.cv.per_fold) == 4
    for f in res.cv.per_fold:
        test_q = np.isin(res.qids, f["held_out"])
        i = int(np.argmax(P[:, ~test_q].mean(axis=1)))
        assert f["params"] == ok[i]["params"]
        assert f["held_out_value"] == pytest.approx(P[i, test_q].mean(), abs=1e-15)
        held.update(zip(np.array(res.qids)[test_q], P[i, test_q]))
    assert sorted(held) == sorted(res.qids)
    assert res.cv_value == pytest.approx(np.mean(list(held.values())), abs=1e-15)
    assert res.cv_default == pytest.approx(res.default_value, abs=1e-15)
    assert 0 <= res.cv_test.p_value <= 1
    d = json.loads(res.to_json())
    assert d["format"] == "dfrank.tune" and d["cv_p_value"] == res.cv_test.p_value
    assert "held out" in res.summary()


SCRIPT = textwrap.dedent("""\
    import json, sys
    k1, b, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    run = json.load(open(sys.argv[4]))   # precomputed scores for a grid of (k1, b)
    key = f"{round(k1, 1)} {round(b, 1)}"
    lines = [f"{q} Q0 {d} 0 {s} fake" for q, docs in run[key].items() for d, s in docs.items()]
    text = "\\n".join(lines) + "\\n"
    if out == "-":
        sys.stdout.write(text)
    else:
        open(out, "w").write(text)
    """)


def test_command_line_engine(engine, tmp_path, capsys):
    """dfrank tune -- COMMAND: a script that writes the run to {run}, or to its standard
    output; the values as arguments; the result in --json."""
    grid = {f"{k1} {b}": engine.run("bm25", {"k1": k1, "b": b})
            for k1 in np.round(np.arange(0.1, 3.01, 0.1), 1)
            for b in np.round(np.arange(0.0, 1.01, 0.1), 1)}
    (tmp_path / "runs.json").write_text(json.dumps(grid))
    (tmp_path / "engine.py").write_text(SCRIPT)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q in engine.qids
                             for d, r in engine.qrels[q].items()))
    base = ["tune", "--qrels", str(qrels), "--param", "k1=0.1:3", "--param", "b=0:1",
            "--default", "k1=1.2", "--default", "b=0.75", "--budget", "10", "--quiet"]
    cmd = [sys.executable, str(tmp_path / "engine.py"), "{k1}", "{b}"]
    assert cli.main(base + ["--json", str(tmp_path / "t.json"), "--"] + cmd +
                    ["{run}", str(tmp_path / "runs.json")]) == 0
    out = capsys.readouterr().out
    d = json.loads((tmp_path / "t.json").read_text())
    assert set(d["best_params"]) == {"k1", "b"} and d["n_runs"] >= 10
    k1, b = (round(d["best_params"][k], 1) for k in ("k1", "b"))
    assert d["value"] == pytest.approx(engine.evaluate("bm25", {"k1": k1, "b": b}, "map"),
                                       abs=1e-9)
    assert d["default_value"] == pytest.approx(   # the script rounds as round() does
        engine.evaluate("bm25", {"k1": round(1.2, 1), "b": round(0.75, 1)}, "map"), abs=1e-9)
    assert "tuned (all queries)" in out and "default" in out
    # the run on standard output instead of {run}
    assert cli.main(base + ["--"] + cmd + ["-", str(tmp_path / "runs.json")]) == 0
    assert f"{d['value']:.4f}" in capsys.readouterr().out
    # a parameter the command never uses, a field that is no parameter
    assert cli.main(base + ["--", sys.executable, "x.py", "{k1}"]) == 2
    assert "'b' appears nowhere in the command" in capsys.readouterr().err
    assert cli.main(base + ["--", "prog", "{k1}", "{b}", "{k2}"]) == 2
    assert "{k2}" in capsys.readouterr().err
    # a command that fails: the error names the point and its stderr
    assert cli.main(base + ["--", sys.executable, "-c",
                            "import sys; sys.exit('engine exploded')", "{k1}", "{b}"]) == 1
    err = capsys.readouterr().err
    assert "exited with status 1" in err and "engine exploded" in err and "k1" in err


def test_command_values_never_pass_through_a_shell(tmp_path):
    runner = CommandRun(["prog", "--k1={k1}", "{n}", "{run}"], ["k1", "n"])
    args = runner.arguments({"k1": 0.1, "n": 7}, "/x/run.txt")
    assert args == ["prog", "--k1=0.1", "7", "/x/run.txt"]
    assert "shell" not in CommandRun.__call__.__code__.co_names
    assert "shell" not in CommandRun._run.__code__.co_names


@needs_cranfield
def test_cli_builtin_engine_on_cranfield(tmp_path, capsys):
    assert cli.main(["tune", "--collection", CRANFIELD, "--budget", "12", "--folds", "3",
                     "--json", str(tmp_path / "t.json"), "--quiet"]) == 0
    d = json.loads((tmp_path / "t.json").read_text())
    assert d["default_params"] == {"k1": 1.2, "b": 0.75}
    assert d["value"] >= d["default_value"] > 0.25
    assert d["cv"]["folds"] == 3 and len(d["cv"]["per_fold"]) == 3
    assert 0 <= d["cv_p_value"] <= 1


@needs_cranfield
def test_bm25s_tuned_from_python_and_from_its_command_line(tmp_path, capsys):
    pytest.importorskip("bm25s")
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    try:
        import bm25s_search
    finally:
        sys.path.pop(0)
    docs, topics, qrels = ir.load_cranfield(CRANFIELD)
    res = tune(lambda p: bm25s_search.search(docs, topics, p["k1"], p["b"]), SPACE, qrels,
               "map", budget=4, seed=0)
    default = bm25s_search.search(docs, topics, 1.2, 0.75)
    assert res.n_runs == 4 and res.value > 0.2
    qpath = tmp_path / "cran.qrels"
    qpath.write_text("".join(f"{q} 0 {d} {r}\n" for q, j in qrels.items()
                             for d, r in j.items()))
    script = os.path.join(HERE, "..", "examples", "bm25s_search.py")
    assert cli.main(["tune", "--qrels", str(qpath), "--param", "k1=0.1:3", "--param",
                     "b=0:1", "--budget", "4", "--seed", "0", "--json",
                     str(tmp_path / "t.json"), "--quiet", "--", sys.executable, script,
                     "--collection", CRANFIELD, "--k1", "{k1}", "--b", "{b}",
                     "--output", "{run}"]) == 0
    d = json.loads((tmp_path / "t.json").read_text())
    # the same points, the same runs (written exactly), the same values
    assert d["best_params"] == res.best_params
    assert d["value"] == pytest.approx(res.value, abs=1e-12)
    # and the value is trec_eval's
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
    best_run = bm25s_search.search(docs, topics, **res.best_params)
    per = ev.evaluate(best_run)
    assert res.value == pytest.approx(np.mean([per.get(q, {"map": 0})["map"]
                                               for q in qrels if qrels[q]]), abs=1e-12)
    assert dfrank.evaluate_run(qrels, default, ["map"], complete=True).all["map"] > 0.2


@pytest.mark.parametrize("edit,why", [
    (lambda e: e.update(per_query=[1.0] * len(e["per_query"])), None),   # plausible: kept
    (lambda e: e.update(per_query=[5.0] * len(e["per_query"])), "outside the metric"),
    (lambda e: e.update(per_query=[0.5] * 3), "per-query values for"),
    (lambda e: e.pop("params"), "its params are not"),
    (lambda e: e.update(per_query=[float("nan")] * len(e["per_query"])), "not finite"),
    (lambda e: e.update(status="weird"), "status 'weird'"),
])
def test_every_cached_point_is_checked_on_read(engine, tmp_path, edit, why):
    """A cache is trusted only for what it can be checked to be: a point off this tune's
    parameters, queries or the metric's range is an error naming it and its file."""
    cache = tmp_path / "c"
    tune((engine, "bm25"), SPACE, metric="map", budget=4, seed=0, cache=cache)
    [f] = sorted(cache.iterdir())
    d = json.loads(f.read_text())
    edit(d["points"][1])
    f.write_text(json.dumps(d))
    if why is None:
        tune((engine, "bm25"), SPACE, metric="map", budget=4, seed=0, cache=cache)
        return
    with pytest.raises(DataFormatError, match=f"cached point 2 does not belong.*{why}") as e:
        tune((engine, "bm25"), SPACE, metric="map", budget=4, seed=0, cache=cache)
    assert str(f) in str(e.value)


@pytest.mark.parametrize("sig, code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_stops_tune_its_engine_and_keeps_the_best(tmp_path, sig, code):
    """SIGINT or SIGTERM during tune left the engine's background processes running, its
    temporary folder behind, and the best point unsaved: the engine's process group is ended,
    the folder removed, the best so far written, and the command exits 130/143."""
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
    """Points that failed (an engine timeout) were cached as results and never run again: a
    resumed tune runs them again, unless ``keep_failed``."""
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


def test_a_run_sharing_no_query_with_the_qrels_fails(tmp_path):
    """An engine whose run shares no query with the qrels (a qid format mismatch) was tuned to
    a value of 0 everywhere: it is an error saying so."""
    qrels = write_file(tmp_path, "qrels.txt", QRELS)
    with pytest.raises(dfrank.TuneError, match="shares no query with the qrels"):
        dfrank.tune(lambda p: {"x9": {"a1": p["k"]}}, {"k": (0.0, 1.0)}, qrels, budget=3)


def test_settings_whose_means_tie_exactly_go_to_the_first_evaluated():
    """Two settings of exactly equal mean P@10 (0.3 + 0.2 + 0.1 and 0.1 + 0.2 + 0.3) were
    split by the float rounding of their means (the second won); sums taken exactly tie,
    and the first setting of the grid is chosen."""
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(3)} for i in range(3)}
    relevant_first = {0: [3, 2, 1], 1: [1, 2, 3]}

    def run_fn(params):   # query i has relevant_first[s][i] relevant documents on top
        s = int(params["s"])
        return {f"q{i}": {f"d{j}" if j < n else f"x{j}": 10.0 - j for j in range(10)}
                for i, n in enumerate(relevant_first[s])}

    res = tune(run_fn, {"s": (0, 1, "int")}, qrels, metric="p@10", strategy="grid",
               budget=2, resolution=2)
    assert [h["per_query"] for h in res.history] == [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]]
    assert np.mean([0.3, 0.2, 0.1]) < np.mean([0.1, 0.2, 0.3])   # rounding splits them
    assert res.best_params == {"s": 0}
