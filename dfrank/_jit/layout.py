"""Where this dfrank was imported from: an install (its ``strategies`` inside the package,
or mapped there by an editable install of this very checkout), or a source folder that
no install maps (:func:`source_without_install`)."""

import importlib.util
import os

__all__ = ["source_without_install"]


def source_without_install(package_file):
    """Why the dfrank package of ``package_file`` (its ``__init__.py``) cannot be imported,
    or None: a source folder (the clone's root as the working directory, a checkout on
    PYTHONPATH) holds ``strategies/`` beside ``dfrank/``, which only an install maps to
    ``dfrank.strategies``; without an editable install of this very checkout, the import
    would fail half-way or take another checkout's."""
    here = os.path.dirname(os.path.abspath(package_file))
    if os.path.isdir(os.path.join(here, "strategies")):
        return None
    spec = importlib.util.find_spec("dfrank.strategies")
    found = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
    if found == os.path.join(os.path.dirname(here), "strategies"):
        return None
    return (f"{here} is dfrank's source, not an install (a checkout on the path, or the "
            "clone's root as the working directory): run Python in another folder to use "
            "the installed dfrank, or install this checkout editable (pip install -e .)")
