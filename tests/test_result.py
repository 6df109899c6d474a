"""dfrank/result.py: a model reads an array's columns one documented way, or is told which."""

import numpy as np
import pytest

from dfrank import RankingData
from dfrank.result import LinearRanker


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
