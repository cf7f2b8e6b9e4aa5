"""One quantity, one number: the demo's headline figures in each of its outputs.

    PYTHONPATH=src python benchmarks/bench_demo_consistency.py [--out DIR]

Runs ``glotbench demo --out DIR`` (a second run with ``--json --no-pages``
reuses the stored runs and the cached analysis), then reads the same figures
back from the four outputs: the terminal's text, its ``--json``, the
leaderboard's data (``leaderboard/leaderboard.json``, embedded in the page) and
the HTML report. Prints, per model, the mean ± SE, the 95 % interval and the
share of draws at rank 1 in each output, and the largest difference between
any two outputs at the precision each prints (0 when they agree).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import load_average


def _demo(out: Path, *extra: str) -> str:
    command = [sys.executable, "-m", "glotbench", "demo", "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _report_rows(page: str, heading: str, column: str | None = None) -> dict[str, list[str]]:
    """First cell → cell texts of the rows in the report section ``heading``
    (only of the table whose header has ``column``, when given)."""
    start = page.index(f"<h2>{heading}</h2>")
    end = page.find("<h2>", start + 1)
    section = page[start : end if end > 0 else len(page)]
    rows: dict[str, list[str]] = {}
    header: list[str] = []
    for row in re.findall(r"<tr>(.*?)</tr>", section, flags=re.S):
        cells = [html.unescape(c) for c in re.findall(r"<t[dh](?: [^>]*)?>(.*?)</t[dh]>", row)]
        if "<th" in row:
            header = cells
        elif cells and (column is None or column in header):
            rows.setdefault(cells[0], cells)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="demo folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="glotbench-consistency-")) / "demo"
    print(f"load average before: {load_average()}")
    text = _demo(out)
    starter = json.loads(_demo(out, "--json", "--no-pages"))["starter"]
    board = json.loads((out / "leaderboard" / "leaderboard.json").read_text(encoding="utf-8"))
    overall = {row["model"]: row for row in board["views"]["overall"]["rows"]}
    page = (out / "report.html").read_text(encoding="utf-8")
    aggregates = _report_rows(page, "Aggregates")
    # the distribution table: the model, then one column per rank
    ranks = _report_rows(page, "Rank distributions", column="rank_1")
    flat = " ".join(text.split())
    header = f"{'model':<12} {'output':<12} {'mean ± SE':<14} {'95% interval':<16} rank 1 %"
    print(header)
    worst = 0.0
    for row in starter["summary"]:
        model = row["model"]
        lb = overall[model]
        shown = {
            "terminal": (row["mean_accuracy"], row["se"], row["ci_low"], row["ci_high"]),
            "json": (row["mean_accuracy"], row["se"], row["ci_low"], row["ci_high"]),
            "leaderboard": (lb["score"], lb["se"], *lb["ci"]),
            "report": tuple(float(v) for v in aggregates[model][1:5]),
        }
        rank_1 = {
            "terminal": row["rank_1_share"],
            "json": row["rank_1_share"],
            "leaderboard": dict(lb["rank"]["dist"]).get(1, 0.0),
            "report": float(ranks[model][1]),
        }
        if f"{row['mean_accuracy']:.3f} ± {row['se']:.3f}" not in flat:
            raise SystemExit(f"{model}: the terminal's text does not show the JSON's mean ± SE")
        for output, (mean, se, low, high) in shown.items():
            print(
                f"{model:<12} {output:<12} {mean:.3f} ± {se:.3f}  "
                f"[{low:.3f}, {high:.3f}]  {rank_1[output]:7.1f}"
            )
            reference = shown["json"]
            # each output against the JSON, at the 3 decimals the report prints
            worst = max(
                worst,
                *(
                    abs(round(a, 3) - round(b, 3))
                    for a, b in zip((mean, se, low, high), reference, strict=True)
                ),
                abs(round(rank_1[output], 1) - round(rank_1["json"], 1)) / 100,
            )
    print(f"largest difference between outputs at their printed precision: {worst:.3g}")


if __name__ == "__main__":
    main()
