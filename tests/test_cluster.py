"""dfrank.cluster: a fit, an evaluation and a prediction on data held by Dask workers
equal those of one process on the same data, bit for bit, for any partitioning."""

import os
import signal

import numpy as np
import pytest

import dfrank
from dfrank.data.ranking import RankingData
from dfrank.data.datasets import make_letor_like
from dfrank.errors import DataFormatError
from dfrank.io import save_svmlight

distributed = pytest.importorskip("distributed", reason="needs dask[distributed] "
                                                        "(pip install 'dfrank[dask]')")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def _rows(data):
    return np.repeat(data.qids, np.diff(data.qptr))


def _arrays(data, cuts):
    """Dask arrays X, y, qid of ``data`` cut after the queries ``cuts``."""
    rows = tuple(np.diff([0] + [int(data.qptr[q]) for q in cuts] + [data.n_docs]))
    return (da.from_array(data.X, chunks=(rows, -1)), da.from_array(data.y, chunks=(rows,)),
            da.from_array(_rows(data), chunks=(rows,)))


def _shards(data, cuts, folder):
    """SVMlight files of ``data`` cut after the queries ``cuts``, and the whole file."""
    bounds = [0] + list(cuts) + [data.n_queries]
    paths = []
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        r0, r1 = int(data.qptr[a]), int(data.qptr[b])
        part = RankingData(data.X[r0:r1], data.y[r0:r1], data.qptr[a:b + 1] - r0,
                           data.qids[a:b])
        paths.append(os.path.join(folder, f"part{k}.txt"))
        save_svmlight(part, paths[-1])
    whole = os.path.join(folder, "whole.txt")
    with open(whole, "w") as f:
        f.write("".join(open(p).read() for p in paths))
    return paths, whole


def _same(a, b):
    assert a.value == b.value and np.array_equal(a.point, b.point)
    assert np.array_equal(a.weights, b.weights) and a.n_evals == b.n_evals
    assert a.strategy == b.strategy


def test_the_default_fit_on_a_cluster_equals_one_process_for_any_partitioning(client):
    data = make_letor_like(n_queries=1100, docs_per_query=12, n_features=6, seed=5)
    local = dfrank.maximize(data, seed=2)
    assert local.strategy == "coordinate_ascent"   # auto: ca above 1,000 queries
    for cuts in ([550], [1, 2, 700], [300, 301, 302, 900]):
        _same(local, dfrank.maximize(dfrank.cluster.from_dask(*_arrays(data, cuts)), seed=2))


@pytest.mark.parametrize("metric,rule", [("map", "plateau"), ("err@10", "best"),
                                         ("ndcg@5", "best")])
def test_ca_on_shard_files_equals_ca_on_the_whole_file(client, tmp_path, metric, rule):
    data = make_letor_like(n_queries=120, docs_per_query=15, n_features=5, seed=7)
    data.y[data.y == data.y.max()] = 3   # ERR's normalization reads the largest label:
    data.y[:15] = np.minimum(data.y[:15], 1)   # the first shard's is smaller than the rest's
    paths, whole = _shards(data, [40, 41], tmp_path)
    local = dfrank.maximize(dfrank.load_svmlight(whole), metric, "ca", seed=1, restarts=2,
                            rule=rule)
    remote = dfrank.maximize([os.path.join(tmp_path, "part*.txt")], metric, "ca", seed=1,
                             restarts=2, rule=rule)
    _same(local, remote)


def test_a_dask_dataframe_with_qid_and_label_columns_fits_as_its_rows(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    data = make_letor_like(n_queries=60, docs_per_query=10, n_features=4, seed=3)
    frame = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(4)])
    frame.insert(0, "qid", _rows(data))
    frame.insert(1, "label", data.y)
    remote = dfrank.maximize(dd.from_pandas(frame, npartitions=3, sort=False), "ndcg@10",
                             "ca", seed=0, restarts=2)
    _same(dfrank.maximize(data, "ndcg@10", "ca", seed=0, restarts=2), remote)


def test_a_dask_dataframe_indexed_by_query_is_read_by_its_index(client):
    """``ddf.set_index("qid")``, Dask's way to partition by a key, failed with "has no
    column 'qid'": the index is read as the query column."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    data = make_letor_like(n_queries=60, docs_per_query=10, n_features=4, seed=3)
    frame = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(4)])
    frame.insert(0, "qid", _rows(data))
    frame.insert(1, "label", data.y)
    indexed = dd.from_pandas(frame.set_index("qid"), npartitions=3, sort=True)
    assert indexed.known_divisions
    remote = dfrank.maximize(indexed, "ndcg@10", "ca", seed=0, restarts=2)
    _same(dfrank.maximize(data, "ndcg@10", "ca", seed=0, restarts=2), remote)


def test_a_scheduler_that_does_not_answer_is_a_usage_error_naming_it(tmp_path, capsys):
    """``dfrank fit 'shards/*.txt' --scheduler tcp://127.0.0.1:9`` said "internal error ...
    this is a bug in dfrank" after Dask's 30 s: a usage error within --connect-timeout."""
    import time

    from dfrank import cli

    path = tmp_path / "part0.txt"
    save_svmlight(make_letor_like(n_queries=4, seed=0), str(path))
    t = time.monotonic()
    code = cli.main(["fit", str(tmp_path / "part*.txt"), "--scheduler", "tcp://127.0.0.1:9",
                     "--connect-timeout", "1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and time.monotonic() - t < 15
    assert "no Dask scheduler answered at tcp://127.0.0.1:9 within 1 s" in err
    assert "bug" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_worker_memory_limit_below_its_part_is_a_usage_error_saying_what_it_needs():
    """A worker whose memory_limit is below what its part needs ended in Dask's
    KilledWorker on read_part, or a worker paused at its limit and the fit waited for
    ever: a usage error saying what a part needs."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from distributed import Client, LocalCluster

    from dfrank.errors import UsageError

    n, d = 200_000, 60
    frame = pd.DataFrame(np.random.default_rng(0).random((n, d)))
    frame.columns = [f"f{i}" for i in range(d)]
    frame["qid"] = np.repeat(np.arange(n // 50), 50)
    frame["label"] = np.arange(n) % 3
    with LocalCluster(n_workers=1, threads_per_worker=1, memory_limit="250MiB",
                      dashboard_address=None) as cluster, Client(cluster) as c:
        with pytest.raises(UsageError, match=r"(paused|died).*rows x features x 8 bytes"):
            dfrank.cluster.from_dask(dd.from_pandas(frame, npartitions=1, sort=False),
                                     client=c)


def test_a_worker_killed_mid_fit_gives_the_same_model(client):
    data = make_letor_like(n_queries=200, docs_per_query=12, n_features=6, seed=11)
    local = dfrank.maximize(data, "ndcg@10", "ca", seed=4, restarts=2)
    remote_data = dfrank.cluster.from_dask(*_arrays(data, [100]))
    pids = client.run(os.getpid)
    killed = []

    def kill_one(intermediate):
        if not killed and intermediate.n_evals >= 10:   # mid-way through the first restart
            address, pid = sorted(pids.items())[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(address)

    remote = dfrank.maximize(remote_data, "ndcg@10", "ca", seed=4, restarts=2,
                             callback=kill_one)
    assert killed
    _same(local, remote)
    client.wait_for_workers(2, timeout=60)


def test_a_query_split_across_partitions_is_an_error_naming_both(client, tmp_path):
    data = make_letor_like(n_queries=20, docs_per_query=6, n_features=3, seed=1)
    X, y, qid = _arrays(data, [10])
    rows = X.chunks[0]
    cut = (rows[0] - 2, rows[1] + 2)   # the last two rows of query 9 go to partition 1
    with pytest.raises(DataFormatError, match=r"query .* is split: .*partition 0.* "
                                              r"partition 1"):
        dfrank.cluster.from_dask(X.rechunk((cut, -1)), y.rechunk((cut,)), qid.rechunk((cut,)))
    paths, _ = _shards(data, [10], tmp_path)
    with open(paths[1], "a") as f:   # a row of the first shard's query in the second
        f.write(open(paths[0]).readline())
    with pytest.raises(DataFormatError, match=r"part0\.txt and in .*part1\.txt"):
        dfrank.cluster.from_shards(paths)


def test_evaluate_predict_and_score_on_a_cluster_equal_one_process(client):
    pytest.importorskip("sklearn")
    data = make_letor_like(n_queries=80, docs_per_query=10, n_features=5, seed=9)
    X, y, qid = _arrays(data, [30, 31])
    est = dfrank.DirectRanker(strategy="ca", restarts=2, seed=3).fit(X, y, qid=qid)
    local = dfrank.DirectRanker(strategy="ca", restarts=2, seed=3).fit(data.X, data.y,
                                                                       qid=_rows(data))
    assert np.array_equal(est.coef_, local.coef_)
    assert np.array_equal(est.predict(X).compute(), local.predict(data.X))
    assert est.score(X, y, qid=qid) == local.score(data.X, data.y, qid=_rows(data))
    metrics = ["ndcg@10", "map", "err@10"]
    on_cluster = dfrank.evaluate_linear(
        est.coef_, dfrank.cluster.from_dask(X, y, qid), metrics, per_query=True)
    here = dfrank.evaluate_linear(est.coef_, data, metrics, per_query=True)
    for m in metrics:
        assert np.array_equal(on_cluster[m], here[m], equal_nan=True)
    scores = est.predict(X)   # a Dask array, chunked unlike the parts
    assert dfrank.evaluate(scores.rechunk(50), dfrank.cluster.from_dask(X, y, qid),
                           metrics) == \
        dfrank.evaluate(local.predict(data.X), data, metrics)


def test_the_driver_never_receives_the_features(client, monkeypatch):
    """What comes back from the workers during a fit is values, breakpoints and summaries:
    never a part's RankingData, its objective or an array as large as its features."""
    from dfrank.objectives.objective import LinearObjective

    data = make_letor_like(n_queries=60, docs_per_query=10, n_features=30, seed=2)
    received = []
    gather = type(client).gather

    def spy(self, futures, *args, **kwargs):
        out = gather(self, futures, *args, **kwargs)
        received.extend(out if isinstance(out, list) else [out])
        return out

    monkeypatch.setattr(type(client), "gather", spy)
    remote = dfrank.maximize(dfrank.cluster.from_dask(*_arrays(data, [30])), "ndcg@10", "ca",
                             seed=0, restarts=2)
    _same(dfrank.maximize(data, "ndcg@10", "ca", seed=0, restarts=2), remote)
    assert received
    for r in received:
        assert not isinstance(r, (RankingData, LinearObjective))
        arrays = [getattr(r, f) for f in vars(r)] if hasattr(r, "__dict__") else \
            (list(r.values()) if isinstance(r, dict) else [r])
        for a in arrays:
            assert not (isinstance(a, np.ndarray) and a.size >= data.X.size // 2)


def test_fit_and_evaluate_on_shards_with_a_scheduler_address(client, tmp_path, monkeypatch,
                                                             capsys):
    """``dfrank fit GLOB --scheduler ADDRESS`` writes the model a fit of the whole file
    writes; ``dfrank evaluate`` of it on the shards prints the whole file's values (with
    the address in DASK_SCHEDULER_ADDRESS and a glob, as Dask reads it)."""
    import json

    from dfrank import cli

    data = make_letor_like(n_queries=90, docs_per_query=10, n_features=5, seed=6)
    paths, whole = _shards(data, [30, 60], tmp_path)
    glob = os.path.join(tmp_path, "part*.txt")
    address = client.scheduler.address
    for args, out in (([glob, "--scheduler", address], "cluster.json"), ([whole], "one.json")):
        assert cli.main(["fit", *args, "--strategy", "ca", "--restarts", "2", "-o",
                         str(tmp_path / out), "--quiet"]) == 0
    models = [json.load(open(tmp_path / f)) for f in ("cluster.json", "one.json")]
    assert models[0]["weights"] == models[1]["weights"]
    capsys.readouterr()
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    printed = []
    for where in (glob, whole):
        assert cli.main(["evaluate", str(tmp_path / "one.json"), where, "--json", "-"]) == 0
        printed.append(json.loads(capsys.readouterr().out))
    assert printed[0] == printed[1]


def test_a_checkpointed_fit_on_a_cluster_resumes_to_the_same_result(client, tmp_path):
    """A checkpoint records data on a cluster by its parts' digests (made where they are):
    the run resumes from it to the uninterrupted result, and other data is refused."""
    data = make_letor_like(n_queries=80, docs_per_query=8, n_features=4, seed=12)
    parts = dfrank.cluster.from_dask(*_arrays(data, [40]))
    path = tmp_path / "run.ckpt"
    whole = dfrank.maximize(parts, "ndcg@10", "ca", seed=0, restarts=3, checkpoint=path)
    again = dfrank.maximize(parts, "ndcg@10", "ca", seed=0, restarts=3, resume=path)
    _same(whole, again)
    other = make_letor_like(n_queries=80, docs_per_query=8, n_features=4, seed=13)
    with pytest.raises(ValueError, match="checkpoint"):
        dfrank.maximize(dfrank.cluster.from_dask(*_arrays(other, [40])), "ndcg@10", "ca",
                        seed=0, restarts=3, resume=path)


def test_a_line_on_a_cluster_is_one_task_per_worker_and_checkpoints_bound_the_chain(client):
    """Each line search runs one task per worker (its parts together, moving its scores
    by the last step first), on the worker that holds the parts, none that moves scores
    alone except a checkpoint every CHECKPOINT_STEPS steps; the model is one process's."""
    from distributed import get_task_stream

    from dfrank.cluster import objective as cluster_objective
    from dfrank.cluster import tasks

    data = make_letor_like(n_queries=120, docs_per_query=10, n_features=8, seed=3)
    remote = dfrank.cluster.ClusterObjective(
        dfrank.cluster.from_dask(*_arrays(data, [30, 60, 90])), "ndcg@10")
    with get_task_stream(client) as stream:
        result = dfrank.maximize(remote, strategy="ca", seed=0, restarts=1)
    _same(dfrank.maximize(data, "ndcg@10", "ca", seed=0, restarts=1), result)
    workers = len(remote.groups)
    assert workers == len(client.scheduler_info()["workers"]) == 2
    ran = [(str(t["key"]), t["worker"]) for t in stream.data]
    lines = remote.traffic["lines"]
    assert lines > 2 * cluster_objective.CHECKPOINT_STEPS

    def of(fn):
        return [(k, w) for k, w in ran if k.startswith(fn.__name__ + "-")]

    assert len(of(tasks.group_line)) == lines * workers
    for key, worker in of(tasks.group_line) + of(tasks.group_moved):
        assert worker == remote.groups[int(key.rsplit("-", 1)[1])][0]
    moved = len(of(tasks.group_moved))
    assert 0 < moved <= workers * lines // cluster_objective.CHECKPOINT_STEPS
    assert {k.split("-")[0] for k, _ in ran} <= {
        tasks.group_line.__name__, tasks.group_moved.__name__, tasks.group_scores.__name__,
        tasks.per_query.__name__, tasks.flat.__name__}


def test_a_part_moves_its_scores_by_its_last_lines_step_with_that_lines_u(monkeypatch):
    """A part moving its scores by the step of the line it searched last uses that line's
    u (the coordinate's, or the direction's) instead of making it again, to the same
    scores; the step of another line makes its own."""
    from dfrank.cluster import tasks
    from dfrank.metrics.registry import get_metric

    data = make_letor_like(n_queries=30, docs_per_query=8, n_features=5, seed=4)
    part = tasks.bind(data, get_metric("ndcg@10"), "pessimistic", {})
    lam = part.space.center()
    s0 = part.scores(lam)
    made = []
    line_start = part.line_start
    monkeypatch.setattr(part, "line_start", lambda *a: made.append(a[2]) or line_start(*a))
    eye = np.eye(part.space.dim)
    direction = np.linspace(-1.0, 1.0, part.space.dim)
    for (j, delta), (k, other) in (((2, eye[2] - lam), (1, eye[1] - lam)),
                                   ((-1, direction), (-1, direction[::-1].copy()))):
        tasks.group_line([part], "g", lam, delta, j)
        made.clear()
        kept = tasks._moved(part, lam, delta.copy(), j, 0.3, s0).copy()
        assert made == []
        tasks._moved(part, lam, other, k, 0.3, s0)
        assert made == [k]
        part.last_line = (None, None)
        assert np.array_equal(kept, tasks._moved(part, lam, delta, j, 0.3, s0))
        assert made == [k, j]


def test_lines_replayed_by_a_worker_that_lost_its_scores_equal_one_process(client):
    """A worker without the scores it reached (cleared after every line here) makes them
    again from the chain's start and steps: the same points and values as one process,
    even when the caller reuses its direction's array from one line to the next."""
    from dfrank.cluster import tasks
    from dfrank.objectives.objective import LinearObjective

    data = make_letor_like(n_queries=80, docs_per_query=9, n_features=5, seed=8)
    remote = dfrank.cluster.ClusterObjective(dfrank.cluster.from_dask(*_arrays(data, [40])),
                                             "ndcg@10")
    local = LinearObjective(data, "ndcg@10")
    results = []
    for objective in (remote, local):
        point = objective.space.center()
        scores = objective.scores(point)
        direction = np.zeros(objective.space.dim)   # one array, rewritten for each line
        for k in range(20):
            direction[:] = 0.0
            direction[k % objective.space.dim] = 1.0
            res = objective.line(point, direction, rule="plateau", scores=scores)
            point, scores = res.point, res.scores
            results.append((res.value, res.t, point.copy()))
            if objective is remote:
                client.run(tasks._REACHED.clear)
    cut = len(results) // 2
    for (v, t, p), (v1, t1, p1) in zip(results[:cut], results[cut:]):
        assert (v, t) == (v1, t1) and np.array_equal(p, p1)
