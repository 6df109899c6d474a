"""A retrieval system's command line as a run function: ``dfrank tune -- COMMAND``.

The command is an argument list run without a shell (a value never passes through one),
once per parameter point, in a fresh temporary folder of its own, with a time limit. In
its arguments ``{name}`` is replaced by the point's value of parameter ``name``, ``{run}``
by the path of the TREC run file the command must write (without ``{run}`` its standard
output is read as the run), and ``{cwd}`` by the folder dfrank was started in.

Each run is a session of its own (its own process group): on a timeout, an error or
Ctrl-C the whole group is ended, so an engine started through a wrapper (a shell script
starting a JVM) does not outlive its run. The temporary folders carry dfrank's process id;
those left by a dfrank process that no longer exists (killed with SIGKILL) are removed
when the next :class:`CommandRun` is made.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from ..errors import DataFormatError
from ..files import OWNER, certainly_dead, owner
from ..io.forms import read_run

__all__ = ["CommandRun", "CommandError", "end_group", "sweep_stale_folders"]

_FIELD = re.compile(r"\{(\w+)\}")
_RESERVED = ("run", "cwd")
_PREFIX = "dfrank-tune-"
_FOLDER = re.compile(re.escape(_PREFIX) + OWNER + "-")
GRACE = 2.0   # seconds a process group has to end after SIGTERM, before SIGKILL


class CommandError(RuntimeError):
    """The command failed at a point: its exit status, or a missing or malformed run."""


class CommandRun:
    """``run = CommandRun(argv, names)(params)``: the run the command writes at ``params``.

    Parameters
    ----------
    argv : list of str
        The command and its arguments, with ``{name}``, ``{run}`` and ``{cwd}`` fields.
    names : the parameters' names (each must appear in some argument)
    timeout : float, seconds one run may take
    """

    def __init__(self, argv, names, timeout=3600.0):
        argv = [str(a) for a in argv]
        if not argv:
            raise ValueError("no command given (after --)")
        reserved = [n for n in names if n in _RESERVED]
        if reserved:
            raise ValueError(f"a parameter cannot be named {reserved[0]!r}: {{{reserved[0]}}} "
                             "is where dfrank puts the run file's path ({run}) or its own "
                             "folder ({cwd}); rename the parameter")
        fields = {m for a in argv for m in _FIELD.findall(a)}
        unknown = fields - set(names) - set(_RESERVED)
        if unknown:
            raise ValueError(f"the command names {{{sorted(unknown)[0]}}}, which is no "
                             f"parameter (the parameters: {', '.join(names)}; also "
                             "{run} and {cwd})")
        unused = [n for n in names if n not in fields]
        if unused:
            raise ValueError(f"parameter {unused[0]!r} appears nowhere in the command: write "
                             f"{{{unused[0]}}} where its value goes")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.argv, self.names, self.timeout = argv, list(names), timeout
        self.writes_run = "run" in fields
        self.cwd = os.getcwd()
        sweep_stale_folders()

    def __repr__(self):
        return f"CommandRun({shlex.join(self.argv)})"

    def describe(self):
        """The command as it runs here ({cwd} expanded; parameters and {run} left as
        fields): what a tune cache is keyed on, so a cache made in another folder, where
        the same words run other files, is refused."""
        return shlex.join(a.replace("{cwd}", self.cwd) for a in self.argv)

    def arguments(self, params, run_path):
        """The argument list at ``params``: floats written exactly (``repr``)."""
        values = {k: (str(v) if isinstance(v, int) else repr(float(v)))
                  for k, v in params.items()}
        values.update(run=run_path, cwd=self.cwd)
        return [_FIELD.sub(lambda m: values[m.group(1)], a) for a in self.argv]

    def __call__(self, params):
        with tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{owner()}-") as folder:
            run_path = os.path.join(folder, "run.txt")
            argv = self.arguments(params, run_path)
            returncode, stdout, stderr = self._run(argv, folder)
            if returncode != 0:
                raise CommandError(f"the command exited with status {returncode}: "
                                   f"{shlex.join(argv)}{_tail(stderr)}")
            if not self.writes_run:
                with open(run_path, "wb") as f:
                    f.write(stdout)
            elif not os.path.exists(run_path):
                raise CommandError(f"the command wrote no run to {{run}} ({run_path}): "
                                   f"{shlex.join(argv)}{_tail(stderr)}")
            try:
                return read_run(run_path, name="the command's run")
            except DataFormatError as e:
                where = "its standard output" if not self.writes_run else "{run}"
                raise CommandError(f"the run in {where} is not a TREC run ({e}): "
                                   f"{shlex.join(argv)}{_tail(stderr)}") from None

    def _run(self, argv, folder):
        """(exit status, stdout, stderr) of ``argv`` run in a session of its own; the whole
        session is ended on a timeout or on any exception (Ctrl-C included)."""
        try:
            proc = subprocess.Popen(argv, cwd=folder, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except FileNotFoundError:
            raise CommandError(f"no program {argv[0]!r} (the command: "
                               f"{shlex.join(argv)})") from None
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            end_group(proc)
            raise CommandError(f"the command ran longer than {self.timeout:g} s: "
                               f"{shlex.join(argv)}") from None
        except BaseException:
            end_group(proc)
            raise
        end_group(proc)   # what it started in the background ends with it
        return proc.returncode, stdout, stderr


def end_group(proc, grace=GRACE):
    """End the process group led by ``proc``: SIGTERM, then SIGKILL to what is left after
    ``grace`` seconds; ``proc`` itself is reaped."""
    if _signal_group(proc.pid, signal.SIGTERM):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _signal_group(proc.pid, 0):
            proc.poll()
            time.sleep(0.02)
        _signal_group(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        proc.kill()
        proc.wait()


def _signal_group(pgid, sig):
    """Send ``sig`` to process group ``pgid``; whether any process of it was there."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def sweep_stale_folders(root=None):
    """Remove the temporary folders of runs whose dfrank process is certainly gone
    (:func:`dfrank.files.certainly_dead`)."""
    root = root or tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        m = _FOLDER.match(name)
        if m and certainly_dead(m, os.path.join(root, name)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _tail(stderr, n=10):
    lines = stderr.decode("utf-8", "replace").rstrip().splitlines()[-n:]
    return ("\nits last lines on stderr:\n  " + "\n  ".join(lines)) if lines else ""
