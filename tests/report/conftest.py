"""Shared fixtures of the report tests: stores with hostile names, a headless Chromium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from glotbench.store import RunRecord, Store

XSS = "<img src=x onerror=alert(1)>"
SCRIPT_NAME = "</script><script>alert(2)</script>"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def write_store(
    path: Path,
    models: dict[str, float],
    languages: tuple[str, ...] = ("da", "sv", "nb", "de"),
    tasks: tuple[str, ...] = ("xnli", "sentiment"),
    seeds: tuple[int, ...] = (0, 1),
    n: int = 60,
    metadata: dict[str, dict[str, object]] | None = None,
) -> Path:
    """Accuracy runs of every model (true accuracy = the given value) on every cell."""
    rng = np.random.default_rng(3)
    with Store.open(path) as store:
        for model, accuracy in models.items():
            for task in tasks:
                for language in languages:
                    for seed in seeds:
                        values = (rng.random(n) < accuracy).astype(float)
                        record = RunRecord(
                            model=model,
                            task=task,
                            language=language,
                            seed=seed,
                            metric="accuracy",
                            stat_names=("value", "count"),
                            model_metadata=(metadata or {}).get(model, {}),
                        )
                        ids = [f"{task}-{language}-{i}" for i in range(n)]
                        store.runs.write(record, ids, np.column_stack([values, np.ones(n)]))
    return path


@pytest.fixture(scope="session")
def artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: $GLOTBENCH_TEST_ARTIFACTS or a temporary folder."""
    target = os.environ.get("GLOTBENCH_TEST_ARTIFACTS")
    folder = Path(target) if target else tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Debian Chromium driven by Playwright (skipped when either is missing)."""
    if not CHROMIUM.exists():
        pytest.skip(
            "browser tests need Debian's Chromium at /usr/bin/chromium "
            "(apt-get install -y chromium)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
    )
    with sync_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()
