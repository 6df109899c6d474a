"""maximize and compare on a Dask cluster (joblib's dask backend) give the local results."""

import numpy as np
import pytest

import dfrank
from dfrank import testing

distributed = pytest.importorskip("distributed", reason="needs dask[distributed] "
                                                        "(pip install 'dfrank[dask]')")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


@pytest.mark.slow
def test_maximize_and_compare_on_a_local_cluster_equal_local_runs(client):
    import joblib

    data = testing.planted_data()
    runs = [("ca", {"restarts": 4}), ("pso", {"restarts": 2, "iterations": 25})]
    local = [dfrank.maximize(data, "ndcg@10", s, seed=3, budget=400, **o) for s, o in runs]
    local_cmp = dfrank.compare(data, ["ca", "random"], seeds=[0, 1], budget=100)
    with joblib.parallel_config(backend="dask"), distributed.get_task_stream(client) as ts:
        remote = [dfrank.maximize(data, "ndcg@10", s, seed=3, budget=400, n_jobs=-1, **o)
                  for s, o in runs]
        remote_cmp = dfrank.compare(data, ["ca", "random"], seeds=[0, 1], budget=100,
                                    n_jobs=-1)
    for a, b in zip(local, remote):
        assert a.value == b.value and np.array_equal(a.point, b.point)
        assert a.n_evals == b.n_evals and len(b.restarts) == len(a.restarts)
    assert [(r.strategy, r.seed, r.train, r.n_evals) for r in local_cmp.runs] == \
        [(r.strategy, r.seed, r.train, r.n_evals) for r in remote_cmp.runs]
    # the work ran as tasks on the cluster's two workers, not in this process
    assert len(ts.data) >= 4 and len({t["worker"] for t in ts.data}) >= 1
    assert {t["worker"] for t in ts.data} <= set(client.scheduler_info()["workers"])


def test_dask_sees_the_real_size_of_objectives():
    """joblib's dask backend scatters an argument once per call when dask's sizeof finds
    it large; dfrank tells sizeof what objectives and data really hold."""
    from dask.sizeof import sizeof

    from dfrank.objectives.objective import LinearObjective
    from dfrank.driver.parallel import _teach_dask_sizes

    _teach_dask_sizes()
    data = dfrank.data.datasets.make_letor_like(n_queries=50, docs_per_query=40, n_features=20)
    obj = LinearObjective(data, "ndcg@10")
    assert sizeof(data) >= data.X.nbytes
    assert sizeof(obj) >= data.X.nbytes


@pytest.mark.slow
def test_tune_runs_a_batch_on_the_cluster(client):
    """dfrank.tune's runs of a batch go through joblib: on the cluster, the same tune."""
    import joblib

    from dfrank import ir
    from tests.inputs import EngineRun, small_collection

    engine = ir.Engine(*small_collection())
    qrels = {q: engine.qrels[q] for q in engine.qids}
    space = {"k1": (0.1, 3.0), "b": (0.0, 1.0)}
    local = dfrank.tune(EngineRun(engine), space, qrels, budget=16, seed=2)
    with joblib.parallel_config(backend="dask"), distributed.get_task_stream(client) as ts:
        remote = dfrank.tune(EngineRun(engine), space, qrels, budget=16, seed=2, n_jobs=-1)
    assert remote.best_params == local.best_params and remote.value == local.value
    assert len(ts.data) >= 8


@pytest.mark.slow
def test_bench_runs_on_the_cluster(client, tmp_path):
    """dfrank bench's runs with an evaluation budget: on the cluster, the same traces."""
    import joblib

    from dfrank.problems import Suite
    from dfrank.problems import references as refs
    from dfrank.problems import bench
    from tests.suites import write_mq2008

    write_mq2008(str(tmp_path), np.random.default_rng(5))
    inst = Suite(tmp_path).select(["letor-mq2008-map"], folds=[1])
    refs.save(refs.compute(str(tmp_path), inst, command="test"), tmp_path / "refs.json")
    kw = dict(problems="letor-mq2008-map", folds=[1], seeds=range(2), budget=40,
              references=str(tmp_path / "refs.json"))
    local = bench(tmp_path, ["ca", "random"], n_jobs=1, **kw)
    with joblib.parallel_config(backend="dask"), distributed.get_task_stream(client) as ts:
        remote = bench(tmp_path, ["ca", "random"], n_jobs=-1, **kw)
    key = lambda r: (r["solver"], r["seed"], r["repeat"])   # noqa: E731

    def seen(runs):
        return [(key(r), r["trace"]["evals"], r["trace"]["values"])
                for r in sorted(runs, key=key)]

    assert seen(local.runs) == seen(remote.runs) and len(local.runs) == 6
    assert len(ts.data) >= 4
