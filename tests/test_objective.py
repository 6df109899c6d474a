"""Objectives: batch == loop of singles, exact budgets, best-so-far, bad input."""

import time

import numpy as np
import pytest

import dfrank
from dfrank import Box, BudgetExhausted, FunctionObjective, LinearObjective, ScoringObjective


def planted(nq=20, m=15, d=5, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    n = nq * m
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    s = X @ w + 0.5 * rng.normal(size=n)
    y = np.digitize(s, np.quantile(s, [0.6, 0.85, 0.95])).astype(float)
    return dfrank.RankingData.from_arrays(X.astype(dtype), y, np.repeat(np.arange(nq), m))


def _float64_and_one_float32(metrics):
    """(metric, dtype) pairs: every metric on float64 features, the first on float32 too.
    float32 features change only how the scores are made, which every metric family's
    entry point shares (and each family's float32 version is a compile of its own)."""
    return [(m, np.float64) for m in metrics] + [(metrics[0], np.float32)]


@pytest.mark.slow
@pytest.mark.parametrize("metric, dtype",
                         _float64_and_one_float32(["ndcg@10", "map", "p@5", "mrr", "err@5"]))
def test_batch_equals_loop_of_singles_exactly(metric, dtype):
    data = planted(dtype=dtype)
    obj = LinearObjective(data, metric)
    pts = obj.space.sample(np.random.default_rng(1), 37)
    batch = obj.batch(pts)
    singles = np.array([LinearObjective(data, metric)(p) for p in pts])
    assert np.array_equal(batch, singles)
    assert obj.n_evals == 37
    # and equals the metric of the weights' scores
    w = obj.space.to_weights(pts[3])
    assert batch[3] == pytest.approx(dfrank.evaluate(data.X.astype(float) @ w, data, metric),
                                     abs=1e-12 if dtype == np.float64 else 1e-2)



@pytest.mark.parametrize("metric, dtype",
                         _float64_and_one_float32(["ndcg@10", "map", "p@5", "ndcg"]))
def test_values_do_not_depend_on_the_groups_of_queries(metric, dtype, monkeypatch):
    # web-sized sets are scored in more groups (one group's features fit in cache); a
    # tiny group size makes one group per query here, and no value may change
    import dfrank.metrics.bound as bound

    data = planted(nq=40, m=25, d=7, dtype=dtype)
    pts = LinearObjective(data, metric).space.sample(np.random.default_rng(2), 9)
    default = LinearObjective(data, metric)
    assert default.bound._n_groups(default.XT, default.rows, 16) == 16
    before = default.batch(pts)
    monkeypatch.setattr(bound, "_GROUP_BYTES", 64)
    small = LinearObjective(data, metric)
    assert small.bound._n_groups(small.XT, small.rows, 16) == data.n_queries
    assert np.array_equal(small.batch(pts), before)
    assert np.array_equal(np.array([small(p) for p in pts]), before)

def test_budget_stops_exactly():
    data = planted()
    obj = LinearObjective(data, "ndcg@10", max_evals=10)
    pts = obj.space.sample(np.random.default_rng(0), 7)
    obj.batch(pts)
    with pytest.raises(BudgetExhausted) as e:
        obj.batch(pts)
    assert obj.n_evals == 10 and e.value.n_evals == 10
    all_vals = LinearObjective(data, "ndcg@10").batch(np.vstack([pts, pts[:3]]))
    assert e.value.best_value == all_vals.max()
    np.testing.assert_array_equal(e.value.best_point,
                                  np.vstack([pts, pts[:3]])[np.argmax(all_vals)])
    with pytest.raises(BudgetExhausted):
        obj(pts[0])
    assert obj.n_evals == 10


def test_settle_keeps_a_lower_point_as_the_answer():
    data = planted()
    obj = LinearObjective(data, "ndcg@10")
    pts = obj.space.sample(np.random.default_rng(1), 20)
    vals = obj.batch(pts)
    lo = int(np.argmin(vals))
    trace_before = obj.trace["values"].copy()
    assert obj.settle(pts[lo]) == vals[lo]
    assert obj.best_value == vals[lo] and np.array_equal(obj.best_point, pts[lo])
    assert obj.n_evals == 21
    np.testing.assert_array_equal(obj.trace["values"], trace_before)
    with pytest.raises(ValueError, match="one point"):
        obj.settle(pts[:2])
    capped = LinearObjective(data, "ndcg@10", max_evals=20)
    capped.batch(pts)
    with pytest.raises(BudgetExhausted):
        capped.settle(pts[lo])
    assert capped.best_value == vals.max()


def test_line_search_counts_and_budget():
    data = planted()
    obj = LinearObjective(data, "map", max_evals=2)
    lam = obj.space.center()
    obj.line(lam, np.eye(6)[0])
    obj.line(lam, np.eye(6)[1])
    assert obj.n_evals == 2 and obj.n_lines == 2
    with pytest.raises(BudgetExhausted):
        obj.line(lam, np.eye(6)[2])


def test_a_line_search_counts_its_line_cost():
    """With line_cost c a line search takes c evaluations of the budget, and one that
    would overrun it is refused whole; the trace and the count agree."""
    data = planted()
    obj = LinearObjective(data, "map", max_evals=25)
    obj.set_line_cost(10)
    lam = obj.space.center()
    obj.batch(lam[None, :])
    obj.line(lam, np.eye(6)[0])
    obj.line(lam, np.eye(6)[1])
    assert obj.n_evals == 21 and obj.n_lines == 2
    assert obj.trace["evals"].max() <= 21
    with pytest.raises(BudgetExhausted):
        obj.line(lam, np.eye(6)[2])
    assert obj.n_evals == 21
    obj.batch(np.vstack([lam] * 4))       # single evaluations use what is left
    assert obj.n_evals == 25
    assert obj.fresh().line_cost == 10    # restarts count alike
    for bad in (0, 1.5, True, -2):
        with pytest.raises(ValueError, match="line_cost"):
            obj.set_line_cost(bad)


def test_line_search_cost_is_measured_in_single_evaluations():
    from dfrank.objectives.objective import line_search_cost

    obj = LinearObjective(planted(), "ndcg@10")
    cost = line_search_cost(obj, repeats=5)
    assert cost > 0 and obj.n_evals == 0   # measured on a copy
    with pytest.raises(ValueError, match="no exact line search"):
        line_search_cost(FunctionObjective(lambda lam: 0.0, obj.space))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_coordinate_line_same_as_any_direction(dtype):
    """Along a coordinate the line reuses u (and its order) kept with the data; the result
    is the one of the same direction computed as any other (zeros and signed zeros in X)."""
    data = planted(dtype=dtype)
    X = data.X.copy()
    X[::3, 1] = 0.0
    X[1::3, 1] = -0.0
    data = dfrank.RankingData.from_arrays(X, data.y, np.repeat(np.arange(20), 15))
    obj = LinearObjective(data, "map")
    rng = np.random.default_rng(4)
    for j in range(obj.space.dim):
        lam = obj.space.sample(rng)
        delta = np.eye(obj.space.dim)[j]
        a = obj.line(lam, delta)
        s0, u = dfrank._kernels.scoring.linear_scores(obj.XT, np.vstack(
            [obj.space.to_weights(lam), obj.space.direction_to_weights(delta)]), obj.rows)
        assert np.array_equal(obj._coordinate_line(j)[0].view(np.int64), u.view(np.int64))
        b = obj.line_scores(s0, u)  # as any other direction: no order kept
        assert (a.value, a.t, a.lower, a.upper) == (b.value, b.t, b.lower, b.upper)



@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_line_carries_the_scores_to_the_new_point(dtype):
    """Given the scores at its start, a line search returns those at the new point: the
    same as scoring it anew within rounding, for coordinates (the augmented one too) and
    any direction, from one line to the next; the line is the one searched without them
    (within the rounding by which carried and fresh scores differ)."""
    obj = LinearObjective(planted(dtype=dtype), "ndcg@10")
    rng = np.random.default_rng(5)
    lam = obj.space.sample(rng)
    s = obj.scores(lam)
    for i in range(3 * obj.space.dim):
        j = i % obj.space.dim
        delta = np.eye(obj.space.dim)[j] if i % 3 else rng.normal(size=obj.space.dim)
        a = obj.line(lam, delta, rule="plateau", scores=s)
        b = obj.line(lam, delta, rule="plateau")
        assert a.value == b.value and b.scores is None
        np.testing.assert_allclose([a.t, a.lower, a.upper], [b.t, b.lower, b.upper],
                                   rtol=1e-9)
        fresh = obj.scores(a.point)
        np.testing.assert_allclose(a.scores, fresh, rtol=1e-9, atol=1e-12 * np.abs(fresh).max())
        assert (a.scores is s) == (a.t == 0)
        lam, s = a.point, a.scores
    with pytest.raises(ValueError, match="one score per document"):
        obj.line(lam, np.eye(obj.space.dim)[0], scores=s[:-1])

def test_time_budget():
    data = planted()
    obj = LinearObjective(data, "ndcg@10", max_seconds=0.05)
    pts = obj.space.sample(np.random.default_rng(0), 5)
    with pytest.raises(BudgetExhausted) as e:
        while True:
            obj.batch(pts)
            time.sleep(0.01)
    assert e.value.reason == "time" and e.value.best_point is not None


def test_trace_is_monotone_step_function():
    data = planted()
    obj = LinearObjective(data, "ndcg@10")
    for _ in range(5):
        obj.batch(obj.space.sample(np.random.default_rng(_), 8))
    tr = obj.trace
    assert np.all(np.diff(tr["values"]) > 0) and np.all(np.diff(tr["evals"]) > 0)
    assert tr["values"][-1] == obj.best_value


@pytest.mark.parametrize("bad,match", [
    (np.ones(3) / 3, "6 coordinates"),
    (np.array([1.2, -0.2, 0, 0, 0, 0]), ">= 0"),
    (np.array([np.inf, 0, 0, 0, 0, 0]), "non-finite"),
])
def test_bad_points(bad, match):
    obj = LinearObjective(planted(), "ndcg@10")
    with pytest.raises(ValueError, match=match):
        obj(bad)
    with pytest.raises(ValueError, match=match):
        obj.line(bad, np.eye(6)[0])
    with pytest.raises(ValueError, match="direction must have 6 finite"):
        obj.line(obj.space.center(), np.ones(3))


def test_bad_budget_and_data():
    data = planted()
    with pytest.raises(ValueError, match="max_evals"):
        LinearObjective(data, max_evals=-1)
    with pytest.raises(ValueError, match="max_seconds"):
        LinearObjective(data, max_seconds=-2.0)
    with pytest.raises(TypeError, match="RankingData"):
        LinearObjective(np.ones((3, 3)))
    with pytest.raises(ValueError, match="unknown metric"):
        LinearObjective(data, "ndgc@10")


def test_scoring_objective_bm25_like():
    data = planted(d=2)
    X = data.X

    def score(x):  # a two-parameter "retrieval model"
        return X[:, 0] * x[0] + np.tanh(X[:, 1] * x[1])

    obj = ScoringObjective(score, data, Box([0, 0], [3, 1], names=["k1", "b"]), "ndcg@10")
    v = obj([1.2, 0.75])
    assert 0 <= v <= 1 and obj.n_evals == 1
    assert np.array_equal(obj.batch([[1.2, 0.75], [0, 1]])[:1], [v])

    bad_len = ScoringObjective(lambda x: np.ones(5), data, Box([0], [1]))
    with pytest.raises(ValueError, match="one score per document"):
        bad_len([0.5])
    nan = ScoringObjective(lambda x: np.full(data.n_docs, np.nan), data, Box([0], [1]))
    with pytest.raises(ValueError, match="finite"):
        nan([0.5])
    with pytest.raises(ValueError, match="outside"):
        obj([4.0, 0.5])


def test_function_objective():
    obj = FunctionObjective(lambda x: -((x - 0.3) ** 2).sum(), Box([0, 0], [1, 1]), max_evals=3)
    assert obj([0.3, 0.3]) == 0.0
    obj.batch([[0, 0], [1, 1]])
    with pytest.raises(BudgetExhausted):
        obj([0.5, 0.5])
    with pytest.raises(ValueError, match="finite"):
        FunctionObjective(lambda x: np.nan, Box([0], [1]))([0.5])


def test_coordinate_lines_kept_within_the_cache_bound(monkeypatch):
    import dfrank.objectives.objective as objective

    data = planted(nq=30, m=20, d=6)
    kept = dfrank.maximize(data, "ndcg@10", "ca", restarts=2, seed=4)
    assert len(data.derived.coordinate_lines) == data.n_features + 1
    line_bytes = 16 * data.n_docs                  # u (float64) and its sorted rows (int64)
    for cap, n_kept in ((0, 0), (2 * line_bytes + 1, 2)):
        monkeypatch.setattr(objective, "LINE_CACHE_BYTES", cap)
        fresh = planted(nq=30, m=20, d=6)
        r = dfrank.maximize(fresh, "ndcg@10", "ca", restarts=2, seed=4)
        assert len(fresh.derived.coordinate_lines) == n_kept
        assert r.value == kept.value and np.array_equal(r.point, kept.point)


def _improvements(log):
    """(evaluation number, value) of each value above every earlier one: a trace rebuilt
    from a log of every evaluation in order."""
    out, best = [], -np.inf
    for i, v in enumerate(log):
        if v > best:
            out.append((i + 1, v))
            best = v
    return out


def test_a_batch_records_each_improvement_at_its_own_evaluation():
    """A target reached by an early point of a batch was recorded at the batch's best point
    (issue #63: an ES's first hits late by up to 13 evaluations)."""
    obj = FunctionObjective(lambda x: float(x[0]), Box([0], [1]))
    obj.batch([[0.2], [0.1], [0.5], [0.4], [0.9]])
    obj.batch([[0.3], [0.95], [0.99]])
    tr = obj.trace
    assert list(zip(tr["evals"][1:].tolist(), tr["values"][1:].tolist())) == [
        (1, 0.2), (3, 0.5), (5, 0.9), (7, 0.95), (8, 0.99)]
    assert obj.best_value == 0.99 and obj.best_point.tolist() == [0.99]
    obj.batch([[0.5], [0.99]])           # no improvement (ties included): nothing recorded
    assert len(obj.trace["evals"]) == 6


@pytest.mark.parametrize("strategy", ["pso", "es", "random", "ca", "fdsa", "cma:es",
                                      "scipy:differential_evolution"])
def test_the_trace_is_the_log_of_every_evaluation(strategy):
    """Every improvement of the best so far sits in the trace at its own evaluation number,
    for strategies that evaluate in batches of any size and for the adapters, checked
    against the solver's own log of every evaluation."""
    if ":" in strategy:
        pytest.importorskip({"cma": "cma", "scipy": "scipy"}[strategy.split(":")[0]])
    rng = np.random.default_rng(5)
    centre = rng.random(4)
    obj = FunctionObjective(lambda x: -float(np.abs(x - centre).sum()), Box([0] * 4, [1] * 4))
    log = []
    obj.recorder = lambda points, values, cube: log.extend(np.asarray(values).tolist())
    res = dfrank.maximize(obj, strategy=strategy, budget=300, seed=0, restarts=1)
    tr = res.restarts[0].trace
    assert list(zip(tr["evals"][1:].tolist(), tr["values"][1:].tolist())) == \
        _improvements(log)
    assert len(log) == res.n_evals
