"""The ``dfrank`` command line.

A module per command (``add_arguments(parser)`` and ``run(args)``, with ``HELP``,
``DESCRIPTION`` and ``EPILOG``), the options they share in :mod:`.options`, and
:data:`COMMANDS`, the table naming them: a run imports only its own command's module.

Exit codes: 0 success; 1 a data error (a malformed or missing file, an output that cannot
be written); 2 bad usage (an unknown metric, strategy or option, a bad value); 3 an
unexpected error (a bug: one line, and ``--debug`` shows its traceback); 130 Ctrl-C; 143
SIGTERM (which stops a command as Ctrl-C does: what Ctrl-C keeps is kept).
dfrank's own errors print one line without a traceback unless ``--debug``.
"""

from .commands import COMMANDS, main, parser

__all__ = ["main", "parser", "COMMANDS"]
