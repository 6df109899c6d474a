"""``dfrank strategies``: the registered optimizers, each with its first paragraph."""

import textwrap

DESCRIPTION = ("List the registered strategies (optimizers); their options are the keyword "
               "arguments documented in dfrank.strategies.")
EPILOG = """\
examples:
  dfrank strategies
  dfrank fit train.txt --strategy pso --option swarm_size=40"""


def add_arguments(p):
    pass


def run(args):
    from .. import registry

    for name in registry.available():
        obj = registry.get(name)
        cls = obj if isinstance(obj, type) else type(obj)
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        primary = getattr(cls, "name", None)
        alias = f" (alias of {primary})" if primary and primary != name else ""
        lines = textwrap.wrap(doc + alias, 100 - 19) or [""]
        print(f"{name:18s} {lines[0]}")
        for line in lines[1:]:
            print(" " * 19 + line)
    return 0
