"""The README's first ten lines: learn a ranker that maximizes NDCG@10 directly.

    python examples/quickstart.py [--help]

Uses the small synthetic set bundled with dfrank (no data to download).
"""

import argparse

import dfrank

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--model", default="model.json", help="where to save the model")
args = parser.parse_args()

train, valid, test = dfrank.data.datasets.load_demo()
result = dfrank.maximize(train, "ndcg@10", "coordinate_ascent", restarts=5, valid=valid,
                         seed=0)
print(result)
ranker = result.ranker
print("test:", ranker.evaluate(test, ["ndcg@10", "map", "p@5"]))
ranker.save(args.model)
print("model saved to", args.model, "- reload it with dfrank.LinearRanker.load")
