"""Paired significance tests on per-query metric values (numpy and the standard library only).

Two rankers evaluated on the same queries give paired values a_q, b_q; every test here looks
at the differences d_q = a_q - b_q (Smucker, Allan & Carterette, *A comparison of
statistical significance tests for information retrieval evaluation*, CIKM 2007):

* ``randomization`` — Fisher's paired randomization (sign-flip) test of the mean difference:
  exact over all 2^n sign patterns when that is at most ``n_resamples``, else Monte Carlo;
* ``t`` — Student's paired t-test;
* ``wilcoxon`` — Wilcoxon signed-rank test (zeros dropped; exact distribution for up to 50
  pairs without ties, normal approximation with tie correction otherwise);
* ``sign`` — the sign test (exact binomial, zeros dropped).

Every result also carries the effect size (mean difference / standard deviation of the
differences) and a percentile bootstrap confidence interval of the mean difference.
"""

import functools
import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["significance", "SignificanceResult", "TESTS"]

TESTS = ("randomization", "t", "wilcoxon", "sign")


@dataclass
class SignificanceResult:
    test: str
    p_value: float
    statistic: float
    mean_difference: float      # mean of a - b
    effect_size: float          # mean / sd of the differences (Cohen's d_z); nan if sd = 0
    ci_low: float               # bootstrap confidence interval of the mean difference
    ci_high: float
    confidence: float
    n: int                      # pairs
    exact: bool                 # p-value from the exact null distribution
    n_resamples: int
    a: str = None               # what ``a`` and ``b`` are (two strategies, runs), when named
    b: str = None

    def significant(self, level=0.05):
        return self.p_value < level

    def to_dict(self):
        return asdict(self)

    def __str__(self):
        which = f" of {self.a} against {self.b}" if self.a and self.b else ""
        return (f"{self.test}{which}: mean difference {self.mean_difference:+.4f} "
                f"[{self.ci_low:+.4f}, {self.ci_high:+.4f}] ({self.confidence:.0%} bootstrap), "
                f"p = {self.p_value:.4g}, effect size {self.effect_size:.3f}, n = {self.n}")


def significance(a, b, test="randomization", *, n_resamples=10000, seed=0,
                 confidence=0.95, ci=True):
    """Paired test of per-query values ``a`` against ``b`` (two-sided).

    Parameters
    ----------
    a, b : array-like (n_queries,)
        Per-query values of two rankers on the same queries, in the same order (NaN
        marks a query to leave out: it is dropped from both).
    test : {"randomization", "t", "wilcoxon", "sign"}
    n_resamples : int
        Random sign patterns of the randomization test (used only when 2^n is larger) and
        bootstrap samples of the confidence interval.
    seed : int
        Seeds the Monte-Carlo randomization test and the bootstrap.
    confidence : float
        Level of the bootstrap interval.
    ci : bool
        Compute the bootstrap interval (``ci_low``, ``ci_high`` are NaN without it).
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; choose one of {list(TESTS)}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D and of the same length (paired per query), "
                         f"got shapes {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    if np.any(np.isinf(a[keep])) or np.any(np.isinf(b[keep])):
        raise ValueError("per-query values must be finite")
    d = a[keep] - b[keep]
    n = len(d)
    if n < 2:
        raise ValueError(f"a paired test needs at least 2 queries, got {n}")
    n_resamples = int(n_resamples)
    if test == "randomization":
        stat, p, exact = _randomization(d, n_resamples, seed)
    elif test == "t":
        stat, p, exact = _t(d)
    elif test == "wilcoxon":
        stat, p, exact = _wilcoxon(d)
    else:
        stat, p, exact = _sign(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    lo, hi = _bootstrap_ci(d, n_resamples, confidence, np.random.default_rng(seed + 1)) \
        if ci else (float("nan"), float("nan"))
    return SignificanceResult(test=test, p_value=float(min(1.0, p)), statistic=float(stat),
                              mean_difference=mean,
                              effect_size=mean / sd if sd > 0 else float("nan"),
                              ci_low=lo, ci_high=hi, confidence=confidence, n=n,
                              exact=bool(exact), n_resamples=n_resamples)


# ---------------------------------------------------------------------- the tests

_DRAW = 4096                 # sign patterns drawn (and summed) at a time
_KEEP_DRAWS = 1 << 25        # the largest block of patterns kept for the next test (bytes)


def _sign_draws(n, n_resamples, seed):
    """Blocks of random 0/1 sign patterns (n_resamples x n in all, from ``seed``), the
    stream of rng.choice([-1, 1]) without its fancy indexing. The tests of one report (a
    fusion against each baseline, compare's strategies) draw the same patterns: up to
    :data:`_KEEP_DRAWS` bytes they are drawn once and kept."""
    if isinstance(seed, (int, np.integer)) and n * n_resamples <= _KEEP_DRAWS:
        return _kept_draws(int(n), int(n_resamples), int(seed))
    return _draws(n, n_resamples, seed)


def _draws(n, n_resamples, seed):
    rng = np.random.default_rng(seed)
    left = n_resamples
    while left:
        m = min(left, _DRAW)
        yield rng.integers(0, 2, size=(m, n)).astype(np.int8)
        left -= m


@functools.lru_cache(maxsize=2)
def _kept_draws(n, n_resamples, seed):
    blocks = tuple(_draws(n, n_resamples, seed))
    for b in blocks:
        b.setflags(write=False)
    return blocks


def _randomization(d, n_resamples, seed):
    """Sign-flip test of |mean|. Ties with the observed statistic count as extreme (with a
    relative tolerance, so that float rounding of equal sums does not decide)."""
    n = len(d)
    observed = abs(d.sum())
    tol = 1e-9 * max(1.0, np.abs(d).sum())
    if n <= 62 and 2 ** n <= n_resamples:
        count = 0
        total = 2 ** n
        block = 1 << min(n, 16)
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, block):
            codes = np.arange(start, min(total, start + block), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            count += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
        return d.mean(), count / total, True
    count = 0
    for bits in _sign_draws(n, n_resamples, seed):
        signs = 2.0 * bits - 1.0
        count += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
    return d.mean(), (count + 1) / (n_resamples + 1), False


def _t(d):
    n = len(d)
    sd = d.std(ddof=1)
    if sd == 0:
        return (0.0, 1.0, True) if d.mean() == 0 else (math.copysign(math.inf, d.mean()),
                                                         0.0, True)
    t = d.mean() / (sd / math.sqrt(n))
    nu = n - 1
    p = _betainc(nu / 2.0, 0.5, nu / (nu + t * t))   # two-sided Student-t tail
    return t, p, True


def _ranks(x):
    """Average ranks (1-based) of x, ties sharing the mean rank."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ranks = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def _wilcoxon(d):
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 0.0, 1.0, True
    r = _ranks(np.abs(d))
    w_plus = float(r[d > 0].sum())
    ties = len(np.unique(np.abs(d))) < n
    if n <= 50 and not ties:
        counts = _signed_rank_counts(n)
        total = counts.sum()
        k = int(round(w_plus))
        low = counts[:k + 1].sum() / total
        high = counts[k:].sum() / total
        return w_plus, min(1.0, 2.0 * min(low, high)), True
    mean = n * (n + 1) / 4.0
    _, t = np.unique(r, return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float((t ** 3 - t).sum()) / 48.0
    if var <= 0:
        return w_plus, 1.0, False
    z = (w_plus - mean) / math.sqrt(var)
    return w_plus, math.erfc(abs(z) / math.sqrt(2.0)), False


def _signed_rank_counts(n):
    """Number of subsets of {1..n} with each sum 0..n(n+1)/2 (the exact null of W+)."""
    top = n * (n + 1) // 2
    c = np.zeros(top + 1)
    c[0] = 1.0
    for i in range(1, n + 1):
        c[i:] = c[i:] + c[:-i].copy()
    return c


def _sign(d):
    pos = int((d > 0).sum())
    n = pos + int((d < 0).sum())
    if n == 0:
        return 0.0, 1.0, True
    k = min(pos, n - pos)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return float(pos), min(1.0, 2.0 * tail), True


def _bootstrap_ci(d, n_resamples, confidence, rng):
    n = len(d)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, 1024):
        m = min(1024, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        means[start:start + m] = d[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


# ---------------------------------------------------------------------- special functions

def _betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b), by its continued fraction (modified Lentz),
    using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny = 1e-300
    f = 1.0
    c = 1.0
    dd = 0.0
    for m in range(0, 10000):
        for step in (0, 1):
            if m == 0 and step == 0:
                num = 1.0
            elif step == 0:
                num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            else:
                num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            dd = 1.0 + num * dd
            dd = tiny if abs(dd) < tiny else dd
            c = 1.0 + num / c
            c = tiny if abs(c) < tiny else c
            dd = 1.0 / dd
            delta = c * dd
            f *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return math.exp(log_front) * (f - 1.0) / a
