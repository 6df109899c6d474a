"""Models that engines load: each format against a hand-written expected file and the
engine's documented schema; a RankLib model scored as RankLib scores it ranks a LETOR file
as dfrank does; refusals name their reason; the command line."""

import gzip
import json
import os
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import dfrank
from dfrank import DataFormatError, LinearRanker, cli
from dfrank.formats import ExportError, read_ranklib

HERE = os.path.dirname(__file__)
EXPECTED = os.path.join(HERE, "data", "export")
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
OHSUMED = os.path.join(SHARED, "ohsumed-letor3", "QueryLevelNorm", "Fold1")
needs_ohsumed = pytest.mark.skipif(not os.path.isdir(OHSUMED), reason="../shared absent")

NAMES = ["title_bm25", "body_bm25", "pagerank"]
W = [0.5, -0.25, 2.0]
NORMS = {"plain": None,
         "std": {"kind": "standard", "mean": [1, -2, 0.5], "std": [2, 4, 0.25]},
         "minmax": {"kind": "minmax", "min": [0, 0, 1], "max": [10, 20, 3]}}


def expected(name):
    with open(os.path.join(EXPECTED, name)) as f:
        return f.read()


def model(norm="plain", **kw):
    return LinearRanker(W, normalization=NORMS[norm], **kw)


# ----------------------------------------------------------------- expected files
@pytest.mark.parametrize("norm", ["plain", "std"])
def test_ranklib_matches_expected_file(norm):
    assert model(norm).export(format="ranklib") == expected(f"{norm}.ranklib")


@pytest.mark.parametrize("norm", ["plain", "std"])
def test_vespa_matches_expected_file(norm):
    assert model(norm).export(format="vespa", names=NAMES) == expected(f"{norm}.vespa")


@pytest.mark.parametrize("fmt", ["es-ltr", "opensearch-ltr"])
@pytest.mark.parametrize("norm", ["plain", "std", "minmax"])
def test_ltr_plugin_matches_expected_file(fmt, norm):
    got = json.loads(model(norm).export(format=fmt, names=NAMES))
    want = json.loads(expected(f"{norm}.es-ltr.json"))
    assert json.loads(got["model"]["model"].pop("definition")) == \
        json.loads(want["model"]["model"].pop("definition"))
    assert got == want


@pytest.mark.parametrize("norm", ["std", "minmax"])
def test_solr_matches_expected_file(norm):
    got = json.loads(model(norm).export(format="solr-ltr", names=NAMES))
    assert got == json.loads(expected(f"{norm}.solr-ltr.json"))


# ----------------------------------------------------------------- documented schemas
def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)


@pytest.mark.parametrize("norm", ["plain", "std", "minmax"])
def test_ltr_plugin_schema(norm):
    """The _createmodel body: model.name, model.model.type "model/linear", definition a
    JSON string of feature -> weight, feature_normalizers feature -> {standard: {mean,
    standard_deviation}} or {min_max: {minimum, maximum}}."""
    body = json.loads(model(norm).export(format="es-ltr", names=NAMES))
    assert set(body) == {"model"} and set(body["model"]) == {"name", "model"}
    assert isinstance(body["model"]["name"], str)
    m = body["model"]["model"]
    assert m["type"] == "model/linear" and isinstance(m["definition"], str)
    definition = json.loads(m["definition"])
    assert list(definition) == NAMES and all(_number(v) for v in definition.values())
    norms = m.get("feature_normalizers", {})
    assert set(norms) == (set() if norm == "plain" else set(NAMES))
    for spec in norms.values():
        (kind, consts), = spec.items()
        keys = {"standard": {"mean", "standard_deviation"},
                "min_max": {"minimum", "maximum"}}[kind]
        assert set(consts) == keys and all(_number(v) for v in consts.values())


@pytest.mark.parametrize("norm", ["plain", "std", "minmax"])
def test_solr_schema(norm):
    """LinearModel: class, name, features [{name, norm?}], params.weights feature ->
    weight; a normalizer's params are strings (Solr's documented examples)."""
    m = json.loads(model(norm).export(format="solr-ltr", names=NAMES))
    assert m["class"] == "org.apache.solr.ltr.model.LinearModel" and isinstance(m["name"], str)
    assert [f["name"] for f in m["features"]] == NAMES
    assert list(m["params"]["weights"]) == NAMES
    assert all(_number(v) for v in m["params"]["weights"].values())
    for f in m["features"]:
        assert ("norm" in f) == (norm != "plain")
        if "norm" in f:
            assert f["norm"]["class"] in ("org.apache.solr.ltr.norm.StandardNormalizer",
                                          "org.apache.solr.ltr.norm.MinMaxNormalizer")
            assert all(isinstance(v, str) and np.isfinite(float(v))
                       for v in f["norm"]["params"].values())


@pytest.mark.parametrize("norm", ["plain", "std", "minmax"])
def test_exports_score_as_the_model(norm, rng=np.random.default_rng(3)):
    """Each format's own arithmetic (normalizers applied as the engines document them)
    gives the model's scores."""
    r = model(norm)
    X = rng.normal(size=(50, 3)) * 5
    want = r.predict(X)
    m = json.loads(r.export(format="es-ltr", names=NAMES))["model"]["model"]
    w = json.loads(m["definition"])
    cols = []
    for j, f in enumerate(NAMES):
        spec = m.get("feature_normalizers", {}).get(f)
        x = X[:, j]
        if spec and "standard" in spec:
            x = (x - spec["standard"]["mean"]) / spec["standard"]["standard_deviation"]
        elif spec:
            lo, hi = spec["min_max"]["minimum"], spec["min_max"]["maximum"]
            x = (x - lo) / (hi - lo)
        cols.append(w[f] * x)
    np.testing.assert_allclose(np.sum(cols, axis=0), want, rtol=1e-12, atol=1e-12)
    # vespa: evaluate the expression with the features bound to their values
    expr = re.search(r"expression: (.*)", r.export(format="vespa", names=NAMES)).group(1)
    got = eval(expr, {}, dict(zip(NAMES, X.T)))   # noqa: S307 -- our own arithmetic text
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # ranklib: the folded weights differ from the model by a constant per document
    ids, wr, _ = _ranklib_parse(r.export(format="ranklib"))
    diff = X @ wr - want
    np.testing.assert_allclose(diff, diff[0], atol=1e-9)


# ----------------------------------------------------------------- RankLib
def _ranklib_parse(text):
    """RankLib's documented model grammar, read independently of dfrank: lines starting
    with '##' are comments; the first other line is whitespace-separated fid:weight, fid an
    integer >= 1 (Integer.parseInt), weight a double (Double.parseDouble)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("##")]
    assert text.startswith("## Coordinate Ascent\n") and len(lines) == 1
    pairs = [tok.split(":") for tok in lines[0].split()]
    assert all(len(p) == 2 and re.fullmatch(r"[0-9]+", p[0]) for p in pairs)
    ids = np.array([int(p[0]) for p in pairs])
    w = np.array([float(p[1]) for p in pairs])
    return ids, w, "Coordinate Ascent"


def _ranklib_scores(model_text, letor_path):
    """Scores as RankLib computes them: each feature value parsed to a 32-bit float
    (DataPoint), the score a double sum of weight * value over the model's features."""
    ids, w, _ = _ranklib_parse(model_text)
    qids, rows = [], []
    with gzip.open(letor_path, "rt") as f:
        for line in f:
            toks = line.split("#")[0].split()
            qids.append(toks[1])
            feats = dict(t.split(":") for t in toks[2:])
            rows.append([np.float32(feats.get(str(i), "0")) for i in ids])
    X = np.asarray(rows, dtype=np.float32).astype(np.float64)
    return qids, X @ w


@needs_ohsumed
def test_ranklib_model_ranks_a_letor_file_as_dfrank(tmp_path):
    train = dfrank.load_svmlight(os.path.join(OHSUMED, "train.txt.gz"))
    test_path = os.path.join(OHSUMED, "test.txt.gz")
    test = dfrank.load_svmlight(test_path)
    ranker = dfrank.maximize(train, "ndcg@10", "ca", restarts=2, seed=0).ranker
    text = ranker.export(tmp_path / "m.txt", format="ranklib")
    _, theirs = _ranklib_scores(text, test_path)
    ours = ranker.predict(test)
    for a, b in zip(test.qptr[:-1], test.qptr[1:]):
        assert np.array_equal(np.argsort(-ours[a:b], kind="stable"),
                              np.argsort(-theirs[a:b], kind="stable"))
    for m in ("ndcg@10", "map", "p@5"):
        assert dfrank.evaluate(theirs, test, m) == pytest.approx(
            dfrank.evaluate(ours, test, m), abs=1e-15)
    # and read back: the same weights
    back = LinearRanker.load_ranklib(tmp_path / "m.txt", raw_features=True)
    np.testing.assert_array_equal(back.weights, ranker.weights)


@pytest.mark.skipif(not os.environ.get("DFRANK_RANKLIB_JAR"),
                    reason="set DFRANK_RANKLIB_JAR to RankLib's jar to score with RankLib")
@needs_ohsumed
def test_ranklib_itself_ranks_as_dfrank(tmp_path):
    train = dfrank.load_svmlight(os.path.join(OHSUMED, "train.txt.gz"))
    test_path = os.path.join(OHSUMED, "test.txt.gz")
    test = dfrank.load_svmlight(test_path)
    ranker = dfrank.maximize(train, "ndcg@10", "ca", restarts=1, seed=0).ranker
    ranker.export(tmp_path / "m.txt", format="ranklib")
    with gzip.open(test_path, "rt") as f, open(tmp_path / "test.txt", "w") as g:
        g.write(f.read())
    subprocess.run(["java", "-jar", os.environ["DFRANK_RANKLIB_JAR"], "-load",
                    str(tmp_path / "m.txt"), "-rank", str(tmp_path / "test.txt"), "-score",
                    str(tmp_path / "scores.txt")], check=True, capture_output=True)
    theirs = np.loadtxt(tmp_path / "scores.txt", usecols=2)
    ours = ranker.predict(test)
    for a, b in zip(test.qptr[:-1], test.qptr[1:]):
        assert np.array_equal(np.argsort(-ours[a:b], kind="stable"),
                              np.argsort(-theirs[a:b], kind="stable"))


def test_load_ranklib_reads_sparse_ids_and_refuses_others(tmp_path):
    p = tmp_path / "m.txt"
    p.write_text("## Coordinate Ascent\n## Restart = 2\n3:0.5 1:-1.5E-3 7:2\n")
    r = LinearRanker.load_ranklib(p, raw_features=True)
    np.testing.assert_array_equal(r.feature_ids, np.arange(1, 8))
    np.testing.assert_array_equal(r.weights, [-1.5e-3, 0, 0.5, 0, 0, 0, 2])
    p.write_text("## LambdaMART\n## No. of trees = 1\n<ensemble></ensemble>\n")
    with pytest.raises(dfrank.DataFormatError, match="LambdaMART"):
        read_ranklib(p)
    p.write_text("## Coordinate Ascent\n1:0.5 2:x\n")
    with pytest.raises(dfrank.DataFormatError, match="line 2.*2:x"):
        read_ranklib(p)
    p.write_text("## Coordinate Ascent\n1:0.5 1:0.2\n")
    with pytest.raises(dfrank.DataFormatError, match="once"):
        read_ranklib(p)
    p.write_text("## Coordinate Ascent\n## Restart = 1\n")
    with pytest.raises(dfrank.DataFormatError, match="no weights line"):
        read_ranklib(p)


def test_exported_ranklib_reads_back_exactly(tmp_path):
    r = LinearRanker([0.1, -1 / 3, 1e-300, 7.0], feature_ids=[2, 3, 5, 9])
    r.export(tmp_path / "m.txt", format="ranklib")
    back = LinearRanker.load_ranklib(tmp_path / "m.txt", raw_features=True)
    dense = np.zeros(9)
    dense[[1, 2, 4, 8]] = r.weights
    np.testing.assert_array_equal(back.weights, dense)


# ----------------------------------------------------------------- refusals
def test_query_level_normalization_refused_for_engines():
    r = LinearRanker(W, normalization={"kind": "query"})
    for fmt in ("es-ltr", "opensearch-ltr", "solr-ltr", "vespa"):
        with pytest.raises(ExportError, match="within each query"):
            r.export(format=fmt, names=NAMES)
    # RankLib scores the files it is given: allowed, with a note in the model
    assert "normalized within each query" in r.export(format="ranklib")


@needs_ohsumed
@pytest.mark.parametrize("where", ["QueryLevelNorm", "elsewhere"])
def test_models_learned_on_features_normalized_within_queries_know_it(where, tmp_path):
    """Whether a model's features were normalized within each query was read from its
    file's path (a folder named QueryLevelNorm): README's MQ2008 model, or OHSUMED's files
    copied elsewhere, exported to es-ltr without a word (issue #64). It is decided from the
    data, whatever the path."""
    path = os.path.join(OHSUMED, "train.txt.gz")
    if where == "elsewhere":
        shutil.copy(path, tmp_path / "train.txt.gz")
        path = str(tmp_path / "train.txt.gz")
    ranker = dfrank.maximize(dfrank.load_svmlight(path), "ndcg@10", "ca", restarts=1,
                             seed=0).ranker
    assert ranker.normalization == {"kind": "query"}
    with pytest.raises(ExportError, match="QueryLevelNorm"):
        ranker.export(format="es-ltr", names=[f"f{i}" for i in range(45)])
    back = LinearRanker.load(ranker.save(tmp_path / "m.json") or tmp_path / "m.json")
    assert back.normalization == {"kind": "query"}


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "mq2008-letor4")),
                    reason="../shared absent")
def test_the_rule_for_features_normalized_within_queries():
    """LETOR's QueryLevelNorm files and MQ2008 are detected; the LightGBM example's raw
    features, features scaled by constants over the whole set and binary features are
    not; dfrank's generated data (make_letor_like, the demo) is."""
    from dfrank.data.datasets import load_demo, make_letor_like
    from dfrank.data.normalization import apply, fit, within_queries

    mq = dfrank.load_svmlight(os.path.join(SHARED, "mq2008-letor4", "Fold1", "train.txt.gz"))
    raw = dfrank.load_svmlight(os.path.join(SHARED, "lightgbm-lambdarank", "rank.train.gz"))
    assert within_queries(mq) and not within_queries(raw)
    assert not within_queries(apply(raw, fit(raw.X, "minmax")))
    assert within_queries(make_letor_like(n_queries=10, docs_per_query=8, n_features=4))
    assert within_queries(load_demo()[0])
    binary = dfrank.RankingData.from_arrays((np.arange(40).reshape(20, 2) % 3 == 0) * 1.0,
                                            np.zeros(20), np.repeat(np.arange(5), 4))
    assert not within_queries(binary)


def test_a_model_that_does_not_say_how_it_was_normalized_exports_with_a_warning():
    """A model made by hand, read from RankLib's format or saved by an older dfrank has no
    normalization: it exports with one warning saying so; one that says its features are
    as the engine computes them ({"kind": "none"}) exports silently."""
    import warnings

    with pytest.warns(UserWarning, match="does not record how its features were") as got:
        LinearRanker(W).export(format="es-ltr", names=NAMES)
    assert len(got) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearRanker(W, normalization={"kind": "none"}).export(format="es-ltr", names=NAMES)


def test_unknown_names_refused():
    r = model()
    with pytest.raises(ExportError, match="names its features"):
        r.export(format="solr-ltr")
    with pytest.raises(ExportError, match="2 names for 3 features"):
        r.export(format="es-ltr", names=NAMES[:2])
    with pytest.raises(ExportError, match="no name for feature id"):
        r.export(format="vespa", names={1: "a", 2: "b"})
    with pytest.raises(ExportError, match="same name"):
        r.export(format="vespa", names=["a", "a", "b"])
    with pytest.raises(ValueError, match="unknown model format 'xgboost'"):
        r.export(format="xgboost")
    # names from the model's meta (a DataFrame's columns) or a dict by feature id
    assert "pagerank" in model(meta={"feature_names": NAMES}).export(format="vespa")
    assert "pagerank" in r.export(format="vespa", names={1: "t", 2: "b", 3: "pagerank"})


def test_normalization_kept_in_the_json_model(tmp_path):
    r = model("minmax")
    r.save(tmp_path / "m.json")
    back = LinearRanker.load(tmp_path / "m.json")
    assert back.normalization["kind"] == "minmax"
    X = np.random.default_rng(0).normal(size=(20, 3))
    np.testing.assert_array_equal(back.predict(X), r.predict(X))
    with pytest.raises(ValueError, match="'std' must be > 0"):
        LinearRanker(W, normalization={"kind": "standard", "mean": [0] * 3, "std": [1, 0, 1]})
    with pytest.raises(ValueError, match="'min' must be 3 finite numbers"):
        LinearRanker(W, normalization={"kind": "minmax", "min": [0], "max": [1, 2, 3]})
    with pytest.raises(ValueError, match="kind"):
        LinearRanker(W, normalization={"kind": "zscore"})


# ----------------------------------------------------------------- command line
def test_cli_export(tmp_path, capsys):
    model("std").save(tmp_path / "m.json")
    names = tmp_path / "names.txt"
    names.write_text("# one per line\ntitle_bm25\nbody_bm25\n\npagerank\n")
    assert cli.main(["export", str(tmp_path / "m.json"), "--format", "vespa", "--names-file",
                     str(names)]) == 0
    assert capsys.readouterr().out == expected("std.vespa")
    assert cli.main(["export", str(tmp_path / "m.json"), "--format", "solr-ltr", "--names",
                     ",".join(NAMES), "-o", str(tmp_path / "solr.json")]) == 0
    assert json.loads((tmp_path / "solr.json").read_text()) == \
        json.loads(expected("std.solr-ltr.json"))
    assert cli.main(["export", str(tmp_path / "m.json"), "--format", "es-ltr"]) == 2
    assert "names its features" in capsys.readouterr().err


def test_export_names_are_names_and_a_file_is_names_file(tmp_path, capsys):
    """``dfrank export m.json --names no_such_file`` on a one-feature model once wrote
    ``no_such_file`` as the feature's name where the user meant a file: --names takes names,
    --names-file a file (a file given to --names is refused, naming --names-file)."""
    one = str(tmp_path / "one.json")
    LinearRanker([0.5]).save(one)
    export = ["export", one, "--format", "es-ltr"]
    assert cli.main([*export, "--names-file", str(tmp_path / "no_such_file")]) == 2
    assert "--names-file" in capsys.readouterr().err
    assert cli.main([*export, "--names", "no_such_file.txt"]) == 2
    assert "--names-file no_such_file.txt" in capsys.readouterr().err
    assert cli.main([*export, "--names", "bm25"]) == 0
    assert "bm25" in capsys.readouterr().out
    names = tmp_path / "names.txt"
    names.write_text("bm25\n")
    assert cli.main([*export, "--names", str(names)]) == 2
    assert f"--names-file {names}" in capsys.readouterr().err
    assert cli.main([*export, "--names-file", str(names)]) == 0
    assert "bm25" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main([*export, "--names", "a", "--names-file", str(names)])
    LinearRanker([0.5, -0.25, 1.0]).save(tmp_path / "three.json")
    assert cli.main(["export", str(tmp_path / "three.json"), "--format", "es-ltr", "--names",
                     "features"]) == 2
    assert "is one name (a file of names is --names-file)" in capsys.readouterr().err


@needs_ohsumed
def test_cli_fit_normalize_refuses_query_level_files(tmp_path, capsys):
    shutil.copy(os.path.join(OHSUMED, "train.txt.gz"), tmp_path / "t.txt.gz")
    assert cli.main(["fit", str(tmp_path / "t.txt.gz"), "--normalize", "standard",
                     "--quiet"]) == 2
    assert "normalized within each query already" in capsys.readouterr().err


def test_cli_fit_normalize_keeps_constants(tmp_path):
    rng = np.random.default_rng(1)
    lines = []
    for q in range(12):
        for d in range(8):
            x = rng.normal(size=3) * [1, 100, 0.01] + [0, 50, 3]
            lab = int(x[0] + x[1] / 100 + rng.normal() > 0.8)
            lines.append(f"{lab} qid:{q} " + " ".join(f"{j + 1}:{v:.6f}"
                                                       for j, v in enumerate(x)))
    (tmp_path / "train.txt").write_text("\n".join(lines) + "\n")
    assert cli.main(["fit", str(tmp_path / "train.txt"), "--normalize", "standard",
                     "--restarts", "1", "--quiet", "-o", str(tmp_path / "m.json")]) == 0
    r = LinearRanker.load(tmp_path / "m.json")
    data = dfrank.load_svmlight(tmp_path / "train.txt")
    assert r.normalization["kind"] == "standard"
    np.testing.assert_allclose(r.normalization["mean"], data.X.mean(axis=0))
    # the model applies its constants: the train metric it reports is the saved model's
    assert r.evaluate(data, "ndcg@10") == pytest.approx(r.meta["train_value"], abs=1e-12)


# ----------------------------------------------------------------- names pasted into code
EVIL = ['evil") + 1e9 * attribute(x) + ("',
        "a} rank-profile pwn inherits default { first-phase { expression: 1 } }"]


def _vespa_terms(text):
    """(name of the profile, [(weight, feature), ...]) of an exported Vespa profile, read
    as Vespa reads it: the frame line by line, then the expression term by term; a feature
    ends at ' + ' or ' - ' outside parentheses and quoted strings."""
    lines = text.split("\n")
    assert len(lines) == 6 and lines[5] == "", text
    head = re.fullmatch(r"rank-profile (\S+) inherits default \{", lines[0])
    assert head and lines[1:4:2] == ["    first-phase {", "    }"] and lines[4] == "}"
    body = lines[2].removeprefix("        expression: ")
    assert body != lines[2]
    terms, i, sign = [], 0, 1.0
    if body.startswith("- "):
        sign, i = -1.0, 2
    while i < len(body):
        num = re.match(r"[0-9.]+ \* ", body[i:])
        assert num, body[i:]
        weight = sign * float(num.group()[:-3])
        i += num.end()
        depth, quoted, escaped, start = 0, False, False, i
        while i < len(body):
            c = body[i]
            if quoted:
                escaped, quoted = (not escaped and c == "\\"), quoted and (escaped or c != '"')
            elif c == '"':
                quoted = True
            elif c in "()":
                depth += 1 if c == "(" else -1
            elif depth == 0 and body[i:i + 3] in (" + ", " - "):
                break
            i += 1
        terms.append((weight, body[start:i]))
        if i < len(body):
            sign = 1.0 if body[i + 1] == "+" else -1.0
            i += 3
    return head.group(1), terms


def _parses_back(fmt, text, names, weights, meta):
    """The export read back as its target reads it: exactly the weights and names."""
    if fmt == "ranklib":
        lines = text.split("\n")
        assert lines[-1] == "" and all(ln.startswith("## ") for ln in lines[:-2])
        ids = [int(tok.partition(":")[0]) for tok in lines[-2].split()]
        got = [float(tok.partition(":")[2]) for tok in lines[-2].split()]
        assert ids == [1, 2, 3] and got == weights
    elif fmt in ("es-ltr", "opensearch-ltr"):
        body = json.loads(text)["model"]
        assert body["name"] == meta.get("name", "dfrank_linear_model")
        assert list(json.loads(body["model"]["definition"]).items()) == \
            list(zip(names, weights))
    elif fmt == "solr-ltr":
        body = json.loads(text)
        assert [f["name"] for f in body["features"]] == names
        assert list(body["params"]["weights"].items()) == list(zip(names, weights))
    else:
        profile, terms = _vespa_terms(text)
        assert profile == meta.get("name", "dfrank")
        assert terms == list(zip(weights, names))


from hypothesis import example, given, settings, strategies as st  # noqa: E402

_texts = st.one_of(st.text(max_size=12),
                   st.sampled_from(EVIL + ["bm25(title)", "query(\"a + b\")", "x(1, -2.5e3).y",
                                           "a\nb", "a}", " ", "", "ok_name", "f(\"\\\"\")"]))


@pytest.mark.parametrize("fmt", ["ranklib", "es-ltr", "opensearch-ltr", "solr-ltr", "vespa"])
@settings(max_examples=150, deadline=None)
@given(names=st.lists(_texts, min_size=3, max_size=3),
       meta=st.fixed_dictionaries({}, optional={"name": _texts, "strategy": _texts,
                                                "metric": _texts}),
       weights=st.lists(st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: x != 0),
                        min_size=3, max_size=3))
@example(names=["bm25(title)", 'query("a + b")', "x(1, -2.5e3).y"], meta={"name": "p"},
         weights=[0.5, -2.0, 1e-3])   # accepted by every format: read back, also in CI
def test_exported_names_are_refused_or_read_back_exactly(fmt, names, meta, weights):
    ranker = LinearRanker(weights, meta=meta)
    try:
        text = ranker.export(format=fmt, names=names)
    except ExportError as e:
        assert fmt != "ranklib" and "cannot export" in str(e)
        return
    _parses_back(fmt, text, names, [float(w) for w in weights], meta)


def test_vespa_refuses_names_that_are_not_rank_features():
    for bad in EVIL + ["a b", "1abc", "f(a", "f(a)b", 'query("\n")', "a-b"]:
        with pytest.raises(ExportError, match="is not a Vespa rank feature") as e:
            model().export(format="vespa", names=[bad, "b", "c"])
        assert e.value.index == 0
    for good in ["bm25(title)", "attribute(popularity)", "fieldMatch(body).completeness",
                 'query("a, b")', "term(0).significance", "x( a.b , -1.5e3 )"]:
        assert good in model().export(format="vespa", names=[good, "b", "c"])
    with pytest.raises(ExportError, match="not a rank-profile name"):
        model(meta={"name": "a { b"}).export(format="vespa", names=NAMES)


@pytest.mark.parametrize("fmt", ["es-ltr", "opensearch-ltr", "solr-ltr", "vespa"])
def test_empty_names_refused_everywhere(fmt):
    with pytest.raises(ExportError, match="feature 2 has an empty name"):
        model().export(format=fmt, names=["a", " ", "c"])


def test_ranklib_header_keeps_metadata_on_its_line(tmp_path):
    r = model(meta={"strategy": "ca\n1:99", "metric": "map\r\n## x"})
    r.export(tmp_path / "m.txt", format="ranklib")
    ids, weights, _ = read_ranklib(tmp_path / "m.txt")
    assert list(weights) == W and "1:99" not in (tmp_path / "m.txt").read_text().split("\n")


def test_cli_names_file_line_of_a_bad_name(tmp_path, capsys):
    model().save(tmp_path / "m.json")
    names = tmp_path / "names.txt"
    names.write_text("# features\n\ntitle_bm25\n" + EVIL[0] + "\npagerank\n")
    assert cli.main(["export", str(tmp_path / "m.json"), "--format", "vespa", "--names-file",
                     str(names)]) == 2
    err = capsys.readouterr().err
    assert f"{names}, line 4:" in err and "is not a Vespa rank feature" in err


@pytest.mark.parametrize("name", ['bm25("}")', 'query("{")', 'x("a{b}c")'])
def test_vespa_names_with_braces_are_refused(name):
    """A Vespa feature name holding braces broke the rank profile's syntax: refused."""
    from dfrank.formats import ExportError

    with pytest.raises(ExportError, match="without braces"):
        LinearRanker([1.0, 2.0]).export(format="vespa", names=[name, "bm25(title)"])


def test_ranklib_models_say_they_carry_no_normalization(tmp_path):
    """A RankLib model was loaded as if trained on raw features, whatever its ``-norm``: a
    warning says the file does not record it, and models of other RankLib rankers are refused."""
    model = tmp_path / "m.txt"
    model.write_text("## Coordinate Ascent\n1:0.5 2:-1\n")
    with pytest.warns(UserWarning, match="does not record whether it was trained with -norm"):
        LinearRanker.load_ranklib(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearRanker.load_ranklib(model, raw_features=True)
    model.write_text("## Linear Regression (L2 regularization)\n## Lambda = 1.0E-10\n"
                     "0.1 0.2 0.3\n")
    with pytest.raises(DataFormatError, match="Coordinate Ascent"):
        LinearRanker.load_ranklib(model, raw_features=True)
