"""Scale features: the binary cache (memory-mapped), the SVMlight writer, float32 data,
checkpoints that resume to the result of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dfrank
from dfrank import testing
from dfrank.errors import DataFormatError
from dfrank.io import save_svmlight


@pytest.fixture(scope="module")
def data():
    return dfrank.data.datasets.make_letor_like(n_queries=25, docs_per_query=(5, 30), n_features=7,
                                           seed=3, duplicate_rate=0.1)


# --------------------------------------------------------------------------- binary cache
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cache_round_trip_is_a_memory_map(data, tmp_path, dtype):
    src = dfrank.RankingData.from_arrays(data.X.astype(dtype), data.y,
                                         np.repeat(data.qids, data.query_sizes),
                                         docids=[f"d{i}" for i in range(data.n_docs)])
    path = tmp_path / "c.dfrank"
    src.save(path)
    src.save(path)                       # replaces the older cache
    back = dfrank.RankingData.load(path)
    assert isinstance(back.X.base, np.memmap) or isinstance(back.X, np.memmap)
    assert back.X.dtype == dtype and not back.X.flags.writeable
    for name in ("X", "y", "qptr", "qids", "docids", "feature_ids"):
        np.testing.assert_array_equal(getattr(back, name), getattr(src, name))
    w = np.linspace(-1, 1, 7)
    assert dfrank.evaluate(back.X @ w, back, "ndcg@10") == \
        dfrank.evaluate(src.X @ w, src, "ndcg@10")
    r1 = dfrank.maximize(src, "map", "ca", restarts=2, seed=1)
    r2 = dfrank.maximize(back, "map", "ca", restarts=2, seed=1)
    assert r1.value == r2.value and np.array_equal(r1.point, r2.point)
    eager = dfrank.RankingData.load(path, mmap=False)
    assert eager.X.flags.writeable


def test_a_mapped_cache_gives_the_kernels_its_transposed_features_without_a_copy(data,
                                                                                  tmp_path):
    """One layout of the features in memory: the cache holds them transposed too (as the
    kernels read them), mapped like X, so a fit on it makes no copy; a cache written
    before (version 1, no XT) still loads and fits the same."""
    from dfrank._kernels.scoring import features_T

    path = tmp_path / "c.dfrank"
    data.save(path)
    back = dfrank.RankingData.load(path)
    XT = features_T(back)
    assert isinstance(XT, np.memmap) and not XT.flags.writeable
    np.testing.assert_array_equal(XT, data.X.T)
    head = path / "data.json"
    h = json.loads(head.read_text())
    del h["arrays"]["XT"]
    head.write_text(json.dumps({**h, "version": 1}))
    (path / "XT.npy").unlink()
    old = dfrank.RankingData.load(path)
    assert not isinstance(features_T(old), np.memmap)
    r1 = dfrank.maximize(back, "ndcg@10", "ca", restarts=2, seed=0)
    r2 = dfrank.maximize(old, "ndcg@10", "ca", restarts=2, seed=0)
    assert r1.value == r2.value and np.array_equal(r1.point, r2.point)


def test_cache_errors(data, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such dfrank data cache"):
        dfrank.RankingData.load(tmp_path / "nope")
    path = tmp_path / "c.dfrank"
    data.save(path)
    head = path / "data.json"
    h = json.loads(head.read_text())
    head.write_text(json.dumps({**h, "format": "other"}))
    with pytest.raises(DataFormatError, match="not a dfrank data cache"):
        dfrank.RankingData.load(path)
    head.write_text(json.dumps({**h, "version": 99}))
    with pytest.raises(DataFormatError, match="version 99"):
        dfrank.RankingData.load(path)
    head.write_text("{broken")
    with pytest.raises(DataFormatError, match="corrupted header"):
        dfrank.RankingData.load(path)
    head.write_text(json.dumps(h))
    np.save(path / "y.npy", np.zeros(3))
    with pytest.raises(DataFormatError, match="y.npy has dtype"):
        dfrank.RankingData.load(path)
    (path / "y.npy").unlink()
    with pytest.raises(DataFormatError, match="y.npy is missing"):
        dfrank.RankingData.load(path)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x.txt").write_text("hi")
    with pytest.raises(FileExistsError, match="not a dfrank data cache"):
        data.save(plain)


@pytest.mark.parametrize("kind", ["text", "json", "binary"])
def test_a_binary_cache_save_over_a_users_data_json_leaves_the_folder_as_it_is(data, tmp_path,
                                                                               kind):
    """A folder holding any file named data.json was taken for a cache and replaced whole
    by a save: only a header of dfrank's data format makes a folder a cache to replace."""
    from tests.inputs import users_file

    folder = tmp_path / "mine"
    folder.mkdir()
    path, before = users_file(folder, kind, "data.json")
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a dfrank data cache"):
        data.save(folder)
    assert path.read_bytes() == before and sorted(os.listdir(folder)) == ["data.json",
                                                                          "notes.txt"]
    data.save(tmp_path / "cache")
    data.save(tmp_path / "cache")   # a cache is replaced


# --------------------------------------------------------------------------- writer
@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_svmlight_writer_round_trip(data, tmp_path, suffix):
    data = dfrank.RankingData.from_arrays(np.round(data.X, 6) * [1, -3, 1e3, 1, 1, 1, 0],
                                          data.y, np.repeat(data.qids, data.query_sizes),
                                          docids=[f"doc-{i}" for i in range(data.n_docs)])
    path = tmp_path / f"w{suffix}"
    save_svmlight(data, path)
    back = dfrank.load_svmlight(path)
    np.testing.assert_allclose(back.X, data.X, rtol=0, atol=5e-7 * 1e3)
    np.testing.assert_array_equal(back.y, data.y)
    np.testing.assert_array_equal(back.qids, data.qids)
    assert list(back.docids) == [f"doc-{i}" for i in range(data.n_docs)]


def test_svmlight_writer_formats_exactly(tmp_path):
    d = dfrank.RankingData.from_arrays(np.array([[0.5, -0.25, 0.0], [1e-7, 2.0000004, 3.0]]),
                                       [2, 0], [7, 7])
    save_svmlight(d, tmp_path / "f.txt")
    assert (tmp_path / "f.txt").read_text() == ("2 qid:7 1:0.5 2:-0.25 3:0\n"
                                                 "0 qid:7 1:0 2:2 3:3\n")
    with pytest.raises(ValueError, match="too large"):
        save_svmlight(dfrank.RankingData.from_arrays([[1e14]], [1], [1]), tmp_path / "g")
    with pytest.raises(ValueError, match="precision"):
        save_svmlight(d, tmp_path / "h", precision=12)


# --------------------------------------------------------------------------- checkpoints
def same_result(a, b):
    assert a.value == b.value and np.array_equal(a.point, b.point)
    assert a.n_evals == b.n_evals
    assert [r.index for r in a.restarts] == [r.index for r in b.restarts]
    np.testing.assert_array_equal(a.trace["values"], b.trace["values"])
    np.testing.assert_array_equal(a.trace["evals"], b.trace["evals"])


@pytest.mark.parametrize("strategy,opts", [("ca", {"restarts": 5}),
                                           ("pso", {"restarts": 4, "iterations": 20}),
                                           ("es", {"restarts": 4})])
def test_callback_stop_then_resume_equals_uninterrupted(strategy, opts, tmp_path):
    data = testing.planted_data()
    full = dfrank.maximize(data, "ndcg@10", strategy, seed=4, budget=600, **opts)
    ckpt = tmp_path / "run.ckpt"

    def stop_after(n):
        def cb(res):
            if res.n_evals >= n:
                raise StopIteration
        return cb

    part = dfrank.maximize(data, "ndcg@10", strategy, seed=4, budget=600,
                           callback=stop_after(full.n_evals // 2), checkpoint=ckpt,
                           checkpoint_every=0, **opts)
    assert part.status == "stopped"
    saved = json.loads(ckpt.read_text())
    assert saved["format"] == "dfrank.driver.checkpoint" and 1 <= len(saved["restarts"]) < 5
    resumed = dfrank.maximize(data, "ndcg@10", strategy, seed=4, budget=600, resume=ckpt,
                              **opts)
    same_result(resumed, full)
    # the checkpoint now holds every restart; resuming again runs nothing new
    again = dfrank.maximize(data, "ndcg@10", strategy, seed=4, budget=600, resume=ckpt,
                            **opts)
    same_result(again, full)


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted(tmp_path):
    data = testing.planted_data(n_queries=60)
    path = tmp_path / "train.txt"
    save_svmlight(data, path)
    ckpt = tmp_path / "kill.ckpt"
    script = textwrap.dedent(f"""
        import dfrank
        data = dfrank.load_svmlight({str(path)!r})
        dfrank.maximize(data, "map", "ca", seed=2, restarts=40, checkpoint={str(ckpt)!r},
                        checkpoint_every=0)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        t0 = time.time()
        while time.time() - t0 < 120:
            if ckpt.exists() and len(json.loads(ckpt.read_text())["restarts"]) >= 3:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the run wrote no checkpoint within 120 s")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_saved = len(json.loads(ckpt.read_text())["restarts"])
    assert 3 <= n_saved < 40
    loaded = dfrank.load_svmlight(path)
    resumed = dfrank.maximize(loaded, "map", "ca", seed=2, restarts=40, resume=ckpt)
    full = dfrank.maximize(loaded, "map", "ca", seed=2, restarts=40)
    same_result(resumed, full)


def test_foreign_or_corrupted_checkpoint_is_refused(tmp_path):
    data = testing.planted_data()
    ckpt = tmp_path / "a.ckpt"
    dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=2, checkpoint=ckpt)
    cases = [({"seed": 2}, "seed"), ({"restarts": 3}, "params"), ({"budget": 50}, "budget"),
             ({"strategy": "pso", "restarts": 2}, "strategy"),
             ({"metric": "map"}, "metric")]
    for change, what in cases:
        kw = {"seed": 1, "restarts": 2, "metric": "ndcg@10", "strategy": "ca", **change}
        with pytest.raises(DataFormatError, match=f"different run.*{what}"):
            dfrank.maximize(data, resume=ckpt, **kw)
    other = testing.planted_data(seed=9)
    with pytest.raises(DataFormatError, match="different run.*data"):
        dfrank.maximize(other, "ndcg@10", "ca", seed=1, restarts=2, resume=ckpt)
    text = ckpt.read_text()
    ckpt.write_text(text[: len(text) // 2])          # cut short
    with pytest.raises(DataFormatError, match="not valid JSON"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=2, resume=ckpt)
    model = tmp_path / "model.json"
    dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=1).ranker.save(model)
    with pytest.raises(DataFormatError, match="not a dfrank.driver.checkpoint file"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=2, resume=model)
    bad = json.loads(text)
    bad["restarts"][0]["index"] = 7
    ckpt.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match="indices are damaged"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=2, resume=ckpt)
    bad = json.loads(text)
    bad["current"] = {"index": bad["restarts"][0]["index"], "objective": {}, "strategy": {}}
    ckpt.write_text(json.dumps(bad))
    with pytest.raises(DataFormatError, match="restart in progress is damaged"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=2, resume=ckpt)


def test_loader_segments_with_growing_width(tmp_path, monkeypatch):
    """Many small segments whose width grows (later lines name higher feature ids) give
    the same matrix as one segment."""
    from dfrank.io import svmlight

    rng = np.random.default_rng(0)
    lines = []
    for i in range(300):
        k = 3 if i < 100 else 7
        feats = " ".join(f"{j}:{rng.integers(0, 9)}" for j in range(1, k + 1)
                         if rng.random() < 0.8)
        lines.append(f"{i % 3} qid:{i // 10} {feats}")
    path = tmp_path / "grow.txt"
    path.write_text("\n".join(lines) + "\n")
    whole = dfrank.load_svmlight(path)
    monkeypatch.setattr(svmlight, "_SEGMENT_BYTES", 64)
    for p in (path, tmp_path / "grow.txt.gz"):
        if p.suffix == ".gz":
            import gzip
            p.write_bytes(gzip.compress(path.read_bytes()))
        pieces = dfrank.load_svmlight(p, block_size=256)
        np.testing.assert_array_equal(pieces.X, whole.X)
        np.testing.assert_array_equal(pieces.y, whole.y)
        np.testing.assert_array_equal(pieces.qptr, whole.qptr)
    assert whole.X.shape == (300, 7) and np.all(whole.X[:100, 3:] == 0)


@pytest.mark.parametrize("strategy,opts,metric,data_kw", [
    ("pso", {"restarts": 1, "iterations": 40, "swarm_size": 12}, "ndcg@10", {}),
    ("grid", {"resolution": 12, "batch_size": 50}, "map", {"n_features": 3}),
])
def test_resume_inside_a_restart(strategy, opts, metric, data_kw, tmp_path):
    """The swarm and the grid position are saved between steps: a run stopped mid-restart
    resumes there (fewer evaluations redone) and ends as an uninterrupted run."""
    data = testing.planted_data(**data_kw)
    full = dfrank.maximize(data, metric, strategy, seed=5, **opts)
    ckpt = tmp_path / "mid.ckpt"
    stop_at = full.n_evals // 2

    def stop(res):
        if res.n_evals >= stop_at:
            raise StopIteration

    part = dfrank.maximize(data, metric, strategy, seed=5, callback=stop, checkpoint=ckpt,
                           checkpoint_every=0, **opts)
    assert part.status == "stopped"
    saved = json.loads(ckpt.read_text())
    assert saved["restarts"] == [] and saved["current"]["index"] == 0
    assert 0 < saved["current"]["objective"]["n_evals"] <= stop_at
    counted = []
    resumed = dfrank.maximize(data, metric, strategy, seed=5, resume=ckpt,
                              callback=lambda r: counted.append(r.n_evals), **opts)
    same_result(resumed, full)
    assert min(counted) > saved["current"]["objective"]["n_evals"]   # continued, not redone


@pytest.mark.parametrize("kind", ["text", "json", "binary", "tune cache"])
def test_a_checkpoint_path_holding_another_file_is_refused_and_left_byte_identical(tmp_path,
                                                                                   kind):
    """``checkpoint=`` wrote over whatever file was at its path: a user's file (or a tune's
    cache, also of checkpoint's format) is refused before the run and left byte for byte."""
    from dfrank.errors import UsageError
    from tests.inputs import users_file

    data = testing.planted_data()
    if kind == "tune cache":
        path = tmp_path / "c.json"
        from dfrank.driver.checkpoint import write_record

        write_record(path, {"kind": "tune"}, points=[])
        before = path.read_bytes()
    else:
        path, before = users_file(tmp_path, kind)
    with pytest.raises(UsageError, match="not a dfrank run's checkpoint"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=1, checkpoint=path)
    assert path.read_bytes() == before
    ckpt = tmp_path / "run.ckpt"
    dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=1, checkpoint=ckpt)
    with pytest.raises(UsageError, match="not a dfrank run's checkpoint"):
        dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=1, resume=ckpt,
                        checkpoint=path)
    assert path.read_bytes() == before
    again = dfrank.maximize(data, "ndcg@10", "ca", seed=1, restarts=1, checkpoint=ckpt)
    assert again.value > 0    # a checkpoint of a run is written over
