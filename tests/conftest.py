"""Test-session setup: every kernel compiled once, on all cores, before the first test;
hypothesis profiles; a shared fixture. The markers (``slow``, ``jit``) are declared in
pyproject.toml.

Compiling numba's kernels is most of a cold test run. :func:`dfrank._jit.warm` compiles them in
one process per core (each kernel once; they are cached on disk), so the tests and the
command-line tests' subprocesses all load them from the cache.

Hypothesis: the ``ci`` profile (chosen when the environment variable CI is set, as
``.ci/run`` does) derandomizes the examples, so a CI run is reproducible; locally each run
draws new examples.
"""

import os

import pytest
from hypothesis import settings


settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                     "ci" if os.environ.get("CI") else "dev"))


def pytest_sessionstart(session):
    if os.environ.get("DFRANK_TEST_NO_WARMUP"):
        return
    from dfrank._jit import warm

    warm("all")


@pytest.fixture(scope="module")
def toy_suite(tmp_path_factory):
    """(root, references file) of a generated MQ2008-like suite (:mod:`tests.suites`)."""
    from tests.suites import toy_suite as make

    return make(tmp_path_factory.mktemp("data"))
