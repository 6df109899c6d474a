"""A retrieval system's command line as a run function: ``dfrank tune -- COMMAND``.

The command is an argument list run without a shell (a value never passes through one),
once per parameter point, in a fresh temporary folder of its own, with a time limit. In
its arguments ``{name}`` is replaced by the point's value of parameter ``name``, ``{run}``
by the path of the TREC run file the command must write (without ``{run}`` its standard
output is read as the run), and ``{cwd}`` by the folder dfrank was started in.
"""

import os
import re
import shlex
import subprocess
import tempfile

from .errors import DataFormatError
from .io.forms import read_run

__all__ = ["CommandRun", "CommandError"]

_FIELD = re.compile(r"\{(\w+)\}")
_RESERVED = ("run", "cwd")


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

    def __repr__(self):
        return f"CommandRun({shlex.join(self.argv)})"

    def arguments(self, params, run_path):
        """The argument list at ``params``: floats written exactly (``repr``)."""
        values = {k: (str(v) if isinstance(v, int) else repr(float(v)))
                  for k, v in params.items()}
        values.update(run=run_path, cwd=self.cwd)
        return [_FIELD.sub(lambda m: values[m.group(1)], a) for a in self.argv]

    def __call__(self, params):
        with tempfile.TemporaryDirectory(prefix="dfrank-tune-") as folder:
            run_path = os.path.join(folder, "run.txt")
            argv = self.arguments(params, run_path)
            try:
                done = subprocess.run(argv, cwd=folder, capture_output=True,
                                      timeout=self.timeout, stdin=subprocess.DEVNULL)
            except FileNotFoundError:
                raise CommandError(f"no program {argv[0]!r} (the command: "
                                   f"{shlex.join(argv)})") from None
            except subprocess.TimeoutExpired:
                raise CommandError(f"the command ran longer than {self.timeout:g} s: "
                                   f"{shlex.join(argv)}") from None
            if done.returncode != 0:
                raise CommandError(f"the command exited with status {done.returncode}: "
                                   f"{shlex.join(argv)}{_tail(done.stderr)}")
            if not self.writes_run:
                with open(run_path, "wb") as f:
                    f.write(done.stdout)
            elif not os.path.exists(run_path):
                raise CommandError(f"the command wrote no run to {{run}} ({run_path}): "
                                   f"{shlex.join(argv)}{_tail(done.stderr)}")
            try:
                return read_run(run_path, name="the command's run")
            except DataFormatError as e:
                where = "its standard output" if not self.writes_run else "{run}"
                raise CommandError(f"the run in {where} is not a TREC run ({e}): "
                                   f"{shlex.join(argv)}{_tail(done.stderr)}") from None


def _tail(stderr, n=10):
    lines = stderr.decode("utf-8", "replace").rstrip().splitlines()[-n:]
    return ("\nits last lines on stderr:\n  " + "\n  ".join(lines)) if lines else ""
