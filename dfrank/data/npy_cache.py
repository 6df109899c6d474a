"""The binary cache format of RankingData: a directory of ``.npy`` files and a JSON
header, written and read as plain arrays (:class:`dfrank.RankingData`'s ``save`` and
``load`` build on these two functions).

    data.save("train.dfrank")                         # once, after the slow text parse
    data = RankingData.load("train.dfrank")           # later: X is a memory map
                                                      # (and XT, X transposed, another)

Why a directory of ``.npy`` files: ``numpy.load(mmap_mode="r")`` maps an ``.npy`` file
without reading it (a ``.npz`` member cannot be mapped), and ``allow_pickle=False`` keeps
loading free of code execution. The header ``data.json`` carries a format tag and a
version; it is written last, so a directory without it is an unfinished save. A save
replaces an older cache at the same path only once the new one is complete.
"""

import json
import os
import shutil
import tempfile

import numpy as np

from ..errors import DataFormatError

__all__ = ["write_arrays", "read_arrays", "write_transposed", "DATA_FORMAT", "DATA_VERSION",
           "ARRAYS"]

DATA_FORMAT = "dfrank.data.ranking"
DATA_VERSION = 2    # 2: the features also transposed (XT), as the kernels read them
HEADER = "data.json"
ARRAYS = ("X", "y", "qptr", "qids", "docids", "feature_ids", "XT")
_BLOCK_BYTES = 1 << 26   # the transposed copy is written a block of rows at a time


def _plain(a, name):
    """An array numpy can save without pickle (object qids/docids become strings)."""
    a = np.asarray(a)
    if a.dtype == object:
        a = a.astype(str)
    if a.dtype.hasobject:
        raise ValueError(f"{name} holds Python objects and cannot be saved without pickle")
    return a


def _is_cache(path):
    """Whether ``path`` is a folder whose header says it is a dfrank data cache."""
    try:
        with open(os.path.join(path, HEADER)) as f:
            return json.load(f).get("format") == DATA_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def write_arrays(path, arrays, header):
    """Write the named ``arrays`` (``ARRAYS``; None ones are left out) and the ``header``
    fields to the directory ``path`` (created; an older cache there is replaced atomically
    once the new one is complete)."""
    path = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(path)
    if os.path.exists(path) and not _is_cache(path):
        raise FileExistsError(f"{path} exists and is not a dfrank data cache; it is left as "
                              "it is: save to another path")
    tmp = tempfile.mkdtemp(prefix=".dfrank-data-", dir=parent)
    try:
        specs = {}
        for name in ARRAYS:
            a = arrays.get(name)
            if a is None:
                continue
            a = _plain(a, name)
            np.save(os.path.join(tmp, f"{name}.npy"), a, allow_pickle=False)
            specs[name] = {"dtype": a.dtype.str, "shape": list(a.shape)}
            if name == "X":
                specs["XT"] = write_transposed(os.path.join(tmp, "XT.npy"), a)
        head = dict(header, format=DATA_FORMAT, version=DATA_VERSION, arrays=specs)
        with open(os.path.join(tmp, HEADER), "w") as f:
            json.dump(head, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        old = None
        if os.path.exists(path):
            old = tempfile.mkdtemp(prefix=".dfrank-old-", dir=parent)
            os.rmdir(old)
            os.replace(path, old)
        os.replace(tmp, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def write_transposed(file, X):
    """Write X transposed (n_features, n_docs), C-ordered, a block of rows at a time (no
    whole copy in memory): the layout the scoring kernels read, mapped by :func:`read_arrays`
    so that a fit on a mapped cache holds no copy of the features of its own."""
    XT = np.lib.format.open_memmap(file, mode="w+", dtype=X.dtype,
                                   shape=(X.shape[1], X.shape[0]))
    step = max(1, _BLOCK_BYTES // max(1, X.shape[1] * X.itemsize))
    for r in range(0, X.shape[0], step):
        XT[:, r:r + step] = X[r:r + step].T
    XT.flush()
    del XT
    return {"dtype": X.dtype.str, "shape": [X.shape[1], X.shape[0]]}


def read_arrays(path, mmap=True):
    """``(arrays, header)`` of a cache written by :func:`write_arrays`; with ``mmap`` the
    feature matrix is a read-only memory map (nothing is read until a kernel touches it).
    Anything that is not a complete cache of this version is a DataFormatError."""
    path = os.fspath(path)
    head_path = os.path.join(path, HEADER)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: no such dfrank data cache (a directory written by "
                                f"RankingData.save)")
    try:
        with open(head_path) as f:
            header = json.load(f)
    except FileNotFoundError:
        raise DataFormatError(f"no {HEADER} header: not a dfrank data cache, or its save "
                              "did not finish", path=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataFormatError(f"corrupted header {HEADER} ({e})", path=path) from None
    if not isinstance(header, dict) or header.get("format") != DATA_FORMAT:
        raise DataFormatError(f"not a dfrank data cache (format tag "
                              f"{header.get('format') if isinstance(header, dict) else None!r})",
                              path=path)
    if not isinstance(header.get("version"), int) or header["version"] > DATA_VERSION:
        raise DataFormatError(f"data cache version {header.get('version')!r}; this dfrank "
                              f"reads versions up to {DATA_VERSION}", path=path)
    arrays = {}
    for name, spec in header.get("arrays", {}).items():
        if name not in ARRAYS:
            raise DataFormatError(f"unknown array {name!r} in the header", path=path)
        file = os.path.join(path, f"{name}.npy")
        try:
            if name == "XT" and not mmap:   # made again from X when read into memory
                continue
            a = np.load(file, mmap_mode="r" if (mmap and name in ("X", "XT")) else None,
                        allow_pickle=False)
        except FileNotFoundError:
            raise DataFormatError(f"{name}.npy is missing", path=path) from None
        except ValueError as e:
            raise DataFormatError(f"{name}.npy is corrupted ({e})", path=path) from None
        if a.dtype.str != spec["dtype"] or list(a.shape) != spec["shape"]:
            raise DataFormatError(f"{name}.npy has dtype {a.dtype.str} and shape "
                                  f"{list(a.shape)}; the header says {spec['dtype']} and "
                                  f"{spec['shape']}", path=path)
        arrays[name] = a
    missing = [n for n in ("X", "y", "qptr", "qids") if n not in arrays]
    if missing:
        raise DataFormatError(f"the header lists no {', '.join(missing)}", path=path)
    return arrays, header
