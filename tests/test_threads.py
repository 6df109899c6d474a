"""dfrank's threading defaults: chosen before numba's pool starts, the user's environment
always wins, and the layer that actually runs is TBB or OpenMP's passive wait."""

import json
import os
import subprocess
import sys

import pytest

from dfrank import _threads

USER_SETTINGS = ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def test_tbb_loaded_else_passive_openmp_and_the_user_wins():
    def no_tbb():
        return None

    env = {}
    assert _threads.choose_defaults(env, load=no_tbb) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"}
    for user in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "10000"},
                 {"NUMBA_THREADING_LAYER": "omp"}, {"NUMBA_THREADING_LAYER": "workqueue"},
                 {"NUMBA_THREADING_LAYER": "tbb"}):
        env = dict(user)
        assert _threads.choose_defaults(env, load=no_tbb) == {} and env == user
    env = {}
    assert _threads.choose_defaults(env, load=lambda: "/x/libtbb.so.12") == \
        {"tbb": "/x/libtbb.so.12"} and env == {}
    calls = []
    env = {"NUMBA_THREADING_LAYER": "omp"}
    assert _threads.choose_defaults(env, load=lambda: calls.append(1)) == {} and not calls


def _layer_in_a_fresh_process(**env_extra):
    """(layer, OMP_WAIT_POLICY) of a new process that imports dfrank and runs a parallel
    kernel, with none of the user's threading settings but ``env_extra``."""
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    env.update(env_extra)
    code = ("import os, json, numpy as np, numba, dfrank\n"
            "d = dfrank.RankingData.from_arrays(np.eye(3), [0, 1, 2], [1, 1, 1])\n"
            "dfrank.evaluate(np.arange(3.0), d, 'map')\n"
            "print(json.dumps([numba.threading_layer(), os.environ.get('OMP_WAIT_POLICY')]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_layer_that_runs_is_tbb_or_passive_openmp():
    """In this install (a virtualenv in CI, where the loader cannot find libtbb on its own):
    TBB runs wherever the tbb package is installed, and OpenMP never spins."""
    layer, wait = _layer_in_a_fresh_process()
    if _threads.tbb_library() is not None:
        assert layer == "tbb"
    if layer == "omp":
        assert (wait or "").upper() == "PASSIVE", "OpenMP's workers would spin"


def test_the_users_layer_wins():
    layer, wait = _layer_in_a_fresh_process(NUMBA_THREADING_LAYER="omp",
                                            OMP_WAIT_POLICY="ACTIVE")
    assert (layer, wait) == ("omp", "ACTIVE")


@pytest.mark.skipif(_threads.tbb_library() is None, reason="the tbb package is not installed")
def test_tbb_library_is_the_wheels_file():
    path = _threads.tbb_library()
    assert os.path.basename(path).startswith(("libtbb", "tbb12")) and os.path.exists(path)
