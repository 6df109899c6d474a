"""What the build compiled and ships: the kernels folder ``dfrank/_jit/kernels/`` and its
manifest (what they were built with, and a digest of every file), and whether they fit
this process.

The build (setup.py, then :func:`ship`) compiles the install's kernels into numba's cache
beside the modules of a tree of the installed layout, then moves every cache file into
``kernels/PACKAGE/`` (``kernels/dfrank.metrics/...``) and writes ``kernels/manifest.json``.
numba loads a cached kernel only for the numba version, Python and CPU it was compiled for;
:func:`mismatch` says in words what differs when they do not fit (a wheel built on another
machine, numba upgraded after the install).
"""

import hashlib
import json
import os
import platform
import shutil


__all__ = ["KERNELS", "MANIFEST", "FORMAT", "VERSION", "manifest", "describe", "ship",
           "ship_nothing", "mismatch", "digest", "changed_sources"]

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
MANIFEST = os.path.join(KERNELS, "manifest.json")
FORMAT = "dfrank.prebuilt"
VERSION = 2
SUFFIXES = (".nbi", ".nbc")
PACKAGE = __name__.split(".")[0]   # the package whose kernels the service compiles
SECONDS_FILE = "dfrank-compile-seconds.json"   # compile seconds beside a cache (.timing)


def describe():
    """What compiled code depends on in this process: versions and the CPU numba targets."""
    import llvmlite
    import numba
    import numpy
    from numba.core.registry import cpu_target

    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    return {"numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "numpy": numpy.__version__, "python": platform.python_version(),
            "cpu": [triple, cpu, features]}


def digest(path):
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _kernels_of(root):
    return os.path.join(root, *__name__.split(".")[:-1], "kernels")


def _write(root, obj):
    folder = _kernels_of(root)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def ship_nothing(root, reason):
    """Record in the tree ``root`` (of the installed layout) that it ships no kernels, and
    why, removing whatever kernels an earlier build left in it."""
    shutil.rmtree(_kernels_of(root), ignore_errors=True)
    for folder, _, files in os.walk(os.path.join(root, PACKAGE)):
        for name in files:
            if name.endswith(SUFFIXES):
                os.unlink(os.path.join(folder, name))
    _write(root, {"format": FORMAT, "version": VERSION, "built": False, "reason": reason})


def ship(root, took, group):
    """Move the cache files numba wrote beside the modules of the tree ``root`` into its
    kernels folder, one folder per package, and write the manifest with their digests, the
    warm-up ``group`` they were compiled for (:data:`.pool.GROUPS`), the seconds it
    ``took`` and the seconds each version took to compile (:mod:`.timing`)."""
    shutil.rmtree(_kernels_of(root), ignore_errors=True)
    files, seconds = {}, {}
    top = os.path.join(root, PACKAGE)
    for folder, _, names in sorted(os.walk(top)):
        if os.path.basename(folder) != "__pycache__":
            continue
        seconds.update(_measured(os.path.join(folder, SECONDS_FILE)))
        rel = os.path.relpath(os.path.dirname(folder), top)
        package = ".".join([PACKAGE] + ([] if rel == "." else rel.split(os.sep)))
        for name in sorted(n for n in names if n.endswith(SUFFIXES)):
            target = os.path.join(_kernels_of(root), package)
            os.makedirs(target, exist_ok=True)
            shutil.move(os.path.join(folder, name), os.path.join(target, name))
            files[f"{package}/{name}"] = digest(os.path.join(target, name))
    sources = {os.path.relpath(os.path.join(folder, n), root).replace(os.sep, "/"):
               digest(os.path.join(folder, n))
               for folder, _, names in os.walk(top) for n in names if n.endswith(".py")}
    _write(root, {"format": FORMAT, "version": VERSION, "built": True,
                  "seconds": round(took, 1), "group": group, "files": files,
                  "sources": sources, "compile_seconds": seconds, **describe()})


def _measured(path):
    """The compile seconds a build's process measured in a cache folder (removed: they go
    to the manifest, the estimates of a machine that measured none of its own)."""
    try:
        with open(path) as f:
            found = json.load(f)
        os.unlink(path)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, (int, float))} \
        if isinstance(found, dict) else {}


def changed_sources(m, locate):
    """The modules whose source differs from the one the manifest ``m``'s kernels were
    compiled from (numba compiles their kernels again): a checkout edited since it was
    built. ``locate(path)`` gives the file of a path of the installed layout
    (``dfrank/metrics/bound.py``)."""
    changed = []
    for rel, want in sorted(m.get("sources", {}).items()):
        try:
            if digest(locate(rel)) != want:
                changed.append(rel)
        except OSError:
            changed.append(rel)
    return changed


def _read(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
        obj = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not (isinstance(obj, dict) and obj.get("format") == FORMAT
            and obj.get("version") == VERSION):
        return None
    files = obj.get("files", {})
    if not (isinstance(files, dict) and all(
            isinstance(k, str) and k.count("/") == 1 and isinstance(v, str) and len(v) == 64
            for k, v in files.items())):
        return None
    obj["id"] = hashlib.sha256(raw).hexdigest()
    return obj


def manifest(path=None):
    """The manifest (with ``id``, the digest of its own bytes), or None when there is none
    (a source checkout never built) or it cannot be read as one."""
    return _read(path or MANIFEST)


def mismatch(path=None, m=None):
    """Why the install's compiled kernels do not serve this process, in words, or None
    (they do, or there are none to speak of); ``m``: the manifest, read already."""
    m = manifest(path) if m is None else m
    if m is None:
        return None
    if not m.get("built"):
        return f"the install did not compile them ({m.get('reason', 'no reason given')})"
    here = describe()
    for key in ("numba", "llvmlite", "python"):
        if m.get(key) != here[key]:
            return f"they were compiled for {key} {m.get(key)}, and this is {here[key]}"
    if m.get("cpu") != here["cpu"]:
        other = m["cpu"][1] if isinstance(m.get("cpu"), list) and len(m["cpu"]) == 3 else "?"
        same_name = " with other features" if other == here["cpu"][1] else ""
        return (f"they were compiled for another CPU ({other}; this one is "
                f"{here['cpu'][1]}{same_name})")
    return None
