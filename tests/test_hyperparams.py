"""Each strategy's option constraints are declared once (Strategy.hyperparameters) and feed
the three places that need them: the checks maximize and DirectRanker run, the command
line's --option types, and 'dfrank strategies NAME'."""

import pytest

from dfrank import cli, registry
from dfrank.hyperparams import AsIs, Choice, Flag, Int, Real


def _classes():
    seen = {}
    for name in registry.strategy_names():
        obj = registry.get_strategy(name)
        cls = obj if isinstance(obj, type) else type(obj)
        if isinstance(cls, type) and issubclass(cls, registry.Strategy):
            seen.setdefault(cls, name)
    return seen


def test_every_option_of_every_strategy_is_declared():
    for cls, name in _classes().items():
        if cls.chooses:   # auto passes its options on to the strategy it picks
            continue
        params = registry.resolve(name).get_params()
        missing = set(params) - set(cls.declared())
        assert not missing, f"{name}: options without a declared kind: {sorted(missing)}"
        for key, value in params.items():   # every default is a value of its own kind
            cls.declared()[key].check(name, key, value)


@pytest.mark.parametrize("kind, good, bad, text, parsed", [
    (Int(1), 3, 0, "7", 7), (Int(1, 60), 60, 61, "1", 1),
    (Int(1, none=True, words=("auto",)), "auto", "best", "auto", "auto"),
    (Real(0.0, low_open=True), 0.5, 0.0, "1e-3", 1e-3), (Real(0.0, 1.0), 1.0, 1.5, "0", 0.0),
    (Choice("best", "plateau"), "best", "worst", "plateau", "plateau"),
    (Flag(), False, 1, "true", True)])
def test_a_kind_checks_parses_and_describes(kind, good, bad, text, parsed):
    kind.check("s", "opt", good)
    with pytest.raises(ValueError, match="s: opt must be"):
        kind.check("s", "opt", bad)
    assert kind.parse(text) == parsed and kind.describe()
    assert AsIs().parse("(0.5, 1.0)") == (0.5, 1.0) and AsIs().parse("NGOpt") == "NGOpt"


def test_the_declaration_feeds_maximize_directranker_and_the_command_line(capsys):
    import numpy as np

    import dfrank

    data = dfrank.data.datasets.make_letor_like(n_queries=6, seed=0)
    with pytest.raises(ValueError, match="pso: swarm_size must be an integer >= 2, got 1"):
        dfrank.maximize(data, "ndcg@10", "pso", swarm_size=1)
    est = dfrank.DirectRanker(strategy="pso", strategy_options={"inertia": -1.0})
    with pytest.raises(ValueError, match="pso: inertia must be a number >= 0.0"):
        est.fit(data.X, data.y, qid=np.repeat(np.arange(6), np.diff(data.qptr)))
    # the command line reads VALUE as the option's kind, and says what it takes
    assert cli.main(["fit", "x.txt", "--strategy", "pso", "--option", "swarm_size=many"]) == 2
    assert "swarm_size takes an integer >= 2" in capsys.readouterr().err
    assert cli.main(["strategies", "ca"]) == 0
    out = capsys.readouterr().out
    assert "one of best, plateau" in out and "an integer >= 1 and <= 60" in out


def test_a_value_outside_its_options_kind_is_a_usage_error_naming_both(tmp_path, capsys):
    """``--option KEY=<100,000 characters>`` exited 3 with MemoryError, and
    ``scipy:differential_evolution --option "mutation=(0.5,'x')"`` printed numpy's
    ``isfinite`` message."""
    from dfrank import testing
    from dfrank.io import save_svmlight

    path = str(tmp_path / "train.txt")
    save_svmlight(testing.planted_data(n_queries=6, seed=0), path)
    fit = ["fit", path, "--quiet"]
    assert cli.main([*fit, "--option", "restarts=" + "(" * 100_000]) == 2
    assert "at most 10,000" in capsys.readouterr().err
    for bad in ("(0.5,'x')", "(1.5, 0.5)", "3", "'x'"):
        assert cli.main([*fit, "--strategy", "scipy:differential_evolution", "--option",
                         f"mutation={bad}"]) == 2
        err = capsys.readouterr().err
        assert "mutation takes a number >= 0.0 and <= 2.0, or a (low, high) pair" in err, bad
    assert cli.main([*fit, "--strategy", "ca", "--option", "restarts=-1"]) == 2
    assert "restarts takes an integer >= 1" in capsys.readouterr().err


def test_a_span_and_a_name_check_what_a_library_would_take():
    from dfrank.hyperparams import Name, Span

    span = Span(0.0, 2.0)
    assert span.parse("(0.5, 1)") == (0.5, 1) and span.parse("0.7") == 0.7
    for bad in ((1.0, 0.5), (0.5, "x"), 2.5, (0.1, 0.2, 0.3), "x"):
        with pytest.raises(ValueError, match="mutation must be a number"):
            span.check("de", "mutation", bad)
    with pytest.raises(ValueError, match="optimizer must be a name"):
        Name().check("ng", "optimizer", 3)
