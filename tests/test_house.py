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


# what a docstring or comment must not hold: measurements, dates, issue numbers, former
# modules (figures and history belong in benchmarks/ and commit messages)
HISTORY = [r"measured on", r"\bus per\b", r"\bms per\b", r"\d (?:us|ms)\b", r"issue #\d+",
           r"(?<![\w&])#\d{2,}\b", r"this machine kind", r"\b20\d\d-\d\d-\d\d\b",
           r"dfrank\._assemble\b", r"dfrank\._prebuilt\b", r"dfrank\._compiling\b",
           r"metrics\._background\b", r"linesearch\.compile_ahead\b", r"dfrank\.warmup\b"]


def _prose(path):
    """(line, text) of every comment and docstring of a module."""
    import io
    import tokenize

    src = open(path).read()
    out = [(tok.start[0], tok.string) for tok in
           tokenize.generate_tokens(io.StringIO(src).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def test_no_docstring_or_comment_holds_measurements_or_history():
    import re

    found = []
    for name, path in modules().items():
        for line, text in _prose(path):
            for pattern in HISTORY:
                m = re.search(pattern, text)
                if m:
                    found.append(f"{os.path.relpath(path, ROOT)}:{line}: {m.group(0)!r}")
    assert not found, "\n".join(found)
