"""Worker processes run BLAS on one thread, in libraries they load later too.

The pool's initializer limited the libraries loaded when the worker started
(numpy's OpenBLAS); scipy's own OpenBLAS loads with the first job that uses
scikit-learn and kept a thread per core, spinning against the other workers
(the demo's char-logreg fits: 3.3 s of CPU each instead of 1.2 s).
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from glotbench.runner.backends import _limit_blas

_limit_blas(1)  # what the pool runs first in a worker
import scipy.linalg.blas  # loaded by a job, after the initializer
print(json.dumps([
    (i["filepath"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"
]))
"""


def test_a_library_loaded_after_the_worker_started_runs_one_thread() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    libraries = json.loads(done.stdout)
    assert libraries, "no BLAS library found"
    assert all(threads == 1 for _, threads in libraries), libraries
