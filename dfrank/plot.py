"""Plots (matplotlib, the ``plot`` extra): convergence, Metzler's ternary metric surface,
per-query differences between two rankers.

Every function writes a PNG (or any format matplotlib knows from the file name) when given
``path`` and returns the matplotlib Figure. A non-interactive backend is used, so plots
work on machines without a screen.
"""

import numpy as np

__all__ = ["convergence", "ternary_surface", "per_query_differences"]


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'dfrank[plot]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path):
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def convergence(results, path=None, labels=None, title=None):
    """Best metric value vs evaluations and vs seconds, one line per result (and its
    restarts in a lighter shade).

    Parameters
    ----------
    results : Result or list of Result (or dict label -> Result)
    """
    plt = _plt()
    if isinstance(results, dict):
        labels, results = list(results), list(results.values())
    elif not isinstance(results, (list, tuple)):
        results = [results]
    labels = labels or [r.strategy for r in results]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (r, lab) in enumerate(zip(results, labels)):
        c = colors[i % len(colors)]
        tr = r.trace
        ok = np.isfinite(tr["values"])
        for ax, x in zip(axes, (tr["evals"], tr["seconds"])):
            ax.step(x[ok], tr["values"][ok], where="post", color=c, label=lab, lw=1.8)
        if len(r.restarts) > 1:
            for rr in r.restarts:
                t = rr.trace
                if t is None:
                    continue
                k = np.isfinite(t["values"])
                axes[0].step(t["evals"][k], t["values"][k], where="post", color=c,
                             alpha=0.25, lw=0.8)
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("seconds")
    metric = results[0].metric or "objective"
    for ax in axes:
        ax.set_ylabel(f"best {metric}")
        ax.grid(alpha=0.3)
    axes[0].set_xscale("symlog")
    axes[1].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"convergence ({metric})")
    return _save(fig, path)


def ternary_surface(points, values, path=None, labels=("f1", "f2", "f3"), best=None,
                    title=None, cmap="viridis"):
    """Metzler's Figure 1: a metric over the 2-simplex of three feature weights.

    Parameters
    ----------
    points : (P, 3) array of barycentric coordinates (rows sum to 1)
    values : (P,) metric at each point
    best : optional (3,) point to mark
    """
    plt = _plt()
    import matplotlib.tri as mtri

    pts = np.asarray(points, dtype=float)
    vals = np.asarray(values, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 3 or len(vals) != len(pts):
        raise ValueError("ternary_surface needs points of shape (P, 3) and P values")
    # barycentric -> Cartesian: corners (0,0), (1,0), (1/2, sqrt(3)/2)
    xs = pts[:, 1] + 0.5 * pts[:, 2]
    ys = (np.sqrt(3) / 2) * pts[:, 2]
    fig, ax = plt.subplots(figsize=(6.2, 5.4))
    tri = mtri.Triangulation(xs, ys)
    tc = ax.tripcolor(tri, vals, shading="gouraud", cmap=cmap)
    fig.colorbar(tc, ax=ax, label=title or "metric")
    ax.plot([0, 1, 0.5, 0], [0, 0, np.sqrt(3) / 2, 0], color="k", lw=1)
    # corner labels under the bottom corners (growing inwards) and above the top one
    for (x, y), lab, ha, dy in zip([(0, 0), (1, 0), (0.5, np.sqrt(3) / 2)], labels,
                                   ["left", "right", "center"], [-16, -16, 6]):
        ax.annotate(lab, (x, y), xytext=(0, dy), textcoords="offset points", ha=ha)
    if best is not None:
        b = np.asarray(best, dtype=float)
        bx, by = b[1] + 0.5 * b[2], (np.sqrt(3) / 2) * b[2]
        ax.plot([bx], [by], marker="*", ms=16, color="red", mec="white", mew=1.2)
        ax.annotate(f"best {vals.max():.4f}", (bx, by), xytext=(8, 8),
                    textcoords="offset points", color="red")
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or "metric over the simplex of three feature weights")
    return _save(fig, path)


def per_query_differences(values_a, values_b, path=None, labels=("A", "B"), metric="metric",
                          qids=None):
    """Per-query differences ``b - a``, sorted, as bars (green where B wins)."""
    plt = _plt()
    a = np.asarray(values_a, dtype=float)
    b = np.asarray(values_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"per-query values differ in shape: {a.shape} vs {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = (b - a)[keep]
    order = np.argsort(diff, kind="stable")
    diff = diff[order]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    colors = np.where(diff > 0, "tab:green", np.where(diff < 0, "tab:red", "tab:gray"))
    ax.bar(np.arange(len(diff)), diff, color=colors, width=1.0)
    ax.axhline(0, color="k", lw=0.8)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    ax.set_title(f"{metric}: {labels[1]} - {labels[0]} per query "
                 f"({wins} better, {losses} worse, {len(diff) - wins - losses} tied; "
                 f"mean {diff.mean():+.4f})")
    ax.set_xlabel("queries, sorted by difference")
    ax.set_ylabel(f"difference in {metric}")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)
