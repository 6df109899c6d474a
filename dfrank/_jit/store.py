"""Where dfrank's kernels are cached, how the shipped ones get there, and how a compile
stays interruptible: :func:`njit`.

numba reads and writes a kernel's cache in one folder, the first of: ``NUMBA_CACHE_DIR``
(when set), the ``__pycache__`` beside the module (when writable), the user's cache folder
(``~/.cache/numba``, when writable). The build ships its kernels apart from all three, in
``dfrank/_jit/kernels/`` (:mod:`.manifest`). When a module of dfrank defines its first
cached kernel, :func:`njit` asks numba which folder it chose for that package and, once
per install, copies the shipped files of that package there, each checked against the
manifest's digest (a file that does not match is not copied, and one line names it). A
stamp in the folder (``dfrank-kernels.json``) records which install it was filled from,
so a new install replaces stale copies. Then, once per process, the copies are checked:
a shipped data file (``.nbc``, written once) must still match its digest, and every index
and data file must be a whole pickle stream (read with :mod:`pickletools`, which parses
without unpickling); a file that fails is removed (numba compiles its kernel again and
caches it) and named in one line.

Where numba finds no writable folder at all (a read-only site-packages and a read-only
home, without ``NUMBA_CACHE_DIR``), the kernels are compiled without a disk cache, in
memory, in every process; one line says so and what it costs.

``DFRANK_SHIPPED_KERNELS=0`` leaves the shipped kernels where they are (everything
compiles, as in a source checkout never built).
"""

import hashlib
import io
import json
import os
import pickletools
import sys
import threading

import numba

from . import manifest as _manifest

__all__ = ["njit", "numba_cache", "on_disk", "in_memory", "off_main_thread", "load", "made_here",
           "STAMP", "ENV"]

STAMP = "dfrank-kernels.json"
ENV = "DFRANK_SHIPPED_KERNELS"
_seeded = {}          # package -> the folder numba caches it in, once prepared
_memory = {"why": None}
_lock = threading.Lock()
KERNELS = []          # every kernel made by njit with cache=True in this process, in order
_MADE = set()         # the ids of every kernel njit made


def njit(fn=None, **options):
    """``numba.njit`` for dfrank's kernels: with ``cache=True``, the kernel's package gets
    the install's compiled kernels first (see the module's docstring); where numba has no
    writable folder to cache in, the kernel compiles in memory instead."""
    if fn is None:
        return lambda f: njit(f, **options)
    if not options.get("cache"):
        return _interruptible(numba.njit(**options)(fn))
    if _memory["why"] is None:
        try:
            kernel = numba.njit(**options)(fn)
        except RuntimeError as e:
            if "no locator available" not in str(e):
                raise
            _say_in_memory()
        else:
            _prepare(kernel)
            KERNELS.append(kernel)
            return _interruptible(kernel)
    kernel = numba.njit(**dict(options, cache=False))(fn)
    KERNELS.append(kernel)
    return _interruptible(kernel)


def _interruptible(kernel):
    """The kernel's compiles (and cache loads), asked for on the main thread, run in a
    thread of their own while the main thread waits (:func:`off_main_thread`):
    Ctrl-C and SIGTERM reach the command within a compile, which is one C call that no
    signal interrupts. Compiles asked for in other threads (a kernel's callees, the
    warm-up's thread) run where they are asked."""
    compile_here = kernel.compile
    _MADE.add(id(kernel))

    def compile(sig):
        if threading.current_thread() is not threading.main_thread():
            return compile_here(sig)
        return off_main_thread(compile_here, sig)

    kernel.compile = compile
    return kernel


def made_here(dispatcher):
    """Whether ``dispatcher`` is one of the kernels :func:`njit` made."""
    return id(dispatcher) in _MADE


def in_memory():
    """Why kernels compile in memory in this process (no writable cache folder), or None."""
    return _memory["why"]


def numba_cache(kernel):
    """(folder, index file) of a cached dispatcher: where numba reads and writes its cache.
    numba has no public way to ask; this is the one place that reads its private
    attributes (``tests/test_jit.py`` fails when numba changes them)."""
    cache = kernel._cache
    return cache.cache_path, cache._cache_file._index_path


def on_disk(kernel):
    """Whether numba's cache index of ``kernel`` exists (an uncached kernel: True, it never
    waits for a disk cache)."""
    try:
        return os.path.exists(numba_cache(kernel)[1])
    except AttributeError:
        return True


def _say(line):
    if not os.environ.get("DFRANK_QUIET_COMPILE"):
        print(f"dfrank: {line}", file=sys.stderr, flush=True)


def _say_in_memory():
    with _lock:
        if _memory["why"] is not None:
            return
        _memory["why"] = ("no writable folder for numba's cache (dfrank's install folder "
                          "and the user's cache folder are read-only, and NUMBA_CACHE_DIR "
                          "is not set or not writable)")
    _say(f"{_memory['why']}: kernels compile in memory, again in every process (a first "
         "fit or evaluate spends a minute or more compiling); set NUMBA_CACHE_DIR to a "
         "writable folder to keep them")


def _package(kernel):
    module = sys.modules.get(kernel.py_func.__module__)
    return getattr(module, "__package__", None) or kernel.py_func.__module__


def _prepare(kernel):
    """Once per package and process: the shipped kernels copied where numba reads them
    (once per install), and that folder's copies checked."""
    package = _package(kernel)
    if package in _seeded:
        return
    folder = numba_cache(kernel)[0]
    with _lock:
        if package in _seeded:
            return
        _seeded[package] = folder
        if "manifest" not in _memory:    # read once per process
            _memory["manifest"] = (_manifest.manifest() if os.environ.get(ENV, "1") != "0"
                                   else None)
        m = _memory["manifest"]
        shipped = {} if not m or not m.get("built") else {
            key.split("/", 1)[1]: d for key, d in m["files"].items()
            if key.split("/", 1)[0] == package}
        try:
            stamp = _read_stamp(folder)
            if shipped and _serves(m):
                if stamp.get("manifest") != m["id"] and not _edited(m):
                    stamp = _seed(package, folder, shipped, m["id"])
            elif stamp.get("files"):   # copies of kernels that do not serve this numba
                stamp = _forget(folder)
            _check(folder, stamp)
        except OSError as e:   # a folder numba found writable a moment ago
            _say(f"the compiled kernels of {package} could not be prepared in {folder} "
                 f"({e}); they compile on first use")


def _serves(m):
    """Whether the shipped kernels of manifest ``m`` load in this process (the numba,
    llvmlite, Python and CPU they were compiled for); once per process. Kernels that do
    not are never copied: numba would compile each anew into the very files copied, and
    the next process would take numba's files for shipped ones tampered with."""
    if "serves" not in _memory:
        _memory["serves"] = _manifest.mismatch(m=m) is None
    return _memory["serves"]


def _forget(folder):
    """The folder's cache files are numba's own from now on (the install's copies there do
    not serve this process, and numba replaces them as it compiles): a stamp naming none."""
    stamp = {"manifest": None, "files": {}}
    _replace(os.path.join(folder, STAMP), json.dumps(stamp, indent=1).encode())
    return stamp


def _edited(m):
    """Whether a module changed since the build compiled the shipped kernels (a checkout
    edited after ``pip install -e .``): a kernel that inlines one from another module would
    keep the old one, since numba checks a kernel against its own module only, so none is
    copied. Once per process."""
    if "edited" not in _memory:
        _memory["edited"] = bool(_manifest.changed_sources(m, _locate))
    return _memory["edited"]


def _locate(rel):
    """The file of a module given by its path in the installed layout
    (``PACKAGE/sub/module.py``), wherever this process imports it from (an editable install
    maps a subpackage to another folder); found without importing anything but the top
    package (a module's import here would define kernels within this preparation)."""
    import importlib.util

    parts = rel.split("/")
    if len(parts) > 2:
        spec = importlib.util.find_spec(".".join(parts[:2]))
        where = list(spec.submodule_search_locations or []) if spec is not None else []
        if where:
            return os.path.join(where[0], *parts[2:])
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), rel)


def _read_stamp(folder):
    try:
        with open(os.path.join(folder, STAMP)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return {}
    ok = isinstance(stamp, dict) and isinstance(stamp.get("files"), dict)
    return stamp if ok else {}


def _replace(path, data):
    """Write ``data`` to ``path`` atomically (a folder other processes and hosts share)."""
    tmp = f"{path}.dfrank-{os.urandom(8).hex()}.part"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _seed(package, folder, shipped, manifest_id):
    """Copy the shipped files of ``package`` that match their digests into ``folder``;
    returns the new stamp."""
    copied = {}
    for name, want in sorted(shipped.items()):
        source = os.path.join(_manifest.KERNELS, package, name)
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            _say(f"{source}: shipped kernel not readable ({e.strerror}); it compiles on "
                 "first use")
            continue
        if hashlib.sha256(data).hexdigest() != want:
            _say(f"{source} does not match the digest the install recorded (swapped, "
                 "truncated or edited): not loaded, its kernel compiles on first use")
            continue
        _replace(os.path.join(folder, name), data)
        copied[name] = want
    stamp = {"manifest": manifest_id, "files": copied}
    _replace(os.path.join(folder, STAMP), json.dumps(stamp, indent=1).encode())
    return stamp


def _whole_pickles(data, count):
    """Whether ``data`` holds ``count`` complete pickle streams, one after the other
    (parsed by :mod:`pickletools`; nothing is unpickled)."""
    f = io.BytesIO(data)
    try:
        for _ in range(count):
            for _ in pickletools.genops(f):
                pass
    except Exception:
        return False
    return f.tell() == len(data)


def _check(folder, stamp):
    """Remove (and name) cache files of ``folder`` that would crash or mislead numba."""
    bad, seeded = [], stamp.get("files", {})
    try:
        names = [n for n in os.listdir(folder) if n.endswith(_manifest.SUFFIXES)]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if name in seeded and hashlib.sha256(data).hexdigest() == seeded[name]:
            continue
        if name in seeded and name.endswith(".nbc"):
            bad.append(name)           # written once: a change is not numba's
        elif not _whole_pickles(data, 2 if name.endswith(".nbi") else 1):
            bad.append(name)
    for name in bad:
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass
        _say(f"{os.path.join(folder, name)} does not match what was compiled (swapped, "
             "truncated or edited): not loaded, its kernel compiles again")
    if bad and any(n in seeded for n in bad):
        stamp = dict(stamp, files={k: v for k, v in seeded.items() if k not in bad})
        _replace(os.path.join(folder, STAMP), json.dumps(stamp, indent=1).encode())


def load(versions):
    """Load each version (a declared :class:`~.examples.Example`, or ``(kernel, types)``)
    from the cache, or compile it, here and now: the kernels a run needs, asked for in one
    call before it starts, so that its time holds no compiling. Off the main thread
    (Ctrl-C and SIGTERM stop the command at once, even within a compile), said and counted
    as compiling (:mod:`.progress`). A version loaded already costs nothing."""
    todo = [(v[0], tuple(v[1])) for v in versions]
    todo = [(k, t) for k, t in todo if t not in k.signatures]
    if todo:
        off_main_thread(lambda: [kernel.compile(types) for kernel, types in todo])


def off_main_thread(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a daemon thread, waited for here in short steps: a signal
    (Ctrl-C, SIGTERM) stops the wait at once and propagates from here, while a compile
    in progress goes on in its thread until the process ends."""
    box = {}

    def target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:   # raised again in the caller's thread
            box["error"] = e

    worker = threading.Thread(target=target, daemon=True, name="dfrank-compile")
    worker.start()
    while worker.is_alive():
        worker.join(0.25)
    if "error" in box:
        raise box["error"]
    return box.get("value")
