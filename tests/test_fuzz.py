"""Mutated and truncated input files: every reader answers with a clear error or with data
whose metrics stay in their range, never with a traceback.

The command line is run in this process (``cli.main``): a return code of 1 (data error) or
2 (usage) with a one-line message is a clear error; an exception escaping ``main`` is a
traceback and fails the test.
"""

import gzip
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dfrank
from dfrank import cli

LETOR = (b"2 qid:1 1:0.5 2:1 3:0 #docid = a1\n"
         b"0 qid:1 1:0.25 2:0.5 3:1 #docid = a2\n"
         b"1 qid:1 1:1 2:0 3:0.5 #docid = a3\n"
         b"0 qid:2 1:0 2:0.75 3:0.5 #docid = b1\n"
         b"1 qid:2 1:0.5 2:0.5 3:0.5 #docid = b2\n")
QRELS = b"1 0 a1 2\n1 0 a2 0\n1 0 a3 1\n2 0 b1 0\n2 0 b2 1\n"
RUN = (b"1 Q0 a1 1 0.9 r\n1 Q0 a2 2 0.5 r\n1 Q0 a3 3 0.5 r\n1 Q0 zz 4 0.1 r\n"
       b"2 Q0 b2 1 2.0 r\n2 Q0 b1 2 1.0 r\n")
MODEL = json.dumps({"format": "dfrank.linear_ranker", "version": 1,
                    "weights": [0.5, -0.25, 1.0], "feature_ids": [1, 2, 3],
                    "meta": {}}).encode()

TOKENS = [b":", b"qid:", b"1e400", b"-1e39", b"nan", b"inf", b"-", b"#", b"\n", b" ", b"\t",
          b"\x00", b"\xff\xfe", b"99999999999999999999", b"2147483648:1", b"0:1", b"1:1:1",
          b"qid:x", b"3", b"\"", b"{", b"]", b"\xc3\xa9", b"1e-400", b"0x10", b"+", b".",
          b"\xef\xbb\xbf", b"\r\n", b"1e308", b"-1e308", b"4000000000:1", b"5.0", b"NaN"]
RANKLIB = b"## Coordinate Ascent\n## Restart = 1\n1:0.5 2:-0.25 3:1.0\n"
# the name of a process's file in a tune cache folder (dfrank.tuning.tuner: OWNER-HEX8.json)
CACHE_FILE = "0123456789ab-1-2-0000abcd.json"


@st.composite
def mutated(draw, base):
    """``base`` with a few edits: cuts, deletions, insertions of tricky tokens, repeated
    lines; sometimes gzip-compressed and then perhaps truncated."""
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["insert", "delete", "cut", "dup", "replace"]))
        at = draw(st.integers(0, len(data)))
        if op == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 6))]
        elif op == "cut":
            del data[at:]
        elif op == "dup":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            lines.insert(i, lines[i])
            data = bytearray(b"\n".join(lines))
        elif op == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
    out = bytes(data)
    if draw(st.integers(0, 5)) == 0:
        out = b"\xef\xbb\xbf" + out          # a byte-order mark
    if draw(st.integers(0, 5)) == 0:
        out = out.replace(b"\n", b"\r\n")    # Windows line ends
    if draw(st.booleans()):
        out = gzip.compress(out, mtime=0)
        if draw(st.booleans()):
            out = out[:draw(st.integers(0, len(out)))]
    return out


def write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content)
    return str(p)


def run_cli(argv):
    code = cli.main(argv)
    assert code in (0, 1, 2), code
    return code


COMMON = settings(max_examples=100, deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.slow
@COMMON
@given(content=mutated(LETOR))
def test_letor_reader(tmp_path, capsys, content):
    path = write(tmp_path, "data.txt", content)
    model = write(tmp_path, "model.json", MODEL)
    try:
        data = dfrank.load_svmlight(path)
    except (dfrank.DataFormatError, ValueError) as e:
        assert str(e)
        data = None
    run_cli(["info", path])
    run_cli(["evaluate", model, path, "--metric", "ndcg@10", "--metric", "map"])
    capsys.readouterr()
    if data is not None:
        scores = data.X @ np.linspace(1.0, -0.5, data.n_features)
        for metric in ("ndcg@10", "map", "p@1", "mrr", "err@3"):
            try:
                v = dfrank.evaluate(scores, data, metric)
            except ValueError as e:  # labels whose gain 2^l - 1 overflows: said so
                assert "overflow" in str(e) and data.y.max() > 1000
                continue
            assert 0.0 <= v <= 1.0, (metric, v)


@pytest.mark.slow
@COMMON
@given(qrels=mutated(QRELS), run=mutated(RUN))
def test_trec_readers(tmp_path, capsys, qrels, run):
    qp = write(tmp_path, "qrels.txt", qrels)
    rp = write(tmp_path, "run.txt", run)
    code = run_cli(["trec-eval", "-q", "-c", "-m", "official", "-m", "ndcg_cut", qp, rp])
    capsys.readouterr()
    if code == 0:
        res = dfrank.evaluate_run(qp, rp, ["official", "ndcg_cut"])
        for name, v in res.all.items():
            if name.startswith("num_") or name == "runid":
                continue
            assert 0.0 <= v <= 1.0, (name, v)


@pytest.mark.slow
@COMMON
@given(content=mutated(MODEL))
def test_model_reader(tmp_path, capsys, content):
    model = write(tmp_path, "model.json", content)
    data = write(tmp_path, "data.txt", LETOR)
    try:
        dfrank.LinearRanker.load(model)
    except dfrank.DataFormatError as e:
        assert model in str(e)
    run_cli(["evaluate", model, data])
    capsys.readouterr()


@pytest.mark.slow
@COMMON
@given(a=mutated(RUN), b=mutated(RUN.replace(b"0.9", b"0.1")))
def test_fuse_run_reader(tmp_path, capsys, a, b):
    qp = write(tmp_path, "qrels.txt", QRELS)
    pa, pb = write(tmp_path, "a.run", a), write(tmp_path, "b.run", b)
    out = str(tmp_path / "fused.run")
    if run_cli(["fuse", "--qrels", qp, pa, pb, "--quiet", "-o", out]) == 0:
        capsys.readouterr()
        res = dfrank.fuse(qp, {"a": pa, "b": pb})
        assert 0.0 <= res.value <= 1.0
        assert all(np.isfinite(v) for docs in res.run().values() for v in docs.values())
    capsys.readouterr()


@pytest.mark.slow
@COMMON
@given(content=mutated(RANKLIB))
def test_ranklib_reader(tmp_path, content):
    path = write(tmp_path, "m.txt", content)
    data = dfrank.load_svmlight(write(tmp_path, "d.txt", LETOR))
    try:
        model = dfrank.LinearRanker.load_ranklib(path, raw_features=True)
    except dfrank.DataFormatError as e:
        assert path in str(e)
        return
    assert model.n_features <= 65536 and np.all(np.isfinite(model.weights))
    if model.n_features == data.n_features:
        assert 0.0 <= model.evaluate(data, "ndcg@10") <= 1.0


_CACHE = {}


def _tune_setup():
    """A tiny engine and a valid tune cache of it (made once)."""
    if not _CACHE:
        import tempfile

        from dfrank import ir
        from dfrank.tuning.tuner import tune

        docs = {f"d{i}": " ".join(["apple", "pear", "fig"][: 1 + i % 3] * (1 + i % 4))
                for i in range(12)}
        topics = {"q1": "apple fig", "q2": "pear"}
        qrels = {"q1": {"d2": 1, "d5": 2}, "q2": {"d1": 1, "d4": 0}}
        engine = ir.Engine(docs, topics, qrels)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.json")
            tune((engine, "bm25"), {"k1": (0.1, 3.0), "b": (0.0, 1.0)}, budget=4, cache=path)
            [name] = os.listdir(path)        # the cache: a folder, a file per writer
            with open(os.path.join(path, name), "rb") as f:
                _CACHE.update(engine=engine, cache=f.read())
    return _CACHE["engine"], _CACHE["cache"]


@pytest.mark.slow
@COMMON
@given(data=st.data())
def test_tune_cache_reader(tmp_path, data):
    from dfrank.tuning.tuner import tune

    engine, cache = _tune_setup()
    content = data.draw(mutated(cache))
    folder = tempfile.mkdtemp(dir=tmp_path)     # each example its own cache
    path = write(Path(folder), CACHE_FILE, content)
    try:
        res = tune((engine, "bm25"), {"k1": (0.1, 3.0), "b": (0.0, 1.0)}, budget=4,
                   cache=folder)
    except (dfrank.DataFormatError, dfrank.UsageError) as e:   # damaged, or another tune's
        assert path in str(e)
        return
    values = np.array(list(res.per_query.values()))
    assert 0.0 <= res.value <= 1.0 and np.all((values >= 0) & (values <= 1))


def test_known_bad_inputs_are_clear_errors(tmp_path, capsys):
    """The cases of issue #20, each a one-line error with the right exit code."""
    data = write(tmp_path, "d.txt", LETOR)
    cases = [
        (["info", write(tmp_path, "a.txt", b"0 qid:1 2147483648:1\n")], 1, "max_features"),
        (["info", write(tmp_path, "b.txt", b"0 qid:1 9223372036854775807:1\n")], 1,
         "max_features"),
        (["info", write(tmp_path, "c.txt", b"0 qid:1 1:1e400\n")], 1, "overflows float64"),
        (["info", write(tmp_path, "e.txt", b"1e400 qid:1 1:1\n")], 1, "label overflows"),
        (["info", write(tmp_path, "f.txt.gz", gzip.compress(b"".join(
            b"%d qid:%d 1:%d\n" % (i % 3, i // 4, i) for i in range(2000)))[:900])], 1,
         "truncated or corrupt"),
        (["fit", data, "--budget", "0"], 2, "takes an integer >= 1"),
        (["fit", data, "--max-seconds", "0"], 2, "takes a number > 0"),
        (["fit", data, "-o", str(tmp_path / "missing" / "m.json")], 1, "does not exist"),
        (["trec-eval", str(tmp_path / "nope"), data], 1, "no such file"),
    ]
    for argv, code, words in cases:
        try:
            got = cli.main(argv)
        except SystemExit as e:  # argparse's own usage errors
            got = e.code
        err = capsys.readouterr().err
        assert got == code and words in err, (argv, got, err)


def test_smaller_reported_cases(tmp_path, capsys):
    import os
    import warnings

    from dfrank.driver.checkpoint import CHECKPOINT_FORMAT
    from dfrank.driver.result import read_json

    # a model without weights names the missing field; feature ids must be unique and >= 1
    p = write(tmp_path, "m.json", json.dumps({"format": "dfrank.linear_ranker",
                                              "version": 1}).encode())
    with pytest.raises(dfrank.DataFormatError, match="without its 'weights' field"):
        dfrank.LinearRanker.load(p)
    for ids, words in (([1, 1, 2], "appears twice"), ([0, 1, 2], ">= 1")):
        with pytest.raises(ValueError, match=words):
            dfrank.LinearRanker([1.0, 2.0, 3.0], ids)
    # format tags are named once ("not a dfrank.driver.checkpoint file")
    with pytest.raises(dfrank.DataFormatError) as e:
        read_json(p, CHECKPOINT_FORMAT)
    assert "dfrank dfrank" not in str(e.value) and CHECKPOINT_FORMAT in str(e.value)
    # a callback that is not callable
    data = dfrank.load_svmlight(write(tmp_path, "d.txt", LETOR))
    with pytest.raises(TypeError, match="callback must be callable"):
        dfrank.maximize(data, "ndcg@10", "random", callback=5)
    # JSON outputs get the permissions of a plain open() (the umask)
    old = os.umask(0o022)
    try:
        out = str(tmp_path / "model.json")
        dfrank.LinearRanker([1.0, 2.0, 3.0]).save(out)
        assert os.stat(out).st_mode & 0o777 == 0o644
    finally:
        os.umask(old)
    # 'dfrank strategies' prints whole first paragraphs, not cut mid-sentence
    assert cli.main(["strategies"]) == 0
    text = capsys.readouterr().out
    assert "Projected gradient ascent of an Approx surrogate" in text
    # a file without qids takes its sibling .query file (LightGBM), else is refused
    rows = b"1 1:0.5 2:1\n0 1:0.2 2:0\n2 1:0.1 2:0.3\n0 1:0.9 2:0.1\n"
    bare = write(tmp_path, "rank.test", rows)
    gz = write(tmp_path, "rank.test.gz", gzip.compress(rows))
    with pytest.raises(dfrank.DataFormatError, match="cannot be told apart"):
        dfrank.load_svmlight(bare)
    assert dfrank.load_svmlight(bare, single_query=True).n_queries == 1
    write(tmp_path, "rank.test.query", b"3\n1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dfrank.load_svmlight(bare).n_queries == 2
        assert dfrank.load_svmlight(gz).n_queries == 2


# ---------------------------------------------------------------- edits of JSON values
# what a hand edit or another tool puts where a number, a list or a name was
TRICKY = [None, True, False, "2", "", "..", "../x", "a/b", -1, 0, 7, 2.5, 1e308, -1e308,
          10 ** 30, [], {}, [1, "2", 3], [True], {"a": 1}]


def _paths(obj, path=()):
    """Every path (keys and indices) to a value inside ``obj``."""
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, path + (i,))
    return out


@st.composite
def json_edited(draw, base):
    """``base`` (a JSON document, or JSON lines) with a few values replaced by tricky ones,
    deleted or given a new key; sometimes then cut short."""
    try:   # one document (perhaps indented): edited as one line
        lines = [json.dumps(json.loads(base))]
    except json.JSONDecodeError:
        lines = base.decode().split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.sampled_from([j for j, ln in enumerate(lines) if ln.strip()]))
        obj = json.loads(lines[i])
        paths = _paths(obj)
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        parent = obj
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["set", "set", "delete", "add"]))
        if op == "set":
            parent[path[-1]] = draw(st.sampled_from(TRICKY))
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["x", "version", "type", "solver"]))] = \
                draw(st.sampled_from(TRICKY))
        lines[i] = json.dumps(obj)
    out = "\n".join(lines).encode()
    if draw(st.integers(0, 4)) == 0:
        out = out[:draw(st.integers(0, len(out)))]
    return out


@pytest.mark.slow
@COMMON
@given(content=json_edited(MODEL))
def test_model_file_values(tmp_path, capsys, content):
    model = write(tmp_path, "model.json", content)
    data = write(tmp_path, "data.txt", LETOR)
    try:
        ranker = dfrank.LinearRanker.load(model)
    except dfrank.DataFormatError as e:
        assert model in str(e)
    else:   # what loads is a model of finite numbers, each id a whole number >= 1
        assert np.all(np.isfinite(ranker.weights)) and ranker.feature_ids.min() >= 1
    run_cli(["evaluate", model, data])
    run_cli(["export", model, "--format", "ranklib"])
    capsys.readouterr()


@pytest.mark.slow
@COMMON
@given(data=st.data())
def test_tune_cache_values(tmp_path, data):
    from dfrank.tuning.tuner import tune

    engine, cache = _tune_setup()
    folder = tempfile.mkdtemp(dir=tmp_path)     # each example its own cache
    path = write(Path(folder), CACHE_FILE, data.draw(json_edited(cache)))
    try:
        res = tune((engine, "bm25"), {"k1": (0.1, 3.0), "b": (0.0, 1.0)}, budget=4,
                   cache=folder)
    except (dfrank.DataFormatError, dfrank.UsageError) as e:   # damaged, or another tune's
        assert path in str(e)
        return
    values = np.array(list(res.per_query.values()))
    assert 0.0 <= res.value <= 1.0 and np.all((values >= 0) & (values <= 1))


_BENCH = {}


def _bench_file():
    """A bench file of two solvers on the generated MQ2008-like suite (made once)."""
    if not _BENCH:
        import shutil
        import tempfile

        from dfrank.problems import bench

        from tests.suites import toy_suite

        root, ref_path = toy_suite(tempfile.mkdtemp(prefix="dfrank-fuzz-"),
                                   ["letor-mq2008-map"], [1], seed=5)
        path = os.path.join(root, "b.jsonl")
        bench(root, ["random", "ca"], ["letor-mq2008-map"], folds=[1], seeds=range(2),
              budget=20, line_cost=3, n_jobs=1, output=path, references=ref_path)
        with open(path, "rb") as f:
            _BENCH.update(root=root, content=f.read())
        import atexit

        atexit.register(shutil.rmtree, root, True)
    return _BENCH["root"], _BENCH["content"]


@pytest.mark.slow
@COMMON
@given(data=st.data())
def test_bench_file_values(tmp_path, capsys, data):
    root, content = _bench_file()
    import tempfile

    path = write(tmp_path, "b.jsonl", data.draw(json_edited(content)))
    out = tempfile.mkdtemp(dir=tmp_path)
    run_cli(["bench", "report", path])
    run_cli(["bench", "export", path, "-o", os.path.join(out, "D")])
    assert os.listdir(out) in ([], ["D"])     # nothing written beside the folder asked for
    capsys.readouterr()
