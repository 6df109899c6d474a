"""The adapters of external optimizers (scipy, pycma, nevergrad, optuna): the conformance
suite, the cube-to-simplex map, the sign, the budget. Each is skipped with a reason when
its package is not installed."""

import numpy as np
import pytest

import dfrank
from dfrank import strategies, testing
from dfrank.objectives.objective import LinearObjective

EXTERNAL = {"scipy:nelder-mead": "scipy", "scipy:powell": "scipy",
            "scipy:differential_evolution": "scipy", "cma:es": "cma",
            "nevergrad:NGOpt": "nevergrad", "optuna:tpe": "optuna", "optuna:cmaes": "cmaes"}


def needs(name):
    pytest.importorskip(EXTERNAL[name], reason=f"{name} needs the {EXTERNAL[name]!r} "
                                               f"package (pip install 'dfrank[compare]')")
    if name.startswith("optuna"):
        pytest.importorskip("optuna", reason=f"{name} needs optuna")


@pytest.fixture(scope="module")
def data():
    return testing.planted_data()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXTERNAL))
def test_conformance(name, data):
    needs(name)
    testing.check_on_simplex(name, data)
    testing.check_reevaluation(name, data)
    testing.check_same_seed(name, data)
    if name != "nevergrad:NGOpt":
        # NGOpt picks its algorithm from the budget: on these 6 coordinates with 400
        # evaluations it runs a meta-model over CmaFmin2, which nevergrad 1.0 leaves to
        # pycma's clock seed, so that budget's value changes from run to run
        testing.check_budget_monotone(name, data)
    testing.check_beats_random(name)
    testing.check_n_jobs_invariant(name, data)


@pytest.mark.parametrize("name", list(EXTERNAL))
def test_spends_exactly_the_budget(name, data):
    """The objective counts and stops the optimizer (or the optimizer's own limit is set
    to the budget); none of them converges within 150 evaluations on this problem, so
    each uses exactly that many."""
    needs(name)
    r = dfrank.maximize(data, "ndcg@10", name, seed=0, budget=150)
    assert r.n_evals == 150
    assert r.restarts[0].status in ("budget", "completed")


def test_cube_to_simplex_map_and_sign(data):
    from dfrank.strategies.external import ScipyLocal

    obj = LinearObjective(data, "ndcg@10")
    Z = np.array([[0.2, 0.2, 0.0, 0.0, 0.0, 0.0, 0.6], [0, 0, 0, 0, 0, 0, 0],
                  [2.0, -1.0, 0.5, 0.5, 0.5, 0.5, 0.5]])
    P = ScipyLocal.to_points(obj.space, Z)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P[0], Z[0])                       # already on the simplex
    np.testing.assert_allclose(P[1], np.full(7, 1 / 7))          # z = 0: the center
    assert P[2, 1] == 0.0 and P[2, 0] == 2 * P[2, 2]             # clipped to the cube first
    # scaling z keeps the point (rank-equivalent rankers on one ray)
    np.testing.assert_allclose(ScipyLocal.to_points(obj.space, 0.3 * Z[:1]), P[:1])
    adapter = ScipyLocal(method="Powell")
    assert adapter.loss(obj, Z[0]) == -obj(P[0])
    np.testing.assert_array_equal(adapter.losses(obj, Z), -obj.batch(P))


def test_box_objective_uses_the_box_map():
    pytest.importorskip("cma")
    box = dfrank.Box([0.0, 10.0], [3.0, 1000.0], log=[False, True])
    obj = dfrank.FunctionObjective(lambda x: -(x[0] - 1.2) ** 2 - np.log10(x[1] / 100) ** 2,
                                   box)
    r = dfrank.maximize(obj, strategy="cma:es", seed=0, budget=300)
    assert abs(r.point[0] - 1.2) < 0.05 and abs(r.point[1] / 100 - 1) < 0.1


def test_nevergrad_family_and_unknown_optimizer(data):
    pytest.importorskip("nevergrad")
    r = dfrank.maximize(data, "ndcg@10", "nevergrad:TwoPointsDE", seed=0, budget=80)
    assert r.strategy == "nevergrad:TwoPointsDE" and r.n_evals == 80
    with pytest.raises(ValueError, match="nevergrad has no optimizer 'NGOptt'.*NGOpt"):
        dfrank.maximize(data, "ndcg@10", "nevergrad:NGOptt", budget=10)


def test_registered_only_when_installed():
    import importlib.util

    names = strategies.available()
    for name, package in EXTERNAL.items():
        assert (name in names) == (importlib.util.find_spec(package) is not None), name


def test_bad_options(data):
    pytest.importorskip("cma")
    with pytest.raises(ValueError, match="sigma0"):
        dfrank.maximize(data, "ndcg@10", "cma:es", budget=10, sigma0=-1)
    with pytest.raises(ValueError, match="xtol"):
        dfrank.maximize(data, "ndcg@10", "scipy:powell", budget=10, xtol=0)
    with pytest.raises(ValueError, match="method must be one of"):
        dfrank.maximize(data, "ndcg@10", "scipy:powell", budget=10, method="BFGS")
    with pytest.raises(ValueError, match="popsize"):
        dfrank.maximize(data, "ndcg@10", "scipy:differential_evolution", budget=10,
                        popsize=0)
