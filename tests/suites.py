"""A generated suite of problems laid out as MQ2008 is distributed, with references
measured on it: what the bench's tests run on (the fixture ``toy_suite`` of conftest)."""

import os

import numpy as np


def write_mq2008(root, rng):
    """Five folds of generated LETOR data where MQ2008's files lie (6 features)."""
    for fold in range(1, 6):
        d = os.path.join(root, "mq2008-letor4", f"Fold{fold}")
        os.makedirs(d)
        lines = []
        for q in range(10):
            for j in range(12):
                x = rng.random(6)
                label = int(min(2, max(0, round(2 * x[0] * x[1] + rng.normal(0, 0.3)))))
                feats = " ".join(f"{k + 1}:{v:.4f}" for k, v in enumerate(x))
                lines.append(f"{label} qid:{fold}{q:02d} {feats} #docid = d{q}_{j}\n")
        with open(os.path.join(d, "train.txt.gz"), "w") as f:
            f.writelines(lines)


def toy_suite(root, problems=("letor-mq2008-map", "fusion-mq2008-map"), folds=(1, 2),
              seed=11):
    """(root, references file) of a generated suite under ``root``."""
    from dfrank.problems import Suite
    from dfrank.problems import references as refs

    root = str(root)
    write_mq2008(root, np.random.default_rng(seed))
    inst = Suite(root).select(list(problems), folds=list(folds))
    path = os.path.join(root, "refs.json")
    refs.save(refs.compute(root, inst, command="test"), path)
    return root, path
