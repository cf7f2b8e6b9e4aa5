"""Leaderboard page speed in Debian's headless Chromium: 200 models × 50 languages.

Builds the board with glotbench, opens it from file:// with Playwright (using
/usr/bin/chromium; never 'playwright install') and prints the time until the
page is ready and the time to sort a 200-row × 50-column view. Target: both
under one second.

Run: PYTHONPATH=src python benchmarks/bench_leaderboard_browser.py

``--page FOLDER/index.html`` measures a page built elsewhere instead (e.g. by
``glotbench leaderboard`` on the store of ``generate_leaderboard_store.py``): the
time until ready, a sort by score and by model name, a search (typing a model's
name), switching to the second view and picking a pair in the pairwise view, each
the time of the synchronous handler (the DOM rebuilt), best and median of
``--repeats`` fresh page loads.
"""

from __future__ import annotations

import argparse
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


#: interactions timed on a built page: (name, JavaScript run in the page, returning ms)
INTERACTIONS = {
    "sort by score": """() => { const t0 = performance.now();
        document.querySelector('#board th[data-key="score"]').click();
        return performance.now() - t0; }""",
    "sort by model": """() => { const t0 = performance.now();
        document.querySelector('#board th[data-key="model"]').click();
        return performance.now() - t0; }""",
    "search": """() => { const box = document.getElementById('search');
        const name = document.querySelector('#board tbody tr:nth-child(7)').dataset.model;
        const t0 = performance.now();
        box.value = name; box.dispatchEvent(new Event('input'));
        const ms = performance.now() - t0;
        box.value = ''; box.dispatchEvent(new Event('input'));
        return ms; }""",
    "switch view": """() => { const select = document.getElementById('view');
        const t0 = performance.now();
        select.selectedIndex = 1; select.dispatchEvent(new Event('change'));
        return performance.now() - t0; }""",
    "pick a pair": """() => { const b = document.getElementById('model-b');
        const t0 = performance.now();
        b.selectedIndex = b.options.length - 1; b.dispatchEvent(new Event('change'));
        return performance.now() - t0; }""",
}


def measure_page(index: Path, repeats: int) -> None:
    """Ready time and the INTERACTIONS' times on a built page."""
    from playwright.sync_api import sync_playwright

    rows: dict[str, list[float]] = {"ready": [], **{k: [] for k in INTERACTIONS}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for _ in range(repeats):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(index.as_uri(), timeout=120_000)
            page.wait_for_selector("body[data-ready=true]", timeout=120_000)
            load = time.perf_counter() - start
            rows["ready"].append(float(page.get_attribute("body", "data-ready-ms")))
            for name, script in INTERACTIONS.items():
                rows[name].append(float(page.evaluate(script)))
            print(f"  load (navigation to ready, wall): {load:.2f} s", flush=True)
            page.close()
        browser.close()
    size = index.stat().st_size
    print(f"{index}: {size / 2**20:.1f} MiB")
    for name, values in rows.items():
        print(f"  {name}: {min(values):.0f} ms (median {np.median(values):.0f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--page", type=Path, help="a built index.html to measure instead")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.page is not None:
        measure_page(args.page, args.repeats)
    else:
        main(repeats=args.repeats)
