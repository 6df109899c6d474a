"""Plots are written as PNG files (non-interactive backend) with the expected content."""

import numpy as np
import pytest

import dfrank
from dfrank import testing

plot = pytest.importorskip("dfrank.plot")
pytest.importorskip("matplotlib")


def is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_convergence_plot(tmp_path):
    data = testing.planted_data()
    runs = {name: dfrank.maximize(data, "ndcg@10", name, budget=200, seed=0)
            for name in ("ca", "pso", "random")}
    fig = plot.convergence(runs, path=tmp_path / "conv.png")
    assert is_png(tmp_path / "conv.png")
    ax_evals, ax_secs = fig.axes[:2]
    assert ax_evals.get_xlabel() == "evaluations" and ax_secs.get_xlabel() == "seconds"
    assert [t.get_text() for t in ax_secs.get_legend().get_texts()] == ["ca", "pso", "random"]


def test_ternary_surface(tmp_path):
    pts = np.vstack(list(dfrank.Simplex(2).grid(20)))
    vals = -((pts - [0.2, 0.5, 0.3]) ** 2).sum(axis=1)
    fig = plot.ternary_surface(pts, vals, path=tmp_path / "tri.png", labels=("a", "b", "c"),
                               best=pts[np.argmax(vals)])
    assert is_png(tmp_path / "tri.png")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert {"a", "b", "c"} <= set(texts) and any(t.startswith("best") for t in texts)
    with pytest.raises(ValueError, match=r"\(P, 3\)"):
        plot.ternary_surface(pts[:, :2], vals)


def test_per_query_differences(tmp_path):
    a = np.array([0.1, 0.5, 0.3, np.nan, 0.9])
    b = np.array([0.2, 0.4, 0.3, 0.5, 0.95])
    fig = plot.per_query_differences(a, b, path=tmp_path / "diff.png", labels=("A", "B"),
                                     metric="map")
    assert is_png(tmp_path / "diff.png")
    title = fig.axes[0].get_title()
    assert "2 better, 1 worse, 1 tied" in title  # the NaN query is left out
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == sorted(heights)


def test_comparison_seconds_on_a_log_axis_when_times_differ_by_orders(tmp_path):
    from dfrank.comparison import Comparison, Run
    from dfrank.plot import comparison, seconds_scale

    def run(strategy, seed, secs):
        t = np.array([0.0, secs / 100, secs / 3, secs])
        return Run(strategy, seed, train=0.5 + 0.01 * seed, n_evals=40, seconds=secs,
                   trace={"evals": np.array([0, 10, 20, 40]), "seconds": t,
                          "values": np.array([0.3, 0.4, 0.45, 0.5 + 0.01 * seed])})

    fast = [run("ca", s, 0.5) for s in range(3)]
    slow = [run("optuna:tpe", s, 100.0) for s in range(3)]
    near = [run("pso", s, 2.0) for s in range(3)]
    assert seconds_scale(Comparison(fast + near, "map")) == "linear"
    cmp = Comparison(fast + slow, "map")
    assert seconds_scale(cmp) == "log"
    fig = comparison(cmp, tmp_path / "c.png")
    assert fig.axes[1].get_xscale() == "log"
    # the fast strategy's curve is drawn over more than a sliver of the axis
    lo, hi = fig.axes[1].get_xlim()
    xs = fig.axes[1].lines[0].get_xdata()
    xs = xs[np.isfinite(fig.axes[1].lines[0].get_ydata())]
    assert np.log(xs.max() / xs.min()) > 0.3 * np.log(hi / lo)
