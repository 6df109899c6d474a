"""The example scripts: examples/letor_cv.py's paired comparison and one short run."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
DATA = os.path.join(HERE, "..", "..", "shared", "data")
OHSUMED = os.path.join(DATA, "ohsumed-letor3", "QueryLevelNorm", "Fold1")


def load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_letor_cv_paired_table(capsys):
    letor_cv = load_example("letor_cv")
    rng = np.random.default_rng(0)
    a = rng.random(200)
    per_query = {"dfrank fit": a, "same": a.copy(), "worse": a - 0.1}
    letor_cv.print_paired("SET", "ndcg@10", per_query)
    out = capsys.readouterr().out
    se = a.std(ddof=1) / np.sqrt(200)
    assert "on the 200 test queries, ndcg@10" in out
    assert f"standard error of dfrank fit's mean: {se:.4f}" in out
    same = next(line for line in out.splitlines() if line.startswith("same "))
    worse = next(line for line in out.splitlines() if line.startswith("worse "))
    assert same.split()[1:] == ["+0.0000", "[+0.0000,", "+0.0000]", "1"]
    assert worse.split()[1] == "+0.1000"
    assert float(worse.split()[-1]) < 0.001


def test_letor_cv_single_method_prints_no_comparison(capsys):
    letor_cv = load_example("letor_cv")
    letor_cv.print_paired("SET", "map", {"dfrank ca": np.ones(5)})
    assert capsys.readouterr().out == ""


@pytest.mark.skipif(not os.path.isdir(OHSUMED), reason="../shared absent")
def test_letor_cv_runs_on_ohsumed():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "letor_cv.py"),
                          "--data", DATA, "--sets", "OHSUMED", "--strategies", "ca,random",
                          "--seeds", "1", "--restarts", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "OHSUMED: test, median over 1 seeds" in text
    assert "ApproxNDCG (Qin et al. 2010)" in text
    assert "dfrank ca against each method on the 106 test queries" in text
    assert "dfrank random" in text.split("against each method")[1]
