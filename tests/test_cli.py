"""The command line: exit codes, output formats, errors that name the problem."""

import json
import os
import subprocess
import sys

import pytest

import dfrank
from dfrank import LinearRanker, cli, testing
from dfrank.io.svmlight import save_svmlight
from tests.inputs import (LETOR, LETOR_NO_LAST_DOCID, QRELS, RUN_A, RUN_B, cranfield_like,
                          letor_data, model_file, trec_files, tune_argv, write_file,
                          write_letor)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("letor")
    train = write_letor(d / "train.txt", testing.planted_data(n_queries=20, seed=0))
    test = write_letor(d / "test.txt", testing.planted_data(n_queries=10, seed=1))
    bad = d / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n0 qid:1 1:oops\n")
    return {"train": train, "test": test, "bad": str(bad), "dir": d}


def run(argv, capsys):
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse's own usage errors (exit 2)
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fit_then_evaluate(files, capsys):
    model = str(files["dir"] / "model.json")
    code, out, err = run(["fit", files["train"], "--test", files["test"], "--metric", "map",
                          "--strategy", "ca", "--restarts", "2", "-o", model, "--quiet"],
                         capsys)
    assert code == 0, err
    assert "train" in out and "test" in out and "model written" in out
    code, out, err = run(["evaluate", model, files["test"], "--metric", "map", "--metric",
                          "ndcg@10", "--json", "-", "--quiet"], capsys)
    assert code == 0
    vals = json.loads(out)
    assert set(vals) == {"map", "ndcg@10"} and 0 <= vals["map"] <= 1
    code, out, _ = run(["evaluate", model, files["test"], "--per-query", "--quiet"], capsys)
    assert code == 0 and out.strip().splitlines()[-1].startswith("all")


def test_a_narrower_file_than_the_model_is_read_with_a_warning(files, capsys, tmp_path):
    """evaluate reads DATA as wide as the model (an SVMlight file leaves zeros out); one
    that lists its zeros yet stops short of the model's features gets a warning, as does
    fit's --valid against TRAIN."""
    model = str(files["dir"] / "model.json")
    if not (files["dir"] / "model.json").exists():
        assert run(["fit", files["train"], "--strategy", "ca", "--restarts", "1", "-o",
                    model, "--quiet"], capsys)[0] == 0
    narrow = write_letor(tmp_path / "narrow.txt",
                         testing.planted_data(n_queries=5, seed=2).select_features([1, 2]))
    code, out, err = run(["evaluate", model, narrow, "--quiet"], capsys)
    width = dfrank.LinearRanker.load(model).feature_ids.max()
    assert code == 0 and "ndcg@10" in out
    assert f"dfrank: warning: {narrow}: every line lists features 1-2 and none above, " \
        f"but {width} feature columns" in err
    code, out, err = run(["fit", files["train"], "--valid", narrow, "--strategy", "ca",
                          "--restarts", "1", "-o", str(tmp_path / "m.json"), "--quiet"],
                         capsys)
    assert code == 0 and f"features 3-{width} are read as 0" in err
    code, out, err = run(["evaluate", model, files["test"], "--quiet"], capsys)
    assert code == 0 and "warning" not in err


def test_counts_of_one_are_singular(tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text("2 qid:1 1:0.5\n0 qid:1 1:0.2\n1 qid:1 1:0.1\n")
    code, out, err = run(["fit", str(one), "--strategy", "ca", "--restarts", "1", "-o",
                          str(tmp_path / "m.json")], capsys)
    assert code == 0, err
    assert out.startswith("coordinate_ascent on 1 query, 1 feature (seed 0)"), out


def test_evaluate_as_the_letor_tool(files, capsys):
    model = str(files["dir"] / "model_tool.json")
    assert run(["fit", files["train"], "--strategy", "ca", "--restarts", "1", "-o", model,
                "--quiet"], capsys)[0] == 0
    d = testing.planted_data(n_queries=10, seed=1)
    graded = write_letor(files["dir"] / "grades_0_2.txt",
                         dfrank.RankingData(d.X, d.y.clip(0, 2), d.qptr, d.qids))
    code, out, err = run(["evaluate", model, graded, "--letor-tool", "--metric", "ndcg@10",
                          "--metric", "P@16", "--json", "-", "--quiet"], capsys)
    assert code == 0, err
    data = dfrank.load_svmlight(graded)
    want = dfrank.evaluate_letor(dfrank.LinearRanker.load(model).predict(data), data)
    assert json.loads(out) == pytest.approx({"ndcg@10": want["ndcg@10"], "p@16": want["p@16"]})
    code, out, err = run(["evaluate", model, graded, "--letor-tool", "4.0", "--metric", "p@10",
                          "--json", "-", "--quiet"], capsys)
    assert code == 0, err
    four = dfrank.evaluate_letor(dfrank.LinearRanker.load(model).predict(data), data,
                                 version="4.0")
    assert json.loads(out) == pytest.approx({"p@10": four["p@10"]})
    code, _, err = run(["evaluate", model, graded, "--letor-tool", "4.0", "--metric", "p@16",
                        "--metric", "err@10", "--quiet"], capsys)
    assert code == 2 and "4.0 computes p@1..p@10" in err and "not p@16, err@10" in err
    code, _, err = run(["evaluate", model, graded, "--letor-tool", "--ties", "stable",
                        "--quiet"], capsys)
    assert code == 2 and "drop --ties" in err
    code, _, err = run(["evaluate", model, files["test"], "--letor-tool", "--quiet"], capsys)
    assert code == 2 and "label 3 of document" in err


def test_fit_json_and_options(files, capsys):
    code, out, err = run(["fit", files["train"], "--strategy", "pso", "--option",
                          "swarm_size=8", "--option", "iterations=5", "--json", "-", "--quiet"],
                         capsys)
    assert code == 0, err
    d = json.loads(out)
    assert d["strategy"] == "pso" and d["n_evals"] == 8 * 6 and len(d["weights"]) == 6


def test_fit_default_is_smoothed_es_averaged(files, capsys):
    code, out, err = run(["fit", files["train"], "--valid", files["test"], "--restarts", "3",
                          "--option", "evals=500", "--json", "-", "--quiet"], capsys)
    assert code == 0, err
    d = json.loads(out)
    train, valid = (dfrank.load_svmlight(files[k]) for k in ("train", "test"))
    r = dfrank.maximize(train, "ndcg@10", "smoothed_es", restarts=3, evals=500, valid=valid)
    assert d["strategy"] == "smoothed_es" and d["weights"] == r.weights.tolist()
    assert d["scores"]["valid"] == r.valid_value == r.ranker.evaluate(valid, "ndcg@10")
    assert all(500 <= x.n_evals < 700 for x in r.restarts)
    es = run(["fit", files["train"], "--valid", files["test"], "--strategy", "es",
              "--restarts", "3", "--option", "evals=500", "--json", "-", "--quiet"], capsys)
    r = dfrank.maximize(train, "ndcg@10", "es", restarts=3, evals=500, valid=valid)
    d = json.loads(es[1])
    assert d["strategy"] == "ipop_cmaes" and d["weights"] == r.weights.tolist()
    assert d["scores"]["valid"] == r.valid_value == max(x.valid_value for x in r.restarts)


@pytest.mark.parametrize("argv,code,needle", [
    (["fit", "/no/such/file.txt"], 1, "no such file"),
    (["fit", "BAD"], 1, "line 2"),
    (["fit", "TRAIN", "--metric", "ndgc@10"], 2, "Did you mean"),
    (["fit", "TRAIN", "--strategy", "annealing"], 2, "unknown strategy"),
    (["fit", "TRAIN", "--option", "restart=3"], 2, "Did you mean 'restarts'"),
    (["fit", "TRAIN", "--option", "nonsense"], 2, "[STRATEGY:]KEY=VALUE"),
    (["fit", "TRAIN", "--budget", "-3"], 2, "--budget: takes an integer >= 1, got '-3'"),
    (["evaluate", "TRAIN", "TRAIN"], 1, "not valid JSON"),
    (["grid", "TRAIN", "--features", "1"], 2, "two or more"),
])
def test_errors_and_exit_codes(files, capsys, argv, code, needle):
    argv = [files["train"] if a == "TRAIN" else files["bad"] if a == "BAD" else a
            for a in argv]
    got, out, err = run(argv + ["--quiet"], capsys)
    assert got == code
    assert needle in err and "Traceback" not in err


@pytest.mark.parametrize("argv,needle", [
    (["fit", "TRAIN", "--budget", "0"], "--budget: takes an integer >= 1, got '0'"),
    (["compare", "TRAIN", "--strategies", "random", "--budget", "0"], "--budget"),
    (["fuse", "--qrels", "QRELS", "RUN", "RUN", "--budget", "0"], "--budget"),
    (["tune", "--collection", "C", "--budget", "0"], "--budget"),
    (["bench", "run", "DIR", "--strategies", "ca", "--budget", "0", "-o", "OUT"], "--budget"),
    (["bench", "run", "DIR", "--strategies", "ca", "--budget", "5", "--strategy-budget",
      "ca=0", "-o", "OUT"], "--strategy-budget expects STRATEGY=N with N > 0"),
])
def test_a_budget_of_0_is_a_usage_error_in_every_command(files, capsys, argv, needle):
    """``bench run --strategy-budget ca=0`` was accepted, and every run of ca recorded
    "budget too small" (exit 0), while ``fit --budget 0`` was a usage error."""
    names = {"TRAIN": files["train"], "QRELS": files["train"], "RUN": files["train"],
             "C": str(files["dir"]), "DIR": str(files["dir"]),
             "OUT": str(files["dir"] / "out.jsonl")}
    got, out, err = run([names.get(a, a) for a in argv] + ["--quiet"], capsys)
    assert got == 2 and needle in err and "Traceback" not in err
    assert not os.path.exists(files["dir"] / "out.jsonl")


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["fit"])
    assert e.value.code == 2
    assert cli.main([]) == 2


def test_grid_with_plot(files, capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "surface.png"
    code, out, err = run(["grid", files["train"], "--features", "1,2,3", "--resolution", "10",
                          "--metric", "ndcg@10", "--plot", str(png), "--quiet"], capsys)
    assert code == 0, err
    assert "286 points" in out and png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_info_metrics_strategies(files, capsys):
    assert run(["info", files["train"]], capsys)[1].count("queries") >= 1
    assert "ndcg@k" in run(["metrics"], capsys)[1]
    assert "coordinate_ascent" in run(["strategies"], capsys)[1]


def test_console_script_demo():
    r = subprocess.run([sys.executable, "-m", "dfrank.cli", "demo", "--quiet"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "coordinate ascent" in r.stdout and "random search" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dfrank.cli", "--help"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "dfrank demo" in r.stdout and "examples" in r.stdout


def test_help_of_every_command_has_an_example():
    for name in cli.COMMANDS:
        assert "example" in cli.parser(name).format_help(), name


def test_exit_codes_and_debug_before_or_after_the_command(files, capsys, monkeypatch):
    from dfrank.cli import info

    def boom(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(info, "run", boom)
    assert cli.main(["info", files["train"]]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: a bug" in err and "--debug" in err
    for argv in (["--debug", "info", files["train"]], ["info", files["train"], "--debug"]):
        with pytest.raises(RuntimeError, match="a bug"):
            cli.main(argv)
    monkeypatch.undo()
    assert cli.main(["info", "/no/such/file"]) == 1
    assert cli.main(["fit", files["train"], "--metric", "nope@3", "--quiet"]) == 2
    assert cli.main(["nosuchcommand"]) == 2
    assert "unknown command" in capsys.readouterr().err


def test_name_value_numbers():
    from dfrank.cli import options as o

    assert o.parse_numbers(["k1=1.2", "b=0.75"], "--set") == {"k1": 1.2, "b": 0.75}
    assert o.parse_numbers(None, "--set") == {}
    for bad in ("k1", "k1=", "k1=high"):
        with pytest.raises(o.UsageError, match="--default expects NAME=VALUE"):
            o.parse_numbers([bad], "--default")


def test_prepare_loads_what_auto_picks_for_the_data(monkeypatch):
    """With auto, the strategy it picks for the data's size (``options.chosen``) is the one
    whose kernels a command loads: the line search from 1,000 training queries on, the
    ridge start of smoothed_es below; no search runs to warm them."""
    import types

    import numpy as np

    from dfrank import RankingData, _jit
    from dfrank.driver import api
    from dfrank.cli import options
    from dfrank.linesearch import versions as line_versions
    from dfrank.registry import resolve
    from dfrank.objectives.surrogates import versions as smoothed_versions

    loaded = []
    monkeypatch.setattr(_jit, "load", lambda versions: loaded.append(set(versions)))
    monkeypatch.setattr(api, "maximize", lambda *a, **k: pytest.fail("a search ran"))
    for n_queries, needs, not_needed in ((1000, line_versions(0, 0), smoothed_versions()),
                                         (20, smoothed_versions("ridge"),
                                          line_versions(0, 0))):
        data = RankingData.from_arrays(np.arange(2 * n_queries, dtype=float)[:, None] % 7,
                                       np.arange(2 * n_queries) % 2,
                                       np.repeat(np.arange(n_queries), 2))
        picked = options.chosen(resolve("auto"), data, "ndcg@10", "pessimistic")
        assert not picked.chooses
        loaded.clear()
        options.prepare(types.SimpleNamespace(quiet=True), "ndcg@10", picked)
        [got] = loaded
        assert set(needs) <= got and not set(not_needed) & got, n_queries


def test_fit_resolves_its_strategy_once_and_auto_picks_once(files, tmp_path, monkeypatch):
    """``dfrank fit`` turns the strategy's name into the instance that runs in one place,
    once (its --option values read by the kinds it declares), and auto makes its pick
    once: the warm-up and the run receive the picked instance."""
    from dfrank import registry
    from dfrank.strategies.auto import Auto

    looked_up, picks = [], []
    lookup, pick = registry.get_strategy, Auto.pick
    monkeypatch.setattr(registry, "get_strategy",
                        lambda name: looked_up.append(name) or lookup(name))
    monkeypatch.setattr(Auto, "pick", lambda self, obj: picks.append(1) or pick(self, obj))
    out = tmp_path / "outcome.json"
    assert cli.main(["fit", files["train"], "--strategy", "auto", "--option", "restarts=1",
                     "--budget", "30", "--json", str(out), "--quiet"]) == 0
    assert looked_up.count("auto") == 1 and len(picks) == 1
    assert json.loads(out.read_text())["strategy"] == "smoothed_es"


def _fuse_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{i} {(i + q) % 3}\n" for q in range(8) for i in range(12)))
    runs = []
    for j, name in enumerate(("a", "b", "c")):
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 d{i} {i + 1} {((i * (j + 3) + q) % 11) / 10!r} {name}\n"
                             for q in range(8) for i in range(12)))
        runs.append(str(p))
    return str(qrels), runs


@pytest.mark.parametrize("command", ["fit", "fuse"])
@pytest.mark.parametrize("signum, code", [(2, 130), (15, 143)])
def test_a_signal_during_a_run_keeps_the_best_says_so_and_exits_130_or_143(files, tmp_path,
                                                                           command, signum,
                                                                           code):
    """``fit`` and ``fuse`` exited 0 after SIGTERM or Ctrl-C (``tune`` and ``bench`` exit
    143/130), and ``fuse`` said nothing of it."""
    import os
    import signal
    import time

    out = tmp_path / "out"
    if command == "fit":
        ckpt = tmp_path / "run.ckpt"
        argv = ["fit", files["train"], "--strategy", "pso", "--option", "iterations=100000000",
                "--checkpoint", str(ckpt), "-o", str(out)]
        started = ckpt.exists
    else:
        qrels, runs = _fuse_files(tmp_path)
        argv = ["fuse", "--qrels", qrels, *runs, "--strategy", "pso", "--signed", "--option",
                "iterations=100000000", "--budget", "1000000000", "-o", str(out)]
        # fuse writes nothing while it runs: the signal goes once a short fuse of the same
        # files, started now on this machine as loaded as it is, would have ended twice
        t0 = time.monotonic()
        short = subprocess.run([sys.executable, "-m", "dfrank.cli", *argv[:-4], "--budget",
                                "50", "-o", str(tmp_path / "short")], capture_output=True,
                               env=dict(os.environ, DFRANK_QUIET_COMPILE="1"), timeout=300)
        assert short.returncode == 0, short.stderr
        wait = max(6.0, 2 * (time.monotonic() - t0))
        t0 = time.monotonic()
        started = lambda: time.monotonic() - t0 > wait   # noqa: E731
    proc = subprocess.Popen([sys.executable, "-m", "dfrank.cli", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, DFRANK_QUIET_COMPILE="1"),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not started():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert "interrupted" in stdout + stderr
    assert out.exists()                           # the best point so far, kept


def test_two_outputs_on_one_path_are_refused(tmp_path, capsys, toy_suite):
    """``-o`` and ``--json`` (or ``--json`` and ``--cache``) on one path wrote one file over
    the other: refused as a usage error, nothing written."""
    data = str(tmp_path / "train.txt")
    save_svmlight(letor_data(), data)
    m = str(tmp_path / "m.json")
    assert cli.main(["fit", data, "--strategy", "ca", "--quiet", "-o", m, "--json", m]) == 2
    assert "--output and --json both write" in capsys.readouterr().err
    assert not os.path.exists(m)
    b = str(tmp_path / "b.jsonl")
    assert cli.main(["bench", "run", toy_suite[0], "--strategies", "random", "--budget", "10",
                     "-o", b, "--json", b, "--quiet"]) == 2
    assert "--output and --json both write" in capsys.readouterr().err
    cranfield_like(tmp_path)
    c = tmp_path / "c.jsonl"
    assert cli.main(tune_argv(tmp_path, "--budget", "3", "--cache", str(c), "--json", str(c))) \
        == 2
    assert "--json and --cache both write" in capsys.readouterr().err
    assert not c.exists()


def test_plain_text_on_standard_input(tmp_path):
    """``-`` as the data file: plain text on standard input (not only gzip) is read by info,
    evaluate and fit."""
    import subprocess
    import sys

    model = model_file(tmp_path)
    for cmd in (["info", "-"], ["evaluate", model, "-", "--metric", "map"],
                ["fit", "-", "--strategy", "ca", "--restarts", "1", "--quiet"]):
        out = subprocess.run([sys.executable, "-m", "dfrank.cli", *cmd], input=LETOR_NO_LAST_DOCID,
                             capture_output=True)
        assert out.returncode == 0, (cmd, out.stderr)
    out = subprocess.run([sys.executable, "-m", "dfrank.cli", "info", "-"],
                         input=LETOR_NO_LAST_DOCID.decode(), capture_output=True, text=True)
    assert "queries     2" in out.stdout


def test_data_errors_exit_1(tmp_path, capsys):
    """Data errors (runs sharing no query with the qrels, a cut bench file, a model whose
    scores overflow) exited 3 as crashes: they exit 1 with a line naming the data."""
    q, r = trec_files(tmp_path, {"1": {"a": 1}}, {"2": {"a": 1.0}})
    assert cli.main(["trec-eval", q, r]) == 1
    assert "share no query" in capsys.readouterr().err
    cut = tmp_path / "b.jsonl"
    cut.write_text('{"type": "header"\n{"type": "run"}\n')
    assert cli.main(["bench", "report", str(cut)]) == 1
    assert "line 1" in capsys.readouterr().err
    model = model_file(tmp_path)
    m = json.loads(open(model).read())
    big = tmp_path / "big.json"
    big.write_text(json.dumps(dict(m, weights=[1e308, 1e308, 1e308])))
    data = tmp_path / "d.txt"
    data.write_bytes(LETOR_NO_LAST_DOCID.replace(b"1:0.5 2:1", b"1:1e308 2:1e308"))
    assert cli.main(["evaluate", str(big), str(data), "--quiet"]) == 1
    assert "scores must be finite" in capsys.readouterr().err


def test_stdout_once_and_typed_model_files(tmp_path, capsys):
    """Two outputs printed on standard output mixed into one stream, and a model file's weights
    as strings or booleans loaded: both refused, naming the option or the field."""
    q, r = trec_files(tmp_path, {"1": {"a": 1, "b": 0}, "2": {"a": 0, "b": 1}},
                       {"1": {"a": 1.0, "b": 0.5}, "2": {"a": 1.0, "b": 0.5}})
    r2 = tmp_path / "run2.txt"
    r2.write_text(open(r).read().replace("1.0", "0.2"))
    assert cli.main(["fuse", "--qrels", q, r, str(r2), "--json", "-", "--export", "ranx",
                     "--quiet"]) == 2
    assert "both print on standard output" in capsys.readouterr().err
    # weights and ids of a model file are numbers
    for field, value in (("weights", [1, "2", 3]), ("weights", [1, True, 3]),
                         ("feature_ids", [1, 2.5, 3]), ("weights", "1,2,3")):
        m = {"format": "dfrank.linear_ranker", "version": 1, "weights": [1, 2, 3],
             "feature_ids": [1, 2, 3], field: value}
        (tmp_path / "e.json").write_text(json.dumps(m))
        with pytest.raises(dfrank.DataFormatError, match=f"{field} must be a list of"):
            LinearRanker.load(tmp_path / "e.json")


def test_a_failed_model_write_keeps_the_model(tmp_path, capsys, monkeypatch):
    """A full disk while writing the model lost the fit: the model is kept in a temporary file
    that the error names."""
    data = write_file(tmp_path, "train.txt", LETOR)
    real = LinearRanker.save

    def full_disk(self, path):
        if os.path.dirname(os.fspath(path)) == str(tmp_path):
            raise OSError(28, "No space left on device")
        return real(self, path)

    monkeypatch.setattr(LinearRanker, "save", full_disk)
    code = cli.main(["fit", data, "--strategy", "ca", "--restarts", "1", "--quiet",
                     "-o", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 1 and "No space left on device" in err and "it is kept in" in err
    kept = err.split("it is kept in ")[1].split()[0]
    try:
        assert LinearRanker.load(kept).n_features == 3
    finally:
        os.unlink(kept)


def test_nowhere_to_write_prints_the_model(capsys, monkeypatch):
    """With nowhere to write (a read-only file system), the model was lost: it is printed on
    standard output, and the error says so."""
    from dfrank.errors import OutputError
    from dfrank.files import write_kept

    def fail(path):
        raise OSError(30, "Read-only file system")

    with pytest.raises(OutputError, match="printed on standard output") as e:
        write_kept("/proc/x.json", fail, "model", ".json", stdout=lambda: '{"w": 1}\n')
    assert e.value.kept == "-" and capsys.readouterr().out == '{"w": 1}\n'


def test_an_output_that_is_an_input_is_refused(tmp_path, capsys):
    """``-o`` naming an input file (directly or through a link) overwrote it: refused before
    anything is written."""
    qrels = write_file(tmp_path, "qrels.txt", QRELS)
    a = write_file(tmp_path, "a.run", RUN_A)
    b = write_file(tmp_path, "b.run", RUN_B)
    link = tmp_path / "link.run"
    link.symlink_to(a)
    for out in (a, str(link)):
        assert cli.main(["fuse", "--qrels", qrels, a, b, "--quiet", "-o", out]) == 1
        assert "is the input file" in capsys.readouterr().err
    assert open(a).read() == RUN_A
    data = write_file(tmp_path, "train.txt", LETOR)
    assert cli.main(["fit", data, "--quiet", "-o", data]) == 1
    assert "would destroy that input" in capsys.readouterr().err


def test_pipes_and_standard_input(tmp_path):
    """A run on standard input and a LETOR file through process substitution (``<(gzip -c
    ...)``) failed on seek: both are read as streams."""
    qrels = write_file(tmp_path, "qrels.txt", QRELS)
    r = write_file(tmp_path, "run.txt", RUN_A)
    env = dict(os.environ, DFRANK_QUIET_COMPILE="1")
    cmd = [sys.executable, "-m", "dfrank.cli"]
    out = subprocess.run(cmd + ["trec-eval", qrels, "-", "-m", "map"], input=RUN_A.encode(),
                         capture_output=True, env=env)
    assert out.returncode == 0 and b"map" in out.stdout, out.stderr
    out = subprocess.run(["bash", "-c", f"{sys.executable} -m dfrank.cli info <(gzip -c "
                                        f"{write_file(tmp_path, 'd.txt', LETOR)})"],
                         capture_output=True, env=env)
    assert out.returncode == 0 and b"queries     2" in out.stdout, out.stderr
    assert open(r).read() == RUN_A


def test_evaluate_reads_a_models_features_by_id_in_any_order(tmp_path, capsys):
    """A model learned on features chosen in another order (``select_features([3, 1, 2])``)
    is evaluated by feature id on a LETOR file, also where the file has exactly those
    features (whose bare columns would be ambiguous)."""
    data = letor_data()
    write_letor(tmp_path / "d.txt", data)
    chosen = data.select_features([3, 1, 2])
    for n in (4, 3):
        ranker = dfrank.maximize(chosen, "ndcg@10", "ca", budget=40, seed=0).ranker
        ranker.save(tmp_path / "m.json")
        src = data if n == 4 else data.select_features([1, 2, 3])
        write_letor(tmp_path / "d.txt", src)
        code, out, err = run(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "d.txt"),
                              "--metric", "ndcg@10", "--json", "-"], capsys)
        assert code == 0, err
        assert json.loads(out)["ndcg@10"] == pytest.approx(ranker.evaluate(chosen, "ndcg@10"),
                                                          abs=1e-12)


def test_python_dash_m_dfrank_runs_the_command_line(tmp_path):
    """``python -m dfrank`` failed ("No module named dfrank.__main__")."""
    out = subprocess.run([sys.executable, "-m", "dfrank", "--version"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == f"dfrank {dfrank.__version__}"
    out = subprocess.run([sys.executable, "-m", "dfrank", "nonsense"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 2 and "unknown command 'nonsense'" in out.stderr
