"""Each strategy's option constraints are declared once (Strategy.hyperparameters) and feed
the three places that need them: the checks maximize and DirectRanker run, the command
line's --option types, and 'dfrank strategies NAME'."""

import pytest

from dfrank import cli, registry
from dfrank.hyperparams import Any, Choice, Flag, Int, Real


def _classes():
    seen = {}
    for name in registry.available():
        obj = registry.get(name)
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
    assert Any().parse("(0.5, 1.0)") == (0.5, 1.0) and Any().parse("NGOpt") == "NGOpt"


def test_the_declaration_feeds_maximize_directranker_and_the_command_line(capsys):
    import numpy as np

    import dfrank

    data = dfrank.datasets.make_letor_like(n_queries=6, seed=0)
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
