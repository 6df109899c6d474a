"""Learned weights in the forms of the systems that apply them in production.

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

__all__ = ["fusion_export", "FUSION_TARGETS"]

# dfrank's normalization -> the target's name for the same formula
_RANX = {"minmax": "min-max", "max": "max", "sum": "sum", "zscore": "zmuv", "borda": "borda"}
_OPENSEARCH = {"minmax": "min_max", "l2": "l2", "zscore": "z_score"}
_ELASTIC = {"minmax": "minmax", "l2": "l2_norm", "none": "none"}
FUSION_TARGETS = ("ranx", "opensearch", "elasticsearch")


class ExportError(ValueError):
    """A model or fusion that the target system cannot apply as learned."""


def _refuse(target, why):
    raise ExportError(f"cannot export to {target}: {why}")


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
