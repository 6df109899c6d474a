"""One library: the same names mean the same thing in every entry point (the Python API,
every command's parser, the result classes), and every extra named in an error exists."""

import dataclasses
import inspect
import os
import re
import tomllib

import pytest

import dfrank
from dfrank import _optional, cli
from dfrank.comparison import Comparison
from dfrank.fusion import FusionResult
from dfrank.driver.result import QueryResult
from dfrank.driver.result import Result
from dfrank.tuning.tuner import TuneResult

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _extras():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def test_every_extra_named_exists():
    extras = _extras()
    assert {"sklearn", "pandas", "ranx", "pyterrier", "plot", "all", "dev"} <= extras
    assert {extra for extra, _ in _optional.EXTRAS.values()} <= extras
    named = set()
    for folder in ("dfrank", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(dirpath, name)) as f:
                        named |= set(re.findall(r"dfrank\[(\w+)\]", f.read()))
    assert named and named <= extras, named - extras


HIDE_AND_ASK = """
import sys
for p in sys.argv[3:]:
    sys.modules[p] = None          # the package is not installed
from dfrank import cli
sys.exit(cli.main(["strategies"]) or cli.main(["compare", sys.argv[2], "--strategies",
                                                  "ca," + sys.argv[1], "--budget", "5"]))
"""


@pytest.mark.parametrize("name", list(_optional.STRATEGY_EXTRAS))
def test_a_strategy_of_a_missing_extra_names_the_extra(name, tmp_path):
    """Each strategy an extra provides, each of its packages hidden: asking for it on the
    command line says which extra to install."""
    import subprocess
    import sys

    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.2 2:0\n1 qid:2 1:0.1 2:0.3\n"
                    "0 qid:2 1:0.9 2:0.1\n")
    extra, packages = _optional.STRATEGY_EXTRAS[name]
    asked = name + "NGOpt" if name.endswith(":") else name
    for package in packages:
        done = subprocess.run([sys.executable, "-c", HIDE_AND_ASK, asked, str(data), package],
                              capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        assert f"pip install 'dfrank[{extra}]'" in done.stderr and package in done.stderr


def _options(name):
    """{option string: action} of command ``name``'s parser."""
    return {s: a for a in cli.parser(name)._actions for s in a.option_strings}


SHARED = {   # option: (dest, takes a value)
    "--seed": ("seed", True), "--budget": ("budget", True),
    "--max-seconds": ("max_seconds", True), "--n-jobs": ("n_jobs", True),
    "--metric": ("metric", True), "--strategy": ("strategy", True),
    "--option": ("option", True), "--json": ("json", True), "--output": ("output", True),
    "--valid": ("valid", True), "--test": ("test", True),
    "--significance": ("significance", True), "--quiet": ("quiet", False),
    "--ties": ("ties", True),
}
RETIRED = ("--out", "--jobs", "--test-name")
# former names of the unreleased 0.1.0, gone: (command, old, new)
OLD_NAMES = [("bench", "--solvers", "--strategies"), ("bench", "--solver-budget",
                                                      "--strategy-budget"),
             ("bench", "--folds", "--instances"), ("fuse", "--norm", "--normalize")]


def _visible(name):
    """{option string: action} of command ``name`` as its --help shows them (a command
    with actions: each action's parser too)."""
    import argparse

    parsers = [cli.parser(name)]
    out = {}
    while parsers:
        p = parsers.pop()
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                parsers.extend(a.choices.values())
            elif a.help != argparse.SUPPRESS:
                out.update({s: a for s in a.option_strings if s.startswith("--")})
    return out


def test_one_name_for_one_idea_across_commands():
    """Every option a --help shows has one destination and one kind of value wherever it
    appears (one name, one idea), and no idea shows under two names."""
    seen = {}
    for name in cli.COMMANDS:
        for flag, a in _visible(name).items():
            kind = (a.dest, a.nargs == 0, getattr(a.type, "__name__", a.type))
            seen.setdefault(flag, {}).setdefault(kind, []).append(name)
    twice = {f: k for f, k in seen.items() if len(k) > 1}
    assert not twice, twice
    for _, old, _ in OLD_NAMES:
        assert old not in seen or old == "--folds", old
    assert seen["--folds"] == {("folds", False, "positive_int"): ["fuse", "tune"]}
    for flag in ("--strategies", "--option", "--normalize"):
        assert len(seen[flag]) == 1, flag
    assert {a.metavar for n in ("fit", "fuse", "tune", "compare")
            for f, a in _visible(n).items() if f == "--option"} == {"[STRATEGY:]KEY=VALUE"}


@pytest.mark.parametrize("command, old, new", OLD_NAMES)
def test_the_former_names_of_the_unreleased_version_are_gone(command, old, new, capsys):
    """The hidden aliases kept "for one release" of a version never released are gone:
    a former name is an unknown option (argparse's usage error)."""
    p = cli.parser(command)
    argv = {"bench": ["run", "data", "-o", "b.jsonl"], "fuse": ["q", "a", "b"]}[command]
    with pytest.raises(SystemExit) as e:
        p.parse_args(argv + [old, "x"])
    assert e.value.code == 2 and f"unrecognized arguments: {old}" in capsys.readouterr().err


def test_a_deprecation_names_the_release_that_removes_it():
    from dfrank.errors import deprecated

    with pytest.warns(DeprecationWarning, match=r"old\(\) is deprecated: use new\(\); it goes "
                                               r"in dfrank 0\.3\.0"):
        deprecated("old()", "new()", "0.3.0")


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_shared_options_mean_one_thing_in_every_command(name):
    opts = _options(name)
    for flag in RETIRED:
        assert flag not in opts, f"dfrank {name} still has {flag}"
    for flag, (dest, value) in SHARED.items():
        if flag not in opts:
            continue
        action = opts[flag]
        assert action.dest == dest, (name, flag)
        assert (action.nargs != 0) == value, (name, flag)
        if flag == "--output":
            assert "-o" in action.option_strings, name
        if flag in ("--json", "--test", "--valid", "--output"):
            assert action.metavar == "FILE", (name, flag)
        if flag == "--significance":
            assert action.choices == ("randomization", "t", "wilcoxon", "sign"), name
    if "-o" in opts:
        assert opts["-o"].dest == "output", name


API = {"maximize": dfrank.maximize, "fuse": dfrank.fuse, "tune": dfrank.tune,
       "compare": dfrank.compare}


def test_python_api_uses_the_same_names():
    params = {k: set(inspect.signature(f).parameters) for k, f in API.items()}
    from dfrank import DirectRanker

    params["DirectRanker"] = set(inspect.signature(DirectRanker).parameters)
    for name, ps in params.items():
        assert not ps & {"jobs", "test_name", "elapsed", "timeout_seconds"}, name
        assert ({"seeds", "strategies"} if name == "compare" else {"seed", "strategy"}) <= ps, \
            name
    for name in ("maximize", "fuse", "compare", "DirectRanker"):
        assert {"budget", "max_seconds", "n_jobs"} <= params[name], name
    assert "n_jobs" in params["tune"] and "budget" in params["tune"]
    for name in ("fuse", "tune", "compare"):
        assert "significance" in params[name], name


def test_result_classes_share_field_names():
    for cls in (Result, FusionResult, TuneResult):
        fields = {f.name for f in dataclasses.fields(cls)}
        assert {"value", "seconds", "status"} <= fields, cls.__name__
        assert not fields & {"elapsed", "held_out_value", "interrupted"}, cls.__name__
    for cls in (FusionResult, TuneResult):   # one result base over queries
        assert issubclass(cls, QueryResult), cls.__name__
        fields = {f.name for f in dataclasses.fields(cls)}
        assert {"value", "per_query", "cv", "status", "seconds"} <= fields, cls.__name__
        assert not fields & {"folds", "cv_value", "fold_weights", "cv_per_query"}, \
            cls.__name__   # read from cv: one meaning of folds (a count)
    assert "significance" in {f.name for f in dataclasses.fields(Comparison)}


def test_one_default_in_one_place():
    from dfrank import registry

    for f in (dfrank.maximize,):
        assert inspect.signature(f).parameters["strategy"].default is None
    from dfrank import DirectRanker

    assert DirectRanker().strategy == registry.DEFAULT_STRATEGY
    fit = _options("fit")
    assert fit["--strategy"].default == registry.DEFAULT_STRATEGY
    assert _options("tune")["--strategy"].default == registry.BOX_STRATEGY
    assert inspect.signature(dfrank.tune).parameters["strategy"].default == \
        registry.BOX_STRATEGY
    assert _options("fuse")["--metric"].default == dfrank.metrics.RUN_METRIC
    assert _options("fit")["--metric"].default == dfrank.metrics.DEFAULT_METRIC


def test_unknown_options_are_errors_everywhere(tmp_path):
    from dfrank.testing import planted_data

    data = planted_data(n_queries=6, seed=0)
    with pytest.raises(TypeError, match="no_such_option"):
        dfrank.maximize(data, "ndcg@10", "ca", no_such_option=1)
    qrels = {"1": {"a": 1, "b": 0}}
    runs = {"x": {"1": {"a": 1.0, "b": 0.5}}, "y": {"1": {"a": 0.2, "b": 0.9}}}
    with pytest.raises(TypeError, match="no_such_option"):
        dfrank.fuse(qrels, runs, no_such_option=1)
    for argv in (["fit", "x.txt", "--no-such-option"],
                 ["fuse", "--qrels", "q", "a", "b", "--out", "f"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2


def test_option_is_one_type_with_an_optional_strategy_prefix():
    from dfrank.cli.options import UsageError, strategy_options

    assert strategy_options(["restarts=2", "ca:tol=0.1", "cma:es:sigma0=0.3"],
                            ["coordinate_ascent", "cma:es"]) == \
        {"coordinate_ascent": {"restarts": 2, "tol": 0.1},
         "cma:es": {"restarts": 2, "sigma0": 0.3}}
    assert strategy_options(["coordinate_ascent:rule=best"], ["ca"]) == {"ca": {"rule": "best"}}
    with pytest.raises(UsageError, match="not a strategy this command runs"):
        strategy_options(["pso:swarm_size=4"], ["ca"])
    with pytest.raises(UsageError, match=r"\[STRATEGY:\]KEY=VALUE"):
        strategy_options(["restarts"], ["ca"])


def test_every_package_is_in_pyprojects_explicit_list():
    """A non-editable install ships only the packages pyproject lists: each package folder
    of dfrank (and strategies/, installed as dfrank.strategies) must be there."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {"dfrank.strategies"}
    for folder, dirs, files in os.walk(os.path.join(root, "dfrank")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files and not os.path.islink(folder):
            found.add(os.path.relpath(folder, root).replace(os.sep, "."))
    assert found <= listed, sorted(found - listed)
