"""``dfrank export``: a model in the format of RankLib or of a search engine."""

import os
import sys

from ..formats import RANKER_TARGETS
from . import options as o

DESCRIPTION = ("Write MODEL (JSON from 'dfrank fit') in the format of the system that applies "
               "it: ranklib (a Coordinate Ascent model RankLib loads with -load), es-ltr / "
               "opensearch-ltr (the body of the LTR plugin's _createmodel: a model/linear "
               "with feature_normalizers), solr-ltr (a LinearModel for Solr's model store), "
               "vespa (a rank profile). Engines name their features: give --names. A model "
               "learned on features normalized within each query (LETOR's QueryLevelNorm) is "
               "refused for the engines: they cannot apply that normalization.")
EPILOG = """\
examples:
  dfrank export model.json --format ranklib -o model.ranklib
  dfrank export model.json --format es-ltr --names title_bm25,body_bm25,pagerank
  dfrank export model.json --format solr-ltr --names-file names.txt -o model.json"""


def add_arguments(p):
    p.add_argument("model", help="model JSON written by 'dfrank fit'")
    p.add_argument("--format", required=True, choices=list(RANKER_TARGETS),
                   help="the target system's format")
    names = p.add_mutually_exclusive_group()
    names.add_argument("--names", metavar="A,B,C",
                       help="the engine's name of each feature, in feature order, separated "
                            "by commas")
    names.add_argument("--names-file", metavar="FILE",
                       help="the same names from a file, one per line (blank lines and # "
                            "comments skipped)")
    o.add_output(p, "the exported model (default: standard output)")
    o.add_quiet(p)


# a --names value without a comma that ends so looks like a file: refused, not taken as a name
NAME_FILE_SUFFIXES = (".txt", ".tsv", ".csv", ".names", ".lst", ".list", ".json")


def _names_file(path):
    """The names of a file, one per line, and the line of each."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            kept = [(i, ln.strip()) for i, ln in enumerate(f, 1)
                    if ln.strip() and not ln.lstrip().startswith("#")]
    except FileNotFoundError:
        raise o.UsageError(f"--names-file {path}: no such file") from None
    return [n for _, n in kept], [i for i, _ in kept]


def _names_arg(args):
    """(names, the file's line of each name or None) of --names or --names-file. A value
    of --names is names, by its syntax; a file is --names-file."""
    if args.names_file is not None:
        return _names_file(args.names_file)
    value = args.names
    if value is None:
        return None, None
    if "," not in value and (os.path.isfile(value) or os.sep in value or
                             os.path.splitext(value)[1].lower() in NAME_FILE_SUFFIXES):
        raise o.UsageError(f"--names {value}: that looks like a file, and --names takes the "
                           "names themselves, separated by commas; a file of names is "
                           f"--names-file {value}")
    return [n.strip() for n in value.split(",")], None


def run(args):
    from ..formats import ExportError
    from ..files import write_text_atomic
    from ..driver.result import LinearRanker

    o.outputs_writable(args, "output", inputs=[args.model, args.names, args.names_file])
    model = LinearRanker.load(args.model)
    names, lines = _names_arg(args)
    try:
        text = model.export(None, args.format, names)
    except ExportError as e:
        if names is not None and lines is None and len(names) == 1 != model.n_features:
            raise o.UsageError(f"{e}: --names {args.names} is one name (a file of names is "
                               f"--names-file)") from None
        if lines is None or e.index is None:
            raise
        raise o.UsageError(f"{args.names_file or args.names}, line {lines[e.index]}: "
                           f"{e}") from None
    if not args.output:
        sys.stdout.write(text)
        return 0
    out = o.Outputs()
    if out.write(args.output, lambda p: write_text_atomic(p, text), f"{args.format} model",
                 os.path.splitext(args.output)[1], stdout=lambda: text):
        print(f"{args.format} model written to {args.output}")
    out.done()
    return 0
