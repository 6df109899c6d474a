"""The exact line search against brute force on small generated datasets."""

import functools
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dfrank
from dfrank._kernels.scoring import linear_scores

METRICS = ["ndcg@3", "ndcg", "dcg@2", "map", "map@3", "p@2", "recall@2", "mrr", "rr@2",
           "err@3", "rprec", "kendall_tau"]


def crossing_midpoints(data, s0, u):
    """Every t where two documents of one query cross (rounding-level duplicates merged),
    and one point inside each interval between them."""
    ts = []
    for q in range(data.n_queries):
        r = data.query_rows(q)
        a, b = np.triu_indices(r.stop - r.start, 1)
        a, b = a + r.start, b + r.start
        ok = u[a] != u[b]
        ts.append((s0[b[ok]] - s0[a[ok]]) / (u[a[ok]] - u[b[ok]]))
    ts = np.unique(np.concatenate(ts)) if ts else np.empty(0)
    merged = []
    for t in ts:
        if not merged or t - merged[-1] > 1e-9 * max(1.0, abs(t)):
            merged.append(t)
    ts = np.array(merged)
    if len(ts) == 0:
        return np.array([0.0])
    return np.concatenate([[ts[0] - 1.0], (ts[1:] + ts[:-1]) / 2, [ts[-1] + 1.0]])


@st.composite
def line_case(draw):
    nq = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 8)) for _ in range(nq)]
    n = sum(sizes)
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # small integer features: identical rows (identical lines) and coincident crossings
    X = rng.integers(0, 3, (n, d)).astype(float)
    y = rng.integers(0, draw(st.integers(2, 5)), n).astype(float)
    data = dfrank.RankingData.from_arrays(X, y, np.repeat(np.arange(nq), sizes))
    lam = dfrank.Simplex(d).sample(rng)
    kind = draw(st.sampled_from(["random", "coordinate"]))
    delta = rng.normal(size=d + 1) if kind == "random" else np.eye(d + 1)[rng.integers(d + 1)]
    return data, lam, delta


def _cases():
    """(metric, ties) pairs: every policy for every metric that defines it; the expected
    policy only where the exact line search keeps it exact (see test_expected_refused)."""
    from dfrank.linesearch import unsupported
    out = []
    for metric in METRICS:
        for ties in ("pessimistic", "optimistic", "stable", "expected"):
            m = dfrank.metrics.get(metric)
            if m.supports_ties(ties) and unsupported(m, ties) is None:
                out.append((metric, ties))
    return out


def test_expected_refused_where_not_exact():
    data = dfrank.RankingData.from_arrays(np.eye(3), [0, 1, 2], [1, 1, 1])
    for metric in ["map", "map@3", "mrr", "rr@2", "kendall_tau"]:
        obj = dfrank.LinearObjective(data, metric, ties="expected")
        assert not obj.exact_line and "expected" in obj.exact_line_reason
        with pytest.raises(ValueError, match="line_search='steps'"):
            obj.line(obj.space.center(), np.eye(4)[0])


@pytest.mark.parametrize("metric,ties", _cases())
@settings(max_examples=40, deadline=None)
@given(case=line_case())
def test_line_search_matches_brute_force(case, metric, ties):
    data, lam, delta = case
    obj = dfrank.LinearObjective(data, metric, ties=ties)
    res = obj.line(lam, delta)
    sp = obj.space
    s0, u = linear_scores(obj.XT, np.vstack([sp.to_weights(lam), sp.direction_to_weights(delta)]))
    mids = crossing_midpoints(data, s0, u)
    brute = np.array([obj.value_of_scores(s0 + t * u) for t in mids])
    assert res.value == pytest.approx(brute.max(), abs=1e-9)
    # the profile is right on every interval
    prof = res.profile
    for t, v in zip(mids, brute):
        assert prof.value_at(t) == pytest.approx(v, abs=1e-9)
    # the objective at the returned t (and at the projected point) equals the value
    assert obj.value_of_scores(s0 + res.t * u) == pytest.approx(res.value, abs=1e-9)
    if res.t != 0:
        new = sp.project(lam + res.t * delta)
        fresh = dfrank.LinearObjective(data, metric, ties=ties)
        assert fresh(new) == pytest.approx(res.value, abs=1e-9)
    assert res.lower < res.t < res.upper or (res.t == 0 and len(prof.values) == 1)


def test_chooses_nearest_zero_among_equals_and_steps_past_unbounded_end():
    # one query, two documents: the relevant one wins for t > 1 (unbounded best interval)
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    data = dfrank.RankingData.from_arrays(X, [0, 1], [1, 1])
    obj = dfrank.LinearObjective(data, "p@1")
    s0 = np.array([1.0, 0.0])
    u = np.array([0.0, 1.0])
    res = obj.line_scores(s0, u)
    assert res.value == 1.0 and res.lower == pytest.approx(1.0) and res.upper == np.inf
    assert res.t > 1.0
    # a line that never changes the ranking: t = 0
    flat = obj.line_scores(s0, np.zeros(2))
    assert flat.t == 0.0 and flat.value == 0.0 and flat.n_crossings == 0


def test_plateau_rule_prefers_wide_intervals():
    from dfrank.linesearch import LineProfile, choose
    prof = LineProfile(np.array([-np.inf, 0.0, 0.01, 1.0, 3.0]),
                       np.array([0.0, 0.01, 1.0, 3.0, np.inf]),
                       np.array([0.2, 0.9, 0.5, 0.85, 0.1]))
    assert choose(prof, rule="best").t == pytest.approx(0.005)
    wide = choose(prof, rule="plateau", window=0.5)
    assert wide.t == pytest.approx(2.0) and wide.value == 0.85
    with pytest.raises(ValueError, match="rule"):
        choose(prof, rule="steepest")


def plateau_reference(lo, hi, v, step, w, floor, min_width, tol):
    """The plateau rule by its definition, interval by interval (numpy, quadratic)."""
    n = len(v)
    def beyond(end):
        return step if step > 0 else np.maximum(np.abs(end), 1.0)
    with np.errstate(invalid="ignore"):
        mid = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi),
                       np.where(np.isfinite(lo), lo + beyond(lo), hi - beyond(hi)))
    score = np.array([v[(lo < mid[i] + w) & (hi > mid[i] - w)].min() for i in range(n)])
    low = v < floor - tol
    if not low.all():
        score[low] = -np.inf
    width_ok = ~(np.isfinite(lo) & np.isfinite(hi)) | \
        (hi - lo > min_width * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi))))
    ok = np.flatnonzero(width_ok)
    best = score[ok].max()
    ok = ok[score[ok] >= best - tol]
    ok = ok[v[ok] >= v[ok].max() - tol]
    dist = np.where(lo[ok] > 0, lo[ok], np.where(hi[ok] < 0, -hi[ok], 0.0))
    return ok[np.argmin(dist)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=40),
       st.lists(st.sampled_from([1e-12, 0.01, 0.1, 0.5, 1.0, 3.0]), min_size=1, max_size=39),
       st.sampled_from([0.05, 0.3, 1.0, 10.0]), st.sampled_from([-np.inf, 2.0, 5.0]),
       st.floats(-3, 3))
def test_plateau_choice_matches_its_definition(levels, widths, w, floor, shift):
    """The pruned plateau choice (only intervals that can still win are looked at) picks
    what the rule's definition picks, ties, narrow intervals and the floor included."""
    from dfrank.linesearch import choice as K
    n = len(levels)
    breaks = shift + np.concatenate([[0.0], np.cumsum((widths * n)[:n])])[:n - 1]
    lo = np.concatenate([[-np.inf], breaks])
    hi = np.concatenate([breaks, [np.inf]])
    v = np.array(levels, dtype=float) / 6
    gaps = np.sort(np.diff(breaks))
    step = float(gaps[(len(gaps) - 1) // 2]) if n > 2 else -1.0  # choose's lower median
    got = K.plateau_pick(lo, hi, v, step, w, floor, 1e-9, 1e-12)
    want = plateau_reference(lo, hi, v, step, w, floor, 1e-9, 1e-12)
    if got >= 0:  # -1: the caller takes the sliding-window path, checked here too
        assert got == want
    # in pieces (parallel): the same, or -1: each piece prunes by its own best, so the
    # pieces together may look at more neighbours than one pass and exceed the budget
    # where one pass does not (37 equal levels in 64 pieces); the caller then takes the
    # sliding-window path, checked below to pick the same interval
    for parts in (2, 3, 7, 64):
        assert K.plateau_pick_parts(lo, hi, v, step, w, floor, 1e-9, 1e-12, parts) in \
            (want, -1)
    score = K.window_min(v, lo, hi, K.middles(lo, hi, step), w)
    if np.isfinite(floor) and not (v < floor - 1e-12).all():
        score = np.where(v < floor - 1e-12, -np.inf, score)
    assert K.pick(lo, hi, v, score, 1e-9, 1e-12, True) == want
    from dfrank.linesearch import LineProfile, choose
    res = choose(LineProfile(lo, hi, v), rule="plateau", window=w, floor=floor)
    assert (res.lower, res.upper, res.value) == (lo[want], hi[want], v[want])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40),
       st.lists(st.sampled_from([1e-12, 0.01, 0.5, 2.0]), min_size=1, max_size=39),
       st.floats(-3, 3), st.booleans())
def test_pick_matches_its_definition(levels, widths, shift, by_value):
    """`pick` (which looks closely only near the top score) chooses what the rule says:
    the highest score among eligible intervals, all within tol of it tied (scores here
    differ by 0.7 tol steps, so ties chain), then the highest value, then nearest 0."""
    from dfrank.linesearch import choice as K
    n = len(levels)
    tol = 1e-12
    breaks = shift + np.concatenate([[0.0], np.cumsum((widths * n)[:n])])[:n - 1]
    lo = np.concatenate([[-np.inf], breaks])
    hi = np.concatenate([breaks, [np.inf]])
    score = np.array([a + 0.7 * tol * b for a, b in levels], dtype=float)
    v = score[::-1].copy()
    width_ok = ~(np.isfinite(lo) & np.isfinite(hi)) | \
        (hi - lo > 1e-9 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi))))
    ok = np.flatnonzero(width_ok)
    ok = ok[score[ok] >= score[ok].max() - tol]
    if by_value:
        ok = ok[v[ok] >= v[ok].max() - tol]
    dist = np.where(lo[ok] > 0, lo[ok], np.where(hi[ok] < 0, -hi[ok], 0.0))
    assert K.pick(lo, hi, v, score, 1e-9, tol, by_value) == ok[np.argmin(dist)]


@pytest.mark.parametrize("metric", ["map", "ndcg@10", "err@5"])
def test_profile_does_not_depend_on_thread_count(metric):
    """The sweeps and the sort of all breakpoints split their work by thread, and the
    threads take its pieces as they come free (in another order at every call); the
    profile must come out bit for bit the same (restarts get different thread counts)."""
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: nothing to compare")
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 40, 30)
    n = int(sizes.sum())
    X = rng.integers(0, 4, (n, 3)).astype(float)  # duplicates, ties and meetings
    y = rng.integers(0, 3, n).astype(float)
    data = dfrank.RankingData.from_arrays(X, y, np.repeat(np.arange(len(sizes)), sizes))
    lam = dfrank.Simplex(3).sample(rng)
    delta = rng.normal(size=4)
    before = numba.get_num_threads()
    got = []
    try:
        for threads in (1, numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(threads)
            res = dfrank.LinearObjective(data, metric).line(lam, delta)
            got.append((res.t, res.value, res.profile.values.tobytes(),
                        res.profile.lower.tobytes(), res.profile.hazards.tobytes()))
    finally:
        numba.set_num_threads(before)
    assert all(g == got[0] for g in got)


def test_pruning_keeps_top_k_exact_on_long_queries():
    rng = np.random.default_rng(3)
    sizes = [60, 90, 5]
    n = sum(sizes)
    X = np.round(rng.random((n, 4)), 2)
    y = rng.integers(0, 3, n).astype(float)
    data = dfrank.RankingData.from_arrays(X, y, np.repeat(range(3), sizes))
    for metric in ["ndcg@5", "p@3", "err@4", "map@5", "rr@3"]:
        obj = dfrank.LinearObjective(data, metric)
        for j in range(5):
            lam = obj.space.sample(rng)
            res = obj.line(lam, np.eye(5)[j])
            sp = obj.space
            s0, u = linear_scores(obj.XT, np.vstack([sp.to_weights(lam),
                                                      sp.direction_to_weights(np.eye(5)[j])]))
            mids = crossing_midpoints(data, s0, u)
            brute = max(obj.value_of_scores(s0 + t * u) for t in mids)
            assert res.value == pytest.approx(brute, abs=1e-9), metric


def test_user_metric_has_no_exact_line_search():
    from numba import njit

    @njit
    def top(labels, k):
        return labels[0]

    data = dfrank.RankingData.from_arrays(np.eye(2), [0, 1], [1, 1])
    obj = dfrank.LinearObjective(data, top)
    with pytest.raises(ValueError, match="steps"):
        obj.line(obj.space.center(), [1.0, 0.0, 0.0])


def _bins_of(out_t, out_d, sizes):
    """(offsets, n_out, S, P, C, pref) of per-query breakpoints given directly."""
    from dfrank.linesearch import assemble as A
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n_out = np.array(sizes, dtype=np.int64)
    runs = np.empty(len(out_t), np.int64)
    run_sp = np.empty((len(out_t), 2))
    n_runs = np.array([A.bin_runs(out_t[a:b], out_d[a:b], b - a, runs[a:b], run_sp[a:b],
                                  A.BIN_SHIFT)
                       for a, b in zip(offsets[:-1], offsets[1:])], dtype=np.int64)
    S, P, pref = np.empty(A.N_BINS), np.empty(A.N_BINS), np.empty(A.N_BINS + 1)
    C = np.empty(A.N_BINS, np.int64)
    A.bin_sums(runs, run_sp, offsets, n_runs, S, P, C, pref)
    return offsets, n_out, S, P, C, pref


def _fast(found, wlo, whi):
    """line_search's result tuple (value, t, lower, upper) from best_interval's."""
    from dfrank.linesearch import safe_point
    status, value, lo, hi, hz = found
    if status != 1:
        return None
    if lo == wlo and hi == whi:  # the segment is one interval
        return (value, 0.0, -np.inf, np.inf)
    return (value, safe_point(hz, lo, hi, 0.5 * (lo + hi)), lo, hi)


def _full_and_fast(out_t, out_d, out_h, sizes, base, n_eff, window=(-np.inf, np.inf)):
    """The "best" choice from the whole assembled profile and from the bins alone, for
    per-query breakpoints given directly (each query's rows sorted by t), on the segment
    ``window`` of the line."""
    from dfrank.linesearch import assemble as A
    from dfrank.linesearch import EPS, MIN_WIDTH, TOL, LineProfile, choose
    offsets, n_out, S, P, C, pref = _bins_of(out_t, out_d, sizes)
    n = len(out_t)
    edges, values, hazards = A.assemble(
        (out_t, out_d, out_h, offsets, n_out), EPS, base, float(n_eff), C, pref, 2, 3,
        (np.empty(n), np.empty(n), np.empty(n)), A.BIN_SHIFT)
    full = choose(LineProfile(edges[:-1], edges[1:], values, hazards).within(*window))
    found = A.best_interval((out_t, out_d, out_h, offsets, n_out), EPS, base, float(n_eff),
                            (S, P, C, pref), MIN_WIDTH, TOL, A.BIN_SHIFT,
                            tuple(map(float, window)), np.empty(0, np.uint8))
    return full, _fast(found, *window)


# t values that share bins, tie exactly, or fall within rounding of each other on both
# sides of a bin boundary: 1.0 starts a bin and the float32 just below it ends the one
# before; float64 values next to their midpoint round to either
_MID = (float(np.nextafter(np.float32(1.0), np.float32(0.0))) + 1.0) / 2
_HOT = [_MID, np.nextafter(_MID, 0.0), np.nextafter(_MID, 2.0), 1.0, 1.0 + 2e-16, 0.999, 1.001,
        -0.5, -0.5 - 1e-16, 0.0, 3e-13, 2.5, 40.0, -7.0]
_WINDOWS = st.one_of(st.just((-np.inf, np.inf)), st.tuples(
    st.sampled_from([-np.inf, -7.0, -1.0, -0.5, 0.0, 0.999, 1.0]),
    st.sampled_from([np.inf, 40.0, 2.5, 1.0, 1.001, 0.5])).filter(lambda w: w[0] < w[1]))


def _given_rows(queries):
    out_t, out_d, out_h, sizes = [], [], [], []
    for rows in queries:
        rows = sorted(rows, key=lambda r: r[0])
        sizes.append(len(rows))
        out_t += [r[0] for r in rows]
        out_d += [r[1] for r in rows]
        out_h += [r[2] or r[1] == 0.0 for r in rows]
    return (np.array(out_t, dtype=float), np.array(out_d, dtype=float),
            np.array(out_h, dtype=bool), sizes)


_QUERIES = st.lists(st.lists(st.tuples(st.sampled_from(_HOT), st.sampled_from(
    [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-13, -3.0]), st.booleans()), max_size=12),
    min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(_QUERIES, st.floats(-3, 3), _WINDOWS)
def test_best_interval_from_bins_matches_the_whole_profile(queries, base, window):
    """The best interval found from the few bins its bound allows is the one the whole
    profile gives (on the whole line or a segment of it), value, bounds and point bit for
    bit: breakpoint groups split across a bin boundary, exact ties between queries, hazards
    without a change, near-equal values, segment ends on breakpoints."""
    out_t, out_d, out_h, sizes = _given_rows(queries)
    full, fast = _full_and_fast(out_t, out_d, out_h, sizes, base, len(queries), window)
    if fast is None:  # only an unbounded interval is left to the whole profile
        assert not (np.isfinite(full.lower) and np.isfinite(full.upper))
    else:
        assert fast == (full.value, full.t, full.lower, full.upper)


@settings(max_examples=300, deadline=None)
@given(_QUERIES, st.floats(-3, 3), _WINDOWS, st.integers(0, 2**32 - 1))
def test_best_interval_from_some_bins_answers_right_or_asks_for_more(queries, base, window,
                                                                     seed):
    """Given only the rows of some bins (a line swept in parts keeps those that can hold
    the best interval), best_interval either gives the answer it gives from all rows or
    says it needs more (-1): never a wrong answer."""
    from dfrank.linesearch import assemble as A
    from dfrank.linesearch import EPS, MIN_WIDTH, TOL
    out_t, out_d, out_h, sizes = _given_rows(queries)
    offsets, n_out, S, P, C, pref = _bins_of(out_t, out_d, sizes)
    args = (EPS, base, float(len(queries)), (S, P, C, pref), MIN_WIDTH, TOL, A.BIN_SHIFT,
            tuple(map(float, window)))
    whole = A.best_interval((out_t, out_d, out_h, offsets, n_out), *args,
                            np.empty(0, np.uint8))
    rng = np.random.default_rng(seed)
    kept = (rng.random(A.N_BINS) < rng.choice([0.3, 0.9, 1.0])).astype(np.uint8)
    on = np.array([kept[A.bin_of(t, A.BIN_SHIFT)] == 1 for t in out_t], dtype=bool)
    f_n = np.array([on[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])], np.int64)
    f_off = np.concatenate([[0], np.cumsum(f_n)]).astype(np.int64)
    part = A.best_interval((out_t[on], out_d[on], out_h[on], f_off, f_n), *args, kept)
    if part[0] != -1:
        assert part[0] == whole[0]
        assert _fast(part, *window) == _fast(whole, *window)
        assert np.array_equal(part[4], whole[4])
    if kept.all():
        assert part[0] != -1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(_HOT), st.floats(-2, 2)), max_size=12),
                min_size=1, max_size=20), st.booleans(), st.sampled_from([1, 2, 3, 8]))
def test_bin_sums_add_the_queries_in_fixed_blocks(queries, fresh, blocks):
    """Each bin's sums are the queries' run sums added in query order within each of
    the blocks of queries given (at most one a query), and the blocks' sums in block order
    (onto the bins' values when not ``fresh``; one block's runs go straight onto them):
    the same bits on any number of threads; and sum_blocks picks blocks by the data
    alone."""
    from dfrank.linesearch import assemble as A
    out_t, out_d, _, sizes = _given_rows([[(t, d, False) for t, d in q] for q in queries])
    offsets, n_out, S, P, C, pref = _bins_of(out_t, out_d, sizes)
    runs = np.empty(len(out_t), np.int64)
    run_sp = np.empty((len(out_t), 2))
    n_runs = np.array([A.bin_runs(out_t[a:b], out_d[a:b], b - a, runs[a:b], run_sp[a:b],
                                  A.BIN_SHIFT) for a, b in zip(offsets[:-1], offsets[1:])])
    nq = len(queries)
    blocks = min(blocks, nq)
    want = [np.zeros(A.N_BINS) if fresh else x.copy() for x in (S, P)]
    want_c = np.zeros(A.N_BINS, np.int64) if fresh else C.copy()
    part = [{} for _ in range(blocks)]
    for k in range(blocks):
        for q in range(k * nq // blocks, (k + 1) * nq // blocks):
            for r in range(offsets[q], offsets[q] + n_runs[q]):
                b = int(runs[r]) >> 32
                s0, p0, c0 = part[k].get(b, (0.0, 0.0, 0))
                part[k][b] = (s0 + run_sp[r, 0], p0 + run_sp[r, 1],
                              c0 + (int(runs[r]) & 0xFFFFFFFF))
    if blocks == 1:   # one block: its runs straight onto the bins
        for r in (r for q in range(nq) for r in range(offsets[q], offsets[q] + n_runs[q])):
            b = int(runs[r]) >> 32
            want[0][b] += run_sp[r, 0]
            want[1][b] += run_sp[r, 1]
            want_c[b] += int(runs[r]) & 0xFFFFFFFF
    for b in range(A.N_BINS if blocks > 1 else 0):
        for k in range(blocks):
            s0, p0, c0 = part[k].get(b, (0.0, 0.0, 0))
            want[0][b] += s0
            want[1][b] += p0
            want_c[b] += c0
    A.bin_sums(runs, run_sp, offsets, n_runs, S, P, C, pref, fresh=fresh, blocks=blocks)
    assert np.array_equal(S, want[0]) and np.array_equal(P, want[1])
    assert np.array_equal(C, want_c)
    assert pref[0] == 0.0 and np.array_equal(pref[1:], np.cumsum(S))
    assert A.sum_blocks(n_runs, A.N_BINS) == 1   # too few runs to pay for rows of sums
    many = np.full(nq, A.SUM_FROM // nq + 1)
    assert A.sum_blocks(many, A.N_BINS) == min(A.SUM_BLOCKS, nq)
    assert A.sum_blocks(many, A.SUM_CELLS) == 1


def _assembled_by_hand(out_t, out_d, out_h, base, n_eff, pref):
    """The profile the assembly must return, one row at a time: every change sorted
    stably by t (equal t in query order), each value base + (pref[bin] + the bin's running
    sum) over n_eff, and rows closer than EPS (relative to their group's first t) to the
    row before merged into one breakpoint with the value after its last row."""
    from dfrank.linesearch import EPS
    from dfrank.linesearch import assemble as A
    rows = sorted([(t, d) for t, d in zip(out_t, out_d) if d != 0.0], key=lambda r: r[0])
    edges, values, run, prev, last = [-np.inf], [base / n_eff], 0.0, -1, -np.inf
    for t, d in rows:
        b = A.bin_of(t, A.BIN_SHIFT)
        run = d if b != prev else run + d
        prev = b
        v = (base + (pref[b] + run)) / n_eff
        if len(edges) > 1 and t - last <= EPS * max(1.0, abs(edges[-1])):
            values[-1] = v   # the group goes on: its value is that after its last row
        else:
            edges.append(t)
            values.append(v)
        last = t
    return np.array(edges + [np.inf]), np.array(values), np.sort(out_t[out_h])


@settings(max_examples=300, deadline=None)
@given(_QUERIES, st.floats(-3, 3))
def test_assembly_is_one_stable_sort_of_every_change_in_any_number_of_parts(queries, base):
    """The assembly's bucket sort by bin, its groups of near-equal t (which chain across
    bin boundaries, so across parts) and its hazards (read again when a part has more
    than its room) give the profile of one pass over every change, bit for bit, whatever
    the number of parts; counts that do not match the rows are an error, not a profile."""
    from dfrank.linesearch import EPS
    from dfrank.linesearch import assemble as A
    out_t, out_d, out_h, sizes = _given_rows(queries)
    offsets, n_out, S, P, C, pref = _bins_of(out_t, out_d, sizes)
    n, n_eff = len(out_t), float(len(queries))
    want = _assembled_by_hand(out_t, out_d, out_h, base, n_eff, pref)
    for copies, parts in ((1, 1), (1, 2), (2, 3), (3, 7), (2, 64), (64, 5)):
        got = A.assemble((out_t, out_d, out_h, offsets, n_out), EPS, base, n_eff, C, pref,
                         copies, parts, (np.empty(n), np.empty(n), np.empty(n)), A.BIN_SHIFT)
        for g, w in zip(got, want):
            assert np.array_equal(g, w), (copies, parts, g, w)
    for step in (1, -1) if C.any() else ():   # a bin counted one change too many, too few
        wrong = C.copy()
        wrong[np.flatnonzero(C)[0]] += step
        with pytest.raises(ValueError, match="do not match"):
            A.assemble((out_t, out_d, out_h, offsets, n_out), EPS, base, n_eff, wrong, pref,
                       2, 2, (np.empty(n + 1), np.empty(n + 1), np.empty(n + 1)), A.BIN_SHIFT)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 7]))
def test_assembly_sorts_long_bins_as_short_ones(seed, parts):
    """Bins of hundreds of changes (sorted by radix passes, then insertion where the
    float32 rounding ties) give the same profile as the hand-made one: ties between
    queries, t that differ below float32's precision, groups inside a bin."""
    from dfrank.linesearch import EPS
    from dfrank.linesearch import assemble as A
    rng = np.random.default_rng(seed)
    grid = 1.0 + rng.integers(0, 300, size=6) * 1e-4   # one bin: [1, 1 + 2**-5)
    queries = []
    for _ in range(rng.integers(1, 6)):
        t = rng.choice(grid, size=rng.integers(1, 200)) + rng.choice([0.0, 1e-9, 5e-13, 2e-16],
                                                                    size=1)
        queries.append([(float(x), float(rng.choice([1.0, -1.0, 0.25, 0.0])),
                         bool(rng.random() < 0.05)) for x in t])
    out_t, out_d, out_h, sizes = _given_rows(queries)
    offsets, n_out, S, P, C, pref = _bins_of(out_t, out_d, sizes)
    assert C.max() > A.SHORT_BIN or C.sum() <= A.SHORT_BIN
    n, n_eff, base = len(out_t), float(len(queries)), 0.5
    want = _assembled_by_hand(out_t, out_d, out_h, base, n_eff, pref)
    got = A.assemble((out_t, out_d, out_h, offsets, n_out), EPS, base, n_eff, C, pref, parts,
                     parts, (np.empty(n), np.empty(n), np.empty(n)), A.BIN_SHIFT)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


@functools.lru_cache(maxsize=1)
def _ohsumed_train(path):
    return dfrank.load_svmlight(path)


@pytest.mark.parametrize("metric", ["map", "ndcg@10", "err@10", "p@5", "mrr", "kendall_tau"])
def test_line_search_result_is_that_of_the_whole_profile(metric):
    """On real lines (hundreds of thousands of crossings for MAP) the result found from
    the bins is the whole profile's choice bit for bit, and the profile left in the result
    (built when read) is the whole profile."""
    from dfrank.linesearch import choose, line_profile
    path = os.path.join(SHARED, "ohsumed-letor3", "QueryLevelNorm", "Fold1", "train.txt.gz")
    if not os.path.exists(path):
        pytest.skip("../shared/data absent")
    data = _ohsumed_train(path)
    obj = dfrank.LinearObjective(data, metric)
    sp = obj.space
    rng = np.random.default_rng(11)
    fast = 0
    for i in range(12):
        lam = sp.sample(rng)
        delta = np.eye(sp.dim)[rng.integers(sp.dim)] if i % 2 else rng.normal(size=sp.dim)
        s0, u = linear_scores(obj.XT, np.vstack([sp.to_weights(lam),
                                                  sp.direction_to_weights(delta)]), obj.rows)
        res = obj.line_scores(s0, u)
        prof, n_cross = line_profile(obj.bound, obj.classes, s0, u)
        want = choose(prof, n_cross)
        assert (res.value, res.t, res.lower, res.upper, res.n_crossings) == \
            (want.value, want.t, want.lower, want.upper, want.n_crossings)
        assert np.array_equal(res.profile.values, prof.values)
        assert np.array_equal(res.profile.lower, prof.lower)
        fast += hasattr(res.profile, "get")
    assert fast >= 6  # most lines never assembled the whole profile


def _graded(rng, sizes, d=3):
    """Queries of ``sizes`` documents: d normal features, labels 0-2."""
    n = int(np.sum(sizes))
    return dfrank.RankingData.from_arrays(rng.normal(size=(n, d)),
                                          rng.integers(0, 3, n).astype(float),
                                          np.repeat(np.arange(len(sizes)), sizes))


def test_deferred_profile_reads_and_pickles_as_the_profile():
    """A "best" line search leaves a profile built on first read: the same as
    line_profile's, and it pickles (to another process) as that profile."""
    import pickle
    from dfrank.linesearch import DeferredProfile, LineProfile, line_profile
    rng = np.random.default_rng(12)
    obj = dfrank.LinearObjective(_graded(rng, rng.integers(5, 40, 12)), "map")
    sp = obj.space
    for _ in range(5):
        lam, delta = sp.sample(rng), rng.normal(size=4)
        res = obj.line(lam, delta)
        if not isinstance(res.profile, DeferredProfile):
            continue  # an unbounded choice: the whole profile was built
        s0, u = linear_scores(obj.XT, np.vstack([sp.to_weights(lam),
                                                  sp.direction_to_weights(delta)]))
        want = line_profile(obj.bound, obj.classes, s0, u)[0]
        back = pickle.loads(pickle.dumps(res))
        assert isinstance(back.profile, LineProfile)
        for prof in (res.profile, back.profile):
            assert np.array_equal(prof.values, want.values)
            assert np.array_equal(prof.lower, want.lower)
            assert np.array_equal(prof.hazards, want.hazards)
        assert prof.value_at(res.t) == res.value
        return
    pytest.fail("every line chose an unbounded interval")


def _lines(obj, rng, n):
    """n lines of obj (s0, u, within): random and coordinate directions, on the whole
    line and on segments."""
    sp = obj.space
    for i in range(n):
        lam = sp.sample(rng)
        delta = np.eye(sp.dim)[rng.integers(sp.dim)] if i % 2 else rng.normal(size=sp.dim)
        s0, u = linear_scores(obj.XT, np.vstack([sp.to_weights(lam),
                                                  sp.direction_to_weights(delta)]), obj.rows)
        within = [None, (-1.0, 1.0), (-0.05, 0.3), (0.0, np.inf)][i % 4]
        yield s0, u, within


def _parted_matches_whole(obj, lines, monkeypatch, part):
    """Each line's search swept in parts of ``part`` crossings gives the whole line's
    interval and point bit for bit, and its value up to rounding (summed in finer bins);
    returns how many lines were swept in parts."""
    from dfrank.linesearch import runner as L
    calls = []
    real = L._best_in_parts
    monkeypatch.setattr(L, "_best_in_parts", lambda *a: calls.append(1) or real(*a))
    for s0, u, within in lines:
        monkeypatch.setattr(L, "PART_CROSSINGS", 1 << 40)
        whole = obj.line_scores(s0, u, within=within)
        monkeypatch.setattr(L, "PART_CROSSINGS", part)
        parted = obj.line_scores(s0, u, within=within)
        assert (parted.t, parted.lower, parted.upper, parted.n_crossings) == \
            (whole.t, whole.lower, whole.upper, whole.n_crossings)
        assert parted.value == pytest.approx(whole.value, rel=1e-13, abs=1e-15)
    return len(calls)


@pytest.mark.parametrize("metric", ["map", "ndcg@10", "err@10", "p@5", "mrr", "kendall_tau"])
def test_a_line_swept_in_parts_gives_the_whole_lines_result(metric, monkeypatch):
    """A line of more crossings than PART_CROSSINGS is swept a part of the queries at a
    time, twice (bins, then the rows of the bins that can hold the best interval): the
    result is the whole line's, on the line and on segments, with ties (small integer
    features) and queries without relevant documents."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 60, 40)
    n = int(sizes.sum())
    y = rng.integers(0, 3, n).astype(float)
    y[:sizes[0]] = 0
    data = dfrank.RankingData.from_arrays(rng.integers(0, 4, (n, 4)).astype(float), y,
                                          np.repeat(np.arange(len(sizes)), sizes))
    obj = dfrank.LinearObjective(data, metric)
    assert _parted_matches_whole(obj, _lines(obj, rng, 16), monkeypatch, 300) >= 8


def test_real_lines_swept_in_parts_give_the_whole_lines_result(monkeypatch):
    path = os.path.join(SHARED, "ohsumed-letor3", "QueryLevelNorm", "Fold1", "train.txt.gz")
    if not os.path.exists(path):
        pytest.skip("../shared/data absent")
    obj = dfrank.LinearObjective(_ohsumed_train(path), "map")
    lines = _lines(obj, np.random.default_rng(13), 8)
    assert _parted_matches_whole(obj, lines, monkeypatch, 20000) >= 6


def test_a_parted_line_asks_for_more_bins_until_it_has_what_it_needs(monkeypatch):
    """When the bins kept for the second sweep miss one that best_interval needs, the
    second sweep is made again with more (the bins that reach the best value found, then
    all of them): the result is still the whole line's."""
    from dfrank.linesearch import runner as L
    rng = np.random.default_rng(8)
    obj = dfrank.LinearObjective(_graded(rng, rng.integers(5, 50, 30)), "ndcg@10")
    real, floors = L._select_bins, []

    def stingy(bins, base, n_eff, wlo, whi, floor, reach, shift):
        floors.append(floor)
        kept = real(bins, base, n_eff, wlo, whi, floor, reach, shift)
        return kept if floor == -np.inf else np.zeros_like(kept)   # nothing until all

    monkeypatch.setattr(L, "_select_bins", stingy)
    assert _parted_matches_whole(obj, _lines(obj, rng, 6), monkeypatch, 100) >= 4
    assert floors.count(-np.inf) >= 4 and None in floors



@pytest.mark.parametrize("metric", ["ndcg@5", "p@3", "err@5", "map@5"])
def test_the_hull_layers_only_prune(metric, monkeypatch):
    """On large lines the candidates peel the hull layers on a sample of queries and on
    the others only where they removed events there: with them and without (hull_gain 0)
    every line's profile, hazards and choice are the same. On sparse features (mostly
    zeros, as LETOR's) the sample says to peel them, and the other queries lose events;
    where the sampled queries are too short to prune (5 documents for NDCG@5) the others
    keep all."""
    import dfrank.linesearch.runner as L
    from dfrank._kernels.scratch import Scratch
    from dfrank.linesearch.candidates import HULL_SAMPLE

    default = L.HULL_GAIN
    monkeypatch.setattr(L, "HULL_SAMPLE_FROM", 1)   # sampled on small lines too
    rng = np.random.default_rng(7)
    nq = 48

    def sparse(sizes):
        n = int(np.sum(sizes))
        X = rng.normal(size=(n, 4))
        X[rng.random(X.shape) < 0.7] = 0.0   # runs of equal u
        y = np.digitize(X @ [1.0, 0.5, -0.3, 0.2] + rng.normal(size=n), [0.5, 1.5, 2.5])
        return dfrank.RankingData.from_arrays(X, y.astype(float),
                                              np.repeat(np.arange(nq), sizes))

    sampled = np.arange(nq) % HULL_SAMPLE == 0
    for data, peels in ((sparse(np.full(nq, 40)), True),
                        (sparse(np.where(sampled, 5, 40)), False)):
        found = {}
        for gain in (default, 0):
            monkeypatch.setattr(L, "HULL_GAIN", gain)
            obj = dfrank.LinearObjective(data, metric)
            r = np.random.default_rng(1)
            found[gain] = []
            for i in range(12):
                lam = obj.space.sample(r)
                d = np.eye(obj.space.dim)[i % obj.space.dim] if i % 2 else \
                    r.normal(size=obj.space.dim)
                res = obj.line(lam, d, rule="plateau")
                p = res.profile
                found[gain].append(((res.value, res.t, res.lower, res.upper),
                                    p.lower.tobytes(), p.values.tobytes(),
                                    np.asarray(p.hazards).tobytes(), res.n_crossings))
        with_hull, without = found[default], found[0]
        assert [a[:4] for a in with_hull] == [b[:4] for b in without]
        # the events of the queries outside the sample, along one line
        s0, u = obj.scores(obj.space.sample(r)), obj.scores(obj.space.sample(r))
        events = {}
        for gain in (default, 0):
            monkeypatch.setattr(L, "HULL_GAIN", gain)
            line = L.prepare_line(obj.bound, obj.classes, s0, u, None, Scratch())
            events[gain] = line.fixed[3].copy()
        rest = ~sampled
        fewer = events[default][rest] < events[0][rest]
        assert fewer.any() if peels else not fewer.any()
        assert np.all(events[default] <= events[0])

@pytest.mark.parametrize("n, spread, parts", [(1, 1, 1), (2, 1, 3), (7, 1, 4), (1000, 1, 8),
                                              (5000, 0, 5), (20000, 12, 16), (300, 40, 2)])
def test_median_width_of_is_nps_lower_median(n, spread, parts):
    """The parallel selection gives np.partition's lower median of the finite widths,
    with the unbounded ends, equal widths, and widths over many magnitudes."""
    from dfrank.linesearch.choice import median_width_of
    rng = np.random.default_rng(n + parts)
    widths = 10.0 ** rng.uniform(-spread, spread, n) if spread else np.full(n, 0.25)
    widths[rng.random(n) < 0.1] = 0.5   # ties
    edges = np.concatenate([[-np.inf], -3.0 + np.cumsum(widths), [np.inf]])
    lo, hi = edges[:-1], edges[1:]
    w = hi - lo
    w = w[np.isfinite(w)]
    k = (w.size - 1) // 2
    want = float(np.partition(w, k)[k]) if w.size else -1.0
    assert median_width_of(lo, hi, parts) == want
    assert median_width_of(np.array([-np.inf]), np.array([np.inf]), parts) == -1.0


@pytest.mark.parametrize("floor", [-np.inf, 0.5])
def test_the_parallel_plateau_choice_is_the_serial_one(floor):
    """Above PARALLEL_FROM intervals the plateau choice runs in pieces on numba's threads:
    the interval it picks is the serial kernel's, on any thread count."""
    import numba

    from dfrank.linesearch import choice
    from dfrank.linesearch.profile import LineProfile

    n = choice.PARALLEL_FROM + 5001
    rng = np.random.default_rng(1)
    edges = np.concatenate([[-np.inf], np.cumsum(rng.exponential(size=n - 1)), [np.inf]])
    values = np.cumsum(rng.integers(-2, 3, n)) / 400.0   # plateaus and peaks
    lo, hi = edges[:-1], edges[1:]
    w = np.diff(edges)[1:-1]
    step = float(np.partition(w, (len(w) - 1) // 2)[(len(w) - 1) // 2])
    want = choice.plateau_pick(lo, hi, values, step, 4 * step, floor, 1e-9, 1e-12)
    assert want >= 0
    got = []
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        old = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            got.append(choice.choose(LineProfile(lo, hi, values, np.empty(0)),
                                     rule="plateau", window=4 * step, floor=floor))
        finally:
            numba.set_num_threads(old)
    assert {(r.lower, r.upper, r.value) for r in got} == {(lo[want], hi[want], values[want])}


def test_one_at_a_time_sets_chunks_of_one_unless_the_loops_run_on_one_thread():
    """Chunk size 1 inside the block, the caller's restored after (also on an error);
    with ``threads=1`` nothing is set: one thread takes every piece either way."""
    import numba

    from dfrank._kernels.chunks import one_at_a_time

    before = numba.set_parallel_chunksize(7)
    try:
        for threads in (None, 2):
            with one_at_a_time(threads):
                assert numba.get_parallel_chunksize() == 1
            assert numba.get_parallel_chunksize() == 7
        with pytest.raises(KeyError):
            with one_at_a_time(4):
                raise KeyError
        assert numba.get_parallel_chunksize() == 7
        with one_at_a_time(1):
            assert numba.get_parallel_chunksize() == 7
        assert numba.get_parallel_chunksize() == 7
    finally:
        numba.set_parallel_chunksize(before)


def test_the_parallel_median_width_runs_with_numbas_own_chunks(monkeypatch):
    """Inside numba's chunk size 1 (one_at_a_time) the parallel median width ran ~100x
    slower; choose calls it outside, and its value is np.partition's lower median."""
    import numba

    from dfrank.linesearch import choice
    from dfrank.linesearch.profile import LineProfile

    n = choice.PARALLEL_FROM + 1001
    rng = np.random.default_rng(0)
    edges = np.concatenate([[-np.inf], np.cumsum(rng.random(n - 1)), [np.inf]])
    profile = LineProfile(edges[:-1], edges[1:], rng.integers(0, 5, n) / 4.0, np.empty(0))
    seen = []
    kernel = choice.median_width_of

    def recording(lower, upper, parts):
        seen.append(numba.get_parallel_chunksize())
        return kernel(lower, upper, parts)

    monkeypatch.setattr(choice, "median_width_of", recording)
    choice.choose(profile, rule="plateau")
    w = np.diff(edges)[1:-1]
    assert seen == [0]
    assert recording(edges[:-1], edges[1:], 8) == np.partition(w, (len(w) - 1) // 2)[
        (len(w) - 1) // 2]


@pytest.mark.parametrize("metric,ties", [("ndcg@10", "pessimistic"), ("map", "pessimistic"),
                                         ("err@10", "optimistic"), ("p@5", "expected"),
                                         ("mrr", "stable")])
def test_a_line_searched_in_parts_of_the_queries_equals_the_whole_search(metric, ties):
    """dfrank.linesearch.split: each part sweeps its queries, the joined rows give the
    whole search's point, interval and value bit for bit (parts of one query, of many,
    and a line flat in some parts; ERR bound with the largest label of all parts; the
    driver's buffers kept from line to line, the parts' rows joined in any order of
    arrival, and each part's rows in its own scratch, never written over while held)."""
    from dfrank.data.ranking import RankingData
    from dfrank.data.datasets import make_letor_like
    from dfrank.linesearch import line_search
    from dfrank._kernels.scratch import Scratch
    from dfrank.linesearch.split import line_join, rows_of_line, search_parts
    from dfrank.objectives.objective import LinearObjective

    data = make_letor_like(n_queries=150, docs_per_query=12, n_features=5, seed=4)
    whole = LinearObjective(data, metric, ties=ties)
    bounds = [0, 1, 2, 90, 150]
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        r0, r1 = data.qptr[a], data.qptr[b]
        part = RankingData(data.X[r0:r1], data.y[r0:r1], data.qptr[a:b + 1] - r0,
                           data.qids[a:b])
        parts.append(LinearObjective(part, metric, ties=ties, max_grade=float(data.y.max())))
    rng = np.random.default_rng(1)
    kept, results = Scratch(), []   # the driver's buffers, kept from one line to the next
    own = [Scratch() for _ in parts]   # each part's, as on its worker
    held = None
    for trial in range(4):
        w, v = rng.normal(size=5), rng.normal(size=5)
        if trial == 3:   # along a feature constant in the first query: flat there
            v = np.zeros(5)
            part0 = data.X[:data.qptr[1]]
            v[int(np.argmin(part0.max(axis=0) - part0.min(axis=0)))] = 1.0
        for rule in ("best", "plateau"):
            a = line_search(whole.bound, whole.classes, linear_scores(whole.XT, w, whole.rows),
                            linear_scores(whole.XT, v, whole.rows), rule=rule)
            rows = [rows_of_line(p.bound, p.classes, linear_scores(p.XT, w, p.rows),
                                 linear_scores(p.XT, v, p.rows), scratch=ws)
                    for p, ws in zip(parts, own)]
            if held is not None:   # the previous line's rows, still held, are as they were
                assert all(np.array_equal(r.t, t) for r, t in zip(held[0], held[1]))
            held = (rows, [r.t.copy() for r in rows])
            b = search_parts(rows, whole.bound.mean, skip=whole.metric.empty == "skip",
                             rule=rule, scratch=kept)
            assert (a.value, a.t, a.lower, a.upper) == (b.value, b.t, b.lower, b.upper)
            join = line_join([len(r.n_out) for r in rows], rule, kept)
            for i in rng.permutation(len(rows)):   # as the workers' rows come
                join.add(int(i), rows[i])
            c = search_parts(join, whole.bound.mean, skip=whole.metric.empty == "skip",
                             rule=rule)
            assert (a.value, a.t, a.lower, a.upper) == (c.value, c.t, c.lower, c.upper)
            assert np.array_equal(c.profile.values, a.profile.values)
            results.append((b, a.profile.values.copy()))
    for b, values in results:   # the buffers kept from line to line left each profile whole
        assert np.array_equal(b.profile.values, values)


def test_a_line_join_refuses_a_part_sent_twice_of_other_queries_or_missing():
    from dfrank.data.datasets import make_letor_like
    from dfrank.linesearch.split import LineJoin, rows_of_line
    from dfrank.objectives.objective import LinearObjective

    obj = LinearObjective(make_letor_like(n_queries=6, docs_per_query=5, n_features=3, seed=2))
    rows = rows_of_line(obj.bound, obj.classes, linear_scores(obj.XT, np.ones(3), obj.rows),
                        linear_scores(obj.XT, np.array([1.0, -1.0, 0.5]), obj.rows))
    join = LineJoin([6, 6])
    join.add(0, rows)
    with pytest.raises(ValueError, match="part 0 of the line was joined already"):
        join.add(0, rows)
    with pytest.raises(ValueError, match="part 1 sent the rows of 6 queries, it holds 4"):
        LineJoin([6, 4]).add(1, rows)
    with pytest.raises(ValueError, match=r"parts \[1\] of the line were not joined"):
        join.breakpoints(skip=False)
