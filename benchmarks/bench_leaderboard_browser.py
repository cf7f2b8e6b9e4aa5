"""Leaderboard page speed in Debian's headless Chromium: 200 models × 50 languages.

Builds the board with glotbench, opens it from file:// with Playwright (using
/usr/bin/chromium; never 'playwright install') and prints the time until the
page is ready and the time to sort a 200-row × 50-column view. Target: both
under one second.

Run: PYTHONPATH=src python benchmarks/bench_leaderboard_browser.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import replicates_from_frame
from glotbench.report.leaderboard import build_leaderboard, write_leaderboard

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main(n_models: int = 200, n_languages: int = 50, repeats: int = 5) -> None:
    from playwright.sync_api import sync_playwright

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        [
            (f"model-{i:03d}", task, f"l{j:02d}", float(rng.normal(50 + i * 0.05, 5)))
            for i in range(n_models)
            for task in ("ner", "nli")
            for j in range(n_languages)
        ],
        columns=["model", "task", "language", "score"],
    )
    start = time.perf_counter()
    data = build_leaderboard(replicates_from_frame(frame), n_draws=200)
    folder = Path(tempfile.mkdtemp())
    index = write_leaderboard(data, folder / "board")
    print(
        f"build + write: {time.perf_counter() - start:.2f} s ({index.stat().st_size / 1e6:.1f} MB)"
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        ready, sort = [], []
        for _ in range(repeats):
            page = browser.new_page()
            page.goto(index.as_uri())
            page.wait_for_selector("body[data-ready=true]", timeout=30_000)
            ready.append(float(page.get_attribute("body", "data-ready-ms")))
            page.select_option("#view", "task:nli")
            sort.append(
                page.evaluate(
                    """() => { const t0 = performance.now();
                       document.querySelector('#board th[data-key="sub:l07"]').click();
                       return performance.now() - t0; }"""
                )
            )
            page.close()
        browser.close()
    print(
        f"{n_models} models × {n_languages} languages: ready {min(ready):.0f} ms "
        f"(median {np.median(ready):.0f}), sort {min(sort):.0f} ms (median {np.median(sort):.0f})"
    )


if __name__ == "__main__":
    main()
