"""The command table (:data:`COMMANDS`), each command's parser, and :func:`main`, which
runs one: the exit codes and the handling of Ctrl-C and SIGTERM that the package's
docstring describes."""


import argparse
import importlib
import signal
import sys

__all__ = ["main", "parser", "COMMANDS"]

# name: (module, what it does) -- in the order ``dfrank --help`` lists them
COMMANDS = {
    "demo": ("demo", "a first run on bundled data"),
    "fit": ("fit", "learn a linear ranker"),
    "evaluate": ("evaluate", "evaluate a model on data"),
    "export": ("export", "write a model in the format of RankLib or a search engine"),
    "fuse": ("fuse", "learn the weights of a fusion of TREC runs"),
    "tune": ("tune", "tune a retrieval system's parameters on a metric"),
    "search": ("search", "rank a collection with the built-in engine, as a TREC run"),
    "compare": ("compare", "compare optimizers on one objective with one budget"),
    "bench": ("bench", "optimizers x rank-metric problems: runtime-to-target profiles"),
    "trec-eval": ("trec_eval", "trec_eval's measures of a TREC run, trec_eval's output"),
    "grid": ("surface", "metric surface over a few features (Metzler's Figure 1)"),
    "info": ("info", "summarize a LETOR/SVMlight file"),
    "metrics": ("metrics", "list the metrics and formulas"),
    "strategies": ("strategies", "list the optimizers"),
    "warmup": ("warmup", "compile every numba kernel ahead of use (once, on every core)"),
}

EXIT_DATA, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143

EPILOG = """\
first run:
  dfrank demo                                   learn a ranker on the bundled demo data

examples:
  dfrank fit Fold1/train.txt.gz --valid Fold1/vali.txt.gz --test Fold1/test.txt.gz \\
      --metric ndcg@10 -o model.json
  dfrank evaluate model.json Fold1/test.txt.gz --metric map --metric ndcg@10
  dfrank export model.json --format es-ltr --names names.txt -o model.es.json
  dfrank fuse --qrels qrels.txt a.run b.run --metric map -o fused.run
  dfrank tune --collection cranfield/ --model bm25 --folds 5
  dfrank compare Fold1/train.txt.gz --test Fold1/test.txt.gz \\
      --strategies ca,pso,random,cma:es --seeds 5 --budget 2000 --plot anytime.png
  dfrank trec-eval qrels.txt run.txt            trec_eval's measures of a TREC run

Run "dfrank COMMAND --help" for the options of a command."""


def _top_parser():
    p = argparse.ArgumentParser(
        prog="dfrank", formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False,
        allow_abbrev=False,
        description="Directly maximize rank-based metrics (MAP, NDCG@k, P@k, MRR, ERR@k) "
                    "of linear rankers over Metzler's multinomial manifold, and tune and "
                    "fuse retrieval systems on the metric you report.",
        usage="dfrank [--version] [--debug] COMMAND [options]",
        epilog="commands:\n" + "\n".join(f"  {name:12s} {text}"
                                         for name, (_, text) in COMMANDS.items())
        + "\n\n" + EPILOG)
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    p.add_argument("--version", action="store_true", help="print dfrank's version")
    p.add_argument("--debug", action="store_true",
                   help="show tracebacks on errors (also after the command)")
    return p


def parser(name):
    """The argument parser of command ``name`` (its module imported now)."""
    module, _ = COMMANDS[name]
    mod = importlib.import_module(f".{module}", __package__)
    p = argparse.ArgumentParser(prog=f"dfrank {name}", description=mod.DESCRIPTION,
                                epilog=mod.EPILOG, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    mod.add_arguments(p)
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show tracebacks on errors")
    p.set_defaults(command_run=mod.run)
    return p


def _split(argv):
    """(the options before the command, the command or None, the rest)."""
    for i, a in enumerate(argv):
        if not a.startswith("-"):
            return argv[:i], a, argv[i + 1:]
    return argv, None, []


def main(argv=None):
    """Entry point of the ``dfrank`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    head, name, rest = _split(argv)
    top = _top_parser()
    opts = top.parse_args(head)
    if opts.version:
        from .. import __version__

        print(f"dfrank {__version__}")
        return 0
    if name is None or opts.help:
        top.print_help()
        return 0 if opts.help else EXIT_USAGE
    if name not in COMMANDS:
        import difflib

        close = difflib.get_close_matches(name, COMMANDS, n=1)
        print(f"dfrank: error: unknown command {name!r}"
              + (f"; did you mean {close[0]!r}?" if close else "")
              + f" (commands: {', '.join(COMMANDS)})", file=sys.stderr)
        return EXIT_USAGE
    args = parser(name).parse_args(rest)
    args.command_line = "dfrank " + " ".join(argv)   # as given, for files that record it
    debug = opts.debug or getattr(args, "debug", False)
    return _run(args, debug)


def _run(args, debug):
    """``args.command_run(args)`` with dfrank's errors mapped to exit codes and warnings
    printed as one line each."""
    import warnings

    from ..errors import (DataFormatError, MissingExtra, NoEvaluationError, OutputError,
                          TuneError, UsageError)

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"dfrank: warning: {message}", file=sys.stderr)

    def say(e, code):
        if debug:
            raise e
        print(f"dfrank: error: {e}", file=sys.stderr)
        return code

    terminated, interrupted = [], []
    previous = _on_sigterm(terminated)
    previous_int = _on_sigint(interrupted)
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = show
            code = args.command_run(args)
        if terminated or interrupted:   # the command kept what it had and ended: say so
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        return code
    except (DataFormatError, FileNotFoundError, IsADirectoryError, PermissionError,
            TuneError, OutputError) as e:
        return say(e, EXIT_DATA)
    except (UsageError, MissingExtra, NoEvaluationError, ValueError, TypeError) as e:
        return say(e, EXIT_USAGE)
    except KeyboardInterrupt:
        interrupted.append(signal.SIGINT)
        print("dfrank: " + ("terminated" if terminated else "interrupted"), file=sys.stderr)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as e:   # not one of dfrank's errors: a bug
        if debug:
            raise
        print(f"dfrank: internal error: {type(e).__name__}: {e}\n(this is a bug in dfrank: "
              "run the command again with --debug for the traceback, and report it)",
              file=sys.stderr)
        return EXIT_BUG
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)
        if terminated or interrupted:   # a compile in a helper process ends with the command
            from .._jit import end_all

            end_all()


def _on_sigint(received):
    """While a command runs, Ctrl-C raises KeyboardInterrupt as Python's own handler does,
    and ``received`` notes that it came (a command that keeps its best point and ends
    still exits 130). Nothing is set where SIGINT is ignored or handled by someone else,
    or outside the main thread; returns the handler it replaced, or None."""
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return None

    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    return signal.default_int_handler


def _on_sigterm(received):
    """While a command runs, SIGTERM raises KeyboardInterrupt where the process is, so what
    Ctrl-C saves is saved (the best point so far, the finished runs; an engine's process
    group is ended) and the command exits 143; ``received`` notes that it came. Returns the
    handler it replaced (None outside the main thread, where no handler can be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def terminate(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt("terminated")

    previous = signal.signal(signal.SIGTERM, terminate)
    return signal.SIG_DFL if previous is None else previous
