"""One BLAS thread around small products, every BLAS library of the process included.

Run in a fresh interpreter: whether scipy's own OpenBLAS is loaded yet depends on what
the test process imported before.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from glotbench.resample.blas import one_blas_thread

def threads():
    return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

out = {"default_before": threads()}
with one_blas_thread():  # numpy's BLAS only: scipy.linalg not imported yet
    out["numpy_only"] = threads()
import scipy.linalg.blas  # its own OpenBLAS, loaded after the first listing
out["default_with_scipy"] = threads()
with one_blas_thread():
    out["inside"] = threads()
out["after"] = threads()
print(json.dumps(out))
"""


def test_one_blas_thread_limits_every_library_loaded_so_far_and_restores() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    seen = json.loads(done.stdout)
    assert seen["numpy_only"] == [1] * len(seen["default_before"])
    # scipy's OpenBLAS, loaded after the controller listed numpy's, is limited as well
    assert len(seen["inside"]) == len(seen["default_with_scipy"]) >= 1
    assert seen["inside"] == [1] * len(seen["inside"])
    assert seen["after"] == seen["default_with_scipy"]  # the previous limits are restored
