"""The built-in engine: documents indexed once, each query's candidate documents (those
holding a query term) and their term frequencies laid out once, so a parameter point costs
one pass over the candidate rows.

Its rankings are evaluated as trec_eval evaluates a run of them: each query's candidates in
docno-descending order with ``ties="stable"`` (trec_eval's order among equal scores),
judged documents that hold no query term counted in R and in the ideal DCG, and a query
with no candidate scoring 0 (the gain is the metric's: ``nDCG@10`` trec_eval's linear one).
"""

import hashlib
import json

import numpy as np

from ..data.ranking import RankingData
from ..io.forms import DocnoDesc
from ..metrics.evaluation import bind_metric
from ..metrics.registry import RUN_TIES
from . import _kernels
from .tokens import tokenize

__all__ = ["Engine", "Index", "MODELS"]

# each model's parameters: default, range searched by default, log scale
MODELS = {
    "bm25": {"k1": (1.2, 0.1, 3.0, False), "b": (0.75, 0.0, 1.0, False)},
    "ql": {"mu": (2000.0, 50.0, 10000.0, True)},
    "sdm": {"w_t": (0.85, 0.0, 1.0, False), "w_o": (0.1, 0.0, 1.0, False),
            "w_u": (0.05, 0.0, 1.0, False)},
}


class Index:
    """A collection indexed once: its documents' tokens, postings and collection
    statistics, shared by every :class:`Engine` made from it (other topic sets, other
    qrels, the folds of a cross-validation): no document is tokenized twice.

    Parameters
    ----------
    docs : dict docno -> text
    tokenizer : callable text -> list of tokens (default :func:`dfrank.ir.tokenize`)
    """

    def __init__(self, docs, tokenizer=tokenize):
        if not docs:
            raise ValueError("no documents")
        self.tokenizer = tokenizer
        self.docnos = [str(d) for d in docs]
        vocab = {}
        toks = [[vocab.setdefault(t, len(vocab)) for t in tokenizer(docs[d])] for d in docs]
        self.doc_len = np.array([len(t) for t in toks], dtype=np.float64)
        self.doc_ptr = np.concatenate([[0], np.cumsum(self.doc_len)]).astype(np.int64)
        self.tokens = np.fromiter((t for ts in toks for t in ts), np.int64,
                                  count=int(self.doc_ptr[-1]))
        self.vocab = vocab
        n_docs, n_terms = len(self.docnos), len(vocab)
        doc_of = np.repeat(np.arange(n_docs), self.doc_len.astype(np.int64))
        self.term_ptr, self.post_doc, self.post_tf = _kernels.postings(self.tokens, doc_of,
                                                                       n_terms)
        self.df = np.diff(self.term_ptr).astype(np.float64)
        self.cf = np.bincount(self.tokens, minlength=n_terms).astype(np.float64)
        self.idf = np.log(1.0 + (n_docs - self.df + 0.5) / (self.df + 0.5))
        self.p_coll = self.cf / max(self.tokens.size, 1)

    def desc_rank(self):
        """Each document's position in docno-descending order (trec_eval's order among
        equal scores), computed once."""
        if getattr(self, "_desc", None) is None:
            desc = np.empty(len(self.docnos), np.int64)
            desc[sorted(range(len(self.docnos)), key=lambda i: DocnoDesc(self.docnos[i]))] = \
                np.arange(len(self.docnos))
            self._desc = desc
        return self._desc

    def __len__(self):
        return len(self.docnos)

    def digest(self):
        """A SHA-256 of what the index is: each document's docno and tokens (the terms as
        its tokenizer made them), so two indexes of one digest score alike."""
        if getattr(self, "_digest", None) is None:
            h = hashlib.sha256()
            for part in (self.docnos, sorted(self.vocab, key=self.vocab.get)):
                h.update("\0".join(part).encode("utf-8", "surrogatepass") + b"\1")
            for a in (self.doc_ptr, self.tokens):
                h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
            self._digest = h.hexdigest()
        return self._digest

    def __repr__(self):
        return f"dfrank.ir.Index({len(self.docnos)} documents, {len(self.vocab)} terms)"


_SHARED = ("tokenizer", "docnos", "doc_len", "doc_ptr", "tokens", "vocab", "term_ptr",
           "post_doc", "post_tf", "df", "cf", "idf", "p_coll")


class Engine:
    """Documents and topics indexed for fast scoring.

    Parameters
    ----------
    docs : dict docno -> text, or an :class:`Index` (the collection indexed once, shared)
    topics : dict qid -> text
    qrels : dict qid -> {docno: relevance}, optional
        With judgments, the engine evaluates the topics that have some (in topic order).
    tokenizer : callable text -> list of tokens (default :func:`dfrank.ir.tokenize`; an
        Index keeps its own)
    sdm_mu, window : the Dirichlet mu and the unordered window of the sequential
        dependence features (Metzler and Croft: 2500 and 8)
    """

    def __init__(self, docs, topics, qrels=None, tokenizer=tokenize, sdm_mu=2500.0,
                 window=8):
        index = docs if isinstance(docs, Index) else Index(docs, tokenizer)
        self.index = index
        for name in _SHARED:   # the index's arrays, shared (not copied)
            setattr(self, name, getattr(index, name))
        tokenizer, vocab = index.tokenizer, index.vocab
        topics = {str(q): text for q, text in topics.items()}
        self.sdm_mu, self.window = float(sdm_mu), int(window)
        self.qrels = None if qrels is None else {str(q): {str(d): r for d, r in j.items()}
                                                  for q, j in qrels.items()}
        self.qids = [str(q) for q in topics if self.qrels is None or self.qrels.get(str(q))]
        if not self.qids:
            raise ValueError("no topic has judgments in the qrels")
        missing = [q for q in self.qids if q not in topics]
        if missing:
            raise ValueError(f"the qrels judge topic {missing[0]!r}, which topics lacks")
        # each query's tokens known to the collection, in order (SDM reads adjacent pairs)
        self.query_tokens = [[vocab[t] for t in tokenizer(topics[q]) if t in vocab]
                             for q in self.qids]
        self.query_terms = []
        for seq in self.query_tokens:
            terms, counts = np.unique(np.asarray(seq, dtype=np.int64), return_counts=True)
            self.query_terms.append((terms.astype(np.int64), counts.astype(np.float64)))
        self._layout()
        self._bound = {}
        self._sdm = None
        self._pairs = {}

    # ------------------------------------------------------------ candidate rows
    def _layout(self):
        """Rows: per query its candidates in docno-descending order; per row its matching
        terms (CSR: row_ptr, term, tf, qtf)."""
        desc = self.index.desc_rank()
        row_doc, row_query, sizes, entries = [], [], [], []
        for qi, (terms, qtf) in enumerate(self.query_terms):
            docs, tfs, tids, qtfs = [], [], [], []
            for t, c in zip(terms, qtf):
                a, b = self.term_ptr[t], self.term_ptr[t + 1]
                docs.append(self.post_doc[a:b])
                tfs.append(self.post_tf[a:b])
                tids.append(np.full(b - a, t))
                qtfs.append(np.full(b - a, c))
            if docs:
                d = np.concatenate(docs)
                order = np.lexsort((np.concatenate(tids), desc[d]))
                d = d[order]
                tf, tid, qq = (np.concatenate(x)[order] for x in (tfs, tids, qtfs))
            else:
                d, tid = np.empty(0, np.int64), np.empty(0, np.int64)
                tf, qq = np.empty(0), np.empty(0)
            cand, first = np.unique(desc[d], return_index=True)
            if len(cand) == 0:   # no query term in the collection: one row scoring 0
                row_doc.append(np.array([-1]))
                entries.append((np.zeros(1, np.int64), np.empty(0), np.empty(0, np.int64),
                                np.empty(0)))
                sizes.append(1)
            else:
                row_doc.append(d[first])
                entries.append((first, tf, tid, qq))
                sizes.append(len(cand))
            row_query.append(np.full(sizes[-1], qi))
        self.row_doc = np.concatenate(row_doc).astype(np.int64)
        self.row_query = np.concatenate(row_query).astype(np.int64)
        self.qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        ptr, term, tf, qtf, base = [], [], [], [], 0
        for starts, t_f, tid, qq in entries:
            ptr.append(starts + base)
            base += len(tid)
            term.append(tid)
            tf.append(t_f)
            qtf.append(qq)
        self.row_ptr = np.append(np.concatenate(ptr), base).astype(np.int64)
        self.row_term = np.concatenate(term).astype(np.int64)
        self.row_tf = np.concatenate(tf).astype(np.float64)
        self.row_qtf = np.concatenate(qtf).astype(np.float64)
        self.q_len = np.array([c.sum() for _, c in self.query_terms], dtype=np.float64)
        self.q_base = np.array([float(np.sum(c * np.log(self.p_coll[t])))
                                for t, c in self.query_terms])
        # the placeholder rows (-1) read document 0's length: their scores are set to 0
        self._placeholder = self.row_doc < 0
        self.row_doc = np.where(self._placeholder, 0, self.row_doc)
        self.data = self._data()

    def _data(self):
        docids = np.where(self._placeholder, "\0",
                          np.asarray(self.docnos, dtype=object)[self.row_doc])
        y = np.zeros(len(self.row_doc))
        uptr, ulab = [0], []
        for qi, q in enumerate(self.qids):
            judged = (self.qrels or {}).get(q, {})
            lo, hi = self.qptr[qi], self.qptr[qi + 1]
            seen = set(docids[lo:hi].tolist())
            y[lo:hi] = [max(judged.get(d, 0), 0) for d in docids[lo:hi]]
            extra = [max(r, 0) for d, r in judged.items() if d not in seen]
            ulab.extend(extra)
            uptr.append(uptr[-1] + len(extra))
        return RankingData(np.zeros((len(y), 1)), y, self.qptr,
                           np.asarray(self.qids, dtype=object), docids=docids,
                           unranked=(np.asarray(uptr), np.asarray(ulab, dtype=np.float64)),
                           source="dfrank.ir.Engine")

    def digest(self):
        """A SHA-256 of everything the engine's values are made of, but the model and the
        qrels: the index (:meth:`Index.digest`), the topics' ids and tokens, the sequential
        dependence model's mu and window."""
        h = hashlib.sha256(self.index.digest().encode())
        h.update(json.dumps([self.qids, self.query_tokens, self.sdm_mu, self.window]).encode())
        return h.hexdigest()

    # ------------------------------------------------------------ models

    @staticmethod
    def params_of(model, params):
        """``params`` completed with the model's defaults, checked."""
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; the engine has {', '.join(MODELS)}")
        spec = MODELS[model]
        unknown = set(params) - set(spec)
        if unknown:
            raise ValueError(f"{model} has no parameter {sorted(unknown)[0]!r} (it has "
                             f"{', '.join(spec)})")
        out = {k: float(params.get(k, v[0])) for k, v in spec.items()}
        if not all(np.isfinite(v) for v in out.values()):
            raise ValueError(f"{model} parameters must be finite, got {params}")
        return out

    def scores(self, model, params=None):
        """One score per candidate row (``self.data``'s order)."""
        p = self.params_of(model, params or {})
        out = np.empty(len(self.row_doc))
        if model == "bm25":
            if p["k1"] < 0 or not 0 <= p["b"] <= 1:
                raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got {p}")
            _kernels.bm25(self.row_ptr, self.row_term, self.row_tf, self.row_qtf, self.row_doc,
                          self.doc_len, self.idf, float(self.doc_len.mean()), p["k1"], p["b"],
                          out)
        elif model == "ql":
            if p["mu"] <= 0:
                raise ValueError(f"Dirichlet smoothing needs mu > 0, got {p['mu']}")
            _kernels.dirichlet(self.row_ptr, self.row_term, self.row_tf, self.row_qtf,
                               self.row_doc, self.row_query, self.doc_len, self.p_coll,
                               self.q_len, self.q_base,
                               p["mu"], out)
        else:
            out[:] = self.sdm_features() @ np.array([p["w_t"], p["w_o"], p["w_u"]])
        out[self._placeholder] = 0.0
        return out

    def sdm_features(self):
        """The sequential dependence features of every candidate row (computed once):
        Dirichlet-smoothed log-likelihoods of the query terms (f_T), of the exact phrases of
        adjacent query terms (#1, f_O) and of those pairs within the window (#uw, f_U)."""
        if self._sdm is None:
            mu, C = self.sdm_mu, max(self.tokens.size, 1)
            f = np.zeros((len(self.row_doc), 3))
            out = np.empty(len(self.row_doc))
            _kernels.dirichlet(self.row_ptr, self.row_term, self.row_tf, self.row_qtf,
                               self.row_doc, self.row_query, self.doc_len, self.p_coll,
                               self.q_len, self.q_base,
                               mu, out)
            f[:, 0] = out
            for qi, (q, (terms, _)) in enumerate(zip(self.qids, self.query_terms)):
                lo, hi = self.qptr[qi], self.qptr[qi + 1]
                docs = self.row_doc[lo:hi]
                dl = self.doc_len[docs]
                seq = self.query_tokens[qi]
                for a, b in zip(seq[:-1], seq[1:]):
                    o, w = np.empty(len(docs)), np.empty(len(docs))
                    _kernels.window_counts(self.tokens, self.doc_ptr, docs, a, b,
                                           self.window, o, w)
                    for j, c in ((1, o), (2, w)):
                        cf = max(self._pair_cf(a, b, j), 0.5)   # unseen: half an occurrence
                        f[lo:hi, j] += np.log((c + mu * cf / C) / (dl + mu))
            self._sdm = f
        return self._sdm

    def sdm_data(self):
        """The evaluated queries' candidate rows as learning-to-rank data with the three
        sequential dependence features (term, ordered window, unordered window): their
        weights are a linear ranker that :func:`dfrank.maximize` learns with the exact line
        search. Maximize it with ``ties="stable"`` (and ``nDCG@k`` rather than ``ndcg@k`` for
        trec_eval's linear gain) for trec_eval's values."""
        d = self.data
        return RankingData(self.sdm_features(), d.y, d.qptr, d.qids, docids=d.docids,
                           unranked=d.unranked, source=d.source)

    def _pair_cf(self, a, b, j):
        key = (a, b)
        if key not in self._pairs:
            docs = np.arange(len(self.docnos))
            o, w = np.empty(len(docs)), np.empty(len(docs))
            _kernels.window_counts(self.tokens, self.doc_ptr, docs, a, b, self.window, o, w)
            self._pairs[key] = (o.sum(), w.sum())
        return self._pairs[key][j - 1]

    # ------------------------------------------------------------ evaluation and runs
    def bound(self, metric):
        """The metric bound to the engine's rows under trec_eval's conventions."""
        if metric not in self._bound:
            self._bound[metric] = bind_metric(self.data, metric, RUN_TIES)
        return self._bound[metric]

    def per_query(self, model, params, metric="map"):
        """The metric of each evaluated query (``self.qids`` order)."""
        if self.qrels is None:
            raise ValueError("the engine has no qrels to evaluate with")
        return self.bound(metric).per_query(self.scores(model, params))

    def evaluate(self, model, params, metric="map"):
        """The mean metric over the evaluated queries."""
        return float(np.mean(self.per_query(model, params, metric)))

    def run(self, model, params=None, depth=1000):
        """``{qid: {docno: score}}``: each query's ``depth`` best candidates."""
        s = self.scores(model, params)
        out = {}
        for qi, q in enumerate(self.qids):
            lo, hi = self.qptr[qi], self.qptr[qi + 1]
            keep = [i for i in range(lo, hi) if not self._placeholder[i]]
            top = sorted(keep, key=lambda i: (-s[i], DocnoDesc(self.docnos[self.row_doc[i]])))
            out[q] = {self.docnos[self.row_doc[i]]: float(s[i]) for i in top[:depth]}
        return out
