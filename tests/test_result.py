"""dfrank/result.py: a model reads an array's columns one documented way, or is told which."""

import json

import numpy as np
import pytest

import dfrank
from dfrank import RankingData, cli
from dfrank.io.svmlight import save_svmlight
from dfrank.driver.result import LinearRanker
from tests.inputs import letor_data


def test_an_array_whose_columns_two_readings_fit_is_refused_until_told_which():
    """``LinearRanker([1, 0], feature_ids=[2, 1]).predict(np.eye(2))`` gave ``[1, 0]``
    (the model's order) where the same rows as a RankingData gave ``[0, 1]`` (by feature
    id): two readings in two entry points."""
    model = LinearRanker([1.0, 0.0], feature_ids=[2, 1])
    X = np.eye(2)
    data = RankingData.from_arrays(X, np.zeros(2), np.zeros(2, int))
    with pytest.raises(ValueError, match="columns='model'.*columns='ids'"):
        model.predict(X)
    np.testing.assert_array_equal(model.predict(X, columns="ids"), model.predict(data))
    np.testing.assert_array_equal(model.predict(X, columns="model"), [1.0, 0.0])
    assert LinearRanker([1.0, 0.0]).predict(X).tolist() == [1.0, 0.0]   # ids in order
    with pytest.raises(ValueError, match="columns must be"):
        model.predict(X, columns="names")


def test_a_model_reads_its_features_by_id(tmp_path, capsys):
    """A model fitted on selected features (ids 3, 1, 2) read the whole data set's columns by
    position, and ``dfrank evaluate`` disagreed with Python: a model reads its features by id,
    in its order, everywhere; a bare array whose reading is ambiguous is said which."""
    path = str(tmp_path / "test.txt")
    save_svmlight(letor_data(), path)
    data = dfrank.load_svmlight(path)
    picked = data.select_features([3, 1, 2])
    model = dfrank.maximize(picked, "ndcg@10", "ca", seed=0, restarts=1).ranker
    assert model.feature_ids.tolist() == [3, 1, 2]
    want = model.evaluate(picked, "ndcg@10")
    # the whole data set: its columns are found by feature id, in the model's order
    assert model.evaluate(data, "ndcg@10") == want
    np.testing.assert_array_equal(model.predict(data), model.predict(picked))
    # a bare array: the model's columns in its order, or every feature id from 1; where
    # both fit and differ (ids 3, 1, 2 of a 3-feature array) the caller says which
    np.testing.assert_array_equal(model.predict(picked.X, columns="model"),
                                  model.predict(data))
    np.testing.assert_array_equal(model.predict(data.X[:, :3], columns="ids"),
                                  model.predict(data))
    two = LinearRanker([1.0, -2.0], feature_ids=[4, 2])
    np.testing.assert_array_equal(two.predict(data.X), two.predict(data.X[:, [3, 1]]))
    with pytest.raises(ValueError, match="X has 4 columns"):
        LinearRanker([1.0, 2.0], feature_ids=[1, 3]).predict(data.X)
    with pytest.raises(ValueError, match="feature ids 5"):
        LinearRanker([1.0, 2.0], feature_ids=[1, 5]).evaluate(data)
    # dfrank evaluate reads the file by feature id, as Python does
    model.save(tmp_path / "m.json")
    assert cli.main(["evaluate", str(tmp_path / "m.json"), path, "--metric", "ndcg@10",
                     "--json", "-", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["ndcg@10"] == pytest.approx(want, abs=0)
    # a hand-edited order is another model
    edited = json.loads((tmp_path / "m.json").read_text())
    edited["feature_ids"] = [3, 2, 1]
    (tmp_path / "e.json").write_text(json.dumps(edited))
    other = LinearRanker.load(tmp_path / "e.json")
    assert not np.array_equal(other.predict(data), model.predict(data))
