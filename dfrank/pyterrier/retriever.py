"""dfrank's built-in engine as a PyTerrier retriever or re-ranker (:class:`Retriever`), and
the collections indexed once per process and shared by every Retriever of them
(:func:`index_of`, keyed by content)."""

import numpy as np

from .._optional import need

pt = need("pyterrier", "dfrank.pyterrier")

from .. import ir  # noqa: E402
from .frames import empty_result, need_columns, with_ranks  # noqa: E402

__all__ = ["Retriever", "index_of", "WithIndexes"]


def _topics(frame, what="the topics"):
    """``{qid: query}`` of a topics or result frame; a qid with two query texts is
    refused (which one to search would be a guess)."""
    need_columns(frame, ("qid", "query"), what)
    pairs = frame[["qid", "query"]].astype(str).drop_duplicates()
    twice = pairs["qid"].duplicated(keep=False).to_numpy()
    if twice.any():
        q = pairs["qid"][twice].iloc[0]
        texts = pairs["query"][pairs["qid"] == q].tolist()
        raise ValueError(f"{what}: qid {q!r} has {len(texts)} query texts ({texts[0]!r}, "
                         f"{texts[1]!r}); give each topic its own qid")
    return dict(zip(pairs["qid"], pairs["query"]))


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
        return with_ranks(input_columns)

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
            return empty_result(inp)
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
    documents (see :class:`WithIndexes`)."""
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


class WithIndexes:
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
        need_columns(collection, ("docno", "text"), "the collection")
        return dict(zip(collection["docno"].astype(str), collection["text"].astype(str)))
    docs = {}
    for i, doc in enumerate(collection):   # PyTerrier's corpus iterator: dicts
        if not isinstance(doc, dict) or "docno" not in doc or "text" not in doc:
            raise ValueError(f"the collection's item {i} is not a dict with 'docno' and "
                             f"'text' (got {doc!r:.80})")
        docs[str(doc["docno"])] = str(doc["text"])
    return docs
