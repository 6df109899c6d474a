"""The house's arrows: no import cycle among dfrank's modules (imports inside functions
included), and nothing below the driver imports it."""

import ast
import os

ROOT = os.path.join(os.path.dirname(__file__), "..")
DRIVER_USERS = ("dfrank.driver.api", "dfrank.cli", "dfrank.fusion", "dfrank.tuning.tuner",
                "dfrank.estimator", "dfrank.comparison", "dfrank.testing",
                "dfrank.driver.observers", "dfrank.pyterrier", "dfrank.problems", "dfrank")


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
    return {m for m in found if m in mods and m != name} | dynamic_imports(name, path, mods)


def dynamic_imports(name, path, mods):
    """The modules a module imports by name at run time (``importlib.import_module``): the
    dfrank modules its string constants name (``"dfrank._kernels.sort"``, or
    ``"module:kernel"`` as the warm-up's tasks do), and for a command table
    (``COMMANDS``, :mod:`dfrank.cli.commands`) the command modules it names."""
    src = open(path).read()
    if "import_module" not in src:
        return set()
    tree = ast.parse(src)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            target = node.value.partition(":")[0]
            if target in mods:
                found.add(target)
        if isinstance(node, ast.Assign) and \
                any(getattr(t, "id", None) == "COMMANDS" for t in node.targets):
            package = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
            for entry in ast.literal_eval(node.value).values():
                found.add(f"{package}.{entry[0]}")
    return {m for m in found if m in mods and m != name}


def test_the_house_check_sees_imports_made_by_name():
    """The command table's modules are arrows too."""
    mods = modules()
    cli = imports("dfrank.cli.commands", mods["dfrank.cli.commands"], mods)
    assert {"dfrank.cli.fit", "dfrank.cli.warmup", "dfrank.cli.trec_eval"} <= cli


# the rooms of the house: dfrank's subpackages; each module at the top of dfrank/ is a room
# of its own
PACKAGES = ("dfrank._jit", "dfrank._kernels", "dfrank.cli", "dfrank.cluster", "dfrank.data",
            "dfrank.driver", "dfrank.fusion", "dfrank.io", "dfrank.ir", "dfrank.linesearch",
            "dfrank.metrics", "dfrank.objectives", "dfrank.problems", "dfrank.pyterrier",
            "dfrank.strategies", "dfrank.tuning")


def room(module):
    """The room (package, or loose module) that ``module`` belongs to."""
    return next((p for p in PACKAGES if module == p or module.startswith(p + ".")), module)


def room_arrows():
    """``{room: rooms it imports}`` (by statement or by name, in functions too)."""
    mods = modules()
    arrows = {}
    for m, p in mods.items():
        for target in imports(m, p, mods):
            if target != "dfrank" and room(target) != room(m):
                arrows.setdefault(room(m), set()).add(room(target))
    return arrows


def test_the_rooms_are_dfranks_packages_and_the_build_ships_each():
    """The rooms listed here (and in docs/architecture.md) are the packages on disk, and
    pyproject.toml's packages are all of them: a package it lacks would be missing from
    every install but an editable one."""
    import re

    found = {".".join(["dfrank", d]) for d in os.listdir(os.path.join(ROOT, "dfrank"))
             if os.path.isfile(os.path.join(ROOT, "dfrank", d, "__init__.py"))}
    assert found | {"dfrank.strategies"} == set(PACKAGES)
    toml = open(os.path.join(ROOT, "pyproject.toml")).read()
    shipped = re.search(r"^packages = \[(.*?)\]", toml, re.S | re.M).group(1)
    assert set(re.findall(r'"([\w.]+)"', shipped)) == set(PACKAGES) | {"dfrank"}
    drawn = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    missing = [p for p in PACKAGES if f"`{p.replace('.', '/')}/`" not in drawn
               and p != "dfrank.strategies"]
    assert not missing, f"docs/architecture.md does not draw {missing}"


def test_at_most_15_loose_modules_and_no_two_modules_of_one_name():
    """Every part has a room: at most 15 modules at the top of dfrank/ besides its
    ``__init__``, and no two modules share a name unless they play one role in sibling
    packages (a package's ``__init__``, ``__main__``, ``registry``, ``_kernels``, results
    and objectives)."""
    from collections import Counter

    loose = [n for n in os.listdir(os.path.join(ROOT, "dfrank"))
             if n.endswith(".py") and n != "__init__.py"]
    assert len(loose) <= 15, sorted(loose)
    same_role = {"__init__", "__main__", "registry", "_kernels", "result", "objective", "data"}
    names = Counter(m.rsplit(".", 1)[-1] for m, p in modules().items()
                    if not p.endswith("__init__.py"))
    twice = sorted(n for n, k in names.items() if k > 1 and n not in same_role)
    assert not twice, twice


def test_no_two_rooms_import_each_other_directly_or_around_a_loop():
    arrows = room_arrows()

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for n in arrows.get(todo.pop(), ()):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    loops = sorted(r for r in arrows if r in reach(r))
    assert not loops, f"rooms on a loop of imports: {loops}"


def test_no_module_imports_another_modules_private_name():
    """A name with a leading underscore is its module's own business: another module that
    needs it gets a public name (a private submodule of a package, ``_kernels``, is its
    package's business and may be imported by name)."""
    mods = modules()
    found = []
    for m, p in mods.items():
        package = m if p.endswith("__init__.py") else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(open(p).read())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            base = (f"{base}.{node.module}" if node.module else base) if node.level \
                else node.module
            found += [f"{m}: {base}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")
                      and f"{base}.{a.name}" not in mods]
    assert not found, found


def test_the_compile_service_is_at_the_bottom_and_has_one_front_door():
    """dfrank._jit imports nothing else of dfrank (by statement or by name), and no module
    outside it imports its submodules."""
    mods = modules()
    assert room_arrows().get("dfrank._jit", set()) == set()
    for m, p in mods.items():
        if room(m) == "dfrank._jit":
            src = open(p).read()
            assert "find_spec(\"dfrank" not in src and "import_module(\"dfrank" not in src, m
            continue
        inside = {t for t in imports(m, p, mods) if t.startswith("dfrank._jit.")}
        assert not inside, f"{m} reaches into {sorted(inside)}"


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
        if "dfrank.driver.api" in targets:
            assert m.startswith(DRIVER_USERS), f"{m} imports the driver"


# what a docstring or comment must not hold: measurements, dates, issue numbers, former
# modules (figures and history belong in benchmarks/ and commit messages)
HISTORY = [r"measured on", r"\bus per\b", r"\bms per\b", r"\d (?:us|ms)\b", r"issue #\d+",
           r"(?<![\w&])#\d{2,}\b", r"this machine kind", r"\b20\d\d-\d\d-\d\d\b",
           r"\d(?:\.\d+)?x (?:faster|slower)\b", r"\d+% (?:faster|slower)\b",
           r"(?:faster|slower) measured", r"-\d+% side by side", r"\d+ instructions",
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


def _functions():
    """(module, function node, source lines) of every function of dfrank's modules."""
    for name, path in modules().items():
        lines = open(path).read().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield name, node, lines


def test_no_kernel_takes_more_than_15_positional_arguments():
    """Arrays that travel together go as tuples named by their role (a layout, a rule, the
    scratch, the outputs), not as a list of thirty."""
    found = [f"{name}.{node.name}: {len(node.args.posonlyargs) + len(node.args.args)}"
             for name, node, _ in _functions()
             if any("njit" in ast.unparse(d) for d in node.decorator_list)
             and len(node.args.posonlyargs) + len(node.args.args) > 15]
    assert not found, found


def test_no_function_is_over_100_lines_of_code():
    """Docstring, comments and blank lines not counted."""
    found = []
    for name, node, lines in _functions():
        body = node.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            body = body[1:]
        if not body:
            continue
        code = [ln for ln in lines[body[0].lineno - 1:node.end_lineno]
                if ln.strip() and not ln.strip().startswith("#")]
        if len(code) > 100:
            found.append(f"{name}.{node.name}: {len(code)}")
    assert not found, found


def test_package_inits_only_hand_names_on():
    """A package's ``__init__`` imports and re-exports (a module ``__getattr__`` that lends
    former or lazy names included); what it hands on lives in modules of its own."""
    found = []
    for name, path in modules().items():
        if not path.endswith("__init__.py"):
            continue
        for node in ast.parse(open(path).read()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name != "__getattr__":
                found.append(f"{name}: {node.name}")
    assert not found, found


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


def test_no_two_public_names_of_the_documented_api_name_different_things():
    """``dfrank.tune`` and ``dfrank.pyterrier.tune`` were different functions: the PyTerrier
    drop-in is ``GridSearch``, as PyTerrier names it. Only the registries' short names of
    ``dfrank.metrics`` and ``dfrank.strategies`` are one role in sibling packages."""
    import importlib
    import inspect

    import pytest

    pytest.importorskip("pyterrier")
    seen = {}
    for m in ("dfrank", "dfrank.estimator", "dfrank.pyterrier", "dfrank.cluster",
              "dfrank.problems", "dfrank.fusion", "dfrank.metrics", "dfrank.strategies",
              "dfrank.io", "dfrank.ir", "dfrank.tuning", "dfrank.data", "dfrank.driver"):
        module = importlib.import_module(m)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if obj is not None and not inspect.ismodule(obj):
                seen.setdefault(name, {})[id(obj)] = m
    twice = {n: sorted(ms.values()) for n, ms in seen.items() if len(ms) > 1
             and n not in ("get", "available", "register")}
    assert not twice, twice
