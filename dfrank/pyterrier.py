"""dfrank inside PyTerrier pipelines (the ``pyterrier`` extra; nothing here needs Java).

* :class:`Retriever` -- dfrank's built-in engine (:mod:`dfrank.ir`: BM25, Dirichlet query
  likelihood, SDM) as a retriever, or as a re-ranker of a result frame (what ``**``, a
  feature union, needs); its parameters (``k1``, ``b``, ``mu``, ``w_t``...) are
  PyTerrier parameters, so ``pt.GridSearch`` and :func:`tune` set them.
* :class:`LearnedStage` -- a learned linear ranker (:class:`dfrank.DirectRanker`) fitted on
  a result frame with a ``features`` column, grouped by ``qid``, the validation topics
  choosing among restarts as dfrank uses them. :func:`ltr` makes one, and refuses
  PyTerrier's ``form="regression"``, which would pass no query groups.
* :func:`tune` -- a drop-in for ``pt.GridSearch``: the same pipeline, parameter map,
  topics, qrels and measure, searched by dfrank's strategies (:func:`dfrank.tune`: budget,
  seed, parallel runs, a cache, cross-validation).
* :class:`Fusion` -- the linear fusion of several pipelines' results, learned by
  :func:`dfrank.fuse` (normalizations, non-negative weights) and applied at ``transform``.

Result frames hold ``qid, docno, score, rank`` (and ``query``); qrels ``qid, docno, label``.
"""

import math

import numpy as np

from ._optional import need

# first, so that a missing PyTerrier is named before scikit-learn (the estimator's need)
pt = need("pyterrier", "dfrank.pyterrier")

from . import ir  # noqa: E402
from .estimator import DirectRanker  # noqa: E402
from .fusion import FusionResult, fuse, fusion_values  # noqa: E402
from .metrics.registry import RUN_METRIC  # noqa: E402
from .metrics.registry import get_metric  # noqa: E402
from .registry import BOX_STRATEGY  # noqa: E402
from .tuning import DEFAULT_BUDGET  # noqa: E402
from .tuning import tune as tune_system  # noqa: E402
from .errors import DataFormatError  # noqa: E402
from .files import VERSION, jsonable, read_json, write_json_atomic  # noqa: E402
from .result import LinearRanker  # noqa: E402

STAGE_FORMAT = "dfrank.pyterrier.stage"
FUSION_STAGE_FORMAT = "dfrank.pyterrier.fusion"

__all__ = ["Retriever", "LearnedStage", "ltr", "tune", "KFoldGridSearch", "Fusion",
           "index_of"]


def _empty_result(inp, drop=()):
    """The empty result frame of an empty input (its columns' types kept, as PyTerrier's
    inspection of a pipeline needs)."""
    import pandas as pd

    kinds = {"docno": object, "score": np.float64, "rank": np.int64}
    return pd.DataFrame({c: (inp[c] if c in inp.columns else pd.Series(dtype=kinds[c]))
                         for c in _with_ranks([c for c in inp.columns if c not in drop])})


def _need_columns(frame, columns, what):
    """Refuse a frame that lacks one of ``columns``, naming the frame and what it has."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: no {' or '.join(map(repr, missing))} column (the "
                         f"columns: {', '.join(map(str, frame.columns)) or 'none'})")


def _topics(frame, what="the topics"):
    """``{qid: query}`` of a topics or result frame; a qid with two query texts is
    refused (which one to search would be a guess)."""
    _need_columns(frame, ("qid", "query"), what)
    pairs = frame[["qid", "query"]].astype(str).drop_duplicates()
    twice = pairs["qid"].duplicated(keep=False).to_numpy()
    if twice.any():
        q = pairs["qid"][twice].iloc[0]
        texts = pairs["query"][pairs["qid"] == q].tolist()
        raise ValueError(f"{what}: qid {q!r} has {len(texts)} query texts ({texts[0]!r}, "
                         f"{texts[1]!r}); give each topic its own qid")
    return dict(zip(pairs["qid"], pairs["query"]))


def _frame(fused, topics=None):
    """A PyTerrier result frame of a :class:`~dfrank.fusion.FusedRun` (ranks from 0, each
    query ranked as trec_eval ranks it; the topics' other columns kept)."""
    res = fused.to_dataframe()
    if topics is not None:
        extra = [c for c in topics.columns if c not in res.columns]
        if extra:
            res = res.merge(topics[["qid"] + extra].astype({"qid": str}), on="qid",
                            how="left")
    return res


class Retriever(pt.Transformer):
    """dfrank's built-in engine as a PyTerrier retriever.

    Parameters
    ----------
    collection : dict docno -> text, a pandas DataFrame (``docno``, ``text``), a corpus
        iterator (dicts with ``docno`` and ``text``), a TSV / JSON-lines collection file, a
        Cranfield or CISI folder (as :mod:`dfrank.ir` reads them), or an
        :class:`dfrank.ir.Index`. It is indexed once per process and the index shared by
        every Retriever of the same collection (:func:`index_of`); a pickled Retriever
        refers to its collection's path (or, for one given in memory, needs
        :meth:`attach` after unpickling) and holds none of it.
    model : "bm25", "ql" or "sdm"
    num_results : documents per query (retrieval; a re-ranker keeps its input's)
    **params : the model's parameters (their defaults otherwise): bm25 ``k1``, ``b``; ql
        ``mu``; sdm ``w_t``, ``w_o``, ``w_u``

    Given topics (``qid, query``) it retrieves; given a result frame (with ``docno``) it
    scores those documents, as a feature of ``**`` (a document holding no query term ranks
    after every one that does, one below the query's lowest score).
    """

    def __init__(self, collection, model="bm25", num_results=1000, **params):
        if model not in ir.MODELS:
            raise ValueError(f"unknown model {model!r}; the engine has {', '.join(ir.MODELS)}")
        self._index, key = _indexed(collection)
        self.collection = _collection_key(collection, key)
        self._digest = key or self._index.digest()   # what its runs are made from
        self.model = model
        self.num_results = num_results
        for spec in ir.MODELS.values():   # every model's defaults: "model" can be tuned too
            for name, (default, *_rest) in spec.items():
                setattr(self, name, default)
        for name in ir.MODELS[model]:
            setattr(self, name, params.pop(name, getattr(self, name)))
        if params:
            raise ValueError(f"{model} has no parameter {sorted(params)[0]!r} (it has "
                             f"{', '.join(ir.MODELS[model])})")
        self._engines = {}

    @property
    def index(self):
        """The collection's :class:`dfrank.ir.Index`, shared with every Retriever of the
        same collection (see :func:`index_of`)."""
        if self._index is None:
            if isinstance(self.collection, str):
                self._index = index_of(self.collection)
            elif self.collection.get("digest") in _INDEXES:   # sent along (tune's workers)
                self._index = _INDEXES[self.collection["digest"]]
            else:
                raise ValueError(
                    "this Retriever was unpickled without its collection, which was given "
                    f"in memory ({self.collection['what']}), not as a path: give it again "
                    "with retriever.attach(collection)")
        return self._index

    def attach(self, collection):
        """Give an unpickled Retriever its collection (the one it was made with)."""
        index = index_of(collection)
        want = self.collection.get("documents") if isinstance(self.collection, dict) else None
        if want is not None and len(index) != want:
            raise ValueError(f"this Retriever was made with a collection of {want} documents, "
                             f"not {len(index)}")
        self._index, self._engines = index, {}
        return self

    def __getstate__(self):
        """A pickle refers to the collection (its path, or what it was and its digest) and
        holds none of it: the index is shared, rebuilt from the path where it is unpickled;
        :func:`tune`'s workers (``jobs > 1``) get the indexes of collections given in
        memory along with their tasks."""
        state = self.__dict__.copy()
        state["_index"], state["_engines"] = None, {}
        return state
    def __repr__(self):
        ps = ", ".join(f"{k}={getattr(self, k)!r}" for k in ir.MODELS[self.model])
        return (f"dfrank.pyterrier.Retriever({self.model}, {ps}, "
                f"collection={self._digest.split(':')[-1][:12]})")

    @property
    def params(self):
        return {k: float(getattr(self, k)) for k in ir.MODELS[self.model]}

    def transform_inputs(self):
        return [["qid", "query"]]

    def transform_outputs(self, input_columns):
        return _with_ranks(input_columns)

    def _engine(self, topics):
        key = tuple(sorted(topics.items()))
        eng = self._engines.get(key)
        if eng is None:
            self._engines.clear()   # one topic set at a time (a tuning loop reuses it)
            eng = self._engines[key] = ir.Engine(self.index, topics)
        return eng

    def _scored(self, topics):
        """Every candidate of every topic (a document holding a query term) with its score
        and rank, as a frame (qid, docno, score, rank), ranked as trec_eval ranks."""
        import pandas as pd

        eng = self._engine(topics)
        s = eng.scores(self.model, self.params)
        q = np.repeat(np.arange(len(eng.qids)), np.diff(eng.qptr))
        keep = ~eng._placeholder
        # rows are docno-descending within a query: a stable sort by score keeps that order
        # among equal scores
        order = np.lexsort((np.arange(len(s)), -s, q))
        order = order[keep[order]]
        qo = q[order]
        first = np.searchsorted(qo, qo, side="left")
        return pd.DataFrame({"qid": np.asarray(eng.qids, dtype=object)[qo],
                             "docno": np.asarray(eng.docnos, dtype=object)[eng.row_doc[order]],
                             "score": s[order], "rank": np.arange(len(order)) - first})

    def transform(self, inp):
        if len(inp) == 0:
            return _empty_result(inp)
        topics = _topics(inp, "the Retriever's input")
        scored = self._scored(topics)
        if "docno" not in inp.columns:
            res = scored[scored["rank"] < self.num_results].reset_index(drop=True)
            extra = [c for c in inp.columns if c not in res.columns]
            if extra:
                res = res.merge(inp.drop_duplicates("qid")[["qid"] + extra].astype(
                    {"qid": str}), on="qid", how="left")
            return res
        out = inp.drop(columns=[c for c in ("score", "rank") if c in inp.columns])
        keys = out[["qid", "docno"]].astype(str)
        merged = keys.merge(scored[["qid", "docno", "score"]], on=["qid", "docno"],
                            how="left")
        floor = scored.groupby("qid")["score"].min() - 1.0
        missing = merged["score"].isna().to_numpy()
        score = merged["score"].to_numpy(dtype=np.float64, na_value=np.nan).copy()
        score[missing] = keys["qid"][missing].map(floor).fillna(0.0).to_numpy()
        out = out.assign(score=score)
        return pt.model.add_ranks(out)


def _with_ranks(columns, base=("qid", "docno", "score", "rank")):
    """The columns of a result frame made from ``columns`` (PyTerrier's inspection)."""
    return list(base) + [c for c in columns if c not in base]


# the collections indexed in this process: a digest of their content -> their Index
_INDEXES = {}


def _file_digest(path):
    """SHA-256 of a collection file's bytes, or of a folder's files (names and bytes, in
    sorted order): what an index of it is computed from."""
    import hashlib
    import os

    h = hashlib.sha256()
    files = [path] if not os.path.isdir(path) else sorted(
        os.path.join(d, n) for d, _, names in os.walk(path) for n in names)
    for f in files:
        h.update(os.path.relpath(f, path).encode("utf-8", "surrogateescape") + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\0")
    return "file:" + h.hexdigest()


def _docs_digest(docs):
    """SHA-256 of ``{docno: text}`` in its order."""
    import hashlib

    h = hashlib.sha256()
    for d, t in docs.items():
        h.update(d.encode("utf-8", "surrogatepass") + b"\0" +
                 t.encode("utf-8", "surrogatepass") + b"\0")
    return "docs:" + h.hexdigest()


def _collection_key(collection, digest=None):
    """How a pickled Retriever names its collection: the real path of a file or folder
    (indexed again where it is unpickled), else what it was and the digest of its
    documents (see :class:`_WithIndexes`)."""
    import os

    if isinstance(collection, (str, os.PathLike)):
        return os.path.realpath(os.fspath(collection))
    if isinstance(collection, ir.Index):
        return {"what": "an Index", "documents": len(collection), "digest": digest}
    n = len(collection) if hasattr(collection, "__len__") else None
    return {"what": f"a {type(collection).__name__}" + (f" of {n} documents" if n else ""),
            "documents": n, "digest": digest}


def index_of(collection):
    """The :class:`dfrank.ir.Index` of ``collection``, built once per process and shared
    by every :class:`Retriever` made from the same collection (any model, parameters or
    topic set). Indexes are keyed by content, taken each time one is asked for: a SHA-256
    of the bytes of a file or of a folder's files (a Cranfield or CISI folder, a TSV or
    JSON-lines collection), or of the documents of an object: a dict docno -> text, a
    pandas DataFrame with ``docno`` and ``text`` columns, or an iterable of dicts with
    ``docno`` and ``text`` (PyTerrier's corpus iterators: read once). A collection edited in
    place, or replaced by another of the same size and time, is indexed again; a copy of
    one already indexed is not. Digesting costs a small part of indexing (a file is read
    once more; an object's texts are hashed)."""
    return _indexed(collection)[0]


def _indexed(collection):
    """(the Index of ``collection``, the digest it is kept under: None for an Index)."""
    import os

    if isinstance(collection, ir.Index):
        return collection, None
    if isinstance(collection, (str, os.PathLike)):
        path = os.path.realpath(os.fspath(collection))
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such collection")
        key, docs = _file_digest(path), None
    else:
        docs = _documents(collection)
        key = _docs_digest(docs)
    if key not in _INDEXES:
        _INDEXES[key] = ir.Index(_documents(collection) if docs is None else docs)
    return _INDEXES[key], key


class _WithIndexes:
    """A run function that takes this process's indexes of in-memory collections along
    when joblib sends it to a worker, which keeps them before any Retriever asks: a
    pipeline pickled for a worker refers to its collections by digest."""

    def __init__(self, fn):
        self.fn = fn
        self.indexes = {k: v for k, v in _INDEXES.items() if k.startswith("docs:")}

    def __call__(self, *args):
        return self.fn(*args)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for key, index in self.indexes.items():
            _INDEXES.setdefault(key, index)


def _documents(collection):
    """``{docno: text}`` of any form :func:`index_of` takes."""
    import os

    if isinstance(collection, dict):
        return {str(d): str(t) for d, t in collection.items()}
    if isinstance(collection, (str, os.PathLike)):
        path = os.fspath(collection)
        if os.path.isdir(path):
            loader = ir.load_cisi if os.path.exists(os.path.join(path, "CISI.ALL.gz")) \
                else ir.load_cranfield
            return loader(path)[0]
        return ir.read_collection(path)
    if hasattr(collection, "columns"):   # a DataFrame
        _need_columns(collection, ("docno", "text"), "the collection")
        return dict(zip(collection["docno"].astype(str), collection["text"].astype(str)))
    docs = {}
    for i, doc in enumerate(collection):   # PyTerrier's corpus iterator: dicts
        if not isinstance(doc, dict) or "docno" not in doc or "text" not in doc:
            raise ValueError(f"the collection's item {i} is not a dict with 'docno' and "
                             f"'text' (got {doc!r:.80})")
        docs[str(doc["docno"])] = str(doc["text"])
    return docs


# ------------------------------------------------------------------ learned stage
def _labelled(res, qrels, what="the results"):
    """Features, labels (unjudged 0) and query ids of a result frame, its rows grouped by
    query (stable)."""
    if "features" not in res.columns:
        raise ValueError(f"{what} have no 'features' column, which a learned stage needs: "
                         "put a feature union (a ** b ** c) before it")
    _need_columns(res, ("qid", "docno"), what)
    if len(res) == 0:
        raise ValueError(f"{what} have no rows: the pipeline retrieved nothing")
    res = res.copy()
    res["qid"] = res["qid"].astype(str)
    res = res.sort_values("qid", kind="stable")
    rows = [np.atleast_1d(np.asarray(f, dtype=np.float64)) for f in res["features"]]
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ValueError(f"the 'features' of {what} differ in length from row to row "
                         f"({', '.join(map(str, sorted(widths)))} values)")
    X = np.stack(rows)
    if qrels is None:
        return res, X, None
    what_q = f"the qrels of {what}"
    _need_columns(qrels, ("qid", "docno"), what_q)
    col = "label" if "label" in qrels.columns else "relevance"
    if col not in qrels.columns:
        raise ValueError(f"{what_q} have no 'label' (or 'relevance') column (their columns: "
                         f"{', '.join(map(str, qrels.columns))})")
    q = qrels.copy()
    q["qid"], q["docno"] = q["qid"].astype(str), q["docno"].astype(str)
    lab = res[["qid", "docno"]].astype(str).merge(q[["qid", "docno", col]], how="left",
                                                  on=["qid", "docno"])[col]
    y = np.maximum(lab.fillna(0).to_numpy(dtype=np.float64), 0.0)
    return res, X, y


class LearnedStage(pt.Estimator):
    """A linear ranker learned by dfrank on a result frame's ``features``.

    ``fit(res_train, qrels_train, res_valid=None, qrels_valid=None)``: the rows grouped by
    ``qid`` are the queries (no glue needed); with validation results the restart best on
    them is kept (``DirectRanker``'s ``eval_set``). ``transform`` scores and ranks.
    ``ranker`` is a :class:`dfrank.DirectRanker` (one is made from ``params`` if not given).
    """

    def __init__(self, ranker=None, **params):
        if ranker is not None and params:
            raise ValueError("give a DirectRanker or its parameters, not both")
        self.ranker = ranker if ranker is not None else DirectRanker(**params)

    def __repr__(self):
        return f"dfrank.pyterrier.LearnedStage({self.ranker!r})"

    def save(self, path):
        """Write the fitted stage as a small versioned JSON (the learned weights and the
        ranker's settings); :meth:`load` reads it back into a stage that transforms
        identically."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self.ranker, "ranker_")
        params = {k: v for k, v in self.ranker.get_params().items()
                  if v is None or isinstance(v, (str, int, float, bool, dict))}
        write_json_atomic(path, {"format": STAGE_FORMAT, "version": VERSION,
                                 "params": jsonable(params),
                                 "model": self.ranker.ranker_.to_dict()})

    @classmethod
    def load(cls, path):
        """A stage written by :meth:`save`."""
        obj = read_json(path, STAGE_FORMAT)
        params = obj.get("params") or {}
        if not isinstance(params, dict) or not isinstance(obj.get("model"), dict):
            raise DataFormatError(f"a {STAGE_FORMAT} file needs 'params' and 'model'",
                                  path=path)
        ranker = LinearRanker.from_dict(obj["model"], path)
        try:
            return cls(DirectRanker.from_ranker(ranker, **params))
        except TypeError as e:
            raise DataFormatError(f"a corrupt {STAGE_FORMAT} file: {e}", path=path) from None

    def fit(self, topics_or_res_tr, qrels_tr, topics_or_res_va=None, qrels_va=None):
        res, X, y = _labelled(topics_or_res_tr, qrels_tr, "the training results")
        kwargs = {}
        if topics_or_res_va is not None and qrels_va is not None:
            vres, Xv, yv = _labelled(topics_or_res_va, qrels_va, "the validation results")
            if Xv.shape[1] != X.shape[1]:
                raise ValueError(f"the validation results have {Xv.shape[1]} features, the "
                                 f"training results {X.shape[1]}")
            kwargs = {"eval_set": [(Xv, yv)], "eval_qid": [vres["qid"].to_numpy()]}
        self.ranker.fit(X, y, qid=res["qid"].to_numpy(), **kwargs)
        return self

    def transform_inputs(self):
        return [["qid", "docno", "features"]]

    def transform_outputs(self, input_columns):
        return _with_ranks(input_columns)

    def transform(self, res):
        if len(res) == 0:
            return _empty_result(res)
        out, X, _ = _labelled(res, None, "the stage's input")
        out["score"] = self.ranker.predict(X)
        return pt.model.add_ranks(out)


def ltr(learner=None, form="ltr", **params):
    """The learned stage of a pipeline: :class:`LearnedStage` of ``learner`` (a
    :class:`dfrank.DirectRanker`, or one made from ``params``). ``form`` is PyTerrier's
    ``apply_learned_model`` form: only ``"ltr"`` passes query groups; ``"regression"``
    would fit every row as one query, and is refused with the fix."""
    if form != "ltr":
        raise ValueError(f"form={form!r} gives the learner no query groups, so dfrank would "
                         "rank all rows as one query; use form='ltr' (the default here: "
                         "dfrank.pyterrier.ltr(...) or pt.ltr.apply_learned_model(ranker, "
                         "form='ltr'))")
    return LearnedStage(learner, **params)


# ------------------------------------------------------------------ tuning
RETURN_TYPES = ("opt_pipeline", "best_setting", "both", "tune_result")


def tune(pipeline, params, topics, qrels, metric=RUN_METRIC, jobs=1, backend="joblib",
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
    qrels = _topics_qrels(qrels, topics, "tune")

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
        res = tune_system(_WithIndexes(run_fn) if jobs != 1 else run_fn, space, qrels,
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
                _, _, setting = tune(pipeline, params, train, qrels_of(k), metric, jobs,
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
    import math
    import warnings

    import pandas as pd

    every = pd.concat(list(topics_list))
    with warnings.catch_warnings():   # the folds score their own topics below
        warnings.filterwarnings("ignore", message=".*other topics are left out")
        _, res = tune(pipeline, params, every, qrels, metric, jobs, backend, verbose,
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
    _need_columns(topics, ("qid",), "the topics")
    return topics


def _qrels_topics(qrels):
    """The topics a qrels frame judges (an empty set for other forms)."""
    import pandas as pd

    if not isinstance(qrels, pd.DataFrame) or "qid" not in qrels.columns:
        return set()
    return set(qrels["qid"].astype(str))


def _topics_qrels(qrels, topics, who):
    """The judgments of ``topics``' queries only, with a note when the qrels judge others
    (they would count as queries the pipeline never ran, scoring 0)."""
    import warnings

    import pandas as pd

    if not isinstance(qrels, pd.DataFrame):
        return qrels
    _need_columns(qrels, ("qid",), "the qrels")
    given = set(topics["qid"].astype(str))
    keep = qrels["qid"].astype(str).isin(given)
    others = qrels.loc[~keep, "qid"].astype(str).nunique()
    if others:
        also = (" (pt.GridSearch counts them as 0: the result's qrels_value is its mean)"
                if who == "tune" else "")
        warnings.warn(f"{who} scores the {len(given)} topics given; the qrels' {others} "
                      f"other topics are left out{also}", UserWarning, stacklevel=3)
    return qrels[keep]


def _transform(pipeline, topics, batch_size):
    """The pipeline's results on ``topics``, ``batch_size`` topics at a time if given."""
    import pandas as pd

    if not batch_size:
        return pipeline.transform(topics)
    parts = [pipeline.transform(topics.iloc[i:i + batch_size])
             for i in range(0, len(topics), batch_size)]
    return pd.concat(parts, ignore_index=True)


# ------------------------------------------------------------------ fusion
class Fusion(pt.Estimator):
    """The linear fusion of several pipelines' results, learned by :func:`dfrank.fuse`.

    ``pipelines``: a dict name -> transformer (or a list, named r0, r1, ...). ``fit(topics,
    qrels)`` runs each pipeline on the topics and learns the weights (``metric``, ``norm``,
    ``missing``, ``signed``, ``strategy`` and ``**options`` as :func:`dfrank.fuse`; the
    result is ``self.result``); ``transform(topics)`` runs them and fuses their results
    with those weights (each query's results normalized as in training).
    """

    def __init__(self, pipelines, metric=RUN_METRIC, *, norm="minmax", missing="zero",
                 signed=False, strategy=None, seed=0, **options):
        if not hasattr(pipelines, "items"):
            pipelines = {f"r{i}": p for i, p in enumerate(pipelines)}
        self.pipelines = dict(pipelines)
        get_metric(metric)   # a name dfrank does not compute is refused here, with the reason
        self.metric, self.norm, self.missing, self.signed = metric, norm, missing, signed
        self.strategy, self.seed, self.options = strategy, seed, options
        self.result = None
        self.weights = None   # what transform applies: the learned weights, or equal ones
        self.choice = None

    def __repr__(self):
        """The runs fused and the settings, so that fusions of other settings have other
        names (``pt.Experiment(save_dir=...)`` saves each under its own)."""
        opts = "".join(f", {k}={v!r}" for k, v in sorted(self.options.items()))
        return (f"dfrank.pyterrier.Fusion({'+'.join(self.pipelines)}, {self.metric}, "
                f"{self.norm}, missing={self.missing!r}"
                + (", signed" if self.signed else "")
                + (f", {self.strategy}" if self.strategy else "") + f", seed={self.seed}{opts})")

    def save(self, path):
        """Write the fitted fusion as a small versioned JSON (its settings and the learned
        weights, :meth:`dfrank.fusion.FusionResult.to_dict`); the pipelines it fuses are
        not in it: :meth:`load` takes them again, by name."""
        if self.result is None:
            raise ValueError("fit the fusion first (fit(topics, qrels))")
        settings = {"metric": str(self.metric), "norm": self.norm, "missing": self.missing,
                    "signed": self.signed, "strategy": self.strategy, "seed": self.seed,
                    "options": self.options}
        write_json_atomic(path, {"format": FUSION_STAGE_FORMAT, "version": VERSION,
                                 "settings": jsonable(settings),
                                 "weights": self.weights, "choice": self.choice,
                                 "result": self.result.to_dict()})

    @classmethod
    def load(cls, path, pipelines):
        """A fusion written by :meth:`save`, fusing ``pipelines`` (a dict name ->
        transformer with the names it was fitted with, or a list in that order)."""
        obj = read_json(path, FUSION_STAGE_FORMAT)
        settings, result = obj.get("settings"), obj.get("result")
        if not isinstance(settings, dict) or not isinstance(result, dict):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file needs 'settings' and "
                                  "'result'", path=path)
        res = FusionResult.from_dict(result, path)
        if not hasattr(pipelines, "items"):
            pipelines = dict(zip(res.runs, pipelines))
        if sorted(pipelines) != sorted(res.runs):
            raise ValueError(f"the fusion was fitted on pipelines {res.runs}, and these are "
                             f"{sorted(pipelines)}")
        options = settings.pop("options", None) or {}
        if not isinstance(options, dict) or set(options) & set(settings):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's 'options' must be an object "
                                  "of strategy options apart from its settings (it names "
                                  f"{sorted(set(options) & set(settings)) or options!r})",
                                  path=path)
        try:
            fusion = cls(pipelines, **settings, **options)
        except TypeError as e:
            raise DataFormatError(f"a corrupt {FUSION_STAGE_FORMAT} file: {e}",
                                  path=path) from None
        fusion.result = res
        weights = obj.get("weights") or res.weights
        if not isinstance(weights, dict) or sorted(weights) != sorted(res.runs):
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's weights must name the "
                                  f"runs {res.runs}", path=path)
        bad = {k: v for k, v in weights.items()
               if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)}
        if bad:
            raise DataFormatError(f"a {FUSION_STAGE_FORMAT} file's weights must be finite "
                                  f"numbers, and these are not: {bad}", path=path)
        fusion.weights = {str(k): float(v) for k, v in weights.items()}
        fusion.choice = obj.get("choice")
        return fusion

    def _runs(self, topics):
        runs = {}
        for name, p in self.pipelines.items():
            res = p.transform(topics)
            _need_columns(res, ("qid", "docno", "score"), f"the results of pipeline {name!r}")
            runs[name] = res[["qid", "docno", "score"]]
        return runs

    def fit(self, topics, qrels, topics_va=None, qrels_va=None):
        """Learn the weights on ``topics`` (their judgments only), then keep them only if
        they beat the equal-weight sum of the same normalized runs where that can be
        judged: on the validation topics when given, else on the held-out folds when the
        fusion cross-validates (``folds=k``). Otherwise the equal weights are kept
        (:attr:`choice` says which and why; :attr:`result` stays what was learned)."""
        kwargs = dict(self.options)
        if self.strategy is not None:
            kwargs["strategy"] = self.strategy
        qrels = _topics_qrels(qrels, topics, "the fusion")
        self.result = fuse(qrels, self._runs(topics), self.metric, norm=self.norm,
                           missing=self.missing, signed=self.signed, seed=self.seed, **kwargs)
        self.weights = dict(self.result.weights)
        equal = {n: 1.0 / len(self.weights) for n in self.weights}
        learned = held = None
        if topics_va is not None and qrels_va is not None:
            runs = self._runs(topics_va)
            qrels_va = _topics_qrels(qrels_va, topics_va, "the fusion's validation")
            learned, held = (float(np.mean(list(fusion_values(
                qrels_va, runs, w, self.metric, self.norm, self.missing).values())))
                for w in (self.weights, equal))
            where = "the validation topics"
        elif self.result.cv_value is not None:
            learned = self.result.cv_value
            held = self.result.baselines["CombSUM (equal weights)"]["value"]
            where = f"the {self.result.folds} held-out folds"
        self.choice = "learned weights"
        if learned is not None:
            if learned < held:
                self.weights = equal
                self.choice = (f"equal weights: the learned ones score {learned:.4f} on "
                               f"{where}, the equal ones {held:.4f}")
            else:
                self.choice = (f"learned weights: {learned:.4f} on {where}, the equal ones "
                               f"{held:.4f}")
        return self

    def transform_inputs(self):
        return [["qid", "query"]]

    def transform_outputs(self, input_columns):
        return _with_ranks(c for c in input_columns if c != "features")

    def transform(self, topics):
        if len(topics) == 0:
            return _empty_result(topics, drop=("features",))
        if self.result is None:
            raise ValueError("fit the fusion first (fit(topics, qrels))")
        src = topics.drop_duplicates("qid") if "query" in topics.columns else None
        import dataclasses

        applied = dataclasses.replace(self.result, weights=self.weights or self.result.weights)
        return _frame(applied.apply(self._runs(topics)), src)
