"""dfrank inside PyTerrier (no Java): the built-in engine as a retriever and a re-ranker,
the learned stage, the GridSearch drop-in, the fusion of pipelines, and pt.Experiment
around them."""

import json
import os

import numpy as np
import pytest

pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed (the pyterrier "
                                            "extra)")
pd = pytest.importorskip("pandas")

import dfrank  # noqa: E402
from dfrank import ir  # noqa: E402
from dfrank import pyterrier as dpt  # noqa: E402

from tests.inputs import small_collection  # noqa: E402


@pytest.fixture(scope="module")
def coll():
    docs, topics, qrels = small_collection(seed=3, n_docs=150, n_q=16)
    topics_df = pd.DataFrame({"qid": list(topics), "query": list(topics.values())})
    qrels_df = pd.DataFrame([(q, d, r) for q, j in qrels.items() for d, r in j.items()],
                            columns=["qid", "docno", "label"])
    return docs, topics, qrels, topics_df, qrels_df


def test_retriever_is_the_engine(coll):
    docs, topics, qrels, topics_df, _ = coll
    bm25 = dpt.Retriever(docs, "bm25", k1=0.9, b=0.4, num_results=20)
    res = bm25.transform(topics_df)
    assert list(res.columns[:4]) == ["qid", "docno", "score", "rank"] and "query" in res
    want = ir.Engine(docs, topics).run("bm25", {"k1": 0.9, "b": 0.4}, depth=20)
    got = {q: dict(zip(g["docno"], g["score"])) for q, g in res.groupby("qid")}
    assert got == {q: d for q, d in want.items() if d}
    assert (res.groupby("qid")["rank"].min() == 0).all()
    # as a re-ranker: the input's documents, scored by another model
    ql = dpt.Retriever(docs, "ql", mu=500.0)
    again = ql.transform(res)
    assert len(again) == len(res) and set(again["docno"]) == set(res["docno"])
    qlrun = ir.Engine(docs, topics).run("ql", {"mu": 500.0}, depth=10 ** 9)
    for q, d, s in zip(again["qid"], again["docno"], again["score"]):
        assert s == qlrun[q][d]
    with pytest.raises(ValueError, match="no parameter 'mu'"):
        dpt.Retriever(docs, "bm25", mu=3.0)


def test_learned_stage_in_a_pipeline_and_an_experiment(coll):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=50)
    features = bm25 >> (dpt.Retriever(docs, "bm25") ** dpt.Retriever(docs, "ql")
                        ** dpt.Retriever(docs, "sdm"))
    train, valid = topics_df.iloc[:10], topics_df.iloc[10:]
    stage = dpt.ltr(strategy="ca", restarts=2, seed=1)
    pipe = features >> stage
    pipe.fit(train, qrels_df, valid, qrels_df)
    # the stage's scores are DirectRanker.predict of the features, exactly
    res = features.transform(topics_df)
    out = stage.transform(res)
    X = np.stack(out["features"].to_numpy())
    np.testing.assert_array_equal(out["score"].to_numpy(), stage.ranker.predict(X))
    assert stage.ranker.coef_.shape == (3,)
    from ir_measures import AP, nDCG

    table = pt.Experiment([bm25, pipe], topics_df, qrels_df, [nDCG @ 10, AP],
                          names=["bm25", "dfrank ltr"], baseline=0)
    assert list(table["name"]) == ["bm25", "dfrank ltr"]
    assert 0 <= table["nDCG@10"].min() and table["AP"].max() <= 1


def test_regression_form_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="form='ltr'"):
        dpt.ltr(form="regression")


def test_tune_is_a_gridsearch_drop_in(coll):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=10 ** 6)   # every candidate
    grid = {bm25: {"k1": [0.1, 0.6, 1.2, 2.0, 3.0], "b": [0.0, 0.5, 1.0]}}
    best, setting = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", budget=12, seed=0,
                             return_type="best_setting")
    assert (bm25.k1, bm25.b) == (1.2, 0.75)            # restored
    k1 = next(v for t, n, v in setting if n == "k1")
    assert 0.1 <= k1 <= 3.0 and isinstance(k1, float)
    engine = ir.Engine(docs, topics, qrels)
    params = {n: v for _, n, v in setting}
    assert best == pytest.approx(engine.evaluate("bm25", params, "map"), abs=1e-12)
    pipe, res = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", budget=12, seed=0,
                         folds=3, return_type="tune_result")
    assert pipe is bm25 and bm25.k1 == res.best_params[next(k for k in res.best_params
                                                             if k.endswith("k1"))]
    assert res.cv_value is not None
    # whole numbers stay whole
    bm25_depth = dpt.Retriever(docs, "bm25")
    _, setting = dpt.GridSearch(bm25_depth, {bm25_depth: {"num_results": [5, 50]}}, topics_df,
                          qrels_df, budget=4, return_type="best_setting")
    assert isinstance(setting[0][2], int)
    with pytest.raises(ValueError, match="range of numbers or a choice"):
        dpt.GridSearch(bm25, {bm25: {"k1": ["0.5", 1.0]}}, topics_df, qrels_df)


def test_fusion_of_pipelines_equals_fuse(coll):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=40)
    ql = dpt.Retriever(docs, "ql", num_results=40)
    fusion = dpt.Fusion({"bm25": bm25, "ql": ql}, "map", restarts=2)
    fusion.fit(topics_df, qrels_df)
    runs = {"bm25": bm25.transform(topics_df), "ql": ql.transform(topics_df)}
    want = dfrank.fuse(qrels_df, runs, "map", restarts=2)
    assert fusion.result.weights == want.weights and fusion.result.value == want.value
    fused = fusion.transform(topics_df)
    got = dfrank.evaluate_run(qrels_df, fused[["qid", "docno", "score"]], ["map"])
    assert got.all["map"] == pytest.approx(want.value, abs=1e-12)


CRANFIELD = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "cranfield")


@pytest.mark.skipif(not os.path.isdir(CRANFIELD), reason="../shared absent")
def test_retriever_reads_a_cranfield_folder():
    bm25 = dpt.Retriever(CRANFIELD, "bm25", num_results=10)
    docs, topics, qrels = ir.load_cranfield(CRANFIELD)
    q = next(iter(topics))
    res = bm25.transform(pd.DataFrame({"qid": [q], "query": [topics[q]]}))
    assert len(res) == 10 and res["docno"].isin(docs).all()


# ------------------------------------------------------------------ issue #49
def test_stages_save_and_load_and_pickles_hold_no_collection(coll, tmp_path):
    import pickle

    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=30)
    features = bm25 >> (dpt.Retriever(docs, "bm25") ** dpt.Retriever(docs, "ql"))
    stage = dpt.ltr(strategy="ca", restarts=1, seed=0, metric="map")
    (features >> stage).fit(topics_df, qrels_df)
    stage.save(tmp_path / "stage.json")
    assert os.path.getsize(tmp_path / "stage.json") < 4000
    loaded = dpt.LearnedStage.load(tmp_path / "stage.json")
    assert loaded.ranker.metric == "map"
    res = features.transform(topics_df)
    pd.testing.assert_frame_equal(stage.transform(res), loaded.transform(res))
    # a fusion, saved and loaded with its pipelines
    ql = dpt.Retriever(docs, "ql", num_results=30)
    fusion = dpt.Fusion({"bm25": bm25, "ql": ql}, "map", restarts=1).fit(topics_df, qrels_df)
    fusion.save(tmp_path / "fusion.json")
    back = dpt.Fusion.load(tmp_path / "fusion.json", {"bm25": bm25, "ql": ql})
    pd.testing.assert_frame_equal(fusion.transform(topics_df), back.transform(topics_df))
    fusion.result.to_json(tmp_path / "result.json")
    again = dfrank.FusionResult.load(tmp_path / "result.json")
    runs = {"bm25": bm25.transform(topics_df), "ql": ql.transform(topics_df)}
    assert again.apply(runs).to_dict() == fusion.result.apply(runs).to_dict()
    with pytest.raises(ValueError, match="keeps the weights but not the fused run"):
        again.run()
    # a fusion file's weights and options are checked on load: NaN, inf and true as
    # weights once loaded (NaN scores), strings gave a bare ValueError, an option that is a
    # setting a bare TypeError
    saved = json.loads((tmp_path / "fusion.json").read_text())
    for weight in (float("nan"), float("inf"), True, "x"):
        bad = dict(saved, weights={"bm25": weight, "ql": 1.0})
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(dfrank.DataFormatError, match="finite numbers"):
            dpt.Fusion.load(tmp_path / "bad.json", {"bm25": bm25, "ql": ql})
    bad = dict(saved, settings=dict(saved["settings"], options={"metric": "map"}))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(dfrank.DataFormatError, match="'options' must be"):
        dpt.Fusion.load(tmp_path / "bad.json", {"bm25": bm25, "ql": ql})
    # a pickled pipeline holds no collection (1 kB, not the collection's size)
    blob = pickle.dumps(features >> stage)
    assert len(blob) < 20000 and docs[next(iter(docs))].encode() not in blob


def test_a_collection_is_indexed_once_and_pickles_refer_to_it(coll, tmp_path, monkeypatch):
    import pickle

    docs, topics, qrels, topics_df, qrels_df = coll
    a, b = dpt.Retriever(docs, "bm25"), dpt.Retriever(docs, "ql", mu=300.0)
    assert a.index is b.index is dpt.index_of(docs)
    first = a.transform(topics_df.iloc[:5])
    assert a.transform(topics_df.iloc[5:]) is not None and a.index is b.index
    # a DataFrame and a corpus iterator index the same documents
    frame = pd.DataFrame({"docno": list(docs), "text": list(docs.values())})
    corpus = iter({"docno": d, "text": t} for d, t in docs.items())
    for form in (frame, corpus):
        r = dpt.Retriever(form, "bm25")
        pd.testing.assert_frame_equal(r.transform(topics_df.iloc[:5]), first)
    # a path: the unpickled Retriever finds its collection again
    path = tmp_path / "docs.tsv"
    path.write_text("".join(f"{d}\t{t}\n" for d, t in docs.items()))
    on_disk = pickle.loads(pickle.dumps(dpt.Retriever(str(path), "bm25")))
    pd.testing.assert_frame_equal(on_disk.transform(topics_df.iloc[:5]), first)
    # in memory: found again by digest in a process that indexed it; elsewhere said
    # clearly, and attach gives it back
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(a)).transform(
        topics_df.iloc[:5]), first)
    lost = pickle.loads(pickle.dumps(a))
    monkeypatch.setattr(dpt.retriever, "_INDEXES", {})
    with pytest.raises(ValueError, match="unpickled without its collection.*attach"):
        lost.transform(topics_df.iloc[:5])
    pd.testing.assert_frame_equal(lost.attach(docs).transform(topics_df.iloc[:5]), first)


def test_gridsearch_terms_and_returns(coll):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=100)
    grid = {bm25: {"k1": [0.3, 0.6, 1.2, 2.4], "b": [0.0, 0.5, 1.0]}}
    _, space = dpt.gridsearch._space(grid)
    assert space["p0_k1"] == (0.3, 2.4, "log") and space["p1_b"] == (0.0, 1.0)
    kw = dict(budget=8, seed=0)
    pipe = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", 1, "joblib", False, None,
                    "opt_pipeline", **kw)
    assert pipe is bm25 and (bm25.k1, bm25.b) != (1.2, 0.75)
    bm25.set_parameter("k1", 1.2)
    bm25.set_parameter("b", 0.75)
    pipe, best, setting = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map",
                                   return_type="both", **kw)
    assert pipe is bm25 and bm25.k1 == dict((n, v) for _, n, v in setting)["k1"]
    assert isinstance(best, float) and 0 < best <= 1
    pipe, res = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", return_type="tune_result",
                         **kw)
    assert res.value == best and len(res.history) == 8
    # batches of topics give the same runs
    _, batched, _ = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", batch_size=5,
                             return_type="both", **kw)
    assert batched == best
    # strings are a choice among them
    model = dpt.Retriever(docs, "bm25", num_results=100)
    _, setting = dpt.GridSearch(model, {model: {"model": ["bm25", "ql"]}}, topics_df, qrels_df,
                          budget=4, return_type="best_setting")
    assert setting[0][2] in ("bm25", "ql") and model.model == "bm25"
    # KFoldGridSearch: the held-out topics' results and each fold's setting
    bm25.set_parameter("k1", 1.2)
    bm25.set_parameter("b", 0.75)
    folds = [topics_df.iloc[:8], topics_df.iloc[8:]]
    res_frame, settings = dpt.KFoldGridSearch(bm25, grid, folds, qrels_df, "map", budget=6)
    assert set(res_frame["qid"]) <= set(topics_df["qid"]) and len(settings) == 2
    assert (bm25.k1, bm25.b) == (1.2, 0.75)


def test_tune_scores_the_topics_given_only(coll):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=100)
    grid = {bm25: {"k1": [0.3, 2.4], "b": [0.0, 1.0]}}
    half = topics_df.iloc[:8]
    own = qrels_df[qrels_df["qid"].isin(half["qid"])]
    with pytest.warns(UserWarning, match="scores the 8 topics given; the qrels' .* other"):
        full = dpt.GridSearch(bm25, grid, half, qrels_df, "map", budget=6, seed=0,
                        return_type="best_setting")
    assert full == dpt.GridSearch(bm25, grid, half, own, "map", budget=6, seed=0,
                            return_type="best_setting")


def test_a_fusion_keeps_equal_weights_when_learned_ones_lose(coll, monkeypatch):
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25", num_results=40)
    ql = dpt.Retriever(docs, "ql", num_results=40)
    train, valid = topics_df.iloc[:8], topics_df.iloc[8:]
    fusion = dpt.Fusion({"bm25": bm25, "ql": ql}, "map", restarts=1)
    fusion.fit(train, qrels_df[qrels_df["qid"].isin(train["qid"])], valid, qrels_df)
    runs = {"bm25": bm25.transform(valid), "ql": ql.transform(valid)}
    own = qrels_df[qrels_df["qid"].isin(valid["qid"])]
    learned = np.mean(list(dfrank.fusion.fusion_values(own, runs, fusion.result.weights,
                                                       "map").values()))
    equal = np.mean(list(dfrank.fusion.fusion_values(own, runs, {"bm25": 0.5, "ql": 0.5},
                                                     "map").values()))
    assert fusion.choice.startswith("learned" if learned >= equal else "equal")
    assert fusion.weights == (fusion.result.weights if learned >= equal
                              else {"bm25": 0.5, "ql": 0.5})
    # learned weights that lose on validation: the equal weights are kept and said
    monkeypatch.setattr(dfrank.pyterrier.fused, "fusion_values",
                        lambda q, r, w, *a: {"1": 0.1 if w != {"bm25": 0.5, "ql": 0.5}
                                             else 0.2})
    fusion.fit(train, qrels_df, valid, qrels_df)
    assert fusion.weights == {"bm25": 0.5, "ql": 0.5}
    assert fusion.choice.startswith("equal weights: the learned ones score 0.1000 on the "
                                    "validation topics, the equal ones 0.2000")
    # the names show the settings: two fusions of other settings are two experiments
    other = dpt.Fusion({"bm25": bm25, "ql": ql}, "map", norm="zscore")
    assert repr(other) != repr(fusion) and "zscore" in repr(other)


def test_a_qid_with_two_query_texts_is_refused():
    """A topics frame with one qid and two query texts was answered for one of them, silently:
    refused naming the qid; the same text twice is one topic."""
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


def test_pyterrier_stages_name_the_frame_and_column():
    """PyTerrier stages fed a frame without a needed column, no rows, or features of varying
    length raised a bare KeyError or numpy's error: each names the frame and the column."""
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


def test_indexes_are_keyed_by_content_not_by_time_size_or_identity(coll, tmp_path):
    """A collection file overwritten in place inside a Cranfield-like folder, or replaced
    by one of the same size and time (``cp -p``), was served its stale index; a dict copy
    of a collection was indexed again (issue #64)."""
    docs = coll[0]
    assert dpt.index_of(dict(docs)) is dpt.index_of(docs)         # a copy: the same index
    path = tmp_path / "docs.tsv"
    path.write_text("d1\tapple pie\nd2\tbanana\n")
    first = dpt.index_of(str(path))
    st = os.stat(path)
    path.write_text("d1\tapple tea\nd2\tcherry\n")                 # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))             # and time
    second = dpt.index_of(str(path))
    assert second is not first
    assert dpt.Retriever(str(path), "bm25").transform(
        pd.DataFrame({"qid": ["1"], "query": ["cherry"]}))["docno"].tolist() == ["d2"]
    folder = tmp_path / "coll"
    folder.mkdir()
    (folder / "docs.tsv").write_text("d1\tapple pie\nd2\tbanana\n")
    a = dpt.index_of(str(folder / "docs.tsv"))
    (folder / "docs.tsv").write_text("d1\tapple tea\nd2\tcherry\n")
    assert dpt.index_of(str(folder / "docs.tsv")) is not a


def test_tune_runs_in_several_processes_with_a_collection_in_memory(coll):
    """``jobs=2`` with the guide's in-memory collection failed in joblib's workers with
    "unpickled without its collection" (issue #64): the workers get its index along."""
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25")
    grid = {bm25: {"k1": [0.3, 1.2, 2.0], "b": [0.25, 0.75]}}
    one = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", budget=8, seed=0,
                   return_type="best_setting")
    two = dpt.GridSearch(bm25, grid, topics_df, qrels_df, "map", budget=8, seed=0, jobs=2,
                   return_type="best_setting")
    assert one == two


def test_the_tune_cache_knows_a_pipeline_by_what_it_computes(coll, tmp_path):
    """The cache was keyed by ``repr(pipeline)``: a transformer's default repr holds its
    memory address (its cache refused in every later process), and a Retriever tuned once
    shows its tuned k1 and b (refused when tuned again in the same process) (issue #64)."""
    docs, topics, qrels, topics_df, qrels_df = coll

    class Keep(pt.Transformer):
        def transform(self, res):
            return res

    bm25 = dpt.Retriever(docs, "bm25")
    grid = {bm25: {"k1": [0.3, 1.2, 2.0], "b": [0.25, 0.75]}}
    pipe = bm25 >> Keep()
    described = dpt.gridsearch._described(pipe, grid)
    other = dpt.Retriever(docs, "bm25", k1=2.0)      # another process's, or tuned before
    assert " at 0x" not in described and described == dpt.gridsearch._described(
        other >> Keep(), {other: grid[bm25]})
    cache = tmp_path / "cache"
    first = dpt.GridSearch(pipe, grid, topics_df, qrels_df, "map", budget=6, seed=0, cache=cache,
                     return_type="tune_result")[1]
    assert (bm25.k1, bm25.b) != (1.2, 0.75) or first.n_runs > 0     # tuned: k1, b moved
    again = dpt.GridSearch(pipe, grid, topics_df, qrels_df, "map", budget=6, seed=0, cache=cache,
                     return_type="tune_result")[1]
    assert again.n_runs == 0 and again.value == first.value


@pytest.mark.parametrize("what", ["collection", "topic text", "grid values", "judgment"])
def test_a_pipelines_tune_cache_answers_only_for_the_inputs_that_made_it(coll, tmp_path, what):
    """The cache knew a pipeline by its repr, the tuned parameters and the judgments: a
    Retriever of another collection, other query texts, or an exact grid whose values
    changed but not their number were answered with the old runs. Each changed alone is
    refused."""
    from dfrank.errors import UsageError

    docs, topics, qrels, topics_df, qrels_df = coll
    grid = [1.2, 2.0]

    def tuned(docs=docs, topics_df=topics_df, qrels_df=qrels_df, grid=grid):
        bm25 = dpt.Retriever(docs, "bm25")
        return dpt.GridSearch(bm25, {bm25: {"k1": grid, "b": [0.75]}}, topics_df, qrels_df, "map",
                        exact=True, cache=tmp_path / "c", return_type="tune_result")[1]

    first = tuned()
    assert tuned().n_runs == 0 and first.n_runs == 2
    changed = {}
    if what == "collection":
        d = sorted(docs)[3]
        changed["docs"] = dict(docs, **{d: docs[d] + " " + docs[sorted(docs)[0]]})
    elif what == "topic text":
        changed["topics_df"] = topics_df.assign(query=topics_df["query"] + " w1x")
    elif what == "grid values":
        changed["grid"] = [1.2, 1.6]
    else:
        changed["qrels_df"] = qrels_df.assign(label=qrels_df["label"].where(
            qrels_df.index != 0, qrels_df["label"] + 1))
    with pytest.raises(UsageError, match="the cache holds runs of another"):
        tuned(**changed)


def test_a_one_value_list_fixes_its_parameter_as_gridsearch_reads_it(coll):
    """``tune(r, {r: {"k1": [1.0, 1.4], "b": [0.75]}})`` was refused ("a range needs two
    different values"), where ``pt.GridSearch`` fixes b at 0.75: b is fixed, in the
    setting returned too, and the search is the one over k1 with b set."""
    docs, topics, qrels, topics_df, qrels_df = coll
    r = dpt.Retriever(docs, "bm25", b=0.3)
    value, setting = dpt.GridSearch(r, {r: {"k1": [1.0, 1.4], "b": [0.75]}}, topics_df, qrels_df,
                              "map", budget=6, seed=0, return_type="best_setting")
    assert [(name, v) for _, name, v in setting][1] == ("b", 0.75) and r.b == 0.3
    alone = dpt.Retriever(docs, "bm25", b=0.75)
    want = dpt.GridSearch(alone, {alone: {"k1": [1.0, 1.4]}}, topics_df, qrels_df, "map", budget=6,
                    seed=0, return_type="best_setting")
    assert value == want[0] and setting[0][2] == want[1][0][2]
    with pytest.raises(ValueError, match="nothing to search"):
        dpt.GridSearch(r, {r: {"k1": [1.2], "b": [0.75]}}, topics_df, qrels_df, "map")


def test_pyterriers_measure_strings_mean_what_they_mean_there(coll):
    """tune, ltr and Fusion refused the trec_eval measure strings that pt.GridSearch and
    pt.Experiment take ("ndcg_cut_10", "P_10", "recip_rank") (issue #64): each is read as
    ir_measures reads it for PyTerrier, and one dfrank does not compute is refused by name
    with the reason."""
    import ir_measures

    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25")
    grid = {bm25: {"k1": [0.3, 1.2, 2.0], "b": [0.25, 0.75]}}
    for trec, measure in (("ndcg_cut_10", "nDCG@10"), ("P_10", "P@10"),
                          ("recip_rank", "RR"), ("map_cut_10", "AP@10")):
        assert ir_measures.parse_trec_measure(trec) == [ir_measures.parse_measure(measure)]
        ours = dpt.GridSearch(bm25, grid, topics_df, qrels_df, trec, budget=6, seed=0,
                        return_type="best_setting")
        assert ours == dpt.GridSearch(bm25, grid, topics_df, qrels_df, measure, budget=6, seed=0,
                                return_type="best_setting"), trec
    features = dpt.Retriever(docs, "bm25", num_results=30) >> (
        dpt.Retriever(docs, "bm25") ** dpt.Retriever(docs, "ql"))
    stage = dpt.ltr(strategy="ca", restarts=1, seed=0, metric="P_10")
    (features >> stage).fit(topics_df, qrels_df)
    assert dfrank.metrics.get(stage.ranker.metric).label == "P@10"
    for name in ("bpref", "infAP"):
        with pytest.raises(ValueError, match="not one dfrank's kernels compute exactly"):
            dpt.GridSearch(bm25, grid, topics_df, qrels_df, name, budget=4)
        with pytest.raises(ValueError, match="not one dfrank's kernels compute exactly"):
            dpt.Fusion({"a": bm25, "b": dpt.Retriever(docs, "ql")}, name)


def test_tune_shows_pt_gridsearchs_mean_beside_its_own(coll):
    """dfrank's tune value on half of Cranfield's topics was about twice pt.GridSearch's
    "Best map" for the same setting: pt averages over every qrels topic (those it did not
    run count 0), dfrank over the topics given (issue #64). The result keeps both, named."""
    docs, topics, qrels, topics_df, qrels_df = coll
    half = topics_df.iloc[:8]
    bm25 = dpt.Retriever(docs, "bm25")
    grid = {bm25: {"k1": [0.3, 1.2, 2.0], "b": [0.25, 0.75]}}
    with pytest.warns(UserWarning, match="qrels_value is its mean"):
        _, res = dpt.GridSearch(bm25, grid, half, qrels_df, "map", budget=6, seed=0,
                          return_type="tune_result")
    every = qrels_df["qid"].astype(str).nunique()
    assert res.qrels_value == pytest.approx(res.value * len(res.per_query) / every)
    assert "over every qrels topic (pt.GridSearch's mean)" in res.summary()
    # PyTerrier itself, on the setting dfrank chose, reports qrels_value
    fixed = {bm25: {name: [value] for name, value in
                    ((n, getattr(bm25, n)) for n in ("k1", "b"))}}
    theirs, _ = pt.GridSearch(bm25, fixed, half, qrels_df, "map", return_type="best_setting")
    assert theirs == pytest.approx(res.qrels_value, abs=1e-9)


@pytest.mark.parametrize("n_folds", [2, 3, 5])
def test_kfold_grid_search_as_pyterrier_calls_it(coll, tmp_path, n_folds):
    """Called as pt.KFoldGridSearch is (one qrels frame), 3 or more folds failed ("docno
    '12' appears twice": the frame was concatenated once per training fold), and a cache
    was refused on fold 2 (issue #64). With exact=True it tries the listed values and
    chooses as PyTerrier does: the same settings and held-out results."""
    docs, topics, qrels, topics_df, qrels_df = coll
    bm25 = dpt.Retriever(docs, "bm25")
    grid = {bm25: {"k1": [0.3, 0.9, 1.2, 2.0], "b": [0.25, 0.5, 0.75]}}
    folds = [topics_df.iloc[i::n_folds] for i in range(n_folds)]
    res, settings = dpt.KFoldGridSearch(bm25, grid, folds, qrels_df, "map", exact=True,
                                        cache=tmp_path / "cache")
    theirs, their_settings = pt.KFoldGridSearch(bm25, grid, folds, qrels_df, "map")
    assert [[(n, v) for _, n, v in s] for s in settings] == \
        [[(n, v) for _, n, v in s] for s in their_settings]
    key = ["qid", "docno"]
    pd.testing.assert_frame_equal(
        res.sort_values(key).reset_index(drop=True)[key + ["score"]],
        theirs.sort_values(key).reset_index(drop=True)[key + ["score"]])
    assert (bm25.k1, bm25.b) == (1.2, 0.75)
    # a range search per fold, each fold's cache its own, read again on a second call
    for _ in range(2):
        _, ranged = dpt.KFoldGridSearch(bm25, grid, folds, qrels_df, "map", budget=6,
                                        cache=tmp_path / "ranged")
    assert len(ranged) == n_folds
