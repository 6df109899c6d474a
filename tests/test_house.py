"""The house's arrows: no import cycle among dfrank's modules (imports inside functions
included), and nothing below the driver imports it."""

import ast
import os

ROOT = os.path.join(os.path.dirname(__file__), "..")
DRIVER_USERS = ("dfrank.api", "dfrank.cli", "dfrank.fusion", "dfrank.tuning",
                "dfrank.estimator", "dfrank.compare", "dfrank.testing",
                "dfrank.observers", "dfrank.pyterrier", "dfrank.problems", "dfrank")


def modules():
    """dfrank's modules by name, those of strategies/ (installed as dfrank.strategies)
    included."""
    out = {}
    for folder, package in (("dfrank", "dfrank"), ("strategies", "dfrank.strategies")):
        base = os.path.join(ROOT, folder)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    rel = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                    name = f"{package}.{rel}".removesuffix(".__init__")
                    out[name] = path
    return out


def imports(name, path, mods):
    package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            base = (f"{base}.{node.module}" if node.module else base) if node.level \
                else node.module
            subs = {f"{base}.{a.name}" for a in node.names} & set(mods)
            found |= subs
            if len(subs) < len(node.names):   # names from the module itself
                found.add(base)
    return {m for m in found if m in mods and m != name}


def test_no_import_cycle_and_no_upward_arrow():
    mods = modules()
    graph = {m: imports(m, p, mods) for m, p in mods.items()}
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for n in graph[m]:
            if n == "dfrank":
                continue   # the package itself: its __init__ re-exports
            if state.get(n) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack + [m, n]))
            if n not in state:
                visit(n, stack + [m])
        state[m] = "done"

    for m in graph:
        if m not in state:
            visit(m, [])
    for m, targets in graph.items():
        if "dfrank.api" in targets:
            assert m.startswith(DRIVER_USERS), f"{m} imports the driver"
