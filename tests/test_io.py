"""LETOR/SVMlight loading: round trips, real files, and an error for every bad input."""

import gzip
import os
import time

import numpy as np
import pytest

import dfrank
from dfrank import DataFormatError, LinearRanker, cli
from dfrank.io.trec import write_run
from tests.inputs import LETOR, LETOR_NO_LAST_DOCID, QRELS, RUN_A, write_file

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")

GOOD = """\
2 qid:10 1:0.5 2:1 3:-0.25 # docid = A1 inc = 1
0 qid:10 1:0.25 3:1e-3 #docid=A2
1 qid:11 2:3.5
# a comment line

0 qid:11 1:1 2:0 3:0 # B2 trailing words
"""


def write(tmp_path, text, name="f.txt", gz=False):
    p = tmp_path / (name + (".gz" if gz else ""))
    data = text.encode()
    if gz:
        with gzip.open(p, "wb") as f:
            f.write(data)
    else:
        p.write_bytes(data)
    return str(p)


@pytest.mark.parametrize("gz", [False, True])
def test_load_letor(tmp_path, gz):
    d = dfrank.load_svmlight(write(tmp_path, GOOD, gz=gz))
    assert d.n_docs == 4 and d.n_queries == 2 and d.n_features == 3
    np.testing.assert_array_equal(d.qptr, [0, 2, 4])
    np.testing.assert_array_equal(d.qids, [10, 11])
    np.testing.assert_array_equal(d.y, [2, 0, 1, 0])
    np.testing.assert_array_equal(d.X, [[0.5, 1, -0.25], [0.25, 0, 1e-3], [0, 3.5, 0], [1, 0, 0]])
    assert list(d.docids) == ["A1", "A2", "", "B2"]
    assert list(d.feature_ids) == [1, 2, 3]


def test_n_features_and_float32(tmp_path):
    d = dfrank.load_svmlight(write(tmp_path, GOOD), n_features=5, dtype=np.float32)
    assert d.X.shape == (4, 5) and d.X.dtype == np.float32
    with pytest.raises(DataFormatError, match=r"line 1.*exceeds n_features"):
        dfrank.load_svmlight(write(tmp_path, GOOD), n_features=2)


DENSE = """\
2 qid:1 1:0.5 2:0 3:1
0 qid:1 1:0.25 2:1 3:0
1 qid:2 1:0 2:3.5 3:0.5
"""


@pytest.mark.parametrize("block_size", [1 << 25, 23])
def test_a_file_that_lists_its_zeros_read_wider_warns(tmp_path, block_size):
    """A file whose every line lists ids 1..3 leaves nothing out: read as 5 columns (a
    model's or the training data's count), it holds another feature set, and says so."""
    p = write(tmp_path, DENSE)
    with pytest.warns(dfrank.DataWarning, match=r"features 1-3 and none above, "
                      r"but 5 .* features 4-5 are read as 0"):
        d = dfrank.load_svmlight(p, n_features=5, block_size=block_size)
    assert d.X.shape == (3, 5) and not d.X[:, 3:].any()
    with pytest.warns(dfrank.DataWarning, match="features 4-6 are"):
        dfrank.load_svmlight(p, min_features=6, block_size=block_size)
    with pytest.warns(dfrank.DataWarning, match="but 4 feature columns .*: feature 4 is read"):
        dfrank.load_svmlight(p, n_features=4, block_size=block_size)


def test_sparse_or_full_width_files_read_without_a_warning(tmp_path, recwarn):
    dfrank.load_svmlight(write(tmp_path, GOOD), n_features=5)   # leaves zeros out
    dfrank.load_svmlight(write(tmp_path, DENSE, "d.txt"), n_features=3)
    dfrank.load_svmlight(write(tmp_path, DENSE, "d.txt"), min_features=2)
    dfrank.load_svmlight(write(tmp_path, DENSE, "d.txt"))
    ragged = DENSE + "0 qid:2 1:1 2:1\n"   # one line short of the others: sparse
    dfrank.load_svmlight(write(tmp_path, ragged, "r.txt"), n_features=5)
    bare = "0 qid:1\n1 qid:1\n" + DENSE   # lines with no feature, then full ones
    dfrank.load_svmlight(write(tmp_path, bare, "b.txt"), n_features=5, block_size=16)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_min_features_widens_where_n_features_refuses(tmp_path):
    p = write(tmp_path, GOOD)
    assert dfrank.load_svmlight(p, min_features=5).n_features == 5
    assert dfrank.load_svmlight(p, min_features=2).n_features == 3   # a larger id widens
    with pytest.raises(DataFormatError, match="exceeds n_features"):
        dfrank.load_svmlight(p, n_features=2)
    with pytest.raises(ValueError, match="min_features must be a positive integer"):
        dfrank.load_svmlight(p, min_features=0)
    with pytest.raises(ValueError, match="not both"):
        dfrank.load_svmlight(p, n_features=3, min_features=3)
    with pytest.raises(DataFormatError, match="more than the cap"):
        dfrank.load_svmlight(p, min_features=10, max_features=8)


def test_small_blocks_give_same_result(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{rng.integers(0, 3)} qid:{i // 7} " +
             " ".join(f"{j}:{rng.random():.6f}" for j in range(1, 6) if rng.random() < 0.8) +
             f" #docid = d{i}" for i in range(300)]
    p = write(tmp_path, "\n".join(lines))
    a = dfrank.load_svmlight(p)
    b = dfrank.load_svmlight(p, block_size=97)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.qptr, b.qptr)
    assert list(a.docids) == list(b.docids)


def test_values_are_correctly_rounded(tmp_path):
    vals = ["0.1", "1e-30", "123456789012345678901", "-0.000000000000000000000000123",
            "3.14159265358979323846", ".5", "5.", "+2", "1E+5", "0.941842"]
    text = "".join(f"1 qid:1 1:{v}\n" for v in vals)
    d = dfrank.load_svmlight(write(tmp_path, text))
    np.testing.assert_array_equal(d.X[:, 0], [float(v) for v in vals])


def test_query_file(tmp_path):
    data = write(tmp_path, "1 1:0.5\n0 2:1\n2 1:1\n")
    q = write(tmp_path, "2\n1\n", name="f.query")
    d = dfrank.load_svmlight(data, query_file=q)
    np.testing.assert_array_equal(d.qptr, [0, 2, 3])
    bad = write(tmp_path, "2\n2\n", name="bad.query")
    with pytest.raises(DataFormatError, match="add up to 4 rows but .* has 3"):
        dfrank.load_svmlight(data, query_file=bad)
    with pytest.raises(DataFormatError, match=r"line 2.*integer"):
        dfrank.load_svmlight(data, query_file=write(tmp_path, "2\nx\n", name="x.query"))
    with pytest.raises(DataFormatError, match=r"line 1.*>= 1"):
        dfrank.load_svmlight(data, query_file=write(tmp_path, "0\n3\n", name="z.query"))
    with pytest.raises(DataFormatError, match=r"line 1.*qid"):
        dfrank.load_svmlight(write(tmp_path, "1 qid:1 1:0.5\n", name="g"), query_file=q)


BAD = [  # (file text, message pattern, line, token)
    ("1 qid:1 1:0.5\nx qid:1 1:0.5\n", "label is not a number", 2, "x"),
    ("1 qid:1 1:0.5\nnan qid:1 1:0.5\n", "label must be a finite number", 2, "nan"),
    ("-1 qid:1 1:0.5\n", "label must be a finite number", 1, "-1"),
    ("1 qid:1 1:0.5\n1 1:0.5\n", "no 'qid:'", 2, None),
    ("1 1:0.5\n1 qid:1 1:0.5\n", "has a 'qid:'", 2, "qid:1"),
    ("1 qid:a 1:0.5\n", "qid is not an integer", 1, "qid:a"),
    ("1 qid:1 0:0.5\n", "feature id must be an integer >= 1", 1, "0:0.5"),
    ("1 qid:1 -3:0.5\n", "feature id must be an integer >= 1", 1, "-3:0.5"),
    ("1 qid:1 1.5:0.5\n", "feature id must be an integer >= 1", 1, "1.5:0.5"),
    ("1 qid:1 1:0.5 2\n", "expected 'feature_id:value'", 1, "2"),
    ("1 qid:1 1:abc\n", "feature value is not a number", 1, "1:abc"),
    ("1 qid:1\n1 qid:1 1:NaN\n", "NaN or infinite", 2, "1:NaN"),
    ("1 qid:1 1:inf\n", "NaN or infinite", 1, "1:inf"),
    ("1 qid:1 1:-Infinity\n", "NaN or infinite", 1, "1:-Infinity"),
    ("1 qid:1 1:0.5 2:1 1:0.7\n", "appears twice", 1, "1:0.7"),
    ("1 qid:1 1:0.5\n1 qid:2 1:0.5\n1 qid:1 1:0.5\n", "qid 1 is not contiguous", 3, None),
    ("", "no data line", None, None),
    ("# only a comment\n\n", "no data line", None, None),
]


@pytest.mark.parametrize("text,match,line,token", BAD)
def test_bad_input_names_line_and_token(tmp_path, text, match, line, token):
    p = write(tmp_path, text)
    with pytest.raises(DataFormatError, match=match) as e:
        dfrank.load_svmlight(p)
    err = e.value
    assert isinstance(err, ValueError)
    assert err.path == p and p in str(err)
    assert err.line == line
    if line is not None:
        assert f"line {line}" in str(err)
    if token is not None:
        assert err.token == token and repr(token) in str(err)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no such file"):
        dfrank.load_svmlight("/nonexistent/train.txt")


def test_from_arrays_contiguity_and_sort():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(DataFormatError, match=r"qid 3 is not contiguous.*row 0.*row 4"):
        dfrank.RankingData.from_arrays(X, [0, 1, 0, 1, 0], [3, 3, 5, 5, 3])
    d = dfrank.RankingData.from_arrays(X, [0, 1, 0, 1, 0], [3, 3, 5, 5, 3], sort=True)
    np.testing.assert_array_equal(d.qids, [3, 5])
    np.testing.assert_array_equal(d.X[:, 0], [0, 2, 8, 4, 6])
    np.testing.assert_array_equal(d.qptr, [0, 3, 5])


@pytest.mark.parametrize("X,y,q,match", [
    (np.ones(3), [0, 1, 1], [1, 1, 1], "2-D"),
    (np.ones((3, 1)), [0, 1], [1, 1, 1], "y has shape"),
    (np.ones((3, 1)), [0, 1, 1], [1, 1], "qid has shape"),
    (np.array([[1.0], [np.nan], [0]]), [0, 1, 1], [1, 1, 1], r"X\[1, 0\] is nan"),
    (np.ones((3, 1)), [0, -1, 1], [1, 1, 1], r"y\[1\] is -1"),
    (np.ones((3, 1)), [0, np.inf, 1], [1, 1, 1], r"y\[1\] is inf"),
    (np.ones((0, 1)), [], [], "no rows"),
])
def test_from_arrays_bad(X, y, q, match):
    with pytest.raises(DataFormatError, match=match):
        dfrank.RankingData.from_arrays(X, y, q)


def test_subset_and_select_features():
    X = np.arange(12.0).reshape(6, 2)
    d = dfrank.RankingData.from_arrays(X, [0, 1, 2, 0, 1, 2], [1, 1, 2, 2, 3, 3])
    s = d.subset([2, 0])
    np.testing.assert_array_equal(s.qids, [3, 1])
    np.testing.assert_array_equal(s.X[:, 0], [8, 10, 0, 2])
    f = d.select_features([2])
    np.testing.assert_array_equal(f.X[:, 0], X[:, 1])
    with pytest.raises(ValueError, match="not in this data"):
        d.select_features([3])


needs_shared = pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data absent")


@needs_shared
@pytest.mark.parametrize("rel,nq,n,d", [
    ("ohsumed-letor3/QueryLevelNorm/Fold1/test.txt.gz", 22, 3383, 45),
    ("mq2008-letor4/Fold1/test.txt.gz", 156, 2874, 46),
])
def test_real_letor_files(rel, nq, n, d):
    data = dfrank.load_svmlight(os.path.join(SHARED, rel))
    assert (data.n_queries, data.n_docs, data.n_features) == (nq, n, d)
    assert data.docids is not None and all(len(x) > 0 for x in data.docids[:10])
    sklearn = pytest.importorskip("sklearn.datasets")
    X, y, q = sklearn.load_svmlight_file(os.path.join(SHARED, rel), query_id=True)
    np.testing.assert_array_equal(data.X, X.toarray())
    np.testing.assert_array_equal(data.y, y)


@needs_shared
def test_lightgbm_example():
    base = os.path.join(SHARED, "lightgbm-lambdarank")
    data = dfrank.load_svmlight(os.path.join(base, "rank.train.gz"),
                                query_file=os.path.join(base, "rank.train.query"))
    assert (data.n_queries, data.n_docs) == (201, 3005)
    assert data.n_features == 300 and data.docids is None


def test_a_last_line_without_newline_or_comment(tmp_path):
    """A LETOR file whose last line has no newline and no ``#docid`` comment lost that line: it
    is read, with an empty docid."""
    path = tmp_path / "d.txt"
    path.write_bytes(LETOR_NO_LAST_DOCID.rstrip(b"\n"))
    data = dfrank.load_svmlight(path)
    assert data.docids.tolist() == ["a1", "a2", "a3", "b1", ""]
    assert data.n_docs == 5 and data.X[4].tolist() == [0.5, 0.5, 0.5]


def test_a_file_without_qids_needs_its_grouping_declared(tmp_path, capsys):
    """A LightGBM-style file without qids was read as one document per query: refused, naming
    ``--one-query`` and the ``.query`` file that declare its grouping."""
    bare = write_file(tmp_path, "rank.train", b"1 1:0.5 2:1\n0 1:0.2 2:0\n2 1:0.1 2:0.3\n")
    with pytest.raises(DataFormatError, match="cannot be told apart"):
        dfrank.load_svmlight(bare)
    assert cli.main(["info", bare]) == 1
    assert "--one-query" in capsys.readouterr().err
    assert dfrank.load_svmlight(bare, single_query=True).n_queries == 1
    assert cli.main(["info", bare, "--one-query"]) == 0
    write_file(tmp_path, "rank.train.query", b"2\n1\n")
    assert dfrank.load_svmlight(bare).n_queries == 2


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path):
    """A UTF-8 byte order mark was read as part of the first qid or feature: it is skipped in
    qrels, runs and RankLib models."""
    bom = b"\xef\xbb\xbf"
    qrels = write_file(tmp_path, "qrels.txt", bom + QRELS.encode())
    r = write_file(tmp_path, "run.txt", bom + RUN_A.encode())
    res = dfrank.evaluate_run(qrels, r, ["num_rel", "num_ret", "map"])
    plain = dfrank.evaluate_run(write_file(tmp_path, "q2", QRELS),
                                write_file(tmp_path, "r2", RUN_A), ["num_rel", "num_ret", "map"])
    assert res.all == plain.all
    model = tmp_path / "m.txt"
    model.write_bytes(bom + b"## Coordinate Ascent\n1:0.5 2:-1\n")
    assert list(LinearRanker.load_ranklib(model, raw_features=True).weights) == [0.5, -1.0]


def test_huge_feature_ids_are_refused_before_allocating(tmp_path, capsys):
    """A model of a million features, or a RankLib feature id of 4e9, allocated gigabytes
    before failing: refused first, naming the cap."""
    LinearRanker(np.ones(1_000_000)).save(tmp_path / "wide.json")
    data = write_file(tmp_path, "d.txt", LETOR)
    t = time.perf_counter()
    assert cli.main(["evaluate", str(tmp_path / "wide.json"), data]) == 1
    assert "max_features" in capsys.readouterr().err and time.perf_counter() - t < 30
    model = tmp_path / "m.txt"
    model.write_text("## Coordinate Ascent\n1:0.5 4000000000:1\n")
    with pytest.raises(DataFormatError, match="above the cap"):
        LinearRanker.load_ranklib(model, raw_features=True)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_docids_beyond_ascii_are_read_as_the_trec_readers_read_docnos(tmp_path, encoding):
    """A LETOR file whose docids are not ASCII (``#docid = café``) failed with a bare
    UnicodeDecodeError, while the TREC readers take such docnos (issue #62): read as UTF-8,
    bytes that are not UTF-8 kept as they are, so that a run written from the data names
    the same documents as qrels in the same bytes, and a file written back is the same."""
    raw = ("2 qid:1 1:0.9 #docid = café\n0 qid:1 1:0.1 #docid = naïve\n"
           "1 qid:2 1:0.5 #docid = x\n").encode(encoding)
    path = tmp_path / "d.txt"
    path.write_bytes(raw)
    data = dfrank.load_svmlight(path)
    if encoding == "utf-8":
        assert data.docids.tolist() == ["café", "naïve", "x"]
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes("1 0 café 2\n1 0 naïve 0\n2 0 x 1\n".encode(encoding))
    run = tmp_path / "run.txt"
    write_run(run, data, data.X[:, 0])
    assert dfrank.evaluate_run(str(qrels), str(run), ["map"]).all["map"] == 1.0
    again = tmp_path / "again.txt"
    dfrank.io.save_svmlight(data, again)
    assert dfrank.load_svmlight(again).docids.tolist() == data.docids.tolist()
    assert b"caf" + "é".encode(encoding) in again.read_bytes()


def test_a_qid_beyond_64_bits_is_named_as_such(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:99999999999999999999 1:0.5\n")
    with pytest.raises(DataFormatError, match="of at most 64 bits"):
        dfrank.load_svmlight(path)
