"""dfrank's built-in retrieval engine: collections in the formats people have, an index
built once, and retrieval models whose parameters cost milliseconds a point to evaluate.

    from dfrank import ir
    docs, topics, qrels = ir.load_cranfield("data/cranfield")
    engine = ir.Engine(docs, topics, qrels)
    engine.evaluate("bm25", {"k1": 1.2, "b": 0.75}, "map")

Models: ``bm25`` (k1, b), ``ql`` (query likelihood with Dirichlet smoothing, mu) and
``sdm`` (Metzler and Croft's sequential dependence model: weights of the term, ordered
window and unordered window features, w_t, w_o, w_u). :func:`dfrank.tune` tunes them.
"""

from .engine import MODELS, Engine, Index
from .readers import (load_cisi, load_cranfield, read_collection, read_smart,
                      read_topics)
from .tokens import tokenize

__all__ = ["Engine", "Index", "MODELS", "load_cranfield", "load_cisi", "read_collection",
           "read_topics", "read_smart", "tokenize"]
