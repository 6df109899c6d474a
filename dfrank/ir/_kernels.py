"""The engine's kernels: postings built once, then one pass over the candidate rows per
parameter point."""

import numpy as np
from numba import prange

from .._jit import arr, declare, f8, first, i8, njit


@njit(cache=True, nogil=True)
def postings(tokens, doc_of, n_terms):
    """Inverted index from the token stream: (term_ptr, doc, tf), each term's documents in
    increasing order. ``doc_of``: the document of every token (non-decreasing)."""
    n = len(tokens)
    key = np.empty(n, np.int64)
    n_docs = doc_of[-1] + 1 if n else 0
    for i in range(n):
        key[i] = tokens[i] * n_docs + doc_of[i]
    key.sort()
    m = 0
    for i in range(n):
        if i == 0 or key[i] != key[i - 1]:
            m += 1
    doc = np.empty(m, np.int64)
    tf = np.zeros(m, np.float64)
    term_ptr = np.zeros(n_terms + 1, np.int64)
    j = -1
    for i in range(n):
        if i == 0 or key[i] != key[i - 1]:
            j += 1
            doc[j] = key[i] % n_docs
            term_ptr[key[i] // n_docs + 1] += 1
        tf[j] += 1.0
    for t in range(n_terms):
        term_ptr[t + 1] += term_ptr[t]
    return term_ptr, doc, tf


@njit(cache=True, nogil=True, parallel=True)
def bm25(row_ptr, term, tf, qtf, row_doc, doc_len, idf, avgdl, k1, b, out):
    """BM25 of every candidate row: sum over its matching query terms of
    qtf idf tf (k1 + 1) / (tf + k1 (1 - b + b |D| / avgdl))."""
    for r in prange(len(row_ptr) - 1):
        norm = k1 * (1.0 - b + b * doc_len[row_doc[r]] / avgdl)
        s = 0.0
        for p in range(row_ptr[r], row_ptr[r + 1]):
            s += qtf[p] * idf[term[p]] * tf[p] * (k1 + 1.0) / (tf[p] + norm)
        out[r] = s


@njit(cache=True, nogil=True, parallel=True)
def dirichlet(row_ptr, term, tf, qtf, row_doc, row_query, doc_len, p_coll, q_len,
              q_base, mu, out):
    """Query likelihood with Dirichlet smoothing, sum over the query's tokens of
    log((tf + mu p(t|C)) / (|D| + mu)): the matching terms' log(1 + tf / (mu p(t|C)))
    plus the query's constant sum of log(mu p(t|C)), minus |q| log(|D| + mu)."""
    for r in prange(len(row_ptr) - 1):
        q = row_query[r]
        s = 0.0
        for p in range(row_ptr[r], row_ptr[r + 1]):
            s += qtf[p] * np.log1p(tf[p] / (mu * p_coll[term[p]]))
        out[r] = s + q_base[q] + q_len[q] * (np.log(mu) - np.log(doc_len[row_doc[r]] + mu))


@njit(cache=True, nogil=True)
def window_counts(tokens, doc_ptr, docs, a, b, window, ordered, unordered):
    """For each document of ``docs``: the exact phrase "a b" (#1) and a, b within
    ``window`` tokens in either order (#uw), counted as occurrence pairs."""
    for k in range(len(docs)):
        d = docs[k]
        lo, hi = doc_ptr[d], doc_ptr[d + 1]
        o = 0.0
        w = 0.0
        for i in range(lo, hi):
            if tokens[i] != a:
                continue
            if i + 1 < hi and tokens[i + 1] == b:
                o += 1.0
            for j in range(max(lo, i - window + 1), min(hi, i + window)):
                if j != i and tokens[j] == b:
                    w += 1.0
        ordered[k] = o
        unordered[k] = w


# the argument types of the kernels Python calls, compiled by the warm-up (dfrank._jit.examples)
EXAMPLES = declare("retrieval, spaces, smoothed", (
    first(bm25, arr(i8), arr(i8), arr(f8), arr(f8), arr(i8), arr(f8), arr(f8), f8, f8, f8, arr(f8)),
    first(postings, arr(i8), arr(i8), i8),
    first(dirichlet, arr(i8), arr(i8), arr(f8), arr(f8), arr(i8), arr(i8), arr(f8), arr(f8),
          arr(f8), arr(f8), f8, arr(f8)),
    first(window_counts, arr(i8), arr(i8), arr(i8), i8, i8, i8, arr(f8), arr(f8)),
), phase=0)
