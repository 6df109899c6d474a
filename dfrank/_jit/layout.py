"""Where a package was imported from: an install (a subpackage that a checkout keeps beside
the package's folder inside it, or mapped there by an editable install of this very
checkout), or a source folder that no install maps (:func:`source_without_install`)."""

import importlib.util
import os

__all__ = ["source_without_install"]


def source_without_install(package, package_file, mapped):
    """Why the package ``package`` of ``package_file`` (its ``__init__.py``) cannot be
    imported, or None: a source folder (the clone's root as the working directory, a
    checkout on PYTHONPATH) holds its subpackage ``mapped`` beside the package's folder,
    which only an install maps inside it; without an editable install of this very
    checkout, the import would fail half-way or take another checkout's."""
    here = os.path.dirname(os.path.abspath(package_file))
    if os.path.isdir(os.path.join(here, mapped)):
        return None
    spec = importlib.util.find_spec(f"{package}.{mapped}")
    found = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
    if found == os.path.join(os.path.dirname(here), mapped):
        return None
    return (f"{here} is dfrank's source, not an install (a checkout on the path, or the "
            "clone's root as the working directory): run Python in another folder to use "
            "the installed dfrank, or install this checkout editable (pip install -e .)")
