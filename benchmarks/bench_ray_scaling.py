"""Ray scaling of the benchmark runner: one job list, local executor vs Ray on 1 and 2 CPUs.

    PYTHONPATH=src python benchmarks/bench_ray_scaling.py                   # tfidf-logreg, ~1.5 min
    PYTHONPATH=src python benchmarks/bench_ray_scaling.py --model burn      # CPU-burning callable

The suite is the generated 6-label classification dataset of
``bench_runner.py`` (train/validation/test = 1,024/256/2,048 by default) and
one model with ``--jobs`` protocol iterations, so ``--jobs`` independent
jobs:

* ``tfidf-logreg``: TF-IDF word + char n-grams and logistic regression, trained
  per seed on a bootstrap of the training split (CPU-bound, mostly
  single-threaded scikit-learn);
* ``burn``: a ``callable`` model doing ``--rounds`` chained SHA-256 per test
  item (pure-Python CPU work of a fixed size; no training).

The same suite is run by ``run_suite`` four times, each into a fresh
temporary DuckDB store, after an untimed one-job warm-up run:

* the local executor (in process) as it is;
* the local executor with the BLAS/OpenMP thread pools of the process limited
  to one thread (``threadpoolctl``). Ray sets ``OMP_NUM_THREADS=1`` in its
  workers, while OpenBLAS otherwise starts one thread per core, which slows
  scikit-learn's small dense products badly on a busy machine. The speed-ups
  are against this run;
* Ray with ``num_cpus=1``;
* Ray with ``num_cpus=2``.

Ray's start-up is timed apart and is not part of the run time: first
``ray.init`` (a fresh local cluster each time), then warm-up tasks, one per
CPU, that start the worker processes and import glotbench and scikit-learn
in them. ``run_suite`` then finds Ray running and reuses it. The stored
statistics (``run_id`` and ``stats_sha256`` of every run) and the ScandEval
scores must be identical in all stores (asserted). The "parallelism" column
(model time summed over jobs / jobs phase) shows how many jobs ran at once.
If the per-job model time grows with it, the jobs were competing for the
cores.
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

from _common import (  # noqa: E402
    load_average,
    machine_info,
    print_header,
    print_table,
    timed_cpu,
    write_json,
)
from bench_runner import model_spec, write_suite  # noqa: E402


def _warm_worker(seconds: float) -> int:
    """Runs in a Ray worker: import what the jobs import, then hold the CPU briefly."""
    import bench_runner  # noqa: F401
    import sklearn.feature_extraction.text  # noqa: F401
    import sklearn.linear_model  # noqa: F401

    import glotbench.runner.executors  # noqa: F401

    time.sleep(seconds)
    return os.getpid()


def start_ray(num_cpus: int) -> dict[str, Any]:
    """A fresh local Ray with ``num_cpus``; time init and the workers' warm-up apart."""
    import ray

    t0 = time.perf_counter()
    # address="local": always a new cluster, never one another process started with `ray start`
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    init = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = ray.remote(num_cpus=1)(_warm_worker)
    pids = ray.get([warm.remote(0.5) for _ in range(num_cpus)])
    warm_s = time.perf_counter() - t0
    return {"ray.init s": init, "worker warm-up s": warm_s, "workers": len(set(pids))}


def run_once(suite_path: Path, store: Path, executor: str, num_cpus: int | None) -> dict:
    from glotbench.runner.executors import run_suite
    from glotbench.runner.suite import load_suite
    from glotbench.store.store import Store

    events: list[tuple[str, float]] = []

    def on_event(kind: str, job: Any, data: dict[str, Any]) -> None:
        events.append((kind, time.perf_counter()))

    def call() -> Any:
        events.clear()
        return run_suite(
            load_suite(suite_path),
            store=store,
            executor=executor,
            num_cpus=num_cpus,
            on_event=on_event,
        )

    timing = timed_cpu(call, 1)
    summary = timing.result
    assert not summary.failures, summary.failures
    assert summary.completed == summary.jobs, (summary.completed, summary.jobs)
    planned = next(t for kind, t in events if kind == "planned")
    last = max(t for kind, t in events if kind == "stored")
    with Store.open(store, read_only=True) as handle:
        digests = sorted(
            handle.connection.execute("SELECT run_id, stats_sha256 FROM runs").fetchall()
        )
        runs = handle.runs.frame().drop_duplicates(["model", "seed"])  # one row per job
    # the model's fit + predict time summed over the jobs, as measured inside each job
    model_s = sum(m["fit_seconds"] + m["predict_seconds"] for m in runs["model_metadata"])
    scores = summary.to_frame().sort_values(["model", "metric"]).reset_index(drop=True)
    return {
        "wall s": timing.seconds,
        "driver CPU s": timing.cpu_seconds,
        "jobs phase s": last - planned,
        "model s (sum over jobs)": model_s,
        "jobs": summary.jobs,
        "runs": summary.runs_written,
        "digests": digests,
        "scores": scores,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("tfidf-logreg", "burn"), default="tfidf-logreg")
    parser.add_argument("--jobs", type=int, default=8, help="protocol iterations = jobs")
    parser.add_argument("--rounds", type=int, default=2000, help="burn: SHA-256 rounds per item")
    parser.add_argument("--n-test", type=int, default=2048)
    parser.add_argument("--n-train", type=int, default=1024)
    parser.add_argument("--n-val", type=int, default=256)
    parser.add_argument("--speed-repeats", type=int, default=3)
    parser.add_argument("--cpus", default="1,2", help="Ray num_cpus values to run")
    parser.add_argument(
        "--skip-default-threads",
        action="store_true",
        help="skip the local run with the libraries' default thread pools (slow for "
        "tfidf-logreg on a busy machine)",
    )
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()

    try:
        import ray
    except ImportError:
        print("ray is not installed (pip install 'glotbench[distributed]'); nothing to do")
        return
    # Ray workers inherit the environment of the local cluster: let them import
    # glotbench (PYTHONPATH=src) and the "bench_runner:burn_predictor" target.
    src = HERE.parent / "src"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(src), str(HERE), os.environ.get("PYTHONPATH", "")) if p
    )

    info = machine_info(["ray", "duckdb", "scikit-learn", "numpy"])
    info["OMP_NUM_THREADS (driver)"] = os.environ.get("OMP_NUM_THREADS", "unset")
    print_header("runner: local executor vs Ray", info)
    spec = model_spec(args.model, **({"rounds": args.rounds} if args.model == "burn" else {}))
    sizes = {"train": args.n_train, "validation": args.n_val, "test": args.n_test}
    print(
        f"model {args.model}"
        + (f" ({args.rounds} SHA-256 rounds per item)" if args.model == "burn" else "")
        + f"; {args.jobs} jobs; train/validation/test = {args.n_train}/{args.n_val}/"
        f"{args.n_test}; speed_repeats = {args.speed_repeats}\n",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="glotbench-bench-ray-") as tmp:
        folder = Path(tmp)
        suite_path = write_suite(
            folder,
            [spec],
            sizes=sizes,
            iterations=args.jobs,
            speed_repeats=args.speed_repeats,
            name="ray-scaling",
        )
        # warm-up, not timed: imports, DuckDB's first store, file caches
        warm = folder / "warm-up"
        warm.mkdir()
        run_once(
            write_suite(
                warm,
                [spec],
                sizes={**sizes, "test": min(64, args.n_test)},
                iterations=1,
                speed_repeats=args.speed_repeats,
                name="warm-up",
            ),
            warm / "warm-up.duckdb",
            "local",
            None,
        )
        # (label, executor, Ray CPUs, thread limit of the driver's BLAS/OpenMP pools)
        configs: list[tuple[str, str, int | None, int | None]] = []
        if not args.skip_default_threads:
            configs.append(("local", "local", None, None))
        configs.append(("local, 1 thread", "local", None, 1))
        for c in args.cpus.split(","):
            if c.strip():
                configs.append(("ray", "ray", int(c), None))
        for label, executor, cpus, threads in configs:
            startup: dict[str, Any] = {"ray.init s": 0.0, "worker warm-up s": 0.0}
            if executor == "ray":
                startup = start_ray(cpus or 1)
            store = folder / f"{executor}{cpus or ''}{threads or ''}.duckdb"
            try:
                if threads:
                    # only libraries already loaded are limited: load them first
                    import sklearn.feature_extraction.text  # noqa: F401
                    import sklearn.linear_model  # noqa: F401
                    from threadpoolctl import threadpool_limits

                    with threadpool_limits(limits=threads):
                        res = run_once(suite_path, store, executor, cpus)
                else:
                    res = run_once(suite_path, store, executor, cpus)
            finally:
                if executor == "ray":
                    ray.shutdown()
            res.update(startup)
            results.append({"executor": label, "cpus": cpus, **res})
            print(
                f"{label} cpus={cpus or '-'}: run_suite {res['wall s']:.2f} s, jobs phase "
                f"{res['jobs phase s']:.2f} s, start-up {startup['ray.init s']:.2f} + "
                f"{startup['worker warm-up s']:.2f} s; load avg {load_average()}",
                flush=True,
            )

    for res in results:
        assert res["digests"] == results[0]["digests"], f"statistics differ: {res['executor']}"
        assert res["scores"].equals(results[0]["scores"]), f"scores differ: {res['executor']}"
    # speed-ups against the single-threaded local run: one CPU, as a Ray worker has
    base = next(r for r in results if r["executor"] == "local, 1 thread")
    for res in results:
        total = res["wall s"] + res["ray.init s"] + res["worker warm-up s"]
        rows.append(
            {
                "executor": res["executor"],
                "CPUs": res["cpus"] or "in process",
                "workers": res.get("workers", "-"),
                "driver CPU s": res["driver CPU s"],
                "ray.init s": res["ray.init s"],
                "worker warm-up s": res["worker warm-up s"],
                "run_suite s": res["wall s"],
                "jobs phase s": res["jobs phase s"],
                "model s / job": res["model s (sum over jobs)"] / res["jobs"],
                "parallelism": res["model s (sum over jobs)"] / res["jobs phase s"],
                "start-up + run s": total,
                "speed-up, run": base["wall s"] / res["wall s"],
                "speed-up, jobs phase": base["jobs phase s"] / res["jobs phase s"],
                "speed-up incl. start-up": base["wall s"] / total,
            }
        )
    print()
    print_table(rows, list(rows[0]))
    print(
        "speed-ups are against 'local, 1 thread' (threadpoolctl limits the driver's "
        "BLAS/OpenMP pools to 1 thread, as Ray does in its workers with OMP_NUM_THREADS=1); "
        "driver CPU s counts this process only, not Ray's workers; 'model s / job' is the "
        "fit + predict time measured inside each job, and 'parallelism' their sum over the "
        "jobs phase (about the number of jobs running at once, if the jobs do not slow "
        "each other down)"
    )
    print(
        f"identical statistics across executors: True ({len(base['digests'])} runs of "
        f"{base['jobs']} jobs, run_id and stats_sha256 compared; ScandEval scores equal)"
    )
    write_json(
        args.json,
        {
            "machine": info,
            "args": vars(args),
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
