"""Optional integrations, imported only where they are used, with the extra named when
they are missing (as pandas' ``import_optional_dependency``)."""

import importlib

__all__ = ["need"]

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
        raise ImportError(f"{what} needs {top}: {how}") from None
