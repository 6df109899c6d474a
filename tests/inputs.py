"""Small inputs that several test files share: LETOR and TREC files, a tiny collection, the
argument lists of commands over them, and waiting for a process to end."""

import os
import signal
import time

import numpy as np
import pytest

from dfrank import LinearRanker
from dfrank.datasets import make_letor_like


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
    from tests.test_tune import small_collection

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
