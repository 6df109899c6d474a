"""Optional integrations, imported only where they are used, with the extra named when
they are missing (as pandas' ``import_optional_dependency``)."""

import importlib

__all__ = ["need"]

EXTRAS = {"pandas": "pandas", "ranx": "ranx", "pyterrier": "pyterrier",
          "ir_datasets": "ir_datasets", "sklearn": "sklearn", "matplotlib": "plot"}


def need(module, what):
    """Import ``module`` for ``what``, or raise ImportError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module, module)
        raise ImportError(f"{what} needs {module}: pip install 'dfrank[{extra}]' (or "
                          f"pip install {module})") from None
