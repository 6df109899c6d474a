"""The first command of each task a new user starts with (issue #52), as argument lists,
and the input files they read, written from ../shared/data and README's own examples.

    tasks(folder) -> [(name, argv), ...]   (argv without the leading "dfrank")

Used by bench_first_calls.py (first and warm times in a fresh install) and by the
install-time build of the kernels, which must cover what these commands compile.
"""

import os

import numpy as np

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                      "data")
MQ2008 = os.path.join(SHARED, "mq2008-letor4", "Fold1", "{}.txt.gz")   # README's fit
CISI = os.path.join(SHARED, "cisi")


def _fuse_inputs(folder):
    """README's fusion example as TREC files: qrels and three runs of 30 queries."""
    rng = np.random.default_rng(0)
    qrels, runs = {}, {"bm25": {}, "dense": {}, "rerank": {}}
    for q in range(30):
        docs = [f"d{i}" for i in range(50)]
        qrels[f"q{q}"] = {d: int(rng.integers(1, 3)) for d in docs if rng.random() < 0.3}
        truth = {d: qrels[f"q{q}"].get(d, 0) + rng.normal() for d in docs}
        for j, name in enumerate(runs):
            runs[name][f"q{q}"] = {d: truth[d] + (3 - j) * rng.normal() for d in docs[:40]}
    with open(os.path.join(folder, "qrels.txt"), "w") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items())
    for name, run in runs.items():
        with open(os.path.join(folder, f"{name}.run"), "w") as f:
            for q, docs in run.items():
                ranked = sorted(docs.items(), key=lambda kv: -kv[1])
                f.writelines(f"{q} Q0 {d} {i + 1} {s!r} {name}\n"
                             for i, (d, s) in enumerate(ranked))


def _tune_inputs(folder):
    """README's toy collection for `dfrank tune` as files."""
    rng = np.random.default_rng(0)
    words = [f"term{i}" for i in range(25)]
    docs = {f"doc{i:02d}": " ".join(rng.choice(words, rng.integers(5, 40)))
            for i in range(60)}
    topics = {f"q{j}": " ".join(rng.choice(words, 3, replace=False)) for j in range(8)}
    qrels = {}
    for q, text in topics.items():
        qrels[q] = {}
        for d in rng.choice(list(docs), 12, replace=False):
            share = np.mean([t in text.split() for t in docs[d].split()])
            qrels[q][d] = 2 if share >= 0.1 else int(share > 0)
    with open(os.path.join(folder, "docs.tsv"), "w") as f:
        f.writelines(f"{d}\t{text}\n" for d, text in docs.items())
    with open(os.path.join(folder, "topics.tsv"), "w") as f:
        f.writelines(f"{q}\t{text}\n" for q, text in topics.items())
    with open(os.path.join(folder, "tune_qrels.txt"), "w") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items())


def _cisi_run(folder):
    """A BM25 run of CISI's queries (by dfrank's engine), and CISI's qrels, as files."""
    from dfrank import ir
    from dfrank.io.forms import run_to_trec_lines

    docs, topics, qrels = ir.load_cisi(CISI)
    engine = ir.Engine(docs, topics, qrels)
    with open(os.path.join(folder, "cisi.run"), "w") as f:
        f.writelines(run_to_trec_lines(engine.run("bm25", {"k1": 1.2, "b": 0.75})))
    with open(os.path.join(folder, "cisi_qrels.txt"), "w") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, j in qrels.items() for d, r in j.items())


def write_inputs(folder, with_engine=True):
    """The files the tasks read, under ``folder`` (the CISI run needs dfrank's engine:
    ``with_engine=False`` leaves it out)."""
    os.makedirs(folder, exist_ok=True)
    _fuse_inputs(folder)
    _tune_inputs(folder)
    if with_engine:
        _cisi_run(folder)


def tasks(folder):
    """(name, argv) of each first command, reading the files of :func:`write_inputs`."""
    f = lambda name: os.path.join(folder, name)   # noqa: E731
    train, valid, test = (MQ2008.format(s) for s in ("train", "vali", "test"))
    return [
        ("demo", ["demo"]),
        ("fit", ["fit", train, "--valid", valid, "--test", test, "-o", f("model.json")]),
        ("fit --strategy ca", ["fit", train, "--strategy", "ca", "-o", f("model_ca.json")]),
        ("evaluate", ["evaluate", f("model.json"), test]),
        ("trec-eval", ["trec-eval", f("cisi_qrels.txt"), f("cisi.run")]),
        ("fuse", ["fuse", "--qrels", f("qrels.txt"), f("bm25.run"), f("dense.run"), f("rerank.run"),
                  "--metric", "map", "-o", f("fused.run")]),
        ("tune", ["tune", "--collection", f("docs.tsv"), "--topics", f("topics.tsv"),
                  "--qrels", f("tune_qrels.txt"), "--model", "bm25", "--budget", "30",
                  "--folds", "4"]),
        ("compare", ["compare", train, "--strategies", "ca,pso,random", "--budget", "2000",
                     "--seeds", "1"]),
    ]
