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
and CPU time (the driver's, plus the Ray workers' user + system time read from
/proc through psutil just before the cluster stops), the page's wall time, the
driver's peak RSS and the Ray workers' peak RSS (the largest worker and the sum
over workers, sampled every 0.5 s; RSS counts the pages of the object store a
worker has mapped), and whether the page's data (``leaderboard.json``)
is byte for byte the single-process page's and every view's arrays equal (asserted).
Task views come back without their draws (R × M; only the overall view's feed the
pairwise view), which keeps the object store small.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, machine_info, print_header, print_table

HERE = Path(__file__).resolve().parent


class Sampler:
    """Samples the RSS of this process and of its Ray worker processes every ``interval`` s.

    Ray workers are the descendants of this process (``ray.cluster_utils.Cluster``
    starts the raylets as its children) whose process title starts with ``ray::``.
    """

    def __init__(self, interval: float = 0.5) -> None:
        import psutil

        self.me = psutil.Process()
        self.interval = interval
        self.driver = self.worker_max = self.workers_sum = 0
        self.cpu: dict[int, float] = {}  # worker pid -> user + sys seconds, last seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def workers(self) -> list[Any]:
        import psutil

        found = []
        for p in self.me.children(recursive=True):
            try:
                if " ".join(p.cmdline()).startswith("ray::"):
                    found.append(p)
            except psutil.Error:
                continue
        return found

    def sample(self) -> None:
        import psutil

        self.driver = max(self.driver, self.me.memory_info().rss)
        total = 0
        for p in self.workers():
            try:
                rss = p.memory_info().rss
                t = p.cpu_times()
            except psutil.Error:
                continue
            total += rss
            self.worker_max = max(self.worker_max, rss)
            self.cpu[p.pid] = t.user + t.system
        self.workers_sum = max(self.workers_sum, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> Sampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def figures(self) -> dict[str, Any]:
        mib = 2**20
        return {
            "driver peak MiB": round(self.driver / mib),
            "worker peak MiB": round(self.worker_max / mib),
            "workers sum peak MiB": round(self.workers_sum / mib),
        }


def _no_draws(view: Any) -> Any:
    return dataclasses.replace(view, draws=np.empty((0, len(view.models))))


def _view(source: Any, settings: Any, request: dict[str, Any], keep_draws: bool) -> Any:
    """Runs in a Ray worker: one view of the headline analysis."""
    from glotbench.analysis.headline import analyze_view

    view = analyze_view(source, settings, **request)
    # only the overall view's draws are used by the page
    return view if keep_draws else _no_draws(view)


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

    t0, c0 = time.perf_counter(), time.process_time()
    kwargs = {} if runner is None else {"runner": runner}
    analysis = analyze(source.replicated, settings, **kwargs)
    t1, c1 = time.perf_counter(), time.process_time()
    data = build_leaderboard(
        source.replicated,
        title=source.title,
        metadata=source.metadata,
        notes=source.notes,
        settings=settings,
        analysis=analysis,
    )
    index = write_leaderboard(data, out)
    t2, c2 = time.perf_counter(), time.process_time()
    return {
        "analyses s": round(t1 - t0, 2),
        "analyses driver CPU s": round(c1 - c0, 2),
        "page s": round(t2 - t1, 2),
        "page CPU s": round(c2 - c1, 2),
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
    load = load_average()
    with Sampler() as sampler:
        reference = build(source, settings, out / "single")
    rows = [{"mode": "single process"} | _figures(reference) | sampler.figures()]
    rows[0]["load"] = f"{load} -> {load_average()}"
    # only the overall view's draws are compared: the reference's task views drop theirs,
    # so that the driver does not hold tasks x R x M floats during the Ray runs
    ref = reference["analysis"]
    tasks = {t: _no_draws(v) for t, v in ref.tasks.items()}
    reference["analysis"] = dataclasses.replace(ref, tasks=tasks)
    del ref, tasks
    print(rows[0], flush=True)
    remote = ray.remote(num_cpus=1)(_view)
    for nodes in [int(n) for n in args.nodes.split(",")]:
        load = load_average()
        t0 = time.perf_counter()
        cluster = start_cluster(nodes, args.cpus_per_node)
        try:
            started = time.perf_counter() - t0
            with Sampler() as sampler:
                t0 = time.perf_counter()
                source_ref = ray.put(source.replicated)
                put = time.perf_counter() - t0
                runner = ray_runner(ray, remote, source_ref)
                got = build(source, settings, out / f"ray{nodes}", runner)
        finally:
            ray.shutdown()
            cluster.shutdown()
        row = {"mode": f"Ray, {nodes} node(s) x {args.cpus_per_node} CPU"}
        row |= _figures(got) | sampler.figures()
        row |= {
            "workers CPU s": round(sum(sampler.cpu.values()), 2),
            "cluster start s": round(started, 1),
            "put s": round(put, 2),
            "same page": got["json"] == reference["json"],
            "same views": same_views(got["analysis"], reference["analysis"]),
            "load": f"{load} -> {load_average()}",
        }
        print(row, flush=True)
        rows.append(row)
        assert row["same page"] and row["same views"], "the distributed result differs"
        del got  # not held while the next cluster size runs
    print()
    print_table(rows, list(dict.fromkeys(k for r in rows for k in r)))


if __name__ == "__main__":
    main()
