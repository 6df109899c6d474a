"""Metric names → :class:`Metric` specifications.

dfrank's names are lower-case, ``family`` or ``family@k``: ``ndcg@10``, ``map``, ``p@5``...
Users add metrics with :func:`register`; they then work everywhere a built-in name does.

One rule decides what a name means, everywhere dfrank takes a metric: **a name in lower
case is dfrank's** (``ndcg@10``: gain 2^l - 1, the LETOR/RankLib convention; ``gain=
"linear"`` for trec_eval's); **a name with a capital letter or parentheses is
ir_measures'** (``nDCG@10``: linear gain, as trec_eval and ir_measures compute it;
``AP(rel=2)``, ``P@5``, ``R@100``, ``RR``, ``Rprec``), and so is an ir_measures measure
object. An ir_measures measure runs on dfrank's kernels when they compute exactly what
ir_measures does (nDCG, AP, P, R, RR, Rprec, with their cut-offs and ``rel``); others are
refused where dfrank optimizes, and computed by ir_measures itself in ``dfrank trec-eval``.
"""

import difflib
import re
from dataclasses import dataclass, field, replace

import numpy as np

from . import _kernels
from ._rank import TIES

__all__ = ["Metric", "get_metric", "metric_names", "register_metric", "describe",
           "DEFAULT_METRIC", "DEFAULT_TIES",
           "RUN_METRIC", "is_ir_measure", "from_ir_measure"]

# The metric maximized when none is named: on LETOR-style data (the LETOR/RankLib
# convention) and on TREC runs (fuse, tune: trec_eval's own headline measure).
DEFAULT_METRIC = "ndcg@10"
DEFAULT_TIES = "pessimistic"   # the default tie rule: an optimizer cannot profit from ties
RUN_METRIC = "map"
# the tie policy of runs scored as trec_eval scores them: input order, the rows of each
# query being laid out in docno-descending order (dfrank.io.forms), trec_eval's order
# among equal scores
RUN_TIES = "stable"

GAINS = {"exp": _kernels.GAIN_EXP, "linear": _kernels.GAIN_LINEAR}
EMPTY = ("zero", "one", "skip")


@dataclass(frozen=True)
class _Family:
    code: int
    cutoff: str          # "required", "optional" or "none"
    binary: bool         # relevance = label >= rel_threshold
    expected: bool       # supports ties="expected"
    doc: str
    fn: object = None    # user metric: njit function (labels_in_rank_order, k) -> float


@dataclass(frozen=True)
class Metric:
    """A metric with its options, ready to be bound to data.

    Attributes
    ----------
    name : str
        Canonical name, e.g. ``"ndcg@10"``.
    family : str
        ``"ndcg"``, ``"map"``, ... or a user-registered name.
    k : int
        Cut-off; 0 means the whole list.
    gain : {"exp", "linear"}
        Graded gain 2**rel - 1 (LETOR/RankLib) or rel (trec_eval).
    rel_threshold : float
        Binary metrics count a document relevant when its label >= rel_threshold.
    empty : {"zero", "one", "skip"}
        Value of a query the metric cannot score (no relevant document; for Kendall's tau
        no pair of different labels). ``"skip"`` leaves it out of the mean (NaN per query).
    max_grade : float or None
        ERR's top grade (default: the largest label in the data).
    """

    name: str
    family: str
    k: int = 0
    gain: str = "exp"
    rel_threshold: float = 1.0
    empty: str = "zero"
    max_grade: float = None
    _fam: _Family = field(default=None, repr=False, compare=False)

    @property
    def code(self):
        return self._fam.code

    @property
    def binary(self):
        return self._fam.binary

    @property
    def is_custom(self):
        return self._fam.fn is not None

    @property
    def fn(self):
        return self._fam.fn

    def supports_ties(self, ties):
        return ties != "expected" or self._fam.expected

    @property
    def key(self):
        """Hashable identity of the computation (used to cache per-query constants)."""
        return (self.family, self.k, self.gain, self.rel_threshold, self.empty,
                self.max_grade, id(self._fam.fn) if self._fam.fn is not None else None)

    @property
    def doc(self):
        """The family's formula and conventions."""
        return self._fam.doc

    @property
    def label(self):
        """The name, with the gain when a dfrank name of the DCG family uses the linear one
        (``"ndcg@10 (linear gain)"``): what results and tables print."""
        if self.family in ("ndcg", "dcg") and self.gain == "linear" and \
                not is_ir_measure(self.name):
            return f"{self.name} (linear gain)"
        return self.name

    @property
    def bounds(self):
        """(lowest, highest) value one query can take: what a value read from elsewhere (a
        tune cache) is checked against. Unknown for a user metric."""
        if self.is_custom:
            return (-np.inf, np.inf)
        if self.family == "dcg":
            return (0.0, np.inf)
        if self.family == "kendall_tau":
            return (-1.0, 1.0)
        return (0.0, 1.0)


_FAMILIES = {}
_ALIASES = {}


def _add(name, fam, aliases=()):
    _FAMILIES[name] = fam
    for a in aliases:
        _ALIASES[a] = name


_add("ndcg", _Family(_kernels.NDCG, "optional", False, True,
     "NDCG@k = DCG@k / IDCG@k, DCG@k = sum_{r<=k} gain(l_r) / log2(1 + r), gain = 2^l - 1 "
     "(or l with gain='linear'); IDCG from the query's own labels (Jarvelin & Kekalainen "
     "2002; the LETOR/RankLib convention). 'ndcg' without @k uses the whole list."))
_add("dcg", _Family(_kernels.DCG, "optional", False, True,
     "DCG@k = sum_{r<=k} gain(l_r) / log2(1 + r), not normalized."))
_add("map", _Family(_kernels.AP, "optional", True, True,
     "AP = (1/R) sum_{relevant d} P@rank(d), R = number of relevant documents of the query; "
     "the mean over queries is MAP. AP@k (map@k, ap@k) keeps the relevant documents ranked "
     "<= k and still divides by R, as trec_eval's map_cut."), aliases=("ap",))
_add("p", _Family(_kernels.PREC, "required", True, True,
     "P@k = (relevant documents in the top k) / k; divides by k even when the list is "
     "shorter (trec_eval; RankLib divides by min(k, m))."), aliases=("precision", "prec"))
_add("recall", _Family(_kernels.RECALL, "required", True, True,
     "recall@k = (relevant documents in the top k) / R."))
_add("rr", _Family(_kernels.RR, "optional", True, True,
     "RR@k = 1 / rank of the first relevant document if it is <= k, else 0; 'mrr' is RR "
     "over the whole list, averaged over queries (Voorhees 1999)."), aliases=("mrr",))
_add("err", _Family(_kernels.ERR, "optional", False, False,
     "ERR@k = sum_{r<=k} (R_r / r) prod_{i<r} (1 - R_i), R = (2^l - 1) / 2^g_max "
     "(Chapelle et al., CIKM 2009); g_max defaults to the largest label in the data."))
_add("rprec", _Family(_kernels.RPREC, "none", True, True,
     "R-precision = P@R, R = number of relevant documents of the query."),
     aliases=("r-precision",))
_add("kendall_tau", _Family(_kernels.KTAU, "none", False, True,
     "Kendall's tau between the ranking and the labels over pairs with different labels: "
     "(concordant - discordant) / pairs; with ties='expected' a tied pair counts 0."),
     aliases=("tau", "ktau"))

_NAME = re.compile(r"^\s*([a-z_][a-z0-9_\-]*)\s*(?:@\s*(\d+))?\s*$")


def metric_names():
    """Names of all metrics, built-in and registered, with ``@k`` where a cut-off applies."""
    out = []
    for name, fam in sorted(_FAMILIES.items()):
        if fam.cutoff == "required":
            out.append(f"{name}@k")
        elif fam.cutoff == "optional":
            out.extend([name, f"{name}@k"])
        else:
            out.append(name)
    return out


def _unknown(text):
    import importlib.util

    known = sorted(set(_FAMILIES) | set(_ALIASES))
    close = difflib.get_close_matches(text.split("@")[0], known, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    extra = "" if importlib.util.find_spec("ir_measures") else (
        " trec_eval's and PyTerrier's names (ndcg_cut_10, P_10, recip_rank) are read through "
        "ir_measures: pip install 'dfrank[ir_measures]'.")
    return ValueError(f"unknown metric {text!r}.{hint} Known metrics: {', '.join(metric_names())} "
                      "(dfrank's names are lower case, ir_measures' have capitals; register "
                      f"your own with dfrank.metrics.register).{extra}")


def get_metric(name, *, gain="exp", rel_threshold=1.0, empty="zero", max_grade=None):
    """The :class:`Metric` for a name such as ``"ndcg@10"`` with the given options.

    A :class:`Metric` passes through (options given explicitly override its own); an
    ir_measures measure, or its name (see the module docstring), becomes the Metric that
    computes the same values.
    """
    if isinstance(name, Metric):
        return _validated(name)
    if is_ir_measure(name):
        return from_ir_measure(name)
    if hasattr(name, "py_func"):  # an @njit function fn(labels, k) used directly
        fam = _Family(-1, "none", False, False, name.__doc__ or name.__name__, name)
        return _validated(Metric(name.__name__, name.__name__, 0, gain, rel_threshold, empty,
                                 max_grade, fam))
    if not isinstance(name, str):
        raise TypeError(f"a metric is a name like 'ndcg@10' or a Metric, got {name!r}")
    m = _NAME.match(name)
    family = _ALIASES.get(m.group(1), m.group(1)) if m else None
    if family not in _FAMILIES:
        trec = _trec_measure(name)
        if trec is not None:
            return from_ir_measure(trec)
        raise _unknown(name)
    k = m.group(2)
    fam = _FAMILIES[family]
    if k is None:
        if fam.cutoff == "required":
            raise ValueError(f"metric {name!r} needs a cut-off, e.g. '{family}@10'")
        k = 0
    else:
        if fam.cutoff == "none":
            raise ValueError(f"metric {family!r} takes no cut-off, got {name!r}")
        k = int(k)
        if k < 1:
            raise ValueError(f"the cut-off of {name!r} must be >= 1")
    canon = family if k == 0 else f"{family}@{k}"
    if family == "rr" and k == 0:
        canon = "mrr"
    return _validated(Metric(canon, family, k, gain, rel_threshold, empty, max_grade, fam))


# ir_measures' measure -> (dfrank family, whether its cut-off is required, its parameters)
_IR_MEASURES = {"nDCG": ("ndcg", False, {"cutoff", "dcg"}),
                "AP": ("map", False, {"cutoff", "rel"}),
                "P": ("p", True, {"cutoff", "rel"}),
                "R": ("recall", True, {"cutoff", "rel"}),
                "RR": ("rr", False, {"cutoff", "rel"}),
                "Rprec": ("rprec", False, {"rel"})}


def _trec_measure(name):
    """ir_measures' measure for a trec_eval measure name as PyTerrier takes metric strings
    (``ndcg_cut_10``, ``P_10``, ``recip_rank``, ``map_cut_10``, ``recall_100``: read by
    ir_measures' own ``parse_trec_measure``), or None (not one, or without ir_measures)."""
    import importlib

    try:
        irm = importlib.import_module("ir_measures")
        found = irm.parse_trec_measure(name)
    except Exception:      # ImportError, or ir_measures' own "unknown measure"
        return None
    return found[0] if len(found) == 1 else None


def is_ir_measure(name):
    """Whether ``name`` is ir_measures' (a measure object, or a name with a capital letter
    or parentheses) rather than dfrank's."""
    if isinstance(name, str):
        return name != name.lower() or "(" in name
    return hasattr(name, "NAME") and hasattr(name, "params")


def from_ir_measure(measure):
    """The :class:`Metric` computing exactly ir_measures' ``measure`` (an object or its
    name); a ValueError names what dfrank's kernels cannot compute."""
    import importlib

    text = str(measure)
    if isinstance(measure, str):
        try:
            irm = importlib.import_module("ir_measures")
        except ImportError:
            raise ValueError(f"{measure!r} is an ir_measures name (dfrank's own names are "
                             f"lower case, e.g. {measure.lower()!r}); ir_measures' names "
                             "need pip install 'dfrank[ir_measures]'") from None
        try:
            measure = irm.parse_measure(measure)
        except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as e:
            measure = _trec_measure(text)
            if measure is None:
                raise ValueError(f"unknown metric {text!r}: not one of dfrank's (lower case: "
                                 f"{', '.join(metric_names())}), nor an ir_measures measure "
                                 f"({e}), nor a trec_eval measure name") from None
        text = str(measure)
    entry = _IR_MEASURES.get(measure.NAME)
    params = dict(measure.params)
    if entry is None or set(params) - entry[2] or \
            params.get("dcg", "log2") not in ("log2", "exp-log2"):
        known = ", ".join(f"{n}" for n in _IR_MEASURES)
        raise ValueError(f"ir_measures' {text} is not one dfrank's kernels compute exactly "
                         f"(those are {known}, with cut-offs and rel=, and nDCG's dcg); "
                         "'dfrank trec-eval -m' evaluates any ir_measures measure")
    family, needs_cut, _ = entry
    k = int(params.get("cutoff") or 0)
    if needs_cut and not k:
        raise ValueError(f"ir_measures' {text} needs a cut-off, e.g. {measure.NAME}@10")
    gain = "exp" if params.get("dcg") == "exp-log2" else "linear"
    m = _validated(Metric(text, family, k, gain, float(params.get("rel", 1)), "zero", None,
                          _FAMILIES[family]))
    return m


def _validated(m):
    if m.gain not in GAINS:
        raise ValueError(f"gain must be one of {sorted(GAINS)}, got {m.gain!r}")
    if m.empty not in EMPTY:
        raise ValueError(f"empty must be one of {EMPTY}, got {m.empty!r}")
    if not (m.rel_threshold > 0):
        raise ValueError(f"rel_threshold must be > 0, got {m.rel_threshold!r}")
    if m.max_grade is not None and not (m.max_grade > 0):
        raise ValueError(f"max_grade must be > 0, got {m.max_grade!r}")
    return m


def with_options(metric, /, **options):
    """A copy of ``metric`` with some options changed (unknown options are an error)."""
    allowed = {"gain", "rel_threshold", "empty", "max_grade"}
    bad = set(options) - allowed
    if bad:
        hint = (" (the metric itself is not an option: pass it as metrics=, or first after "
                "the data)") if bad & {"metric", "metrics"} else ""
        raise TypeError(f"unknown metric option(s) {sorted(bad)}; known: {sorted(allowed)}"
                        + hint)
    return _validated(replace(metric, **options))


def register_metric(name, fn, *, cutoff=False, doc=None):
    """Register a user metric written as a numba ``@njit`` function.

    Parameters
    ----------
    name : str
        Lower-case name (letters, digits, ``_``), not already taken.
    fn : numba dispatcher
        ``fn(labels, k) -> float``: ``labels`` holds the query's labels in ranked order
        (best first, ties ordered by the tie policy), ``k`` the cut-off (0 if none).
        It sees every query, including those without relevant documents.
    cutoff : bool
        Whether ``name@k`` is accepted (``name`` alone then passes k = 0).
    doc : str, optional
        Formula and conventions, shown by :func:`describe`.

    ``ties="expected"`` is not available for user metrics.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise ValueError(f"a metric name is lower-case letters, digits and '_', got {name!r}")
    if name in _FAMILIES or name in _ALIASES:
        raise ValueError(f"metric {name!r} is already registered")
    if not hasattr(fn, "py_func"):
        raise TypeError(f"register needs a numba @njit function fn(labels, k) -> float, "
                        f"got {fn!r}")
    _FAMILIES[name] = _Family(-1, "optional" if cutoff else "none", False, False,
                              doc or (fn.__doc__ or f"user metric {name}"), fn)
    return fn


def unregister(name):
    """Remove a user metric (built-in metrics cannot be removed)."""
    fam = _FAMILIES.get(name)
    if fam is None or fam.fn is None:
        raise ValueError(f"{name!r} is not a registered user metric")
    del _FAMILIES[name]


def describe(name):
    """The formula and conventions of a metric."""
    return get_metric(name).doc


def tie_code(ties):
    if ties not in TIES:
        raise ValueError(f"ties must be one of {sorted(TIES)}, got {ties!r}")
    return TIES[ties]
