"""CPU time of the store's content digest (the analysis cache's key) on a large store.

The digest (``glotbench.store.analysis_cache.content_digest``) scans every table
but ``example_stats`` once per question the command line answers. This script
builds a store of ``--runs`` runs of ``--examples`` examples each (``example_stats``
rows: runs × examples, 3 million by default), as many imported score rows and a
million ``unit_stats`` rows (lists of four statistics), all in DuckDB SQL, then
times the digest of this tree against the digest of another glotbench tree
(``--before``, default the session's starting checkout ``/work/wt/before4/src``):
the minimum CPU time (user + system of this process) over ``--repeats`` runs on
one open read-only connection, and the ratio.

    python benchmarks/bench_store_digest.py [--runs 15000] [--examples 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
from _common import load_average, machine_info, print_header, print_table, timed_cpu

from glotbench.store import Store
from glotbench.store.analysis_cache import content_digest
from glotbench.store.attributes import ATTRIBUTES_DDL


def build(path: Path, runs: int, examples: int, units: int) -> dict[str, int]:
    """A store with ``runs`` runs × ``examples`` example rows, as many score rows and
    ``units`` unit rows; some values are -0.0 (a score, a list element)."""
    Store.open(path).close()  # the schema, as glotbench makes it
    con = duckdb.connect(str(path))
    con.execute(ATTRIBUTES_DDL)
    con.execute(
        "INSERT INTO runs SELECT 'r' || i, 'model' || (i % 100), 'd' || (i // 100), 't', 'de', "
        "0, 'c', 'accuracy', '{}', ['correct', 'count'], ?, '{}', i / 10.0, 100.0, 'bench', "
        "NULL, 'sha' || i, TIMESTAMP '2026-01-01' FROM range(?) r(i)",
        [examples, runs],
    )
    con.execute(
        "INSERT INTO example_stats SELECT 'r' || (i // ?), (i % ?)::INTEGER, 'e' || (i % ?), "
        "[(i % 2)::DOUBLE, 1.0], NULL FROM range(?) r(i)",
        [examples, examples, examples, runs * examples],
    )
    con.execute(
        "INSERT INTO scores SELECT 'model' || (i % 500), 't' || (i % 37), 'de', "
        "'d' || (i % 37), 'accuracy', CASE WHEN i % 1000 = 0 THEN -0.0 ELSE (i % 997) / 997.0 "
        "END, i % 5, NULL, CASE WHEN i % 3 = 0 THEN NULL ELSE 0.01 END, 100, '{}', 'imp' "
        "FROM range(?) r(i)",
        [runs * examples],
    )
    con.execute(
        "INSERT INTO unit_stats SELECT 'r' || (i % ?), 'e' || i, 'u' || (i % 10), "
        "[i / 7.0, -0.0, 1.0, i / 3.0] FROM range(?) r(i)",
        [runs, units],
    )
    con.execute("CHECKPOINT")
    counts = {
        table: con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        for table in ("runs", "example_stats", "scores", "unit_stats")
    }
    con.close()
    return counts


def load_before(source: Path) -> ModuleType:
    """The ``analysis_cache`` module of another glotbench tree, under another name."""
    spec = importlib.util.spec_from_file_location(
        "before_analysis_cache", source / "glotbench" / "store" / "analysis_cache.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15_000)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", type=Path, default=Path("/work/wt/before4/src"))
    args = parser.parse_args()
    print_header("store content digest", machine_info(["duckdb"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.duckdb"
        start = time.perf_counter()
        counts = build(path, args.runs, args.examples, args.units)
        print(f"built {counts} in {time.perf_counter() - start:.1f} s")
        con = duckdb.connect(str(path), read_only=True)
        rows: list[dict[str, Any]] = []
        now = timed_cpu(lambda: content_digest(con), args.repeats)
        rows.append({"digest of": "this tree", "CPU s": now.cpu_seconds, "wall s": now.seconds})
        if (args.before / "glotbench").is_dir():
            before = load_before(args.before).content_digest
            then = timed_cpu(lambda: before(con), args.repeats)
            rows.append(
                {"digest of": str(args.before), "CPU s": then.cpu_seconds, "wall s": then.seconds}
            )
            rows.append(
                {"digest of": "ratio (this / before)", "CPU s": now.cpu_seconds / then.cpu_seconds}
            )
        con.close()
    print_table(rows, ["digest of", "CPU s", "wall s"])
    print(f"load average: {load_average()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
