"""``dfrank metrics``: the metric names dfrank knows, with their formulas."""

DESCRIPTION = "List the metric names dfrank knows, with formulas."
EPILOG = """\
example:
  dfrank metrics | grep ndcg"""


def add_arguments(p):
    pass


def run(args):
    from .. import metrics

    for name in metrics.available():
        print(f"{name:14s} {metrics.describe(name.replace('@k', '@10'))}")
    return 0
