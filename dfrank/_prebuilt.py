"""What the install compiled ahead: the manifest ``dfrank/_prebuilt.json`` that building
dfrank writes beside the kernels it compiled (see setup.py), and whether those kernels fit
this process.

numba loads a cached kernel only for the numba version, Python and CPU it was compiled
for; :func:`mismatch` says in words what differs when they do not fit (a wheel built on
another machine, numba upgraded after the install), so that the first compile can say why.
"""

import json
import os
import platform

__all__ = ["MANIFEST", "FORMAT", "manifest", "describe", "write", "mismatch"]

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prebuilt.json")
FORMAT = "dfrank.prebuilt"


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


def write(seconds, commands, path=None):
    """Record that the kernels of ``commands`` were compiled here, in ``seconds``."""
    with open(path or MANIFEST, "w") as f:
        json.dump({"format": FORMAT, "version": 1, "built": True, "seconds": round(seconds, 1),
                   "commands": list(commands), **describe()}, f, indent=1)
        f.write("\n")


def manifest(path=None):
    """The manifest, or None when there is none (a source checkout never built) or it
    cannot be read."""
    path = path or MANIFEST
    try:
        with open(path) as f:
            obj = json.load(f)
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) and obj.get("format") == FORMAT else None


def mismatch(path=None):
    """Why the install's compiled kernels do not serve this process, in words, or None
    (they do, or there are none to speak of)."""
    m = manifest(path)
    if m is None:
        return None
    if not m.get("built"):
        return f"the install could not compile them ({m.get('reason', 'no reason given')})"
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
