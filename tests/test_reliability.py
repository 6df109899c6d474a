"""The holes a hostile user found (issue #35), each closed: nothing lost, nothing silently
wrong, resources capped, errors that name what was wrong.

The command line runs in this process (``cli.main``): exit 1 is a data error, 2 a usage
error, each with a one-line message on stderr."""

import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import dfrank
from dfrank import DataFormatError, LinearRanker, cli
from dfrank.command import CommandRun

LETOR = (b"2 qid:1 1:0.5 2:1 3:0 #docid = a1\n"
         b"0 qid:1 1:0.25 2:0.5 3:1 #docid = a2\n"
         b"1 qid:1 1:1 2:0 3:0.5 #docid = a3\n"
         b"0 qid:2 1:0 2:0.75 3:0.5 #docid = b1\n"
         b"1 qid:2 1:0.5 2:0.5 3:0.5 #docid = b2\n")
QRELS = "1 0 a1 2\n1 0 a2 0\n1 0 a3 1\n2 0 b1 0\n2 0 b2 1\n"


def write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(p)


def run(lines):
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for i, (q, d, s) in enumerate(lines))


RUN_A = run([("1", "a1", 3.0), ("1", "a3", 2.0), ("1", "a2", 1.0),
             ("2", "b2", 2.0), ("2", "b1", 1.0)])
RUN_B = run([("1", "a2", 3.0), ("1", "a1", 2.0), ("1", "a3", 1.0),
             ("2", "b1", 2.0), ("2", "b2", 1.0)])


# ------------------------------------------------------------------ data loss
def test_a_failed_model_write_keeps_the_model(tmp_path, capsys, monkeypatch):
    data = write(tmp_path, "train.txt", LETOR)
    real = LinearRanker.save

    def full_disk(self, path):
        if os.path.dirname(os.fspath(path)) == str(tmp_path):
            raise OSError(28, "No space left on device")
        return real(self, path)

    monkeypatch.setattr(LinearRanker, "save", full_disk)
    code = cli.main(["fit", data, "--strategy", "ca", "--restarts", "1", "--quiet",
                     "-o", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 1 and "No space left on device" in err and "it is kept in" in err
    kept = err.split("it is kept in ")[1].split()[0]
    try:
        assert LinearRanker.load(kept).n_features == 3
    finally:
        os.unlink(kept)


def test_nowhere_to_write_prints_the_model(capsys, monkeypatch):
    from dfrank.errors import OutputError
    from dfrank.files import write_kept

    def fail(path):
        raise OSError(30, "Read-only file system")

    with pytest.raises(OutputError, match="printed on standard output") as e:
        write_kept("/proc/x.json", fail, "model", ".json", stdout=lambda: '{"w": 1}\n')
    assert e.value.kept == "-" and capsys.readouterr().out == '{"w": 1}\n'


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    a = write(tmp_path, "a.run", RUN_A)
    b = write(tmp_path, "b.run", RUN_B)
    link = tmp_path / "link.run"
    link.symlink_to(a)
    for out in (a, str(link)):
        assert cli.main(["fuse", "--qrels", qrels, a, b, "--quiet", "-o", out]) == 1
        assert "is the input file" in capsys.readouterr().err
    assert open(a).read() == RUN_A
    data = write(tmp_path, "train.txt", LETOR)
    assert cli.main(["fit", data, "--quiet", "-o", data]) == 1
    assert "would destroy that input" in capsys.readouterr().err


def _cranfield_like(tmp_path):
    from tests.test_tune import small_collection

    docs, topics, qrels = small_collection(n_docs=40, n_q=4)
    (tmp_path / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in docs.items()))
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, j in qrels.items()
                                                for d, r in j.items()))


def _tune(tmp_path, *extra):
    return ["tune", "--collection", str(tmp_path / "docs.tsv"), "--topics",
            str(tmp_path / "topics.tsv"), "--qrels", str(tmp_path / "qrels.txt"),
            "--param", "k1=0.1:3", "--param", "b=0:1", "--quiet", *extra]


# ------------------------------------------------------------------ silently wrong
@pytest.mark.parametrize("score", ["1e400", "-1e400"])
def test_an_overflowing_score_is_an_error(tmp_path, capsys, score):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    a = write(tmp_path, "a.run", RUN_A.replace("3.0", score, 1))
    b = write(tmp_path, "b.run", RUN_B)
    assert cli.main(["fuse", "--qrels", qrels, a, b, "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "NaN or infinite" in err and "line 1" in err and score in err


def test_huge_finite_scores_fuse_to_finite_scores(tmp_path):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    a = write(tmp_path, "a.run", run([("1", "a1", 1e308), ("1", "a3", -1e308),
                                      ("1", "a2", 0.0), ("2", "b2", 1.0),
                                      ("2", "b1", -1e308)]))
    b = write(tmp_path, "b.run", RUN_B)
    for norm in ("minmax", "zscore", "sum", "max", "l2"):
        res = dfrank.fuse(qrels, {"a": a, "b": b}, norm=norm)
        scores = [s for docs in res.run().values() for s in docs.values()]
        assert np.all(np.isfinite(scores)) and 0.0 <= res.value <= 1.0, norm


def test_a_command_cache_is_keyed_on_the_expanded_command(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    argv = ["./engine", "{cwd}/index", "{k1}", "{run}"]
    cwd = os.getcwd()
    try:
        os.chdir(a)
        in_a = CommandRun(argv, ["k1"]).describe()
        os.chdir(b)
        in_b = CommandRun(argv, ["k1"]).describe()
    finally:
        os.chdir(cwd)
    assert in_a != in_b and str(a) in in_a and "{k1}" in in_a and "{run}" in in_a


def test_a_run_sharing_no_query_with_the_qrels_fails(tmp_path):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    with pytest.raises(dfrank.TuneError, match="shares no query with the qrels"):
        dfrank.tune(lambda p: {"x9": {"a1": p["k"]}}, {"k": (0.0, 1.0)}, qrels, budget=3)


def test_a_file_without_qids_needs_its_grouping_declared(tmp_path, capsys):
    bare = write(tmp_path, "rank.train", b"1 1:0.5 2:1\n0 1:0.2 2:0\n2 1:0.1 2:0.3\n")
    with pytest.raises(DataFormatError, match="cannot be told apart"):
        dfrank.load_svmlight(bare)
    assert cli.main(["info", bare]) == 1
    assert "--one-query" in capsys.readouterr().err
    assert dfrank.load_svmlight(bare, single_query=True).n_queries == 1
    assert cli.main(["info", bare, "--one-query"]) == 0
    write(tmp_path, "rank.train.query", b"2\n1\n")
    assert dfrank.load_svmlight(bare).n_queries == 2


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path):
    bom = b"\xef\xbb\xbf"
    qrels = write(tmp_path, "qrels.txt", bom + QRELS.encode())
    r = write(tmp_path, "run.txt", bom + RUN_A.encode())
    res = dfrank.evaluate_run(qrels, r, ["num_rel", "num_ret", "map"])
    plain = dfrank.evaluate_run(write(tmp_path, "q2", QRELS), write(tmp_path, "r2", RUN_A),
                                ["num_rel", "num_ret", "map"])
    assert res.all == plain.all
    model = tmp_path / "m.txt"
    model.write_bytes(bom + b"## Coordinate Ascent\n1:0.5 2:-1\n")
    assert list(LinearRanker.load_ranklib(model, raw_features=True).weights) == [0.5, -1.0]


def test_ranklib_models_say_they_carry_no_normalization(tmp_path):
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


# ------------------------------------------------------------------ resources
def test_huge_feature_ids_are_refused_before_allocating(tmp_path, capsys):
    LinearRanker(np.ones(1_000_000)).save(tmp_path / "wide.json")
    data = write(tmp_path, "d.txt", LETOR)
    t = time.perf_counter()
    assert cli.main(["evaluate", str(tmp_path / "wide.json"), data]) == 1
    assert "max_features" in capsys.readouterr().err and time.perf_counter() - t < 30
    model = tmp_path / "m.txt"
    model.write_text("## Coordinate Ascent\n1:0.5 4000000000:1\n")
    with pytest.raises(DataFormatError, match="above the cap"):
        LinearRanker.load_ranklib(model, raw_features=True)


def test_a_timeout_ends_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = (f"sleep 300 & echo $! > {pidfile}; wait")
    runner = CommandRun(["bash", "-c", script, "{k}", "{run}"], ["k"], timeout=1.0)
    from dfrank.command import CommandError

    with pytest.raises(CommandError, match="ran longer than 1 s"):
        runner({"k": 1.0})
    wait_gone(int(pidfile.read_text()), "the grandchild outlived the timeout")


def wait_gone(pid, failure, seconds=5.0):
    """Wait for process ``pid`` to end; kill it and fail the test with ``failure`` if it
    is still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(failure)


# ------------------------------------------------------------------ usability of errors
def _big_runs(tmp_path, nq=150, m=400):
    """Two runs of nq x m lines over 2m documents a query, and qrels of 30 of them."""
    rng = np.random.default_rng(0)
    qrels = "".join(f"q{q} 0 d{q}_{d} {rng.integers(0, 3)}\n" for q in range(nq)
                    for d in rng.choice(2 * m, 30, replace=False))
    runs = {}
    for r in range(2):
        runs[f"r{r}"] = write(tmp_path, f"r{r}.run", "".join(
            f"q{q} Q0 d{q}_{d} {i + 1} {x:.6f} r{r}\n" for q in range(nq)
            for i, (d, x) in enumerate(zip(rng.choice(2 * m, m, replace=False),
                                           np.sort(rng.random(m))[::-1]))))
    return write(tmp_path, "qrels.txt", qrels), runs, 2 * nq * m


def test_fuse_memory_per_line_stays_within_the_budget(tmp_path, monkeypatch):
    """Two runs of 2,000,000 lines must fuse in 1 GB, 250 bytes a line with the
    interpreter: here 120,000 lines, with lines of more than 16,384 crossings swept in
    parts as web-sized lines are (PART_CROSSINGS scaled down with the input), peak
    allocations per line measured by tracemalloc (numpy's arrays; 1,240 bytes before),
    and the same weights as the line searched whole."""
    import tracemalloc
    from dfrank import linesearch
    qrels, runs, n_lines = _big_runs(tmp_path)
    whole = dfrank.fuse(qrels, runs, "map")
    monkeypatch.setattr(linesearch, "PART_CROSSINGS", 1 << 14)
    tracemalloc.start()
    try:
        res = dfrank.fuse(qrels, runs, "map")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.weights == whole.weights and res.value == whole.value
    assert peak / n_lines < 250


def test_pipes_and_standard_input(tmp_path):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    r = write(tmp_path, "run.txt", RUN_A)
    env = dict(os.environ, DFRANK_QUIET_COMPILE="1")
    cmd = [sys.executable, "-m", "dfrank.cli"]
    out = subprocess.run(cmd + ["trec-eval", qrels, "-", "-m", "map"], input=RUN_A.encode(),
                         capture_output=True, env=env)
    assert out.returncode == 0 and b"map" in out.stdout, out.stderr
    out = subprocess.run(["bash", "-c", f"{sys.executable} -m dfrank.cli info <(gzip -c "
                                        f"{write(tmp_path, 'd.txt', LETOR)})"],
                         capture_output=True, env=env)
    assert out.returncode == 0 and b"queries     2" in out.stdout, out.stderr
    assert open(r).read() == RUN_A


def test_raw_exceptions_are_clear_errors(tmp_path):
    data = dfrank.load_svmlight(write(tmp_path, "d.txt", LETOR))
    with pytest.raises(TypeError, match="the metric itself is not an option"):
        LinearRanker([1.0, 0.0, 0.0]).evaluate(data, metric="map")
    huge = dfrank.RankingData.from_arrays(np.array([[1e308, -1e308], [-1e308, 1e308],
                                                    [0.0, 1.0]]), [1, 0, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="features"):
        dfrank.maximize(huge, "ndcg@10", "ca", restarts=1)
    pytest.importorskip("sklearn")
    from dfrank import DirectRanker

    X = np.random.default_rng(0).normal(size=(8, 2))
    with pytest.raises(ValueError, match="must be numbers"):
        DirectRanker().fit(X, np.array(["a", "b"] * 4), qid=np.repeat([1, 2], 4))
    with pytest.warns(UserWarning, match="every label .y. is 0"):
        DirectRanker(strategy="random", budget=10).fit(X, np.zeros(8), qid=np.repeat([1, 2], 4))
