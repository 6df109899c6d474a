"""Search spaces: Metzler's multinomial manifold (:class:`Simplex`) and a :class:`Box`.

The simplex reduction (Metzler, *Direct Maximization of Rank-based Metrics*, §3): augment
each feature vector with f_{d+1} = K - sum_j f_j. A point lambda of the simplex
P^d = {lambda in R^{d+1} : lambda >= 0, sum lambda = 1} scores a document as
sum_j lambda_j f_j + lambda_{d+1} f_{d+1} = sum_j (lambda_j - lambda_{d+1}) f_j + K lambda_{d+1},
so it ranks exactly as the linear weights w_j = lambda_j - lambda_{d+1}. Every nonzero w has a
rank-equivalent lambda, so searching the (bounded) simplex loses no ranker.
"""

import math

import numpy as np

from ._jit import arr, declare, f8, first, i8, later, njit

__all__ = ["Simplex", "Box"]


def _as_vector(x, n, what):
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1:] != (n,):
        raise ValueError(f"{what} must have {n} coordinates, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} has non-finite coordinates: {x}")
    return x


@njit(cache=True, nogil=True)
def _compositions(c, K, out):
    """Fill ``out`` with the compositions following ``c`` (reverse lexicographic order:
    (K,0,..,0) first, (0,..,0,K) last), updating ``c`` in place. Returns the number written.

    Successor: take the last nonzero part j among the first n-1, decrement it, and move
    the last part plus one to position j + 1.
    """
    n = len(c)
    rows = out.shape[0]
    w = 0
    while w < rows:
        for i in range(n):
            out[w, i] = c[i] / K
        w += 1
        j = n - 2
        while j >= 0 and c[j] == 0:
            j -= 1
        if j < 0:
            c[0] = -1  # exhausted
            return w
        c[j] -= 1
        last = c[n - 1]
        c[n - 1] = 0
        c[j + 1] = last + 1
    return w


@njit(cache=True, nogil=True)
def _rows_on_simplex(pts, tol, sum_tol):
    """True if every row is finite, >= -tol and sums to 1 within sum_tol."""
    for r in range(pts.shape[0]):
        s = 0.0
        for v in pts[r]:
            if not (v >= -tol) or not np.isfinite(v):
                return False
            s += v
        if abs(s - 1.0) > sum_tol:
            return False
    return True


@njit(cache=True, inline="always")
def _block_sum(z, lo, n):
    """numpy's sum of ``z[lo:lo + n]`` for n <= 128: eight running sums."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += z[i]
        return res
    r0, r1, r2, r3 = z[lo], z[lo + 1], z[lo + 2], z[lo + 3]
    r4, r5, r6, r7 = z[lo + 4], z[lo + 5], z[lo + 6], z[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += z[lo + i]
        r1 += z[lo + i + 1]
        r2 += z[lo + i + 2]
        r3 += z[lo + i + 3]
        r4 += z[lo + i + 4]
        r5 += z[lo + i + 5]
        r6 += z[lo + i + 6]
        r7 += z[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += z[lo + i]
        i += 1
    return res


_KERNEL_MAX = 128  # the longest row _project_rows takes (numpy sums it in one block)


def _project_rows_numpy(v, out):
    """:func:`_project_rows` for longer rows, with numpy (its pairwise sum): a longer row
    is scored over many features, which outweighs the calls' overhead."""
    m = v.min(axis=1)
    shift = np.where(m < 0.0, m, -0.0)
    np.subtract(v, shift[:, None], out=out)
    total = out.sum(axis=1)
    bad = ~np.isfinite(v).all(axis=1) | (v == v[:, :1]).all(axis=1) | ~(total > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(out, total[:, None], out=out)
    return int(np.flatnonzero(bad)[0]) if bad.any() else -1


@njit(cache=True, nogil=True)
def _project_rows(v, out):
    """Metzler's projection of each row of ``v`` (at most ``_KERNEL_MAX`` coordinates) into
    ``out`` (see :meth:`Simplex.project`) in one call: the dozen numpy calls it would take
    cost more than the projection, most of all right after a line search's kernels. The same
    numbers as numpy's min, shift, sum and division, bit for bit, except that a zero always
    comes out +0.0 (the shift of a row whose minimum is a zero is -0.0, so -0.0 + 0.0 =
    +0.0; numpy's minimum of signed zeros depends on its vector lanes). Returns the first
    row that cannot be projected (non-finite, all coordinates equal, or a sum <= 0), or
    -1."""
    n = v.shape[1]
    for r in range(v.shape[0]):
        row = v[r]
        m = row[0]
        flat = True
        for x in row:
            if not np.isfinite(x):
                return r
            m = min(m, x)
            flat &= x == row[0]
        shift = m if m < 0.0 else -0.0
        z = out[r]
        for i in range(n):
            z[i] = row[i] - shift
        total = _block_sum(z, 0, n)
        if flat or not (total > 0):
            return r
        for i in range(n):
            z[i] = z[i] / total
    return -1


class Simplex:
    """The simplex P^d of rank-equivalent linear rankers over ``n_features`` features.

    Points have ``n_features + 1`` coordinates (the last belongs to the augmented feature
    f_{d+1} = K - sum_j f_j, with K = 0), are >= 0 and sum to 1.
    """

    kind = "simplex"

    def __init__(self, n_features):
        if int(n_features) != n_features or n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        self.n_features = int(n_features)
        self.dim = self.n_features + 1

    def __repr__(self):
        return f"Simplex(n_features={self.n_features})"

    def __eq__(self, other):
        return isinstance(other, Simplex) and other.n_features == self.n_features

    def __hash__(self):
        return hash(("simplex", self.n_features))

    # ------------------------------------------------------------------ maps
    def to_weights(self, lam):
        """Linear weights w_j = lambda_j - lambda_{d+1} (works on a batch, last axis)."""
        lam = _as_vector(lam, self.dim, "a simplex point")
        return lam[..., :-1] - lam[..., -1:]

    def direction_to_weights(self, delta):
        """The weight-space direction of a simplex direction delta (d + 1 coordinates)."""
        delta = _as_vector(delta, self.dim, "a simplex direction")
        return delta[..., :-1] - delta[..., -1:]

    def from_weights(self, w):
        """A rank-equivalent simplex point of nonzero weights ``w``.

        Append w_{d+1} = 0, shift by k = min(0, min w) so every coordinate is >= 0, divide
        by the sum: then lambda_j - lambda_{d+1} = w_j / Z with Z > 0.
        """
        w = _as_vector(w, self.n_features, "weights")
        aug = np.concatenate([w, np.zeros(w.shape[:-1] + (1,))], axis=-1)
        if np.any(np.all(w == 0, axis=-1)):
            raise ValueError("all-zero weights rank every document the same; they have no "
                             "simplex point")
        return self.project(aug)

    def project(self, v):
        """Metzler's rank-preserving projection of any v in R^{d+1} onto the simplex.

        Shift by min(0, min v), then divide by the sum. Adding a constant to every
        coordinate adds the same amount (K times it) to every score, and dividing by a
        positive number scales them, so the ranking of ``v`` is kept. A v whose
        coordinates are all equal ranks nothing (w = 0) and is an error.
        """
        v = np.asarray(v, dtype=np.float64)
        if v.shape[-1:] != (self.dim,):
            _as_vector(v, self.dim, "a point to project")  # raises, naming the shape
        rows = np.ascontiguousarray(v.reshape(-1, self.dim))
        out = np.empty_like(rows)
        if not rows.size:
            bad = -1
        elif self.dim <= _KERNEL_MAX:
            bad = _project_rows(rows, out)
        else:
            bad = _project_rows_numpy(rows, out)
        if bad >= 0:
            _as_vector(rows[bad], self.dim, "a point to project")  # raises if non-finite
            raise ValueError(f"cannot project {rows[bad]}: all coordinates equal (or zero "
                             "sum) means w = 0, which ranks nothing")
        return out.reshape(v.shape)

    def from_unit(self, z):
        """Simplex points of unit-cube coordinates ``z`` (rows): lambda = z / sum(z), the
        center where z = 0. Every simplex point is reached, and the rank-equivalent
        scalings of z lie on one ray (the map that generic optimizers search through)."""
        z = _as_vector(z, self.dim, "a unit-cube point")
        s = z.sum(axis=-1, keepdims=True)
        return np.where(s > 0, z / np.where(s > 0, s, 1.0), 1.0 / self.dim)

    def to_unit(self, lam):
        """A unit-cube point that :meth:`from_unit` maps to ``lam``: lambda / max(lambda)."""
        lam = _as_vector(lam, self.dim, "a simplex point")
        return lam / np.max(lam, axis=-1, keepdims=True)

    def check(self, lam, tol=1e-9):
        """Validate a simplex point (or rows of points): right length, finite, >= 0, sum 1
        (within tol). One compiled pass in the common case; the detailed checks (and their
        messages) only on failure."""
        lam = np.asarray(lam, dtype=np.float64)
        if lam.ndim in (1, 2) and lam.shape[-1] == self.dim and lam.size and \
                _rows_on_simplex(lam.reshape(-1, self.dim), tol, tol * self.dim):
            return lam
        lam = _as_vector(lam, self.dim, "a simplex point")
        if np.any(lam < -tol):
            raise ValueError(f"a simplex point must have coordinates >= 0, got {lam}")
        s = lam.sum(axis=-1)
        if np.any(np.abs(s - 1.0) > tol * self.dim):
            raise ValueError(f"a simplex point must sum to 1, got sum {s}")
        return lam

    # ------------------------------------------------------------------ points
    def center(self):
        """The barycenter (1/(d+1), ...). It maps to w = 0: a start, not a ranker."""
        return np.full(self.dim, 1.0 / self.dim)

    def sample(self, rng, n=None):
        """Uniform points (Dirichlet(1, ..., 1)); one point if ``n`` is None."""
        pts = rng.dirichlet(np.ones(self.dim), size=1 if n is None else n)
        return pts[0] if n is None else pts

    def grid_size(self, K):
        """Number of grid points with resolution K: C(K + d, d)."""
        self._check_resolution(K)
        return math.comb(int(K) + self.n_features, self.n_features)

    @staticmethod
    def _check_resolution(K):
        if int(K) != K or K < 1:
            raise ValueError(f"the grid resolution must be an integer >= 1, got {K!r}")

    def grid(self, K, chunk_size=65536, start=0):
        """Yield every point k/K (integer k >= 0, sum k = K) in chunks of rows.

        The points are integer compositions of K enumerated exactly (no float filtering),
        C(K + d, d) in all, in a fixed order; ``start`` skips that many points, so a
        streamed grid can resume where it stopped.
        """
        self._check_resolution(K)
        K = int(K)
        total = self.grid_size(K)
        if not 0 <= start <= total:
            raise ValueError(f"start must lie in [0, {total}], got {start}")
        if start == total:
            return
        c = self._unrank(K, start)
        while c[0] >= 0:
            out = np.empty((int(chunk_size), self.dim))
            w = _compositions(c, K, out)
            yield out[:w]

    def _unrank(self, K, index):
        """The composition at position ``index`` of the enumeration order of _compositions."""
        n = self.dim
        c = np.zeros(n, dtype=np.int64)
        remaining = K
        for i in range(n - 1):
            # the first coordinate runs from `remaining` down to 0
            for v in range(remaining, -1, -1):
                block = math.comb(remaining - v + (n - i - 2), n - i - 2)
                if index < block:
                    c[i] = v
                    remaining -= v
                    break
                index -= block
        c[n - 1] = remaining
        return c


class Box:
    """An axis-aligned box of real parameters, e.g. BM25's k1 in [0, 3] and b in [0, 1].

    Parameters
    ----------
    lower, upper : array-like
        Bounds, ``lower < upper`` in every coordinate.
    log : bool or array-like of bool, optional
        Coordinates searched on a log scale (need ``lower > 0``), e.g. Dirichlet mu.
    names : list of str, optional
        Parameter names, used in results and plots.
    integer : bool or array-like of bool, optional
        Coordinates that take whole numbers (RM3's feedback terms): the search moves
        continuously and :meth:`rounded` gives the point evaluated.
    """

    kind = "box"

    def __init__(self, lower, upper, log=None, names=None, integer=None):
        lower = np.atleast_1d(np.asarray(lower, dtype=np.float64))
        upper = np.atleast_1d(np.asarray(upper, dtype=np.float64))
        if lower.shape != upper.shape or lower.ndim != 1:
            raise ValueError(f"lower and upper must be 1-D of one length, got {lower.shape} "
                             f"and {upper.shape}")
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            raise ValueError("box bounds must be finite")
        if np.any(lower >= upper):
            i = int(np.flatnonzero(lower >= upper)[0])
            raise ValueError(f"lower >= upper in coordinate {i}: {lower[i]} >= {upper[i]}")
        log = np.zeros(len(lower), bool) if log is None else \
            np.broadcast_to(np.asarray(log, dtype=bool), lower.shape).copy()
        if np.any(log & (lower <= 0)):
            i = int(np.flatnonzero(log & (lower <= 0))[0])
            raise ValueError(f"coordinate {i} is on a log scale but its lower bound "
                             f"{lower[i]} is not > 0")
        if names is not None:
            names = [str(n) for n in names]
            if len(names) != len(lower):
                raise ValueError(f"{len(names)} names for {len(lower)} coordinates")
        integer = np.zeros(len(lower), bool) if integer is None else \
            np.broadcast_to(np.asarray(integer, dtype=bool), lower.shape).copy()
        if np.any(integer & (np.ceil(lower) > np.floor(upper))):
            i = int(np.flatnonzero(integer & (np.ceil(lower) > np.floor(upper)))[0])
            raise ValueError(f"integer coordinate {i} has no whole number in "
                             f"[{lower[i]}, {upper[i]}]")
        self.lower, self.upper, self.log, self.names = lower, upper, log, names
        self.integer = integer
        self.dim = len(lower)

    def rounded(self, x):
        """``x`` with its integer coordinates rounded to the nearest whole number in the
        box."""
        x = np.array(x, dtype=np.float64)
        if self.integer.any():
            r = np.clip(np.round(x), np.ceil(self.lower), np.floor(self.upper))
            x = np.where(self.integer, r, x)
        return x

    def __repr__(self):
        names = self.names or [f"x{i}" for i in range(self.dim)]
        parts = [f"{n} in [{lo:g}, {hi:g}]{' (log)' if lg else ''}{' (integer)' if it else ''}"
                 for n, lo, hi, lg, it in zip(names, self.lower, self.upper, self.log,
                                              self.integer)]
        return f"Box({', '.join(parts)})"

    def __eq__(self, other):
        return (isinstance(other, Box) and np.array_equal(self.lower, other.lower)
                and np.array_equal(self.upper, other.upper)
                and np.array_equal(self.log, other.log)
                and np.array_equal(self.integer, other.integer))

    def __hash__(self):
        return hash(("box", self.lower.tobytes(), self.upper.tobytes(), self.log.tobytes()))

    # unit-cube coordinates: linear, or linear in log(x) for log coordinates
    def to_unit(self, x):
        x = _as_vector(x, self.dim, "a box point")
        lo, hi = self.lower, self.upper
        lin = (x - lo) / (hi - lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            lg = (np.log(np.maximum(x, 1e-300)) - np.log(np.where(self.log, lo, 1.0))) / \
                (np.log(np.where(self.log, hi, 2.0)) - np.log(np.where(self.log, lo, 1.0)))
        return np.where(self.log, lg, lin)

    def from_unit(self, u):
        u = _as_vector(u, self.dim, "a unit-cube point")
        lo, hi = self.lower, self.upper
        lin = lo + u * (hi - lo)
        lg = np.exp(np.log(np.where(self.log, lo, 1.0)) +
                    u * (np.log(np.where(self.log, hi, 2.0)) - np.log(np.where(self.log, lo, 1.0))))
        # exp(log(hi)) may round past hi: the bounds hold exactly
        return np.clip(np.where(self.log, lg, lin), lo, hi)

    def project(self, x):
        """Clip to the box."""
        x = _as_vector(x, self.dim, "a box point")
        return np.clip(x, self.lower, self.upper)

    def check(self, x, tol=1e-12):
        x = _as_vector(x, self.dim, "a box point")
        span = self.upper - self.lower
        if np.any(x < self.lower - tol * span) or np.any(x > self.upper + tol * span):
            raise ValueError(f"{x} lies outside {self!r}")
        return x

    def center(self):
        """The middle (the geometric middle for log coordinates)."""
        return self.from_unit(np.full(self.dim, 0.5))

    def sample(self, rng, n=None):
        """Uniform points (uniform in log for log coordinates)."""
        u = rng.random((1 if n is None else n, self.dim))
        pts = self.from_unit(u)
        return pts[0] if n is None else pts

    def grid_size(self, points_per_dim):
        if int(points_per_dim) != points_per_dim or points_per_dim < 2:
            raise ValueError(f"points_per_dim must be an integer >= 2, got {points_per_dim!r}")
        return int(points_per_dim) ** self.dim

    def grid(self, points_per_dim, chunk_size=65536, start=0):
        """Yield the lattice of ``points_per_dim`` points per coordinate in chunks of rows
        (evenly spaced in unit coordinates, bounds included)."""
        total = self.grid_size(points_per_dim)
        n = int(points_per_dim)
        axis = np.linspace(0.0, 1.0, n)
        for a in range(start, total, int(chunk_size)):
            idx = np.arange(a, min(a + int(chunk_size), total))
            digits = np.empty((len(idx), self.dim), dtype=np.int64)
            rest = idx.copy()
            for j in range(self.dim - 1, -1, -1):
                digits[:, j] = rest % n
                rest //= n
            yield self.from_unit(axis[digits])


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("retrieval, spaces, smoothed", (
    later(_compositions, arr(i8), i8, arr(f8, 2)),
    first(_project_rows, arr(f8, 2), arr(f8, 2)),
    first(_rows_on_simplex, arr(f8, 2), f8, f8),
), phase=0)


def versions():
    """The compiled versions (numba kernels and argument types) a search of the simplex
    calls first (projections): what a command loads before a run."""
    return [(ex.kernel, ex.types) for ex in EXAMPLES if ex.when == "first"]
