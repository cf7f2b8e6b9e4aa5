"""Several Ray nodes, one store: the driver as the only writer vs. Parquet shards.

    PYTHONPATH=src python benchmarks/bench_ray_shards.py                  # ~1 min
    PYTHONPATH=src python benchmarks/bench_ray_shards.py --jobs 24 --n-test 8192

A Ray cluster of ``--nodes`` nodes with ``--cpus-per-node`` CPUs each is started
on this machine with ``ray.cluster_utils.Cluster``: every node is its own
raylet with its own worker processes, as separate machines would have (but
the same disk, cores and memory). The suite is the generated 6-label
classification dataset of ``bench_runner.py`` and one model with ``--jobs``
protocol iterations (``--jobs`` jobs of two runs each, MCC and macro-F1, of
``--n-test`` examples):

* ``burn`` (default): a ``callable`` model doing ``--rounds`` chained SHA-256
  per test item — short jobs, so the cost of getting the statistics into the
  store is visible;
* ``tfidf-logreg``: TF-IDF and logistic regression trained per seed.

Three ways to get the statistics into one store, each into a fresh DuckDB
store (and a fresh shard folder), the same cluster reused:

* ``driver``: each task returns the job's statistics through Ray's object
  store; the driver writes each job in one transaction (``write_outcome``);
* ``shards, merge each``: each task writes its job as a Parquet shard into a
  folder every node reaches (``--shards``) and returns the path; the driver
  merges each shard when it is reported, one transaction per job;
* ``shards, merge at end``: the tasks write shards, the driver writes
  nothing (``merge=False``); afterwards ``merge_shards`` (what ``glotbench
  import shards`` runs) merges the folder in batches of whole runs.

Reported per mode: jobs phase (first job planned to last job reported), jobs/s,
the driver's store-write time summed over jobs (timed around the write
calls), the workers' shard-write time summed over jobs, the final merge time,
and jobs/s including that merge. The statistics (``run_id``, ``stats_sha256``)
must be identical in all stores (asserted).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import load_average, machine_info, print_header, print_table, write_json  # noqa: E402
from bench_runner import model_spec, write_suite  # noqa: E402


def _warm_worker(seconds: float) -> tuple[str, int]:
    """Runs in a Ray worker: import what the jobs import; name the node and process."""
    import bench_runner  # noqa: F401
    import ray

    import glotbench.runner.executors  # noqa: F401

    time.sleep(seconds)
    return ray.get_runtime_context().get_node_id(), os.getpid()


def start_cluster(nodes: int, cpus: int) -> tuple[Any, dict[str, Any]]:
    """A Ray cluster of ``nodes`` raylets on this machine; start-up timed apart."""
    import ray
    from ray.cluster_utils import Cluster

    t0 = time.perf_counter()
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": cpus, "include_dashboard": False},
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = ray.remote(num_cpus=1)(_warm_worker)
    placed = ray.get([warm.remote(1.0) for _ in range(nodes * cpus)])
    return cluster, {
        "cluster start s": start,
        "worker warm-up s": time.perf_counter() - t0,
        "nodes used by warm-up": len({n for n, _ in placed}),
        "workers": len({p for _, p in placed}),
    }


class WriteTimer:
    """Sums the time spent in the driver's store-write calls of ``run_suite``."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls += 1

        return timed


def run_mode(suite_path: Path, folder: Path, mode: str) -> dict[str, Any]:
    import glotbench.runner.executors as executors
    from glotbench.ingest.shards import merge_shards
    from glotbench.runner.executors import run_suite
    from glotbench.runner.suite import load_suite
    from glotbench.store.store import Store

    store = folder / f"{mode.replace(' ', '-').replace(',', '')}.duckdb"
    shards = folder / f"shards-{mode.replace(' ', '-').replace(',', '')}"
    timer = WriteTimer()
    originals = (executors.write_outcome, executors.merge_shard)
    executors.write_outcome = timer.wrap(originals[0])
    executors.merge_shard = timer.wrap(originals[1])
    events: list[tuple[str, float, dict[str, Any]]] = []
    try:
        t0 = time.perf_counter()
        summary = run_suite(
            load_suite(suite_path),
            store=store,
            executor="ray",
            shards=None if mode == "driver" else shards,
            merge=mode != "shards, merge at end",
            on_event=lambda kind, job, data: events.append((kind, time.perf_counter(), data)),
        )
        run_s = time.perf_counter() - t0
    finally:
        executors.write_outcome, executors.merge_shard = originals
    assert not summary.failures, summary.failures
    assert summary.completed == summary.jobs
    planned = next(t for kind, t, _ in events if kind == "planned")
    last = max(t for kind, t, _ in events if kind == "stored")
    merge_s = 0.0
    if mode == "shards, merge at end":
        t0 = time.perf_counter()
        with Store.open(store) as handle:
            merged = merge_shards(handle, shards)
        merge_s = time.perf_counter() - t0
        assert merged.runs_written == 2 * summary.jobs, merged
    with Store.open(store, read_only=True) as handle:
        digests = sorted(
            handle.connection.execute("SELECT run_id, stats_sha256 FROM runs").fetchall()
        )
        examples = handle.connection.execute("SELECT count(*) FROM example_stats").fetchone()[0]
    shard_bytes = sum(p.stat().st_size for p in shards.glob("*.parquet")) if shards.exists() else 0
    jobs_phase = last - planned
    return {
        "mode": mode,
        "jobs": summary.jobs,
        "example rows": examples,
        "run_suite s": run_s,
        "jobs phase s": jobs_phase,
        "jobs/s": summary.jobs / jobs_phase,
        "driver store-write s": timer.seconds,
        "driver write ms / job": 1000 * timer.seconds / summary.jobs,
        "worker shard-write s": sum(d.get("shard_write_seconds", 0.0) for _, _, d in events),
        "shard MB": shard_bytes / 1e6,
        "final merge s": merge_s,
        "jobs/s incl. merge": summary.jobs / (jobs_phase + merge_s),
        "digests": digests,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("burn", "tfidf-logreg"), default="burn")
    parser.add_argument("--jobs", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=100, help="burn: SHA-256 rounds per item")
    parser.add_argument("--n-test", type=int, default=4096)
    parser.add_argument("--n-train", type=int, default=256)
    parser.add_argument("--n-val", type=int, default=64)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="rounds over the three modes")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    try:
        import ray
    except ImportError:
        print("ray is not installed (pip install 'glotbench[distributed]'); nothing to do")
        return
    # the raylets and their workers inherit this environment: let them import
    # this checkout of glotbench and bench_runner
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent / "src"), str(HERE), os.environ.get("PYTHONPATH", "")) if p
    )
    info = machine_info(["ray", "duckdb", "pyarrow"])
    info["load average before"] = load_average()
    print_header("several Ray nodes, one store: driver writes vs Parquet shards", info)
    spec = model_spec(args.model, **({"rounds": args.rounds} if args.model == "burn" else {}))
    sizes = {"train": args.n_train, "validation": args.n_val, "test": args.n_test}
    print(
        f"model {args.model}; {args.jobs} jobs x 2 runs of {args.n_test} examples; "
        f"{args.nodes} nodes x {args.cpus_per_node} CPU\n",
        flush=True,
    )
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="glotbench-bench-shards-") as tmp:
        folder = Path(tmp)
        suite_path = write_suite(
            folder, [spec], sizes=sizes, iterations=args.jobs, speed_repeats=0, name="shards"
        )
        cluster, startup = start_cluster(args.nodes, args.cpus_per_node)
        print(f"cluster: {startup}", flush=True)
        try:
            for r in range(args.repeats):
                for mode in ("driver", "shards, merge each", "shards, merge at end"):
                    sub = folder / f"r{r}"
                    sub.mkdir(exist_ok=True)
                    res = run_mode(suite_path, sub, mode)
                    res["load average"] = load_average()
                    results.append(res)
                    print(
                        f"{mode}: jobs phase {res['jobs phase s']:.2f} s "
                        f"({res['jobs/s']:.2f} jobs/s), driver writes "
                        f"{res['driver store-write s']:.2f} s, worker shard writes "
                        f"{res['worker shard-write s']:.2f} s, final merge "
                        f"{res['final merge s']:.2f} s; load {res['load average']}",
                        flush=True,
                    )
        finally:
            ray.shutdown()
            cluster.shutdown()
    for res in results:
        assert res["digests"] == results[0]["digests"], f"statistics differ: {res['mode']}"
    columns = [c for c in results[0] if c != "digests"]
    print()
    print_table(results, columns)
    print(
        f"identical statistics in every store: True ({len(results[0]['digests'])} runs "
        "compared by run_id and stats_sha256)"
    )
    write_json(
        args.json,
        {
            "machine": info,
            "args": vars(args),
            "startup": startup,
            "rows": [{k: v for k, v in r.items() if k != "digests"} for r in results],
        },
    )


if __name__ == "__main__":
    main()
