"""The comparison harness: equal budgets counted by the objective, the summary, the JSON
file, significance against the best strategy, the anytime plot, the command line."""

import json

import numpy as np
import pytest

import dfrank
from dfrank import strategies, testing
from dfrank.cli import main
from dfrank.comparison import COMPARISON_FORMAT
from dfrank.objectives.objective import FunctionObjective, LinearObjective

from tests.inputs import write_letor


class CountingObjective(FunctionObjective):
    """A black-box objective that counts the points it really evaluates, one counter per
    run: the copy :func:`compare` makes for a run gets a new counter, the copies
    :func:`maximize` makes for its restarts share their run's counter."""

    def __init__(self, fn, space, **kw):
        super().__init__(fn, space, **kw)
        self.counters = []
        self.counter = None

    def fresh(self, max_evals=None, max_seconds=None):
        other = super().fresh(max_evals, max_seconds)
        if self.counter is None:
            other.counter = [0]
            self.counters.append(other.counter)
        return other

    def _values(self, pts):
        self.counter[0] += len(pts)
        return super()._values(pts)


@pytest.fixture(scope="module")
def data():
    return testing.planted_data()


def test_every_run_is_charged_the_same_budget(data):
    metric = LinearObjective(data, "ndcg@10")
    obj = CountingObjective(lambda lam: metric(lam), metric.space)
    names = ["ca", "fdsa", "pso", "random", "scipy:powell", "cma:es"]
    names = [n for n in names if n in strategies.available()]
    cmp = dfrank.compare(obj, names, seeds=[0, 1], budget=120)
    assert [r.strategy for r in cmp.runs] == [n for n in names for _ in (0, 1)]
    counted = [c[0] for c in obj.counters]
    assert counted == [r.n_evals for r in cmp.runs]
    assert all(0 < c <= 120 for c in counted)
    # the ones that do not stop on their own spend it all
    spent = {r.strategy: r.n_evals for r in cmp.runs if r.strategy in ("pso", "random")}
    assert set(spent.values()) == {120}
    assert cmp.budget == 120 and cmp.metric == "objective"


def test_summary_json_significance_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    full = testing.planted_data(n_queries=120)     # one planted model, three parts
    train, valid, test = (full.subset(np.arange(i, i + 40)) for i in (0, 40, 80))
    cmp = dfrank.compare(train, ["ca", "pso", "random"], seeds=range(3), budget=150,
                         metric="ndcg@10", valid=valid, test=test)
    assert len(cmp.runs) == 9
    for r in cmp.runs:
        # the test value is the final ranker's, recomputed from its point
        w = dfrank.Simplex(train.n_features).to_weights(r.point)
        assert r.test == pytest.approx(dfrank.evaluate(test.X @ w, test, "ndcg@10"), abs=1e-12)
        assert r.n_evals <= 150 and r.trace["values"][-1] == r.train
        assert 0.5 < r.test <= 1 and 0.5 < r.valid <= 1
    rows = {row["strategy"]: row for row in cmp.summary_rows()}
    for s in ("ca", "pso", "random"):
        vals = [r.train for r in cmp.runs_of(s)]
        assert rows[s]["train"] == pytest.approx(np.mean(vals))
        assert rows[s]["train_sd"] == pytest.approx(np.std(vals, ddof=1))
    best_run = max(cmp.runs, key=lambda r: r.train)
    assert rows[best_run.strategy]["reached_99"] >= 1
    # significance: every strategy but the best on test, against it
    test_means = {s: rows[s]["test"] for s in rows}
    best = max(test_means, key=test_means.get)
    assert best not in cmp.tests
    assert set(cmp.tests) <= set(rows) - {best}
    for s, sig in cmp.tests.items():
        a = np.mean([r.test_per_query for r in cmp.runs_of(best)], axis=0)
        b = np.mean([r.test_per_query for r in cmp.runs_of(s)], axis=0)
        assert sig.mean_difference == pytest.approx(np.mean(a - b))
        assert sig.p_value == dfrank.significance(a, b).p_value
    text = cmp.summary()
    assert "evals to 95%" in text and "p vs best (randomization)" in text
    # JSON: versioned, atomic, complete enough to redraw the table
    path = tmp_path / "cmp.json"
    cmp.to_json(path)
    d = json.loads(path.read_text())
    assert d["format"] == COMPARISON_FORMAT and d["version"] >= 1
    assert len(d["runs"]) == 9 and d["budget"] == 150
    assert [r["train"] for r in d["runs"]] == [r.train for r in cmp.runs]
    assert d["runs"][0]["trace"]["evals"][0] == 0
    assert set(d["tests"]) == set(cmp.tests) and d["significance"] == "randomization"
    fig = cmp.plot(tmp_path / "anytime.png")
    assert (tmp_path / "anytime.png").stat().st_size > 10_000
    assert [ax.get_xlabel() for ax in fig.axes[:2]] == ["evaluations", "seconds"]


@pytest.mark.slow
def test_same_result_for_any_n_jobs(data):
    a = dfrank.compare(data, ["pso", "random"], seeds=[0, 1], budget=100, n_jobs=1)
    b = dfrank.compare(data, ["pso", "random"], seeds=[0, 1], budget=100, n_jobs=2)
    assert [(r.strategy, r.seed, r.train, r.n_evals) for r in a.runs] == \
        [(r.strategy, r.seed, r.train, r.n_evals) for r in b.runs]


def test_time_budget(data):
    cmp = dfrank.compare(data, [("random", {"batch_size": 8, "n_samples": 10 ** 7})],
                         seeds=[0], max_seconds=0.3)
    r = cmp.runs[0]
    assert r.status == "time" and r.seconds < 2.0 and r.n_evals > 8


def test_line_cost_charges_line_searches_against_the_budget(data):
    """With line_cost c every exact line search of coordinate ascent takes c of the budget:
    fewer line searches, the same budget spent, and the comparison says how it counted;
    the caller's objective keeps counting one."""
    obj = LinearObjective(data, "ndcg@10")
    ca = [("ca", {"restarts": 1})]
    one = dfrank.compare(obj, ca, seeds=[0], budget=200)
    ten = dfrank.compare(obj, ca, seeds=[0], budget=200, line_cost=10)
    assert obj.line_cost == 1
    assert ten.line_cost == 10 and one.line_cost == 1
    assert ten.to_dict()["line_cost"] == 10
    assert 190 < ten.runs[0].n_evals <= 200   # stops when a whole line search no longer fits
    # the same seed follows the same path, a tenth as far
    assert ten.runs[0].train <= one.runs[0].train
    with pytest.raises(ValueError, match="line_cost"):
        dfrank.compare(obj, ["ca"], seeds=[0], budget=200, line_cost=0)


@pytest.mark.parametrize("kwargs,exc,match", [
    ({}, ValueError, "give a budget"),
    ({"budget": -5}, ValueError, "budget"),
    ({"budget": 10, "seeds": []}, ValueError, "seeds is empty"),
    ({"budget": 10, "strategies": ["nope"]}, ValueError, "unknown strategy"),
    ({"budget": 10, "significance": "z"}, ValueError, "unknown significance test"),
    ({"budget": 10, "test": "x"}, TypeError, "test must be a RankingData"),
    ({"budget": 10, "metric": "ndcg@x"}, ValueError, "ndcg@x"),
])
def test_bad_input(data, kwargs, exc, match):
    kwargs = {"strategies": ["random"], **kwargs}
    with pytest.raises(exc, match=match):
        dfrank.compare(data, **kwargs)


def test_test_set_with_other_feature_count(data):
    with pytest.raises(ValueError, match="test has 3 features but the training data has 6"):
        dfrank.compare(data, ["random"], budget=10, test=testing.planted_data(n_features=3))


def test_cli_compare(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    train = tmp_path / "train.txt"
    test = tmp_path / "test.txt"
    for path, seed in ((train, 0), (test, 1)):
        write_letor(path, testing.planted_data(n_queries=15, seed=seed))
    out_json, out_png = tmp_path / "c.json", tmp_path / "c.png"
    code = main(["compare", str(train), "--test", str(test), "--strategies", "ca,random",
                 "--seeds", "2", "--budget", "60", "--option", "ca:line_search=steps",
                 "--json", str(out_json), "--plot", str(out_png), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 strategies x 2 seeds" in out and "random" in out and "evals to 99%" in out
    assert json.loads(out_json.read_text())["format"] == COMPARISON_FORMAT
    assert out_png.exists()
    assert main(["compare", str(train), "--strategies", "ca"]) == 2
    assert "give --budget" in capsys.readouterr().err
    assert main(["compare", str(train), "--budget", "5", "--strategies", "ca",
                 "--option", "pso:x=1"]) == 2
    assert "not a strategy this command runs" in capsys.readouterr().err
    assert main(["compare", str(train), "--budget", "5", "--option", "oops"]) == 2
    assert "[STRATEGY:]KEY=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:        # argparse's own usage error
        main(["compare", str(train), "--budget", "5", "--line-cost", "0"])
    assert e.value.code == 2
    assert "--line-cost: takes an integer >= 1" in capsys.readouterr().err
    assert main(["compare", str(train), "--strategies", "ca", "--seeds", "1", "--budget",
                 "40", "--line-cost", "measured", "--json", str(out_json), "--quiet"]) == 0
    assert "an exact line search takes the time of" in capsys.readouterr().out
    assert json.loads(out_json.read_text())["line_cost"] >= 1
