"""The leaderboard's analyses over Ray: 1 vs 2 nodes, the driver as the store's only reader/writer.

    PYTHONPATH=src python benchmarks/bench_ray_leaderboard.py --store lb.duckdb
    # lb.duckdb: benchmarks/generate_leaderboard_store.py + glotbench import examples

The driver reads the store once (``leaderboard_source``) and puts the replicated
scores into Ray's object store; the workers never open the store. The headline
analysis (:func:`glotbench.analysis.headline.analyze`: the overall view and each
task's view, independent of each other) runs as one Ray task per view through its
``runner`` hook; the driver then builds the page (the remaining views) and is the
only process that writes. A Ray cluster of ``--nodes`` raylets with
``--cpus-per-node`` CPUs each is started on this machine with
``ray.cluster_utils.Cluster`` (each raylet its own worker processes, as separate
machines would have, but the same cores and memory).

Reported, for the single process and for each cluster size: the analyses' wall
time, the page's wall time, and whether the page's data (``leaderboard.json``)
is byte for byte the single-process page's and every view's arrays equal (asserted).
Task views come back without their draws (R × M; only the overall view's feed the
pairwise view), which keeps the object store small.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, machine_info, print_header, print_table

HERE = Path(__file__).resolve().parent


def _view(source: Any, settings: Any, request: dict[str, Any], keep_draws: bool) -> Any:
    """Runs in a Ray worker: one view of the headline analysis."""
    from glotbench.analysis.headline import analyze_view

    view = analyze_view(source, settings, **request)
    if not keep_draws:  # only the overall view's draws are used by the page
        view = dataclasses.replace(view, draws=np.empty((0, len(view.models))))
    return view


def ray_runner(ray: Any, remote: Any, source_ref: Any) -> Any:
    """A :data:`~glotbench.analysis.headline.ViewRunner`: one Ray task per view."""

    def run(source: Any, settings: Any, requests: list[dict[str, Any]]) -> list[Any]:
        del source  # the workers read the copy in the object store
        refs = [remote.remote(source_ref, settings, r, i == 0) for i, r in enumerate(requests)]
        return list(ray.get(refs))

    return run


def build(source: Any, settings: Any, out: Path, runner: Any = None) -> dict[str, Any]:
    """Analysis (in this process or through ``runner``), then the page; timed apart."""
    from glotbench.analysis.headline import analyze
    from glotbench.report.leaderboard import build_leaderboard, write_leaderboard

    t0 = time.perf_counter()
    kwargs = {} if runner is None else {"runner": runner}
    analysis = analyze(source.replicated, settings, **kwargs)
    t1 = time.perf_counter()
    data = build_leaderboard(
        source.replicated,
        title=source.title,
        metadata=source.metadata,
        notes=source.notes,
        settings=settings,
        analysis=analysis,
    )
    index = write_leaderboard(data, out)
    t2 = time.perf_counter()
    return {
        "analyses s": round(t1 - t0, 2),
        "page s": round(t2 - t1, 2),
        "total s": round(t2 - t0, 2),
        "page MiB": round(index.stat().st_size / 2**20, 1),
        "analysis": analysis,
        "json": (out / "leaderboard.json").read_bytes(),
    }


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k.endswith((" s", "MiB"))}


def same_views(a: Any, b: Any) -> bool:
    """Every number of every view equal (draws where both kept them)."""
    pairs = [(a.overall, b.overall), *((a.tasks[t], b.tasks[t]) for t in a.tasks)]
    for x, y in pairs:
        for name in ("observed", "se", "ci_low", "ci_high", "se_languages"):
            if not np.array_equal(getattr(x, name), getattr(y, name), equal_nan=True):
                return False
        if x.models != y.models or x.notes != y.notes:
            return False
        if (x.ranks is None) != (y.ranks is None):
            return False
        if x.ranks is not None and y.ranks is not None:
            for name in ("counts", "best", "worst", "ties"):
                if not np.array_equal(getattr(x.ranks, name), getattr(y.ranks, name)):
                    return False
    return np.array_equal(a.overall.draws, b.overall.draws)


def start_cluster(nodes: int, cpus: int) -> Any:
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": cpus, "include_dashboard": False}
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", required=True, help="a glotbench store (DuckDB file)")
    parser.add_argument("--nodes", default="1,2", help="cluster sizes to run")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--draws", type=int, default=None, help="default: the analyses'")
    parser.add_argument("--out", default="/tmp/glotbench-bench-ray-leaderboard")
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        print("ray is not installed (pip install 'glotbench[distributed]'); nothing to do")
        return
    from glotbench.analysis.settings import AnalysisSettings
    from glotbench.report.sources import leaderboard_source

    # the raylets and their workers inherit this environment: this checkout of glotbench
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")) if p
    )
    info = machine_info(["ray", "numpy"])
    info["load average before"] = load_average()
    print_header("leaderboard analyses over Ray: 1 vs 2 nodes, one writer", info)
    settings = AnalysisSettings() if args.draws is None else AnalysisSettings(n_draws=args.draws)
    t0 = time.perf_counter()
    source = leaderboard_source(store=args.store, settings=settings)
    print(f"store read by the driver: {time.perf_counter() - t0:.1f} s", flush=True)
    out = Path(args.out)
    reference = build(source, settings, out / "single")
    rows = [{"mode": "single process"} | _figures(reference)]
    rows[0]["load"] = load_average()
    print(rows[0], flush=True)
    remote = ray.remote(num_cpus=1)(_view)
    for nodes in [int(n) for n in args.nodes.split(",")]:
        t0 = time.perf_counter()
        cluster = start_cluster(nodes, args.cpus_per_node)
        try:
            started = time.perf_counter() - t0
            t0 = time.perf_counter()
            source_ref = ray.put(source.replicated)
            put = time.perf_counter() - t0
            got = build(source, settings, out / f"ray{nodes}", ray_runner(ray, remote, source_ref))
        finally:
            ray.shutdown()
            cluster.shutdown()
        row = {"mode": f"Ray, {nodes} node(s) x {args.cpus_per_node} CPU"}
        row |= _figures(got)
        row |= {
            "cluster start s": round(started, 1),
            "put s": round(put, 2),
            "same page": got["json"] == reference["json"],
            "same views": same_views(got["analysis"], reference["analysis"]),
            "load": load_average(),
        }
        print(row, flush=True)
        rows.append(row)
        assert row["same page"] and row["same views"], "the distributed result differs"
    print()
    print_table(rows, list(dict.fromkeys(k for r in rows for k in r)))


if __name__ == "__main__":
    main()
