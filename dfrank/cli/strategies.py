"""``dfrank strategies``: the registered optimizers, each with its first paragraph; with a
NAME, that strategy's options: what each takes (its declared kind) and its default."""

import textwrap

DESCRIPTION = ("List the registered strategies (optimizers); with NAME, the options of that "
               "strategy: what each takes and its default (--option KEY=VALUE sets one).")
EPILOG = """\
examples:
  dfrank strategies
  dfrank strategies pso
  dfrank fit train.txt --strategy pso --option swarm_size=40"""


def add_arguments(p):
    p.add_argument("name", nargs="?", help="a strategy: show its options")


def run(args):
    from .. import registry

    if args.name is not None:
        return _options(registry, args.name)
    for name in registry.strategy_names():
        cls = _class(registry.get_strategy(name))
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        primary = getattr(cls, "name", None)
        alias = f" (alias of {primary})" if primary and primary != name else ""
        lines = textwrap.wrap(doc + alias, 100 - 19) or [""]
        print(f"{name:18s} {lines[0]}")
        for line in lines[1:]:
            print(" " * 19 + line)
    return 0


def _class(obj):
    return obj if isinstance(obj, type) else type(obj)


def _options(registry, name):
    from ..text import format_table

    found = registry.get_strategy(name)
    strat = registry.resolve(found)
    cls = _class(found)
    kinds = cls.declared() if issubclass(cls, registry.Strategy) else {}
    rows = [[key, kinds[key].describe() if key in kinds else "passed on as given",
             repr(value)] for key, value in strat.get_params().items()]
    print(f"{name}: --option KEY=VALUE sets one (dfrank.strategies documents each)")
    print(format_table(rows, ["option", "takes", "default"]) if rows else "(no options)")
    return 0
