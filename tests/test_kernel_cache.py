"""Numba kernels must be cacheable: a cold compile is what users notice first."""

import subprocess
import sys
import textwrap


def test_kernels_cache_without_warnings():
    code = textwrap.dedent("""
        import warnings
        import numpy as np
        from numba.core.errors import NumbaWarning
        warnings.simplefilter("error", NumbaWarning)
        import dfrank
        d = dfrank.RankingData.from_arrays(np.zeros((4, 1)), [0, 1, 2, 0], [1, 1, 2, 2])
        s = np.array([0.1, 0.2, 0.3, 0.3])
        for ties in ["pessimistic", "expected"]:
            dfrank.evaluate(s, d, ["ndcg@3", "map", "p@1", "mrr", "rprec", "kendall_tau"],
                            ties=ties)
        dfrank.driver.api.bind_metric(d, "err@2").per_query_batch(np.vstack([s, s]))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
