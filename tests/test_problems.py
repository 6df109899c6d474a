"""The problem suite: ask/tell problems (counting, budget, targets), the bench (resumable,
the same runs for any n_jobs), profiles against brute force, honesty flags, IOHprofiler's
format (a hand-written expected file, and the files ioh's own logger writes).

The suite is built here from generated data laid out as MQ2008 is distributed (and the
real data under ../shared/data where present), with references measured on it."""

import importlib.util
import json
import os
import time
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfrank
from dfrank import cli
from dfrank.objectives.objective import FunctionObjective, LinearObjective
from dfrank.problems import EPSILONS, BudgetExhausted, Problem, Suite, first_hits, targets_of
from dfrank.problems import references as refs
from dfrank.problems import bench, read_runs
from dfrank.problems.ioh import export, function_of, instance_of
from dfrank.problems.profiles import Profiles
from dfrank.spaces import Box
from dfrank.testing import planted_data
from tests.inputs import bench_kw
from tests.suites import write_mq2008

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


def toy_problem(budget=None, max_seconds=None, seed=0, reference=0.9):
    data = planted_data(n_queries=8, docs_per_query=10, n_features=4, seed=3)
    return Problem(SimpleNamespace(id="toy"), LinearObjective(data, "ndcg@10"), fold=1,
                   seed=seed, reference=reference, budget=budget, max_seconds=max_seconds)


# ---------------------------------------------------------------- the problem
def test_ask_tell_counts_budget_and_trace():
    p = toy_problem(budget=10)
    assert p.dim == 5 and np.all(p.lower == 0) and np.all(p.upper == 1)
    assert np.array_equal(p.x0, np.full(5, 0.5))
    rng = np.random.default_rng(0)
    seen = []
    while not p.done:
        z = rng.random(5)
        seen.append(p(z))
    assert p.n_evals == 10 and p.remaining == 0 and len(seen) == 10
    with pytest.raises(BudgetExhausted):
        p(rng.random(5))
    assert p.best_value == max(seen)
    tr = p.trace
    assert tr["values"][-1] == max(seen) and np.all(np.diff(tr["values"][1:]) > 0)
    # the trace's improvements are the running maxima of what the loop saw
    run_max = np.maximum.accumulate(seen)
    firsts = [i + 1 for i in range(10) if i == 0 or run_max[i] > run_max[i - 1]]
    assert list(tr["evals"][1:]) == firsts
    assert p.last_value == seen[-1]


def test_batch_stops_at_the_budget_with_the_prefix_recorded():
    p = toy_problem(budget=5)
    Z = np.random.default_rng(1).random((8, 5))
    with pytest.raises(BudgetExhausted):
        p.batch(Z)
    assert p.n_evals == 5
    assert p.evaluated(Z[4], cube=True) and not p.evaluated(Z[5], cube=True)


def test_start_targets_and_the_cube_map():
    p = toy_problem(seed=3)
    q = toy_problem(seed=3)
    assert np.array_equal(p.x0, q.x0) and not np.array_equal(p.x0, np.full(5, 0.5))
    assert p.start_value == pytest.approx(q(q.x0))
    assert np.allclose(p.targets, 0.9 - np.array(EPSILONS) * (0.9 - p.start_value))
    assert np.allclose(p.to_space(np.zeros(5)), 1 / 5)        # the center
    assert np.allclose(p.to_space(2 * np.eye(5)[0]), np.eye(5)[0])  # clipped, normalized
    box = Problem(SimpleNamespace(id="box"),
                  FunctionObjective(lambda x: -abs(x[0] - 3.0), Box([1.0], [10.0],
                                                                    log=[True])),
                  fold=1, seed=0, reference=0.0)
    assert box.to_space([0.5])[0, 0] == pytest.approx(np.sqrt(10.0))


@given(st.floats(0.1, 1.0), st.floats(0.0, 0.9),
       st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
@settings(max_examples=60, deadline=None)
def test_first_hits_against_brute_force(ref, start, values):
    targets = targets_of(ref, start)
    best, evals, vals = -np.inf, [0], [-np.inf]
    for i, v in enumerate(values):
        if v > best:
            best = v
            evals.append(i + 1)
            vals.append(v)
    got = first_hits({"evals": evals, "values": vals}, targets)
    for t, g in zip(targets, got):
        want = next((i + 1 for i, v in enumerate(values) if v >= t), np.inf)
        assert g == want
    if not ref > start:
        assert list(targets) == [ref]


# ---------------------------------------------------------------- profiles and flags
def record(solver, seed, values, *, n_evals=None, budget=100, fold=1, problem="p", dim=3,
           reference=1.0, start=0.0, recommended=True, seconds=0.1, max_seconds=None,
           status="budget"):
    evals = list(range(1, len(values) + 1))
    best = np.maximum.accumulate(values)
    keep = [0] + [i for i in range(1, len(values)) if best[i] > best[i - 1]]
    return {"solver": solver, "problem": problem, "fold": fold, "seed": seed, "dim": dim,
            "budget": budget, "max_seconds": max_seconds, "reference": reference,
            "start_value": start, "targets": list(targets_of(reference, start)),
            "trace": {"evals": [evals[i] for i in keep], "seconds": [0.0] * len(keep),
                      "values": [float(best[i]) for i in keep]},
            "n_evals": n_evals or len(values), "seconds": seconds,
            "best_value": float(best[-1]), "last_value": float(values[-1]),
            "best_point": [0.2, 0.3, 0.5], "recommended_evaluated": recommended,
            "error": None, "status": status}


def test_ecdf_and_data_profile_by_brute_force():
    rng = np.random.default_rng(5)
    runs = [record(s, seed, list(np.sort(rng.random(30)) * rng.random()), dim=d)
            for s in ("a", "b") for seed in range(3) for d in (2, 5)]
    prof = Profiles(runs)
    budgets = [1, 3, 10, 30]
    for s in ("a", "b"):
        mine = [r for r in runs if r["solver"] == s]
        want = []
        for b in budgets:
            fr = []
            for r in mine:
                vals = np.maximum.accumulate(
                    [next(v for e, v in zip(r["trace"]["evals"][::-1],
                                            r["trace"]["values"][::-1]) if e <= i)
                     for i in range(1, b + 1)]) if b else []
                fr.append(np.mean([any(v >= t for v in vals) for t in r["targets"]]))
            want.append(np.mean(fr))
        assert np.allclose(prof.ecdf(s, budgets), want)
        kappas = [0.5, 2, 8]
        k = EPSILONS.index(0.1)
        want = [np.mean([first_hits(r["trace"], r["targets"])[k] <= kap * (r["dim"] + 1)
                         for r in mine]) for kap in kappas]
        assert np.allclose(prof.data_profile(s, kappas, 0.1), want)


def test_honesty_flags():
    runs = [record("same", s, [0.1, 0.5, 0.6]) for s in range(3)]
    runs += [record("fine", s, [0.1, 0.2 + 0.1 * s]) for s in range(3)]
    runs += [record("greedy", 0, [0.5], n_evals=120, budget=100)]
    runs += [record("slow", 0, [0.5], budget=None, max_seconds=0.5, seconds=2.0)]
    runs += [record("liar", 0, [0.5], recommended=False)]
    runs += [dict(record("broken", 0, [0.5]), error="RuntimeError: boom")]
    flags = Profiles(runs).flags()
    assert "identical runs across seeds on 1 of 1" in flags["same"][0]
    assert "fine" not in flags
    assert "past their budget" in flags["greedy"][0]
    assert "past their budget" in flags["slow"][0]
    assert "never evaluated" in flags["liar"][0]
    assert "boom" in flags["broken"][0]
    text = Profiles(runs).summary()
    assert "flags:" in text and "liar" in text


def test_by_problem_is_each_problems_own_ecdf():
    rng = np.random.default_rng(4)
    runs = [record(s, seed, list(rng.random(12)), problem=pid, dim=d)
            for s in ("a", "b") for seed in range(3) for pid, d in (("p1", 2), ("p2", 5))]
    runs += [dict(record("b", 3, [0.1], problem="p2", dim=5), error="ValueError: x")]
    prof = Profiles(runs)
    rows = prof.by_problem([3, 10])
    assert [(r["problem"], r["dim"], r["budget"]) for r in rows] == \
        [("p1", 2, 3), ("p1", 2, 10), ("p2", 5, 3), ("p2", 5, 10)]
    for r in rows:
        alone = Profiles([x for x in runs if x["problem"] == r["problem"]])
        for s in ("a", "b"):
            assert r["ecdf"][s] == alone.ecdf(s, [r["budget"]])[0]
    table = prof.by_problem_table([3, 10])
    assert "p2 (5)" in table and table.count("*") >= 4


def test_a_failed_run_counts_as_reaching_nothing():
    ok = [record("s", seed, [0.1, 0.9]) for seed in range(3)]
    prof = Profiles(ok + [dict(record("s", 3, [0.1]), error="ValueError: 1-D")])
    alone = Profiles(ok)
    assert np.allclose(prof.ecdf("s", [1, 2]), alone.ecdf("s", [1, 2]) * 3 / 4)
    assert np.allclose(prof.data_profile("s", [1, 8]), alone.data_profile("s", [1, 8]) * 3 / 4)
    row, = prof.summary_rows()
    assert row["runs"] == 4 and row["failed"] == 1
    assert np.isclose(row["ecdf_end"], alone.summary_rows()[0]["ecdf_end"] * 3 / 4)


def test_a_solver_whose_runs_all_failed_is_counted_with_them():
    ok = [record("s", seed, [0.1, 0.9]) for seed in range(2)]
    bad = [dict(record("t", seed, [0.1]), error="ValueError: 1-D") for seed in range(2)]
    prof = Profiles(ok + bad)
    assert np.array_equal(prof.ecdf("t", [1, 10]), [0.0, 0.0])
    assert np.array_equal(prof.data_profile("t", [1, 10]), [0.0, 0.0])
    row = prof.summary_rows()[1]
    assert (row["solver"], row["runs"], row["failed"], row["ecdf_end"], row["gap"]) == \
        ("t", 2, 2, 0.0, 1.0)
    line = next(x for x in prof.summary().splitlines() if x.startswith("t "))
    assert line.split()[1:4] == ["2", "0.000", "0.000"]


def test_only_budget_columns_a_run_could_reach():
    prof = Profiles([record("s", seed, [0.1, 0.6], budget=300) for seed in range(2)])
    assert prof.columns() == [100]
    head = prof.summary().splitlines()[0]
    assert "ECDF@100" in head and "ECDF@1000" not in head
    assert prof.summary_rows()[0]["ecdf_1000"] is None


def test_early_stops_are_flagged():
    runs = [record("quits", s, [0.1, 0.5 + s / 10], n_evals=40, budget=100, status=st)
            for s, st in enumerate(["converged", ""])]   # ("": an ask/tell loop that ended)
    runs += [record("full", s, [0.1, 0.2 + s / 10], n_evals=100, budget=100) for s in range(2)]
    runs += [record("timed", 0, [0.1, 0.5], n_evals=40, budget=100, status="time")]
    flags = Profiles(runs).flags()
    assert "2 runs stopped before their budget (median 40% of it used)" in flags["quits"][0]
    assert "full" not in flags and "timed" not in flags


def test_solvers_as_module_function_and_pycmas_ipop(toy_suite, tmp_path, monkeypatch):
    root, ref_path = toy_suite
    (tmp_path / "my_solvers.py").write_text(
        "import numpy as np\n"
        "def half(problem, seed):\n"
        "    return problem.x0 if problem(np.full(problem.dim, 0.5)) < 0 else None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from dfrank.problems.solvers import solver_of

    assert solver_of("my_solvers:half").name == "my_solvers:half"
    # an installed package's solver, by the name its entry point gives it
    import importlib.metadata

    from dfrank.problems.solvers import ENTRY_POINTS

    class Entry:
        name = "pkg-solver"

        def load(self):
            import my_solvers
            return my_solvers.half

    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: [Entry()] if group == ENTRY_POINTS
                        else real(group=group, **kw))
    assert solver_of("pkg-solver").fn.__name__ == "half"
    with pytest.raises(ValueError, match="unknown strategy"):
        solver_of("no_such_module_here:f")
    with pytest.raises(ValueError, match="no function 'nope'"):
        solver_of("my_solvers:nope")
    res = bench(root, ["my_solvers:half"], ["letor-mq2008-map"], folds=[1], seeds=[0],
                budget=5, n_jobs=1, references=ref_path, line_cost=1, repeat=False)
    run, = res.runs
    assert run["solver"] == "my_solvers:half" and run["n_evals"] == 1 and not run["error"]
    pytest.importorskip("cma")
    res = bench(root, ["cma:ipop", "cma:es"], ["letor-mq2008-map"], folds=[1], seeds=[0],
                budget=400, n_jobs=1, references=ref_path, line_cost=1, repeat=False)
    ipop, es = sorted(res.runs, key=lambda r: r["solver"] != "cma:ipop")
    assert ipop["solver"] == "cma:ipop" and ipop["n_evals"] == 400 and not ipop["error"]
    assert ipop["status"] == "budget" and es["n_evals"] <= 400


@pytest.mark.parametrize("name", ["cma:es", "nevergrad:NGOpt", "optuna:tpe"])
def test_one_adapter_the_same_trace_in_maximize_compare_and_bench(toy_suite, name):
    pytest.importorskip(name.split(":")[0])
    root, ref_path = toy_suite
    seed, budget = 2, 40
    res = bench(root, [name], ["letor-mq2008-map"], folds=[1], seeds=[seed], budget=budget,
                n_jobs=1, references=ref_path, line_cost=1, repeat=False)
    run, = res.runs
    problem = Suite(root, ref_path).problem("letor-mq2008-map", 1, seed, budget=budget)
    direct = dfrank.maximize(problem.objective, strategy=name, seed=seed)
    cmp = dfrank.compare(problem.objective, [name], seeds=[seed], budget=budget)
    want = list(direct.trace["values"][1:])
    assert run["trace"]["values"] == want and run["n_evals"] == direct.n_evals
    assert list(cmp.runs[0].trace["values"][1:]) == want
    # the export's x is the cube point the optimizer searched, which maps to the best point
    lam = problem.space.from_unit(np.array([run["best_x"]]))[0]
    assert np.allclose(lam, run["best_point"]) and np.allclose(lam, direct.point)


def test_runs_that_beat_their_reference_are_flagged_and_merged(tmp_path):
    from dfrank.problems import references as refs
    from dfrank.problems.experiment import BenchResult

    runs = [record("a", 0, [0.2, 1.04], reference=1.0), record("a", 1, [0.5], reference=1.0),
            record("b", 0, [0.3, 1.01], reference=1.0),
            record("b", 1, [0.3, 1.2], reference=0.9, fold=2)]   # other references
    flags = Profiles(runs).flags()
    assert "1 runs beat their problem's reference (by up to 0.04, p fold 1 seed 0)" in \
        flags["a"][0]
    assert "--from-runs" in flags["a"][0] and "2 runs beat" in flags["b"][0]
    old = {"format": refs.REFERENCES_FORMAT, "version": 1, "runs": [{"command": "long"}],
           "values": {"p": {"1": {"value": 1.0, "by": "ca", "run": 0, "fingerprint": [1],
                                  "line_cost": 4},
                            "2": {"value": 1.5, "by": "es", "run": 0, "fingerprint": [2]}}}}
    bench = BenchResult({}, runs, str(tmp_path / "b.jsonl"))
    new, changes = refs.from_runs(old, [bench], command="dfrank bench reference ...")
    assert changes == [("p", 1, 1.0, 1.04, "a seed 0 in b.jsonl")]
    entry = new["values"]["p"]["1"]
    assert (entry["value"], entry["previous"], entry["run"], entry["line_cost"],
            entry["fingerprint"]) == (1.04, 1.0, 1, 4, [1])
    assert new["values"]["p"]["2"] == old["values"]["p"]["2"]
    assert new["runs"][-1]["benches"] == [str(tmp_path / "b.jsonl")]


# ---------------------------------------------------------------- IOHprofiler's format
def test_ioh_export_matches_a_hand_written_file(tmp_path):
    pid = "letor-mq2008-map"
    run = record("cma:es", 2, [0.1, 0.05, 0.3, 0.2, 0.25], dim=3, problem=pid)
    run["fold"] = 4
    run2 = record("cma:es", 0, [0.4, 0.6], dim=3, problem=pid, reference=0.75, start=0.125)
    run2["best_x"] = [1.0, 0.5, 0.25]   # the cube point searched, not the simplex point
    export([run, run2], tmp_path)
    fid, name = function_of(pid)
    assert name == "letor_mq2008_map" and instance_of(4) == 4
    base = tmp_path / "cma_es"
    dat = (base / f"data_f{fid}_{name}" / f"IOHprofiler_f{fid}_DIM3.dat").read_text()
    head = "evaluations raw_y reference start_value\n"
    assert dat == (head +
                   "1 0.4000000000 0.7500000000 0.1250000000\n"
                   "2 0.6000000000 0.7500000000 0.1250000000\n" + head +
                   "1 0.1000000000 1.0000000000 0.0000000000\n"
                   "3 0.3000000000 1.0000000000 0.0000000000\n"
                   "5 0.2500000000 1.0000000000 0.0000000000\n")
    meta = json.loads((base / f"IOHprofiler_f{fid}_{name}.json").read_text())
    assert meta == {
        "version": "0.4.2", "suite": "dfrank", "function_id": fid,
        "function_name": name, "maximization": True,
        "algorithm": {"name": "cma:es", "info": "dfrank bench"},
        "attributes": ["evaluations", "raw_y", "reference", "start_value"],
        "scenarios": [{"dimension": 3, "path": f"data_f{fid}_{name}/IOHprofiler_f{fid}_DIM3.dat",
                       "runs": [{"instance": 1, "evals": 2,
                                 "best": {"evals": 2, "y": 0.6, "x": [1.0, 0.5, 0.25]},
                                 "reference": 0.75, "start_value": 0.125},
                                {"instance": 4, "evals": 5,
                                 "best": {"evals": 3, "y": 0.3, "x": [0.2, 0.3, 0.5]},
                                 "reference": 1.0, "start_value": 0.0}]}]}


def test_the_export_keeps_failed_runs_with_folds_as_instances(tmp_path):
    pid = "letor-mq2008-map"
    runs = [record("s", seed, [0.1 * (seed + 1), 0.5], problem=pid, fold=2)
            for seed in range(3)]
    runs[1]["error"] = "RuntimeError: stopped at evaluation 2"   # failed, after 2 evaluations
    runs.append(dict(record("s", 3, [0.1], problem=pid, fold=2), error="ValueError: 1-D",
                     trace={"evals": [], "seconds": [], "values": []}))
    runs.append(dict(record("s", 0, [0.1], problem=pid, fold=2), repeat=True))
    files, empty = export(runs, tmp_path)
    meta = json.loads(open(next(f for f in files if str(f).endswith(".json"))).read())
    got = meta["scenarios"][0]["runs"]
    assert [r["instance"] for r in got] == [2, 2, 2] and len(empty) == 1
    assert empty[0]["seed"] == 3
    named = (tmp_path / "no_evaluations.tsv").read_text().splitlines()
    assert named[1:] == ["solver\tproblem\tfold\tseed\tstatus\terror",
                         f"s\t{pid}\t2\t3\tbudget\tValueError: 1-D"]


def test_a_run_records_the_cube_point_and_what_a_failure_reached(toy_suite):
    from dfrank.problems.experiment import _run_one

    root, ref_path = toy_suite
    seen = []

    def fails(problem, seed):
        rng = np.random.default_rng(7)
        for _ in range(2):
            z = rng.random(problem.dim)
            seen.append((problem(z), z))
        raise RuntimeError("gave up")

    rec = _run_one((fails, "letor-mq2008-map", 1, 0, 50, None, 1, False), root, ref_path)
    assert rec["error"] == "RuntimeError: gave up" and rec["n_evals"] == 2
    value, z = seen[0] if seen[0][0] >= seen[1][0] else seen[1]   # (the first of equals)
    assert rec["best_value"] == value and np.array_equal(rec["best_x"], z)
    ok = _run_one(("random", "letor-mq2008-map", 1, 0, 20, None, 1, False), root, ref_path)
    lam = np.asarray(ok["best_point"])
    assert np.allclose(np.asarray(ok["best_x"]) / np.sum(ok["best_x"]), lam)
    assert max(ok["best_x"]) == 1.0


def test_ioh_export_matches_iohs_own_logger(tmp_path):
    ioh = pytest.importorskip("ioh")
    rng = np.random.default_rng(2)
    runs = [record("rs", s, list(rng.random(25)), dim=4, problem="letor-ohsumed-map",
                   reference=0.9, start=0.05 * s) for s in range(3)]
    for r in runs:
        r["best_point"] = list(rng.random(4))
    export(runs, tmp_path / "ours")
    # the same evaluations through ioh: improvements at the trace's evaluations, the best
    # at its point, everything else below the start
    for r in runs:
        at = dict(zip(r["trace"]["evals"], r["trace"]["values"]))
        seq = [at.get(i, -1.0) for i in range(1, r["n_evals"] + 1)]
        if r["n_evals"] not in at:
            seq[-1] = r["last_value"]
        r["seq"] = seq
    it = iter([])

    def replay(x):
        return next(it)

    prob = ioh.wrap_problem(replay, name="dfrank_replay", dimension=4,
                            optimization_type=ioh.OptimizationType.MAX, lb=0.0, ub=1.0)
    logger = ioh.logger.Analyzer(root=str(tmp_path), folder_name="theirs",
                                 algorithm_name="rs", algorithm_info="dfrank bench")
    instance = type("Instance", (), {})()       # the instance's reference and start, watched
    logger.watch(instance, ["reference", "start_value"])
    prob.attach_logger(logger)
    for r in runs:
        it = iter(r["seq"])
        instance.reference, instance.start_value = r["reference"], r["start_value"]
        best_at = r["trace"]["evals"][-1]
        for i in range(1, r["n_evals"] + 1):
            prob(np.array(r["best_point"]) if i == best_at else np.zeros(4))
        prob.reset()
    logger.close()
    theirs = next((tmp_path / "theirs").rglob("*.dat")).read_text()
    fid, name = function_of("letor-ohsumed-map")
    ours = (tmp_path / "ours" / "rs" / f"data_f{fid}_{name}" /
            f"IOHprofiler_f{fid}_DIM4.dat").read_text()
    assert ours == theirs
    meta_t = json.loads(next((tmp_path / "theirs").glob("*.json")).read_text())
    meta_o = json.loads(next((tmp_path / "ours" / "rs").glob("*.json")).read_text())
    for key in ("maximization", "attributes", "algorithm"):
        assert meta_o[key] == meta_t[key]
    for ro, rt in zip(meta_o["scenarios"][0]["runs"], meta_t["scenarios"][0]["runs"]):
        assert ro["evals"] == rt["evals"] and ro["best"]["evals"] == rt["best"]["evals"]
        assert ro["best"]["y"] == rt["best"]["y"]
        assert np.allclose(ro["best"]["x"], rt["best"]["x"])


def test_iohinspector_reads_every_run_with_dfranks_hitting_times(toy_suite, tmp_path):
    """iohinspector (an independent reader of IOHprofiler data) found run boundaries where
    the evaluation number is 1 and read 3 of 36 batch-ES runs, since a batch's improvement
    was recorded at its best point (issue #63). Each run it reads must hit dfrank's targets,
    rebuilt from the exported reference and start value, at dfrank's evaluations, so its
    fixed-target ECDF and ERT are dfrank's."""
    pytest.importorskip("iohinspector")
    import polars as pl
    from iohinspector import DataManager
    from iohinspector.align import align_data

    from dfrank.problems.profiles import Profiles
    from dfrank.problems.coco import ert

    solvers = ["ca", "pso", "es"]
    res = bench(toy_suite[0], solvers, **bench_kw(toy_suite, budget=60, folds=[1, 2]))
    runs = [r for r in res.runs if not r.get("repeat")]
    res.to_ioh(tmp_path / "ioh")
    manager = DataManager()
    manager.add_folder(str(tmp_path / "ioh"))
    frame = manager.load(monotonic=False, include_meta_data=True)
    assert manager.n_runs == len(runs)
    ours = {(r["solver"], r["fold"], r["seed"]): r for r in runs}
    in_file = {s: sorted(k for k in ours if k[0] == s) for s in solvers}  # the export's order
    hits = {}
    for (data_id,), run in frame.group_by(["data_id"], maintain_order=True):
        key = in_file[run["algorithm_name"][0]][int(run["run_id"][0]) - 1]
        assert int(run["instance"][0]) == key[1]
        reference, start = float(run["reference"][0]), float(run["start_value"][0])
        targets = targets_of(reference, start)
        aligned = align_data(run.select("evaluations", "raw_y", "data_id"), targets,
                             group_cols=["data_id"], x_col="raw_y", y_col="evaluations",
                             maximization=True, silence_warning=True)
        got = aligned.sort("raw_y")["evaluations"].cast(pl.Float64).fill_null(np.inf)
        hits[key] = got.to_numpy()
    assert sorted(hits) == sorted(ours)
    for key, r in ours.items():
        np.testing.assert_array_equal(r["targets"], targets_of(r["reference"],
                                                               r["start_value"]))
        np.testing.assert_array_equal(hits[key], first_hits(r["trace"], r["targets"]), key)
    profiles = Profiles(runs)
    budgets = [1, 5, 20, 60]
    for s in solvers:
        theirs = [np.mean([np.mean(hits[k] <= b) for k in hits if k[0] == s]) for b in budgets]
        np.testing.assert_allclose(theirs, profiles.ecdf(s, budgets), rtol=0, atol=1e-15)
        for fold in (1, 2):
            keys = [k for k in hits if k[:2] == (s, fold)]
            for t in range(len(EPSILONS)):
                assert ert([hits[k][t] for k in keys], [ours[k]["n_evals"] for k in keys]) \
                    == ert([first_hits(ours[k]["trace"], ours[k]["targets"])[t]
                            for k in keys], [ours[k]["n_evals"] for k in keys])


# ---------------------------------------------------------------- the suite and the bench
def test_suite_builds_problems_and_checks_references(toy_suite, tmp_path):
    root, ref_path = toy_suite
    suite = Suite(root, ref_path)
    assert "letor-mq2008-map" in suite.specs and "letor-ohsumed-map" in suite.missing
    p = suite.problem("letor-mq2008-map", fold=2, seed=1, budget=50)
    assert p.dim == 7 and p.reference >= p.start_value
    f = suite.problem("fusion-mq2008-map", fold=1)
    assert f.dim == 6 and f.objective.ties == "stable"
    with pytest.raises(ValueError, match="no reference value"):
        suite.problem("letor-mq2008-map", fold=3)
    with pytest.raises(ValueError, match="unknown problem"):
        suite.problem("letor-mq2008-mapp")
    with pytest.raises(FileNotFoundError, match="ohsumed"):
        suite.problem("letor-ohsumed-map")
    other = tmp_path / "other"
    write_mq2008(str(other), np.random.default_rng(12))
    with pytest.raises(ValueError, match="differ from the data"):
        Suite(other, ref_path).problem("letor-mq2008-map", fold=1)


def test_dfrank_strategies_start_from_the_instance(toy_suite):
    from dfrank.problems.solvers import solver_of
    from dfrank.strategies.evolution import _Codec
    from dfrank.strategies.external import _External

    root, ref_path = toy_suite
    suite = Suite(root, ref_path)
    for seed in (0, 1, 2):
        for pid in ("letor-mq2008-map", "fusion-mq2008-map"):
            p = suite.problem(pid, fold=1, seed=seed, budget=40)
            start = p.to_space(p.x0)[0]
            assert np.allclose(p.objective.space.from_unit(p.objective.space.to_unit(start)),
                               start)
            assert np.allclose(_External.start(p.objective, None, 0), p.x0 / (
                p.x0.max() if p.space.kind == "simplex" else 1.0))
            codec = _Codec(p.objective, "ridge")   # es's first mean (the center: w = 0)
            if codec.linear and seed:     # a rank-equivalent point: the same direction
                w = [p.space.to_weights(x) for x in (codec.points(codec.m0[None, :])[0], start)]
                assert np.allclose(*[v / np.linalg.norm(v) for v in w])
            trace = solver_of("ca").run(p, seed).trace
            assert trace["values"][1] == p.start_value   # its first evaluation


def _numba_threads(_):
    import numba

    return numba.get_num_threads()


def test_workers_run_one_numba_thread_and_this_process_keeps_its_own():
    import numba
    from joblib import Parallel, delayed, parallel_config

    from dfrank.driver.parallel import one_thread_each

    mine = numba.get_num_threads()
    with one_thread_each():
        got = Parallel(n_jobs=2)(delayed(_numba_threads)(i) for i in range(4))
    assert got == [1, 1, 1, 1] and numba.get_num_threads() == mine
    with parallel_config(backend="loky", inner_max_num_threads=2):   # the user's own limit
        with one_thread_each():
            assert Parallel(n_jobs=2)(delayed(_numba_threads)(i) for i in range(2)) == \
                [min(2, numba.config.NUMBA_NUM_THREADS)] * 2


def test_line_costs_come_from_the_references(toy_suite, tmp_path):
    root, ref_path = toy_suite
    stored = refs.load(ref_path)["values"]
    for pid in ("letor-mq2008-map", "fusion-mq2008-map"):
        entry = stored[pid]["1"]
        assert entry["line_worth"] - 1e-3 <= entry["line_cost"] < entry["line_worth"] + 1 \
            or entry["line_cost"] == 1 and entry["line_worth"] < 1
    suite = Suite(root, ref_path)
    p = suite.problem("letor-mq2008-map", fold=1)
    assert p.line_cost == stored["letor-mq2008-map"]["1"]["line_cost"] == \
        p.objective.line_cost
    assert suite.problem("letor-mq2008-map", fold=1, line_cost=4).line_cost == 4
    res = bench(root, ["ca"], problems="letor-mq2008-map", folds=[1, 2], seeds=[0],
                budget=30, references=ref_path, n_jobs=1, repeat=False)
    assert res.header["line_costs"] == {("letor-mq2008-map", f): stored["letor-mq2008-map"][
        str(f)]["line_cost"] for f in (1, 2)}
    # a references file without line costs: a clear error, and the command that adds them
    bare = refs.load(ref_path)
    for folds in bare["values"].values():
        for e in folds.values():
            del e["line_cost"]
    refs.save(bare, tmp_path / "bare.json")
    with pytest.raises(ValueError, match="--line-costs-only"):
        Suite(root, tmp_path / "bare.json").problem("letor-mq2008-map", fold=1)
    out = tmp_path / "costs.json"
    assert cli.main(["bench", "reference", root, "--problems", "letor-mq2008-map",
                     "--instances", "1", "--line-costs-only", "--merge",
                     str(tmp_path / "bare.json"), "-o", str(out)]) == 0
    got = refs.load(out)
    assert got["values"]["letor-mq2008-map"]["1"]["line_cost"] >= 1
    assert got["values"]["letor-mq2008-map"]["1"]["value"] == \
        stored["letor-mq2008-map"]["1"]["value"]
    assert "line_cost" not in got["values"]["letor-mq2008-map"]["2"]
    assert len(got["runs"]) == 2 and "--line-costs-only" in got["runs"][1]["command"]


SOLVERS = ["ca", "random", "cma:es", "nevergrad:RandomSearch", "optuna:tpe"]


def test_bench_same_runs_for_any_n_jobs_and_resumes(toy_suite, tmp_path):
    pytest.importorskip("cma")
    pytest.importorskip("nevergrad")
    pytest.importorskip("optuna")
    root, ref_path = toy_suite
    kw = dict(problems=["letor-mq2008-map", "fusion-mq2008-map"], folds=[1], seeds=range(2),
              budget=60, budgets={"optuna:tpe": 20}, references=ref_path, line_cost=3)
    a = bench(root, SOLVERS, n_jobs=1, output=tmp_path / "a.jsonl", **kw)
    b = bench(root, SOLVERS, n_jobs=2, output=tmp_path / "b.jsonl", **kw)
    key = lambda r: (r["solver"], r["problem"], r["seed"], r["repeat"])   # noqa: E731
    ra, rb = sorted(a.runs, key=key), sorted(b.runs, key=key)
    assert len(ra) == 2 * 2 * len(SOLVERS) + 2 * len(SOLVERS) and all(r["error"] is None
                                                                  for r in ra)
    flags = a.profiles().flags()   # every run repeats with its seed; ca may converge early
    assert not [f for fs in flags.values() for f in fs if "before their budget" not in f]
    for x, y in zip(ra, rb):
        assert x["trace"]["values"] == y["trace"]["values"], x["solver"]
        assert x["trace"]["evals"] == y["trace"]["evals"] and x["n_evals"] == y["n_evals"]
    for r in ra:
        assert r["n_evals"] <= r["budget"] and r["recommended_evaluated"] is not False \
            or r["solver"].startswith("nevergrad")
        assert (r["budget"] == 20) == (r["solver"] == "optuna:tpe")
    # line searches count 3: coordinate ascent's evaluations are not all single ones
    assert any(np.any(np.diff(r["trace"]["evals"]) % 3 == 0) for r in ra
               if r["solver"] == "ca")
    # continued: nothing is run twice, a new solver is added, other settings refused
    n = len(read_runs(tmp_path / "a.jsonl").runs)
    c = bench(root, SOLVERS + ["pso"], n_jobs=1, output=tmp_path / "a.jsonl", **kw)
    assert len(c.runs) == n + 6 and len(read_runs(tmp_path / "a.jsonl").runs) == n + 6
    assert len([r for r in c.runs if r["solver"] == "pso" and r["repeat"]]) == 2
    with pytest.raises(ValueError, match="budget"):
        bench(root, SOLVERS, output=tmp_path / "a.jsonl", **dict(kw, budget=61))
    # a file cut short while a run was written: the finished runs are kept
    text = (tmp_path / "a.jsonl").read_text()
    (tmp_path / "cut.jsonl").write_text(text[:-40])
    assert len(read_runs(tmp_path / "cut.jsonl").runs) == n + 5


def test_bench_flags_dishonest_solvers(toy_suite, tmp_path):
    root, ref_path = toy_suite

    def fixed(problem, seed):          # ignores the seed
        for z in np.linspace(0.1, 0.9, 5):
            problem(np.full(problem.dim, z))
        return np.full(problem.dim, 0.9)

    def liar(problem, seed):           # recommends a point it never evaluated
        problem(problem.x0)
        return np.random.default_rng(seed).random(problem.dim)

    def sleeper(problem, seed):        # overruns its time limit
        problem(problem.x0)
        time.sleep(1.2)
        return problem.x0

    def clock(problem, seed):          # seeded from the clock
        rng = np.random.default_rng(time.perf_counter_ns())
        for _ in range(5):
            problem(rng.random(problem.dim))

    res = bench(root, [fixed, liar, sleeper], problems="letor-mq2008-map", folds=[1],
                seeds=range(2), budget=20, max_seconds=0.05, references=ref_path, n_jobs=1)
    flags = res.profiles().flags()
    assert "identical runs across seeds" in flags["fixed"][0]
    assert any("never evaluated" in f for f in flags["liar"])
    assert any("past their budget" in f for f in flags["sleeper"])
    res = bench(root, [fixed, clock], problems="letor-mq2008-map", folds=[1],
                seeds=range(2), budget=20, references=ref_path, n_jobs=1)
    flags = res.profiles().flags()
    assert any("not reproducible" in f for f in flags["clock"])
    assert not any("not reproducible" in f for f in flags["fixed"])


def test_bench_command_line(toy_suite, tmp_path, capsys):
    root, ref_path = toy_suite
    out = tmp_path / "bench.jsonl"
    args = ["bench", "run", root, "--strategies", "ca,random", "--problems",
            "letor-mq2008-map", "--instances", "1,2", "--seeds", "2", "--budget", "40",
            "--references", ref_path, "-o", str(out), "--plot", str(tmp_path / "e.png")]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "10 runs" in text and (tmp_path / "e.png").exists()
    assert (tmp_path / "e-by-dimension.png").exists()
    assert "ECDF end" in text and "ECDF@100" not in text   # no run could make 100
    assert "2 instances (problem folds) x 2 runs each" in text
    assert f"references: {os.path.abspath(ref_path)} (1 runs" in text
    assert cli.main(["bench", "report", str(out), "--json", "-", "--by-problem", "5,40"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["references"]["file"] == os.path.abspath(ref_path)
    rows = report["summary"]
    assert [r["budget"] for r in report["by_problem"]] == [5, 40]
    assert [r["solver"] for r in rows] == ["ca", "random"]
    assert cli.main(["bench", "export", str(out), "-o", str(tmp_path / "ioh")]) == 0
    assert list((tmp_path / "ioh").glob("*/IOHprofiler_f*_letor_mq2008_map.json"))
    merged = tmp_path / "refs.json"
    assert cli.main(["bench", "reference", "--from-runs", str(out), "--merge", str(ref_path),
                     "-o", str(merged)]) == 0
    assert "values replaced" in capsys.readouterr().out
    assert json.loads(merged.read_text())["runs"][-1]["benches"] == [str(out)]
    assert cli.main(["bench", "reference", "-o", str(merged)]) == 2
    assert cli.main(["bench", "list", root]) == 0
    assert "letor-mq2008-map" in capsys.readouterr().out
    assert cli.main(args[:3] + ["--strategies", "ca", "--budget", "5", "--problems", "nope",
                                "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown problem" in capsys.readouterr().err
    assert cli.main(["bench", "run", root, "--strategies", "ca", "--budget", "5",
                     "--problems", "letor-ohsumed-map", "-o", str(tmp_path / "y.jsonl")]) == 1
    assert cli.main(["bench", "run", root, "--strategies", "ca", "-o",
                     str(tmp_path / "z.jsonl")]) == 2


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
def test_shipped_references_fit_the_real_data():
    suite = Suite(SHARED)
    assert not suite.missing
    for spec, fold in suite.select("small"):
        p = suite.problem(spec.id, fold, seed=0, budget=10)
        assert p.reference >= p.start_value - 1e-12
        assert p.line_cost >= (2 if getattr(p.objective, "exact_line", False) else 1)


def test_the_bench_function_is_what_the_package_gives():
    import inspect

    import dfrank.problems as P

    assert inspect.isfunction(P.bench) and inspect.isfunction(P.read_runs)
    assert "solvers" in inspect.signature(P.bench).parameters


# ---------------------------------------------------------------- COCO's aggregates
def test_absolute_targets_ert_and_its_bootstrap():
    from dfrank.problems import coco

    assert len(coco.GAPS) == 18 and np.isclose(coco.GAPS[0], 10 ** -0.6) and \
        np.isclose(coco.GAPS[-1], 1e-4) and np.all(np.diff(coco.GAPS) < 0)
    assert np.allclose(np.diff(np.log10(coco.GAPS)), -0.2)
    assert coco.ert([10, np.inf, 30], [50, 100, 60]) == (10 + 100 + 30) / 2
    assert coco.ert([np.inf, np.inf], [5, 5]) == np.inf
    lo, hi = coco.ert_interval([10, np.inf, 30, 20], [50, 100, 60, 40], seed=1)
    assert (lo, hi) == coco.ert_interval([10, np.inf, 30, 20], [50, 100, 60, 40], seed=1)
    assert 10 <= lo <= coco.ert([10, np.inf, 30, 20], [50, 100, 60, 40]) <= hi
    # by brute force: the percentiles of the resampled ERTs
    rng = np.random.default_rng(1)
    h, e = np.array([10, np.inf, 30, 20]), np.array([50, 100, 60, 40])
    want = []
    for idx in rng.integers(0, 4, size=(coco.RESAMPLES, 4)):
        want.append(coco.ert(h[idx], e[idx]))
    want = np.sort(want)
    assert (lo, hi) == (want[int(np.floor(0.025 * (len(want) - 1)))],
                        want[int(np.ceil(0.975 * (len(want) - 1)))])
    assert coco.ert_interval([np.inf], [5]) == (np.inf, np.inf)


def test_ecdf_per_dimension_group_and_the_virtual_best_solver():
    from dfrank.problems.coco import BEST, VBS, Coco, absolute_targets

    rng = np.random.default_rng(3)
    runs = []
    for s in ("a", "b"):
        for pid, d in (("p1", 2), ("p2", 3), ("p3", 47)):
            for seed in range(3):
                vals = list(np.sort(rng.random(40)) * 0.999)
                runs.append(record(s, seed, vals, problem=pid, dim=d, budget=40,
                                   reference=1.0))
    runs.append(dict(record("a", 9, [0.1], problem="p1", dim=2, budget=40),
                     error="ValueError: x"))
    c = Coco(runs)
    assert c.groups() == [(1, 3), (46, 47)]
    budgets = [1, 5, 13]
    for s in ("a", "b"):
        mine = [r for r in runs if r["solver"] == s and r["dim"] <= 3]
        want = []
        for b in budgets:
            fr = []
            for r in mine:
                if r.get("error"):
                    fr.append(0.0)
                    continue
                hits = first_hits(r["trace"], absolute_targets(r["reference"]))
                fr.append(np.mean(hits <= b * r["dim"]))
            want.append(np.mean(fr))
        assert np.allclose(c.ecdf(s, (1, 3), budgets), want)
    # the virtual best: per instance and seed the fewest evaluations of either solver
    best = {}
    for r in runs:
        if r["dim"] > 3:
            continue
        h = np.full(18, np.inf) if r.get("error") else \
            first_hits(r["trace"], absolute_targets(r["reference"]))
        key = (r["problem"], r["fold"], r["seed"])
        best[key] = (np.minimum(best[key][0], h) if key in best else h, r["dim"])
    want = [np.mean([np.mean(h <= b * d) for h, d in best.values()]) for b in budgets]
    assert np.allclose(c.ecdf(VBS, (1, 3), budgets), want)
    text = c.table()
    assert "dimensions 1-3" in text and "dimensions 46-47" in text and VBS in text
    assert "ECDF@1D" in text and "ECDF@100D" not in text   # 40 evaluations: 13 per dim
    rep = c.report()
    assert [g["dimensions"] for g in rep] == [[1, 3], [46, 47]]
    assert set(rep[0]["solvers"]) == {"a", "b", VBS, BEST}
    # COCO's virtual best: per problem the runs of the solver of least ERT there, and the
    # ERT per problem (COCO reports per problem; the groups pool problems) (issue #63)
    from dfrank.problems.coco import GAPS, ert

    k = int(np.argmin(np.abs(GAPS - 1e-2)))

    def problem_ert(s, p):
        mine = [r for r in runs if r["solver"] == s and r["problem"] == p]
        hits = [np.inf if r.get("error") else
                first_hits(r["trace"], absolute_targets(r["reference"]))[k] for r in mine]
        return ert(hits, [r["n_evals"] for r in mine]), mine

    chosen = []
    for p in ("p1", "p2"):
        (ea, ra), (eb, rb) = problem_ert("a", p), problem_ert("b", p)
        assert c.problem_ert("a", p) == ea and c.problem_ert("b", p) == eb
        chosen += rb if eb < ea else ra
    hits = [np.inf if r.get("error") else
            first_hits(r["trace"], absolute_targets(r["reference"]))[k] for r in chosen]
    (_, value, _), = c.ert_table(BEST, (1, 3), [1e-2])
    assert value == ert(hits, [r["n_evals"] for r in chosen])
    assert BEST in text and "COCO's virtual best solver" in text
    table = c.problem_table()
    assert "p1 (2)" in table and "p3 (47)" in table and BEST in table
    assert set(c.problem_report()) == {"p1", "p2", "p3"}


def test_a_solver_module_is_found_in_the_working_directory_and_its_errors_said(tmp_path,
                                                                             monkeypatch):
    """``--strategies mysol:solve`` with ``mysol.py`` in the working directory said
    "unknown strategy" (it needed PYTHONPATH=.), an import error inside the module was
    hidden the same way, ``../x:y`` gave a relative-import message, and a broken entry
    point exited 3 as a bug in dfrank."""
    from dfrank.problems.solvers import ENTRY_POINTS, solver_of

    (tmp_path / "mysol_here.py").write_text("def solve(problem, seed):\n    return None\n")
    (tmp_path / "mysol_broken.py").write_text("import numpy\nraise RuntimeError('oops')\n")
    (tmp_path / "mysol_needs.py").write_text("import not_a_module_anywhere\n")
    monkeypatch.chdir(tmp_path)
    assert solver_of("mysol_here:solve").name == "mysol_here:solve"
    with pytest.raises(ValueError, match=r"RuntimeError: oops at .*mysol_broken.py:2"):
        solver_of("mysol_broken:solve")
    with pytest.raises(ValueError, match="No module named 'not_a_module_anywhere'"):
        solver_of("mysol_needs:solve")
    with pytest.raises(ValueError, match="is not one"):
        solver_of("../x:y")
    import importlib.metadata

    class Broken:
        name, value = "broken-solver", "brokenpkg.solvers:solve"

        def load(self):
            raise ImportError("brokenpkg needs libfoo")

    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **kw: [Broken()] if group == ENTRY_POINTS
                        else real(group=group, **kw))
    with pytest.raises(ValueError, match="the plugin 'brokenpkg.solvers:solve'.*fix or "
                                         "uninstall"):
        solver_of("broken-solver")


@pytest.mark.parametrize("name", ["cma:es", "cma:ipop"])
def test_pycma_runs_a_one_dimensional_problem_in_two(name):
    """pycma needs two dimensions ("not yet initialized (dimension needed)" on 3 of 9
    one-dimensional runs): its adapters add a coordinate the objective never reads."""
    pytest.importorskip("cma")
    from dfrank.objectives.objective import FunctionObjective
    from dfrank.spaces import Box

    for f in (lambda x: -(x[0] - 0.3) ** 2, lambda x: float(x[0] > 0.7)):
        for seed in range(9):      # plateaus drove pycma's one-dimensional runs to fail
            res = dfrank.maximize(FunctionObjective(f, Box([0.0], [1.0])), None, name,
                                  seed=seed, budget=300)
            assert 0 < res.n_evals <= 300 and 0.0 <= res.point[0] <= 1.0
            assert res.value == f(res.point)


def test_a_bench_keeps_its_references_and_line_cost_and_checks_every_field(toy_suite,
                                                                          tmp_path):
    """Resuming a bench with other references gave the new runs other targets under the
    first file's name, ``--line-cost 9`` on resume was ignored, and a references file with
    ``values: []``, ``runs: "x"`` or ``line_cost: -5`` stopped the bench with an
    AttributeError or produced a bench file dfrank then refused."""
    from dfrank.problems import bench as run_bench

    root, ref_path = toy_suite
    out = str(tmp_path / "b.jsonl")
    kw = dict(problems=["letor-mq2008-map"], folds=[1], seeds=[0], budget=5, n_jobs=1,
              repeat=False)
    run_bench(root, ["random"], output=out, references=ref_path, line_cost=3, **kw)
    with pytest.raises(ValueError, match="was run with line_cost = 3, not 9"):
        run_bench(root, ["random"], output=out, references=ref_path, line_cost=9, **kw)
    refs = json.loads(open(ref_path).read())
    other = tmp_path / "other.json"
    edited = json.loads(json.dumps(refs))
    first = next(iter(edited["values"]))
    edited["values"][first]["1"]["value"] *= 0.9
    other.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="was run with references"):
        run_bench(root, ["random"], output=out, references=str(other), line_cost=3, **kw)
    for field, value, why in (("values", [], "'values' must be an object"),
                              ("runs", "x", "'runs' must be a list"),
                              ("line_cost", -5, "'line_cost'\\] must be an integer >= 1")):
        bad = json.loads(json.dumps(refs))
        if field == "line_cost":
            bad["values"][first]["1"]["line_cost"] = value
        else:
            bad[field] = value
        path = tmp_path / f"refs-{field}.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(dfrank.DataFormatError, match=why):
            run_bench(root, ["random"], output=str(tmp_path / f"{field}.jsonl"),
                      references=str(path), **kw)


def test_bench_report_retargets_a_finished_bench_in_the_report_only(toy_suite, tmp_path,
                                                                   capsys):
    """``bench report`` had no ``--references``: a finished bench could not be measured
    against other references without running it again."""
    root, ref_path = toy_suite
    out = str(tmp_path / "b.jsonl")
    bench(root, ["random"], problems=["letor-mq2008-map"], folds=[1], seeds=[0, 1],
          budget=20, n_jobs=1, repeat=False, references=ref_path, line_cost=3, output=out)
    before = open(out).read()
    higher = json.loads(open(ref_path).read())
    for folds in higher["values"].values():
        for e in folds.values():
            e["value"] = 1.0            # a target no run reaches
    path = tmp_path / "higher.json"
    path.write_text(json.dumps(higher))
    assert cli.main(["bench", "report", out, "--json", "-"]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert cli.main(["bench", "report", out, "--references", str(path), "--json", "-"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    assert theirs["references"]["retargeted"] is True
    assert theirs["references"]["file"] == str(path)
    assert ours["summary"] != theirs["summary"]
    assert open(out).read() == before                    # the bench file is left as it is
    res = read_runs(out).retargeted(higher, str(path))
    assert all(r["reference"] == 1.0 and
               r["targets"] == targets_of(1.0, r["start_value"]).tolist()
               for r in res.runs if r.get("error") is None)
    assert cli.main(["bench", "report", out, "--references", str(path)]) == 0
    assert "re-targeted in this report only" in capsys.readouterr().out


def test_a_cut_last_bench_line_is_repaired_before_appending(toy_suite, tmp_path):
    """A bench killed while writing its last run left a cut line that the next run appended to,
    making the file unreadable: the cut line is repaired (with a warning) and its run redone."""
    from dfrank.problems import bench, read_runs

    out = tmp_path / "b.jsonl"
    root = toy_suite[0]
    bench(root, ["random"], output=out, **bench_kw(toy_suite))
    text = out.read_text()
    out.write_text(text[:-40])                      # killed while writing the last run
    with pytest.warns(UserWarning, match="cut short"):
        res = bench(root, ["random"], output=out, **bench_kw(toy_suite))
    assert len(res.runs) == 3
    lines = out.read_text().splitlines()
    assert all(json.loads(ln) for ln in lines)      # every line whole again
    redone, first = json.loads(lines[-1]), json.loads(text.splitlines()[-1])
    assert redone["trace"]["values"] == first["trace"]["values"]   # the cut run, redone
    assert len(read_runs(out).runs) == 3


def test_ctrl_c_in_a_run_stops_the_bench_and_the_run_is_redone(toy_suite, tmp_path,
                                                                     monkeypatch, capsys):
    """Ctrl-C in a run of the bench was recorded as a finished run: the run is saved as
    interrupted, the command exits 130, and resuming redoes it."""
    from dfrank.problems import bench, read_runs
    from dfrank.registry import resolve

    out = tmp_path / "b.jsonl"
    root = toy_suite[0]
    cls = type(resolve("random"))
    real = cls.run
    calls = []

    def cut(self, objective, rng, **kw):            # Ctrl-C during the second run
        calls.append(1)
        if len(calls) == 2:
            objective.batch(objective.space.sample(rng, 2))
            raise KeyboardInterrupt
        return real(self, objective, rng, **kw)

    monkeypatch.setattr(cls, "run", cut)
    with pytest.raises(KeyboardInterrupt):
        bench(root, ["random"], output=out, **bench_kw(toy_suite))
    runs = read_runs(out).runs
    assert [r["seed"] for r in runs] == [0, 1] and runs[1]["status"] == "interrupted"
    # on the command line: exit 130
    calls.clear()
    args = ["bench", "run", root, "--strategies", "random", "--problems", "letor-mq2008-map",
            "--instances", "1", "--seeds", "3", "--budget", "30", "--line-cost", "3",
            "--n-jobs", "1", "--references", toy_suite[1], "-o", str(tmp_path / "c.jsonl"),
            "--quiet"]
    assert cli.main(args) == 130
    monkeypatch.setattr(cls, "run", real)
    res = bench(root, ["random"], output=out, **bench_kw(toy_suite))
    assert sorted(r["seed"] for r in res.runs) == [0, 1, 2]
    assert all(r["status"] != "interrupted" for r in read_runs(out).runs)


def test_a_hand_edited_bench_file(toy_suite, tmp_path, capsys):
    """A hand-edited bench file (a solver named '..', an unknown problem, a future version)
    wrote outside the export folder or failed bare: nothing is written beside the export, and
    each edit is a data error naming it."""
    from dfrank.problems import bench

    out = tmp_path / "b.jsonl"
    bench(toy_suite[0], ["random"], output=out, **bench_kw(toy_suite, seeds=range(1)))
    lines = out.read_text().splitlines()
    run = json.loads(lines[-1])
    edited = tmp_path / "e.jsonl"
    edited.write_text("\n".join(lines[:-1] + [json.dumps(dict(run, solver=".."))]) + "\n")
    export = tmp_path / "export" / "D"
    export.parent.mkdir()
    assert cli.main(["bench", "export", str(edited), "-o", str(export)]) == 0
    assert os.listdir(export.parent) == ["D"]          # nothing written beside D
    edited.write_text("\n".join(lines[:-1] + [json.dumps(dict(
        run, problem="letor-mq2009-map"))]) + "\n")
    assert cli.main(["bench", "export", str(edited), "-o", str(export)]) == 1
    assert "problem 'letor-mq2009-map' that this dfrank does not know" in \
        capsys.readouterr().err
    head = json.loads(lines[0])
    edited.write_text("\n".join([json.dumps(dict(head, version=7))] + lines[1:]) + "\n")
    assert cli.main(["bench", "report", str(edited)]) == 1
    assert "bench file version 7" in capsys.readouterr().err
    from dfrank.problems import bench as run_bench

    with pytest.raises(dfrank.DataFormatError, match="version 7"):
        run_bench(toy_suite[0], ["random"], output=edited, **bench_kw(toy_suite))


def test_a_bench_file_has_one_writer(toy_suite, tmp_path):
    """Two benches on one file (two hosts sharing a folder, or one host) appended to it at
    once, interleaving and losing runs (issue #62): the second is refused, naming the first;
    a checkpoint likewise."""
    import subprocess
    import sys

    from dfrank import files

    out = tmp_path / "b.jsonl"
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / ("b.jsonl" + files.WRITER)).write_text(
            f"{files.owner().rsplit('-', 1)[0]}-{alive.pid} 1700000000\n")
        with pytest.raises(files.OutputError, match="being written by process"):
            bench(toy_suite[0], ["random"], output=out, **bench_kw(toy_suite))
        assert not out.exists()
        ck = tmp_path / "ck.json"
        (tmp_path / ("ck.json" + files.WRITER)).write_text(
            f"{files.owner().rsplit('-', 1)[0]}-{alive.pid} 1700000000\n")
        data = planted_data(n_queries=4, docs_per_query=6, n_features=3, seed=0)
        with pytest.raises(files.OutputError, match="the checkpoint is being written"):
            dfrank.maximize(data, "ndcg@10", "random", budget=5, checkpoint=ck)
    finally:
        alive.kill()
        alive.wait()
    bench(toy_suite[0], ["random"], output=out, **bench_kw(toy_suite))   # taken over
    assert len(read_runs(out).runs) == 3 and not (tmp_path / "b.jsonl.writer").exists()


def test_cocopp_reads_the_coco_export_with_dfranks_ert(toy_suite, tmp_path, monkeypatch):
    """dfrank wrote nothing COCO's post-processing reads (issue #63). The COCO export,
    with dfrank's suite registered as a cocopp testbed, is read by cocopp, whose ERT of
    each absolute target equals dfrank's, and cocopp.main makes its figures and pages."""
    pytest.importorskip("cocopp")
    import warnings

    from dfrank.problems.coco import ert
    from dfrank.problems.cocodata import export, register_cocopp

    res = bench(toy_suite[0], ["ca", "pso"], **bench_kw(toy_suite, budget=60, folds=[1, 2]))
    runs = [r for r in res.runs if not r.get("repeat")]
    export(runs, tmp_path / "coco")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import cocopp
        import cocopp.pproc

        register_cocopp()
        for solver in ("ca", "pso"):
            dsl = cocopp.pproc.DataSetList(str(tmp_path / "coco" / solver))
            assert len(dsl) == 1
            ds = dsl[0]
            ours = [r for r in runs if r["solver"] == solver]
            assert sorted(ds.instancenumbers) == sorted(r["fold"] for r in ours)
            for gap in (1e-1, 1e-2, 1e-3):
                hits = [first_hits(r["trace"], [r["reference"] - gap])[0] for r in ours]
                want = ert(hits, [r["n_evals"] for r in ours])
                got = ds.detERT([gap])[0]
                assert got == pytest.approx(want, rel=1e-12) or \
                    (np.isinf(want) and np.isinf(got)), (solver, gap)
        cocopp.main(["-o", str(tmp_path / "ppdata"), str(tmp_path / "coco" / "ca")])
    assert list((tmp_path / "ppdata").rglob("ppfigdim_f*.svg"))
    assert (tmp_path / "ppdata" / "index.html").exists()


def test_dfrank_bench_cocopp_runs_cocopp_on_the_export_as_it_is(toy_suite, tmp_path,
                                                                monkeypatch, capsys):
    """``cocopp.main DIR`` on the COCO export stopped on the unknown suite ``dfrank`` unless
    Python first registered it: ``dfrank bench cocopp DIR [cocopp's options]`` registers
    it and hands the export's solver folders and the options to cocopp itself."""
    pytest.importorskip("cocopp")
    import warnings

    from dfrank.problems.cocodata import export as coco_export

    res = bench(toy_suite[0], ["ca", "random"], **bench_kw(toy_suite, budget=40))
    coco_export(res.runs, tmp_path / "coco")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cli.main(["bench", "cocopp", str(tmp_path / "coco"), "-o",
                         str(tmp_path / "pp")]) == 0
    capsys.readouterr()
    assert (tmp_path / "pp" / "index.html").exists()
    compared = [d.name for d in (tmp_path / "pp").iterdir() if d.is_dir()]
    assert any("ca" in d and "rando" in d for d in compared), compared   # both algorithms
    assert cli.main(["bench", "cocopp", str(tmp_path)]) == 2
    assert "no COCO data" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["text", "json", "binary"])
def test_a_bench_output_of_another_kind_is_refused_and_left_byte_identical(toy_suite, tmp_path,
                                                                           kind):
    """``bench run -o notes.txt`` on a user's one-line file without a last newline "repaired"
    it (its line dropped as cut short, the file truncated to nothing) before refusing it, and
    a one-line JSON file got a newline appended: a file that is not a bench file is refused
    as it is."""
    from dfrank.problems import bench
    from tests.inputs import users_file

    path, before = users_file(tmp_path, kind, "notes.txt")
    with pytest.raises(dfrank.DataFormatError, match="not a dfrank bench file"):
        bench(toy_suite[0], ["random"], output=path, **bench_kw(toy_suite))
    assert path.read_bytes() == before
    args = ["bench", "run", toy_suite[0], "--strategies", "random", "--problems",
            "letor-mq2008-map", "--instances", "1", "--seeds", "1", "--budget", "5",
            "--references", toy_suite[1], "-o", str(path), "--quiet"]
    assert cli.main(args) == 1
    assert path.read_bytes() == before


@pytest.mark.parametrize("kind", ["text", "json", "binary"])
def test_references_merged_into_a_file_of_another_kind_refuse_it_as_it_is(toy_suite,
                                                                          tmp_path, kind):
    """``bench reference --merge F -o F`` reads F's references before writing F: a user's
    file there is refused and left byte for byte."""
    from tests.inputs import users_file

    out = tmp_path / "b.jsonl"
    bench(toy_suite[0], ["random"], output=out, **bench_kw(toy_suite, seeds=range(1)))
    path, before = users_file(tmp_path, kind)
    assert cli.main(["bench", "reference", "--from-runs", str(out), "--merge", str(path),
                     "-o", str(path)]) == 1
    assert path.read_bytes() == before


HOSTILE = ["my/solver", "my:solver", "it's", 'say "hi", then', "back\\slash", "ÉTÉ", "été",
           "..", "new\nline"]


def test_hostile_solver_names_stay_distinct_through_each_formats_own_reader(toy_suite,
                                                                            tmp_path):
    """``my/solver`` and ``my:solver`` were exported to one folder (the second kept, exit
    0), and a quote in a name made a COCO .info file cocopp could not parse. Every name
    comes back as it was given, each in a folder of its own, through iohinspector and
    cocopp where they install."""
    res = bench(toy_suite[0], ["random"], **bench_kw(toy_suite, budget=20, seeds=range(1)))
    [run] = [r for r in res.runs if not r.get("repeat")]
    runs = [dict(run, solver=name) for name in HOSTILE]
    ioh_files, _ = export(runs, tmp_path / "ioh")
    from dfrank.problems.cocodata import export as coco_export

    coco_files, _ = coco_export(runs, tmp_path / "coco")
    folders = {os.path.relpath(f, tmp_path / "coco").split(os.sep)[0] for f in coco_files}
    assert len(folders) == len(HOSTILE) and all(not f.startswith(".") for f in folders)
    assert {os.path.relpath(f, tmp_path / "ioh").split(os.sep)[0] for f in ioh_files} == folders
    metas = [json.loads(open(f).read()) for f in ioh_files if f.endswith(".json")]
    assert sorted(m["algorithm"]["name"] for m in metas) == sorted(HOSTILE)
    if importlib.util.find_spec("iohinspector") is not None:
        from iohinspector import DataManager

        manager = DataManager()
        manager.add_folder(str(tmp_path / "ioh"))
        frame = manager.load(monotonic=False, include_meta_data=True)
        assert sorted(set(frame["algorithm_name"].to_list())) == sorted(HOSTILE)
    if importlib.util.find_spec("cocopp") is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import cocopp.pproc
            from dfrank.problems.cocodata import register_cocopp

            register_cocopp()
            got = [cocopp.pproc.DataSetList(str(tmp_path / "coco" / f))[0].algId
                   for f in sorted(folders)]
            # (cocopp names an algorithm by its folder; the header's name, by its parser)
            heads = [dict(cocopp.pproc.parseinfo(open(f).readline()))["algId"]
                     for f in coco_files if f.endswith(".info")]
        assert len(set(got)) == len(HOSTILE) and sorted(heads) == sorted(HOSTILE)


def test_a_solvers_names_that_share_no_folder_keep_their_plain_folders(toy_suite, tmp_path):
    """A name is written as it is where it is a plain file name and shares its folder with
    no other solver's name; only names that would collide get a digest."""
    from dfrank.problems.ioh import _folder_names

    names = _folder_names(["ca", "cma:es", "my/solver", "my:solver", "My_solver"])
    assert names["ca"] == "ca" and names["cma:es"] == "cma_es"
    assert len({n.lower() for n in names.values()}) == 5
    assert all(names[s].startswith(("my_solver-", "My_solver-"))
               for s in ("my/solver", "my:solver", "My_solver"))


def test_a_bench_file_carries_what_reproduces_it_and_the_report_prints_it(toy_suite, tmp_path,
                                                                         capsys):
    """A bench file recorded no versions, date or machine, nor the seeds the adapters gave
    pycma; ``--by-problem`` printed a 1000-evaluation row for a 30-evaluation bench."""
    pytest.importorskip("cma")
    out = tmp_path / "b.jsonl"
    kw = bench_kw(toy_suite, seeds=range(2))
    bench(toy_suite[0], ["random", "cma:es"], output=out, **kw)
    bench(toy_suite[0], ["random", "cma:es", "ca"], output=out, **kw)   # continued
    res = read_runs(out)
    first, second = res.header["sessions"]
    for p in (first, second):
        assert set(p["versions"]) >= {"dfrank", "numpy", "numba", "python"}
        assert p["versions"]["dfrank"] == dfrank.__version__ and p["machine"]["cores"] >= 1
        assert p["date"].endswith("Z") and "platform" in p["machine"]
    assert p["versions"]["cma"] is not None and "cpu" in p["machine"]
    for r in res.runs:
        ss = np.random.SeedSequence(r["seed"])
        if r["solver"] == "cma:es":
            [got] = r["seeds_received"]
            child = ss.spawn(1)[0]
            assert got["seed_sequence"] == {"entropy": r["seed"], "spawn_key": [0]}
            assert got["package_seed"] == int(np.random.default_rng(child).integers(
                0, 2 ** 31 - 1)) + 1                     # pycma's seed, as it was given
        else:
            assert all("package_seed" not in g for g in r["seeds_received"])
    assert cli.main(["bench", "report", str(out), "--by-problem"]) == 0
    text = capsys.readouterr().out
    assert "session 1: " in text and "session 2: " in text and "numba " in text
    assert "SeedSequence(0).spawn(1) -> seed " in text
    rows = [line.split() for line in text.splitlines() if line.startswith("letor-mq2008-map")]
    assert [r[2] for r in rows if len(r) > 2 and r[2].isdigit()] == ["30"]
