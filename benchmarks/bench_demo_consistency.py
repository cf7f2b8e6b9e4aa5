"""One quantity, one number: the demo's headline figures in each of its outputs.

    PYTHONPATH=src python benchmarks/bench_demo_consistency.py [--out DIR]

Runs ``glotbench demo --out DIR`` (a second run with ``--json --no-pages``
reuses the stored runs and the cached analysis), then reads the same figures
back from the four outputs: the terminal's text (its tables: mean ± SE and the
rank distribution; the interval is not printed there), its ``--json``, the
leaderboard's data (``leaderboard/leaderboard.json``, embedded in the page) and
the HTML report. Prints, per model, the mean ± SE, the 95 % interval and the
share of draws at rank 1 in each output, and the largest difference between
each output and the JSON at the precision the outputs print (0 when they agree).
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


def _terminal_mean_se(text: str, model: str) -> tuple[float, float]:
    """Mean and SE of ``model`` as the demo's first table prints them (``0.780 ± 0.044``)."""
    found = re.search(rf"│ {re.escape(model)} +│ ([-0-9.]+) ± ([0-9.]+)", text)
    if found is None:
        raise SystemExit(f"{model}: no mean ± SE in the terminal's text")
    return float(found.group(1)), float(found.group(2))


def _terminal_rank_1(text: str) -> dict[str, float]:
    """Rank-1 share per model from the starter's rank distribution table in the terminal
    (``<0.1`` read as 0.0, its rounding at one decimal)."""
    section = text[text.index("Rank distribution, % of draws") :]
    out: dict[str, float] = {}
    for line in section.splitlines()[1:]:
        if line.startswith("└"):
            break
        cells = [c.strip() for c in line.strip("│").split("│")]
        if line.startswith("│") and len(cells) > 1:
            out[cells[0]] = 0.0 if cells[1].startswith("<") else float(cells[1])
    return out


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
    terminal_ranks = _terminal_rank_1(text)
    header = f"{'model':<12} {'output':<12} {'mean ± SE':<14} {'95% interval':<16} rank 1 %"
    print(header)
    worst = 0.0
    for row in starter["summary"]:
        model = row["model"]
        lb = overall[model]
        reference = (row["mean_accuracy"], row["se"], row["ci_low"], row["ci_high"])
        shown: dict[str, tuple[float, ...]] = {
            # the terminal's table has mean ± SE (3 decimals), not the interval
            "terminal": _terminal_mean_se(text, model),
            "json": reference,
            "leaderboard": (lb["score"], lb["se"], *lb["ci"]),
            "report": tuple(float(v) for v in aggregates[model][1:5]),
        }
        rank_1 = {
            "terminal": terminal_ranks[model],
            "json": row["rank_1_share"],
            "leaderboard": dict(lb["rank"]["dist"]).get(1, 0.0),
            "report": float(ranks[model][1]),
        }
        for output, values in shown.items():
            interval = f"[{values[2]:.3f}, {values[3]:.3f}]" if len(values) == 4 else "(not shown)"
            print(
                f"{model:<12} {output:<12} {values[0]:.3f} ± {values[1]:.3f}  "
                f"{interval:<16}  {rank_1[output]:5.1f}"
            )
            # each output against the JSON, at the precision the terminal and report print
            worst = max(
                worst,
                *(abs(round(a, 3) - round(b, 3)) for a, b in zip(values, reference)),  # noqa: B905
                abs(round(rank_1[output], 1) - round(rank_1["json"], 1)) / 100,
            )
    print(f"largest difference between outputs at their printed precision: {worst:.3g}")


if __name__ == "__main__":
    main()
