"""`glotbench show` and analyses read a store while `glotbench run` writes it (issue 14.3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from glotbench import api
from glotbench.store import Store

from .conftest import ROOT, store_digests, write_suite


@pytest.mark.slow
def test_store_is_readable_between_the_jobs_of_a_run(tmp_path: Path):
    suite = write_suite(tmp_path, iterations=3)
    store = tmp_path / "r.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from glotbench.cli import main; main()",
         "run", str(suite), "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    reads = []
    printed: list[str] = []
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            printed.append(line)
            if not line.startswith("stored "):
                continue
            # while the run goes on: a summary and an analysis input, read-only
            summary = api.show_store(store)
            with Store.open(store, read_only=True) as handle:
                runs = handle.runs.frame()
                for run_id, n in zip(runs["run_id"], runs["n_examples"], strict=True):
                    ids, stats = handle.stats.of_run(run_id)
                    assert len(ids) == stats.shape[0] == n  # complete runs only
            reads.append((summary.counts["runs"], proc.poll() is None))
        assert proc.wait(timeout=300) == 0, "the run failed:\n" + "".join(printed[-40:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(reads) == 15  # 5 (model, dataset) pairs × 3 iterations
    assert any(alive for _, alive in reads), "no read happened while the run was writing"
    counts = [n for n, _ in reads]
    assert counts == sorted(counts) and counts[-1] <= 30
    # the interleaved readers changed nothing: same statistics as an undisturbed run
    api.run_benchmark(suite, store=tmp_path / "alone.duckdb")
    assert store_digests(store) == store_digests(tmp_path / "alone.duckdb")
