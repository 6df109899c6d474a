"""Learned weights in the forms of the systems that apply them in production.

Linear rankers (:meth:`dfrank.LinearRanker.export`, ``dfrank export``):

* ``"ranklib"`` -- RankLib's Coordinate Ascent model: ``## `` header lines, then one line
  ``fid:weight fid:weight ...`` (what RankLib's ``CoorAscent.model()`` writes and
  ``loadFromString`` reads); :func:`read_ranklib` reads one back;
* ``"es-ltr"`` / ``"opensearch-ltr"`` -- the Learning to Rank plugin's ``_createmodel`` body
  for a ``model/linear`` (its ``definition`` the JSON of feature name -> weight), with
  ``feature_normalizers`` (``standard``: mean, standard_deviation; ``min_max``: minimum,
  maximum) when the model normalizes its features;
* ``"solr-ltr"`` -- Solr LTR's ``LinearModel`` with ``StandardNormalizer`` (avg, std) or
  ``MinMaxNormalizer`` (min, max) per feature;
* ``"vespa"`` -- a rank profile whose first-phase expression is the weighted sum of the
  named rank features (normalization written into the expression).

The engines name features, LETOR numbers them: ``names`` (a list in feature order, or a
dict id -> name) maps one to the other; without it only RankLib's format is possible. A
model learned on query-level normalized features (LETOR's QueryLevelNorm) ranks differently
without that normalization, which no engine applies per query: it is refused.

Fusion weights (:meth:`dfrank.fusion.FusionResult.export`):

* ``"ranx"`` -- the arguments of ranx's ``fuse(runs, norm=..., method="wsum",
  params={"weights": [...]})``, with the runs' names in order;
* ``"opensearch"`` -- a search pipeline whose ``normalization-processor`` normalizes each
  clause of a ``hybrid`` query (``min_max``, ``l2`` or ``z_score``) and combines them with
  ``arithmetic_mean`` and the weights (in [0, 1], summing to 1, one per clause, in order);
* ``"elasticsearch"`` -- a ``linear`` retriever: one entry per run with its ``weight`` and
  ``normalizer`` (``minmax``, ``l2_norm`` or ``none``), the inner retrievers left for the
  user to fill in.

Borda and rank normalizations read positions: with tied scores dfrank orders by docno
(trec_eval's order), ranx by its input order, so their fusions agree where no run ties.
Each target expresses only some normalizations and takes the documents a clause did not
return as contributing 0: anything else (another normalization, ``missing="min"``,
negative weights where the target refuses them) is refused with the reason, rather than
exported as a fusion that ranks differently.
"""

import json
import math
import re

import numpy as np

from .data.normalization import affine, has_constants

__all__ = ["fusion_export", "FUSION_TARGETS", "ranker_export", "read_ranklib",
           "RANKER_TARGETS", "ExportError"]

# dfrank's normalization -> the target's name for the same formula
_RANX = {"minmax": "min-max", "max": "max", "sum": "sum", "zscore": "zmuv", "borda": "borda"}
_OPENSEARCH = {"minmax": "min_max", "l2": "l2", "zscore": "z_score"}
_ELASTIC = {"minmax": "minmax", "l2": "l2_norm", "none": "none"}
FUSION_TARGETS = ("ranx", "opensearch", "elasticsearch")


class ExportError(ValueError):
    """A model or fusion that the target system cannot apply as learned. ``index`` is the
    position of the feature whose name was refused (None for anything else), so that a
    caller that read the names from a file can name its line."""

    def __init__(self, message, index=None):
        super().__init__(message)
        self.index = index


def _refuse(target, why, index=None):
    raise ExportError(f"cannot export to {target}: {why}", index)


# A Vespa rank-feature reference, as the ranking-expression reference and the feature-name
# parser define it, restricted to what a rank expression reads as one atom: name,
# name(args) or name(args).output, a name and an output being identifiers (an output may be
# dotted) and an argument an identifier (dotted: a struct field), a number or a quoted
# string (no quote, backslash or control character unescaped, and no brace: the schema's
# tokenizer counts braces to find a rank profile's end, inside quotes too)
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_ARG = (rf"(?:{_IDENT}(?:\.{_IDENT})*|[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
        r'|"(?:[^"\\{}\x00-\x1f\x7f]|\\["\\tnrf]|\\x[0-9a-fA-F]{2})*")')
VESPA_FEATURE = re.compile(rf"{_IDENT}(?:\( *{_ARG}(?: *, *{_ARG})* *\))?(?:\.{_IDENT})*")
VESPA_NAME = re.compile(_IDENT)
_VESPA_SHAPE = ("a Vespa rank feature: name, name(args) or name(args).output, where a name "
                "is letters, digits and _ (not starting with a digit) and an argument such a "
                "name, a number or a quoted string without braces, e.g. bm25(title), "
                "attribute(popularity), fieldMatch(body).completeness, query(w)")


def _check_name(target, j, name):
    """Refuse a feature name that ``target``'s language would not read as one feature."""
    if not name.strip():
        _refuse(target, f"feature {j + 1} has an empty name", j)
    if target == "vespa" and not VESPA_FEATURE.fullmatch(name):
        _refuse(target, f"feature {j + 1}'s name {name!r} is not {_VESPA_SHAPE}", j)


def _header_text(text):
    """Text from a model's metadata made safe for one RankLib header line: characters that
    could end the line (or are not printable) become '?'."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def fusion_export(result, target):
    """The weights of a :class:`~dfrank.fusion.FusionResult` for ``target`` (a dict ready
    for ``json.dump``)."""
    if target not in FUSION_TARGETS:
        raise ValueError(f"unknown fusion export {target!r}; known: {', '.join(FUSION_TARGETS)}")
    names = list(result.weights)
    weights = [float(result.weights[n]) for n in names]
    table = {"ranx": _RANX, "opensearch": _OPENSEARCH, "elasticsearch": _ELASTIC}[target]
    if result.norm not in table:
        _refuse(target, f"it has no normalization {result.norm!r} (it has "
                        f"{', '.join(sorted(table))} in dfrank's names); fuse with one of "
                        "those")
    if result.missing != "zero" and result.norm != "borda":
        _refuse(target, f"documents a run did not retrieve contribute 0 there, but this "
                        f"fusion gave them missing={result.missing!r}; fuse with "
                        "missing='zero'")
    if target != "ranx" and min(weights) < 0:
        _refuse(target, "its weights must be >= 0, and this fusion (signed=True) has "
                        f"{min(weights):.4g}; fuse with signed=False")
    if target == "ranx":
        return {"method": "wsum", "norm": table[result.norm], "runs": names,
                "params": {"weights": weights}}
    if target == "opensearch":
        return {"description": f"dfrank fusion of {', '.join(names)} ({result.metric})",
                "phase_results_processors": [{"normalization-processor": {
                    "normalization": {"technique": table[result.norm]},
                    "combination": {"technique": "arithmetic_mean",
                                    "parameters": {"weights": weights}}}}]}
    return {"retriever": {"linear": {"retrievers": [
        {"retriever": {"standard": {"query": {"_comment": f"the query of run {n!r}"}}},
         "weight": w, "normalizer": table[result.norm]} for n, w in zip(names, weights)]}}}


# ---------------------------------------------------------------- linear rankers
RANKER_TARGETS = ("ranklib", "es-ltr", "opensearch-ltr", "solr-ltr", "vespa")


def _names_of(ranker, names, target):
    ids = [int(i) for i in ranker.feature_ids]
    if names is None:
        meta = ranker.meta.get("feature_names")
        if meta:
            names = meta
        else:
            _refuse(target, "it names its features and this model only numbers them; give "
                            "names= (a list in feature order or a dict id -> name; on the "
                            "command line --names a,b,c or --names FILE)")
    if isinstance(names, dict):
        missing = [i for i in ids if i not in names and str(i) not in names]
        if missing:
            _refuse(target, f"no name for feature id(s) {missing[:5]}")
        out = [str(names.get(i, names.get(str(i)))) for i in ids]
    else:
        out = [str(n) for n in names]
        if len(out) != len(ids):
            _refuse(target, f"{len(out)} names for {len(ids)} features")
    for j, name in enumerate(out):
        _check_name(target, j, name)
    if len(set(out)) != len(out):
        dup = next(j for j, n in enumerate(out) if out.index(n) != j)
        _refuse(target, f"two features have the same name {out[dup]!r}", dup)
    return out


def _ranklib_text(ranker, norm):
    """RankLib's Coordinate Ascent model. RankLib has no per-feature normalizers in a model,
    so a standard or min-max normalization is folded into the weights: w . (x - shift) /
    scale = (w / scale) . x - constant, the same ranking of every query."""
    w = np.asarray(ranker.weights, dtype=np.float64)
    note = []
    if norm is not None and norm["kind"] == "query":
        note = ["## dfrank: features normalized within each query, as in the training "
                "files (LETOR's QueryLevelNorm): score files normalized the same way"]
    elif has_constants(norm):
        w = w / affine(norm)[1]
        note = [f"## dfrank: the {norm['kind']} normalization is folded into the weights"]
    head = ["## Coordinate Ascent", "## Restart = 1", "## MaxIteration = 25",
            "## StepBase = 0.05", "## StepScale = 2.0", "## Tolerance = 0.001",
            "## Regularized = false", "## Slack = 0.001",
            "## dfrank: " + (_header_text(f"{ranker.meta['strategy']} maximizing "
                                          f"{ranker.meta['metric']}")
                             if ranker.meta.get("metric") and ranker.meta.get("strategy")
                             else "a linear ranker")] + note
    body = " ".join(f"{int(i)}:{float(x)!r}" for i, x in zip(ranker.feature_ids, w))
    return "\n".join(head) + "\n" + body + "\n"


def ranker_export(ranker, target, names=None):
    """The text of ``ranker`` in ``target``'s format (see the module docstring)."""
    if target not in RANKER_TARGETS:
        raise ValueError(f"unknown model format {target!r}; known: {', '.join(RANKER_TARGETS)}")
    norm = ranker.normalization
    w = [float(x) for x in ranker.weights]
    if norm is None:
        import warnings

        warnings.warn("the model does not record how its features were normalized (made by "
                      "hand, read from RankLib's format, or saved by an older dfrank): "
                      f"the {target} model assumes the engine computes them as they were "
                      "in training, not normalized within each query", UserWarning,
                      stacklevel=3)
    if target == "ranklib":
        return _ranklib_text(ranker, norm)
    if norm is not None and norm["kind"] == "query":
        _refuse(target, "the model was learned on features normalized within each query "
                        "(as LETOR's QueryLevelNorm files and MQ2008 are); an engine scores "
                        "documents one by one and cannot apply that, so the exported model "
                        "would rank differently. Learn on features as the engine computes them, or "
                        "normalized by constants (normalize='standard' or 'minmax')")
    feats = _names_of(ranker, names, target)
    if target in ("es-ltr", "opensearch-ltr"):
        model = {"type": "model/linear", "definition": json.dumps(dict(zip(feats, w)))}
        if has_constants(norm):
            model["feature_normalizers"] = {
                f: ({"standard": {"mean": float(norm["mean"][j]),
                                  "standard_deviation": float(norm["std"][j])}}
                    if norm["kind"] == "standard" else
                    {"min_max": {"minimum": float(norm["min"][j]),
                                 "maximum": float(norm["max"][j])}})
                for j, f in enumerate(feats)}
        name = ranker.meta.get("name", "dfrank_linear_model")
        return json.dumps({"model": {"name": name, "model": model}}, indent=2) + "\n"
    if target == "solr-ltr":
        features = []
        for j, f in enumerate(feats):
            entry = {"name": f}
            if norm is not None and norm["kind"] == "standard":
                entry["norm"] = {"class": "org.apache.solr.ltr.norm.StandardNormalizer",
                                 "params": {"avg": repr(float(norm["mean"][j])),
                                            "std": repr(float(norm["std"][j]))}}
            elif has_constants(norm):
                entry["norm"] = {"class": "org.apache.solr.ltr.norm.MinMaxNormalizer",
                                 "params": {"min": repr(float(norm["min"][j])),
                                            "max": repr(float(norm["max"][j]))}}
            features.append(entry)
        return json.dumps({"class": "org.apache.solr.ltr.model.LinearModel",
                           "name": ranker.meta.get("name", "dfrank_linear_model"),
                           "features": features,
                           "params": {"weights": dict(zip(feats, w))}}, indent=2) + "\n"
    # vespa: a rank profile with the weighted sum as its first-phase expression
    terms = []
    for j, (f, x) in enumerate(zip(feats, w)):
        term = f
        if has_constants(norm):
            shift, scale = (float(v[j]) for v in affine(norm))
            op = "-" if shift >= 0 else "+"
            term = f"({f} {op} {_plain(abs(shift))}) / {_plain(scale)}"
        terms.append(("- " if x < 0 else "+ ") + f"{_plain(abs(x))} * {term}")
    body = " ".join(terms).removeprefix("+ ")
    name = str(ranker.meta.get("name", "dfrank"))
    if not VESPA_NAME.fullmatch(name):
        _refuse(target, f"the model's name {name!r} (its meta 'name') is not a rank-profile "
                        "name (letters, digits and _, not starting with a digit)")
    return (f"rank-profile {name} inherits default {{\n"
            f"    first-phase {{\n"
            f"        expression: {body}\n"
            f"    }}\n"
            f"}}\n")


def _plain(x):
    """A float in positional notation with the digits that round-trip (no exponent, which a
    rank expression need not read)."""
    return np.format_float_positional(float(x), unique=True, trim="0")


def read_ranklib(path, max_features=None):
    """``(feature_ids, weights, kind)`` of a RankLib Coordinate Ascent model file, read as
    RankLib reads one: ``##`` lines are comments (the first names the ranker), the first
    other line holds ``fid:weight`` pairs. Features it does not list get weight 0; a
    feature id above ``max_features`` (default: the data readers' cap, 65,536) is an error
    before anything is allocated."""
    from .errors import DataFormatError
    from .io.svmlight import MAX_FEATURES

    cap = MAX_FEATURES if max_features is None else int(max_features)

    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")   # a byte-order mark is no header
    except UnicodeDecodeError as e:
        raise DataFormatError(f"not a RankLib model: not UTF-8 text (byte {e.start})",
                              path=path) from None
    # lines end as Java's readLine ends them (RankLib's reader): \n, \r or \r\n
    lines = [ln.strip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    kind = next((ln[2:].strip() for ln in lines if ln.startswith("##")), "")
    if kind != "Coordinate Ascent":
        raise DataFormatError(f"a RankLib model of kind {kind or 'unknown'!r}; dfrank reads "
                              "the linear 'Coordinate Ascent' models (first line "
                              "'## Coordinate Ascent')", path=path)
    body = next(((i + 1, ln) for i, ln in enumerate(lines) if ln and not ln.startswith("##")),
                None)
    if body is None:
        raise DataFormatError("no weights line (fid:weight ...) in the model", path=path)
    line_no, text = body
    pairs = {}
    for tok in text.split():
        fid, sep, val = tok.partition(":")
        try:
            fid_i, v = int(fid), float(val)
        except ValueError:
            fid_i, v = 0, math.nan
        if not sep or fid_i < 1 or not math.isfinite(v) or fid_i in pairs:
            raise DataFormatError("expected fid:weight with a feature id >= 1 (once) and a "
                                  "finite weight", path=path, line=line_no, token=tok)
        if fid_i > cap:
            raise DataFormatError(f"feature id {fid_i:,} is above the cap max_features="
                                  f"{cap:,} (the weights become a dense vector); raise "
                                  "max_features if the model really is that wide",
                                  path=path, line=line_no, token=tok)
        pairs[fid_i] = v
    full = np.arange(1, max(pairs) + 1, dtype=np.int64)
    return full, np.array([pairs.get(int(i), 0.0) for i in full]), kind
