"""``dfrank search``: rank a collection with the built-in engine, as a TREC run."""

import sys

from . import options as o

DESCRIPTION = ("Rank every topic's documents with the built-in engine (bm25: k1, b; ql: mu; "
               "sdm: w_t, w_o, w_u) and write the TREC run (standard output by default).")
EPILOG = """\
example:
  dfrank search --collection docs.tsv --topics topics.tsv --model bm25 --set k1=0.9 \\
      --set b=0.4 -o run.txt"""


def add_arguments(p):
    o.add_collection(p, required=True)
    p.add_argument("--model", default="bm25", choices=["bm25", "ql", "sdm"],
                   help="the engine's model (default bm25)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a parameter of the model (repeatable; the others keep their "
                        "defaults)")
    p.add_argument("--depth", type=o.positive_int, default=1000,
                   help="documents per topic (default 1000)")
    o.add_output(p, "the run (default: standard output)")
    o.add_quiet(p)


def run(args):
    from ..files import write_text_atomic
    from ..io.forms import run_to_trec_lines

    o.outputs_writable(args, "output", inputs=[args.collection, args.topics])
    params = o.parse_numbers(args.set, "--set")
    o.prepare(args)
    engine = o.engine(args, need_qrels=False)
    lines = run_to_trec_lines(engine.run(args.model, params, depth=args.depth),
                              tag=f"dfrank-{args.model}")
    if not args.output:
        sys.stdout.writelines(lines)
        return 0
    out = o.Outputs()
    out.write(args.output, lambda p: write_text_atomic(p, "".join(lines)), "run", ".run")
    out.done()
    return 0
