"""Heavy modules load only when an analysis uses them (docs/performance.md, the command line).

Every command that computes imports :mod:`glotbench.api`, which imports every layer; scipy
alone (its special functions pull in ``numpy.f2py``; ``scipy.stats`` also optimize, sparse and
linalg) cost about 0.7 s of CPU there. The modules below are imported inside the functions
that use them, so a command pays for them only when it runs such a function.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

#: not imported by ``import glotbench.api``
LAZY = (
    "scipy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "scipy.sparse",
    "scipy.linalg",
    "sklearn",
    "matplotlib",
    "statsmodels",
    "torch",
    "transformers",
    "ray",
)


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    code = f"import sys\n{statement}\nprint(','.join(m for m in {modules!r} if m in sys.modules))\n"
    child = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    return [m for m in child.stdout.strip().split(",") if m]


@pytest.mark.slow
def test_importing_the_api_loads_no_scipy_plotting_or_neural_stack() -> None:
    assert _loaded_after("import glotbench.api", LAZY) == []


@pytest.mark.slow
def test_the_functions_that_need_scipy_still_load_it_when_called() -> None:
    statement = (
        "from glotbench.resample.intervals import bca_interval\n"
        "import numpy as np\n"
        "rng = np.random.default_rng(0)\n"
        "bca_interval(rng.random((200, 1)), np.array([0.5]), rng.random((50, 1)), 0.95)"
    )
    assert _loaded_after(statement, ("scipy.special",)) == ["scipy.special"]
