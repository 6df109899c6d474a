"""dfrank's threading defaults: chosen before numba's pool starts, the user's environment
always wins."""

import dfrank
from dfrank import _threads


def test_passive_openmp_only_without_tbb_and_without_a_user_choice(monkeypatch):
    monkeypatch.setattr(_threads, "has_tbb", lambda: False)
    env = {}
    assert _threads.choose_defaults(env) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"}
    for user in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "10000"},
                 {"NUMBA_THREADING_LAYER": "omp"}, {"NUMBA_THREADING_LAYER": "workqueue"}):
        env = dict(user)
        assert _threads.choose_defaults(env) == {} and env == user
    monkeypatch.setattr(_threads, "has_tbb", lambda: True)
    env = {}
    assert _threads.choose_defaults(env) == {} and env == {}


def test_tbb_is_the_layer_when_installed():
    import numba
    import numpy as np

    data = dfrank.RankingData.from_arrays(np.eye(3), [0, 1, 2], [1, 1, 1])
    dfrank.evaluate(np.arange(3.0), data, "map")   # starts the pool
    if _threads.has_tbb():
        assert numba.threading_layer() == "tbb"
