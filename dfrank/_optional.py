"""Optional integrations, imported only where they are used, with the extra named when
they are missing (as pandas' ``import_optional_dependency``)."""

import importlib

from .errors import MissingExtra

__all__ = ["need", "STRATEGY_EXTRAS", "strategy_extra"]

# top-level module -> (the extra of pyproject.toml that installs it, its package name)
EXTRAS = {"pandas": ("pandas", "pandas"), "ranx": ("ranx", "ranx"),
          "pyterrier": ("pyterrier", "pyterrier"),
          "ir_datasets": ("ir_datasets", "ir_datasets"),
          "ir_measures": ("ir_measures", "ir-measures"),
          "sklearn": ("sklearn", "scikit-learn"), "matplotlib": ("plot", "matplotlib"),
          "dask": ("dask", "dask[distributed]"), "distributed": ("dask", "dask[distributed]"),
          "cma": ("compare", "cma"), "nevergrad": ("compare", "nevergrad"),
          "optuna": ("compare", "optuna"), "cmaes": ("compare", "cmaes"),
          "lightgbm": ("compare", "lightgbm"), "bm25s": ("bm25s", "bm25s")}


def need(module, what):
    """Import ``module`` for ``what``, or raise ImportError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        extra, package = EXTRAS.get(top, (None, top))
        how = f"pip install 'dfrank[{extra}]' (or pip install {package})" if extra \
            else f"pip install {package}"
        raise MissingExtra(f"{what} needs {top}: {how}") from None


# the strategies that an extra's packages provide, by name (or name prefix): they register
# only when their packages import, so an unknown name is looked up here to say what to
# install rather than only that the name is unknown
STRATEGY_EXTRAS = {"cma:es": ("compare", ("cma",)),
                   "nevergrad:": ("compare", ("nevergrad",)),
                   "optuna:tpe": ("compare", ("optuna",)),
                   "optuna:cmaes": ("compare", ("optuna", "cmaes"))}


def strategy_extra(name):
    """What to install for strategy ``name`` when an extra provides it and one of its
    packages is missing (a sentence), else None."""
    import importlib.util

    for key, (extra, packages) in STRATEGY_EXTRAS.items():
        if name == key or (key.endswith(":") and str(name).startswith(key)):
            missing = [p for p in packages if importlib.util.find_spec(p) is None]
            if missing:
                return (f"{name!r} comes with the {extra} extra ({', '.join(missing)} is not "
                        f"installed): pip install 'dfrank[{extra}]'")
    return None
