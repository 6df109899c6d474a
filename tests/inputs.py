"""Small inputs that several test files share: LETOR and TREC files, a tiny collection, the
argument lists of commands over them, and waiting for a process to end."""

import os
import signal
import time

import numpy as np
import pytest

from dfrank import LinearRanker
from dfrank.data.datasets import make_letor_like


def letor_data():
    return make_letor_like(n_queries=12, docs_per_query=9, n_features=4, seed=3)


def trec_files(tmp_path, qrels, run):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text("".join(f"{qid} 0 {d} {v}\n" for qid, js in qrels.items()
                         for d, v in js.items()))
    r.write_text("".join(f"{qid} Q0 {d} {i + 1} {s!r} r\n" for qid, ds in run.items()
                         for i, (d, s) in enumerate(ds.items())))
    return str(q), str(r)


def model_file(tmp_path):
    path = tmp_path / "m.json"
    LinearRanker([0.5, 0.25, 0.25]).save(path)
    return str(path)


def bench_kw(toy_suite, **kw):
    root, refs = toy_suite
    return dict(dict(problems=["letor-mq2008-map"], folds=[1], seeds=range(3), budget=30,
                     references=refs, line_cost=3, n_jobs=1, repeat=False), **kw)


ENGINE = """\
import os, subprocess, sys, time
k, run, calls = float(sys.argv[1]), sys.argv[2], sys.argv[3]
n = len(os.listdir(calls))
open(os.path.join(calls, str(n)), "w").close()
if n == 2:   # the third run hangs, with a process of its own in the background
    child = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[4], "w") as f:
        f.write(str(child.pid))
    time.sleep(300)
with open(run, "w") as f:
    f.write(f"1 Q0 a 1 {k} r\\n1 Q0 b 2 {1 - k} r\\n2 Q0 a 1 {1 - k} r\\n2 Q0 b 2 {k} r\\n")
"""


LETOR_NO_LAST_DOCID = (b"2 qid:1 1:0.5 2:1 3:0 #docid = a1\n"
         b"0 qid:1 1:0.25 2:0.5 3:1 #docid = a2\n"
         b"1 qid:1 1:1 2:0 3:0.5 #docid = a3\n"
         b"0 qid:2 1:0 2:0.75 3:0.5 #docid = b1\n"
         b"1 qid:2 1:0.5 2:0.5 3:0.5\n")


LETOR = (b"2 qid:1 1:0.5 2:1 3:0 #docid = a1\n"
         b"0 qid:1 1:0.25 2:0.5 3:1 #docid = a2\n"
         b"1 qid:1 1:1 2:0 3:0.5 #docid = a3\n"
         b"0 qid:2 1:0 2:0.75 3:0.5 #docid = b1\n"
         b"1 qid:2 1:0.5 2:0.5 3:0.5 #docid = b2\n")


QRELS = "1 0 a1 2\n1 0 a2 0\n1 0 a3 1\n2 0 b1 0\n2 0 b2 1\n"


def write_file(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(p)


def run(lines):
    return "".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for i, (q, d, s) in enumerate(lines))


RUN_A = run([("1", "a1", 3.0), ("1", "a3", 2.0), ("1", "a2", 1.0),
             ("2", "b2", 2.0), ("2", "b1", 1.0)])


RUN_B = run([("1", "a2", 3.0), ("1", "a1", 2.0), ("1", "a3", 1.0),
             ("2", "b1", 2.0), ("2", "b2", 1.0)])


def cranfield_like(tmp_path):
    docs, topics, qrels = small_collection(n_docs=40, n_q=4)
    (tmp_path / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in docs.items()))
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, j in qrels.items()
                                                for d, r in j.items()))


def tune_argv(tmp_path, *extra):
    return ["tune", "--collection", str(tmp_path / "docs.tsv"), "--topics",
            str(tmp_path / "topics.tsv"), "--qrels", str(tmp_path / "qrels.txt"),
            "--param", "k1=0.1:3", "--param", "b=0:1", "--quiet", *extra]


def wait_gone(pid, failure, seconds=5.0):
    """Wait for process ``pid`` to end; kill it and fail the test with ``failure`` if it
    is still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(failure)


def big_runs(tmp_path, nq=150, m=400):
    """Two runs of nq x m lines over 2m documents a query, and qrels of 30 of them."""
    rng = np.random.default_rng(0)
    qrels = "".join(f"q{q} 0 d{q}_{d} {rng.integers(0, 3)}\n" for q in range(nq)
                    for d in rng.choice(2 * m, 30, replace=False))
    runs = {}
    for r in range(2):
        runs[f"r{r}"] = write_file(tmp_path, f"r{r}.run", "".join(
            f"q{q} Q0 d{q}_{d} {i + 1} {x:.6f} r{r}\n" for q in range(nq)
            for i, (d, x) in enumerate(zip(rng.choice(2 * m, m, replace=False),
                                           np.sort(rng.random(m))[::-1]))))
    return write_file(tmp_path, "qrels.txt", qrels), runs, 2 * nq * m


def small_collection(seed=0, n_docs=120, n_q=15, vocab=40):
    """Documents over a small vocabulary (some duplicated, so scores tie), topics of 1-4
    words, graded judgments including judged documents that hold no query word."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}x" for i in range(vocab)]
    docs = {}
    for i in range(n_docs):
        n = int(rng.integers(3, 30))
        docs[f"d{i:03d}"] = " ".join(rng.choice(words, n, p=np.linspace(2, 1, vocab) /
                                                np.linspace(2, 1, vocab).sum()))
    for i in range(0, 10, 3):              # identical documents: ties broken by docno
        docs[f"e{i:03d}"] = docs[f"d{i:03d}"]
    topics = {f"q{j}": " ".join(rng.choice(words, int(rng.integers(1, 5))))
              for j in range(n_q)}
    topics["q_empty"] = "the of and"      # nothing the collection knows: scores 0
    qrels = {}
    ids = list(docs)
    for q in topics:
        judged = rng.choice(ids, 12, replace=False)
        qrels[q] = {d: int(rng.integers(0, 3)) for d in judged}
    return docs, topics, qrels


class EngineRun:
    """A picklable run function of an engine's BM25 (for joblib's processes)."""

    def __init__(self, engine):
        self.engine = engine

    def __call__(self, params):
        return self.engine.run("bm25", params)


def make_runs(seed=0, n_q=24, n_docs=40, n_runs=3, decimals=1):
    """Judgments and ``n_runs`` runs over them, ``{qid: {docno: score}}``: noisy views of
    one truth, each leaving documents out, scores rounded so that some tie."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"r{j}": {} for j in range(n_runs)}
    for q in range(n_q):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(n_docs)]
        rel = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.4}
        if not rel:
            rel = {"d0": 0}
        qrels[qid] = rel
        truth = {d: rel.get(d, 0) + rng.normal() for d in docs}
        for j in range(n_runs):
            sel = [d for d in docs if rng.random() < 0.7]
            # rounded scores: ties, broken by docno as trec_eval does
            runs[f"r{j}"][qid] = {d: float(np.round(truth[d] * (j + 1) + 2 * rng.normal(),
                                                    decimals)) for d in sel}
    return qrels, runs


def write_letor(path, data):
    """``data`` written as a LETOR file at ``path`` (docids d0, d1, ...); the path."""
    with open(path, "w") as f:
        for q in range(data.n_queries):
            r = data.query_rows(q)
            for i in range(r.start, r.stop):
                feats = " ".join(f"{j + 1}:{data.X[i, j]:.6f}" for j in range(data.n_features))
                f.write(f"{int(data.y[i])} qid:{data.qids[q]} {feats} #docid = d{i}\n")
    return str(path)


# files of a user's that dfrank must recognise before it touches them: one line of text and
# one of JSON, each without its last newline, and bytes that are no text
USERS_FILES = {"text": b"my notes on the bench", "json": b'{"a": 1, "type": "header"}',
               "binary": bytes(range(256)) * 4}


def users_file(tmp_path, kind, name="users-file"):
    """A user's file of ``kind`` (:data:`USERS_FILES`) at ``tmp_path/name``: (path, bytes)."""
    path = tmp_path / name
    path.write_bytes(USERS_FILES[kind])
    return path, USERS_FILES[kind]
