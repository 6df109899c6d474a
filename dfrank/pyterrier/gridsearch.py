"""``pt.GridSearch`` and ``pt.KFoldGridSearch`` searched by dfrank's strategies
(:func:`GridSearch`, :func:`KFoldGridSearch`)."""

import math

import numpy as np

from .._optional import need

pt = need("pyterrier", "dfrank.pyterrier")

from ..metrics.registry import RUN_METRIC  # noqa: E402
from ..registry import BOX_STRATEGY  # noqa: E402
from ..tuning.tuner import DEFAULT_BUDGET  # noqa: E402
from ..tuning.tuner import tune as tune_system  # noqa: E402
from .frames import need_columns, topics_qrels  # noqa: E402
from .retriever import WithIndexes  # noqa: E402

__all__ = ["GridSearch", "KFoldGridSearch", "RETURN_TYPES"]


# ------------------------------------------------------------------ tuning
RETURN_TYPES = ("opt_pipeline", "best_setting", "both", "tune_result")


def GridSearch(pipeline, params, topics, qrels, metric=RUN_METRIC, jobs=1, backend="joblib",
         verbose=False, batch_size=None, return_type="opt_pipeline", *,
         strategy=BOX_STRATEGY, budget=DEFAULT_BUDGET, seed=0, cache=None, folds=None,
         exact=False, **options):
    """``pt.GridSearch``'s call and return, searched by dfrank instead of a grid.

    Takes what ``pt.GridSearch(pipeline, params, topics, qrels, metric, jobs, backend,
    verbose, batch_size, return_type)`` takes, with PyTerrier's names (``jobs``: runs of a
    batch in parallel, joblib's backend; ``verbose``: a progress bar; ``batch_size``: the
    topics transformed so many at a time), and returns what it returns: ``"opt_pipeline"``
    the pipeline with the best setting set; ``"best_setting"`` ``(best value, [(transformer,
    parameter, value)])``, the pipeline restored; ``"both"`` ``(pipeline, best value,
    setting)``; and dfrank's own ``"tune_result"``: ``(pipeline, TuneResult)``, with the
    history, the default and, with ``folds``, the cross-validated values.

    ``params`` is GridSearch's map ``{transformer: {"param": [values]}}``, read as dfrank
    searches: a list of numbers is the range between its least and largest value (where
    GridSearch tries only the values listed), on a log scale when the list is geometric
    (50, 100, 200, 400), whole numbers when they all are; a list of strings is a choice
    among them. ``metric`` a dfrank or ir_measures name (or measure), scored as trec_eval
    scores runs, on the topics given only (qrels of other topics are left out, with a
    note); ``strategy``, ``budget``, ``seed``, ``cache``, ``folds`` and ``**options`` as
    :func:`dfrank.tune`. ``exact=True`` tries exactly the listed values, every combination
    once, as GridSearch does (dfrank's ``grid`` over the settings in GridSearch's order; a
    tie goes to the first, as there, where ties are exact: see :func:`KFoldGridSearch`).
    """
    if return_type not in RETURN_TYPES:
        raise ValueError(f"return_type must be one of {', '.join(RETURN_TYPES)}, got "
                         f"{return_type!r}")
    if backend != "joblib":
        raise ValueError(f"backend {backend!r}: dfrank runs a batch's points through joblib "
                         "(joblib.parallel_config(backend='dask') sends them to a cluster)")
    if exact:
        slots, space, n = _exact_space(params)
        strategy, budget = "grid", n
        options = dict(options, resolution=n)
    else:
        slots, space = _space(params)
    initial = [(t, name, t.get_parameter(name)) for t, name, _, _ in slots]
    topics = _as_topics(topics)
    every = _qrels_topics(qrels)
    qrels = topics_qrels(qrels, topics, "tune")

    def set_point(p):
        for t, name, key, decode in slots:
            t.set_parameter(name, decode(p.get(key)))

    def run_fn(p):
        set_point(p)
        return _transform(pipeline, topics, batch_size)

    grid = [(name, list(values)) for ps in params.values() for name, values in ps.items()]
    system = (f"pyterrier: {_described(pipeline, params)} {[(n, k) for _, n, k, _ in slots]!r}"
              f" grid {grid!r} topics {_topics_digest(topics)}")
    try:
        res = tune_system(WithIndexes(run_fn) if jobs != 1 else run_fn, space, qrels,
                          metric, strategy=strategy, budget=budget,
                          seed=seed, n_jobs=jobs, cache=cache, folds=folds, system=system,
                          progress=verbose, **options)
    except BaseException:
        for t, name, value in initial:
            t.set_parameter(name, value)
        raise
    if every:   # pt.GridSearch's mean: every qrels topic, those not run counting 0
        res.qrels_value = sum(v for q, v in res.per_query.items() if q in every) / len(every)
    setting = [(t, name, decode(res.best_params.get(key))) for t, name, key, decode in slots]
    if return_type == "best_setting":
        for t, name, value in initial:
            t.set_parameter(name, value)
        return res.value, setting
    set_point(res.best_params)
    if return_type == "opt_pipeline":
        return pipeline
    return (pipeline, res.value, setting) if return_type == "both" else (pipeline, res)


def KFoldGridSearch(pipeline, params, topics_list, qrels, metric=RUN_METRIC, jobs=1,
                    backend="joblib", verbose=False, batch_size=None, **options):
    """``pt.KFoldGridSearch``'s call and return with :func:`tune` in each fold: for each
    topics frame of ``topics_list``, the pipeline is tuned on the others (``qrels`` one
    frame, or one per fold) and run on it. Returns ``(results of the held-out topics, one
    frame, [each fold's best setting])``, the transformers' parameters restored.

    With ``exact=True`` every setting of the grid is run once, on every topic, and each
    fold takes the setting best on its training topics, as ``pt.KFoldGridSearch`` chooses;
    a ``cache`` then holds those runs for every fold. A range search is a search per fold,
    each with a cache of its own (``cache/fold-K``).

    Ties: dfrank sums a setting's per-topic values exactly (``math.fsum``) and, among
    settings whose sums are exactly equal, takes the first in GridSearch's order.
    GridSearch takes the first of equal float means, each summed in ir_measures' order, so
    where two settings tie exactly a rounding can make it take a later one (P_10 on
    Cranfield's fold 3: PyTerrier (2.4, 0.75), dfrank (1.8, 0.75), both of the same mean).
    The settings and held-out results are PyTerrier's wherever no two settings tie exactly
    on a fold's training topics."""
    import os

    import pandas as pd

    if len(topics_list) < 2:
        raise ValueError(f"KFoldGridSearch needs two or more topics frames, got "
                         f"{len(topics_list)}")
    if isinstance(qrels, (list, tuple)):
        if len(qrels) != len(topics_list):
            raise ValueError(f"{len(qrels)} qrels frames for {len(topics_list)} folds")
        qrels_of = lambda k: pd.concat([q for i, q in enumerate(qrels) if i != k])  # noqa: E731
        every_qrels = pd.concat(list(qrels))
    else:   # one frame judging every fold's topics: tune keeps those of its topics
        qrels_of = lambda k: qrels  # noqa: E731
        every_qrels = qrels
    slots = _exact_space(params)[0] if options.get("exact") else _space(params)[0]
    initial = [(t, name, t.get_parameter(name)) for t, name, _, _ in slots]
    results, settings = [], []
    try:
        if options.get("exact"):
            choose = _exact_folds(pipeline, params, topics_list, every_qrels, metric, jobs,
                                  backend, verbose, batch_size, options, slots)
        for k, held_out in enumerate(topics_list):
            for t, name, value in initial:
                t.set_parameter(name, value)
            if options.get("exact"):
                setting = choose(k)
                for t, name, value in setting:
                    t.set_parameter(name, value)
            else:
                train = pd.concat([f for i, f in enumerate(topics_list) if i != k])
                cache = options.get("cache")
                fold_options = dict(options, cache=None if cache is None else
                                    os.path.join(os.fspath(cache), f"fold-{k + 1}"))
                _, _, setting = GridSearch(pipeline, params, train, qrels_of(k), metric, jobs,
                                     backend, verbose, batch_size, "both", **fold_options)
            results.append(_transform(pipeline, held_out, batch_size))
            settings.append(setting)
    finally:
        for t, name, value in initial:
            t.set_parameter(name, value)
    return pd.concat(results, ignore_index=True), settings


def _exact_folds(pipeline, params, topics_list, qrels, metric, jobs, backend, verbose,
                 batch_size, options, slots):
    """Every setting run once on every topic; a function: fold k -> the setting best on
    the other folds' topics (by their sum, taken exactly, as GridSearch's mean over one
    qrels: the same argmax; the first of exactly equal ones, see :func:`KFoldGridSearch`)."""
    import warnings

    import pandas as pd

    every = pd.concat(list(topics_list))
    with warnings.catch_warnings():   # the folds score their own topics below
        warnings.filterwarnings("ignore", message=".*other topics are left out")
        _, res = GridSearch(pipeline, params, every, qrels, metric, jobs, backend, verbose,
                      batch_size, "tune_result", **options)
    qids = [str(q) for q in res.qids]
    runs = {int(round(h["params"]["setting"])): np.asarray(h["per_query"], np.float64)
            for h in res.history if h.get("status") == "ok"}

    def choose(k):
        train = set().union(*[set(f["qid"].astype(str)) for i, f in
                              enumerate(topics_list) if i != k])
        rows = np.array([q in train for q in qids])
        best = max(sorted(runs), key=lambda i: (math.fsum(runs[i][rows]), -i))
        return [(t, name, decode(best)) for t, name, _, decode in slots]
    return choose


def _topics_digest(topics):
    """A digest of a topics frame's columns and rows (the queries a pipeline runs): a tune
    cache of other query texts is refused."""
    import hashlib

    import pandas as pd

    h = hashlib.sha256(repr(list(topics.columns)).encode())
    h.update(pd.util.hash_pandas_object(topics.astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def _described(pipeline, params):
    """The pipeline as the tune cache knows it: its repr with each tuned parameter at the
    first value of its grid (whatever an earlier tuning left there), and without the memory
    addresses of default reprs (``<... object at 0x7f...>``), which change in every
    process. A transformer's repr is what the cache sees of it: one whose settings matter
    should show them."""
    import re

    tuned = [(t, name, t.get_parameter(name), list(values)[0])
             for t, ps in params.items() for name, values in ps.items()]
    try:
        for t, name, _, first in tuned:
            t.set_parameter(name, first)
        text = repr(pipeline)
    finally:
        for t, name, value, _ in reversed(tuned):
            t.set_parameter(name, value)
    return re.sub(r" at 0x[0-9a-fA-F]+>", ">", text)


def _exact_space(params):
    """GridSearch's map as one choice among its settings, in GridSearch's order (the
    product of the lists, the first parameter slowest): the slots ``(transformer, param,
    "setting", decode)``, the space ``{"setting": (0, n - 1, "int")}`` and n."""
    import itertools

    lists = [(t, name, list(values)) for t, ps in params.items()
             for name, values in ps.items()]
    if any(not v for _, _, v in lists):
        raise ValueError("every parameter of an exact grid needs one value or more")
    combos = list(itertools.product(*[v for _, _, v in lists]))
    if len(combos) < 2:
        raise ValueError("an exact grid needs two settings or more")
    slots = [(t, name, "setting", lambda i, j=j: combos[int(round(float(i)))][j])
             for j, (t, name, _) in enumerate(lists)]
    return slots, {"setting": (0, len(combos) - 1, "int")}, len(combos)


def _space(params):
    """GridSearch's ``{transformer: {param: [values]}}`` as a dfrank space: the slots
    ``(transformer, param, key, decode)`` and ``{key: (low, high[, "log" | "int"])}``. A
    list of one value (or of one value repeated) fixes its parameter there, as GridSearch
    reads it: its slot's key is None, outside the space."""
    slots, space = [], {}
    for t, ps in params.items():
        for name, values in ps.items():
            vals = list(values)
            key = f"p{len(slots)}_{name}"
            if len(vals) >= 1 and all(v == vals[0] and type(v) is type(vals[0])
                                      for v in vals):
                slots.append((t, name, None, lambda _, v=vals[0]: v))
                continue
            if vals and all(isinstance(v, str) for v in vals):
                choices = list(dict.fromkeys(vals))
                if len(choices) < 2:
                    raise ValueError(f"{name}: a choice needs two different values, got "
                                     f"{vals!r}")
                space[key] = (0, len(choices) - 1, "int")
                slots.append((t, name, key, lambda i, c=choices: c[int(i)]))
                continue
            if not vals or not all(isinstance(v, (int, float, np.integer, np.floating))
                                   and not isinstance(v, bool) for v in vals):
                raise ValueError(f"{name}: dfrank searches a range of numbers or a choice "
                                 f"among strings; got {vals!r}")
            integer = all(isinstance(v, (int, np.integer)) for v in vals)
            lo, hi = float(min(vals)), float(max(vals))
            if lo == hi:
                raise ValueError(f"{name}: a range needs two different values, got {vals!r}")
            space[key] = (lo, hi) + (("int",) if integer else ("log",) if _geometric(vals)
                                     else ())
            slots.append((t, name, key, int if integer else float))
    if not space:
        raise ValueError("every parameter has one value: nothing to search (give two values "
                         "or more to one of them)")
    return slots, space


def _geometric(values):
    """Whether three or more positive values grow by one ratio (50, 100, 200, ...)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    if len(v) < 3 or v[0] <= 0:
        return False
    ratios = v[1:] / v[:-1]
    return bool(np.all(ratios > 1.0) and np.allclose(ratios, ratios[0], rtol=0.05))


def _as_topics(topics):
    need_columns(topics, ("qid",), "the topics")
    return topics


def _qrels_topics(qrels):
    """The topics a qrels frame judges (an empty set for other forms)."""
    import pandas as pd

    if not isinstance(qrels, pd.DataFrame) or "qid" not in qrels.columns:
        return set()
    return set(qrels["qid"].astype(str))


def _transform(pipeline, topics, batch_size):
    """The pipeline's results on ``topics``, ``batch_size`` topics at a time if given."""
    import pandas as pd

    if not batch_size:
        return pipeline.transform(topics)
    parts = [pipeline.transform(topics.iloc[i:i + batch_size])
             for i in range(0, len(topics), batch_size)]
    return pd.concat(parts, ignore_index=True)
