"""TREC runs: agreement with trec_eval (through pytrec_eval), file errors, the CLI layout."""

import gzip
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dfrank
from dfrank import DataFormatError, cli
from dfrank.metrics.trec_measures import evaluate_run, parse_measures
from tests.inputs import trec_files

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ["map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "ndcg",
            "ndcg_cut", "recall", "map_cut", "success", "num_ret", "num_rel", "num_rel_ret"]


@st.composite
def trec_case(draw):
    """Qrels and a run sharing some queries, with score ties (docno decides, also between
    scores equal in single precision only), graded relevance, negative judgments, unjudged
    documents, queries without relevant documents."""
    n_q = draw(st.integers(1, 5))
    docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))] + ["D1", "x", "d10b", "aa"]
    qrels, run = {}, {}
    for q in range(n_q):
        qid = f"q{q}"
        if draw(st.booleans()) or q == 0:  # judged
            judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
            if judged:
                # negative judgments: in the pool but unjudged (TREC Web's -2 and -1)
                qrels[qid] = {d: draw(st.integers(-2, 3)) for d in judged}
                if max(qrels[qid].values()) < 0:   # trec_eval (pytrec_eval) crashes on a
                    qrels[qid][judged[0]] = 0      # query of negative judgments only
        if draw(st.booleans()) or q == 0:  # retrieved
            ret = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1,
                                max_size=len(docs)))
            # 0.3 and 0.1 + 0.2 are one score in trec_eval's single precision
            run[qid] = {d: float(draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, -2.0, 1e-3, 0.3,
                                                       0.1 + 0.2])))
                        for d in ret}
    return qrels, run


def write_files(tmp_path, qrels, run, gz=False):
    qp = tmp_path / ("q.txt.gz" if gz else "q.txt")
    rp = tmp_path / ("r.txt.gz" if gz else "r.txt")
    qtext = "".join(f"{q} 0 {d} {r}\n" for q, js in qrels.items() for d, r in js.items())
    rtext = "".join(f"{q} Q0 {d} {i + 1} {s!r} myrun extra\n" for q, ds in run.items()
                    for i, (d, s) in enumerate(ds.items()))
    for p, t in ((qp, qtext), (rp, rtext)):
        if gz:
            with gzip.open(p, "wt") as f:
                f.write(t)
        else:
            p.write_text(t)
    return str(qp), str(rp)


@pytest.mark.parametrize("level", [1, 2])
@settings(max_examples=60, deadline=None)
@given(case=trec_case())
def test_agrees_with_trec_eval(tmp_path_factory, case, level):
    qrels, run = case
    if not qrels or not any(q in qrels for q in run):
        return
    tmp = tmp_path_factory.mktemp("t")
    qp, rp = write_files(tmp, qrels, run)
    ours = evaluate_run(qp, rp, MEASURES, rel_level=level)
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level)
    theirs = ref.evaluate(run)
    assert set(ours.per_query) == set(theirs)
    for q, vals in theirs.items():
        for name, v in vals.items():
            assert ours.per_query[q][name] == pytest.approx(v, abs=1e-9), (q, name)
    # averages as trec_eval prints them
    if theirs:
        for name in ["map", "P_5", "ndcg_cut_10", "bpref", "recip_rank"]:
            mean = np.mean([theirs[q][name] for q in theirs])
            assert ours.all[name] == pytest.approx(mean, abs=1e-9)
        gm = math.exp(np.mean([theirs[q]["gm_map"] for q in theirs]))
        assert ours.all["gm_map"] == pytest.approx(gm, abs=1e-12)
        assert ours.all["num_ret"] == sum(theirs[q]["num_ret"] for q in theirs)


@settings(max_examples=30, deadline=None)
@given(case=trec_case(), cut=st.integers(1, 6))
def test_max_docs_and_custom_cutoffs(tmp_path_factory, case, cut):
    qrels, run = case
    if not qrels or not any(q in qrels for q in run):
        return
    tmp = tmp_path_factory.mktemp("t")
    qp, rp = write_files(tmp, qrels, run, gz=True)
    # -M: trec_eval keeps the first N of each ranking = pytrec_eval on truncated runs
    truncated = {}
    for q, ds in run.items():
        # trec_eval's order: the score as a C float, then the docno descending
        ranked = sorted(ds.items(), key=lambda kv: (-np.float32(kv[1]),
                                                    [-ord(c) for c in kv[0]] + [1]))
        truncated[q] = dict(ranked[:cut])
    ours = evaluate_run(qp, rp, ["map", "P.1,3,7", "ndcg_cut.2,4"], max_docs=cut)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.1,3,7", "ndcg_cut.2,4"})
    theirs = ref.evaluate(truncated)
    for q, vals in theirs.items():
        for name, v in vals.items():
            assert ours.per_query[q][name] == pytest.approx(v, abs=1e-9), (q, name)


def test_complete_averages_over_all_judged_queries(tmp_path):
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d1": 0}}
    run = {"a": {"d1": 1.0}, "z": {"d1": 1.0}}
    qp, rp = write_files(tmp_path, qrels, run)
    plain = evaluate_run(qp, rp, ["official"])
    full = evaluate_run(qp, rp, ["official"], complete=True)
    assert plain.all["num_q"] == 1 and full.all["num_q"] == 3
    assert plain.all["map"] == 1.0 and full.all["map"] == pytest.approx(1 / 3)
    assert full.all["num_rel"] == 2
    assert full.all["gm_map"] == pytest.approx(math.exp((0 + 2 * math.log(1e-5)) / 3))


def test_runs_and_qrels_share_one_compiled_parser(tmp_path):
    """Scores (floats) and relevance grades (integers) go to arrays of their own, so both
    kinds of file run the same specialization of the parser: a first command that reads
    both compiles it once."""
    from dfrank.io import _trec_kernel

    qp, rp = write_files(tmp_path, {"a": {"d1": 2, "d2": 0}}, {"a": {"d1": 0.5, "d2": 1.5}})
    assert evaluate_run(qp, rp, ["map"]).all["map"] == 0.5
    assert len(_trec_kernel.parse_lines.signatures) == 1


def test_cli_layout_matches_trec_eval(tmp_path, capsys):
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}
    run = {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.1}, "q2": {"d9": 1.0, "d1": 0.2}}
    qp, rp = write_files(tmp_path, qrels, run)
    assert cli.main(["trec-eval", "-q", "-m", "official", "-m", "ndcg_cut.5,10", qp, rp]) == 0
    out = capsys.readouterr().out
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "gm_map", "Rprec", "bpref",
                                                 "recip_rank", "iprec_at_recall", "P",
                                                 "num_ret", "num_rel", "num_rel_ret",
                                                 "ndcg_cut.5,10"}).evaluate(run)
    # build the expected text from pytrec_eval's values in trec_eval's layout and order
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank"] + [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)] + \
        [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)] + \
        ["ndcg_cut_5", "ndcg_cut_10"]

    def fmt(n, q, v):
        s = str(int(v)) if n.startswith("num_") else f"{v:.4f}"
        return f"{n:<22s}\t{q}\t{s}"

    # gm_map is printed for "all" only (trec_eval: "not for individual topics")
    lines = [fmt(n, q, ref[q][n]) for q in sorted(ref) for n in names if n != "gm_map"]
    lines.append(f"{'runid':<22s}\tall\tmyrun")
    lines.append(f"{'num_q':<22s}\tall\t2")
    for n in names:
        vals = [ref[q][n] for q in ref]
        v = sum(vals) if n.startswith("num_") else (
            math.exp(np.mean(vals)) if n == "gm_map" else np.mean(vals))
        lines.append(fmt(n, "all", v))
    assert out == "\n".join(lines) + "\n"


BAD = [
    ("qrels", "q1 0 d1\n", "too few columns", 1),
    ("qrels", "q1 0 d1 1\nq1 0 d2 yes\n", "relevance is not an integer", 2),
    ("run", "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 high r\n", "score is not a number", 2),
    ("run", "q1 Q0 d1 1 0.5 r\n\nq1 Q0 d2 2\n", "too few columns", 3),
    ("run", "q1 Q0 d1 1 nan r\n", "NaN or infinite", 1),
]


@pytest.mark.parametrize("which,text,match,line", BAD)
def test_malformed_lines(tmp_path, which, text, match, line):
    good_q = tmp_path / "q.txt"
    good_q.write_text("q1 0 d1 1\n")
    good_r = tmp_path / "r.txt"
    good_r.write_text("q1 Q0 d1 1 0.5 r\n")
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    args = (str(bad), str(good_r)) if which == "qrels" else (str(good_q), str(bad))
    with pytest.raises(DataFormatError, match=match) as e:
        evaluate_run(*args)
    assert e.value.line == line and f"line {line}" in str(e.value)


def test_duplicate_docno_in_run_is_an_error(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.4 r\nq1 Q0 d1 3 0.3 r\n")
    with pytest.raises(DataFormatError,
                       match=r"'d1' appears twice for query 'q1' \(lines 1 and 3\)"):
        evaluate_run(str(q), str(r))


def test_measure_specs():
    assert list(parse_measures(["official"]))[:3] == ["runid", "num_q", "num_ret"]
    assert parse_measures(["P.3,7", "P.5"])["P"] == (3, 5, 7)
    with pytest.raises(ValueError, match="unknown trec_eval measure"):
        parse_measures(["mapp"])
    with pytest.raises(ValueError, match="takes no parameters"):
        parse_measures(["map.5"])
    assert "ndcg_cut" in cli.parser("trec-eval").format_help()


def trec_reference(qrels, run, measures, level=1, max_docs=None, complete=False):
    """trec_eval's per-query values through pytrec_eval, with -M (runs truncated to their
    first N documents, score descending, docno descending) and -c (every judged query the
    run lacks: zeros, num_rel filled in) applied as trec_eval applies them."""
    if max_docs is not None:   # trec_eval's order: the score as a C float, docno descending
        run = {q: dict(sorted(ds.items(), key=lambda kv: (-np.float32(kv[1]),
                                                          [-ord(c) for c in kv[0]] + [1])
                              )[:max_docs])
               for q, ds in run.items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
    per = ev.evaluate({q: ds for q, ds in run.items() if ds})
    if complete:
        names = next(iter(per.values())).keys() if per else []
        for q in qrels:
            if q not in per:
                per[q] = {n: 0.0 for n in names}
                per[q]["num_rel"] = float(sum(r >= level for r in qrels[q].values()))
                per[q]["gm_map"] = math.log(1e-5)
    return per


FLAG_MEASURES = ["official", "ndcg", "ndcg_cut", "recall", "map_cut", "success",
                 "iprec_at_recall"]
REF_MEASURES = ["map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
                "num_ret", "num_rel", "num_rel_ret", "ndcg", "ndcg_cut", "recall", "map_cut",
                "success"]


@settings(max_examples=40, deadline=None)
@given(case=trec_case(), complete=st.booleans(), level=st.sampled_from([1, 2]),
       max_docs=st.sampled_from([None, 1, 3]))
def test_flags_agree_with_trec_eval(tmp_path_factory, case, complete, level, max_docs):
    """-q, -c, -M, -l and the measure families, per query and averaged, on runs with
    judged queries they lack, score ties and unjudged documents."""
    qrels, run = case
    if not qrels or not any(q in qrels for q in run):
        return
    tmp = tmp_path_factory.mktemp("t")
    qp, rp = write_files(tmp, qrels, run)
    ours = evaluate_run(qp, rp, FLAG_MEASURES, complete=complete, rel_level=level,
                        max_docs=max_docs)
    theirs = trec_reference(qrels, run, REF_MEASURES, level, max_docs, complete)
    assert set(ours.per_query) == set(theirs)
    for q, vals in theirs.items():
        for name, v in vals.items():
            assert ours.per_query[q][name] == pytest.approx(v, abs=1e-9), (q, name)
    for name in ours.all:
        if name in ("runid", "num_q"):
            continue
        vals = [theirs[q][name] for q in theirs]
        want = (sum(vals) if name.startswith("num_") else
                math.exp(np.mean(vals)) if name == "gm_map" else np.mean(vals))
        assert ours.all[name] == pytest.approx(want, abs=1e-9), name
    assert ours.all["num_q"] == len(theirs)
    # the per-query blocks trec_eval prints: one per evaluated query, in qid order
    text = ours.format(per_query=True)
    blocks = [line.split("\t")[1] for line in text.splitlines()
              if line.startswith("num_ret ") and "\tall\t" not in line]
    assert blocks == sorted(theirs)


def test_complete_prints_zero_blocks_for_judged_queries_the_run_lacks(tmp_path, capsys):
    qrels = {"a": {"d1": 1}, "b": {"d2": 1, "d3": 2, "d4": 0}, "c": {"d1": 0}}
    run = {"a": {"d1": 1.0}, "z": {"d1": 1.0}}
    qp, rp = write_files(tmp_path, qrels, run)
    assert cli.main(["trec-eval", "-q", "-c", "-m", "map", "-m", "num_rel", qp, rp]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{'num_rel':<22s}\ta\t1", f"{'map':<22s}\ta\t1.0000",
                   f"{'num_rel':<22s}\tb\t2", f"{'map':<22s}\tb\t0.0000",
                   f"{'num_rel':<22s}\tc\t0", f"{'map':<22s}\tc\t0.0000",
                   f"{'num_rel':<22s}\tall\t3", f"{'map':<22s}\tall\t0.3333"]
    assert cli.main(["trec-eval", "-q", "-m", "map", qp, rp]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{'map':<22s}\ta\t1.0000",
                                                    f"{'map':<22s}\tall\t1.0000"]


def test_iprec_rounding_of_trec_eval_9_and_10(tmp_path):
    """R = 4: recall 0.3 needs int(1.2 + 0.9) = 2 relevant documents in trec_eval 9 (and
    pytrec_eval), round(1.2) = 1 in trec_eval 10; recall 0.6 needs 3 and 2."""
    qrels = {"q": dict({f"d{i}": 1 for i in range(4)}, **{f"n{i}": 0 for i in range(8)})}
    order = ["d0", "n0", "n1", "d1", "n2", "n3", "n4", "n5", "d2", "n6", "n7", "d3"]
    run = {"q": {d: 100.0 - i for i, d in enumerate(order)}}
    qp, rp = write_files(tmp_path, qrels, run)
    legacy = evaluate_run(qp, rp, ["iprec_at_recall"]).per_query["q"]
    nearest = evaluate_run(qp, rp, ["iprec_at_recall"], iprec_rounding="nearest").per_query["q"]
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["q"]
    assert legacy == pytest.approx(ref, abs=1e-12)
    assert legacy["iprec_at_recall_0.30"] == 0.5 and nearest["iprec_at_recall_0.30"] == 1.0
    assert legacy["iprec_at_recall_0.60"] == pytest.approx(1 / 3)
    assert nearest["iprec_at_recall_0.60"] == 0.5
    with pytest.raises(ValueError, match="iprec_rounding"):
        evaluate_run(qp, rp, ["iprec_at_recall"], iprec_rounding="up")


def test_no_common_query_and_duplicate_judgments_are_errors(tmp_path):
    qp, rp = write_files(tmp_path, {"a": {"d1": 1}}, {"b": {"d1": 1.0}})
    with pytest.raises(ValueError, match="share no query"):
        evaluate_run(qp, rp)
    q = tmp_path / "dup.txt"
    q.write_text("a 0 d1 1\na 0 d2 0\na 0 d1 0\n")
    with pytest.raises(DataFormatError, match=r"judges docno 'd1' twice \(lines 1 and 3\)"):
        evaluate_run(str(q), rp)


def test_every_form_of_runs_and_qrels_evaluates_alike(tmp_path):
    """Files, dicts, DataFrames (PyTerrier's columns), ranx objects and ir_datasets-like
    records give trec_eval's values."""
    pd = pytest.importorskip("pandas")
    ranx = pytest.importorskip("ranx")
    from collections import namedtuple

    from tests.inputs import make_runs

    qrels, runs = make_runs(seed=4)
    run = runs["r1"]
    run["q0"]["d1"], run["q1"]["d2"] = 1e-05, -2.5e-300   # exponents written exactly
    measures = ["map", "ndcg_cut.10", "P.5", "recip_rank"]
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
    want = {m: np.mean([v[m.replace(".", "_")] for v in ref.values()]) for m in measures}
    qpath, rpath = write_files(tmp_path, qrels, run)
    Rec = namedtuple("Rec", "query_id doc_id relevance iteration")
    forms = {
        "files": (qpath, rpath),
        "dicts": (qrels, run),
        "frames": (pd.DataFrame([(q, d, r) for q, x in qrels.items() for d, r in x.items()],
                                columns=["qid", "docno", "label"]),
                   pd.DataFrame([(q, d, s) for q, x in run.items() for d, s in x.items()],
                                columns=["qid", "docno", "score"])),
        "ranx": (ranx.Qrels(qrels), ranx.Run(run)),
        "ir_datasets": ([Rec(q, d, r, "0") for q, x in qrels.items() for d, r in x.items()],
                        run),
    }
    for form, (q, r) in forms.items():
        got = evaluate_run(q, r, measures).all
        for m in measures:
            assert got[m.replace(".", "_")] == pytest.approx(want[m], abs=1e-15), (form, m)
    with pytest.raises(DataFormatError, match="white space"):
        evaluate_run({"q 1": {"d1": 1}}, {"q 1": {"d1": 0.5}}, ["map"])


def test_negative_judgments_are_unjudged_as_in_trec_eval(tmp_path, capsys):
    """Negative judgments counted as judged non-relevant (bpref 0 where trec_eval gives 0.5),
    and a negative relevance level counted trec_eval's unjudged markers as relevant: both read
    as trec_eval reads them."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"a": 1, "b": -2, "c": 0, "d": -1, "e": 2},
             "2": {"a": -2, "b": 1, "c": -1, "d": 0}}
    run = {"1": {"b": 5.0, "d": 4.0, "a": 3.0, "c": 2.0, "e": 1.0},
           "2": {"a": 4.0, "c": 3.0, "d": 2.0, "b": 1.0}}
    q, r = trec_files(tmp_path, qrels, run)
    measures = {"bpref", "map", "ndcg", "num_rel", "P"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = dfrank.evaluate_run(q, r, sorted(measures))
    for qid, vals in theirs.items():
        for name, v in vals.items():
            assert ours.per_query[qid][name] == pytest.approx(v, abs=1e-12), (qid, name)
    assert ours.per_query["1"]["bpref"] == 0.5   # 0 when the negatives counted
    # a level below 0 would count trec_eval's markers for unjudged documents as relevant
    assert cli.main(["trec-eval", "-l", "-1", q, r]) == 2
    assert "rel_level must be an integer >= 0" in capsys.readouterr().err


def test_scores_are_compared_as_trec_eval_reads_them(tmp_path):
    """0.1 + 0.2 and 0.3 ranked apart in dfrank and tied in trec_eval (which reads scores as C
    floats): evaluate, tune and fuse compare scores as trec_eval reads them from a file."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"1": {"a": 0, "b": 1}, "2": {"a": 0, "b": 1}}
    # one C float: the docno b > a ranks b first
    run = {"1": {"a": 0.1 + 0.2, "b": 0.3}, "2": {"a": 0.1 + 0.2, "b": 0.3}}
    q, r = trec_files(tmp_path, qrels, run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    ours = dfrank.evaluate_run(q, r, ["recip_rank"])
    assert ours.per_query["1"]["recip_rank"] == theirs["1"]["recip_rank"] == 1.0
    # tune scores an engine's run as trec_eval reads its file
    from dfrank.tuning.tuner import RunEvaluator

    ev = RunEvaluator(lambda p: run, qrels, "mrr")
    assert ev({}).tolist() == [1.0, 1.0]
    # fuse reports trec_eval's values of the runs it reads and of the run it writes
    res = dfrank.fuse(qrels, {"x": run, "y": run}, "mrr", norm="none")
    assert res.value == 1.0 and res.baselines["run x"]["value"] == 1.0


SPELLINGS_QRELS = {"1": {"a": 2, "b": 0, "c": 1, "e": 1}, "2": {"a": 1, "d": 1},
                   "3": {"b": 1}}
SPELLINGS_RUN = {"1": {"a": 0.5, "b": 0.9, "c": 0.1, "d": 0.1},
                 "2": {"a": 1.0, "b": 0.3, "d": 0.2}, "3": {"a": 0.4, "b": 0.4}}


def test_evaluate_run_takes_every_spelling_each_with_its_own_meaning():
    """``evaluate_run(qrels, run, ["ndcg_cut_10"])`` refused the name that
    ``dfrank.pyterrier.GridSearch`` and ``KFoldGridSearch`` take: trec_eval's printed names
    (``ndcg_cut_10``, ``P_10``), its specs (``ndcg_cut.10``), ir_measures' (``nDCG@10``) and
    dfrank's (``ndcg@10``, with 2^l - 1 gains) are all taken, each meaning what it means."""
    pytest.importorskip("ir_measures")
    from dfrank.io.forms import run_as_data
    from dfrank.metrics.evaluation import bind_metric
    from dfrank.metrics.registry import RUN_TIES, get_metric

    names = ["ndcg_cut_10", "ndcg_cut.10", "nDCG@10", "ndcg@10", "P_2", "P.2", "P@2", "p@2",
             "recip_rank", "RR", "mrr"]
    res = evaluate_run(SPELLINGS_QRELS, SPELLINGS_RUN, names)
    agg = res.all
    theirs = pytrec_eval.RelevanceEvaluator(SPELLINGS_QRELS, {"ndcg_cut"}).evaluate(
        SPELLINGS_RUN)
    assert agg["ndcg_cut_10"] == pytest.approx(
        np.mean([theirs[q]["ndcg_cut_10"] for q in "123"]), abs=1e-12)
    assert agg["nDCG@10"] == pytest.approx(agg["ndcg_cut_10"], abs=1e-12)
    assert agg["P_2"] == agg["P@2"] == agg["p@2"] and agg["recip_rank"] == agg["RR"] == \
        agg["mrr"]
    data = run_as_data(SPELLINGS_RUN, SPELLINGS_QRELS, ["1", "2", "3"])
    ours = bind_metric(data, get_metric("ndcg@10"), RUN_TIES).per_query(data.X[:, 0])
    assert agg["ndcg@10"] == pytest.approx(ours.mean(), abs=1e-15)
    assert agg["ndcg@10"] != agg["ndcg_cut_10"]         # exponential gains, not linear
    with pytest.raises(ValueError, match="max_docs .*trec_eval -M"):
        evaluate_run(SPELLINGS_QRELS, SPELLINGS_RUN, ["ndcg@10"], max_docs=2)


def test_a_trec_eval_name_without_ir_measures_names_the_extra(monkeypatch):
    """Where ir_measures is absent, a trec_eval or ir_measures name that needs it says
    which extra installs it."""
    import builtins
    import importlib.util

    from dfrank.metrics.registry import get_metric

    real_import, real_find = builtins.__import__, importlib.util.find_spec

    def no_ir_measures(name, *args, **kwargs):
        if name.split(".")[0] == "ir_measures":
            raise ImportError("No module named 'ir_measures'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ir_measures)
    monkeypatch.setattr(importlib, "import_module", lambda n, *a: no_ir_measures(n))
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda n, *a: None if n == "ir_measures" else real_find(n, *a))
    for name in ("ndcg_cut_10", "nDCG@10"):
        with pytest.raises(ValueError, match=r"pip install 'dfrank\[ir_measures\]'"):
            get_metric(name)
    assert evaluate_run(SPELLINGS_QRELS, SPELLINGS_RUN, ["ndcg_cut_10"]).all["ndcg_cut_10"] > 0
