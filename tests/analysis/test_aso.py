"""ASO against deep-significance (deepsig 1.2.8), limiting cases, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from glotbench import aso, multi_aso
from glotbench.analysis.aso import batched_multi_aso, quantile_grid, segments, violation_ratio
from glotbench.cli import app
from glotbench.errors import InputError

deepsig = pytest.importorskip("deepsig")
from deepsig.aso import compute_violation_ratio  # noqa: E402


def _ratio(a: np.ndarray, b: np.ndarray, dt: float = 0.005) -> float:
    grid = quantile_grid(dt)
    segs = segments(a.size, b.size, grid)
    sa, sb = np.sort(a), np.sort(b)
    pa = np.clip(np.ceil(a.size * grid).astype(int) - 1, 0, a.size - 1)[segs.first]
    pb = np.clip(np.ceil(b.size * grid).astype(int) - 1, 0, b.size - 1)[segs.first]
    return float(violation_ratio(sa[pa], sb[pb], segs, dt))


@pytest.mark.parametrize(
    ("n", "m", "shift", "dt"),
    [(5, 5, 0.3, 0.005), (20, 33, 0.1, 0.005), (200, 150, 0.0, 0.01), (7, 3, -0.5, 0.005)],
)
def test_violation_ratio_equals_deepsig(n: int, m: int, shift: float, dt: float) -> None:
    rng = np.random.default_rng(n * m)
    a = np.round(rng.normal(shift, 1, n), 1)  # rounding makes ties
    b = np.round(rng.normal(0, 1, m), 1)
    assert _ratio(a, b, dt) == pytest.approx(compute_violation_ratio(a, b, dt=dt), abs=1e-12)


def test_identical_samples_give_half() -> None:
    a = np.array([0.1, 0.2, 0.3])
    assert aso(a, a, seed=0).violation_ratio == 0.5


@pytest.mark.slow
@pytest.mark.parametrize("shift", [0.4, 0.0, -0.2])
def test_eps_min_agrees_with_deepsig_within_monte_carlo_error(shift: float) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(shift, 1, 12), rng.normal(0, 1, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = deepsig.aso(a, b, num_bootstrap_iterations=300, seed=3, show_progress=False)
    ours = np.array([aso(a, b, num_bootstrap_iterations=300, seed=s).eps_min for s in range(8)])
    # the bootstrap SD of eps_min at B = 300 is about 0.01-0.02 here
    assert abs(ours.mean() - theirs) < 0.05
    assert ours.std() < 0.04


@pytest.mark.slow
def test_multi_aso_agrees_with_deepsig() -> None:
    rng = np.random.default_rng(11)
    scores = {f"m{i}": rng.normal(0.3 * i, 1, 10) for i in range(3)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = deepsig.multi_aso(
            scores, num_bootstrap_iterations=200, seed=0, show_progress=False
        )
    ours = np.mean(
        [multi_aso(scores, num_bootstrap_iterations=200, seed=s).eps_min for s in range(6)], axis=0
    )
    np.testing.assert_allclose(ours, theirs, atol=0.06)
    assert np.all(np.diag(ours) == 1.0)


def test_limiting_cases() -> None:
    rng = np.random.default_rng(0)
    # identical distributions: the violation ratio is about 0.5 on average (it is very
    # volatile when W2 is small, so look at many pairs) and A is rarely declared better
    same = [
        aso(rng.normal(0, 1, 100), rng.normal(0, 1, 100), num_bootstrap_iterations=200, seed=i)
        for i in range(60)
    ]
    assert np.mean([r.violation_ratio for r in same]) == pytest.approx(0.5, abs=0.1)
    assert np.mean([r.eps_min for r in same]) > 0.5
    assert np.mean([r.a_better for r in same]) <= 0.25  # ASO is liberal at small n
    high, low = rng.normal(3, 1, 50), rng.normal(0, 1, 50)
    assert aso(high, low, seed=1).eps_min < 0.05
    assert aso(low, high, seed=1).eps_min > 0.95
    assert aso(high, low, seed=1).a_better


def test_seeded_and_reproducible() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.1, 1, 30), rng.normal(0, 1, 25)
    assert aso(a, b, seed=5).eps_min == aso(a, b, seed=5).eps_min
    fresh = aso(a, b)  # a random seed, recorded
    assert aso(a, b, seed=fresh.seed).eps_min == fresh.eps_min


def test_multi_aso_pair_equals_aso_and_batched_equals_multi() -> None:
    rng = np.random.default_rng(3)
    samples = rng.normal(0, 1, (3, 6)) + np.array([[0.0], [0.4], [0.2]])
    multi = multi_aso(samples, num_bootstrap_iterations=300, seed=9)
    single = aso(samples[0], samples[1], num_bootstrap_iterations=300, seed=9, num_comparisons=3)
    assert multi.eps_min[0, 1] == pytest.approx(single.eps_min, abs=1e-12)
    batched = batched_multi_aso(samples[None], num_bootstrap_iterations=300, seed=9)[0]
    np.testing.assert_allclose(batched, multi.eps_min, atol=1e-9)
    assert multi.to_frame().shape == (3, 3)
    assert len(multi.pairs()) == 6


def test_bad_input() -> None:
    with pytest.raises(InputError):
        aso([], [1.0])
    with pytest.raises(InputError):
        aso([1.0, float("nan")], [1.0])
    with pytest.raises(InputError):
        multi_aso([[1.0, 2.0]])


@pytest.mark.slow
def test_cli_aso_json(tmp_path: Path) -> None:
    a, b = tmp_path / "A.txt", tmp_path / "B.txt"
    a.write_text("0.81\n0.83\n0.82\n0.84\n0.80\n")
    b.write_text("0.78\n0.80\n0.79\n0.77\n0.81\n\n")  # trailing blank line is fine
    result = CliRunner().invoke(
        app, ["significance", "aso", str(a), str(b), "--json", "--seed", "0"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["eps_min"] == pytest.approx(
        aso([0.81, 0.83, 0.82, 0.84, 0.80], [0.78, 0.80, 0.79, 0.77, 0.81], seed=0).eps_min
    )
    # without --seed the seed is 0: repeated runs give the same ε_min
    again = [
        json.loads(
            CliRunner().invoke(app, ["significance", "aso", str(a), str(b), "--json"]).stdout
        )["eps_min"]
        for _ in range(2)
    ]
    assert again == [payload["eps_min"]] * 2
    c = tmp_path / "C.txt"
    c.write_text("0.7\n0.9\n0.8\n")
    result = CliRunner().invoke(app, ["significance", "aso", str(a), str(b), str(c), "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["eps_min"]) == 3


@pytest.mark.slow
def test_cli_aso_bad_files(tmp_path: Path) -> None:
    a, bad, empty = tmp_path / "A.txt", tmp_path / "bad.txt", tmp_path / "empty.txt"
    a.write_text("0.1\n0.2\n")
    bad.write_text("0.1\nabc\n")
    empty.write_text("")
    for other, needle in ((bad, "bad.txt, line 2"), (empty, "empty.txt")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "glotbench",
                "significance",
                "aso",
                str(a),
                str(other),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        assert needle in done.stderr
        assert "Traceback" not in done.stderr
