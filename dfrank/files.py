"""dfrank's files: written atomically, JSON with a format tag and a version.

A file is written to a temporary file in the same folder and then renamed over the
target (``os.replace``), so an interrupted write never leaves half a file; JSON files carry
``{"format": ..., "version": ...}`` and a reader refuses any other format or a newer
version with a clear error.

Temporary files and folders carry their writer's name, :func:`owner` (a digest of the
host and its boot, the PID namespace, the process id), so that a folder shared between
hosts or containers (NFS, a bind mount) never loses another writer's file in progress: a
leftover is removed only when :func:`certainly_dead` says its writer is gone.
"""

import contextlib
import functools
import hashlib
import json
import os
import re
import socket
import stat
import tempfile
import time

import numpy as np

from .errors import DataFormatError, OutputError, UsageError

__all__ = ["VERSION", "check_writable", "check_not_input", "write_text_atomic",
           "write_json_atomic", "write_kept", "read_json", "read_json_lines", "jsonable",
           "process_gone", "owner", "OWNER", "certainly_dead", "STALE_AFTER"]

VERSION = 1


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path, what="output", folder_ok=False):
    """Raise a clear error now if ``path`` cannot be written (its folder is missing or not
    writable, or it is a folder where a file is meant, or a file where its folder is
    meant), so a long run does not fail only at its end. ``folder_ok``: an output that is
    a folder (a tune cache) may be one."""
    path = os.fspath(path)
    if os.path.isdir(path):
        if not folder_ok:
            raise IsADirectoryError(f"{path}: the {what} path is a folder, not a file")
        folder = path
    else:
        folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        above = folder
        while not os.path.exists(above) and os.path.dirname(above) != above:
            above = os.path.dirname(above)
        if os.path.exists(above) and not os.path.isdir(above):
            raise UsageError(f"{path}: cannot write the {what} there: {above} is a file, "
                             "not a folder")
        raise FileNotFoundError(f"{path}: cannot write the {what} there: the folder "
                                f"{folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"{path}: cannot write the {what} there: the folder {folder} "
                              "is not writable")


def check_not_input(path, inputs, what="output"):
    """Refuse to write ``path`` when it is one of ``inputs`` (the same file, through a
    symbolic or hard link too): the write would destroy an input."""
    if not path or not os.path.exists(path):
        return
    for given in inputs:
        if given and os.path.exists(given) and os.path.samefile(path, given):
            raise OutputError(f"{path}: the {what} is the input file {given}; writing it "
                              "would destroy that input. Choose another output path")


def write_kept(path, write, what, suffix="", stdout=None):
    """``write(path)``; if that fails (a full disk, a place that refuses files), the same
    into a new file of the temporary folder, then raise :class:`OutputError` naming it,
    so a result that took long to compute is never lost. Where that fails too,
    ``stdout()`` (a callable returning the text, if given) goes to standard output."""
    try:
        write(path)
        return path
    except OSError as first:
        error = first
    kept = None
    try:
        fd, kept = tempfile.mkstemp(prefix=f"dfrank-{what.replace(' ', '-')}-",
                                    suffix=suffix)
        os.close(fd)
        write(kept)
    except OSError:
        if kept is not None and os.path.exists(kept):
            os.unlink(kept)
        kept = None
    reason = error.strerror or str(error)
    if kept is not None:
        raise OutputError(f"could not write the {what} to {path} ({reason}); it is kept in "
                          f"{kept}", kept=kept) from None
    if stdout is not None:
        import sys

        sys.stdout.write(stdout())
        sys.stdout.flush()
        raise OutputError(f"could not write the {what} to {path} ({reason}), nor to the "
                          "temporary folder; it was printed on standard output instead",
                          kept="-") from None
    raise OutputError(f"could not write the {what} to {path} ({reason}), nor to the "
                      "temporary folder") from None


def process_gone(pid):
    """Whether no process ``pid`` exists here (one of another user counts as existing; a
    number no process id can be is not known to be gone)."""
    try:
        pid = int(pid)
        if not 0 < pid < 2 ** 31:
            return False
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False
    return False


STALE_AFTER = 3600.0   # seconds a leftover of a dead writer is kept, whatever else holds
OWNER = r"(?P<host>[0-9a-f]{12})-(?P<ns>\d{1,20})-(?P<pid>\d{1,10})"


@functools.lru_cache(maxsize=1)
def _host():
    """A digest of this host's name and boot (a PID names a process on one host, in one
    boot)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return hashlib.sha256(f"{socket.gethostname()}\0{boot}".encode()).hexdigest()[:12]


def _pid_namespace():
    """The inode of this process's PID namespace (0 where the system has none to show)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def owner():
    """This process as its temporaries name it: ``HOST-NAMESPACE-PID``."""
    return f"{_host()}-{_pid_namespace()}-{os.getpid()}"


def certainly_dead(match, path, now=None):
    """Whether the writer that ``match`` (of :data:`OWNER`) names is certainly gone, so
    that ``path``, its leftover, may be removed: made on this host, in this PID namespace,
    by a process id no process has now, and untouched for :data:`STALE_AFTER` seconds.
    A name made elsewhere, or by a writer that may be alive, is never removed."""
    try:
        if match.group("host") != _host() or int(match.group("ns")) != _pid_namespace():
            return False
        pid = int(match.group("pid"))
        if pid == os.getpid() or not process_gone(pid):
            return False
        age = (time.time() if now is None else now) - os.lstat(path).st_mtime
    except (OSError, ValueError, IndexError):
        return False
    return age > STALE_AFTER


WRITER = ".writer"      # the suffix of the file that names a file's one writer
_WRITER = re.compile(r"^" + OWNER + r" (?P<since>\d{1,12})$")


@contextlib.contextmanager
def sole_writer(path, what):
    """Within the block, this process is the one writer of ``path`` (a bench file, a
    checkpoint), named in ``PATH.writer``, made with ``O_CREAT | O_EXCL`` (atomic on local
    file systems and on NFS from version 3), removed at the end. Two writers of one file
    would interleave or lose its records, on one host or on several sharing a folder: the
    second is refused, naming the first, unless the first is certainly gone (made on this
    host, in this PID namespace, by a process id that no process has now). A marker from
    another host, or unreadable, is never taken over: the message says to remove it."""
    marker = os.fspath(path) + WRITER
    for _ in range(3):
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            _take_over(marker, path, what)     # removed when its writer is gone, or raises
            continue
        except OSError:
            yield        # a folder where nothing can be created: the write itself will say
            return
        with os.fdopen(fd, "w") as f:
            f.write(f"{owner()} {int(time.time())}\n")
        try:
            yield
        finally:
            try:
                os.unlink(marker)
            except OSError:
                pass
        return
    raise OutputError(f"{path}: could not become its one writer ({marker} keeps coming "
                      "back)")


def _take_over(marker, path, what):
    """Remove ``marker`` when its writer is certainly gone (or it is gone already); else
    raise naming that writer. One take-over at a time in the folder (a lock the system
    drops with its holder), and the marker removed is the one read: it is renamed to a
    name of this process's first and read again, and put back if another writer's marker
    took its place (where the folder cannot be locked)."""
    try:
        st = os.lstat(marker)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        kind = (f"a symbolic link to {os.readlink(marker)}" if stat.S_ISLNK(st.st_mode)
                else "not a file")
        raise UsageError(f"{path}: {marker}, the name dfrank gives the mark of the {what}'s "
                         f"one writer, is {kind}, which dfrank never makes: remove it")
    with _one_take_over(os.path.dirname(os.path.abspath(marker))):
        text = _read_marker(marker)
        if text is None:
            return
        m = _WRITER.match(text)
        if m and m.group("host") == _host() and int(m.group("ns")) == _pid_namespace() \
                and int(m.group("pid")) != os.getpid() and process_gone(m.group("pid")):
            _remove_same(marker, text)
            return
    if m:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(int(m.group("since"))))
        who = (f"process {m.group('pid')} of this host" if m.group("host") == _host()
               else f"process {m.group('pid')} of another host ({m.group('host')})")
        who += f", since {since}"
    else:
        who = "a writer it does not name"
    raise OutputError(f"{path}: the {what} is being written by {who} ({marker}); two "
                      "writers would interleave or lose its records: wait for it, or write "
                      f"to another file (if that writer is gone, remove {marker})")


@contextlib.contextmanager
def _one_take_over(folder):
    """Hold an exclusive lock on ``folder`` (``flock``: released by the system when its
    holder ends, however it ends); nothing where the folder cannot be locked."""
    import fcntl

    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)   # (drops the lock)


def _read_marker(marker):
    """The marker's text ("" when it cannot be read), or None when it is gone."""
    try:
        fd = os.open(marker, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    with os.fdopen(fd, errors="replace") as f:
        try:
            return f.read(200).strip()
        except OSError:
            return ""


def _remove_same(marker, text):
    """Remove ``marker`` if it still says ``text``: renamed first to a name of this
    process's and read again, so that a marker another writer made since is never removed
    (it is put back)."""
    aside = f"{marker}.{owner()}-{os.urandom(4).hex()}"
    try:
        os.rename(marker, aside)
    except FileNotFoundError:
        return
    try:
        if _read_marker(aside) != text:   # another writer's, made since: put it back
            os.link(aside, marker)
    except FileExistsError:
        pass
    finally:
        os.unlink(aside)


_TEMPORARY = re.compile(r"\.dfrank-" + OWNER + r"-[^/]*\.tmp$")
_swept = set()


def _sweep_temporaries(folder):
    """Remove the temporary files that writers killed mid-write (SIGKILL, a power cut) left
    in ``folder``, where :func:`certainly_dead`. Once per folder and process."""
    if folder in _swept:
        return
    _swept.add(folder)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        m = _TEMPORARY.match(name)
        path = os.path.join(folder, name)
        if m and certainly_dead(m, path):
            try:
                os.unlink(path)
            except OSError:
                pass


def write_text_atomic(path, text):
    """Write ``text`` (a str, or an iterable of str written one after the other) to
    ``path`` atomically (a temporary file in the same folder, synced, then renamed), with
    the permissions a plain ``open`` would give (the umask)."""
    path = os.fspath(path)
    check_writable(path)
    folder = os.path.dirname(os.path.abspath(path))
    _sweep_temporaries(folder)
    fd, tmp = tempfile.mkstemp(prefix=f".dfrank-{owner()}-", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w") as f:
            for part in ([text] if isinstance(text, str) else text):
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path, obj):
    """Write ``obj`` as JSON to ``path`` atomically (NaN allowed, as Python's json writes
    it)."""
    write_text_atomic(path, json.dumps(obj, indent=1, allow_nan=True) + "\n")


def read_json(path, fmt, newest=VERSION):
    """Read a dfrank JSON file of format ``fmt`` and a version up to ``newest`` (that
    format's current one); a clear error for anything else."""
    path = os.fspath(path)
    try:
        with open(path) as f:
            obj = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataFormatError(f"not a {fmt} file (not valid JSON: {e})",
                              path=path) from None
    if not isinstance(obj, dict) or obj.get("format") != fmt:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise DataFormatError(f"not a {fmt} file (format tag {found!r})", path=path)
    if not isinstance(obj.get("version"), int) or obj["version"] > newest:
        raise DataFormatError(f"{fmt} version {obj.get('version')!r}; this dfrank reads "
                              f"versions up to {newest} (upgrade dfrank)", path=path)
    return obj


def read_json_lines(path, what, repair=False, header=None):
    """The records of a JSON-lines file that dfrank appends to as work finishes, as
    ``[(line number, record)]``. ``header(record)``, given, raises DataFormatError unless
    the first record is the header of this kind of file: it is checked before anything
    else, so that a file of another kind (a user's text, JSON or binary file) is refused
    and left as it is. A last line cut short (a process killed while writing it) is left
    out with a warning and, with ``repair``, cut from the file, as is a missing last
    newline added, so that lines appended next stand on their own; any other line that is
    not JSON is a :class:`DataFormatError` naming it."""
    import warnings

    if repair and header is None:
        raise TypeError("read_json_lines repairs only a file whose header it checked first")
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.decode("utf-8", "replace").split("\n")
    if header is not None:
        first = next((i for i, line in enumerate(lines) if line.strip()), None)
        if first is None:
            raise DataFormatError(f"not a dfrank {what}: it is empty", path=path)
        try:
            head = json.loads(lines[first])
        except json.JSONDecodeError:
            raise DataFormatError(f"not a dfrank {what}: its first line is no JSON header (left "
                                  "as it is)", path=path, line=first + 1) from None
        header(head)
    records, cut = [], False
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append((i + 1, json.loads(line)))
        except json.JSONDecodeError:
            if i < len(lines) - 1:
                raise DataFormatError(f"a line of the {what} is not JSON", path=path,
                                      line=i + 1) from None
            cut = True
            warnings.warn(f"{path}: the {what}'s last line was cut short (a run killed "
                          "while writing it); it is " + ("dropped from the file" if repair
                                                           else "left out"), stacklevel=3)
    if repair and raw and not raw.endswith(b"\n"):
        if cut:
            with open(path, "r+b") as f:
                f.truncate(raw.rfind(b"\n") + 1)
        else:
            with open(path, "ab") as f:   # a whole last line without its newline
                f.write(b"\n")
    return records


def jsonable(x):
    """``x`` with numpy arrays, scalars and tuples turned into JSON's lists and numbers."""
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.floating, float)):
        return float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x
