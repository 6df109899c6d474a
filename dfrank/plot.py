"""Plots (matplotlib, the ``plot`` extra): convergence, Metzler's ternary metric surface,
per-query differences between two rankers, anytime curves of a comparison.

Every function writes a PNG (or any format matplotlib knows from the file name) when given
``path`` and returns the matplotlib Figure. A non-interactive backend is used, so plots
work on machines without a screen.
"""

import numpy as np

from ._optional import need

__all__ = ["convergence", "ternary_surface", "per_query_differences", "comparison",
           "profiles"]


def _plt():
    matplotlib = need("matplotlib", "plots")
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
        right = bx > 0.6          # keep the label inside the triangle's box
        ax.annotate(f"best {vals.max():.4f}", (bx, by), xytext=(-8 if right else 8, 8),
                    textcoords="offset points", color="red",
                    ha="right" if right else "left")
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


def _step_values(trace, key, grid):
    """The best value of an anytime trace (a step function of ``trace[key]``) at each
    point of ``grid``; NaN before the first finite value."""
    x = np.asarray(trace[key], dtype=float)
    v = np.asarray(trace["values"], dtype=float)
    ok = np.isfinite(v)
    x, v = x[ok], v[ok]
    i = np.searchsorted(x, grid, side="right") - 1
    out = np.full(len(grid), np.nan)
    out[i >= 0] = v[i[i >= 0]]
    return out


def seconds_scale(cmp, ratio=30.0):
    """"log" when the strategies' median run times differ by ``ratio`` or more (one slow
    strategy would squash the others against x = 0 on a linear axis), else "linear"."""
    medians = [np.median([r.seconds for r in cmp.runs_of(s)]) for s in cmp.strategies]
    medians = [m for m in medians if m > 0]
    return "log" if medians and max(medians) >= ratio * min(medians) else "linear"


def comparison(cmp, path=None, title=None, points=200):
    """Anytime curves of a :class:`dfrank.comparison.Comparison`: the best training value
    against evaluations (log scale) and against seconds (log scale too when the strategies'
    run times differ by orders of magnitude: :func:`seconds_scale`), per strategy the
    median over seeds with the band between the first and third quartiles."""
    plt = _plt()
    runs = [r for r in cmp.runs if r.trace is not None]
    if not runs:
        raise ValueError("the comparison has no runs with a trace to plot")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", "-.", ":"]
    max_evals = max(max(int(r.trace["evals"][-1]), r.n_evals, 1) for r in runs)
    max_secs = max(max(float(r.trace["seconds"][-1]), r.seconds, 1e-3) for r in runs)
    log_secs = seconds_scale(cmp) == "log"
    first = min((float(t) for r in runs for t in r.trace["seconds"] if t > 0), default=1e-3)
    grids = {"evals": np.unique(np.geomspace(1, max_evals, points).round()),
             "seconds": (np.geomspace(min(first, max_secs / 10), max_secs, points)
                         if log_secs else np.linspace(0.0, max_secs, points))}
    for i, s in enumerate(cmp.strategies):
        rs = [r for r in cmp.runs_of(s) if r.trace is not None]
        if not rs:        # no run of this strategy evaluated anything in its allowance
            continue
        color, ls = colors[i % len(colors)], styles[(i // len(colors)) % len(styles)]
        for ax, key in zip(axes, ("evals", "seconds")):
            g = grids[key]
            ends = [r.n_evals if key == "evals" else r.seconds for r in rs]
            vals = np.array([_step_values(r.trace, key, g) for r in rs])
            # quartiles of all the seeds at once: only where every run has a value (a
            # median over the runs that happen to have started would dip as others join)
            q1, med, q3 = np.percentile(np.nan_to_num(vals, nan=0.0), [25, 50, 75], axis=0)
            gone = np.isnan(vals).any(axis=0) | (g > max(ends))   # none past the longest run
            q1[gone] = med[gone] = q3[gone] = np.nan
            ax.plot(g, med, color=color, ls=ls, lw=1.6, label=f"{s} ({len(rs)})")
            ax.fill_between(g, q1, q3, color=color, alpha=0.18, lw=0)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("evaluations")
    if log_secs:
        axes[1].set_xscale("log")
    axes[1].set_xlabel("seconds")
    for ax in axes:
        ax.set_ylabel(f"best train {cmp.metric}")
        ax.grid(alpha=0.3)
    # the interesting part is near the top: clip the long climb from the start
    best = cmp.best_value
    finals = [r.train for r in runs if np.isfinite(r.train)]
    low = min(finals)
    span = max(best - low, 1e-3)
    for ax in axes:
        ax.set_ylim(low - 1.5 * span, best + 0.15 * span)
    axes[1].legend(loc="lower right", fontsize=7, ncol=2)
    budget = []
    if cmp.budget is not None:
        budget.append(f"{cmp.budget} evaluations")
    if cmp.max_seconds is not None:
        budget.append(f"{cmp.max_seconds:g} s")
    fig.suptitle(title or f"{cmp.metric}: median over seeds, quartile bands"
                 + (f" (budget {' / '.join(budget)})" if budget else ""))
    return _save(fig, path)


def profiles(prof, path=None, title=None, eps=(0.1, 0.01)):
    """Runtime-to-target views of a bench (:class:`dfrank.problems.profiles.Profiles`):
    the aggregated ECDF of each solver against evaluations (log scale), and its data
    profiles (Moré and Wild) for each ``eps`` against kappa = evaluations / (dim + 1).
    A solver's curve stops at its largest budget (a cross marks it)."""
    plt = _plt()
    solvers = [s for s in prof.solvers if prof.indices_of(s)]
    if not solvers:
        raise ValueError("the bench has no successful run to plot")
    fig, axes = plt.subplots(1, 1 + len(eps), figsize=(5.2 * (1 + len(eps)), 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", "-.", ":"]
    grid = prof.budget_grid(120)
    top_dim = max(r["dim"] for r in prof.runs)
    kappas = np.unique(np.geomspace(0.1, max(grid[-1], 1), 120))
    for i, s in enumerate(solvers):
        color, ls = colors[i % len(colors)], styles[(i // len(colors)) % len(styles)]
        end = max(prof.runs[j]["n_evals"] for j in prof.indices_of(s))
        g = grid[grid <= end]
        y = prof.ecdf(s, g)
        axes[0].plot(g, y, color=color, ls=ls, lw=1.6, label=s)
        axes[0].plot(g[-1:], y[-1:], "x", color=color)
        for ax, e in zip(axes[1:], eps):
            ax.plot(kappas, prof.data_profile(s, kappas, e), color=color, ls=ls, lw=1.6,
                    drawstyle="steps-post")
    axes[0].set_xlabel("evaluations")
    axes[0].set_ylabel("fraction of (run, target) pairs reached")
    axes[0].legend(loc="upper left", fontsize=7)
    for ax, e in zip(axes[1:], eps):
        ax.set_xlabel("evaluations / (dim + 1)")
        ax.set_ylabel(f"fraction of runs reaching eps = {e:g}")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    n_inst = len({(r["problem"], r["fold"], r["seed"]) for r in prof.runs})
    fig.suptitle(title or f"runtime to target: {n_inst} instances, dims up to {top_dim}")
    return _save(fig, path)


def ecdf_by_dimension(coco, path=None, title=None, points=80):
    """COCO's view of a bench (:class:`dfrank.problems.coco.Coco`): for each dimension
    group, each solver's ECDF of the absolute targets against evaluations per dimension
    (log scale, up to the most a run of the group could make), the virtual best run
    as a thick grey line."""
    plt = _plt()
    vbs = coco.vbs
    groups = coco.groups()
    if not groups:
        raise ValueError("the bench has no run to plot")
    fig, axes = plt.subplots(1, len(groups), figsize=(4.6 * len(groups), 4.0),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", "-.", ":"]
    for ax, group in zip(axes[0], groups):
        top = max(coco.reachable_per_dim(group), 1.0)
        b = np.unique(np.geomspace(1.0 / max(group[1], 1), top, points))
        for i, s in enumerate(coco.solvers):
            if not coco.has_runs(s, group):
                continue
            ax.plot(b, coco.ecdf(s, group, b), color=colors[i % len(colors)],
                    ls=styles[(i // len(colors)) % len(styles)], lw=1.5, label=s)
        ax.plot(b, coco.ecdf(vbs, group, b), color="0.55", lw=3.0, alpha=0.6, label=vbs,
                zorder=0)
        lo, hi = group
        ax.set_title(f"dimension {lo}" if lo == hi else f"dimensions {lo}-{hi}")
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("evaluations / dimension")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("fraction of (run, target) pairs reached")
    axes[0][-1].legend(loc="upper left", fontsize=7)   # (the highest dimensions: room on top)
    fig.suptitle(title or "ECDF of the targets reference - 10^-k, k = 0.6..4, per "
                 "dimension group")
    return _save(fig, path)
