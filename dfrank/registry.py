"""One registry for strategies: names → classes or configured instances (presets).

>>> from dfrank import strategies
>>> strategies.available()[:3]            # doctest: +SKIP
['ca', 'coordinate_ascent', 'fdsa']

Third-party packages add strategies through the entry-point group ``dfrank.strategies``
(``name = "package.module:StrategyClass"``); they are loaded the first time a name is
looked up. Every place that takes a strategy name also takes a :class:`Strategy` instance,
a Strategy class, or a plain function ``fn(objective, rng) -> point``.
"""

import difflib
import inspect

from .hyperparams import Int
from .metrics.registry import DEFAULT_METRIC
from .spaces import Box

__all__ = ["register_strategy", "register_family", "get_strategy", "strategy_names",
           "resolve", "strategy_class", "Strategy",
           "FunctionStrategy", "DEFAULT_STRATEGY", "BOX_STRATEGY", "DEFAULT_METRIC"]

ENTRY_POINT_GROUP = "dfrank.strategies"

# The one default for learning a linear ranker on data: maximize, dfrank fit and
# DirectRanker: smoothed_es on a few hundred queries, ca on many (strategies/auto.py; chosen
# by the time / quality tables in docs/decisions.md).
DEFAULT_STRATEGY = "auto"
# The default on a Box of parameters (maximize on a box objective, tune): a strategy that
# searches boxes with few evaluations.
BOX_STRATEGY = "pattern"


class Strategy:
    """Base class of every strategy.

    A constructor only stores keyword-only hyperparameters (no logic, not even
    validation); :meth:`run` validates and works. Capabilities are class attributes.

    Subclasses implement ``run(objective, rng, *, restart=0)`` which
    evaluates through ``objective`` (which counts, budgets and keeps the best point) and
    returns a dict of extra information (may be empty). ``restart`` is the index of the
    restart (the first restart of a multi-start strategy starts from the center).
    """

    name = None
    needs_linear_objective = False   # needs a LinearObjective (data, simplex)
    linear_reason = "for its exact line search"
    supports_box = True              # can search a Box
    reads_features = False           # reads the data's features in this process (not on
    #                                  data held by a cluster, dfrank.cluster)
    makes_line_searches = False      # calls objective.line (the line search's kernels)
    smoothed_kernels = None          # calls the smoothed surrogates' kernels: "ridge" (the
    #                                  ridge start), "gradient" (a smoothed metric's too)
    chooses = False                  # picks another strategy by the objective: pick(objective)
    # can keep a simplex search on its non-negative face (option nonnegative=True): what
    # fuse needs without signed weights
    searches_nonnegative = False
    # its restarts may run side by side in threads of one process: run() keeps nothing on
    # self and calls only thread-safe code (dfrank's kernels release the GIL)
    concurrent_restarts = False
    # can save its state between steps and continue from it (a checkpoint mid-restart)
    resumable = False
    default_restarts = 1
    # what each option may be (dfrank.hyperparams), declared once: merged along the
    # class's bases (declared()), checked by check_options, parsed by the command line
    hyperparameters = {"restarts": Int(1)}

    @classmethod
    def declared(cls):
        """Every option's kind, from this class and its bases (a subclass's wins)."""
        out = {}
        for klass in reversed(cls.__mro__):
            out.update(vars(klass).get("hyperparameters", {}))
        return out

    def check_options(self):
        """Check each option against its declared kind (ValueError naming it); what the
        objective decides is :meth:`check`'s."""
        kinds = self.declared()
        for name, value in self.get_params().items():
            if name in kinds:
                kinds[name].check(self.label, name, value)

    def get_params(self):
        """The hyperparameters, as given to (or defaulted by) the constructor."""
        sig = inspect.signature(type(self).__init__)
        return {k: getattr(self, k) for k in sig.parameters
                if k != "self" and sig.parameters[k].kind == inspect.Parameter.KEYWORD_ONLY}

    def set_params(self, **params):
        known = self.get_params()
        for k, v in params.items():
            if k not in known:
                raise _unknown_option(type(self), k)
            setattr(self, k, v)
        return self

    @property
    def n_restarts(self):
        return int(getattr(self, "restarts", self.default_restarts))

    def check(self, objective):
        """Validate hyperparameters against an objective; raise ValueError/TypeError."""
        self.check_options()
        if self.needs_linear_objective and not getattr(objective, "is_linear", False):
            raise TypeError(f"{self.label} needs a linear ranker objective (LinearObjective "
                            f"over a Simplex) {self.linear_reason}; got "
                            f"{type(objective).__name__} over {objective.space!r}")
        if self.reads_features and getattr(objective, "on_cluster", False):
            raise TypeError(f"{self.label} reads the features in this process, and these "
                            "are held by a Dask cluster's workers: run coordinate ascent "
                            "('ca', the default there) or a strategy that only evaluates "
                            "points (pso, random, grid, steepest_ascent)")
        if isinstance(objective.space, Box) and not self.supports_box:
            raise TypeError(f"{self.label} searches the simplex of a linear ranker; it "
                            f"cannot search {objective.space!r}")

    def run(self, objective, rng, *, restart=0):
        raise NotImplementedError

    def combine(self, objective, points):
        """One point of ``objective.space`` made from the restarts' best ``points`` (in
        restart order), or None (the default) to keep the best restart."""
        return None

    @property
    def label(self):
        return self.name or type(self).__name__

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


class FunctionStrategy(Strategy):
    """A plain function ``fn(objective, rng) -> point or None`` used as a strategy."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", "function")

    def get_params(self):
        return {}

    def run(self, objective, rng, *, restart=0):
        self.fn(objective, rng)
        return {}


_REGISTRY = {}     # name -> class or instance
_ALIASES = {}      # alias -> name
_FAMILIES = {}     # prefix -> factory(suffix) -> instance, for names "prefix:suffix"
_entry_points_loaded = False


def register_strategy(name, aliases=()):
    """Class (or instance) decorator registering a strategy under ``name``.

    Registering an instance makes a preset: a configured strategy under its own name.
    A name or alias already taken is an error.
    """
    def deco(obj):
        for n in (name, *aliases):
            if not isinstance(n, str) or not n:
                raise ValueError(f"a strategy name must be a non-empty string, got {n!r}")
            if n in _REGISTRY or n in _ALIASES:
                raise ValueError(f"strategy name {n!r} is already registered")
        _REGISTRY[name] = obj
        for a in aliases:
            _ALIASES[a] = name
        if isinstance(obj, type) and obj.name is None:
            obj.name = name
        return obj
    return deco


def register_family(prefix):
    """Decorator registering ``factory(suffix) -> Strategy instance`` for every name
    ``"prefix:suffix"`` not registered on its own (e.g. ``nevergrad:NAME`` for any of
    nevergrad's optimizers)."""
    def deco(factory):
        if prefix in _FAMILIES:
            raise ValueError(f"strategy family {prefix!r} is already registered")
        _FAMILIES[prefix] = factory
        return factory
    return deco


def _load_entry_points():
    """Register the strategies of installed plugins (the built-in ones register themselves
    when ``import dfrank`` imports :mod:`dfrank.strategies`)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY or ep.name in _ALIASES:
            continue
        try:
            obj = ep.load()
        except Exception as e:  # a broken plugin must not break dfrank
            import warnings
            warnings.warn(f"could not load strategy plugin {ep.name!r}: {e}")
            continue
        register_strategy(ep.name)(obj)


def strategy_names():
    """All strategy names and aliases, sorted."""
    _load_entry_points()
    return sorted(set(_REGISTRY) | set(_ALIASES))


def get_strategy(name):
    """The class (or preset instance) registered under ``name`` (or an alias)."""
    _load_entry_points()
    key = _ALIASES.get(name, name)
    prefix, _, suffix = str(name).partition(":")
    if key not in _REGISTRY and suffix and prefix in _FAMILIES:
        return _FAMILIES[prefix](suffix)
    if key not in _REGISTRY:
        from ._optional import strategy_extra

        extra = strategy_extra(name)
        if extra:
            raise ValueError(f"unknown strategy {name!r}: {extra}")
        close = difflib.get_close_matches(str(name), strategy_names(), n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"unknown strategy {name!r}.{hint} Known strategies: "
                         f"{', '.join(strategy_names())}")
    return _REGISTRY[key]


def _unknown_option(cls, option):
    known = list(inspect.signature(cls.__init__).parameters)
    known = [k for k in known if k != "self"]
    close = difflib.get_close_matches(option, known, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return TypeError(f"{getattr(cls, 'name', None) or cls.__name__} has no option "
                     f"{option!r}.{hint} Its options: {', '.join(known) or '(none)'}")


def resolve(spec, **options):
    """A ready :class:`Strategy` from a name, class, instance or function, with options:
    the one place a strategy's name becomes the instance that runs. What
    :func:`get_strategy` returned for a name may be given instead of the name (a preset
    instance is then copied, as for its name)."""
    import copy

    if isinstance(spec, str):
        spec = get_strategy(spec)
    if isinstance(spec, type) and issubclass(spec, Strategy):
        return _construct(spec, options)
    if isinstance(spec, Strategy):   # a registered preset is copied, then overridden
        if options or any(spec is v for v in _REGISTRY.values()):
            return copy.deepcopy(spec).set_params(**options)
        return spec
    if callable(spec):
        if options:
            raise TypeError(f"options {sorted(options)} cannot be passed to a function "
                            "strategy; bind them yourself (functools.partial)")
        return FunctionStrategy(spec)
    raise TypeError(f"a strategy is a name, a Strategy class or instance, or a function; "
                    f"got {spec!r}")


def strategy_class(spec):
    """The class of a strategy given by name (or alias), class or instance."""
    if isinstance(spec, str):
        spec = get_strategy(spec)
    return spec if isinstance(spec, type) else type(spec)


def _construct(cls, options):
    sig = inspect.signature(cls.__init__)
    passes_on = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    for k in options:
        if (k not in sig.parameters or k == "self") and not passes_on:
            raise _unknown_option(cls, k)
    return cls(**options)
