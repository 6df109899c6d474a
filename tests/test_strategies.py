"""Every registered strategy against the conformance suite, plus strategy specifics."""

import numpy as np
import pytest

import dfrank
from dfrank import strategies, testing
from dfrank.objectives.objective import LinearObjective
from tests.inputs import letor_data


def unique_strategies():
    """dfrank's own strategies (the adapters of other packages, "pkg:name", have
    tests/test_external.py)."""
    seen, names = set(), []
    for name in strategies.available():
        if ":" in name:
            continue
        obj = strategies.get(name)
        key = id(obj)
        if key not in seen:
            seen.add(key)
            names.append(name)
    return names


FAST = {"coordinate_ascent": {"restarts": 2}, "steepest_ascent": {"restarts": 2},
        "pso": {"swarm_size": 10, "iterations": 30}, "random": {}, "grid": {},
        "smoothed_es": {"restarts": 2, "smoothing": 2}}


def options_for(name):
    cls = strategies.get(name)
    return dict(FAST.get(getattr(cls, "name", name), {}))


@pytest.fixture(scope="module")
def data():
    return testing.planted_data()


@pytest.mark.parametrize("name", unique_strategies())
def test_conformance(name, data):
    opts = options_for(name)
    testing.check_on_simplex(name, data, **opts)
    testing.check_reevaluation(name, data, **opts)
    testing.check_same_seed(name, data, **opts)
    testing.check_budget_monotone(name, data, **opts)


# smoothed_es answers with the average of its runs, not its best evaluated point: a budget
# that cuts its runs short leaves a poor average (its own test below lets the runs end)
@pytest.mark.parametrize("name", [n for n in unique_strategies()
                                  if n not in ("random", "smoothed_es", "ses")])
def test_beats_random(name):
    if name == "grid":  # an exhaustive grid competes in few dimensions (C(K + d, d) points)
        testing.check_beats_random(name, testing.planted_data(n_features=3), budget=1000)
    else:
        testing.check_beats_random(name, **options_for(name))


@pytest.mark.parametrize("name", unique_strategies())
def test_same_result_for_any_n_jobs(name, data):
    testing.check_n_jobs_invariant(name, data, **options_for(name))


def test_grid_finds_best_grid_point_and_ca_gets_99_percent():
    data = testing.planted_data(n_queries=30, docs_per_query=15, n_features=3, seed=4)
    obj = LinearObjective(data, "ndcg@10")
    pts = np.vstack(list(obj.space.grid(100)))
    brute = obj.batch(pts).max()
    g = dfrank.maximize(data, "ndcg@10", "grid", resolution=100)
    assert g.value == brute
    assert len(g.best_restart.info["values"]) == len(pts) == 176851
    ca = dfrank.maximize(data, "ndcg@10", "ca", restarts=10)
    assert ca.value >= 0.99 * brute


def test_exact_and_steps_line_searches_and_plateau_rule(data):
    exact = dfrank.maximize(data, "map", "ca", restarts=2, line_search="exact")
    steps = dfrank.maximize(data, "map", "ca", restarts=2, line_search="steps")
    plateau = dfrank.maximize(data, "map", "ca", restarts=2, rule="plateau")
    assert exact.best_restart.info["line_search"] == "exact"
    assert steps.best_restart.info["line_search"] == "steps"
    assert exact.plateau is not None and exact.plateau.shape == (7,)
    for r in (exact, steps, plateau):
        assert r.value == pytest.approx(LinearObjective(data, "map")(r.point), abs=1e-9)


def test_steepest_ascent_reports_zero_gradient():
    # every document of every query has the same label: the metric is flat everywhere
    X = np.random.default_rng(0).normal(size=(20, 3))
    data = dfrank.RankingData.from_arrays(X, np.ones(20), np.repeat([0, 1], 10))
    r = dfrank.maximize(data, "ndcg@10", "fdsa", restarts=1)
    assert r.best_restart.info["zero_gradient"]
    assert "gradient was exactly zero" in r.message


def test_es_stops_a_run_after_its_evaluations(data):
    # a run ends with the generation that crosses `evals`; IPOP's later runs do not start
    r = dfrank.maximize(data, "ndcg@10", "es", restarts=2, evals=300, seed=1)
    for rr in r.restarts:
        lam = 4 + int(3 * np.log(data.n_features))
        assert 300 <= rr.n_evals < 300 + lam * 2 ** rr.info["ipop_runs"]
    full = dfrank.maximize(data, "ndcg@10", "es", restarts=1, evals=None, max_restarts=1,
                           seed=1)
    assert full.n_evals > 300 and full.best_restart.info["ipop_runs"] == 2
    with pytest.raises(ValueError, match="evals"):
        dfrank.maximize(data, "ndcg@10", "es", evals=0)


@pytest.mark.parametrize("ensemble", ["best", "average"])
def test_es_smoothed_runs_conform(data, ensemble):
    # runs that end on their own (settled on the best smoothed centre), and runs that a
    # budget cuts (their best evaluated point)
    opts = dict(smoothing=3, evals=240, restarts=3, ensemble=ensemble)
    for budget in (None, 200):
        testing.check_on_simplex("es", data, budget=budget, **opts)
        testing.check_reevaluation("es", data, budget=budget, **opts)
        testing.check_same_seed("es", data, budget=budget, **opts)
        testing.check_n_jobs_invariant("es", data, budget=budget, **opts)


def test_es_smoothing_returns_its_best_smoothed_centre(data):
    r = dfrank.maximize(data, "ndcg@10", "es", smoothing=4, evals=400, restarts=2, seed=3)
    fresh = LinearObjective(data, "ndcg@10")
    for rr in r.restarts:
        assert 0 < rr.info["smoothed_value"] <= rr.trace["values"].max()  # a mean of K values
        assert rr.value == fresh(rr.point)        # the settled point, evaluated
        assert rr.value <= rr.trace["values"].max()   # not necessarily the best evaluated
        assert rr.n_evals >= 400 and (rr.n_evals - 1) % 4 == 0  # K per candidate + settle
    plain = dfrank.maximize(data, "ndcg@10", "es", evals=400, restarts=2, seed=3)
    assert "smoothed_value" not in plain.best_restart.info


def test_es_average_ensemble_is_the_mean_unit_standardized_direction(data):
    from dfrank.objectives.surrogates import feature_scale

    valid = testing.planted_data(seed=1)
    r = dfrank.maximize(data, "ndcg@10", "es", evals=300, restarts=3, seed=2,
                        ensemble="average", valid=valid)
    sc = feature_scale(data)
    units = [w * sc / np.linalg.norm(w * sc)
             for w in (dfrank.Simplex(data.n_features).to_weights(x.point) for x in r.restarts)]
    want = np.mean(units, axis=0) / sc
    got = r.weights
    np.testing.assert_allclose(got / np.linalg.norm(got), want / np.linalg.norm(want),
                               atol=1e-12)
    assert r.value == pytest.approx(r.ranker.evaluate(data, "ndcg@10"), abs=1e-12)
    assert r.valid_value == pytest.approx(r.ranker.evaluate(valid, "ndcg@10"), abs=1e-12)
    best = dfrank.maximize(data, "ndcg@10", "es", evals=300, restarts=3, seed=2, valid=valid)
    assert [x.value for x in best.restarts] == [x.value for x in r.restarts]


@pytest.mark.parametrize("opts,exc,match", [
    (dict(smoothing=-1), ValueError, "smoothing"),
    (dict(smoothing=2, smoothing_scale=0.0), ValueError, "smoothing_scale"),
    (dict(ensemble="vote"), ValueError, "ensemble"),
])
def test_es_bad_smoothing_options(data, opts, exc, match):
    with pytest.raises(exc, match=match):
        dfrank.maximize(data, "ndcg@10", "es", **opts)


def test_smoothed_es_beats_random_when_its_runs_end():
    data = testing.planted_data(n_features=8)
    ours, rnd = [], []
    for seed in range(3):
        r = dfrank.maximize(data, "ndcg@10", "smoothed_es", restarts=3, evals=1000, seed=seed)
        ours.append(r.value)
        rnd.append(dfrank.maximize(data, "ndcg@10", "random", budget=r.n_evals,
                                   seed=seed).value)
    assert np.mean(ours) > np.mean(rnd)


def test_es_average_needs_a_linear_ranker():
    space = dfrank.Box([0, 0], [1, 1])
    obj = dfrank.FunctionObjective(lambda x: -float(((x - 0.3) ** 2).sum()), space)
    with pytest.raises(TypeError, match="ensemble='average'"):
        dfrank.maximize(obj, strategy="es", ensemble="average")
    r = dfrank.maximize(obj, strategy="es", smoothing=2, evals=200, restarts=1)
    assert r.value > -0.01   # a box is smoothed in the unit cube


def test_box_objective_strategies():
    def fn(x):
        return -float(((x - np.array([0.3, 0.7])) ** 2).sum())

    space = dfrank.Box([0, 0], [1, 1])
    for name, opts in [("ca", {"restarts": 1}), ("pso", {"iterations": 20}),
                       ("random", {"n_samples": 300}), ("grid", {"resolution": 21}),
                       ("fdsa", {"restarts": 1})]:
        r = dfrank.maximize(dfrank.FunctionObjective(fn, space), strategy=name, **opts)
        assert r.value > -0.01, name
        with pytest.raises(ValueError, match="box search"):
            r.ranker
    with pytest.raises(TypeError, match="line_search='exact'"):
        dfrank.maximize(dfrank.FunctionObjective(fn, space), strategy="ca",
                        line_search="exact")


def test_valid_chooses_restart_and_reports(data):
    valid = testing.planted_data(seed=1)
    r = dfrank.maximize(data, "ndcg@10", "ca", restarts=3, valid=valid)
    assert r.valid_value is not None
    assert r.valid_value == max(x.valid_value for x in r.restarts)
    assert r.valid_value == pytest.approx(r.ranker.evaluate(valid, "ndcg@10"), abs=1e-12)


def test_budget_exhausted_returns_best_so_far(data):
    r = dfrank.maximize(data, "ndcg@10", "pso", budget=45, swarm_size=10)
    assert r.n_evals == 45 and r.status == "budget" and not r.interrupted
    assert "budget" in r.message


def test_callback_stop_iteration_returns_best_so_far(data):
    seen = []

    def cb(res):
        seen.append(res.n_evals)
        if res.n_evals >= 30:
            raise StopIteration

    r = dfrank.maximize(data, "ndcg@10", "random", callback=cb, batch_size=10)
    assert r.status == "stopped" and r.n_evals == 30 and seen[-1] == 30
    assert np.isfinite(r.value)


def test_keyboard_interrupt_returns_best_so_far(data):
    def cb(res):
        if res.n_evals >= 20:
            raise KeyboardInterrupt

    r = dfrank.maximize(data, "ndcg@10", "random", callback=cb, batch_size=10)
    assert r.interrupted and r.status == "interrupted" and r.n_evals == 20


def test_result_repr_json_and_model_round_trip(data, tmp_path):
    r = dfrank.maximize(data, "ndcg@10", "ca", restarts=2)
    assert "value:" in repr(r) and "coordinate_ascent" in repr(r)
    r.save(tmp_path / "result.json")
    import json
    d = json.loads((tmp_path / "result.json").read_text())
    assert d["format"] == "dfrank.driver.result" and d["version"] == 1
    r.ranker.save(tmp_path / "model.json")
    m = dfrank.LinearRanker.load(tmp_path / "model.json")
    np.testing.assert_array_equal(m.weights, r.weights)
    assert m.evaluate(data, "ndcg@10") == pytest.approx(r.value, abs=1e-12)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        dfrank.LinearRanker.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"format": "something", "version": 1}')
    with pytest.raises(ValueError, match="format tag 'something'"):
        dfrank.LinearRanker.load(tmp_path / "other.json")
    (tmp_path / "future.json").write_text('{"format": "dfrank.linear_ranker", "version": 99}')
    with pytest.raises(ValueError, match="version 99"):
        dfrank.LinearRanker.load(tmp_path / "future.json")
    with pytest.raises(ValueError, match="feature ids 4, 5, 6 that the data does not have"):
        m.predict(testing.planted_data(n_features=3))


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"strategy": "coordinate_acsent"}, ValueError, "Did you mean 'coordinate_ascent'"),
    ({"strategy": "ca", "restart": 3}, TypeError, "Did you mean 'restarts'"),
    ({"strategy": "ca", "restarts": 0}, ValueError, "restarts must be an integer >= 1"),
    ({"strategy": "ca", "budget": -5}, ValueError, "budget must be an integer >= 0"),
    ({"strategy": "pso", "swarm_size": 1}, ValueError, "swarm_size must be an integer >= 2"),
    ({"strategy": "ca", "n_jobs": 0}, ValueError, "n_jobs"),
    ({"strategy": "ca", "rule": "widest"}, ValueError, "rule must be one of"),
    ({"strategy": "grid", "resolution": 100}, ValueError, "more than max_points"),
])
def test_bad_input(data, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        dfrank.maximize(data, "ndcg@10", **kwargs)


def test_valid_with_other_feature_count(data):
    with pytest.raises(ValueError, match="valid has 3 features but the training data has 6"):
        dfrank.maximize(data, "ndcg@10", "ca", valid=testing.planted_data(n_features=3))


def test_registry_and_plugins():
    assert {"ca", "coordinate_ascent", "pso", "grid", "random", "fdsa"} <= set(
        strategies.available())
    assert strategies.get("ca") is strategies.get("coordinate_ascent")

    with pytest.raises(ValueError, match="already registered"):
        strategies.register("ca")(strategies.CoordinateAscent)

    def my_search(objective, rng):
        objective.batch(objective.space.sample(rng, 20))

    data = testing.planted_data()
    r = dfrank.maximize(data, "ndcg@10", my_search)
    assert r.n_evals == 20 and r.strategy == "my_search"
    inst = strategies.CoordinateAscent(restarts=1, line_search="steps")
    r2 = dfrank.maximize(data, "ndcg@10", inst)
    assert r2.params["line_search"] == "steps"


def test_ready_made_callbacks(data, capsys):
    from dfrank.driver.callbacks import EarlyStopping, Logger, chain

    stop = EarlyStopping(patience=40)
    r = dfrank.maximize(data, "ndcg@10", "random", callback=chain(stop, Logger(every=0)),
                        batch_size=10, n_samples=100000)
    assert r.status == "stopped" and r.n_evals < 100000
    assert "evals  best ndcg@10" in capsys.readouterr().err
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=0)


def test_restart_seeds_made_on_demand_equal_spawned_ones():
    from dfrank.driver.parallel import child, seed_sequence

    for seed in (0, 12345, None):
        root = seed_sequence(seed)
        kids = seed_sequence(root.entropy).spawn(5)
        for i, k in enumerate(kids):
            np.testing.assert_array_equal(child(root, i).generate_state(4),
                                          k.generate_state(4))


def test_time_limit_with_a_million_restarts_stops_on_time(data):
    import time

    t = time.perf_counter()
    r = dfrank.maximize(data, "ndcg@10", "random", max_seconds=0.3, restarts=10 ** 6,
                        n_samples=50)
    assert time.perf_counter() - t < 3.0
    assert r.status == "time" and "of 1000000 restarts" in r.message


def test_progress_bar_shows_the_best_value_of_all_restarts(data, monkeypatch):
    # the running restart's best can be below a finished restart's value: the bar keeps
    # the best of all
    notes = []

    class Bar:
        def set_postfix_str(self, text, refresh=True):
            notes.append(float(text.rsplit(" ", 1)[1]))

        def update(self, n):
            pass

        def close(self):
            pass

    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", lambda *args, **kwargs: Bar())
    r = dfrank.maximize(data, "ndcg@10", "random", restarts=6, budget=600, seed=2,
                        progress=True)
    running = [rr.trace["values"] for rr in r.restarts]
    assert any(v[0] < max(w.max() for w in running[:i])
               for i, v in enumerate(running) if i)      # the case arises here
    assert notes == sorted(notes) and notes[-1] == pytest.approx(r.value, abs=5e-5)


def _many_queries(nq, seed=0):
    return dfrank.data.datasets.make_letor_like(n_queries=nq, docs_per_query=(3, 6), n_features=4,
                                           seed=seed)


def test_auto_runs_smoothed_es_on_few_queries_and_ca_on_many():
    """The default picks by the training queries (strategies/auto.py): the run is that of
    the strategy picked, bit for bit, and the result names it."""
    from dfrank.strategies.auto import MANY_QUERIES
    few, many = _many_queries(MANY_QUERIES - 1), _many_queries(MANY_QUERIES)
    r = dfrank.maximize(few, "ndcg@10", budget=300, seed=3)
    want = dfrank.maximize(few, "ndcg@10", "smoothed_es", budget=300, seed=3)
    assert r.strategy == "smoothed_es" and np.array_equal(r.weights, want.weights)
    r = dfrank.maximize(many, "ndcg@10", seed=3, max_sweeps=1)
    want = dfrank.maximize(many, "ndcg@10", "ca", restarts=1, seed=3, max_sweeps=1)
    assert r.strategy == "coordinate_ascent" and len(r.restarts) == 1
    assert np.array_equal(r.weights, want.weights) and r.value == want.value


def test_auto_passes_its_options_on_and_names_the_strategy_in_errors():
    many = _many_queries(1000)
    r = dfrank.maximize(many, "ndcg@10", "auto", restarts=2, max_sweeps=1, seed=0)
    assert r.strategy == "coordinate_ascent" and len(r.restarts) == 2
    with pytest.raises(TypeError, match="smoothing"):
        dfrank.maximize(many, "ndcg@10", "auto", smoothing=4)   # ca has no smoothing
    box = dfrank.ScoringObjective(lambda x: np.array([x[0], -x[0]]),
                                  dfrank.RankingData.from_arrays(np.eye(2), [1, 0], [0, 0]),
                                  dfrank.Box([0.0], [1.0]))
    assert dfrank.maximize(box, strategy="auto", budget=5).strategy == "pattern"


@pytest.mark.parametrize("strategy", ["es", "ca", "pso", "random", "cma:es"])
def test_every_strategy_evaluates_its_start_within_no_time(strategy):
    """With ``max_seconds=0`` a strategy must still evaluate its start and return it, the
    same for the same seed (no empty result, no NaN)."""
    if ":" in strategy:
        pytest.importorskip(strategy.split(":")[0])
    data = letor_data()
    res = dfrank.maximize(data, strategy=strategy, max_seconds=0, seed=0)
    assert res.status == "time" and res.n_evals >= 1 and np.isfinite(res.value)
    assert res.value == dfrank.maximize(data, strategy=strategy, max_seconds=0,
                                        seed=0).value


def test_the_registries_names_say_which_registry():
    """dfrank.registry and dfrank.metrics.registry both exported get, available and
    register, and readers and tools confused them (issue #65): the modules' names now say
    which (get_strategy, get_metric, ...), the former names of the unreleased version are
    gone; the packages keep the short names, which say which."""
    import dfrank.metrics
    import dfrank.strategies
    from dfrank import registry
    from dfrank.metrics import registry as metric_registry

    assert registry.get_strategy("ca") is dfrank.strategies.get("ca")
    assert metric_registry.get_metric("map").label == dfrank.metrics.get("map").label
    assert "ca" in registry.strategy_names() and "map" in metric_registry.metric_names()
    for module, old in ((registry, "get"), (registry, "register"),
                        (metric_registry, "available")):
        assert not hasattr(module, old)


def test_the_progress_bar_of_a_coordinate_ascent_says_its_sweep_and_line(monkeypatch):
    """One restart of ca on large data is one long step of a bar counting restarts: the
    bar's note says which sweep and which of its lines the search is at."""
    notes = []

    class Bar:
        def set_postfix_str(self, text, refresh=True):
            notes.append(text)

        def update(self, n):
            pass

        def close(self):
            pass

    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", lambda *args, **kwargs: Bar())
    data = testing.planted_data()
    r = dfrank.maximize(data, "ndcg@10", "ca", restarts=1, seed=0, progress=True)
    lines = data.n_features + 1 - int(LinearObjective(data).flat_coordinates().sum())
    assert f"sweep 1, line 1/{lines}, " in notes[1]
    assert any(n.startswith(f"sweep {r.restarts[0].info['sweeps']}, ") for n in notes)
