"""Small ad hoc retrieval toolkit for the examples: SMART-format collections (Cranfield,
CISI), tokenization, a positional inverted index, BM25 scoring and the term / ordered
window / unordered window features of Metzler's sequential-dependence setting.

Statistics are computed once per (query, document) pair; any parameter vector is then
rescored by a numba kernel (no Python loop per document).
"""

import gzip
import os
import re

import numpy as np
from numba import njit, prange

import dfrank

STOPWORDS = set("""a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
yourself yourselves also may must shall upon""".split())
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text):
    """Lower-case alphanumeric tokens without stopwords and one-letter tokens, with a light
    plural stemmer (-ies -> -y, -es/-s dropped after a consonant)."""
    out = []
    for t in _TOKEN.findall(text.lower()):
        if len(t) < 2 or t in STOPWORDS:
            continue
        if len(t) > 4 and t.endswith("ies"):
            t = t[:-3] + "y"
        elif len(t) > 3 and t.endswith("s") and not t.endswith(("ss", "us", "is")):
            t = t[:-1]
        out.append(t)
    return out


def read_smart(path):
    """Records of a SMART-format file: a list of (id, {field letter: text})."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="latin-1") as f:
        text = f.read().replace("\r\n", "\n")
    records = []
    for chunk in re.split(r"^\.I\s+", text, flags=re.M)[1:]:
        head, _, body = chunk.partition("\n")
        fields, cur = {}, None
        for line in body.split("\n"):
            m = re.match(r"^\.([A-Z])\s*$", line)
            if m:
                cur = m.group(1)
                fields.setdefault(cur, "")
            elif cur is not None:
                fields[cur] += line + "\n"
        records.append((head.strip(), fields))
    return records


def load_cranfield(folder):
    """Cranfield 1400: docs (text by 1-based id), queries (text by 1-based *position*, as
    cranqrel numbers them), graded qrels 5 - code for codes 1 (complete answer) .. 4
    (minimum interest). The single -1 line of each query is not documented in the original
    collection (it looks like the query's source document): it is left out, i.e. judged
    non-relevant."""
    docs = {}
    for rid, f in read_smart(os.path.join(folder, "cran.all.1400.gz")):
        w = f.get("W", "").strip()
        docs[int(rid)] = w if w else f.get("T", "")
    queries = {i + 1: f.get("W", "") for i, (_, f) in
               enumerate(read_smart(os.path.join(folder, "cran.qry")))}
    qrels = {}
    with open(os.path.join(folder, "cranqrel")) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 3:
                continue
            q, d, code = int(parts[0]), int(parts[1]), int(parts[2])
            if 1 <= code <= 4:
                qrels.setdefault(q, {})[d] = 5 - code
    return docs, queries, qrels


def load_cisi(folder):
    """CISI: docs (title + abstract), queries (.W text), binary qrels (76 of 112 queries
    have relevant documents; the others are left out)."""
    docs = {int(r): f.get("T", "") + " " + f.get("W", "")
            for r, f in read_smart(os.path.join(folder, "CISI.ALL.gz"))}
    queries = {int(r): f.get("W", "") for r, f in
               read_smart(os.path.join(folder, "CISI.QRY"))}
    qrels = {}
    with open(os.path.join(folder, "CISI.REL")) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2:
                qrels.setdefault(int(parts[0]), {})[int(parts[1])] = 1
    return docs, queries, qrels


class Collection:
    """Tokenized documents and queries with a positional index and per-pair statistics.

    Every judged query is paired with every document (so recall-oriented metrics see all
    relevant documents); ``data`` is the matching RankingData (labels from the qrels).
    """

    def __init__(self, docs, queries, qrels):
        doc_ids = sorted(docs)
        vocab = {}
        toks = [[vocab.setdefault(t, len(vocab)) for t in tokenize(docs[d])]
                for d in doc_ids]
        self.doc_ids = np.array(doc_ids)
        self.doc_len = np.array([len(t) for t in toks], dtype=np.float64)
        self.doc_ptr = np.concatenate([[0], np.cumsum(self.doc_len)]).astype(np.int64)
        self.tokens = np.array([t for ts in toks for t in ts], dtype=np.int64)
        self.vocab = vocab
        self.n_docs = len(doc_ids)
        self.cf = np.bincount(self.tokens, minlength=len(vocab)).astype(np.float64)
        self.df = np.zeros(len(vocab))
        for ts in toks:
            self.df[list(set(ts))] += 1
        self.qids = [q for q in sorted(queries) if q in qrels and qrels[q]]
        self.query_terms = [[vocab[t] for t in tokenize(queries[q]) if t in vocab]
                            for q in self.qids]
        nq = len(self.qids)
        y = np.zeros(nq * self.n_docs)
        pos = {d: i for i, d in enumerate(doc_ids)}
        for qi, q in enumerate(self.qids):
            for d, g in qrels[q].items():
                if d in pos:
                    y[qi * self.n_docs + pos[d]] = g
        qid = np.repeat(np.array(self.qids), self.n_docs)
        self.data = dfrank.RankingData.from_arrays(np.zeros((len(y), 1)), y, qid,
                                                   source="collection")
        self._tf = None

    # ---------------------------------------------------------------- term statistics
    def term_tf(self):
        """For every (query, document) row, the query terms' frequencies in the document:
        CSR arrays (row_ptr, term, tf)."""
        if self._tf is None:
            qt = [np.array(sorted(set(t)), dtype=np.int64) for t in self.query_terms]
            self._tf = _term_tf(self.tokens, self.doc_ptr, qt)
        return self._tf

    def subset(self, queries):
        """Row mask of the given query positions (for train/test splits)."""
        return np.isin(np.repeat(np.arange(len(self.qids)), self.n_docs), queries)


def _term_tf(tokens, doc_ptr, query_terms):
    n_docs = len(doc_ptr) - 1
    rows, terms, tfs = [], [], []
    for qi, qt in enumerate(query_terms):
        if len(qt) == 0:
            continue
        counts = _count_terms(tokens, doc_ptr, qt)  # (n_docs, len(qt))
        d, k = np.nonzero(counts)
        rows.append(qi * n_docs + d)
        terms.append(qt[k])
        tfs.append(counts[d, k])
    rows = np.concatenate(rows) if rows else np.empty(0, np.int64)
    order = np.argsort(rows, kind="stable")
    n_rows = len(query_terms) * n_docs
    row_ptr = np.zeros(n_rows + 1, np.int64)
    np.add.at(row_ptr, rows + 1, 1)
    return (np.cumsum(row_ptr), np.concatenate(terms)[order].astype(np.int64),
            np.concatenate(tfs)[order].astype(np.float64))


@njit(cache=True, parallel=True)
def _count_terms(tokens, doc_ptr, qt):
    n_docs = len(doc_ptr) - 1
    out = np.zeros((n_docs, len(qt)), np.int64)
    for d in prange(n_docs):
        for p in range(doc_ptr[d], doc_ptr[d + 1]):
            t = tokens[p]
            for k in range(len(qt)):
                if qt[k] == t:
                    out[d, k] += 1
    return out


# --------------------------------------------------------------------- BM25
@njit(cache=True, parallel=True)
def _bm25(row_ptr, term, tf, doc_len, n_docs_coll, idf, avgdl, k1, b, out):
    n_rows = len(row_ptr) - 1
    for r in prange(n_rows):
        d = r % n_docs_coll
        norm = k1 * (1.0 - b + b * doc_len[d] / avgdl)
        s = 0.0
        for p in range(row_ptr[r], row_ptr[r + 1]):
            s += idf[term[p]] * tf[p] * (k1 + 1.0) / (tf[p] + norm)
        out[r] = s


def bm25_scorer(coll):
    """``score(x)`` for x = (k1, b): BM25 scores of every (query, document) row, with the
    Robertson-Sparck Jones idf log(1 + (N - df + 0.5) / (df + 0.5))."""
    row_ptr, term, tf = coll.term_tf()
    N = coll.n_docs
    idf = np.log(1.0 + (N - coll.df + 0.5) / (coll.df + 0.5))
    avgdl = float(coll.doc_len.mean())
    out = np.empty(len(row_ptr) - 1)

    def score(x):
        _bm25(row_ptr, term, tf, coll.doc_len, N, idf, avgdl, float(x[0]), float(x[1]), out)
        return out.copy()
    return score


# --------------------------------------------------------------------- proximity
@njit(cache=True)
def _window_counts(tokens, doc_ptr, a, b, window):
    """Per document: (#1 count: b right after a, #uw count: a and b within ``window``
    tokens in either order, counted as occurrence pairs)."""
    n_docs = len(doc_ptr) - 1
    o = np.zeros(n_docs)
    w = np.zeros(n_docs)
    for d in range(n_docs):
        lo, hi = doc_ptr[d], doc_ptr[d + 1]
        for i in range(lo, hi):
            if tokens[i] != a:
                continue
            if i + 1 < hi and tokens[i + 1] == b:
                o[d] += 1
            for j in range(max(lo, i - window + 1), min(hi, i + window)):
                if j != i and tokens[j] == b:
                    w[d] += 1
    return o, w


def proximity_features(coll, mu=2500.0, window=8):
    """Three Dirichlet-smoothed log-likelihood features per (query, document) row
    (Metzler & Croft's sequential dependence model, as in Metzler's Table 5): term
    f_T = sum_i log((tf_i + mu cf_i/|C|) / (|D| + mu)); ordered window f_O and unordered
    window f_U, the same over adjacent query-term pairs with #1 (exact phrase) and #uw8
    (both within 8 tokens) counts. Returns an (n_rows, 3) array."""
    C = coll.tokens.size
    n_docs = coll.n_docs
    feats = np.zeros((len(coll.qids) * n_docs, 3))
    dl = coll.doc_len
    pair_cache = {}
    for qi, terms in enumerate(coll.query_terms):
        rows = slice(qi * n_docs, (qi + 1) * n_docs)
        for t in terms:
            tf = _tf_of(coll, t)
            feats[rows, 0] += np.log((tf + mu * coll.cf[t] / C) / (dl + mu))
        for a, b in zip(terms[:-1], terms[1:]):
            if (a, b) not in pair_cache:
                pair_cache[(a, b)] = _window_counts(coll.tokens, coll.doc_ptr, a, b, window)
            o, w = pair_cache[(a, b)]
            cf_o = max(o.sum(), 0.5)  # unseen phrases: half an occurrence in the collection
            cf_w = max(w.sum(), 0.5)
            feats[rows, 1] += np.log((o + mu * cf_o / C) / (dl + mu))
            feats[rows, 2] += np.log((w + mu * cf_w / C) / (dl + mu))
    return feats


def _tf_of(coll, t):
    cache = coll.__dict__.setdefault("_tf_cache", {})
    if t not in cache:
        cache[t] = _count_terms(coll.tokens, coll.doc_ptr,
                                np.array([t], dtype=np.int64))[:, 0].astype(np.float64)
    return cache[t]
