"""How long each kernel takes to compile on this machine, as measured here: the estimates
the progress lines, the warm-up's order and the background compiles go by.

Every compile of one of dfrank's kernels (:mod:`.progress` hears numba's compile events)
records its seconds under the kernel's name and argument types, in this process and in a
file beside that kernel's cache (``dfrank-compile-seconds.json`` in the folder numba caches
its package in), so that later processes know them. A version never measured
here is estimated by another version of the same kernel measured here, else by what
the build measured (the manifest's ``compile_seconds``), else by :data:`FALLBACK`.
"""

import json
import os
import threading

from .manifest import SECONDS_FILE, manifest
from .store import in_memory, numba_cache

__all__ = ["record", "estimate", "measured", "FILE", "FALLBACK"]

FILE = SECONDS_FILE
FALLBACK = 10.0   # seconds for a kernel neither this machine nor the build measured
_seconds = {}     # "module.kernel(types)" -> seconds, of this process and the files read
_read = set()     # the folders whose file was read
_memo = {}
_lock = threading.Lock()


def _name(kernel):
    f = kernel.py_func
    return f"{f.__module__}.{f.__name__}"


def _key(kernel, types):
    return f"{_name(kernel)}{tuple(types)}"


def _folder(kernel):
    """The folder numba caches ``kernel`` in, or None (not cached on disk)."""
    if in_memory():
        return None
    try:
        return numba_cache(kernel)[0]
    except AttributeError:   # not a cached dispatcher
        return None


def _load(folder):
    """Merge the file of ``folder`` into what this process knows (once per folder)."""
    if folder is None or folder in _read:
        return
    _read.add(folder)
    try:
        with open(os.path.join(folder, FILE)) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return
    if isinstance(found, dict):
        for k, v in found.items():
            if isinstance(k, str) and isinstance(v, (int, float)) and v >= 0:
                _seconds.setdefault(k, float(v))


def record(kernel, types, seconds):
    """Note that ``kernel`` compiled for ``types`` in ``seconds``: here, and in the file
    beside its cache (read again and merged first: several processes compile at once)."""
    folder = _folder(kernel)
    key = _key(kernel, types)
    with _lock:
        _load(folder)
        _seconds[key] = round(float(seconds), 3)
        if folder is None:
            return
        path = os.path.join(folder, FILE)
        try:
            with open(path) as f:
                on_disk = json.load(f)
            on_disk = on_disk if isinstance(on_disk, dict) else {}
        except (OSError, ValueError):
            on_disk = {}
        on_disk[key] = _seconds[key]
        tmp = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.part"
        try:
            with open(tmp, "w") as f:
                json.dump(on_disk, f, indent=0, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            if os.path.exists(tmp):
                os.unlink(tmp)


def measured(kernel, types=None):
    """The seconds this machine (or, failing that, the build) measured for ``kernel`` with
    ``types``, or for its longest measured version when ``types`` is None or unmeasured;
    None when neither measured it."""
    with _lock:
        _load(_folder(kernel))
        if types is not None and _key(kernel, types) in _seconds:
            return _seconds[_key(kernel, types)]
        prefix = _name(kernel) + "("
        mine = [v for k, v in _seconds.items() if k.startswith(prefix)]
    if mine:
        return max(mine)
    built = _built()
    theirs = [v for k, v in built.items() if k.startswith(prefix)
              and isinstance(v, (int, float))]
    if types is not None and isinstance(built.get(_key(kernel, types)), (int, float)):
        return float(built[_key(kernel, types)])
    return max(theirs) if theirs else None


def _built():
    """The seconds the build measured (the manifest's ``compile_seconds``), read once."""
    if "built" not in _memo:
        m = manifest() or {}
        found = m.get("compile_seconds")
        _memo["built"] = found if isinstance(found, dict) else {}
    return _memo["built"]


def estimate(kernel, types=None):
    """:func:`measured`, or :data:`FALLBACK` where nothing was measured."""
    seconds = measured(kernel, types)
    return FALLBACK if seconds is None else seconds
