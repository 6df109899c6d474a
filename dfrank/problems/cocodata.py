"""A bench's runs in COCO's data layout, which COCO's post-processing (``cocopp``) reads.

COCO minimizes ``f`` and measures the precision ``f - f_opt`` a run reached; dfrank
maximizes a metric towards a reference, so a run's ``f`` is minus its value, ``f_opt``
minus its instance's reference, and ``f - f_opt`` the gap ``reference - value`` (0 where a
run reached or beat the reference: COCO's precisions are not negative). COCO's targets
``f - f_opt <= 10^-k`` are then dfrank's absolute targets ``reference - 10^-k``
(:mod:`.coco`).

One folder per solver (COCO's algorithm), holding per problem (COCO's function, its id the
IOHprofiler export's, :func:`.ioh.function_of`):

* ``bbobexp_f{ID}.info``: a header (``suite = 'dfrank'``, the function, the dimension,
  the algorithm, ``data_format = 'bbob-new2'``), a comment naming the problem, and the
  data files with one ``instance:evaluations|final precision`` entry per run;
* ``data_f{ID}/bbobexp_f{ID}_DIM{D}.dat``: per run a header line (``%``), then a line per
  improvement (evaluations, 0 constraint evaluations, the precision reached, the
  evaluation's ``f``, the best ``f`` so far);
* ``data_f{ID}/bbobexp_f{ID}_DIM{D}.tdat``: the same lines and the run's last evaluation
  (COCO's fixed-budget view; cocopp requires the file).

A fold is an instance, its seeds runs of it, as in the IOHprofiler export. Runs that made no
evaluation cannot be written (COCO's logger writes nothing for them either): they are named
in ``no_evaluations.tsv``. cocopp knows its own suites only: :func:`register_cocopp`
registers dfrank's as a testbed through cocopp's table of suites before ``cocopp.main``.
"""

import os

from .ioh import exported, function_of, instance_of, write_no_evaluations

__all__ = ["export", "register_cocopp", "algorithms_of", "SUITE"]

SUITE = "dfrank"
HEADER = ("% f evaluations | g evaluations | best noise-free fitness - Fopt ({fopt:.12e}) + "
          "sum g_i+ | measured fitness | best measured fitness or single-digit g-values\n")


def _quoted(text):
    """``text`` as a double-quoted Python literal that cocopp reads back as it is: its
    header parser takes a quoted value up to a quote that a comma follows, then evaluates
    it, so a backslash, quote, comma or line break inside is written as an escape."""
    return '"' + "".join(f"\\x{ord(c):02x}" if c in _ESCAPED else c for c in str(text)) + '"'


_ESCAPED = frozenset("\\\"',\n\r")


def _gap(run, value):
    return max(0.0, float(run["reference"]) - float(value))


def _lines(run, last=False):
    """A run's data lines: each improvement, and with ``last`` its last evaluation."""
    evals, values = run["trace"]["evals"], run["trace"]["values"]
    out = [HEADER.format(fopt=-float(run["reference"]))]
    out += [f"{int(e)} 0 {_gap(run, v):+.9e} {-float(v):+.9e} {-float(v):+.9e}\n"
            for e, v in zip(evals, values)]
    final = run.get("last_value")
    if last and final is not None and run["n_evals"] > int(evals[-1]):
        best = float(values[-1])
        out.append(f"{int(run['n_evals'])} 0 {_gap(run, best):+.9e} {-float(final):+.9e} "
                   f"{-best:+.9e}\n")
    return out


def export(runs, folder):
    """Write ``runs`` (bench records) under ``folder`` in COCO's layout: ``(files written,
    runs that made no evaluation, left out and named in no_evaluations.tsv)``. The repeats
    of the reproducibility check are left out, as in the IOHprofiler export."""
    groups, empty = exported(runs)
    written = []
    for solver, pid, folder_name, by_dim in groups:
        fid, name = function_of(pid)
        base = os.path.join(folder, folder_name)
        os.makedirs(os.path.join(base, f"data_f{fid}"), exist_ok=True)
        info = []
        for dim, drs in by_dim.items():
            rel = f"data_f{fid}/bbobexp_f{fid}_DIM{dim}"
            for suffix, last in ((".dat", False), (".tdat", True)):
                path = os.path.join(base, rel + suffix)
                with open(path, "w") as f:
                    for r in drs:
                        f.writelines(_lines(r, last))
                written.append(path)
            info += [f"suite = '{SUITE}', funcId = {fid}, DIM = {dim}, Precision = 1.000e-08, "
                     f"algId = {_quoted(solver)}, coco_version = 'dfrank', logger = 'bbob', "
                     "data_format = 'bbob-new2'\n",
                     f"% {pid}: f = -{name}, f_opt = -reference of each instance (fold)\n",
                     f"{rel}.dat, " + ", ".join(
                         f"{instance_of(r['fold'])}:{int(r['n_evals'])}|"
                         f"{_gap(r, r['trace']['values'][-1]):.1e}" for r in drs) + "\n"]
        path = os.path.join(base, f"bbobexp_f{fid}.info")
        with open(path, "w") as f:
            f.writelines(info)
        written.append(path)
    named = write_no_evaluations(folder, empty, "COCO's")
    if named:
        written.append(named)
    return written, empty


def algorithms_of(folder):
    """cocopp's algorithm folders in an export: each solver's folder of ``folder`` (one that
    holds ``.info`` files), or ``folder`` itself where it is one solver's."""
    import glob

    from ..errors import UsageError

    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: no such folder (a folder written by 'dfrank bench "
                         "export --format coco')")
    inside = sorted(os.path.join(folder, d) for d in os.listdir(folder)
                    if glob.glob(os.path.join(folder, glob.escape(d), "*.info")))
    if inside:
        return inside
    if glob.glob(os.path.join(glob.escape(folder), "*.info")):
        return [folder]
    raise UsageError(f"{folder}: no COCO data (.info files) in it or in its folders: export "
                     "a bench with 'dfrank bench export BENCH.jsonl --format coco -o DIR'")


def register_cocopp():
    """Make cocopp read dfrank's suite: a testbed ``dfrank`` (BBOB's settings, dfrank's
    problem names, no reference algorithm, no merging with BBOB's suites) added to cocopp's
    table of suites, ``cocopp.testbedsettings.suite_to_testbed``, which cocopp's own error
    for an unknown suite names as the place to add one. Returns cocopp."""
    from .._optional import need

    cocopp = need("cocopp", "COCO's post-processing")
    from cocopp import testbedsettings as tb

    from .suite import SPECS

    names = {i + 1: pid for i, pid in enumerate(SPECS)}

    class DfrankTestbed(tb.GECCOBBOBTestbed):
        """dfrank's suite of rank-metric problems (f = -metric, f_opt = -reference)."""

        def __init__(self, target_values):
            super().__init__(target_values)
            self.name = SUITE
            self.short_names = dict(names)
            self.reference_algorithm_filename = None
            self.reference_algorithm_displayname = None

        def filter(self, dsl):
            return dsl

    tb.DfrankTestbed = DfrankTestbed
    tb.suite_to_testbed[SUITE] = "DfrankTestbed"
    return cocopp
